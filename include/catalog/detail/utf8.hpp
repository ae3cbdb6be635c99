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

/// `s` with A to Z lowered and every other byte as it is: ASCII case folding, which leaves UTF-8
/// text UTF-8.
inline std::string ascii_lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// Whether all of `s` is well-formed UTF-8.
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

/// `message` with what could end a line of the host's log or rewrite its terminal written
/// `\xHH`, byte by byte: the C0 controls and DEL, the C1 controls (U+0080 to U+009F: U+0085 is
/// a line break, U+009B a terminal's escape), the line and paragraph separators U+2028 and
/// U+2029, and every byte that is not part of well-formed UTF-8. A message quotes what a
/// request sent (an unknown member's name), and such a character in it would start a line of
/// the host's log that the store did not write (options.hpp, LogSink): each message a store
/// logs goes through it.
inline std::string one_line(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  auto escape = [&out](std::string_view bytes) {
    static constexpr char hex[] = "0123456789ABCDEF";
    for (const char c : bytes) {
      const auto byte = static_cast<unsigned char>(c);
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xF];
    }
  };
  for (std::size_t i = 0; i < message.size();) {
    const auto lead = static_cast<unsigned char>(message[i]);
    if (lead < 0x80) {
      if (lead >= 0x20 && lead != 0x7F)
        out += message[i];
      else
        escape(message.substr(i, 1));
      ++i;
      continue;
    }
    const std::size_t start = i;
    char32_t cp = 0;
    if (!next_code_point(message, i, cp)) {
      escape(message.substr(i, 1));
      ++i;
      continue;
    }
    const auto sequence = message.substr(start, i - start);
    if (cp <= 0x9F || cp == 0x2028 || cp == 0x2029)
      escape(sequence);
    else
      out += sequence;
  }
  return out;
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_UTF8_HPP
