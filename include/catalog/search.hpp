#ifndef CATALOG_SEARCH_HPP
#define CATALOG_SEARCH_HPP

// Search requests and answers (docs/SEMANTICS.md §16): what Store::search, suggest and aggregate
// take and give. Everything a query can say over REST can be said here without JSON; the REST
// surface reads its parameters into these structs.

#include <catalog/detail/export.hpp>
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
  std::string field{};                ///< one of those fields, without a `.keyword` suffix
  std::vector<std::string> values{};  ///< the leaf holds when the field has any of them
};

/// A boolean filter, as Elasticsearch's `bool` query: a leaf when `term` is set, else every
/// `must` and `filter` clause holds, no `must_not` clause holds, and, when there are neither
/// `must` nor `filter` clauses, at least one `should` clause holds (when there are, `should`
/// does not narrow).
struct SearchFilter {
  std::optional<SearchTerm> term{};  ///< the leaf; when set, the clauses are not read
  /// Clauses that must all hold. Each clause of the four lists is a leaf or a filter of its own.
  std::vector<SearchFilter> must{}, should{}, must_not{}, filter{};
  /// \var should
  /// Clauses of which one must hold, when there are neither `must` nor `filter` clauses.
  /// \var must_not
  /// Clauses none of which may hold.
  /// \var filter
  /// Clauses that must all hold, as `must`.
};

/// A sort value of a hit: what `search_after` takes back.
using SortValue = std::variant<std::int64_t, double, std::string>;

/// A query (docs/SEMANTICS.md §16): what Store::search takes, and what the REST surface reads the
/// parameters of `GET /v1/search/query` into. Plain data.
struct SearchRequest {
  /// The query (docs/SEMANTICS.md §16 "Query"): at most 1,024 bytes and 32 words. Empty or `*`:
  /// every entity the filters allow.
  std::string q{};
  /// An index name or alias (`mlmodel_search_index` or `mlmodel`, `dataAsset`, `all`, ...).
  std::string index = "all";
  /// Hits to skip (after `search_after`, when given). `from + size` is at most 10,000; beyond,
  /// bad_request. Default: 0.
  std::int64_t from = 0;
  /// Hits per page, at least 0. Default: 10.
  std::int64_t size = 10;
  /// Soft-deleted entities instead of live ones.
  bool deleted = false;
  /// The `query_filter` (parse_search_filter reads one from JSON). Default: none.
  std::optional<SearchFilter> filter{};
  /// `_score`, `name.keyword`, `displayName.keyword`, `updatedAt` or `votes.upVotes`; empty:
  /// `_score` when `q` has words, else `name.keyword`.
  std::string sort_field{};
  /// `asc` or `desc`; empty: `desc` for `_score`, else `asc`.
  std::string sort_order{};
  /// The `sort` of the last hit of the previous page: the page continues after it.
  std::optional<std::vector<SortValue>> search_after{};
  /// The total counted exactly past 10,000.
  bool track_total_hits = false;
  /// Members of each hit's `_source` to keep (all when empty).
  std::vector<std::string> include_source_fields{};
};

/// One hit: the entity as a list answers it with owners, tags and domains.
template <class T>
struct SearchHitOf {
  T entity;             ///< `_source`: the entity, with its owners, tags and domains
  std::string index{};  ///< `_index`: the index name of its kind
  double score = 0;     ///< `_score`: its BM25F score (docs/SEMANTICS.md §16)
  /// `highlight`: matched fields (`name`, `displayName`, `description`, `synonyms`, `tags`), each
  /// text with its matched words wrapped in `<span class="text-highlighter">` and `</span>`.
  std::vector<std::pair<std::string, std::vector<std::string>>> highlight{};
  /// `sort`: its sort values; as SearchRequest::search_after, the next page starts after it.
  std::vector<SortValue> sort{};
};

/// One bucket of a facet: `{key, doc_count}`.
struct FacetBucket {
  std::string key{};           ///< the value (an owner: its displayName, else its name)
  std::int64_t doc_count = 0;  ///< matching entities that have it
  /// Equal when key and count are.
  friend bool operator==(const FacetBucket&, const FacetBucket&) = default;
};

/// One facet: its field (`entityType`, `owners.displayName`, `tags.tagFQN`,
/// `domains.fullyQualifiedName`, `service.name`, `glossary.name`, `status`) and buckets.
struct Facet {
  std::string field{};                 ///< the facet field
  std::vector<FacetBucket> buckets{};  ///< largest count first, then by key; at most 50
};

/// The answer to a query (docs/SEMANTICS.md §16): a page of hits, the total, and the facets. `T` is
/// the entity struct of one kind, or AnyEntity (SearchResult).
template <class T>
struct SearchPage {
  std::vector<SearchHitOf<T>> hits{};  ///< the page, in the order asked for
  /// Matches the caller may view; exact when `total_exact`, else at least this many.
  std::int64_t total = 0;
  bool total_exact = true;            ///< false: `total` stopped at 10,000 (`relation` "gte")
  std::optional<double> max_score{};  ///< the largest score; absent when none is computed
  std::vector<Facet> aggregations{};  ///< the facets over the matches, one per facet field
};

/// A hit of any kind.
using SearchHit = SearchHitOf<AnyEntity>;
/// What Store::search answers: hits of any kind.
using SearchResult = SearchPage<AnyEntity>;

/// A typeahead answer.
struct Suggestion {
  std::string text{};   ///< `text`: the entity's name
  std::string index{};  ///< `_index`: the index name of its kind
  /// `_score`: 3 when its name or displayName is `q` (case aside), 2 when one starts with `q`,
  /// 1 when a word of one does.
  double score = 0;
  AnyEntity entity{};  ///< `_source`: the entity, with its owners, tags and domains
};

/// The buckets of one facet over a query's matches (docs/SEMANTICS.md §16 "Aggregate"): what
/// Store::aggregate takes. Plain data.
struct AggregateRequest {
  /// An index name or alias, as SearchRequest::index. Default: `all`.
  std::string index = "all";
  /// One of the facet fields.
  std::string field{};
  /// Keeps the keys that contain it, case aside.
  std::string value{};
  /// The query, as SearchRequest::q. Default: empty (every entity).
  std::string q{};
  /// Buckets at most, 0 to 50. Default: 10.
  std::int64_t size = 10;
  /// Soft-deleted entities instead of live ones.
  bool deleted = false;
};

/// The search index name of `kind` (`mlmodel_search_index`, ...); empty for policies.
CATALOG_DECL std::string_view search_index_name(Kind kind) noexcept;

/// Reads an Elasticsearch-style `query_filter` (`{"query": {"bool": {...}}}`, docs/SEMANTICS.md
/// §16 "Filters"). Errors: bad_request (invalid_parameter) naming the unsupported part.
CATALOG_DECL Result<SearchFilter> parse_search_filter(std::string_view json_text);

}  // namespace catalog

#endif  // CATALOG_SEARCH_HPP
