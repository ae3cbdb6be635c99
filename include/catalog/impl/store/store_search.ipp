#ifndef CATALOG_IMPL_STORE_STORE_SEARCH_IPP
#define CATALOG_IMPL_STORE_STORE_SEARCH_IPP

// Store: search, suggest, aggregate and reindex (docs/SEMANTICS.md §16). A query is one read
// transaction: the engine ranks and pages, and the hits are rendered here, as structs or as the
// JSON the REST surface answers.

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/search/index.hpp>
#include <catalog/detail/search/query.hpp>
#include <catalog/detail/store/store_impl.hpp>

#include <catalog/json.hpp>

#include <boost/json/parse.hpp>

#include <chrono>

namespace catalog {

namespace {

namespace bjson = boost::json;
namespace sq = engine::search_query;

/// A hit's `_source`: the entity as a list answers it with owners, tags and domains.
engine::FieldSet source_fields(Kind kind) {
  engine::FieldSet fields;
  for (auto f : info(kind).extra_fields)
    if (f == "owners" || f == "tags" || f == "domains") fields.names.emplace(f);
  return fields;
}

Result<engine::Record> hit_record(engine::Tx& tx, const Uuid& id) {
  auto r = tx.find(id);
  if (!r) return r.error();
  if (!*r) return fail(Errc::storage, "the search index names a missing entity " + to_string(id));
  return std::move(**r);
}

/// A hit's record: the one highlighting read, else read now.
Result<engine::Record> hit_record(engine::Tx& tx, sq::RankedHit& h) {
  if (h.record) return std::move(*h.record);
  return hit_record(tx, h.id);
}

/// The records of a page of hits or suggestions (`record_of` each item: the one it holds, else
/// read; the engine fetched them ahead), with what rendering their sources reads fetched together
/// beforehand: a few round trips on PostgreSQL for the whole page instead of several a hit
/// (engine::prefetch_rendering).
template <class Item, class RecordOf>
Result<std::vector<engine::Record>> page_records(engine::Tx& tx, std::vector<Item>& items,
                                                 RecordOf record_of) {
  std::vector<engine::Record> records;
  records.reserve(items.size());
  for (auto& item : items) {
    auto r = record_of(item);
    if (!r) return r.error();
    records.push_back(std::move(*r));
  }
  // Every kind's source fields at once: a relationship is rendered when it is not an extra, or
  // when it is one of these, as source_fields(kind) has it.
  static const engine::FieldSet sources{false, {"domains", "owners", "tags"}};
  std::vector<const engine::Record*> rendered;
  for (const auto& r : records) rendered.push_back(&r);
  if (auto p = engine::prefetch_rendering(tx, rendered, sources); !p) return p.error();
  return records;
}

bjson::value sort_json(const SortValue& v) {
  return std::visit([](const auto& x) { return bjson::value(x); }, v);
}

bjson::object facets_json(const std::vector<Facet>& facets) {
  bjson::object out;
  for (const auto& f : facets) {
    bjson::array buckets;
    for (const auto& b : f.buckets)
      buckets.push_back(bjson::object{{"key", b.key}, {"doc_count", b.doc_count}});
    out[f.field] = bjson::object{{"buckets", std::move(buckets)}};
  }
  return out;
}

std::int64_t elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

Result<std::string> term_value(const bjson::value& v, std::string_view field) {
  if (v.is_string()) return std::string(v.get_string());
  if (v.is_bool()) return std::string(v.get_bool() ? "true" : "false");
  if (v.is_number()) return catalog::json::serialize(v);
  return fail(Errc::invalid_parameter, "Invalid parameter query_filter: the value of " +
                                           std::string(field) + " is not a string");
}

std::string field_name(std::string_view f) {
  if (f.ends_with(".keyword")) f.remove_suffix(8);
  return std::string(f);
}

Result<SearchFilter> read_clause(const bjson::value& v, std::size_t depth);

Result<SearchFilter> read_bool(const bjson::value& v, std::size_t depth) {
  if (depth > sq::max_filter_depth)
    return fail(Errc::invalid_parameter, "Invalid parameter query_filter: nested deeper than " +
                                             std::to_string(sq::max_filter_depth));
  if (!v.is_object())
    return fail(Errc::invalid_parameter, "Invalid parameter query_filter: bool is not an object");
  SearchFilter out;
  for (const auto& kv : v.get_object()) {
    std::vector<SearchFilter>* list = nullptr;
    if (kv.key() == "must")
      list = &out.must;
    else if (kv.key() == "should")
      list = &out.should;
    else if (kv.key() == "must_not")
      list = &out.must_not;
    else if (kv.key() == "filter")
      list = &out.filter;
    else
      return fail(Errc::invalid_parameter,
                  "Invalid parameter query_filter: unsupported bool member " +
                      std::string(kv.key()));
    if (kv.value().is_array()) {
      for (const auto& c : kv.value().get_array()) {
        auto f = read_clause(c, depth);
        if (!f) return f.error();
        list->push_back(std::move(*f));
      }
    } else {
      auto f = read_clause(kv.value(), depth);
      if (!f) return f.error();
      list->push_back(std::move(*f));
    }
  }
  return out;
}

Result<SearchFilter> read_clause(const bjson::value& v, std::size_t depth) {
  if (!v.is_object() || v.get_object().size() != 1)
    return fail(
        Errc::invalid_parameter,
        "Invalid parameter query_filter: a clause is an object with one of bool, term, terms");
  const auto& [name, body] = *v.get_object().begin();
  if (name == "bool") return read_bool(body, depth + 1);
  if (name != "term" && name != "terms")
    return fail(Errc::invalid_parameter,
                "Invalid parameter query_filter: unsupported query " + std::string(name));
  if (!body.is_object() || body.get_object().size() != 1)
    return fail(Errc::invalid_parameter,
                "Invalid parameter query_filter: " + std::string(name) + " names one field");
  const auto& [field, value] = *body.get_object().begin();
  SearchTerm term{field_name(field), {}};
  if (name == "terms") {
    if (!value.is_array())
      return fail(Errc::invalid_parameter, "Invalid parameter query_filter: terms of " +
                                               std::string(field) + " is not an array");
    for (const auto& e : value.get_array()) {
      auto s = term_value(e, field);
      if (!s) return s.error();
      term.values.push_back(std::move(*s));
    }
  } else {
    const bjson::value* leaf = &value;
    if (value.is_object()) {
      if (value.get_object().size() != 1 || !value.get_object().contains("value"))
        return fail(Errc::invalid_parameter, "Invalid parameter query_filter: term of " +
                                                 std::string(field) +
                                                 " is a value or {\"value\": ...}");
      leaf = &value.get_object().at("value");
    }
    auto s = term_value(*leaf, field);
    if (!s) return s.error();
    term.values.push_back(std::move(*s));
  }
  SearchFilter out;
  out.term = std::move(term);
  return out;
}

}  // namespace

Result<SearchFilter> parse_search_filter(std::string_view text) {
  auto v = catalog::json::parse(text);
  if (!v)
    return fail(Errc::invalid_parameter, "Invalid parameter query_filter: " + v.error().message());
  // The top is a bool (docs/SEMANTICS.md §16): `{"query": {"term": ...}}` is 400 too.
  const auto* query = v->is_object() && v->get_object().size() == 1
                          ? v->get_object().if_contains("query")
                          : nullptr;
  if (!query || !query->is_object() || query->get_object().size() != 1 ||
      !query->get_object().contains("bool"))
    return fail(Errc::invalid_parameter,
                "Invalid parameter query_filter: expected {\"query\": {\"bool\": {...}}}");
  auto f = read_clause(*query, 0);
  if (!f) return f.error();
  // The fields are checked with the request (search_query::check).
  return f;
}

std::string_view search_index_name(Kind kind) noexcept {
  switch (kind) {
  case Kind::mlmodel: return "mlmodel_search_index";
  case Kind::glossary: return "glossary_search_index";
  case Kind::glossary_term: return "glossary_term_search_index";
  case Kind::search_index: return "search_entity_search_index";
  case Kind::domain: return "domain_search_index";
  case Kind::team: return "team_search_index";
  case Kind::user: return "user_search_index";
  case Kind::mlmodel_service: return "mlmodel_service_search_index";
  case Kind::search_service: return "search_service_search_index";
  case Kind::policy: return "";
  }
  return "";
}

Result<SearchResult> Store::search(const Principal& who, const SearchRequest& request) {
  if (auto c = sq::check(request); !c) return impl_->failed(StoreOperation::search, c.error());
  return impl_->read(StoreOperation::search, [&](engine::Tx& tx) -> Result<SearchResult> {
    if (auto ready = impl_->searchable(tx); !ready) return ready.error();
    auto ranked = sq::search(tx, who, request);
    if (!ranked) return ranked.error();
    SearchResult out;
    out.total = ranked->total;
    out.total_exact = ranked->total_exact;
    out.max_score = ranked->max_score;
    out.aggregations = std::move(ranked->facets);
    auto records =
        page_records(tx, ranked->hits, [&](sq::RankedHit& h) { return hit_record(tx, h); });
    if (!records) return records.error();
    engine::ContainerCache containers;
    for (std::size_t i = 0; i < ranked->hits.size(); ++i) {
      auto& h = ranked->hits[i];
      auto e = engine::render_entity(tx, std::move((*records)[i]), source_fields(h.kind),
                                     {&containers, nullptr});
      if (!e) return e.error();
      out.hits.push_back(SearchHit{std::move(*e), std::string(search_index_name(h.kind)), h.score,
                                   std::move(h.highlight), std::move(h.sort)});
    }
    return out;
  });
}

Result<bjson::object> Store::search_json(const Principal& who, const SearchRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  if (auto c = sq::check(request); !c) return impl_->failed(StoreOperation::search, c.error());
  return impl_->read(StoreOperation::search, [&](engine::Tx& tx) -> Result<bjson::object> {
    if (auto ready = impl_->searchable(tx); !ready) return ready.error();
    auto ranked = sq::search(tx, who, request);
    if (!ranked) return ranked.error();
    auto records =
        page_records(tx, ranked->hits, [&](sq::RankedHit& h) { return hit_record(tx, h); });
    if (!records) return records.error();
    engine::ContainerCache containers;
    bjson::array hits;
    for (std::size_t i = 0; i < ranked->hits.size(); ++i) {
      auto& h = ranked->hits[i];
      auto source =
          engine::render(tx, (*records)[i], source_fields(h.kind), {&containers, nullptr});
      if (!source) return source.error();
      if (!request.include_source_fields.empty()) {
        bjson::object kept;
        for (const auto& f : request.include_source_fields)
          if (auto* v = source->if_contains(f)) kept[f] = *v;
        *source = std::move(kept);
      }
      bjson::object lit;
      for (auto& [field, texts] : h.highlight) {
        bjson::array a;
        for (auto& t : texts) a.emplace_back(t);
        lit[field] = std::move(a);
      }
      bjson::array sort;
      for (const auto& v : h.sort) sort.push_back(sort_json(v));
      hits.push_back(bjson::object{{"_index", search_index_name(h.kind)},
                                   {"_id", to_string(h.id)},
                                   {"_score", h.score},
                                   {"_source", std::move(*source)},
                                   {"highlight", std::move(lit)},
                                   {"sort", std::move(sort)}});
    }
    bjson::object total{{"value", ranked->total}, {"relation", ranked->total_exact ? "eq" : "gte"}};
    bjson::object out;
    out["took"] = elapsed_ms(start);
    out["hits"] = bjson::object{
        {"total", std::move(total)},
        {"max_score", ranked->max_score ? bjson::value(*ranked->max_score) : bjson::value(nullptr)},
        {"hits", std::move(hits)}};
    out["aggregations"] = facets_json(ranked->facets);
    return out;
  });
}

Result<std::vector<Suggestion>> Store::suggest(const Principal& who, std::string_view q,
                                               std::string_view index, std::int64_t size) {
  return impl_->read(
      StoreOperation::suggest, [&](engine::Tx& tx) -> Result<std::vector<Suggestion>> {
        if (auto ready = impl_->searchable(tx); !ready) return ready.error();
        auto found = sq::suggest(tx, who, q, index, size);
        if (!found) return found.error();
        auto records =
            page_records(tx, *found, [&](const sq::Suggested& s) { return hit_record(tx, s.id); });
        if (!records) return records.error();
        engine::ContainerCache containers;
        std::vector<Suggestion> out;
        for (std::size_t i = 0; i < found->size(); ++i) {
          auto& s = (*found)[i];
          auto e = engine::render_entity(tx, std::move((*records)[i]), source_fields(s.kind),
                                         {&containers, nullptr});
          if (!e) return e.error();
          out.push_back(Suggestion{std::move(s.text), std::string(search_index_name(s.kind)),
                                   s.score, std::move(*e)});
        }
        return out;
      });
}

Result<bjson::object> Store::suggest_json(const Principal& who, std::string_view q,
                                          std::string_view index, std::int64_t size) {
  return impl_->read(StoreOperation::suggest, [&](engine::Tx& tx) -> Result<bjson::object> {
    if (auto ready = impl_->searchable(tx); !ready) return ready.error();
    auto found = sq::suggest(tx, who, q, index, size);
    if (!found) return found.error();
    auto records =
        page_records(tx, *found, [&](const sq::Suggested& s) { return hit_record(tx, s.id); });
    if (!records) return records.error();
    engine::ContainerCache containers;
    bjson::array options;
    for (std::size_t i = 0; i < found->size(); ++i) {
      auto& s = (*found)[i];
      auto source =
          engine::render(tx, (*records)[i], source_fields(s.kind), {&containers, nullptr});
      if (!source) return source.error();
      options.push_back(bjson::object{{"text", s.text},
                                      {"_index", search_index_name(s.kind)},
                                      {"_id", to_string(s.id)},
                                      {"_score", s.score},
                                      {"_source", std::move(*source)}});
    }
    bjson::array entries;
    entries.push_back(bjson::object{{"text", q},
                                    {"offset", 0},
                                    {"length", static_cast<std::int64_t>(q.size())},
                                    {"options", std::move(options)}});
    return bjson::object{{"suggest", bjson::object{{"metadata-suggest", std::move(entries)}}}};
  });
}

Result<Facet> Store::aggregate(const Principal& who, const AggregateRequest& request) {
  return impl_->read(StoreOperation::aggregate, [&](engine::Tx& tx) -> Result<Facet> {
    if (auto ready = impl_->searchable(tx); !ready) return ready.error();
    return sq::aggregate(tx, who, request);
  });
}

Result<bjson::object> Store::aggregate_json(const Principal& who, const AggregateRequest& request) {
  auto facet = aggregate(who, request);
  if (!facet) return facet.error();
  std::vector<Facet> one{std::move(*facet)};
  return bjson::object{{"aggregations", facets_json(one)}};
}

static_assert(engine::search_index::reindex_batch == 16000 &&
                  engine::search_index::reindex_batch_round_trips == 4000,
              "Store::reindex's comment says 16,000 and 4,000");

Result<std::uint64_t> Store::reindex(const Principal& who, std::size_t batch) {
  if (!who.is_admin)
    return impl_->failed(StoreOperation::reindex,
                         Error(Errc::forbidden, "Only an admin may rebuild the search index"));
  return impl_->counted(StoreOperation::reindex, [&] { return impl_->reindex(batch, true); });
}

Result<std::uint64_t> Store::Impl::reindex(std::size_t batch, bool from_scratch) {
  namespace si = engine::search_index;
  // Where a reindex under way stands: nullopt (none), empty (clearing), or the last id indexed.
  // And the batch, when the caller left it to the store: smaller where reads cost round trips.
  bool round_trips = false;
  auto state = read_step([&](engine::Tx& tx) -> Result<std::optional<std::string>> {
    round_trips = tx.raw().reads_ahead();
    return tx.raw().get(engine::keys::meta(si::reindex_meta));
  });
  if (!state) return state.error();
  if (batch == 0) batch = round_trips ? si::reindex_batch_round_trips : si::reindex_batch;
  // A reindex is resumed only where this version left it (si::reindex_progress); one left by
  // another version is started again, its documents being of another layout.
  std::optional<Uuid> after;
  if (!from_scratch && *state) after = si::decode_reindex_progress(**state);
  const bool clear = !after;
  if (clear) {
    auto marked = write_step([&](engine::Tx& tx) -> Result<bool> {
      if (auto p = tx.raw().put(engine::keys::meta(si::reindex_meta), ""); !p) return p.error();
      return true;
    });
    if (!marked) return marked.error();
    for (;;) {
      auto more = write_step([&](engine::Tx& tx) { return si::clear_step(tx, 10 * batch); });
      if (!more) return more.error();
      if (!*more) break;
    }
  }
  std::uint64_t indexed = 0;
  for (;;) {
    std::uint64_t step = 0;
    auto last = write_step([&](engine::Tx& tx) -> Result<std::optional<Uuid>> {
      step = 0;
      auto l = si::index_step(tx, after, batch, step);
      if (!l) return l.error();
      const auto key = engine::keys::meta(si::reindex_meta);
      if (*l)
        if (auto p = tx.raw().put(key, si::reindex_progress(**l)); !p) return p.error();
      return l;
    });
    if (!last) return last.error();
    indexed += step;
    if (!*last) break;
    after = *last;
  }
  auto done = write_step([&](engine::Tx& tx) -> Result<bool> {
    if (auto p = tx.raw().put(engine::keys::meta(si::analyzer_meta),
                              engine::keys::encode_u64(si::index_version));
        !p)
      return p.error();
    if (auto e = tx.raw().erase(engine::keys::meta(si::reindex_meta)); !e) return e.error();
    return true;
  });
  if (!done) return done.error();
  return indexed;
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_SEARCH_IPP
