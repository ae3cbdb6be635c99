#ifndef CATALOG_DETAIL_SEARCH_QUERY_PARTS_HPP
#define CATALOG_DETAIL_SEARCH_QUERY_PARTS_HPP

// The parts of query evaluation (docs/SEMANTICS.md §16, docs/SEARCH_INDEX.md) and what they hand
// each other, each in its own file under impl/search/: the query read into clauses
// (query_parse.ipp), the postings of its words and the candidates they name (candidates.ipp),
// filters (filter.ipp), the order of matches (order.ipp), facets (facets.ipp) and highlights
// (highlight.ipp). query.ipp evaluates a query with them; suggest.ipp answers typeahead.

#include <catalog/detail/search/index.hpp>
#include <catalog/detail/search/query.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog::engine::search_query {

namespace si = search_index;
using si::Field;

/// A set of fields, one bit each.
using FieldMask = std::uint32_t;
/// The bit of field `f`.
constexpr FieldMask bit(Field f) { return FieldMask{1} << static_cast<unsigned>(f); }
/// The fields a word is looked for in when the query names none: those with a weight.
inline constexpr FieldMask weighted_fields = [] {
  FieldMask m = 0;
  for (std::size_t f = 0; f < si::field_count; ++f)
    if (si::field_weight[f] > 0) m |= FieldMask{1} << f;
  return m;
}();

// ---- postings ----

struct PostingList;

/// The fields of one posting: counts and length classes.
struct FieldCounts {
  const si::PostingField* begin = nullptr;
  const si::PostingField* end = nullptr;
  const PostingList* list = nullptr;
  std::uint32_t in(Field f) const {
    for (auto* p = begin; p != end; ++p)
      if (p->field == f) return p->count;
    return 0;
  }
  /// Whether the word is followed by the word of `hash` in field `f` (read with next).
  bool followed(Field f, std::uint32_t hash) const;
  explicit operator bool() const { return begin != end; }
};

/// The postings of one word: ids in ascending order (as the keys sort) with their fields.
struct PostingList {
  std::vector<Uuid> ids;
  std::vector<std::uint32_t> starts;  // per id, into counts; one more at the end
  std::vector<si::PostingField> counts;
  /// The words following the word in each of counts' fields; read only for a phrase's words.
  si::PostingNext next;
  bool with_next = false;
  std::int64_t df() const { return static_cast<std::int64_t>(ids.size()); }
  /// Adds the posting of `id` (after every id before it), with its fields' counts.
  void add(const Uuid& id, const std::vector<si::PostingField>& fields) {
    ids.push_back(id);
    starts.push_back(static_cast<std::uint32_t>(counts.size()));
    counts.insert(counts.end(), fields.begin(), fields.end());
  }
  /// Ends the list: starts gets its last entry.
  void close() { starts.push_back(static_cast<std::uint32_t>(counts.size())); }
  /// The counts of `id`, empty when the word is not in it. Evaluation asks for ids in
  /// ascending order, so the search starts where the last one ended, in steps that double
  /// (any order is answered right, only slower).
  FieldCounts find(const Uuid& id) const {
    const std::size_t n = ids.size();
    std::size_t lo = 0, hi = n;
    // Every id before hint_ is below the last one asked for: when below this one too, the
    // answer is at hint_ or after.
    if (hint_ == 0 || ids[hint_ - 1] < id) {
      lo = hint_;
      std::size_t step = 1;
      while (lo + step < n && ids[lo + step] < id) {
        lo += step;
        step *= 2;
      }
      hi = std::min(n, lo + step + 1);
    }
    const auto it = std::lower_bound(ids.begin() + static_cast<std::ptrdiff_t>(lo),
                                     ids.begin() + static_cast<std::ptrdiff_t>(hi), id);
    const auto i = static_cast<std::size_t>(it - ids.begin());
    hint_ = i;
    if (i == n || ids[i] != id) return {};
    return counts_at(i);
  }
  /// The counts of the i-th id.
  FieldCounts counts_at(std::size_t i) const {
    return {counts.data() + starts[i], counts.data() + starts[i + 1], this};
  }

 private:
  mutable std::size_t hint_ = 0;
};

/// A posting list read beside ids that ascend: the counts of each, found by stepping on from
/// where the last one was.
struct ListWalk {
  const PostingList* list = nullptr;
  std::size_t at = 0;
  FieldCounts at_id(const Uuid& id) {
    if (!list) return {};
    const auto n = list->ids.size();
    while (at < n && list->ids[at] < id) ++at;
    if (at == n || list->ids[at] != id) return {};
    return list->counts_at(at);
  }
};

class Postings {
 public:
  explicit Postings(Tx& tx) : tx_(tx) {}
  /// The postings of `word`, read once per query (again when the words that follow it are
  /// asked for and were not read). With `most`, nullptr when the word has more postings than
  /// that (they are not kept). Errors: storage.
  Result<const PostingList*> get(const std::string& word, bool next = false, std::size_t most = 0);
  /// The postings of `word` in the documents of `ids` (ascending, each once) alone, read by
  /// key: a list whose find() answers those ids and no others. Errors: storage.
  Result<const PostingList*> get_in(const std::string& word, const std::vector<Uuid>& ids);

 private:
  Tx& tx_;
  std::map<std::string, PostingList, std::less<>> lists_;
  std::deque<PostingList> partial_;  // get_in's: a node stays where it is as more are added
};

/// A query word with its postings read: the whole word's, its parts', and the stems' of both.
struct PreparedWord {
  const PostingList* whole = nullptr;
  std::vector<const PostingList*> parts;
  // Stemmed matches: the postings of stem_marker + stem and of the stem as a word.
  const PostingList* whole_stem = nullptr;
  const PostingList* whole_stem_word = nullptr;
  std::vector<std::pair<const PostingList*, const PostingList*>> part_stems;
  std::int64_t df = 0;
  double idf = 0;  // of df, set once the statistics are read
};

enum class Occur { should, must, must_not };
enum class ClauseType { word, phrase, prefix };

/// A query word: its whole analysed form (empty when what was typed held several words) and
/// its parts; it matches a field holding the whole, or all of the parts.
struct QueryWord {
  std::string whole;
  std::vector<std::string> parts;
};

struct Clause {
  Occur occur = Occur::should;
  ClauseType type = ClauseType::word;
  FieldMask fields = weighted_fields;
  bool scoped = false;
  /// word: the word; prefix: in `parts`, the words typed before the prefix in the same typed
  /// word (`zzqq-aiohttp*`), which must stand beside an expansion.
  QueryWord word;
  std::vector<std::string> phrase;           // phrase: consecutive words
  std::vector<std::uint32_t> phrase_hashes;  // phrase: the word_hash of each
  /// phrase: where a typed word splits, the phrase with it read as its parts
  /// (search::phrase_as_parts), a phrase clause of its own. The clause matches where either
  /// reading stands, and scores as the better.
  std::vector<Clause> as_parts;
  std::vector<std::string> expanded;         // prefix: the words it stands for
  std::string prefix;
  /// What evaluation reads: the word (word), each phrase word, each expansion (prefix).
  std::vector<PreparedWord> prepared;
  /// prefix: (id, i) for each document in the postings prepared[i] reads, by id. A document
  /// scores only for the expansions that hold it, found here instead of in each of them.
  std::vector<std::pair<Uuid, std::uint32_t>> holders;
};

struct Query {
  std::vector<Clause> clauses;
  bool match_all = false;  // `*`, an empty query, or one of exclusions only
  std::string folded;  // the whole query folded, for exact name matches
};

/// `q` of a search, typeahead or aggregate is text: at most max_query_bytes of UTF-8.
/// Errors: invalid_parameter.
Result<void> check_query_text(std::string_view q);

/// The clauses of query text `q` (query_parse.ipp). Never fails for its syntax, only for its
/// size or bytes that are not UTF-8 (docs/SEMANTICS.md §16 "Query `q`"), and for more than
/// max_query_words words. Errors: invalid_parameter.
Result<Query> parse(std::string_view q);

/// The words of a clause whose postings evaluation reads (query_parse.ipp).
std::vector<std::string> atoms_of(const Clause& c);

/// A prefix clause's words: the words that start with it held by the most documents
/// (candidates.ipp). Errors: storage.
Result<void> expand(Tx& tx, Clause& c);

/// Reads the postings of what clause `c` evaluates into c.prepared (candidates.ipp). Errors:
/// storage.
Result<void> prepare(Postings& postings, Clause& c);

/// The documents a query's words can match, ascending (candidates.ipp): those of every required
/// clause, when it has any, else those of any clause that is not an exclusion.
std::vector<Uuid> candidates_of(const Query& q);

/// The fields of phrase clause `c` where document `id` holds each of its words followed by the
/// next (candidates.ipp).
FieldMask fields_with_pairs(const Clause& c, const Uuid& id);

/// Those of `fields` where each inner word of phrase clause `c` occurs once in document `id`
/// (candidates.ipp).
FieldMask fields_with_single_inner_words(const Clause& c, const Uuid& id, FieldMask fields);

// ---- filters (filter.ipp) ----

/// The fields filters and facets read (docs/SEMANTICS.md §16). Facets resolve their names once
/// before visiting the documents; a filter's term resolves its name at each document it tests.
enum class ValueField {
  entity_type,
  owners_id,
  owners_name,
  owners_display_name,
  tags,
  domains_id,
  domains_fqn,
  service,
  glossary,
  status,
  deleted,
};
/// The fields every search answers facets of (docs/SEMANTICS.md §16 "Facets"), and the only ones
/// aggregate takes.
inline constexpr std::string_view facet_fields[] = {
    "entityType",   "owners.displayName", "tags.tagFQN", "domains.fullyQualifiedName",
    "service.name", "glossary.name",      "status"};

/// The value field of a filter or facet field's name; nullopt for one that is neither.
std::optional<ValueField> value_field(std::string_view name);

/// Calls `f` with each value of a filter or facet field in a document, read from its ranking
/// part `d` and its facet values `v` (a view, valid during the call).
template <class F>
void for_each_value(const si::RankingView& d, const si::FacetView& v, ValueField field, F&& f) {
  switch (field) {
  case ValueField::entity_type: f(type_name(d.kind)); break;
  case ValueField::owners_id:
    for (const auto& o : v.owners) f(std::string_view(to_string(o.id)));
    break;
  case ValueField::owners_name:
    for (const auto& o : v.owners) f(o.name);
    break;
  case ValueField::owners_display_name:
    // An owner's key is its displayName, else its name (docs/SEMANTICS.md §16 "Facets").
    for (const auto& o : v.owners) f(o.display_name.empty() ? o.name : o.display_name);
    break;
  case ValueField::tags:
    for (const auto& t : v.tags) f(t);
    break;
  case ValueField::domains_id:
    for (const auto& dm : v.domains) f(std::string_view(to_string(dm.first)));
    break;
  case ValueField::domains_fqn:
    for (const auto& dm : v.domains) f(dm.second);
    break;
  case ValueField::service:
    if (!v.service.empty()) f(v.service);
    break;
  case ValueField::glossary:
    if (!v.glossary.empty()) f(v.glossary);
    break;
  case ValueField::status:
    if (!v.status.empty()) f(v.status);
    break;
  case ValueField::deleted: f(std::string_view(d.deleted ? "true" : "false")); break;
  }
}

/// Ids in ascending order, or nullopt for "not narrowed".
using IdSet = std::optional<std::vector<Uuid>>;

/// The ids that can pass `f` (docs/SEARCH_INDEX.md, "Filters"), read from the F keys of its
/// terms: every id that passes is in it, and each one in it is still tested on its Y record.
/// nullopt where `f` narrows nothing by facet keys (a term on entityType or deleted, only
/// exclusions) or where that would read more than `limit` keys. Errors: storage.
Result<IdSet> filter_ids(Tx& tx, const SearchFilter& f, std::size_t limit);

/// Whether the document of ranking part `d` and facet values `v` passes filter `f`.
bool matches(const SearchFilter& f, const si::RankingView& d, const si::FacetView& v);

/// Checks a filter's fields and depth. Errors: bad_request.
Result<void> check_filter(const SearchFilter& f, std::size_t depth);

// ---- the order of matches (order.ipp) ----

/// A document a query matched: its ranking part, whether the query is its exact name, the
/// clauses it matched and its score.
struct Match {
  const si::RankingView* doc = nullptr;
  bool exact = false;
  std::int64_t matched = 0;
  double score = 0;
};

/// What a search is sorted by (`sort_field`), and in which direction (`sort_order`).
enum class SortField { score, name, display_name, updated_at, up_votes };
/// \copydoc SortField
struct Order {
  SortField field = SortField::score;
  bool descending = true;
};

/// The order a request asks for (`has_words`: the query has words to score). Errors:
/// bad_request.
Result<Order> order_of(const SearchRequest& r, bool has_words);

/// A match's sort values (a hit's `sort`) in an order by `f`.
std::vector<SortValue> sort_values(const Match& m, SortField f);

/// Whether sort values `a` come before `b` in the order: the sort field's values in its
/// direction, then name and id ascending.
bool before(const std::vector<SortValue>& a, const std::vector<SortValue>& b, const Order& o);

/// Puts the best `n` matches in the order first (as a set, in no particular order).
void select_best(std::vector<Match>& matches, std::size_t n, const Order& o);

/// Orders the first `n` of `[first, last)` as the order ranks them: the best `n` of the range,
/// in order.
void order_first(std::vector<Match>::iterator first, std::vector<Match>::iterator last,
                 std::size_t n, const Order& o);

// ---- what an answer shows of its matches ----

/// The facets of matches `best` over `fields`: the `size` values held by most of them, each
/// value once per match; with `contains`, only values that hold it (folded) (facets.ipp).
/// Errors: bad_request (a field that is not a facet field), storage.
Result<std::vector<Facet>> count_facets(std::span<const Match> best,
                                        std::span<const std::string_view> fields,
                                        std::string_view contains, std::size_t size);

/// What one clause that is not excluded lights in a hit (docs/SEMANTICS.md §16 "Hits"): its
/// analysed words and stems, in the fields it searches; a phrase's only in a text the phrase
/// stands in.
struct Light {
  FieldMask fields = 0;
  std::vector<std::string> words;   // atoms_of the clause
  std::vector<std::string> phrase;  // a phrase clause's words; empty for the others
};

/// The highlights of a hit whose own fields' texts are `texts`: per field, its texts with each
/// run holding a word some of `lights` lights there wrapped (highlight.ipp).
std::vector<std::pair<std::string, std::vector<std::string>>>
highlights(const std::vector<si::FieldText>& texts, const std::vector<Light>& lights);

}  // namespace catalog::engine::search_query

#endif  // CATALOG_DETAIL_SEARCH_QUERY_PARTS_HPP
