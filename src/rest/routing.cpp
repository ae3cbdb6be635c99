// Route matching: a small tree walk over the decoded path segments.

#include "routing.hpp"

#include <span>
#include <utility>

namespace catalog::rest::detail {

namespace {

// The collection part of a path: one segment, or `services/<name>` for the two services.
// Returns the kind and how many segments the collection took (after `v1`).
std::optional<std::pair<Kind, std::size_t>>
match_collection(const std::vector<std::string>& segments) {
  if (segments.size() < 2) return std::nullopt;
  // A decoded segment holding a '/' (sent as %2F) is one segment, never a collection path.
  auto plain = [](const std::string& s) { return s.find('/') == std::string::npos; };
  if (!plain(segments[1])) return std::nullopt;
  if (segments[1] == "services") {
    if (segments.size() < 3 || !plain(segments[2])) return std::nullopt;
    auto kind = kind_from_collection("services/" + segments[2]);
    if (!kind) return std::nullopt;
    return std::pair{*kind, std::size_t{2}};
  }
  auto kind = kind_from_collection(segments[1]);
  if (!kind || info(*kind).collection.find('/') != std::string_view::npos) return std::nullopt;
  return std::pair{*kind, std::size_t{1}};
}

// `route` with its kind set: the end of every successful match.
Route routed(Route route, RouteKind kind) {
  route.kind = kind;
  return route;
}

// The routes below an entity's id, given the segments from the id on (at least two):
// `versions[/{version}]`, `followers[/{userId}]` and `vote`, the last two for kinds that have
// followers and votes.
std::optional<Route> match_below_id(Route route, std::span<const std::string> rest) {
  const auto& kind_info = info(route.entity);
  if (rest[1] == "versions") {
    if (rest.size() == 2) return routed(std::move(route), RouteKind::versions);
    if (rest.size() == 3) {
      route.version = rest[2];
      return routed(std::move(route), RouteKind::version);
    }
    return std::nullopt;
  }
  if (rest[1] == "followers" && kind_info.has_followers) {
    if (rest.size() == 2) return routed(std::move(route), RouteKind::followers);
    if (rest.size() == 3) {
      route.user_id = rest[2];
      return routed(std::move(route), RouteKind::follower);
    }
    return std::nullopt;
  }
  if (rest[1] == "vote" && kind_info.has_votes && rest.size() == 2)
    return routed(std::move(route), RouteKind::vote);
  return std::nullopt;
}

// The routes inside a collection of `kind`, given the segments after it: the collection itself,
// `name/{fqn}`, `restore`, and `{id}` with what follows it.
std::optional<Route> match_in_collection(Kind kind, std::span<const std::string> rest) {
  Route route;
  route.entity = kind;
  if (rest.empty()) return routed(std::move(route), RouteKind::collection);
  if (rest[0] == "name") {
    if (rest.size() != 2) return std::nullopt;
    route.fqn = rest[1];
    return routed(std::move(route), RouteKind::by_name);
  }
  if (rest[0] == "restore") {
    if (rest.size() != 1) return std::nullopt;
    return routed(std::move(route), RouteKind::restore);
  }
  route.id = rest[0];
  if (rest.size() == 1) return routed(std::move(route), RouteKind::by_id);
  return match_below_id(std::move(route), rest);
}

}  // namespace

std::optional<Route> match_route(const std::vector<std::string>& segments) {
  if (segments.empty() || segments[0] != "v1") return std::nullopt;
  // A variable segment matches one or more characters, as in URI templates: an empty segment
  // (a trailing or doubled slash) is no `{id}`, `{fqn}`, ..., so the path is unknown.
  for (const auto& s : segments)
    if (s.empty()) return std::nullopt;
  if (segments.size() == 2 && segments[1] == "events") {
    Route events;
    events.kind = RouteKind::events;
    return events;
  }
  if (segments.size() == 3 && segments[1] == "search") {
    Route search;
    if (segments[2] == "query")
      search.kind = RouteKind::search;
    else if (segments[2] == "suggest")
      search.kind = RouteKind::suggest;
    else if (segments[2] == "aggregate")
      search.kind = RouteKind::aggregate;
    else
      return std::nullopt;
    return search;
  }
  auto collection = match_collection(segments);
  if (!collection) return std::nullopt;
  // The segments after `v1` and the collection.
  const auto rest = std::span<const std::string>(segments).subspan(1 + collection->second);
  return match_in_collection(collection->first, rest);
}

std::string_view allowed_methods(RouteKind kind) noexcept {
  switch (kind) {
  case RouteKind::collection: return "GET, POST";
  case RouteKind::by_id:
  case RouteKind::by_name: return "GET, PATCH, DELETE";
  case RouteKind::restore:
  case RouteKind::followers:
  case RouteKind::vote: return "PUT";
  case RouteKind::follower: return "DELETE";
  case RouteKind::versions:
  case RouteKind::version:
  case RouteKind::events:
  case RouteKind::search:
  case RouteKind::suggest:
  case RouteKind::aggregate: return "GET";
  }
  return "";
}

bool method_allowed(RouteKind kind, std::string_view method) noexcept {
  if (method.empty()) return false;
  std::string_view allowed = allowed_methods(kind);
  // The list is "A, B, C": compare whole names.
  while (!allowed.empty()) {
    auto comma = allowed.find(", ");
    auto name = allowed.substr(0, comma);
    if (name == method) return true;
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 2);
  }
  return false;
}

}  // namespace catalog::rest::detail
