#ifndef CATALOG_IMPL_SEARCH_CANDIDATES_IPP
#define CATALOG_IMPL_SEARCH_CANDIDATES_IPP

// The postings of a query's words (docs/SEARCH_INDEX.md), read once per query, and the documents
// they name as candidates: every document a query can match, and few more.

#include <catalog/detail/search/query_parts.hpp>

#include <algorithm>
#include <array>
#include <catalog/detail/engine/wire.hpp>
#include <catalog/detail/search/analyzer.hpp>
#include <limits>
#include <tuple>

namespace catalog::engine::search_query {

namespace {

/// Prefix queries expand to the most frequent words with the prefix, at most this many.
constexpr std::size_t max_expansions = 64;
/// Postings a prefix expansion reads at most.
constexpr std::size_t max_expansion_scan = 100000;

}  // namespace

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

Result<const PostingList*> Postings::get(const std::string& word, bool next, std::size_t most) {
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

Result<const PostingList*> Postings::get_in(const std::string& word, const std::vector<Uuid>& ids) {
  PostingList& list = partial_.emplace_back();
  std::vector<std::string> keys;
  std::vector<si::PostingField> counts;
  std::optional<Error> bad;
  for (std::size_t at = 0; at < ids.size(); at += Tx::read_batch) {
    const auto count = std::min(Tx::read_batch, ids.size() - at);
    keys.clear();
    for (std::size_t i = 0; i < count; ++i) keys.push_back(keys::posting(word, ids[at + i]));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    auto read = tx_.raw().get_each(views, [&](std::size_t i, std::optional<std::string_view> v) {
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

namespace {

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

}  // namespace

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
    for (auto& reading : c.as_parts)
      if (auto r = prepare(postings, reading); !r) return r;
    return {};
  case ClauseType::prefix:
    // Each expansion, with the words typed before it when the typed word split: a word of those
    // parts, which matches where all of them stand.
    for (const auto& w : c.expanded) {
      QueryWord word{w, {}};
      if (!c.word.parts.empty()) {
        word.whole.clear();
        word.parts = c.word.parts;
        word.parts.push_back(w);
      }
      if (auto r = add(word, false); !r) return r;
    }
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

namespace {

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

}  // namespace

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

namespace {

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
    for (const auto& reading : c.as_parts) {
      // Each reading's ids ascend: merged, each once.
      const auto middle = static_cast<std::ptrdiff_t>(ids.size());
      add_phrase_ids(reading, ids);
      std::inplace_merge(ids.begin(), ids.begin() + middle, ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    }
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

}  // namespace

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
      std::erase_if(
          out, [&](const Uuid& id) { return !std::binary_search(other.begin(), other.end(), id); });
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

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_CANDIDATES_IPP
