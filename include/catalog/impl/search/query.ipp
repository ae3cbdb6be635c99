#ifndef CATALOG_IMPL_SEARCH_QUERY_IPP
#define CATALOG_IMPL_SEARCH_QUERY_IPP

// Query evaluation (docs/SEMANTICS.md §16): the query read into clauses, candidates from the
// postings of its words, filters and permissions on each candidate's search document, BM25F,
// the ranking, facets and the page with its highlights.

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/search/index.hpp>
#include <catalog/detail/search/query.hpp>

#include <catalog/detail/engine/references.hpp>
#include <catalog/detail/engine/wire.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>

namespace catalog::engine::search_query {

namespace si = search_index;
using si::Field;

namespace {

constexpr double k1 = 1.2;
constexpr double b = 0.75;
/// A stemmed-only match counts this much of an unstemmed one.
constexpr double stemmed_share = 0.5;
/// Candidates, in windows (max_window), past which a query ranked by score on a backend whose
/// reads cost no round trip reads only the documents its bounds do not rule out (take_best).
constexpr std::size_t bounded_from = 4;
/// Prefix queries expand to the most frequent words with the prefix, at most this many.
constexpr std::size_t max_expansions = 64;
/// Postings a prefix expansion reads at most.
constexpr std::size_t max_expansion_scan = 100000;

using FieldMask = std::uint32_t;
constexpr FieldMask bit(Field f) { return FieldMask{1} << static_cast<unsigned>(f); }
constexpr FieldMask weighted_fields = [] {
  FieldMask m = 0;
  for (std::size_t f = 0; f < si::field_count; ++f)
    if (si::field_weight[f] > 0) m |= FieldMask{1} << f;
  return m;
}();

struct ScopedField {
  std::string_view name;
  Field field;
};
constexpr ScopedField scoped_fields[] = {
    {"name", Field::name},
    {"displayName", Field::display_name},
    {"description", Field::description},
    {"fullyQualifiedName", Field::fqn},
    {"tags", Field::tags},
    {"synonyms", Field::synonyms},
    {"owner", Field::owner},
    {"service", Field::service},
    {"glossary", Field::glossary},
    {"domain", Field::domain},
};

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

bool FieldCounts::followed(Field f, std::uint32_t hash) const {
  if (!list || !list->with_next) return false;
  for (auto* p = begin; p != end; ++p) {
    if (p->field != f) continue;
    const auto k = static_cast<std::size_t>(p - list->counts.data());
    const auto* first = list->next.hashes.data() + (k == 0 ? 0 : list->next.ends[k - 1]);
    const auto* last = list->next.hashes.data() + list->next.ends[k];
    return std::binary_search(first, last, hash);
  }
  return false;
}

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
  Result<const PostingList*> get(const std::string& word, bool next = false,
                                 std::size_t most = 0) {
    auto it = lists_.find(word);
    if (it != lists_.end() && (!next || it->second.with_next))
      return most > 0 && it->second.ids.size() > most ? nullptr : &it->second;
    PostingList list;
    list.with_next = next;
    auto cursor = tx_.raw().scan(storage::prefix_range(keys::posting_prefix(word)),
                                 storage::Direction::forward);
    if (!cursor) return cursor.error();
    std::vector<si::PostingField> counts;
    for (auto& c = *cursor; c->valid();) {
      if (most > 0 && list.ids.size() == most) return nullptr;
      auto k = keys::decode_text_id('X', c->key());
      if (!k || !si::decode_posting(c->value(), counts, next ? &list.next : nullptr))
        return fail(Errc::storage, "corrupt search posting " + keys::printable(c->key()));
      list.add(k->id, counts);
      if (auto n = c->next(); !n) return n.error();
    }
    list.close();
    // Read again with next: the same node, so what was handed out before stays valid.
    if (it != lists_.end()) {
      it->second = std::move(list);
      return &it->second;
    }
    return &lists_.emplace(word, std::move(list)).first->second;
  }

  /// The postings of `word` in the documents of `ids` (ascending, each once) alone, read by
  /// key: a list whose find() answers those ids and no others. Errors: storage.
  Result<const PostingList*> get_in(const std::string& word, const std::vector<Uuid>& ids) {
    PostingList& list = partial_.emplace_back();
    std::vector<std::string> keys;
    std::vector<si::PostingField> counts;
    std::optional<Error> bad;
    for (std::size_t at = 0; at < ids.size(); at += Tx::read_batch) {
      const auto count = std::min(Tx::read_batch, ids.size() - at);
      keys.clear();
      for (std::size_t i = 0; i < count; ++i) keys.push_back(keys::posting(word, ids[at + i]));
      std::vector<std::string_view> views(keys.begin(), keys.end());
      auto read =
          tx_.raw().get_each(views, [&](std::size_t i, std::optional<std::string_view> v) {
            if (!v || bad) return;
            if (!si::decode_posting(*v, counts)) {
              bad = Error(Errc::storage, "corrupt search posting " + keys::printable(keys[i]));
              return;
            }
            list.add(ids[at + i], counts);
          });
      if (!read) return read.error();
      if (bad) return *bad;
    }
    list.close();
    return &list;
  }

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
  QueryWord word;                     // word
  std::vector<std::string> phrase;    // phrase: consecutive words
  std::vector<std::uint32_t> phrase_hashes;  // phrase: the word_hash of each
  std::vector<std::string> expanded;  // prefix: the words it stands for
  std::string prefix;
  /// What evaluation reads: the word (word), each phrase word, each expansion (prefix).
  std::vector<PreparedWord> prepared;
  /// prefix: (id, i) for each document in the postings prepared[i] reads, by id. A document
  /// scores only for the expansions that hold it, found here instead of in each of them.
  std::vector<std::pair<Uuid, std::uint32_t>> holders;
};

struct Query {
  std::vector<Clause> clauses;
  bool match_all = false;
  std::string folded;  // the whole query folded, for exact name matches
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::size_t count_words(std::string_view q) {
  std::size_t n = 0;
  bool in = false;
  for (char c : q) {
    if (is_space(c))
      in = false;
    else if (!in)
      in = true, ++n;
  }
  return n;
}

std::optional<Field> scoped_field(std::string_view name) {
  for (const auto& s : scoped_fields)
    if (s.name == name) return s.field;
  return std::nullopt;
}

/// Adds the clauses of one typed word (not an operator, not a phrase).
void add_word(Query& query, std::string_view text, Occur occur) {
  std::optional<Field> field;
  if (auto colon = text.find(':'); colon != std::string_view::npos && colon > 0) {
    field = scoped_field(text.substr(0, colon));
    if (field) {
      text.remove_prefix(colon + 1);
    } else {
      // An unknown field: its words are plain words, each its own clause.
      for (auto& w : search::words(text)) {
        Clause c;
        c.occur = occur;
        c.word = QueryWord{std::move(w.whole), std::move(w.parts)};
        query.clauses.push_back(std::move(c));
      }
      return;
    }
  }
  auto set_field = [&](Clause& c) {
    if (field) c.fields = bit(*field), c.scoped = true;
  };
  bool prefix = false;
  while (text.size() > 1 && text.back() == '*') text.remove_suffix(1), prefix = true;
  auto words = search::words(text);
  if (words.empty()) return;
  if (prefix) {
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      Clause c;
      c.occur = occur;
      set_field(c);
      c.word = QueryWord{std::move(words[i].whole), std::move(words[i].parts)};
      query.clauses.push_back(std::move(c));
    }
    Clause c;
    c.occur = occur;
    c.type = ClauseType::prefix;
    set_field(c);
    c.prefix = std::move(words.back().whole);
    query.clauses.push_back(std::move(c));
    return;
  }
  Clause c;
  c.occur = occur;
  set_field(c);
  if (words.size() == 1) {
    c.word = QueryWord{std::move(words[0].whole), std::move(words[0].parts)};
  } else {
    for (auto& w : words) c.word.parts.push_back(std::move(w.whole));
  }
  query.clauses.push_back(std::move(c));
}

void add_phrase(Query& query, std::string_view text, std::optional<Field> field, Occur occur) {
  auto words = search::words(text);
  if (words.empty()) return;
  Clause c;
  c.occur = occur;
  if (field) c.fields = bit(*field), c.scoped = true;
  if (words.size() == 1) {
    c.word = QueryWord{std::move(words[0].whole), std::move(words[0].parts)};
  } else {
    c.type = ClauseType::phrase;
    for (auto& w : words) {
      c.phrase_hashes.push_back(si::word_hash(w.whole));
      c.phrase.push_back(std::move(w.whole));
    }
  }
  query.clauses.push_back(std::move(c));
}

/// docs/SEMANTICS.md §16 "Query `q`": never fails for its syntax, only for its size.
Result<Query> parse(std::string_view q) {
  if (q.size() > max_query_bytes)
    return fail(Errc::invalid_parameter,
                "Invalid parameter q: longer than " + std::to_string(max_query_bytes) + " bytes");
  if (count_words(q) > max_query_words)
    return fail(Errc::invalid_parameter,
                "Invalid parameter q: more than " + std::to_string(max_query_words) + " words");
  Query query;
  std::size_t i = 0;
  const std::size_t n = q.size();
  while (i < n && is_space(q[i])) ++i;
  std::size_t e = n;
  while (e > i && is_space(q[e - 1])) --e;
  const auto trimmed = q.substr(i, e - i);
  if (trimmed.empty() || trimmed == "*") {
    query.match_all = true;
    return query;
  }
  query.folded = search::fold(trimmed);
  bool next_must = false, next_not = false;
  while (i < n) {
    while (i < n && is_space(q[i])) ++i;
    if (i >= n) break;
    // A phrase: [+-][field:]"..." with its closing quote.
    std::size_t j = i;
    Occur occur = Occur::should;
    if (q[j] == '+' || q[j] == '-') occur = q[j] == '+' ? Occur::must : Occur::must_not, ++j;
    std::size_t k = j;
    while (k < n && std::isalpha(static_cast<unsigned char>(q[k]))) ++k;
    std::optional<Field> field;
    if (k < n && q[k] == ':' && k > j && (field = scoped_field(q.substr(j, k - j))))
      ++k;
    else
      k = j;
    if (k < n && q[k] == '"') {
      if (auto close = q.find('"', k + 1); close != std::string_view::npos) {
        if (next_not) occur = Occur::must_not;
        if (next_must && occur == Occur::should) occur = Occur::must;
        next_must = next_not = false;
        add_phrase(query, q.substr(k + 1, close - k - 1), field, occur);
        i = close + 1;
        continue;
      }
    }
    std::size_t end = i;
    while (end < n && !is_space(q[end])) ++end;
    auto token = q.substr(i, end - i);
    i = end;
    if (token == "AND") {
      if (!query.clauses.empty() && query.clauses.back().occur == Occur::should)
        query.clauses.back().occur = Occur::must;
      next_must = true;
      continue;
    }
    if (token == "OR") continue;
    if (token == "NOT") {
      next_not = true;
      continue;
    }
    if (token.size() > 1 && (token[0] == '+' || token[0] == '-'))
      token.remove_prefix(1);
    else
      occur = Occur::should;
    if (next_not) occur = Occur::must_not;
    if (next_must && occur == Occur::should) occur = Occur::must;
    next_must = next_not = false;
    add_word(query, token, occur);
  }
  return query;
}

/// The words of a clause whose postings evaluation reads.
std::vector<std::string> atoms_of(const Clause& c) {
  std::vector<std::string> out;
  const bool stems = c.fields & (bit(Field::description) | bit(Field::display_name));
  auto add = [&](const std::string& w) {
    if (w.empty()) return;
    out.push_back(w);
    if (stems) out.push_back(std::string(1, si::stem_marker) + search::stem(w));
  };
  switch (c.type) {
  case ClauseType::word:
    add(c.word.whole);
    for (const auto& p : c.word.parts) add(p);
    break;
  case ClauseType::phrase:
    for (const auto& w : c.phrase) out.push_back(w);
    break;
  case ClauseType::prefix:
    for (const auto& w : c.expanded) out.push_back(w);
    break;
  }
  return out;
}

/// The words a query word's stemmed matches are posted under: its stem marked, and the stem as
/// a word of its own when it is not the word itself (else empty).
std::pair<std::string, std::string> stem_words(const std::string& word) {
  auto stem = search::stem(word);
  std::string marked = std::string(1, si::stem_marker) + stem;
  if (stem == word) stem.clear();
  return {std::move(marked), std::move(stem)};
}

/// Postings of a part read whole at most; a part with more is looked up by key.
constexpr std::size_t part_list_most = 1024;

/// Reads the postings of the parts of query word `w` into `p` (and of their stems when
/// `stems`), and `p.df` from them: the rarest part's. A document matches the parts only where
/// it holds every one, so the rarest part (with its stems) names every document that can:
/// each part is first read up to part_list_most postings (and up to four times the fewest a
/// part read whole has), and one with more is then read only for those documents, by key. The
/// rarest part is put first (add_ids reads its lists for the candidates). When every part has
/// more, each is read whole. Errors: storage.
Result<void> prepare_parts(Postings& postings, const QueryWord& w, bool stems, PreparedWord& p) {
  const std::size_t n = w.parts.size();
  if (n == 0) return {};
  // Per part: its postings, those of its stem marked and of its stem as a word; null where
  // there are none to read (a stem that is the word itself) or too many (with a limit).
  constexpr auto too_many = std::numeric_limits<std::size_t>::max();
  struct Forms {
    std::array<std::string, 3> words;
    std::array<const PostingList*, 3> lists{};
    std::array<bool, 3> complete{true, true, true};
    std::size_t total = 0;
  };
  // The longer parts first (a digit or a short word is often frequent): once a part is read
  // whole, another is read no further than a few times its postings.
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return w.parts[a].size() > w.parts[b].size();
  });
  auto read = [&](std::size_t most) -> Result<std::vector<Forms>> {
    std::vector<Forms> out(n);
    std::size_t least = too_many;
    for (const std::size_t i : order) {
      if (most > 0 && least != too_many)
        most = std::min(most, std::max<std::size_t>(64, 4 * least));
      const auto& part = w.parts[i];
      auto& words = out[i].words;
      words[0] = part;
      if (stems) std::tie(words[1], words[2]) = stem_words(part);
      for (std::size_t k = 0; k < 3; ++k) {
        if (words[k].empty()) continue;
        auto l = postings.get(words[k], false, most);
        if (!l) return l.error();
        out[i].lists[k] = *l;
        if (!*l) out[i].complete[k] = false;
        out[i].total = !*l || out[i].total == too_many ? too_many : out[i].total + (*l)->ids.size();
      }
      least = std::min(least, out[i].total);
    }
    return out;
  };
  auto forms = read(n > 1 ? part_list_most : 0);
  if (!forms) return forms.error();
  auto rarest_of = [&] {
    std::size_t r = 0;
    for (std::size_t i = 1; i < n; ++i)
      if ((*forms)[i].total < (*forms)[r].total) r = i;
    return r;
  };
  std::size_t rarest = rarest_of();
  // Every part frequent: each read whole. Else the others' frequent lists read by key.
  const bool by_key = n > 1 && (*forms)[rarest].total != too_many;
  if (!by_key && n > 1) {
    forms = read(0);
    if (!forms) return forms.error();
    rarest = rarest_of();
  }
  // Documents holding the word typed with separators: as many as the part in fewest hold (one
  // read only in part is in more than the rarest part's lists).
  std::int64_t least = -1;
  for (const auto& f : *forms)
    if (f.complete[0] && f.lists[0])
      least = least < 0 ? f.lists[0]->df() : std::min(least, f.lists[0]->df());
  p.df = std::max<std::int64_t>(least, 0);
  if (by_key) {
    std::vector<Uuid> ids;
    for (const auto* l : (*forms)[rarest].lists)
      if (l) ids.insert(ids.end(), l->ids.begin(), l->ids.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < 3; ++k) {
        if ((*forms)[i].complete[k]) continue;
        auto l = postings.get_in((*forms)[i].words[k], ids);
        if (!l) return l.error();
        (*forms)[i].lists[k] = *l;
      }
  }
  std::swap((*forms)[0], (*forms)[rarest]);
  for (const auto& f : *forms) {
    p.parts.push_back(f.lists[0]);
    if (stems) p.part_stems.emplace_back(f.lists[1], f.lists[2]);
  }
  return {};
}

/// Reads the postings of a query word (and of its stems when `stems`).
Result<PreparedWord> prepare_word(Postings& postings, const QueryWord& w, bool stems,
                                  bool next = false) {
  PreparedWord p;
  auto get = [&](const std::string& word) { return postings.get(word); };
  auto stem_pair =
      [&](const std::string& word) -> Result<std::pair<const PostingList*, const PostingList*>> {
    const auto [marked_word, plain_word] = stem_words(word);
    auto marked = get(marked_word);
    if (!marked) return marked.error();
    const PostingList* plain = nullptr;
    if (!plain_word.empty()) {
      auto l = get(plain_word);
      if (!l) return l.error();
      plain = *l;
    }
    return std::pair(*marked, plain);
  };
  if (!w.whole.empty()) {
    auto l = postings.get(w.whole, next);
    if (!l) return l.error();
    p.whole = *l;
    if (stems) {
      auto sp = stem_pair(w.whole);
      if (!sp) return sp.error();
      std::tie(p.whole_stem, p.whole_stem_word) = *sp;
    }
  }
  if (auto r = prepare_parts(postings, w, stems, p); !r) return r.error();
  if (p.whole && (p.whole->df() > 0 || p.parts.empty())) p.df = p.whole->df();
  return p;
}

Result<void> prepare(Postings& postings, Clause& c) {
  const bool stems = c.fields & (bit(Field::description) | bit(Field::display_name));
  auto add = [&](const QueryWord& w, bool with_stems, bool next = false) -> Result<void> {
    auto p = prepare_word(postings, w, with_stems, next);
    if (!p) return p.error();
    c.prepared.push_back(std::move(*p));
    return {};
  };
  switch (c.type) {
  case ClauseType::word: return add(c.word, stems);
  case ClauseType::phrase:
    // Every word but the last with the words that follow it (fields_with_pairs).
    for (std::size_t k = 0; k < c.phrase.size(); ++k)
      if (auto r = add(QueryWord{c.phrase[k], {}}, false, k + 1 < c.phrase.size()); !r) return r;
    return {};
  case ClauseType::prefix:
    for (const auto& w : c.expanded)
      if (auto r = add(QueryWord{w, {}}, false); !r) return r;
    for (std::uint32_t i = 0; i < c.prepared.size(); ++i) {
      const auto& p = c.prepared[i];
      auto hold = [&](const PostingList* l) {
        if (l)
          for (const auto& id : l->ids) c.holders.emplace_back(id, i);
      };
      hold(p.whole), hold(p.whole_stem), hold(p.whole_stem_word);
      for (const auto* l : p.parts) hold(l);
      for (const auto& [marked, plain] : p.part_stems) hold(marked), hold(plain);
    }
    std::sort(c.holders.begin(), c.holders.end());
    c.holders.erase(std::unique(c.holders.begin(), c.holders.end()), c.holders.end());
    return {};
  }
  return {};
}

/// The ids of the postings a prepared word reads that hold it in one of `fields`, a posting
/// list at a time: `end_run()` after each.
template <class EndRun>
void add_ids(const PreparedWord& p, FieldMask fields, std::vector<Uuid>& out, EndRun&& end_run) {
  // Only the documents holding the word in one of the clause's fields: a field-scoped word
  // frequent elsewhere reads no document that does not hold it where it is looked for.
  auto add = [&](const PostingList* l) {
    if (l)
      for (std::size_t i = 0; i < l->ids.size(); ++i)
        for (auto k = l->starts[i]; k < l->starts[i + 1]; ++k)
          if (fields & bit(l->counts[k].field)) {
            out.push_back(l->ids[i]);
            break;
          }
    end_run();
  };
  add(p.whole);
  add(p.whole_stem);
  add(p.whole_stem_word);
  // A document holding only some parts of a word is no match; one holding all holds the first.
  if (!p.parts.empty()) add(p.parts.front());
  if (!p.part_stems.empty()) add(p.part_stems.front().first), add(p.part_stems.front().second);
}

/// Sorts `ids`, made of ascending runs that start at each of `runs` (the first at 0), by
/// merging neighbouring runs until one is left.
void merge_runs(std::vector<Uuid>& ids, std::vector<std::size_t> runs) {
  runs.push_back(ids.size());
  while (runs.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t i = 0; i + 2 < runs.size(); i += 2) {
      const auto at = [&](std::size_t k) { return ids.begin() + static_cast<std::ptrdiff_t>(k); };
      std::inplace_merge(at(runs[i]), at(runs[i + 1]), at(runs[i + 2]));
      merged.push_back(runs[i + 2]);
    }
    if (runs.size() % 2 == 0) merged.push_back(runs.back());  // an odd run out, kept as it is
    runs = std::move(merged);
  }
}

/// The fields of phrase clause `c` where document `id` holds each of its words followed by the
/// next (the postings' Term::next): for a phrase of two words, where it stands (but for a
/// collision of 32-bit hashes among the words that follow one word in one field); for more,
/// where it can (the text says).
FieldMask fields_with_pairs(const Clause& c, const Uuid& id) {
  FieldMask out = 0;
  // A phrase's words are few, but one typed token may split into hundreds (a.b.c...).
  std::array<FieldCounts, 8> found_here;
  std::vector<FieldCounts> found_more;
  const std::size_t n = c.prepared.size();
  FieldCounts* found = found_here.data();
  if (n > found_here.size()) found_more.resize(n), found = found_more.data();
  for (std::size_t k = 0; k < n; ++k) {
    if (!c.prepared[k].whole) return 0;
    found[k] = c.prepared[k].whole->find(id);
    if (!found[k]) return 0;
  }
  for (std::size_t i = 0; i < si::field_count; ++i) {
    const auto f = static_cast<Field>(i);
    if (!(c.fields & bit(f))) continue;
    bool all = true;
    for (std::size_t k = 0; all && k < n; ++k)
      all = found[k].in(f) > 0 && (k + 1 == n || found[k].followed(f, c.phrase_hashes[k + 1]));
    if (all) out |= bit(f);
  }
  return out;
}

/// Those of `fields` where each inner word of phrase clause `c` (neither the first nor the
/// last) occurs once in document `id` (its posting's count, parts of other words counted too):
/// there, fields_with_pairs' pairs chain through the one place of each inner word, so the
/// phrase stands.
FieldMask fields_with_single_inner_words(const Clause& c, const Uuid& id, FieldMask fields) {
  for (std::size_t k = 1; k + 1 < c.prepared.size() && fields; ++k) {
    const auto found = c.prepared[k].whole ? c.prepared[k].whole->find(id) : FieldCounts{};
    for (std::size_t i = 0; i < si::field_count; ++i)
      if ((fields & bit(static_cast<Field>(i))) && found.in(static_cast<Field>(i)) != 1)
        fields &= ~bit(static_cast<Field>(i));
  }
  return fields;
}

/// The ids a phrase can match: those whose postings hold its words one after another in a
/// field it searches (the rarest word's, each looked up in the others').
void add_phrase_ids(const Clause& c, std::vector<Uuid>& out) {
  const PostingList* rarest = nullptr;
  for (const auto& p : c.prepared) {
    if (!p.whole || p.whole->ids.empty()) return;
    if (!rarest || p.whole->df() < rarest->df()) rarest = p.whole;
  }
  if (!rarest) return;
  // fields_with_pairs looks each id up in every word's postings.
  for (const auto& id : rarest->ids)
    if (fields_with_pairs(c, id)) out.push_back(id);
}

/// The ids a clause can match (every one it matches, perhaps more), ascending and distinct.
std::vector<Uuid> clause_ids(const Clause& c) {
  std::vector<Uuid> ids;
  if (c.type == ClauseType::phrase) {
    add_phrase_ids(c, ids);
    return ids;
  }
  // Each posting list adds an ascending run; runs are merged pairwise, not sorted again.
  std::vector<std::size_t> runs{0};
  const auto end_run = [&] {
    if (ids.size() > runs.back()) runs.push_back(ids.size());
  };
  for (const auto& p : c.prepared) add_ids(p, c.fields, ids, end_run);
  merge_runs(ids, runs);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

/// The documents a query's words can match: those of every required clause, when it has any
/// (the rarest clause's ids, kept where each of the others holds them too, rarest first), else
/// those of any clause that is not an exclusion.
std::vector<Uuid> candidates_of(const Query& q) {
  std::vector<std::vector<Uuid>> required;
  for (const auto& c : q.clauses)
    if (c.occur == Occur::must) required.push_back(clause_ids(c));
  if (!required.empty()) {
    std::sort(required.begin(), required.end(),
              [](const auto& x, const auto& y) { return x.size() < y.size(); });
    std::vector<Uuid> out = std::move(required.front());
    for (std::size_t i = 1; i < required.size() && !out.empty(); ++i) {
      const auto& other = required[i];
      std::erase_if(out, [&](const Uuid& id) {
        return !std::binary_search(other.begin(), other.end(), id);
      });
    }
    return out;
  }
  std::vector<Uuid> out;
  std::vector<std::size_t> runs{0};
  for (const auto& c : q.clauses)
    if (c.occur != Occur::must_not) {
      auto ids = clause_ids(c);
      out.insert(out.end(), ids.begin(), ids.end());
      if (out.size() > runs.back()) runs.push_back(out.size());
    }
  merge_runs(out, runs);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// A prefix clause's words: the words that start with it held by the most documents (their
/// postings counted, up to max_expansion_scan of them).
Result<void> expand(Tx& tx, Clause& c) {
  auto cursor = tx.raw().scan(storage::prefix_range(std::string(1, 'X') + c.prefix),
                              storage::Direction::forward);
  if (!cursor) return cursor.error();
  std::vector<std::pair<std::int64_t, std::string>> found;
  std::size_t read = 0;
  for (auto& cur = *cursor; cur->valid() && read < max_expansion_scan; ++read) {
    auto k = keys::decode_text_id('X', cur->key());
    if (!k) return fail(Errc::storage, "corrupt search posting " + keys::printable(cur->key()));
    if (!found.empty() && found.back().second == k->text)
      ++found.back().first;
    else
      found.emplace_back(1, std::string(k->text));
    if (auto x = cur->next(); !x) return x.error();
  }
  std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  if (found.size() > max_expansions) found.resize(max_expansions);
  for (auto& [n, w] : found) c.expanded.push_back(std::move(w));
  return {};
}

// ---- filters ----

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
struct NamedValueField {
  std::string_view name;
  ValueField field;
};
constexpr NamedValueField filter_fields[] = {
    {"entityType", ValueField::entity_type},
    {"owners.id", ValueField::owners_id},
    {"owners.name", ValueField::owners_name},
    {"owners.displayName", ValueField::owners_display_name},
    {"tags.tagFQN", ValueField::tags},
    {"domains.id", ValueField::domains_id},
    {"domains.fullyQualifiedName", ValueField::domains_fqn},
    {"service.name", ValueField::service},
    {"glossary.name", ValueField::glossary},
    {"status", ValueField::status},
    {"deleted", ValueField::deleted},
};
constexpr std::string_view facet_fields[] = {
    "entityType",   "owners.displayName", "tags.tagFQN", "domains.fullyQualifiedName",
    "service.name", "glossary.name",      "status"};

std::optional<ValueField> value_field(std::string_view name) {
  for (const auto& f : filter_fields)
    if (f.name == name) return f.field;
  return std::nullopt;
}

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

/// The F keys' field of a filter field; nullopt for those each Y record holds (entityType,
/// deleted).
std::optional<si::FacetKey> facet_key_of(ValueField field) {
  switch (field) {
  case ValueField::owners_id: return si::FacetKey::owner_id;
  case ValueField::owners_name: return si::FacetKey::owner_name;
  case ValueField::owners_display_name: return si::FacetKey::owner_display_name;
  case ValueField::tags: return si::FacetKey::tag;
  case ValueField::domains_id: return si::FacetKey::domain_id;
  case ValueField::domains_fqn: return si::FacetKey::domain_fqn;
  case ValueField::service: return si::FacetKey::service;
  case ValueField::glossary: return si::FacetKey::glossary;
  case ValueField::status: return si::FacetKey::status;
  case ValueField::entity_type:
  case ValueField::deleted: return std::nullopt;
  }
  return std::nullopt;
}

/// Ids in ascending order, or nullopt for "not narrowed".
using IdSet = std::optional<std::vector<Uuid>>;

/// The ids that can pass `f` (docs/SEARCH_INDEX.md, "Filters"), read from the F keys of its
/// terms: every id that passes is in it, and each one in it is still tested on its Y record.
/// nullopt where `f` narrows nothing by facet keys (a term on entityType or deleted, only
/// exclusions) or where that would read more than `limit` keys. Errors: storage.
Result<IdSet> filter_ids(Tx& tx, const SearchFilter& f, std::size_t limit) {
  if (f.term) {
    const auto field = value_field(f.term->field);
    const auto key = field ? facet_key_of(*field) : std::nullopt;
    if (!key) return IdSet();
    std::vector<Uuid> ids;
    for (const auto& value : f.term->values) {
      const auto prefix = keys::facet_prefix(si::facet_entry(*key, value));
      auto cursor = tx.raw().scan(storage::prefix_range(prefix), storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid();) {
        if (ids.size() >= limit) return IdSet();
        auto k = keys::decode_text_id('F', c->key());
        if (!k) return fail(Errc::storage, "corrupt facet key " + keys::printable(c->key()));
        ids.push_back(k->id);
        if (auto n = c->next(); !n) return n.error();
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return IdSet(std::move(ids));
  }
  // As matches() reads a bool: every must and filter; else any should; must_not narrows nothing.
  IdSet out;
  for (const auto* all : {&f.must, &f.filter})
    for (const auto& c : *all) {
      auto ids = filter_ids(tx, c, limit);
      if (!ids) return ids.error();
      if (!*ids) continue;
      if (!out) {
        out = std::move(*ids);
      } else {
        std::vector<Uuid> both;
        std::set_intersection(out->begin(), out->end(), (*ids)->begin(), (*ids)->end(),
                              std::back_inserter(both));
        *out = std::move(both);
      }
    }
  if (f.must.empty() && f.filter.empty() && !f.should.empty()) {
    std::vector<Uuid> any;
    for (const auto& c : f.should) {
      auto ids = filter_ids(tx, c, limit);
      if (!ids) return ids.error();
      if (!*ids) return IdSet();  // one alternative not narrowed: none is
      any.insert(any.end(), (*ids)->begin(), (*ids)->end());
      if (any.size() > limit) return IdSet();
    }
    std::sort(any.begin(), any.end());
    any.erase(std::unique(any.begin(), any.end()), any.end());
    out = std::move(any);
  }
  return out;
}

bool matches(const SearchFilter& f, const si::RankingView& d, const si::FacetView& v) {
  if (f.term) {
    // check_filter refused every other name.
    const auto field = value_field(f.term->field);
    if (!field) return false;
    bool found = false;
    for_each_value(d, v, *field, [&](std::string_view value) {
      found = found || std::find(f.term->values.begin(), f.term->values.end(), value) !=
                           f.term->values.end();
    });
    return found;
  }
  for (const auto* all : {&f.must, &f.filter})
    for (const auto& c : *all)
      if (!matches(c, d, v)) return false;
  for (const auto& c : f.must_not)
    if (matches(c, d, v)) return false;
  if (f.must.empty() && f.filter.empty() && !f.should.empty())
    return std::any_of(f.should.begin(), f.should.end(),
                       [&](const SearchFilter& c) { return matches(c, d, v); });
  return true;
}

Result<void> check_filter(const SearchFilter& f, std::size_t depth) {
  if (depth > max_filter_depth)
    return fail(Errc::invalid_parameter, "Invalid parameter query_filter: nested deeper than " +
                                             std::to_string(max_filter_depth));
  if (f.term) {
    if (!value_field(f.term->field))
      return fail(Errc::invalid_parameter,
                  "Invalid parameter query_filter: unsupported field " + f.term->field);
    return {};
  }
  for (const auto* all : {&f.must, &f.should, &f.must_not, &f.filter})
    for (const auto& c : *all)
      if (auto r = check_filter(c, depth + 1); !r) return r;
  return {};
}

// ---- ranking ----

struct Match {
  const si::RankingView* doc = nullptr;
  bool exact = false;
  std::int64_t matched = 0;
  double score = 0;
};

enum class SortField { score, name, display_name, updated_at, up_votes };

struct Order {
  SortField field = SortField::score;
  bool descending = true;
};

Result<Order> order_of(const SearchRequest& r, bool has_words) {
  Order o;
  const auto& f = r.sort_field;
  if (f.empty())
    o.field = has_words ? SortField::score : SortField::name;
  else if (f == "_score")
    o.field = SortField::score;
  else if (f == "name.keyword" || f == "name")
    o.field = SortField::name;
  else if (f == "displayName.keyword" || f == "displayName")
    o.field = SortField::display_name;
  else if (f == "updatedAt")
    o.field = SortField::updated_at;
  else if (f == "votes.upVotes")
    o.field = SortField::up_votes;
  else
    return fail(Errc::invalid_parameter, "Invalid parameter sort_field: " + f);
  if (r.sort_order.empty())
    o.descending = o.field == SortField::score;
  else if (r.sort_order == "asc" || r.sort_order == "desc")
    o.descending = r.sort_order == "desc";
  else
    return fail(Errc::invalid_parameter, "Invalid parameter sort_order: " + r.sort_order);
  return o;
}

std::vector<SortValue> sort_values(const Match& m, SortField f) {
  const auto& d = *m.doc;
  switch (f) {
  case SortField::score:
    return {std::int64_t{m.exact}, m.matched, m.score, std::string(d.name), to_string(d.id)};
  case SortField::name: return {std::string(d.name), to_string(d.id)};
  case SortField::display_name: return {std::string(d.display_name), to_string(d.id)};
  case SortField::updated_at: return {d.updated_at, to_string(d.id)};
  case SortField::up_votes: return {d.up_votes, to_string(d.id)};
  }
  return {};
}

/// Compares sort values: numbers as numbers, strings as strings (by the sort's shape, the
/// values at one position are of one type).
int compare_value(const SortValue& a, const SortValue& b) {
  auto number = [](const SortValue& v) -> std::optional<double> {
    if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto na = number(a), nb = number(b);
  if (na && nb) return *na < *nb ? -1 : *na > *nb ? 1 : 0;
  if (auto* sa = std::get_if<std::string>(&a), *sb = std::get_if<std::string>(&b); sa && sb)
    return sa->compare(*sb) < 0 ? -1 : sa->compare(*sb) > 0 ? 1 : 0;
  return 0;
}

/// Whether `a` comes before `b` in the order: the sort field's values in its direction, then
/// name and id ascending.
bool before(const std::vector<SortValue>& a, const std::vector<SortValue>& b, const Order& o) {
  const std::size_t keys = a.size() - (o.field == SortField::score ? 2 : 1);  // ranked positions
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int c = compare_value(a[i], b[i]);
    if (c == 0) continue;
    if (i < keys && o.descending) c = -c;
    return c < 0;
  }
  return false;
}

/// The order of matches: by the sort field in its direction, then name and id ascending (what
/// `before` says of their sort values, without making them).
bool ranked_before(const Match& x, const Match& y, const Order& o) {
  const auto& a = *x.doc;
  const auto& b = *y.doc;
  auto directed = [&](auto u, auto v) -> int {
    if (u == v) return 0;
    const bool less = u < v;
    return (less != o.descending) ? -1 : 1;
  };
  int c = 0;
  switch (o.field) {
  case SortField::score:
    c = directed(std::int64_t{x.exact}, std::int64_t{y.exact});
    if (!c) c = directed(x.matched, y.matched);
    if (!c) c = directed(x.score, y.score);
    break;
  case SortField::name: c = directed(std::string_view(a.name), std::string_view(b.name)); break;
  case SortField::display_name:
    c = directed(std::string_view(a.display_name), std::string_view(b.display_name));
    break;
  case SortField::updated_at: c = directed(a.updated_at, b.updated_at); break;
  case SortField::up_votes: c = directed(a.up_votes, b.up_votes); break;
  }
  if (c) return c < 0;
  if (o.field == SortField::score && a.name != b.name) return a.name < b.name;
  return a.id < b.id;  // byte order is the order of the text form
}

/// Puts the best `n` matches in the order first (as a set, in no particular order).
void select_best(std::vector<Match>& matches, std::size_t n, const Order& o) {
  if (matches.size() <= n) return;
  std::nth_element(matches.begin(), matches.begin() + static_cast<std::ptrdiff_t>(n),
                   matches.end(),
                   [&](const Match& x, const Match& y) { return ranked_before(x, y, o); });
}

/// Orders the first `n` of `[first, last)` as the order ranks them: the best `n` of the range,
/// in order.
void order_first(std::vector<Match>::iterator first, std::vector<Match>::iterator last,
                 std::size_t n, const Order& o) {
  const auto size = static_cast<std::size_t>(last - first);
  std::partial_sort(first, first + static_cast<std::ptrdiff_t>(std::min(n, size)), last,
                    [&](const Match& x, const Match& y) { return ranked_before(x, y, o); });
}

double bm25(double idf, double weighted_tf) { return idf * weighted_tf / (k1 + weighted_tf); }

/// Bytes kept for the life of a query, at addresses that do not move as more are kept.
class ByteArena {
 public:
  /// A copy of `bytes`, valid as long as the arena.
  std::string_view keep(std::string_view bytes) {
    if (bytes.size() > room_) {
      const std::size_t size = std::max(chunk_size, bytes.size());
      chunks_.push_back(std::unique_ptr<char[]>(new char[size]));
      at_ = chunks_.back().get();
      room_ = size;
    }
    if (!bytes.empty()) std::memcpy(at_, bytes.data(), bytes.size());
    const std::string_view kept(at_, bytes.size());
    at_ += bytes.size();
    room_ -= bytes.size();
    return kept;
  }

 private:
  static constexpr std::size_t chunk_size = std::size_t{64} << 10;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* at_ = nullptr;
  std::size_t room_ = 0;
};

/// What a query found before paging: every visible match, ranked.
struct Found {
  /// What ranks each candidate (matches point at these), as views into its search record: the
  /// backend's own bytes when its views last as long as the transaction, else copies in `bytes`.
  ByteArena bytes;
  std::vector<si::RankingView> docs;
  /// Every visible match; or, when the ranking stopped reading early (docs/SEARCH_INDEX.md,
  /// "The best 10,000"), more than max_window of them, holding the best max_window.
  std::vector<Match> matches;
  Query query;
  Order order;
  std::set<std::string> highlight_words;  // analysed words and stems the hits are lit by
};

class Evaluator {
 public:
  Evaluator(Tx& tx, const Principal& who) : tx_(tx), who_(who), postings_(tx) {}

  Result<Found> run(std::string_view q, KindSet kinds, bool deleted,
                    const std::optional<SearchFilter>& filter, const SearchRequest* paging) {
    Found found;
    auto query = parse(q);
    if (!query) return query.error();
    found.query = std::move(*query);
    auto& qu = found.query;
    for (auto& c : qu.clauses)
      if (c.type == ClauseType::prefix)
        if (auto e = expand(tx_, c); !e) return e.error();
    bool positive = std::any_of(qu.clauses.begin(), qu.clauses.end(),
                                [](const Clause& c) { return c.occur != Occur::must_not; });
    if (!qu.match_all && !positive && !qu.clauses.empty()) qu.match_all = true;  // only exclusions
    SearchRequest defaults;
    auto order = order_of(paging ? *paging : defaults, !qu.match_all);
    if (!order) return order.error();
    found.order = *order;
    // Statistics for BM25F.
    auto stats = si::field_stats(tx_);
    if (!stats) return stats.error();
    stats_ = *stats;
    // The postings of every clause (candidates_of picks the documents read from them).
    for (auto& c : qu.clauses) {
      if (auto p = prepare(postings_, c); !p) return p.error();
      for (auto& p : c.prepared) p.idf = idf(p.df);
    }
    for (const auto& c : qu.clauses)
      if (c.occur != Occur::must_not)
        for (const auto& w : atoms_of(c)) found.highlight_words.insert(w);
    // Each candidate's ranking part and the bytes of its facet values, as views.
    si::FacetView view;
    std::optional<Error> bad;
    const bool lent = tx_.raw().views_last();
    auto take = [&](std::string_view v) {
      if (bad) return;
      si::RankingView d;
      if (!si::decode_ranking(v, d)) {
        bad = Error(Errc::storage, "corrupt search document");
        return;
      }
      if (!kinds.contains(d.kind) || d.deleted != deleted) return;
      if (filter) {
        if (!si::decode_facets(d.facets, view)) {
          bad = Error(Errc::storage, "corrupt search document");
          return;
        }
        if (!matches(*filter, d, view)) return;
      }
      if (!lent) si::decode_ranking(found.bytes.keep(v), d);  // the same bytes, copied
      found.docs.push_back(d);
    };
    // The documents of `ids` (ascending), read with one get_each a batch.
    auto take_each = [&](const std::vector<Uuid>& ids) -> Result<void> {
      found.docs.reserve(ids.size());
      std::vector<std::string> keys;
      for (std::size_t at = 0; at < ids.size(); at += Tx::read_batch) {
        const auto count = std::min(Tx::read_batch, ids.size() - at);
        keys.clear();
        for (std::size_t i = 0; i < count; ++i) keys.push_back(keys::search_doc(ids[at + i]));
        std::vector<std::string_view> views(keys.begin(), keys.end());
        auto read = tx_.raw().get_each(views, [&](std::size_t, std::optional<std::string_view> v) {
          if (v) take(*v);
        });
        if (!read) return read.error();
        if (bad) return *bad;
      }
      return {};
    };
    // Exact names and displayNames from their typeahead keys (K); an FQN of several parts is
    // compared when the query has a dot in it.
    std::vector<Uuid> exact;
    const bool dotted = qu.folded.find_first_of(".\"") != std::string::npos;
    if (!qu.match_all && !qu.folded.empty()) {
      auto cursor = tx_.raw().scan(storage::prefix_range(keys::name_entry_prefix(qu.folded) + '\0'),
                                   storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid();) {
        if (auto k = keys::decode_text_id('K', c->key()); k && k->text == qu.folded)
          exact.push_back(k->id);
        if (auto n = c->next(); !n) return n.error();
      }
      std::sort(exact.begin(), exact.end());
    }
    // Whether the documents read are only those the caller may view (the name walk checks).
    bool viewed = false;
    // The documents read from found.docs[from] on, ranked into found.matches when the caller
    // may view them and the clauses keep them: permissions, then the clauses.
    const auto rank_from = [&](std::size_t from) -> Result<void> {
      for (std::size_t i = from; i < found.docs.size(); ++i) {
        const auto& d = found.docs[i];
        auto visible = viewed ? Result<bool>(true) : can_view(d);
        if (!visible) return visible.error();
        if (!*visible) continue;
        Match m;
        m.doc = &d;
        if (!qu.match_all || !qu.clauses.empty()) {
          auto scored = score(qu, d, m);
          if (!scored) return scored.error();
          if (!*scored) continue;
        }
        if (!qu.match_all && !qu.folded.empty())
          m.exact = std::binary_search(exact.begin(), exact.end(), d.id) ||
                    (dotted && search::fold(d.fqn) == qu.folded);
        found.matches.push_back(m);
      }
      return {};
    };
    // Whether found.matches is made (by the bounded reading below) or still to make.
    bool ranked = false;
    // A filter's facet keys narrow the documents read when they are fewer: than a quarter of
    // all documents (else one scan of every Y record is cheaper), or than the candidates.
    const auto documents =
        static_cast<std::size_t>(std::max<std::int64_t>(stats_[si::field_count].documents, 0));
    // `*` by name, without a filter, a continuation or an exact total: its answer is the first
    // max_window + 1 documents in that order (docs/SEARCH_INDEX.md, "Browsing").
    const bool by_name = qu.match_all && qu.clauses.empty() && !filter &&
                         found.order.field == SortField::name &&
                         (!paging || (!paging->search_after && !paging->track_total_hits));
    if (qu.match_all) {
      IdSet allowed;
      if (filter) {
        auto a = filter_ids(tx_, *filter, documents / 4);
        if (!a) return a.error();
        allowed = std::move(*a);
      }
      if (allowed) {
        if (auto t = take_each(*allowed); !t) return t.error();
      } else if (by_name) {
        if (auto t = take_by_name(kinds, deleted, found.order.descending, found, take_each); !t)
          return t.error();
        viewed = true;
      } else {
        // Every document, read by one scan.
        auto cursor = tx_.raw().scan(storage::prefix_range("Y"), storage::Direction::forward);
        if (!cursor) return cursor.error();
        for (auto& c = *cursor; c->valid() && !bad;) {
          if (keys::decode_search_doc(c->key())) take(c->value());
          if (auto n = c->next(); !n) return n.error();
        }
        if (bad) return *bad;
      }
    } else {
      std::vector<Uuid> candidates = candidates_of(qu);
      if (filter && !candidates.empty()) {
        auto allowed = filter_ids(tx_, *filter, candidates.size());
        if (!allowed) return allowed.error();
        if (*allowed) {
          std::vector<Uuid> both;
          std::set_intersection(candidates.begin(), candidates.end(), (*allowed)->begin(),
                                (*allowed)->end(), std::back_inserter(both));
          candidates = std::move(both);
        }
      }
      // Ranked by score from the best, without a continuation or an exact total: the documents
      // of candidates whose bound cannot reach the best max_window are not read. Worth it where
      // each document read is dear (a round trip's share: reads_ahead), or where candidates are
      // many times the window: on LMDB, reading every candidate in key order costs about what
      // bounding them all and reading the best in that order does up to about four windows
      // (docs/SEARCH_INDEX.md, "The best 10,000").
      const auto window = static_cast<std::size_t>(max_window);
      const bool bounded =
          found.order.field == SortField::score && found.order.descending &&
          (!paging || (!paging->search_after && !paging->track_total_hits)) &&
          candidates.size() > (tx_.raw().reads_ahead() ? window + 1 : bounded_from * window) &&
          candidates.size() < std::numeric_limits<std::uint32_t>::max();
      if (bounded) {
        auto r = take_best(qu, candidates, exact, dotted, found, take_each, rank_from);
        if (!r) return r.error();
        ranked = true;
      } else if (auto t = take_each(candidates); !t) {
        return t.error();
      }
    }
    if (!ranked)
      if (auto r = rank_from(0); !r) return r.error();
    // Not sorted here: a query asks for the best max_window (facets) and a page of them,
    // which select_best and page_of find without ordering every match.
    return found;
  }

  /// Reads the texts of a document's fields (phrases, highlights); those read from other
  /// entities (owner, service, glossary, domain) only when `related`. The entity's record is
  /// handed to `keep` when given. Errors: storage.
  Result<std::vector<si::FieldText>> texts(const Uuid& id, bool related,
                                           std::optional<Record>* keep = nullptr) {
    std::vector<si::FieldText> out;
    auto r = tx_.find(id);
    if (!r) return r.error();
    if (!*r) return out;
    auto built = si::build(tx_, **r, &out, false, related);
    if (!built) return built.error();
    if (keep) *keep = std::move(**r);  // `out` holds copies of the texts
    return out;
  }

 private:
  /// At most what score() and the exact-name rule give a document, from its postings alone.
  struct Bound {
    bool exact = false;
    std::int64_t matched = 0;
    double score = 0;
  };

  /// The Bound of each of `candidates` (ascending): each field's length taken as the least of
  /// its class (the class each posting holds; a shorter field scores higher), and a phrase
  /// taken as found in every field whose postings hold its words one after another
  /// (docs/SEARCH_INDEX.md, "The best 10,000"). Exclusions are left out: they only take
  /// matches away. An FQN compared in full (a dotted query) is known from the document alone:
  /// it bounds as exact.
  Result<std::vector<Bound>> bounds_of(const Query& q, const std::vector<Uuid>& candidates,
                                       const std::vector<Uuid>& exact, bool dotted) {
    std::vector<Bound> out(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i)
      out[i].exact = dotted || std::binary_search(exact.begin(), exact.end(), candidates[i]);
    si::RankingView probe;  // the id alone: lengths come from the postings
    for (const auto& c : q.clauses) {
      if (c.occur == Occur::must_not) continue;
      const auto add = [&](std::size_t i, double s) {
        if (s > 0) ++out[i].matched, out[i].score += s;
      };
      if (c.type == ClauseType::word && c.prepared.front().parts.empty()) {
        // A word without parts (most are): its lists walked beside the candidates, both in
        // ascending order, instead of searched for each.
        const auto& p = c.prepared.front();
        ListWalk whole{p.whole}, stem{p.whole_stem}, stem_word{p.whole_stem_word};
        Found1 f1;
        for (std::size_t i = 0; i < candidates.size(); ++i) {
          f1.whole = whole.at_id(candidates[i]);
          f1.stem = stem.at_id(candidates[i]);
          f1.stem_word = stem_word.at_id(candidates[i]);
          add(i, score_found(p, f1, nullptr, c.fields, c.scoped));
        }
        continue;
      }
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& id = candidates[i];
        probe.id = id;
        double s = 0;
        if (c.type == ClauseType::phrase) {
          if (const FieldMask common = fields_with_pairs(c, id))
            for (const auto& w : c.prepared) s += word_score(w, probe, common, c.scoped, true);
        } else {
          auto scored = clause_score(c, probe, true);  // words and prefixes read no document
          if (!scored) return scored.error();
          s = *scored;
        }
        add(i, s);
      }
    }
    return out;
  }

  /// Reads the documents of `candidates` (ascending; more than max_window + 1 of them) from the
  /// best Bound down, a batch at a time, ranking each batch (rank_from), and stops once more
  /// than max_window match and the max_window-th best of them ranks above the next candidate's
  /// Bound: no document left can enter the best max_window, and the total is "more than
  /// max_window" either way. What the answer holds (the page, the facets of the best
  /// max_window, the total) is what reading every candidate gives. Errors: storage.
  template <class TakeEach, class RankFrom>
  Result<void> take_best(const Query& q, const std::vector<Uuid>& candidates,
                         const std::vector<Uuid>& exact, bool dotted, Found& found,
                         TakeEach& take_each, RankFrom& rank_from) {
    // Each candidate's Bound and its place in `candidates`.
    auto bounds = bounds_of(q, candidates, exact, dotted);
    if (!bounds) return bounds.error();
    std::vector<std::pair<Bound, std::uint32_t>> order;
    order.reserve(candidates.size());
    for (std::uint32_t i = 0; i < candidates.size(); ++i) order.emplace_back((*bounds)[i], i);
    const auto above = [](const Bound& x, const Bound& y) {
      if (x.exact != y.exact) return x.exact;
      if (x.matched != y.matched) return x.matched > y.matched;
      return x.score > y.score;
    };
    // In order from the best, a part at a time: reading stops soon after max_window matches.
    const auto by_bound = [&](const auto& x, const auto& y) { return above(x.first, y.first); };
    std::size_t sorted = 0;
    const auto sort_to = [&](std::size_t n) {
      n = std::min(n, order.size());
      if (n <= sorted) return;
      const auto from = order.begin() + static_cast<std::ptrdiff_t>(sorted);
      const auto to = order.begin() + static_cast<std::ptrdiff_t>(n);
      if (to != order.end()) std::nth_element(from, to, order.end(), by_bound);
      std::sort(from, to, by_bound);
      sorted = n;
    };
    const auto window = static_cast<std::size_t>(max_window);
    // A read batch at a time, each read in key order. Where reads cost no round trip, the
    // first batch is the best max_window and a quarter more: dense enough that most of its
    // keys lie on pages read for the ones before, as when every candidate is read.
    const std::size_t first = tx_.raw().reads_ahead() ? Tx::read_batch : window * 5 / 4;
    // Matches point into found.docs: it must not move.
    found.docs.reserve(candidates.size());
    std::vector<std::uint32_t> places;
    std::vector<Uuid> batch;
    std::vector<Bound> kept;
    for (std::size_t at = 0; at < order.size();) {
      const std::size_t n = std::min(at == 0 ? first : Tx::read_batch, order.size() - at);
      sort_to(at + n + 1);  // the batch, and the Bound after it
      // Keys in order read fastest: candidates are in order, so are their places.
      places.clear();
      for (std::size_t i = at; i < at + n; ++i) places.push_back(order[i].second);
      std::sort(places.begin(), places.end());
      batch.clear();
      for (auto i : places) batch.push_back(candidates[i]);
      const std::size_t from = found.docs.size();
      if (auto t = take_each(batch); !t) return t.error();
      if (auto r = rank_from(from); !r) return r.error();
      at += n;
      if (at == order.size() || found.matches.size() <= window) continue;
      // The max_window-th best match, against the best Bound left (with a margin for the
      // rounding of the two computations).
      kept.clear();
      for (const auto& m : found.matches) kept.push_back(Bound{m.exact, m.matched, m.score});
      const auto last = kept.begin() + static_cast<std::ptrdiff_t>(window - 1);
      std::nth_element(kept.begin(), last, kept.end(), above);
      Bound next = order[at].first;
      next.score = next.score * (1 + 1e-9) + 1e-12;
      if (above(*last, next)) break;
    }
    return {};
  }

  /// The documents of `kinds` in `deleted`'s state by name, then id (`descending`: from the
  /// last), that the caller may view, into found.docs through `take_each`, until one more than
  /// max_window: what `*` sorted by name shows, counts (a total past max_window is "at least")
  /// and facets. Each kind's list keys (L) are in that order after their prefix (name 0x00 id);
  /// the walk merges them, reading the documents a batch at a time. Descending, ids of one name
  /// come last first too, where the ranking wants them first (then ascending by id): the walk
  /// then reads on past the window until the name changes. Errors: storage.
  template <class TakeEach>
  Result<void> take_by_name(KindSet kinds, bool deleted, bool descending, Found& found,
                            TakeEach& take_each) {
    std::vector<std::unique_ptr<storage::Cursor>> lists;
    for (Kind k : all_kinds) {
      if (!kinds.contains(k) || !si::searched(k)) continue;
      auto c = tx_.raw().scan(storage::prefix_range(keys::list_prefix(k, deleted, keys::all_scope)),
                              descending ? storage::Direction::reverse : storage::Direction::forward);
      if (!c) return c.error();
      if ((*c)->valid()) lists.push_back(std::move(*c));
    }
    const auto position = [](const storage::Cursor& c) {
      return c.key().substr(keys::list_prefix_size);
    };
    // The list whose position comes next, and that position.
    const auto next = [&]() -> Result<std::pair<std::size_t, keys::ListPositionKey>> {
      std::size_t best = 0;
      for (std::size_t i = 1; i < lists.size(); ++i)
        if (descending ? position(*lists[i]) > position(*lists[best])
                       : position(*lists[i]) < position(*lists[best]))
          best = i;
      auto at = keys::decode_list_position(position(*lists[best]));
      if (!at) return fail(Errc::storage, "corrupt list key " + keys::printable(lists[best]->key()));
      return std::pair(best, *at);
    };
    const auto enough = static_cast<std::size_t>(max_window) + 1;
    std::string last;  // the name of the last entry taken
    // Enough once max_window + 1 are kept; descending, once the name past them changes too.
    const auto more = [&]() -> Result<bool> {
      if (lists.empty()) return false;
      if (found.docs.size() < enough) return true;
      if (!descending) return false;
      auto n = next();
      if (!n) return n.error();
      return n->second.name == last;
    };
    std::vector<Uuid> ids;
    for (;;) {
      auto go = more();
      if (!go) return go.error();
      if (!*go) break;
      ids.clear();
      const std::size_t batch =
          found.docs.size() < enough ? std::min(Tx::read_batch, enough - found.docs.size()) : 1;
      while (!lists.empty() && ids.size() < batch) {
        auto n = next();
        if (!n) return n.error();
        const auto [best, at] = *n;
        ids.push_back(at.id);
        last.assign(at.name);
        if (auto moved = lists[best]->next(); !moved) return moved.error();
        if (!lists[best]->valid()) lists.erase(lists.begin() + static_cast<std::ptrdiff_t>(best));
      }
      const std::size_t from = found.docs.size();
      if (auto t = take_each(ids); !t) return t.error();
      std::size_t kept = from;
      for (std::size_t i = from; i < found.docs.size(); ++i) {
        auto visible = can_view(found.docs[i]);
        if (!visible) return visible.error();
        if (*visible) found.docs[kept++] = found.docs[i];
      }
      found.docs.resize(kept);
    }
    return {};
  }

  Result<bool> can_view(const si::RankingView& d) {
    if (who_.is_admin) return true;
    const auto k = static_cast<std::size_t>(d.kind);
    if (!kind_checked_[k]) {
      Operation op = Operation::view_basic;
      RecordResource resource(tx_, d.kind, nullptr);
      auto a = authorize(tx_, who_, {&op, 1}, resource);
      if (!a && a.error().kind() != ErrorKind::forbidden) return a.error();
      kind_checked_[k] = true;
      kind_visible_[k] = a.has_value();
    }
    if (kind_visible_[k]) return true;
    auto r = tx_.find(d.id);
    if (!r) return r.error();
    if (!*r) return false;
    Operation op = Operation::view_basic;
    RecordResource resource(tx_, d.kind, &**r);
    auto a = authorize(tx_, who_, {&op, 1}, resource);
    if (!a && a.error().kind() != ErrorKind::forbidden) return a.error();
    return a.has_value();
  }

  double idf(std::int64_t df) const {
    const double n =
        static_cast<double>(std::max<std::int64_t>(stats_[si::field_count].documents, 1));
    const double d = static_cast<double>(std::max<std::int64_t>(df, 0));
    return std::log(1 + (n - d + 0.5) / (d + 0.5));
  }

  /// The length-normalised, weighted count of a field.
  double weigh(double len, Field f, double count, bool scoped) const {
    const auto i = static_cast<std::size_t>(f);
    const double w = si::field_weight[i] > 0 ? si::field_weight[i] : (scoped ? 1.0 : 0.0);
    const auto& s = stats_[i];
    const double avg =
        s.documents > 0 ? static_cast<double>(s.length) / static_cast<double>(s.documents) : 1.0;
    return w * count / (1 - b + b * (avg > 0 ? len / avg : 1.0));
  }

  /// A prepared word's postings for one document, found once.
  struct Found1 {
    FieldCounts whole, stem, stem_word;
    std::vector<FieldCounts> parts, part_stems, part_stem_words;
  };
  static Found1 find_in(const PreparedWord& p, const Uuid& id) {
    Found1 f;
    if (p.whole) f.whole = p.whole->find(id);
    if (p.whole_stem) f.stem = p.whole_stem->find(id);
    if (p.whole_stem_word) f.stem_word = p.whole_stem_word->find(id);
    for (const auto* l : p.parts) f.parts.push_back(l->find(id));
    for (const auto& [marked, plain] : p.part_stems) {
      f.part_stems.push_back(marked ? marked->find(id) : FieldCounts{});
      f.part_stem_words.push_back(plain ? plain->find(id) : FieldCounts{});
    }
    return f;
  }

  /// The count of a query word in one field: the whole word's, else the least of its parts'
  /// when all are there; `stemmed`, the same over the words that share their stems.
  static std::uint32_t count_of(const Found1& f, Field field, bool stemmed) {
    auto one = [&](const FieldCounts& a, const FieldCounts& b) {
      return stemmed ? a.in(field) + b.in(field) : a.in(field);
    };
    if (auto n = stemmed ? one(f.stem, f.stem_word) + f.whole.in(field) : f.whole.in(field))
      return n;
    const std::size_t parts = f.parts.size();
    if (parts == 0) return 0;
    std::uint32_t least = 0xffffffff;
    for (std::size_t i = 0; i < parts; ++i) {
      std::uint32_t n = f.parts[i].in(field);
      if (stemmed && i < f.part_stems.size()) n += one(f.part_stems[i], f.part_stem_words[i]);
      least = std::min(least, n);
      if (least == 0) return 0;
    }
    return least;
  }

  /// A query word's BM25F score in a document, 0 when it does not match.
  double word_score(const PreparedWord& p, const si::RankingView& d, FieldMask fields,
                    bool scoped, bool bounded = false) const {
    return score_found(p, find_in(p, d.id), bounded ? nullptr : d.lengths.data(), fields, scoped);
  }

  /// word_score() of the postings `f1` found for a document whose fields have `lengths`
  /// words; nullptr: the least of the class its postings give (a bound: the fields a word
  /// scores in are those its postings hold).
  double score_found(const PreparedWord& p, const Found1& f1, const std::uint32_t* lengths,
                     FieldMask fields, bool scoped) const {
    std::array<std::uint32_t, si::field_count> least{};
    if (!lengths) {
      const auto note = [&](const FieldCounts& counts) {
        for (auto* c = counts.begin; c != counts.end; ++c)
          least[static_cast<std::size_t>(c->field)] = si::length_floor(c->length_class);
      };
      note(f1.whole), note(f1.stem), note(f1.stem_word);
      for (const auto* all : {&f1.parts, &f1.part_stems, &f1.part_stem_words})
        for (const auto& counts : *all) note(counts);
      lengths = least.data();
    }
    double weighted = 0;
    if (f1.parts.empty()) {
      // A word without parts (most are): its counts per field read once from each posting.
      std::array<std::uint32_t, si::field_count> plain{}, stems{};
      for (auto* c = f1.whole.begin; c != f1.whole.end; ++c)
        plain[static_cast<std::size_t>(c->field)] += c->count;
      for (const auto* counts : {&f1.stem, &f1.stem_word})
        for (auto* c = counts->begin; c != counts->end; ++c)
          stems[static_cast<std::size_t>(c->field)] += c->count;
      for (std::size_t i = 0; i < si::field_count; ++i) {
        const auto f = static_cast<Field>(i);
        if (!(fields & bit(f))) continue;
        double count = plain[i];
        if (count == 0 && si::stemmed(f)) count = stemmed_share * stems[i];
        if (count > 0) weighted += weigh(lengths[i], f, count, scoped);
      }
      return weighted > 0 ? bm25(p.idf, weighted) : 0.0;
    }
    for (std::size_t i = 0; i < si::field_count; ++i) {
      const auto f = static_cast<Field>(i);
      if (!(fields & bit(f))) continue;
      double count = count_of(f1, f, false);
      if (count == 0 && si::stemmed(f)) count = stemmed_share * count_of(f1, f, true);
      if (count > 0) weighted += weigh(lengths[i], f, count, scoped);
    }
    return weighted > 0 ? bm25(p.idf, weighted) : 0.0;
  }

  /// phrase_fields() over `candidates`, fields of the document's own names and description;
  /// nullopt when the stored record is not in the form scan_document_string reads.
  Result<std::optional<FieldMask>> own_phrase_fields(const Clause& c, const si::RankingView& d,
                                                     FieldMask candidates) {
    FieldMask out = 0;
    const std::pair<Field, std::string_view> names[] = {
        {Field::name, d.name}, {Field::display_name, d.display_name}, {Field::fqn, d.fqn}};
    for (const auto& [field, text] : names)
      if ((candidates & bit(field)) && search::has_phrase(text, c.phrase)) out |= bit(field);
    if (!(candidates & bit(Field::description))) return std::optional<FieldMask>(out);
    auto bytes = tx_.raw().get_view(keys::entity(d.id));
    if (!bytes) return bytes.error();
    if (!*bytes) return std::optional<FieldMask>(out);
    std::optional<std::string_view> description;
    if (!scan_document_string(**bytes, wire::description(), description, text_buffer_))
      return std::optional<FieldMask>();
    if (description && search::has_phrase(*description, c.phrase))
      out |= bit(Field::description);
    return std::optional<FieldMask>(out);
  }

  /// The fields where the phrase's words stand consecutively: those of the postings for two
  /// words; for more, those of the fields' texts where the postings say they can.
  Result<FieldMask> phrase_fields(const Clause& c, const si::RankingView& d) {
    const FieldMask pairs = fields_with_pairs(c, d.id);
    if (!pairs || c.phrase.size() == 2) return pairs;
    // Where each inner word occurs once in the field, the pairs chain: the phrase stands
    // there. The text is read for the other fields only.
    const FieldMask chained = fields_with_single_inner_words(c, d.id, pairs);
    const FieldMask candidates = pairs & ~chained;
    if (!candidates) return chained;
    // The common case, a phrase in names or descriptions: the names are in the document, and
    // the description is read from the stored record without decoding the rest of it.
    constexpr FieldMask own = bit(Field::name) | bit(Field::display_name) | bit(Field::fqn) |
                              bit(Field::description);
    if (!(candidates & ~own)) {
      auto fields = own_phrase_fields(c, d, candidates);
      if (!fields) return fields.error();
      if (*fields) return **fields | chained;
    }
    constexpr FieldMask related =
        bit(Field::owner) | bit(Field::service) | bit(Field::glossary) | bit(Field::domain);
    auto t = texts(d.id, (candidates & related) != 0);
    if (!t) return t.error();
    FieldMask out = chained;
    for (const auto& ft : *t)
      if ((candidates & bit(ft.field)) && !(out & bit(ft.field)) &&
          search::has_phrase(ft.text, c.phrase))
        out |= bit(ft.field);
    return out;
  }

  /// A clause's score in a document; 0 when it does not match.
  Result<double> clause_score(const Clause& c, const si::RankingView& d, bool bounded = false) {
    switch (c.type) {
    case ClauseType::word: return word_score(c.prepared.front(), d, c.fields, c.scoped, bounded);
    case ClauseType::prefix: {
      // The best of the expansions; those whose postings do not hold the document score 0.
      double best = 0;
      const auto below = [](const auto& holder, const Uuid& id) { return holder.first < id; };
      auto h = std::lower_bound(c.holders.begin(), c.holders.end(), d.id, below);
      for (; h != c.holders.end() && h->first == d.id; ++h)
        best = std::max(best, word_score(c.prepared[h->second], d, c.fields, c.scoped, bounded));
      return best;
    }
    case ClauseType::phrase: {
      auto fields = phrase_fields(c, d);
      if (!fields) return fields.error();
      if (!*fields) return 0.0;
      double total = 0;
      for (const auto& p : c.prepared) total += word_score(p, d, *fields, c.scoped);
      return total;
    }
    }
    return 0.0;
  }

  /// Scores `d` into `m`; false when the clauses exclude it.
  Result<bool> score(const Query& q, const si::RankingView& d, Match& m) {
    std::int64_t matched = 0;
    double total = 0;
    for (const auto& c : q.clauses) {
      auto s = clause_score(c, d);
      if (!s) return s.error();
      const bool hit = *s > 0;
      if (c.occur == Occur::must_not) {
        if (hit) return false;
        continue;
      }
      if (c.occur == Occur::must && !hit) return false;
      if (hit) ++matched, total += *s;
    }
    if (!q.match_all && matched == 0) return false;
    m.matched = matched;
    m.score = total;
    return true;
  }

  Tx& tx_;
  const Principal& who_;
  Postings postings_;
  std::array<si::FieldStats, si::field_count + 1> stats_{};
  std::array<bool, std::size(all_kinds)> kind_checked_{};
  std::array<bool, std::size(all_kinds)> kind_visible_{};
  std::string text_buffer_;  // a description with escapes, unescaped (own_phrase_fields)
};

// ---- highlights ----

// A byte of a word: a letter or digit of ASCII (whatever locale the host set), or any byte of a
// multi-byte character.
bool word_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/// Whether a run of letters and digits holds a highlighted word (or, with `stems`, a word whose
/// stem is one).
bool run_lit(std::string_view run, const std::set<std::string>& words, bool stems) {
  // An ASCII run none of whose lowered text holds a word (or a stem) is not lit: most runs.
  if (std::all_of(run.begin(), run.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    std::string lower(run);
    for (auto& c : lower)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool may = std::any_of(words.begin(), words.end(), [&](const std::string& w) {
      std::string_view plain = w;
      if (!plain.empty() && plain[0] == si::stem_marker) {
        // A stem is mostly a prefix of its words, but not always (city: citi): its start.
        plain.remove_prefix(1);
        if (plain.size() > 3) plain.remove_suffix(1);
      }
      return !plain.empty() && lower.find(plain) != std::string::npos;
    });
    if (!may) return false;
  }
  auto is_lit = [&](const std::string& s) {
    if (words.count(s)) return true;
    if (!stems) return false;
    std::string stem(1, si::stem_marker);
    stem += search::stem(s);
    return words.count(stem) > 0;
  };
  for (const auto& w : search::words(run))
    if (is_lit(w.whole) || std::any_of(w.parts.begin(), w.parts.end(), is_lit)) return true;
  return false;
}

/// Calls `f(start, run, lit)` for each run of `text`: the runs of letters and digits and the
/// runs of other bytes between them (never lit), in order; stops where `f` returns false.
template <class F>
void each_run(std::string_view text, const std::set<std::string>& words, bool stems, F&& f) {
  for (std::size_t i = 0; i < text.size();) {
    const bool word = word_byte(static_cast<unsigned char>(text[i]));
    std::size_t e = i + 1;
    while (e < text.size() && word_byte(static_cast<unsigned char>(text[e])) == word) ++e;
    const auto run = text.substr(i, e - i);
    if (!f(i, run, word && run_lit(run, words, stems))) return;
    i = e;
  }
}

/// `text` with each run of letters and digits that holds a highlighted word wrapped; empty
/// when none does.
std::string light(std::string_view text, const std::set<std::string>& words, bool stems) {
  std::string out;
  bool any = false;
  each_run(text, words, stems, [&](std::size_t, std::string_view run, bool lit) {
    if (lit) {
      any = true;
      out += "<span class=\"text-highlighter\">";
      out += run;
      out += "</span>";
    } else {
      out += run;
    }
    return true;
  });
  return any ? out : std::string();
}

/// Where the first run of `text` that light() would wrap starts.
std::optional<std::size_t> first_lit(std::string_view text, const std::set<std::string>& words,
                                     bool stems) {
  std::optional<std::size_t> first;
  each_run(text, words, stems, [&](std::size_t at, std::string_view, bool lit) {
    if (lit) first = at;
    return !lit;
  });
  return first;
}

/// About 150 characters of a description around its first match.
std::string fragment(std::string_view text, const std::set<std::string>& words) {
  constexpr std::size_t width = 150;
  const auto lit = first_lit(text, words, true);
  if (!lit) return {};
  const std::size_t first = *lit;
  std::size_t start = first > width / 3 ? first - width / 3 : 0;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  std::size_t end = std::min(text.size(), start + width);
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  // Whole words at both ends.
  while (start > 0 && word_byte(static_cast<unsigned char>(text[start - 1])) &&
         word_byte(static_cast<unsigned char>(text[start])))
    ++start;
  while (end < text.size() && word_byte(static_cast<unsigned char>(text[end])) && end > start &&
         word_byte(static_cast<unsigned char>(text[end - 1])))
    ++end;
  return light(text.substr(start, end - start), words, true);
}

Result<std::vector<std::pair<std::string, std::vector<std::string>>>>
highlights(Evaluator& ev, const Uuid& id, const std::set<std::string>& words,
           std::optional<Record>& record) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  if (words.empty()) return out;
  auto t = ev.texts(id, false, &record);  // the fields lit are the entity's own
  if (!t) return t.error();
  auto add = [&](std::string_view field, std::string lit) {
    if (lit.empty()) return;
    for (auto& [f, list] : out)
      if (f == field) {
        list.push_back(std::move(lit));
        return;
      }
    out.emplace_back(std::string(field), std::vector<std::string>{std::move(lit)});
  };
  for (const auto& ft : *t) {
    switch (ft.field) {
    case Field::name: add("name", light(ft.text, words, false)); break;
    case Field::display_name: add("displayName", light(ft.text, words, true)); break;
    case Field::description: add("description", fragment(ft.text, words)); break;
    case Field::synonyms: add("synonyms", light(ft.text, words, false)); break;
    case Field::tags: add("tags", light(ft.text, words, false)); break;
    default: break;
    }
  }
  return out;
}

/// The number of documents of each value of one facet field that contains `needle` (folded;
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
                 needle_.empty() || search::fold(v).find(needle_) != std::string::npos};
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

/// The facets of the best max_window matches (select_best put them first). Errors: storage.
Result<std::vector<Facet>> count_facets(const Found& found, std::span<const std::string_view> fields,
                                        std::string_view contains, std::size_t size) {
  const auto& matches = found.matches;
  const std::size_t window = std::min<std::size_t>(matches.size(), max_window);
  const auto needle = search::fold(contains);
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
    if (!si::decode_facets(d.facets, view))
      return fail(Errc::storage, "corrupt search document");
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

}  // namespace

Result<KindSet> kinds_of_index(std::string_view index) {
  struct Alias {
    std::string_view name, alias;
    Kind kind;
  };
  static constexpr Alias aliases[] = {
      {"mlmodel_search_index", "mlmodel", Kind::mlmodel},
      {"glossary_search_index", "glossary", Kind::glossary},
      {"glossary_term_search_index", "glossaryTerm", Kind::glossary_term},
      {"search_entity_search_index", "searchIndex", Kind::search_index},
      {"domain_search_index", "domain", Kind::domain},
      {"team_search_index", "team", Kind::team},
      {"user_search_index", "user", Kind::user},
      {"mlmodel_service_search_index", "mlModelService", Kind::mlmodel_service},
      {"search_service_search_index", "searchService", Kind::search_service},
  };
  for (const auto& a : aliases)
    if (index == a.name || index == a.alias) return KindSet{a.kind};
  if (index == "dataAsset") return KindSet{Kind::mlmodel, Kind::glossary_term, Kind::search_index};
  if (index == "all")
    return KindSet{Kind::mlmodel,  Kind::glossary_term,   Kind::search_index,
                   Kind::glossary, Kind::mlmodel_service, Kind::search_service};
  return fail(Errc::invalid_parameter,
              "Invalid parameter index: unknown index " + std::string(index));
}

Result<void> check(const SearchRequest& r) {
  if (auto k = kinds_of_index(r.index); !k) return k.error();
  if (r.from < 0)
    return fail(Errc::invalid_parameter, "Invalid parameter from: must not be negative");
  if (r.size < 0)
    return fail(Errc::invalid_parameter, "Invalid parameter size: must not be negative");
  if (r.from > max_window || r.size > max_window || r.from + r.size > max_window)
    return fail(Errc::invalid_parameter, "Invalid parameter from + size: more than " +
                                             std::to_string(max_window) +
                                             "; use search_after to go further");
  auto q = parse(r.q);
  if (!q) return q.error();
  auto order = order_of(r, !q->match_all);
  if (!order) return order.error();
  if (r.filter)
    if (auto f = check_filter(*r.filter, 1); !f) return f.error();
  if (r.search_after) {
    const auto& after = *r.search_after;
    const bool score = order->field == SortField::score;
    const std::size_t n = score ? 5 : 2;
    bool ok = after.size() == n;
    auto is_number = [](const SortValue& v) { return !std::holds_alternative<std::string>(v); };
    auto is_text = [](const SortValue& v) { return std::holds_alternative<std::string>(v); };
    if (ok && score)
      ok = is_number(after[0]) && is_number(after[1]) && is_number(after[2]) && is_text(after[3]) &&
           is_text(after[4]);
    else if (ok)
      ok = (order->field == SortField::name || order->field == SortField::display_name
                ? is_text(after[0])
                : is_number(after[0])) &&
           is_text(after[1]);
    if (!ok)
      return fail(Errc::invalid_parameter,
                  "Invalid parameter search_after: expected the sort values of a hit of this "
                  "sort (" +
                      std::to_string(n) + " values)");
  }
  return {};
}

Result<Ranked> search(Tx& tx, const Principal& who, const SearchRequest& request) {
  if (auto c = check(request); !c) return c.error();
  auto kinds = kinds_of_index(request.index);
  Evaluator ev(tx, who);
  auto found = ev.run(request.q, *kinds, request.deleted, request.filter, &request);
  if (!found) return found.error();
  Ranked out;
  auto& matches = found->matches;
  out.total = static_cast<std::int64_t>(matches.size());
  if (!request.track_total_hits && out.total > max_window) {
    out.total = max_window;
    out.total_exact = false;
  }
  const auto& order = found->order;
  select_best(matches, max_window, order);
  auto facets = count_facets(*found, facet_fields, {}, max_buckets);
  if (!facets) return facets.error();
  out.facets = std::move(*facets);
  // The page: the matches after search_after (all of them without it), from `from` on.
  auto first = matches.begin(), last = matches.end();
  if (request.search_after) {
    last = std::partition(first, last, [&](const Match& m) {
      return before(*request.search_after, sort_values(m, order.field), order);
    });
  } else if (matches.size() > max_window) {
    last = first + static_cast<std::ptrdiff_t>(max_window);  // from + size <= max_window
  }
  const auto from = static_cast<std::size_t>(request.from);
  const auto size = static_cast<std::size_t>(request.size);
  order_first(first, last, from + size, order);
  if (tx.raw().reads_ahead()) {
    // The page's records, which highlighting and rendering read, fetched together: one round
    // trip on PostgreSQL instead of one a hit.
    std::vector<Uuid> page;
    for (std::size_t i = from; i < static_cast<std::size_t>(last - first) && page.size() < size; ++i)
      page.push_back(first[static_cast<std::ptrdiff_t>(i)].doc->id);
    if (auto p = prefetch_records(tx, page); !p) return p.error();
  }
  for (std::size_t i = from; i < static_cast<std::size_t>(last - first) && out.hits.size() < size;
       ++i) {
    const auto& m = first[static_cast<std::ptrdiff_t>(i)];
    RankedHit h;
    h.id = m.doc->id;
    h.kind = m.doc->kind;
    h.score = m.score;
    h.sort = sort_values(m, found->order.field);
    auto lit = highlights(ev, h.id, found->highlight_words, h.record);
    if (!lit) return lit.error();
    h.highlight = std::move(*lit);
    out.hits.push_back(std::move(h));
  }
  if (!found->query.match_all && !matches.empty()) {
    double best = 0;
    for (const auto& m : matches) best = std::max(best, m.score);
    out.max_score = best;
  }
  return out;
}

Result<std::vector<Suggested>> suggest(Tx& tx, const Principal& who, std::string_view q,
                                       std::string_view index, std::int64_t size) {
  auto kinds = kinds_of_index(index);
  if (!kinds) return kinds.error();
  if (size < 0 || size > max_suggest)
    return fail(Errc::invalid_parameter,
                "Invalid parameter size: must be between 0 and " + std::to_string(max_suggest));
  if (q.size() > max_query_bytes)
    return fail(Errc::invalid_parameter,
                "Invalid parameter q: longer than " + std::to_string(max_query_bytes) + " bytes");
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
  // Keeps the visible ones among `group` not kept or refused before, by name then id.
  auto take = [&](const std::vector<Uuid>& group, double score) -> Result<void> {
    std::vector<const si::Document*> found;
    for (const auto& id : group) {
      if (seen.count(id) != 0) continue;
      auto at = std::lower_bound(docs.begin(), docs.end(), id,
                                 [](const si::Document& d, const Uuid& i) { return d.id < i; });
      if (at != docs.end() && at->id == id) found.push_back(&*at);
    }
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
  if (auto t = take(exact, 3.0); !t) return t.error();
  if (auto t = take(starting, 2.0); !t) return t.error();
  if (auto t = take(by_word, 1.0); !t) return t.error();
  if (tx.raw().reads_ahead()) {
    // The records the caller renders, fetched together: one round trip on PostgreSQL.
    std::vector<Uuid> page;
    for (const auto& s : out) page.push_back(s.id);
    if (auto p = prefetch_records(tx, page); !p) return p.error();
  }
  return out;
}

Result<Facet> aggregate(Tx& tx, const Principal& who, const AggregateRequest& request) {
  auto kinds = kinds_of_index(request.index);
  if (!kinds) return kinds.error();
  if (std::find(std::begin(facet_fields), std::end(facet_fields), request.field) ==
      std::end(facet_fields))
    return fail(Errc::invalid_parameter,
                "Invalid parameter field: " + request.field + " is not a facet field");
  if (request.size < 0 || request.size > static_cast<std::int64_t>(max_buckets))
    return fail(Errc::invalid_parameter,
                "Invalid parameter size: must be between 0 and " + std::to_string(max_buckets));
  Evaluator ev(tx, who);
  auto found = ev.run(request.q, *kinds, request.deleted, std::nullopt, nullptr);
  if (!found) return found.error();
  const std::string_view field = request.field;
  select_best(found->matches, max_window, found->order);
  auto facets = count_facets(*found, {&field, 1}, request.value,
                             static_cast<std::size_t>(request.size));
  if (!facets) return facets.error();
  return std::move(facets->front());
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_QUERY_IPP
