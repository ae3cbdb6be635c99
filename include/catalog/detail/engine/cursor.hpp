#ifndef CATALOG_DETAIL_ENGINE_CURSOR_HPP
#define CATALOG_DETAIL_ENGINE_CURSOR_HPP

// The one list cursor codec (docs/SEMANTICS.md §8): base64url, with padding, of `{"name": ...,
// "id": ...}`. A cursor is a position, not a reference: any well-formed cursor is valid, even when
// no entity stands there any more.

#include <catalog/error.hpp>
#include <catalog/uuid.hpp>

#include <string>
#include <string_view>

namespace catalog::engine {

/// A position in a list: lists are ordered by name (bytewise), then id.
struct ListPosition {
  std::string name;
  Uuid id{};
};

/// The cursor text of `position`.
std::string encode_cursor(const ListPosition& position);

/// Reads a cursor given as query parameter `parameter` ("before" or "after"). Exactly the
/// documented form is accepted: canonical padded base64url of a JSON object with the two
/// members `name` (a valid entity name) and `id` (a UUID), nothing else.
/// Errors: bad_request (invalid_parameter) naming the parameter.
Result<ListPosition> decode_cursor(std::string_view text, std::string_view parameter);

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_CURSOR_HPP
