#ifndef CATALOG_DETAIL_SEARCH_QUERY_HPP
#define CATALOG_DETAIL_SEARCH_QUERY_HPP

// Query evaluation over the search index (docs/SEMANTICS.md §16, docs/SEARCH_INDEX.md): the
// engine finds, filters, ranks and pages; Store renders the hits it names.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/search.hpp>

#include <optional>
#include <string>
#include <vector>

namespace catalog::engine::search_query {

/// Limits of docs/SEMANTICS.md §16.
inline constexpr std::size_t max_query_bytes = 1024;
inline constexpr std::size_t max_query_words = 32;
inline constexpr std::int64_t max_window = 10000;
inline constexpr std::size_t max_filter_depth = 8;
inline constexpr std::size_t max_buckets = 50;
inline constexpr std::int64_t max_suggest = 100;

struct RankedHit {
  Uuid id{};
  Kind kind = Kind::user;
  double score = 0;
  std::vector<SortValue> sort;
  std::vector<std::pair<std::string, std::vector<std::string>>> highlight;
  /// The hit's record as highlighting read it (empty when nothing was highlighted), so that the
  /// answer does not read it again.
  std::optional<Record> record;
};

struct Ranked {
  std::vector<RankedHit> hits;
  std::int64_t total = 0;
  bool total_exact = true;
  std::optional<double> max_score;
  std::vector<Facet> facets;
};

/// The kinds an index name or alias stands for. Errors: bad_request (invalid_parameter).
Result<KindSet> kinds_of_index(std::string_view index);

/// Checks a request alone (limits, index, sort, search_after's shape). Errors: bad_request.
Result<void> check(const SearchRequest& request);

/// A search: the page of hits (highlighted), total and facets. Errors: bad_request, storage.
Result<Ranked> search(Tx& tx, const Principal& who, const SearchRequest& request);

/// Typeahead: the ids of up to `size` entities, in order, with the name each was found by.
struct Suggested {
  Uuid id{};
  Kind kind = Kind::user;
  std::string text;
  double score = 0;
};
Result<std::vector<Suggested>> suggest(Tx& tx, const Principal& who, std::string_view q,
                                       std::string_view index, std::int64_t size);

/// One facet over a query's matches. Errors: bad_request, storage.
Result<Facet> aggregate(Tx& tx, const Principal& who, const AggregateRequest& request);

}  // namespace catalog::engine::search_query

#endif  // CATALOG_DETAIL_SEARCH_QUERY_HPP
