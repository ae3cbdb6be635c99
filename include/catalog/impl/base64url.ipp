#ifndef CATALOG_IMPL_BASE64URL_IPP
#define CATALOG_IMPL_BASE64URL_IPP

#include <catalog/detail/base64url.hpp>

#include <array>
#include <cstdint>

namespace catalog::detail {

namespace {

constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Sextet of each byte, or -1 for anything outside the base64url alphabet (including '+', '/',
// '=' and whitespace, which the decoder must refuse).
constexpr std::array<std::int8_t, 256> make_sextets() {
  std::array<std::int8_t, 256> table{};
  for (auto& entry : table) entry = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  }
  return table;
}

constexpr std::array<std::int8_t, 256> sextets = make_sextets();

std::uint32_t byte_at(std::string_view bytes, std::size_t i) {
  return static_cast<unsigned char>(bytes[i]);
}

}  // namespace

std::string base64url_encode(std::string_view bytes, Padding padding) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    std::uint32_t group =
        byte_at(bytes, i) << 16 | byte_at(bytes, i + 1) << 8 | byte_at(bytes, i + 2);
    out += alphabet[group >> 18 & 0x3f];
    out += alphabet[group >> 12 & 0x3f];
    out += alphabet[group >> 6 & 0x3f];
    out += alphabet[group & 0x3f];
  }
  std::size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  std::uint32_t group = byte_at(bytes, i) << 16;
  if (rest == 2) group |= byte_at(bytes, i + 1) << 8;
  out += alphabet[group >> 18 & 0x3f];
  out += alphabet[group >> 12 & 0x3f];
  if (rest == 2) out += alphabet[group >> 6 & 0x3f];
  if (padding == Padding::required) out.append(3 - rest, '=');
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text, Padding padding) {
  if (padding == Padding::required) {
    if (text.size() % 4 != 0) return std::nullopt;
    // At most two '=' and only at the very end; what precedes them is checked below like an
    // unpadded text, so "A===" (remainder 1) and "AA=A" are refused there.
    std::size_t pad = 0;
    while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
    text.remove_suffix(pad);
  }
  // A single leftover character carries only 6 bits: no byte can end there.
  if (text.size() % 4 == 1) return std::nullopt;

  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t group = 0;
  std::size_t count = 0;
  for (char c : text) {
    std::int8_t sextet = sextets[static_cast<unsigned char>(c)];
    if (sextet < 0) return std::nullopt;
    group = group << 6 | static_cast<std::uint32_t>(sextet);
    if (++count == 4) {
      out += static_cast<char>(group >> 16 & 0xff);
      out += static_cast<char>(group >> 8 & 0xff);
      out += static_cast<char>(group & 0xff);
      group = 0;
      count = 0;
    }
  }
  if (count == 2) {
    // 12 bits: one byte and 4 unused bits, which a canonical encoder leaves zero.
    if ((group & 0xf) != 0) return std::nullopt;
    out += static_cast<char>(group >> 4 & 0xff);
  } else if (count == 3) {
    // 18 bits: two bytes and 2 unused bits.
    if ((group & 0x3) != 0) return std::nullopt;
    out += static_cast<char>(group >> 10 & 0xff);
    out += static_cast<char>(group >> 2 & 0xff);
  }
  return out;
}

}  // namespace catalog::detail

#endif  // CATALOG_IMPL_BASE64URL_IPP
