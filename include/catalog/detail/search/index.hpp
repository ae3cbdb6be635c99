#ifndef CATALOG_DETAIL_SEARCH_INDEX_HPP
#define CATALOG_DETAIL_SEARCH_INDEX_HPP

// The search index (docs/SEARCH_INDEX.md): each searched entity's search document, what it
// writes under the X, G, Y, K, J and F keys (keys.hpp), and the one function every write
// transaction calls before it commits to bring the index up to date with what it changed.
//
// A search document is derived from the entity's record and edges only; so is everything the
// index holds. Building the document again and comparing is how the index is kept (only the
// keys whose bytes differ are written) and how verify checks it.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/search/analyzer.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::engine::search_index {

/// The searched fields (docs/SEMANTICS.md §16 "Fields and weights"), stored as one byte.
enum class Field : std::uint8_t {
  name,
  display_name,
  fqn,
  description,
  tags,
  synonyms,
  glossary,
  columns,              // ML model feature names, search index field names (nested too)
  column_descriptions,  // their descriptions
  email,
  owner,    // an owner's name and displayName: only `owner:` queries search it
  service,  // only `service:`
  domain,   // only `domain:`
};
inline constexpr std::size_t field_count = 13;
/// BM25F weights; 0 for fields only a field-scoped query searches.
inline constexpr std::array<double, field_count> field_weight{10, 10, 5, 2, 5, 5, 5,
                                                              8,  1,  5, 0, 0, 0};
/// Fields whose words are also indexed stemmed (under stem_marker).
inline constexpr bool stemmed(Field f) {
  return f == Field::description || f == Field::display_name;
}
/// The byte before a stemmed word in X keys: no analysed word starts with it.
inline constexpr char stem_marker = '\x01';
/// The G key of the count of all documents (beside the fields' own).
inline constexpr unsigned all_documents = 0xff;

/// Whether entities of `kind` are searched (docs/SEMANTICS.md §16: policies are not).
inline constexpr bool searched(Kind kind) { return kind != Kind::policy; }

/// One posting of a document: a word (or stem_marker + its stem, where the stem differs from
/// the word), a field, and its count there.
struct Term {
  std::string word;
  Field field = Field::name;
  std::uint32_t count = 0;
  /// The word_hash of each word that follows this one in a text of the field (a whole word
  /// after a whole word), ascending, each once: a phrase of two words is found from the
  /// postings alone (docs/SEARCH_INDEX.md, "Phrases").
  std::vector<std::uint32_t> next;
  friend bool operator==(const Term&, const Term&) = default;
};

/// The hash of an analysed word that Term::next holds: 32-bit FNV-1a of its bytes, the same on
/// every platform (it is stored).
constexpr std::uint32_t word_hash(std::string_view word) {
  std::uint32_t h = 2166136261u;
  for (char c : word) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

struct Owner {
  Uuid id{};
  std::string name;
  std::string display_name;
  friend bool operator==(const Owner&, const Owner&) = default;
};

/// What the index keeps of an entity: what filters, facets, sorts and ranking read without the
/// entity (its Y record), and its terms (its postings, X; the next write finds the terms it
/// replaces by analysing the record it replaces, with what its Y record holds of other entities).
struct Document {
  std::uint32_t analyzer = 0;
  Kind kind = Kind::user;
  Uuid id{};
  bool deleted = false;
  std::string name, display_name, fqn;
  std::int64_t updated_at = 0;
  std::int64_t up_votes = 0;
  std::string status;    // glossary terms
  std::string service;   // ML models, search indexes: the service's name
  std::string glossary;  // glossary terms: the glossary's name
  std::vector<Owner> owners;
  std::vector<std::string> tags;
  std::vector<std::pair<Uuid, std::string>> domains;  // id, FQN
  std::array<std::uint32_t, field_count> lengths{};   // words per field
  std::vector<Term> terms;                            // sorted by word, then field
  friend bool operator==(const Document&, const Document&) = default;
};

/// The texts of a document's fields, as read from the entity: phrases and highlights read them.
struct FieldText {
  Field field;
  std::string text;
  friend bool operator==(const FieldText&, const FieldText&) = default;
};

/// The entity's search document and field texts, or nullopt when it has none (a kind not
/// searched). Without `analyse`, the texts and what the document holds beside its terms and
/// lengths (which stay empty): what phrases and highlights read. Without `related`, nothing
/// read from other entities (owners, domains, votes, service, glossary): the own fields' texts
/// alone. Errors: storage.
Result<std::optional<Document>> build(Tx& tx, const Record& r, std::vector<FieldText>* texts,
                                      bool analyse = true, bool related = true);

/// What a document takes from other entities (owners, domains, votes, the service or glossary):
/// read in the transaction, so that the rest of a document is made from values alone.
struct Related {
  std::vector<Owner> owners;
  std::vector<std::pair<Uuid, std::string>> domains;  // id, FQN
  std::int64_t up_votes = 0;
  std::string service;   // ML models, search indexes
  std::string glossary;  // glossary terms
};
/// What other entities give a record's document. Errors: storage.
Result<Related> read_related(Tx& tx, const Record& r);
/// Texts analysed, with their words: what the documents of an entity before and after a write
/// share, so that a text both hold is analysed once.
using Analysed = std::map<std::string, std::vector<search::Word>, std::less<>>;
/// The document of a searched record, from its values alone, taking what `related` holds (null:
/// nothing of other entities). With `analysed`, a text found there is not analysed again, and one
/// analysed is added to it (its words must outlive the document's making only). Touches no
/// transaction: a reindex makes documents on another thread. build() is read_related, then this.
Document make_document(const Record& r, Related* related, std::vector<FieldText>* texts,
                       bool analyse, Analysed* analysed = nullptr);
/// What a document holds of other entities (its owners, domains, votes, service, glossary): the
/// Related it was made with.
Related related_of(const Document& d);

/// The version of the index's layout and analysis, recorded under `M search_analyzer`: a store
/// indexed by another is indexed again when it opens. 1: analyzer 1, a document's terms in its
/// Y record; 2: analyzer 1, the terms under T; 3: as 2, with the facet keys (F); 4: as 3, each
/// posting with the length class of its fields; 5: as 4, each posting and term with the words
/// that follow it (Term::next); 6: as 5, without T (a write analyses the record it replaces);
/// 7: as 6, the words that follow a word's parts too (a phrase reads customerOrders as
/// customer orders).
inline constexpr std::uint32_t index_version = 7;
// A new analyzer makes other words: it needs a new index_version too, so that stores are
// indexed again with it.
static_assert(search::analyzer_version == 1, "a new analyzer_version needs a new index_version");

/// The bytes of a document's Y record: everything but its terms.
std::string encode(const Document& d);
/// How much of a Y record decode_document reads.
enum class Part {
  /// All of it.
  all,
  /// What ranks a candidate (RankingView's part), copied: the facet values (owners, tags,
  /// domains, status, service, glossary) stay empty, their bytes checked but not copied.
  ranking,
};
/// A document from its Y record; its terms stay empty. Errors: storage (bytes that are not a
/// search document).
Result<Document> decode_document(std::string_view bytes, Part part = Part::all);

/// What ranks a candidate, read from its Y record as views into the record's bytes (valid
/// while they are): what a query keeps of each of thousands of candidates without copying their
/// texts. decode_document's Part::ranking, without the copies.
struct RankingView {
  std::uint32_t analyzer = 0;
  Kind kind = Kind::user;
  Uuid id{};
  bool deleted = false;
  std::string_view name, display_name, fqn;
  std::int64_t updated_at = 0;
  std::int64_t up_votes = 0;
  std::string_view facets;                           // the facet values' bytes (decode_facets)
  std::array<std::uint32_t, field_count> lengths{};  // words per field
};
/// Reads a Y record's ranking part into `out`, checking the facet values' bytes without reading
/// them. False for bytes that are not a search document.
bool decode_ranking(std::string_view bytes, RankingView& out);

/// A document's facet values as views into its bytes.
struct FacetView {
  struct Owner {
    Uuid id{};
    std::string_view name, display_name;
  };
  std::string_view status, service, glossary;
  std::vector<Owner> owners;
  std::vector<std::string_view> tags;
  std::vector<std::pair<Uuid, std::string_view>> domains;  // id, FQN
};
/// Reads the facet bytes decode_document pointed at into `out`, reusing its vectors' room: what
/// a query's filters and facets read of thousands of documents, without a copy of each value.
/// False for bytes decode_document did not check.
bool decode_facets(std::string_view bytes, FacetView& out);
/// The terms of a document grouped by word: each span is one word's terms, by field (a
/// document's terms are sorted by word, then field, each pair once).
std::vector<std::span<const Term>> postings(const Document& d);
/// A field's length in words as one byte: exact below 16, then the power of two below it and
/// three bits more (a class spans at most an eighth of its least length). A posting holds it
/// for each of its fields, so that a query bounds a document's score from its postings alone,
/// before it reads the document (docs/SEARCH_INDEX.md, "The best 10,000").
constexpr std::uint8_t length_class(std::uint32_t n) {
  if (n < 16) return static_cast<std::uint8_t>(n);
  unsigned e = 4;
  while (e < 31 && (n >> (e + 1)) != 0) ++e;
  return static_cast<std::uint8_t>(16 + (e - 4) * 8 + ((n >> (e - 3)) & 7));
}
/// The least length of a class.
constexpr std::uint32_t length_floor(std::uint8_t c) {
  if (c < 16) return c;
  const unsigned e = (c - 16u) / 8 + 4, m = (c - 16u) % 8;
  return (8u + m) << (e - 3);
}
static_assert(length_floor(length_class(16)) == 16 && length_floor(length_class(31)) == 30 &&
              length_class(0xffffffffu) == 239 && length_floor(239) <= 0xffffffffu);
/// One field of a posting: the word's count there, and the length class of the field.
struct PostingField {
  Field field = Field::name;
  std::uint32_t count = 0;
  std::uint8_t length_class = 0;
};
/// A posting value: the fields of one word's terms, each with its count, the length class
/// of the field in `lengths` (the document's) and the words that follow it there (Term::next).
std::string encode_posting(std::span<const Term> terms,
                           const std::array<std::uint32_t, field_count>& lengths);
/// The words that follow a posting's word, field by field: those of field i of decode_posting's
/// `out` are hashes[ends[i - 1]..ends[i]) (from 0 for the first).
struct PostingNext {
  std::vector<std::uint32_t> hashes;
  std::vector<std::uint32_t> ends;
};
/// Reads a posting's fields into `out`; with `next`, appends their following words to it
/// (without, they are skipped). False for bytes encode_posting does not make.
bool decode_posting(std::string_view bytes, std::vector<PostingField>& out,
                    PostingNext* next = nullptr);

/// The words a typeahead finds a document by: its folded name and displayName (K keys), and
/// the words of both (J keys).
std::vector<std::string> name_entries(const Document& d);
std::vector<std::string> name_words(const Document& d);

/// The facet values a filter finds documents by through F keys (docs/SEARCH_INDEX.md,
/// "Filters"), named by the byte after F: every field a query_filter names but entityType and
/// deleted, which each candidate's Y record holds.
enum class FacetKey : char {
  owner_id = 'a',
  owner_name = 'b',
  owner_display_name = 'c',  // an owner's displayName, else its name (the facet's key)
  tag = 'd',
  domain_id = 'e',
  domain_fqn = 'f',
  service = 'g',
  glossary = 'h',
  status = 'i',
};
/// The F entry of one value of a field: the field's byte, then the value with each NUL made a
/// space (a key's text holds none), cut as keys cut texts. Distinct values may share an entry
/// (cut alike), never one value two entries: a filter reads the entries of its values, then
/// tests each document found.
std::string facet_entry(FacetKey field, std::string_view value);
/// The F entries of a document: of its owners, tags, domains, service, glossary and status;
/// sorted, each once.
std::vector<std::string> facet_entries(const Document& d);

/// The tags of the index's key families (keys.hpp): what a reindex clears. T held each
/// document's terms up to index_version 5.
inline constexpr std::string_view families = "FGJKTXY";

/// Brings the index up to date for the entities `tx` wrote (Tx::touched), in that transaction.
/// Errors: storage.
Result<void> update(Tx& tx);

/// Metadata (M) keys: the index_version the index was built with, and the progress of a
/// reindex under way (empty while the old index is cleared, then reindex_progress: the last id
/// indexed and the index_version indexing).
inline constexpr std::string_view analyzer_meta = "search_analyzer";
inline constexpr std::string_view reindex_meta = "search_reindex";
/// The progress of a reindex after `last`: the id's 16 bytes, then index_version (8 bytes). A
/// library of another version, finding it, clears the index and starts again rather than
/// resuming with documents of its own layout after ones of another.
std::string reindex_progress(const Uuid& last);
/// The last id of a reindex under way by this version; nullopt for any other bytes.
std::optional<Uuid> decode_reindex_progress(std::string_view bytes);

/// The entities a reindex indexes in one transaction, unless told otherwise (the one when a
/// store opens, and Store::reindex's default): reindex_batch where reads cost no round trip
/// (memory, LMDB), reindex_batch_round_trips where they do (PostgreSQL, whose reindex indexes
/// about 800 entities a second). A larger transaction copies each index page it changes once
/// for more entities, and holds the write lock longer: the size weighs the reindex's speed
/// against how long other writers wait, about a second and a half on LMDB and five on
/// PostgreSQL on the benchmark's machine (BENCHMARKS.md, 9m and 9p).
inline constexpr std::size_t reindex_batch = 16000;
inline constexpr std::size_t reindex_batch_round_trips = 4000;
/// The parts a reindex transaction is made in: while this thread writes one part's keys, another
/// makes the next part's documents (BENCHMARKS.md, 9p).
/// A part holds at most reindex_part_limit entities and ends once its records reach
/// reindex_part_bytes, so that a large batch (rebuild's) or large entities hold bounded memory.
inline constexpr std::size_t reindex_parts = 8;
inline constexpr std::size_t reindex_part_limit = 2000;
inline constexpr std::size_t reindex_part_bytes = std::size_t{2} << 20;
/// The entities whose reads a reindex asks for at once where reads cost round trips: three keys
/// and three edge ranges each, within what a PostgreSQL transaction keeps of what it fetched
/// (1,024 ranges, 4,096 keys).
inline constexpr std::size_t reindex_prefetch = 250;

/// Whether the index was built by this analyzer and no reindex is under way. Errors: storage.
Result<bool> current(Tx& tx);
/// One step of a reindex: erases up to `batch` keys of the index's families; false when none
/// were left. Errors: storage.
Result<bool> clear_step(Tx& tx, std::size_t batch);
/// One step of a reindex: indexes up to `batch` entities after `after` (from the first when
/// nullopt); the last one indexed, nullopt when none were left. Errors: storage.
Result<std::optional<Uuid>> index_step(Tx& tx, const std::optional<Uuid>& after, std::size_t batch,
                                       std::uint64_t& indexed);
/// Rebuilds the whole index in `tx` (import: one transaction holds everything). Errors: storage.
Result<std::uint64_t> rebuild(Tx& tx);

/// The G sums of a field: documents with it and their total length.
struct FieldStats {
  std::int64_t documents = 0;
  std::int64_t length = 0;
};
/// Every field's statistics, and all_documents' (index field_count). Errors: storage.
Result<std::array<FieldStats, field_count + 1>> field_stats(Tx& tx);

}  // namespace catalog::engine::search_index

#endif  // CATALOG_DETAIL_SEARCH_INDEX_HPP
