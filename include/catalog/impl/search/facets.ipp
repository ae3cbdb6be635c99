#ifndef CATALOG_IMPL_SEARCH_FACETS_IPP
#define CATALOG_IMPL_SEARCH_FACETS_IPP

// Facets (docs/SEMANTICS.md §16 "Facets"): the values of a field held by most of the best matches.

#include <catalog/detail/search/query_parts.hpp>

#include <algorithm>
#include <catalog/detail/search/analyzer.hpp>
#include <functional>
#include <string>
#include <string_view>

namespace catalog::engine::search_query {

namespace {

/// The number of documents of each value of one facet field that contains `needle` (case folded;
/// empty: every value), each value folded once. Values are views that outlive it. Open
/// addressing: a facet over 10,000 documents adds about ten values a document, most of them
/// values it has seen (a glossary, a status).
class ValueCounts {
 public:
  explicit ValueCounts(std::string_view needle) : needle_(needle) {}
  void add(std::string_view v) {
    if (last_ < slots_.size() && slots_[last_].value == v) {  // the previous document's value
      slots_[last_].count += slots_[last_].kept;
      return;
    }
    if (2 * (used_ + 1) > slots_.size()) grow();
    const std::size_t h = std::hash<std::string_view>{}(v);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      auto& s = slots_[i];
      if (!s.used) {
        s = Slot{h, v, 0, true,
                 needle_.empty() || search::case_folded(v).find(needle_) != std::string::npos};
        ++used_;
      } else if (s.hash != h || s.value != v) {
        continue;
      }
      s.count += s.kept;
      last_ = i;
      return;
    }
  }
  /// Calls f(value, count) for each value kept and counted, in no particular order.
  template <class F>
  void each(F&& f) const {
    for (const auto& s : slots_)
      if (s.count > 0) f(s.value, s.count);
  }

 private:
  struct Slot {
    std::size_t hash = 0;
    std::string_view value;
    std::int64_t count = 0;
    bool used = false;
    bool kept = false;
  };
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()));
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const auto& s : old)
      if (s.used) {
        std::size_t i = s.hash & mask;
        while (slots_[i].used) i = (i + 1) & mask;
        slots_[i] = s;
      }
    last_ = slots_.size();  // no previous value until the next add
  }
  std::string_view needle_;
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  std::size_t last_ = 0;
};

}  // namespace

/// The facets of the best max_window matches (select_best put them first). Errors: storage.
Result<std::vector<Facet>> count_facets(std::span<const Match> best,
                                        std::span<const std::string_view> fields,
                                        std::string_view contains, std::size_t size) {
  const auto& matches = best;
  const std::size_t window = best.size();
  const auto needle = search::case_folded(contains);
  std::vector<ValueField> value_fields;
  for (auto field : fields) {
    auto v = value_field(field);
    if (!v) return fail(Errc::invalid_parameter, "Invalid parameter field: " + std::string(field));
    value_fields.push_back(*v);
  }
  // Per field, the count of each value: views into the candidates' records.
  std::vector<ValueCounts> counts(value_fields.size(), ValueCounts(needle));
  std::vector<std::string_view> seen;
  si::FacetView view;
  for (std::size_t i = 0; i < window; ++i) {
    // The candidates are out of cache by now: ask ahead for the next ones (the ranking part,
    // then its facet values, whose place the ranking part gives).
    if (i + 8 < window) __builtin_prefetch(matches[i + 8].doc);
    if (i + 4 < window) __builtin_prefetch(matches[i + 4].doc->facets.data());
    const si::RankingView& d = *matches[i].doc;
    if (!si::decode_facets(d.facets, view)) return fail(Errc::storage, "corrupt search document");
    for (std::size_t f = 0; f < value_fields.size(); ++f) {
      seen.clear();
      for_each_value(d, view, value_fields[f], [&](std::string_view v) {
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) return;
        seen.push_back(v);
        counts[f].add(v);
      });
    }
  }
  std::vector<Facet> out;
  for (std::size_t f = 0; f < value_fields.size(); ++f) {
    std::vector<FacetBucket> buckets;
    counts[f].each([&](std::string_view k, std::int64_t n) {
      buckets.push_back(FacetBucket{std::string(k), n});
    });
    std::sort(buckets.begin(), buckets.end(), [](const auto& x, const auto& y) {
      return x.doc_count != y.doc_count ? x.doc_count > y.doc_count : x.key < y.key;
    });
    if (buckets.size() > size) buckets.resize(size);
    out.push_back(Facet{std::string(fields[f]), std::move(buckets)});
  }
  return out;
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_FACETS_IPP
