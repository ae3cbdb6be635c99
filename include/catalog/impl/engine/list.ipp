#ifndef CATALOG_IMPL_ENGINE_LIST_IPP
#define CATALOG_IMPL_ENGINE_LIST_IPP

// Lists with cursors (docs/SEMANTICS.md §8). Live and soft-deleted entities have separate list
// indexes ordered by name then id, so every `include` is one or two range scans: a page seeks to
// its cursor in each, merges them, and stops after `limit + 1` keys (the extra key says whether
// more follow).

#include <catalog/detail/engine/paging.hpp>

#include <catalog/fqn.hpp>

#include <algorithm>
#include <memory>

namespace catalog::engine {

namespace json = boost::json;

Result<void> check_limit(std::int64_t limit) {
  if (limit >= 0 && limit <= max_limit) return {};
  return fail(Errc::invalid_parameter, "Invalid parameter limit: " + std::to_string(limit) +
                                           " is not between 0 and " + std::to_string(max_limit));
}

namespace {

// A list-key suffix `collect` found (it checked that the key decodes).
keys::ListPositionKey decode_position(std::string_view suffix) {
  return *keys::decode_list_position(suffix);
}

ListPosition to_position(std::string_view suffix) {
  auto p = decode_position(suffix);
  return ListPosition{std::string(p.name), p.id};
}

// Up to `count` list-key suffixes (name 0x00 id) nearest to `from` in the scan direction,
// merged across `prefixes` (each one sorted range). Forward: strictly after `from` (or from the
// start), ascending. Backward: strictly before `from`, descending.
Result<std::vector<std::string>> collect(Tx& tx, const std::vector<std::string>& prefixes,
                                         const std::optional<ListPosition>& from, bool forward,
                                         std::size_t count) {
  std::vector<std::unique_ptr<storage::Cursor>> sources;
  for (const auto& prefix : prefixes) {
    auto range = storage::prefix_range(prefix);
    if (from) {
      auto at = prefix + keys::list_position(from->name, from->id);
      // `at` + 0x00 is the least key greater than `at`: the forward scan excludes the cursor.
      if (forward)
        range.begin = at + '\0';
      else
        range.end = at;
    }
    auto c =
        tx.raw().scan(range, forward ? storage::Direction::forward : storage::Direction::reverse);
    if (!c) return c.error();
    sources.push_back(std::move(*c));
  }
  const std::size_t prefix_size = prefixes.front().size();  // all prefixes have one length
  std::vector<std::string> out;
  while (out.size() < count) {
    storage::Cursor* best = nullptr;
    for (auto& s : sources) {
      if (!s->valid()) continue;
      if (!best) {
        best = s.get();
        continue;
      }
      auto a = s->key().substr(prefix_size);
      auto b = best->key().substr(prefix_size);
      if (forward ? a < b : a > b) best = s.get();
    }
    if (!best) break;
    if (!keys::decode_list(best->key()))
      return fail(Errc::storage, "corrupt list key " + keys::printable(best->key()));
    out.emplace_back(best->key().substr(prefix_size));
    if (auto n = best->next(); !n) return n.error();
  }
  return out;
}

}  // namespace

Result<ListQuery> parse_list_query(Kind kind, const ListOptions& options) {
  ListQuery q;
  q.kind = kind;
  if (auto l = check_limit(options.limit); !l) return l.error();
  q.limit = options.limit;
  if (options.before && options.after)
    return fail(Errc::invalid_parameter, "Only one of before or after query parameter allowed");
  if (options.before) {
    auto p = decode_cursor(*options.before, "before");
    if (!p) return p.error();
    q.before = std::move(*p);
    q.cursor_text = *options.before;
  }
  if (options.after) {
    auto p = decode_cursor(*options.after, "after");
    if (!p) return p.error();
    q.after = std::move(*p);
    q.cursor_text = *options.after;
  }
  switch (options.include) {
  case Include::non_deleted:
  case Include::deleted:
  case Include::all: q.include = options.include; break;
  default: return fail(Errc::invalid_parameter, "Invalid parameter include");
  }
  auto fields = parse_fields(kind, options.fields);
  if (!fields) return fields.error();
  q.fields = std::move(*fields);
  if (options.service) {
    if (!service_kind(kind))
      return fail(Errc::invalid_parameter,
                  "Invalid parameter service: " + std::string(type_name(kind)) +
                      " entities do not belong to a service");
    auto canonical = fqn::canonical(*options.service);
    if (!canonical) return canonical.error();
    q.service = std::move(*canonical);
  }
  return q;
}

namespace {

// The list prefixes `q` walks (live, deleted or both, in the scope of its service) and their
// total in `page`; nullopt when the service is unknown (docs/SEMANTICS.md §8: an empty page, not
// 404).
Result<std::optional<std::vector<std::string>>> list_prefixes(Tx& tx, const ListQuery& q,
                                                              std::int64_t& total) {
  Uuid scope = keys::all_scope;
  if (q.service) {
    // A soft-deleted service still scopes its (soft-deleted) assets: `include` decides which
    // states are listed, the filter only which service.
    auto service = tx.find_id(*service_kind(q.kind), *q.service);
    if (!service) return service.error();
    if (!*service) return std::optional<std::vector<std::string>>();
    scope = **service;
  }
  std::vector<std::string> prefixes;
  for (bool deleted : {false, true}) {
    if (q.include == (deleted ? Include::non_deleted : Include::deleted)) continue;
    auto n = tx.count(q.kind, deleted, scope);
    if (!n) return n.error();
    total += *n;
    prefixes.push_back(keys::list_prefix(q.kind, deleted, scope));
  }
  return std::optional(std::move(prefixes));
}

// Decodes the record a list index of `kind` names into `out`. Errors: storage (the record is
// missing, of another kind, or corrupt).
Result<void> read_listed(Kind kind, const Uuid& id, std::optional<std::string_view> bytes,
                         Record& out) {
  if (!bytes) return fail(Errc::storage, "list index names a missing entity " + to_string(id));
  if (auto d = decode(*bytes, out); !d) return d;
  if (out.kind != kind)
    return fail(Errc::storage, "list index names an entity of another kind " + to_string(id));
  return {};
}

// The page's entities, rendered with the fields `q` asks for, in list order: `append` renders
// the record (JSON, or its own struct in place) and appends it to the page.
template <class Page, class Append>
Result<void> render_page(Tx& tx, const ListQuery& q, const std::vector<std::string>& positions,
                         Page& page, Append append) {
  page.data.reserve(positions.size());
  // The records are read a batch at a time (get_each), each decoded while the backend fetches
  // the next (LMDB asks for its cache lines ahead), then rendered: rendering reads the store,
  // which a get_each visit may not. A batch bounds what a page of a million holds at once.
  std::vector<Uuid> ids;
  ids.reserve(positions.size());
  for (const auto& p : positions) ids.push_back(decode_position(p).id);
  std::vector<Record> records;
  ContainerCache containers;
  for (std::size_t at = 0; at < ids.size(); at += Tx::read_batch) {
    records.clear();
    records.resize(std::min(Tx::read_batch, ids.size() - at));
    const auto id_of = [&](std::size_t i) -> const Uuid& { return ids[at + i]; };
    auto read = tx.read_records(records.size(), id_of,
                                [&](std::size_t i, std::optional<std::string_view> bytes) {
                                  return read_listed(q.kind, id_of(i), bytes, records[i]);
                                });
    if (!read) return read;
    if (tx.raw().reads_ahead()) {  // PostgreSQL: what rendering the batch reads, fetched together
      std::vector<const Record*> batch;
      for (const auto& r : records) batch.push_back(&r);
      if (auto p = prefetch_rendering(tx, batch, q.fields); !p) return p;
    }
    for (auto& r : records)
      if (auto a = append(tx, r, q.fields, RenderFrom{&containers, nullptr}, page.data); !a)
        return a;
  }
  return {};
}

// The page's cursors (docs/SEMANTICS.md §8): `before` and `after` where there is more that way, and
// the client's own cursor handed back when nothing lies beyond it, so it can turn around.
template <class Page>
void set_cursors(const ListQuery& q, const std::vector<std::string>& positions, bool more,
                 Page& page) {
  const bool backward = q.before.has_value();
  if (positions.empty()) {
    if (backward)
      page.after = q.cursor_text;
    else if (q.after)
      page.before = q.cursor_text;
    return;
  }
  auto first = encode_cursor(to_position(positions.front()));
  auto last = encode_cursor(to_position(positions.back()));
  if (backward) {
    if (more) page.before = std::move(first);
    page.after = std::move(last);
  } else {
    if (more) page.after = std::move(last);
    if (q.after) page.before = std::move(first);
  }
}

// docs/SEMANTICS.md §8: authorize, total from the counters, then at most limit+1 index keys from
// the cursor.
template <class Page, class Append>
Result<Page> list_page(Tx& tx, const Principal& who, const ListQuery& q, Page page, Append append) {
  Operation op =
      q.fields.all || !q.fields.names.empty() ? Operation::view_all : Operation::view_basic;
  RecordResource resource(tx, q.kind, nullptr);
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();

  auto prefixes = list_prefixes(tx, q, page.total);
  if (!prefixes) return prefixes.error();
  if (!*prefixes || q.limit == 0) return page;

  const bool backward = q.before.has_value();
  const auto limit = static_cast<std::size_t>(q.limit);
  auto found = collect(tx, **prefixes, backward ? q.before : q.after, !backward, limit + 1);
  if (!found) return found.error();
  auto& positions = *found;
  const bool more = positions.size() > limit;
  if (more) positions.pop_back();
  if (backward) std::reverse(positions.begin(), positions.end());
  if (auto rendered = render_page(tx, q, positions, page, append); !rendered)
    return rendered.error();
  set_cursors(q, positions, more, page);
  return page;
}

}  // namespace

Result<JsonPage> list(Tx& tx, const Principal& who, const ListQuery& q) {
  return list_page<JsonPage>(tx, who, q, JsonPage{},
                             [](Tx& tx, const Record& r, const FieldSet& fields,
                                const RenderFrom& from, auto& data) -> Result<void> {
                               auto rendered = render(tx, r, fields, from);
                               if (!rendered) return rendered.error();
                               data.push_back(std::move(*rendered));
                               return {};
                             });
}

namespace {

// A page whose entities go to a sink: what list_page fills for a typed list.
struct SinkPage {
  struct Data {
    detail::EntitySink sink;
    void reserve(std::size_t n) { sink.restart(sink.target, n); }
  } data;
  std::optional<std::string> before, after;
  std::int64_t total = 0;
};

}  // namespace

Result<detail::PageCursors> list_entities(Tx& tx, const Principal& who, const ListQuery& q,
                                          detail::EntitySink sink) {
  // Each struct is rendered where it was decoded and moved once, into the caller's page; no
  // intermediate page of whole entities is built.
  sink.restart(sink.target, 0);  // a retried read starts over
  auto page =
      list_page<SinkPage>(tx, who, q, SinkPage{{sink}, {}, {}, 0},
                          [](Tx& tx, Record& r, const FieldSet& fields, const RenderFrom& from,
                             SinkPage::Data& data) -> Result<void> {
                            if (auto s = render_in(tx, r, fields, from); !s) return s;
                            if (!data.sink.take(data.sink.target, r.value))
                              return fail(Errc::storage, "a list of one kind holds another");
                            return {};
                          });
  if (!page) return page.error();
  return detail::PageCursors{std::move(page->before), std::move(page->after), page->total};
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_LIST_IPP
