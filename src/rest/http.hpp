#ifndef CATALOG_SRC_REST_HTTP_HPP
#define CATALOG_SRC_REST_HTTP_HPP

// HTTP plumbing of the REST surface: header lookup, and the shapes of responses (JSON bodies,
// entities with their ETag, error bodies of docs/SEMANTICS.md §14). Internal to catalog_rest.

#include <catalog/error.hpp>
#include <catalog/rest/api.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace catalog::rest::detail {

/// ASCII case-insensitive equality (header names, media types, the Bearer scheme).
bool iequals(std::string_view a, std::string_view b) noexcept;

/// `s` without leading and trailing spaces and tabs (HTTP optional whitespace).
std::string_view trim_ows(std::string_view s) noexcept;

/// The values of every header named `name` (case-insensitive), in order.
std::vector<std::string_view> header_values(const Request& request, std::string_view name);

/// A JSON response: `Content-Type: application/json`, the body serialized with plain decimals.
Response json_response(int status, const boost::json::value& body);

/// A response carrying one entity: a JSON response plus `ETag: "<version>"`.
Response entity_response(int status, boost::json::object entity);

/// The docs/SEMANTICS.md §14 error body `{"code", "errorType", "message"}` for `error`.
Response error_response(const Error& error);

/// The 405 answer for a known path, with `Allow: <allowed>`.
Response method_not_allowed(std::string_view method, std::string_view allowed);

/// A bad_request Error carrying `message` (for failures decided by the REST layer).
Error bad_request(Errc code, std::string message);

}  // namespace catalog::rest::detail

#endif  // CATALOG_SRC_REST_HTTP_HPP
