#ifndef CATALOG_DETAIL_UTF8_HPP
#define CATALOG_DETAIL_UTF8_HPP

// The one UTF-8 reader of the catalog (RFC 3629): names, FQNs and messages are checked with it.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace catalog::detail {

/// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlongs, no
/// surrogates, nothing above U+10FFFF), or 0 when it is not one (or `s` is empty).
inline std::size_t utf8_sequence(std::string_view s) noexcept {
  if (s.empty()) return 0;
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(0);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                  : c >= 0xE0 && c <= 0xEF ? 3
                  : c >= 0xF0 && c <= 0xF4 ? 4
                                           : 0;
  if (n == 0 || s.size() < n) return 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return n;
}

/// Decodes the code point at `s[i]` into `cp` and advances `i` past it. Returns false (leaving
/// both unchanged) when no well-formed sequence starts there.
inline bool next_code_point(std::string_view s, std::size_t& i, char32_t& cp) noexcept {
  std::size_t n = utf8_sequence(s.substr(i));
  if (n == 0) return false;
  auto b = static_cast<unsigned char>(s[i]);
  char32_t v = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
  for (std::size_t k = 1; k < n; ++k) v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
  cp = v;
  i += n;
  return true;
}

/// Whether all of `s` is well-formed UTF-8.
/// `s` with A to Z lowered and every other byte as it is: ASCII case folding, which leaves UTF-8
/// text UTF-8.
inline std::string ascii_lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline bool valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    if (s.size() - i >= 8) {  // eight ASCII bytes at a time
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if ((w & 0x8080808080808080u) == 0) {
        i += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = utf8_sequence(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_UTF8_HPP
