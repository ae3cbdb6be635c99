#ifndef CATALOG_SEARCH_HPP
#define CATALOG_SEARCH_HPP

// Search requests and answers (docs/SEMANTICS.md §16): what Store::search, suggest and aggregate
// take and give. Everything a query can say over REST can be said here without JSON; the REST
// surface reads its parameters into these structs.

#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace catalog {

/// A leaf of a filter: the document's `field` (one of the filter fields of docs/SEMANTICS.md §16:
/// `entityType`, `owners.id`, `owners.name`, `owners.displayName`, `tags.tagFQN`, `domains.id`,
/// `domains.fullyQualifiedName`, `service.name`, `glossary.name`, `status`, `deleted`) has one of
/// `values` (`deleted` compares with "true" or "false").
struct SearchTerm {
  std::string field;
  std::vector<std::string> values;
};

/// A boolean filter, as Elasticsearch's `bool` query: a leaf when `term` is set, else every
/// `must` and `filter` clause holds, no `must_not` clause holds, and, when there are neither
/// `must` nor `filter` clauses, at least one `should` clause holds (when there are, `should`
/// does not narrow).
struct SearchFilter {
  std::optional<SearchTerm> term;
  std::vector<SearchFilter> must, should, must_not, filter;
};

/// A sort value of a hit: what `search_after` takes back.
using SortValue = std::variant<std::int64_t, double, std::string>;

struct SearchRequest {
  /// The query (docs/SEMANTICS.md §16 "Query"): at most 1,024 bytes and 32 words. Empty or `*`:
  /// every entity the filters allow.
  std::string q;
  /// An index name or alias (`mlmodel_search_index` or `mlmodel`, `dataAsset`, `all`, ...).
  std::string index = "all";
  std::int64_t from = 0;
  std::int64_t size = 10;
  /// Soft-deleted entities instead of live ones.
  bool deleted = false;
  std::optional<SearchFilter> filter;
  /// `_score`, `name.keyword`, `displayName.keyword`, `updatedAt` or `votes.upVotes`; empty:
  /// `_score` when `q` has words, else `name.keyword`.
  std::string sort_field;
  /// `asc` or `desc`; empty: `desc` for `_score`, else `asc`.
  std::string sort_order;
  /// The `sort` of the last hit of the previous page: the page continues after it.
  std::optional<std::vector<SortValue>> search_after;
  /// The total counted exactly past 10,000.
  bool track_total_hits = false;
  /// Members of each hit's `_source` to keep (all when empty).
  std::vector<std::string> include_source_fields;
};

/// One hit: the entity as a list answers it with owners, tags and domains.
template <class T>
struct SearchHitOf {
  T entity;
  std::string index;  // the index name of its kind
  double score = 0;
  /// Matched fields (`name`, `displayName`, `description`, `synonyms`, `tags`), each text with
  /// its matched words wrapped in <span class="text-highlighter"> and </span>.
  std::vector<std::pair<std::string, std::vector<std::string>>> highlight;
  std::vector<SortValue> sort;
};

struct FacetBucket {
  std::string key;
  std::int64_t doc_count = 0;
  friend bool operator==(const FacetBucket&, const FacetBucket&) = default;
};

/// One facet: its field (`entityType`, `owners.displayName`, `tags.tagFQN`,
/// `domains.fullyQualifiedName`, `service.name`, `glossary.name`, `status`) and buckets.
struct Facet {
  std::string field;
  std::vector<FacetBucket> buckets;
};

template <class T>
struct SearchPage {
  std::vector<SearchHitOf<T>> hits;
  /// Matches the caller may view; exact when `total_exact`, else at least this many.
  std::int64_t total = 0;
  bool total_exact = true;
  std::optional<double> max_score;
  std::vector<Facet> aggregations;
};

using SearchHit = SearchHitOf<AnyEntity>;
using SearchResult = SearchPage<AnyEntity>;

/// A typeahead answer.
struct Suggestion {
  std::string text;  // the name it was found by
  std::string index;
  double score = 0;
  AnyEntity entity;
};

struct AggregateRequest {
  std::string index = "all";
  /// One of the facet fields.
  std::string field;
  /// Keeps the keys that contain it, case aside.
  std::string value;
  std::string q;
  std::int64_t size = 10;
  bool deleted = false;
};

/// The search index name of `kind` (`mlmodel_search_index`, ...); empty for policies.
std::string_view search_index_name(Kind kind) noexcept;

/// Reads an Elasticsearch-style `query_filter` (`{"query": {"bool": {...}}}`, docs/SEMANTICS.md
/// §16 "Filters"). Errors: bad_request (invalid_parameter) naming the unsupported part.
Result<SearchFilter> parse_search_filter(std::string_view json_text);

}  // namespace catalog

#endif  // CATALOG_SEARCH_HPP
