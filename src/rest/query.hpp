#ifndef CATALOG_SRC_REST_QUERY_HPP
#define CATALOG_SRC_REST_QUERY_HPP

// Query parameters (docs/REST.md): read only when a route uses them; a used parameter given twice
// or with an empty value is 400; integers are [0-9]+, booleans exactly true or false; '+' is a
// literal plus. Internal to catalog_rest.

#include <catalog/error.hpp>
#include <catalog/store.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog::rest::detail {

/// The decoded parameters of one target, in order.
class Query {
 public:
  /// `params`: decoded (key, value) pairs; a key without '=' has no value.
  explicit Query(std::vector<std::pair<std::string, std::optional<std::string>>> params)
      : params_(std::move(params)) {}

  /// The value of `name`, if given. Errors: bad_request (invalid_parameter) when it is given
  /// more than once or with an empty (or no) value.
  Result<std::optional<std::string>> text(std::string_view name) const;
  /// text() where an empty value is a value (search's `q`). Errors: given more than once.
  Result<std::optional<std::string>> text_or_empty(std::string_view name) const;

  /// A non-negative decimal integer ([0-9]+). Values too large for int64 saturate at its
  /// maximum, so that range checks refuse them. Errors: as text; not [0-9]+.
  Result<std::optional<std::uint64_t>> integer(std::string_view name) const;

  /// `true` or `false`, default `fallback`. Errors: as text; any other value.
  Result<bool> boolean(std::string_view name, bool fallback) const;

  /// `include`: non-deleted (default), deleted, all. Errors: as text; any other value.
  Result<Include> include() const;

  /// `fields` split at commas (elements checked by the Store). Errors: as text.
  Result<std::vector<std::string>> fields() const;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> params_;
};

}  // namespace catalog::rest::detail

#endif  // CATALOG_SRC_REST_QUERY_HPP
