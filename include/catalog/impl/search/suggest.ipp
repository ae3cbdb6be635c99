#ifndef CATALOG_IMPL_SEARCH_SUGGEST_IPP
#define CATALOG_IMPL_SEARCH_SUGGEST_IPP

// Typeahead (docs/SEMANTICS.md §16 "Suggest"): names that start with the text, then names with a
// word that does, from the typeahead keys (K, J).

#include <catalog/detail/search/query_parts.hpp>

#include <algorithm>
#include <catalog/detail/engine/references.hpp>
#include <catalog/detail/search/analyzer.hpp>
#include <set>
#include <string>
#include <tuple>

namespace catalog::engine::search_query {

Result<std::vector<Suggested>> suggest(Tx& tx, const Principal& who, std::string_view q,
                                       std::string_view index, std::int64_t size) {
  auto kinds = kinds_of_index(index);
  if (!kinds) return kinds.error();
  if (size < 0 || size > max_suggest)
    return fail(Errc::invalid_parameter,
                "Invalid parameter size: must be between 0 and " + std::to_string(max_suggest));
  if (auto text = check_query_text(q); !text) return text.error();
  std::vector<Suggested> out;
  const auto folded = search::fold(q);
  if (folded.empty() || size == 0) return out;
  std::set<Uuid> seen;
  // Whether the caller may view the entity (docs/SEMANTICS.md §16 "Who sees what").
  auto visible = [&](const Uuid& id, Kind kind) -> Result<bool> {
    if (who.is_admin) return true;
    auto r = tx.find(id);
    if (!r) return r.error();
    if (!*r) return false;
    Operation op = Operation::view_basic;
    RecordResource resource(tx, kind, &**r);
    auto a = authorize(tx, who, {&op, 1}, resource);
    if (!a && a.error().kind() != ErrorKind::forbidden) return a.error();
    return a.has_value();
  };
  // Names that start with the text (K keys); an exact name first. Then names with a word that
  // starts with the analysed text (J keys). On PostgreSQL the first batch of both scans comes in
  // one round trip.
  const auto words = search::words(q);
  std::vector<storage::Range> ranges{storage::prefix_range(keys::name_entry_prefix(folded))};
  if (!words.empty())
    ranges.push_back(storage::prefix_range(keys::name_word_prefix(words.back().whole)));
  if (tx.raw().reads_ahead())
    if (auto p = tx.raw().prefetch({}, ranges); !p) return p.error();
  std::vector<Uuid> exact, starting, by_word;
  const std::size_t scan_limit = static_cast<std::size_t>(size) * 20 + 100;
  {
    auto cursor = tx.raw().scan(ranges[0], storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid() && starting.size() + exact.size() < scan_limit;) {
      auto k = keys::decode_text_id('K', c->key());
      if (!k) return fail(Errc::storage, "corrupt typeahead key " + keys::printable(c->key()));
      (k->text == folded ? exact : starting).push_back(k->id);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  if (ranges.size() > 1) {
    auto cursor = tx.raw().scan(ranges[1], storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid() && by_word.size() < scan_limit;) {
      auto k = keys::decode_text_id('J', c->key());
      if (!k) return fail(Errc::storage, "corrupt typeahead key " + keys::printable(c->key()));
      by_word.push_back(k->id);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  // The documents of every candidate, live and of the index's kinds, by id: one get_each (one
  // round trip on PostgreSQL).
  std::vector<si::Document> docs;
  {
    std::vector<Uuid> all;
    all.reserve(exact.size() + starting.size() + by_word.size());
    for (const auto* group : {&exact, &starting, &by_word})
      all.insert(all.end(), group->begin(), group->end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<std::string> keys;
    keys.reserve(all.size());
    for (const auto& id : all) keys.push_back(keys::search_doc(id));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::optional<Error> bad;
    auto read = tx.raw().get_each(views, [&](std::size_t, std::optional<std::string_view> v) {
      if (!v || bad) return;
      auto d = si::decode_document(*v, si::Part::ranking);
      if (!d) {
        bad = d.error();
        return;
      }
      if (!d->deleted && kinds->contains(d->kind)) docs.push_back(std::move(*d));
    });
    if (!read) return read.error();
    if (bad) return *bad;
  }
  // The document of a candidate, if it is live and of the index's kinds.
  auto doc_of = [&](const Uuid& id) -> const si::Document* {
    auto at = std::lower_bound(docs.begin(), docs.end(), id,
                               [](const si::Document& d, const Uuid& i) { return d.id < i; });
    return at != docs.end() && at->id == id ? &*at : nullptr;
  };
  // Keeps the visible ones among `group` not kept or refused before, by name then id.
  auto take = [&](const std::vector<Uuid>& group, double score) -> Result<void> {
    std::vector<const si::Document*> found;
    for (const auto& id : group)
      if (seen.count(id) == 0)
        if (const auto* d = doc_of(id)) found.push_back(d);
    std::sort(found.begin(), found.end(), [](const si::Document* a, const si::Document* b) {
      return std::tie(a->name, a->id) < std::tie(b->name, b->id);
    });
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (const auto* d : found) {
      if (static_cast<std::int64_t>(out.size()) >= size) break;
      if (!seen.insert(d->id).second) continue;
      auto v = visible(d->id, d->kind);
      if (!v) return v.error();
      if (*v) out.push_back(Suggested{d->id, d->kind, d->name, score});
    }
    return {};
  };
  // The first group is judged on the names themselves, case folded and nothing more
  // (docs/SEMANTICS.md §16 "Suggest"): the K keys are folded further (marks removed), so they
  // offer `Çafeteria` for `cafe`, which it does not begin with; it comes with the words.
  const auto q_case = search::case_folded(q);
  std::vector<Uuid> first_exact, first_starting;
  for (const auto* group : {&exact, &starting})
    for (const auto& id : *group) {
      const auto* d = doc_of(id);
      if (!d) continue;
      const auto name = search::case_folded(d->name);
      const auto display = search::case_folded(d->display_name);
      if (name == q_case || display == q_case)
        first_exact.push_back(id);
      else if (name.starts_with(q_case) || display.starts_with(q_case))
        first_starting.push_back(id);
    }
  // A text of several words (`asc-data`) offers by its words the names and displayNames that
  // hold every word before the last too (the last, the prefix, is what the J keys found).
  if (words.size() > 1) {
    auto holds = [&](std::string_view text) {
      const auto in_text = search::words(text);
      for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const auto& wanted = words[i].whole;
        const bool found = std::any_of(in_text.begin(), in_text.end(), [&](const auto& w) {
          return w.whole == wanted ||
                 std::find(w.parts.begin(), w.parts.end(), wanted) != w.parts.end();
        });
        if (!found) return false;
      }
      return true;
    };
    std::erase_if(by_word, [&](const Uuid& id) {
      const auto* d = doc_of(id);
      return !d || !(holds(d->name) || holds(d->display_name));
    });
  }
  if (auto t = take(first_exact, 3.0); !t) return t.error();
  if (auto t = take(first_starting, 2.0); !t) return t.error();
  if (auto t = take(by_word, 1.0); !t) return t.error();
  if (tx.raw().reads_ahead()) {
    // The records the caller renders, fetched together: one round trip on PostgreSQL.
    std::vector<Uuid> page;
    for (const auto& s : out) page.push_back(s.id);
    if (auto p = prefetch_records(tx, page); !p) return p.error();
  }
  return out;
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_SUGGEST_IPP
