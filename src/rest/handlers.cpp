// The route handlers: request checks (docs/SEMANTICS.md §14 step 3), one Store call, the response
// shape of docs/REST.md.

#include "handlers.hpp"

#include "http.hpp"
#include "request.hpp"

#include <catalog/fqn.hpp>
#include <catalog/json.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace catalog::rest::detail {

namespace bj = boost::json;

namespace {

// {id} or {userId}: a canonical UUID (docs/SEMANTICS.md §2).
Result<Uuid> path_uuid(const std::string& text) { return parse_uuid(text); }

// The entity a by_id or by_name route addresses. The FQN is checked here (docs/SEMANTICS.md §14
// step 3) so that a malformed one is 400 before any lookup.
Result<EntityKey> entity_key(const Route& route) {
  if (route.kind == RouteKind::by_name) {
    if (auto canonical = fqn::canonical(route.fqn); !canonical) return canonical.error();
    return EntityKey::by_fqn(route.fqn);
  }
  auto id = path_uuid(route.id);
  if (!id) return id.error();
  return EntityKey::by_id(*id);
}

Response no_content() {
  Response r;
  r.status = 204;
  return r;
}

// ---- /v1/<c> ----

Result<Response> list(const Context& c) {
  ListOptions options;
  auto limit = c.query.integer("limit");
  if (!limit) return limit.error();
  if (*limit) options.limit = static_cast<std::int64_t>(**limit);
  auto before = c.query.text("before");
  if (!before) return before.error();
  options.before = std::move(*before);
  auto after = c.query.text("after");
  if (!after) return after.error();
  options.after = std::move(*after);
  auto fields = c.query.fields();
  if (!fields) return fields.error();
  options.fields = std::move(*fields);
  auto include = c.query.include();
  if (!include) return include.error();
  options.include = *include;
  // Only ML models and search indexes filter by service; elsewhere the parameter is unused.
  if (service_kind(c.route.entity)) {
    auto service = c.query.text("service");
    if (!service) return service.error();
    options.service = std::move(*service);
  }

  auto page = c.store.list_json(c.who, c.route.entity, options);
  if (!page) return page.error();
  bj::value body(bj::object_kind);
  auto& o = body.as_object();
  o["data"] = std::move(page->data);
  auto& paging = o["paging"].emplace_object();
  if (page->before) paging["before"] = *page->before;
  if (page->after) paging["after"] = *page->after;
  paging["total"] = page->total;
  return json_response(200, body);
}

Result<Response> create(const Context& c) {
  auto body = parse_body(c.request);
  if (!body) return body.error();
  auto made = c.store.create_json(c.who, c.route.entity, *body);
  if (!made) return made.error();
  return entity_response(201, std::move(*made));
}

// ---- /v1/<c>/{id} and /v1/<c>/name/{fqn} ----

Result<Response> get(const Context& c) {
  auto key = entity_key(c.route);
  if (!key) return key.error();
  GetOptions options;
  auto fields = c.query.fields();
  if (!fields) return fields.error();
  options.fields = std::move(*fields);
  auto include = c.query.include();
  if (!include) return include.error();
  options.include = *include;
  auto entity = c.store.get_json(c.who, c.route.entity, *key, options);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> patch(const Context& c) {
  auto key = entity_key(c.route);
  if (!key) return key.error();
  PatchOptions options;
  auto format = patch_format(c.request);
  if (!format) return format.error();
  options.format = *format;
  auto expected = if_match(c.request);
  if (!expected) return expected.error();
  options.expected_version = expected->version;
  auto body = parse_body(c.request);
  if (!body) return body.error();
  auto entity = naming_sent_version(
      c.store.patch_json(c.who, c.route.entity, *key, *body, options), *expected);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> remove(const Context& c) {
  auto key = entity_key(c.route);
  if (!key) return key.error();
  DeleteOptions options;
  auto hard = c.query.boolean("hardDelete", false);
  if (!hard) return hard.error();
  options.hard_delete = *hard;
  auto recursive = c.query.boolean("recursive", false);
  if (!recursive) return recursive.error();
  options.recursive = *recursive;
  auto expected = if_match(c.request);
  if (!expected) return expected.error();
  options.expected_version = expected->version;
  auto removed =
      naming_sent_version(c.store.remove_json(c.who, c.route.entity, *key, options), *expected);
  if (!removed) return removed.error();
  if (!*removed) return no_content();
  return entity_response(200, std::move(**removed));
}

// ---- the other routes ----

Result<Response> restore(const Context& c) {
  auto body = parse_body(c.request);
  if (!body) return body.error();
  auto id = restore_body(*body);
  if (!id) return id.error();
  auto entity = c.store.restore_json(c.who, c.route.entity, *id);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> versions(const Context& c) {
  auto id = path_uuid(c.route.id);
  if (!id) return id.error();
  auto history = c.store.history_json(c.who, c.route.entity, *id);
  if (!history) return history.error();
  bj::value body(bj::object_kind);
  auto& o = body.as_object();
  o["entityType"] = history->entity_type;
  auto& list = o["versions"].emplace_array();
  list.reserve(history->versions.size());
  for (auto& v : history->versions) list.emplace_back(bj::string(v));
  return json_response(200, body);
}

Result<Response> version(const Context& c) {
  auto id = path_uuid(c.route.id);
  if (!id) return id.error();
  // The docs/SEMANTICS.md §3 grammar is the request's own business: 400 before the lookup.
  // One past any version a catalog can write is well formed: the lookup answers it (404).
  if (auto v = Version::parse(c.route.version); !v && v.error().code() != Errc::not_found)
    return v.error();
  auto entity = c.store.version_json(c.who, c.route.entity, *id, c.route.version);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> follow(const Context& c) {
  auto id = path_uuid(c.route.id);
  if (!id) return id.error();
  auto body = parse_body(c.request);
  if (!body) return body.error();
  auto user = follow_body(*body);
  if (!user) return user.error();
  auto entity = c.store.follow_json(c.who, c.route.entity, *id, *user);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> unfollow(const Context& c) {
  auto id = path_uuid(c.route.id);
  if (!id) return id.error();
  auto user = path_uuid(c.route.user_id);
  if (!user) return user.error();
  auto entity = c.store.unfollow_json(c.who, c.route.entity, *id, *user);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> vote(const Context& c) {
  auto id = path_uuid(c.route.id);
  if (!id) return id.error();
  auto body = parse_body(c.request);
  if (!body) return body.error();
  auto vote = vote_body(*body);
  if (!vote) return vote.error();
  auto entity = c.store.vote_json(c.who, c.route.entity, *id, *vote);
  if (!entity) return entity.error();
  return entity_response(200, std::move(*entity));
}

Result<Response> events(const Context& c) {
  auto after = c.query.integer("after");
  if (!after) return after.error();
  auto limit = c.query.integer("limit");
  if (!limit) return limit.error();
  auto page = c.store.events_json(c.who, after->value_or(0),
                                  limit->has_value() ? static_cast<std::int64_t>(**limit) : 10);
  if (!page) return page.error();
  bj::value body(bj::object_kind);
  auto& o = body.as_object();
  auto& data = o["data"].emplace_array();
  data.reserve(page->data.size());
  for (auto& e : page->data) data.emplace_back(std::move(e));
  auto& paging = o["paging"].emplace_object();
  if (page->after) paging["after"] = *page->after;
  paging["total"] = page->total;
  return json_response(200, body);
}

// search_after: the JSON array of a hit's `sort`.
Result<std::vector<SortValue>> sort_values(const std::string& text) {
  auto bad = [] {
    return fail(Errc::invalid_parameter,
                "Invalid parameter search_after: expected the JSON array of a hit's sort values");
  };
  auto v = catalog::json::parse(text);
  if (!v || !v->is_array()) return bad();
  std::vector<SortValue> out;
  for (const auto& e : v->get_array()) {
    if (e.is_int64())
      out.emplace_back(e.get_int64());
    else if (e.is_uint64() && e.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
      out.emplace_back(static_cast<std::int64_t>(e.get_uint64()));
    else if (e.is_double())
      out.emplace_back(e.get_double());
    else if (e.is_string())
      out.emplace_back(std::string(e.get_string()));
    else
      return bad();
  }
  return out;
}

// Search parameters read into a request's members, which hold their defaults: a parameter
// not given leaves its member as it is.
Result<void> read_text(const Context& c, std::string_view name, std::string& out,
                       bool empty_allowed = false) {
  auto v = empty_allowed ? c.query.text_or_empty(name) : c.query.text(name);
  if (!v) return v.error();
  if (*v) out = std::move(**v);
  return {};
}

Result<void> read_count(const Context& c, std::string_view name, std::int64_t& out) {
  auto n = c.query.integer(name);
  if (!n) return n.error();
  if (*n) out = static_cast<std::int64_t>(**n);
  return {};
}

Result<void> read_flag(const Context& c, std::string_view name, bool& out) {
  auto b = c.query.boolean(name, out);
  if (!b) return b.error();
  out = *b;
  return {};
}

Result<Response> search(const Context& c) {
  SearchRequest r;
  std::string filter, after, source;
  for (auto read :
       {read_text(c, "q", r.q, true), read_text(c, "index", r.index), read_count(c, "from", r.from),
        read_count(c, "size", r.size), read_flag(c, "deleted", r.deleted),
        read_text(c, "query_filter", filter), read_text(c, "sort_field", r.sort_field),
        read_text(c, "sort_order", r.sort_order), read_text(c, "search_after", after),
        read_flag(c, "track_total_hits", r.track_total_hits),
        read_text(c, "include_source_fields", source)})
    if (!read) return read.error();
  if (!filter.empty()) {
    auto f = parse_search_filter(filter);
    if (!f) return f.error();
    r.filter = std::move(*f);
  }
  if (!after.empty()) {
    auto values = sort_values(after);
    if (!values) return values.error();
    r.search_after = std::move(*values);
  }
  for (std::string_view rest = source; !rest.empty();) {
    auto comma = rest.find(',');
    if (auto f = rest.substr(0, comma); !f.empty()) r.include_source_fields.emplace_back(f);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  auto found = c.store.search_json(c.who, r);
  if (!found) return found.error();
  return json_response(200, bj::value(std::move(*found)));
}

Result<Response> suggest(const Context& c) {
  std::string q, index = "all";
  std::int64_t size = 10;
  for (auto read :
       {read_text(c, "q", q, true), read_text(c, "index", index), read_count(c, "size", size)})
    if (!read) return read.error();
  auto found = c.store.suggest_json(c.who, q, index, size);
  if (!found) return found.error();
  return json_response(200, bj::value(std::move(*found)));
}

Result<Response> aggregate(const Context& c) {
  AggregateRequest r;
  for (auto read : {read_text(c, "index", r.index), read_text(c, "field", r.field),
                    read_text(c, "value", r.value, true), read_text(c, "q", r.q, true),
                    read_count(c, "size", r.size), read_flag(c, "deleted", r.deleted)})
    if (!read) return read.error();
  if (r.field.empty()) return fail(Errc::invalid_parameter, "Query parameter field is required");
  auto found = c.store.aggregate_json(c.who, r);
  if (!found) return found.error();
  return json_response(200, bj::value(std::move(*found)));
}

}  // namespace

Result<Response> dispatch(const Context& c) {
  const std::string& m = c.request.method;
  switch (c.route.kind) {
  case RouteKind::collection: return m == "POST" ? create(c) : list(c);
  case RouteKind::by_id:
  case RouteKind::by_name:
    if (m == "PATCH") return patch(c);
    if (m == "DELETE") return remove(c);
    return get(c);
  case RouteKind::restore: return restore(c);
  case RouteKind::versions: return versions(c);
  case RouteKind::version: return version(c);
  case RouteKind::followers: return follow(c);
  case RouteKind::follower: return unfollow(c);
  case RouteKind::vote: return vote(c);
  case RouteKind::events: return events(c);
  case RouteKind::search: return search(c);
  case RouteKind::suggest: return suggest(c);
  case RouteKind::aggregate: return aggregate(c);
  }
  return fail(Errc::internal, "Unhandled route");
}

}  // namespace catalog::rest::detail
