#ifndef CATALOG_SRC_REST_ROUTING_HPP
#define CATALOG_SRC_REST_ROUTING_HPP

// The route table of docs/REST.md: which path is which operation, and which methods each path
// allows. Matching looks only at the shape of the path (docs/SEMANTICS.md §14 step 2); the values
// of `{id}`,
// `{fqn}`, `{version}` and `{userId}` are checked later by the handlers (step 3).

#include <catalog/kind.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::rest::detail {

enum class RouteKind {
  collection,  // /v1/<c>                              GET list, POST create
  by_id,       // /v1/<c>/{id}                          GET, PATCH, DELETE
  by_name,     // /v1/<c>/name/{fqn}                    GET, PATCH, DELETE
  restore,     // /v1/<c>/restore                       PUT
  versions,    // /v1/<c>/{id}/versions                 GET
  version,     // /v1/<c>/{id}/versions/{version}       GET
  followers,   // /v1/<c>/{id}/followers                PUT (kinds with followers)
  follower,    // /v1/<c>/{id}/followers/{userId}       DELETE (kinds with followers)
  vote,        // /v1/<c>/{id}/vote                     PUT (kinds with votes)
  events,      // /v1/events                            GET
  search,      // /v1/search/query                      GET (docs/SEMANTICS.md §16)
  suggest,     // /v1/search/suggest                    GET
  aggregate,   // /v1/search/aggregate                  GET
};

/// A matched path: the route, its collection's kind, and its variable segments, percent-decoded
/// once and not yet validated.
struct Route {
  RouteKind kind = RouteKind::collection;
  Kind entity = Kind::user;  // unused for events
  std::string id;            // {id}
  std::string fqn;           // {fqn}
  std::string version;       // {version}
  std::string user_id;       // {userId}
};

/// The route of a path given as its percent-decoded segments, or nullopt for an unknown path.
/// Literal segments (`name`, `restore`, `versions`, `followers`, `vote`) win over `{id}`.
std::optional<Route> match_route(const std::vector<std::string>& segments);

/// The methods a route answers, as an `Allow` header value ("GET, POST").
std::string_view allowed_methods(RouteKind kind) noexcept;

/// Whether `method` is one of the route's methods.
bool method_allowed(RouteKind kind, std::string_view method) noexcept;

}  // namespace catalog::rest::detail

#endif  // CATALOG_SRC_REST_ROUTING_HPP
