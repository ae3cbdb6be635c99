#ifndef CATALOG_DETAIL_JSON_SCAN_HPP
#define CATALOG_DETAIL_JSON_SCAN_HPP

// The bytes of a JSON string's text that are not themselves: the quote, the backslash and the
// control characters. Readers look for the string's end, writers for what to escape; both pass
// ordinary bytes eight at a time, since stored records, snapshots and events are mostly strings
// and scanning them is most of the work of reading and writing them.

#include <bit>
#include <cstdint>
#include <cstring>

namespace catalog::detail {

/// The bytes of `w` (eight bytes of text, read little-endian) that are '"', '\\' or below 0x20,
/// as their high bits. A borrow can only mark bytes above (after) a marked one, so the first
/// marked byte is exact; bytes of 0x80 and above are never marked.
constexpr std::uint64_t json_special_bytes(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  constexpr auto zero = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
  return zero(w ^ (ones * '"')) | zero(w ^ (ones * '\\')) | ((w - ones * 0x20) & ~w & highs);
}

/// The first byte in [p, end) that is '"', '\\' or below 0x20, or `end`.
inline const char* find_json_special(const char* p, const char* end) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if (const auto special = json_special_bytes(w); special != 0)
        return p + std::countr_zero(special) / 8;
      p += 8;
    }
  }
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
  }
  return end;
}

/// The end of the JSON string whose text (after its opening quote) starts at `p`: its closing
/// quote, or nullptr when it is unterminated or holds a raw control character. `escaped` tells
/// whether it has escapes; an escaped character is skipped with its backslash. UTF-8 is not
/// checked. Its own loop, scanning words and handling the byte it stops at in one place,
/// rather than a call to find_json_special per escape: every string a reader reads passes here.
inline const char* json_string_end(const char* p, const char* end, bool& escaped) noexcept {
  escaped = false;
  for (;;) {
    if constexpr (std::endian::native == std::endian::little) {
      while (end - p >= 8) {
        std::uint64_t w;
        std::memcpy(&w, p, 8);
        if (const auto special = json_special_bytes(w); special != 0) {
          p += std::countr_zero(special) / 8;
          break;
        }
        p += 8;
      }
    }
    if (p == end) return nullptr;
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') return p;
    if (c < 0x20) return nullptr;
    if (c == '\\') {
      escaped = true;
      if (++p == end) return nullptr;
    }
    ++p;
  }
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_JSON_SCAN_HPP
