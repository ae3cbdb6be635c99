// Route matching: a small tree walk over the decoded path segments.

#include "routing.hpp"

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

  auto collection = match_collection(segments);
  if (!collection) return std::nullopt;
  Route route;
  route.entity = collection->first;
  const std::size_t base = 1 + collection->second;  // index of the first segment after <c>
  const std::size_t rest = segments.size() - base;
  auto at = [&](std::size_t i) -> const std::string& { return segments[base + i]; };

  if (rest == 0) {
    route.kind = RouteKind::collection;
    return route;
  }
  if (at(0) == "name") {
    if (rest != 2) return std::nullopt;
    route.kind = RouteKind::by_name;
    route.fqn = at(1);
    return route;
  }
  if (at(0) == "restore") {
    if (rest != 1) return std::nullopt;
    route.kind = RouteKind::restore;
    return route;
  }
  route.id = at(0);
  if (rest == 1) {
    route.kind = RouteKind::by_id;
    return route;
  }
  const auto& kind_info = info(route.entity);
  if (at(1) == "versions") {
    if (rest == 2) {
      route.kind = RouteKind::versions;
      return route;
    }
    if (rest == 3) {
      route.kind = RouteKind::version;
      route.version = at(2);
      return route;
    }
    return std::nullopt;
  }
  if (at(1) == "followers" && kind_info.has_followers) {
    if (rest == 2) {
      route.kind = RouteKind::followers;
      return route;
    }
    if (rest == 3) {
      route.kind = RouteKind::follower;
      route.user_id = at(2);
      return route;
    }
    return std::nullopt;
  }
  if (at(1) == "vote" && kind_info.has_votes && rest == 2) {
    route.kind = RouteKind::vote;
    return route;
  }
  return std::nullopt;
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
  case RouteKind::events: return "GET";
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
