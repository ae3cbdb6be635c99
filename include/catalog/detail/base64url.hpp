#ifndef CATALOG_DETAIL_BASE64URL_HPP
#define CATALOG_DETAIL_BASE64URL_HPP

// base64url (RFC 4648 section 5), strict: the one codec for JWT segments and list cursors.

#include <catalog/detail/export.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace catalog::detail {

enum class Padding { none, required };

/// Encodes bytes. `Padding::required` appends '=' to a multiple of 4 characters.
CATALOG_DECL std::string base64url_encode(std::string_view bytes, Padding padding);

/// Decodes strictly: only the base64url alphabet, no whitespace, padding exactly as `padding`
/// says (none: no '=' at all; required: length a multiple of 4 with canonical '='), length
/// remainder 1 refused, and non-zero unused trailing bits refused (canonical encoding only).
/// Returns nullopt on any violation.
CATALOG_DECL std::optional<std::string> base64url_decode(std::string_view text, Padding padding);

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_BASE64URL_HPP
