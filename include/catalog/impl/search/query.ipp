#ifndef CATALOG_IMPL_SEARCH_QUERY_IPP
#define CATALOG_IMPL_SEARCH_QUERY_IPP

// Query evaluation (docs/SEMANTICS.md §16): the query's candidates read, filtered and checked for
// permission on each one's search document, scored by BM25F and ranked; then the answer: the
// total, the facets and the page with its highlights. The parts it uses are declared in
// <catalog/detail/search/query_parts.hpp>.

#include <catalog/detail/search/query_parts.hpp>

#include <catalog/detail/engine/references.hpp>
#include <catalog/detail/engine/wire.hpp>
#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/utf8.hpp>
#include <catalog/uuid.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>

namespace catalog::engine::search_query {

namespace {

constexpr double k1 = 1.2;
constexpr double b = 0.75;
/// A stemmed-only match counts this much of an unstemmed one.
constexpr double stemmed_share = 0.5;
/// Candidates, in windows (max_window), past which a query ranked by score on a backend whose
/// reads cost no round trip reads only the documents its bounds do not rule out (take_best).
constexpr std::size_t bounded_from = 4;

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
  std::vector<Light> lights;  // what lights the hits: one per clause that is not excluded
};

/// The best max_window of `matches`, once select_best put them first.
std::span<const Match> window_of(const std::vector<Match>& matches) {
  return {matches.data(), std::min<std::size_t>(matches.size(), max_window)};
}

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
      for (auto& reading : c.as_parts)
        for (auto& p : reading.prepared) p.idf = idf(p.df);
    }
    const auto light = [&](const Clause& c) {
      found.lights.push_back({c.fields, atoms_of(c),
                              c.type == ClauseType::phrase ? c.phrase : std::vector<std::string>{}});
    };
    for (const auto& c : qu.clauses)
      if (c.occur != Occur::must_not) {
        light(c);
        for (const auto& reading : c.as_parts) light(reading);
      }
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
          // The better of the readings (Clause::as_parts).
          const auto bound = [&](const Clause& reading) {
            double b = 0;
            if (const FieldMask common = fields_with_pairs(reading, id))
              for (const auto& w : reading.prepared)
                b += word_score(w, probe, common, reading.scoped, true);
            return b;
          };
          s = bound(c);
          for (const auto& reading : c.as_parts) s = std::max(s, bound(reading));
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
      auto c =
          tx_.raw().scan(storage::prefix_range(keys::list_prefix(k, deleted, keys::all_scope)),
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
      if (!at)
        return fail(Errc::storage, "corrupt list key " + keys::printable(lists[best]->key()));
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
  double word_score(const PreparedWord& p, const si::RankingView& d, FieldMask fields, bool scoped,
                    bool bounded = false) const {
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
    if (description && search::has_phrase(*description, c.phrase)) out |= bit(Field::description);
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
    constexpr FieldMask own =
        bit(Field::name) | bit(Field::display_name) | bit(Field::fqn) | bit(Field::description);
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
      // The better of the readings (Clause::as_parts).
      double best = 0;
      for (std::size_t r = 0; r <= c.as_parts.size(); ++r) {
        const Clause& reading = r == 0 ? c : c.as_parts[r - 1];
        auto fields = phrase_fields(reading, d);
        if (!fields) return fields.error();
        if (!*fields) continue;
        double total = 0;
        for (const auto& p : reading.prepared) total += word_score(p, d, *fields, reading.scoped);
        best = std::max(best, total);
      }
      return best;
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
    // A hit's sort values (order.ipp, sort_values): under _score, whether it matched the whole
    // query, the words it matched, its score, its name and id; else the sort field and the id.
    const auto& after = *r.search_after;
    std::vector<bool> text{true, true};  // whether each value is text, else a number
    if (order->field == SortField::score)
      text = {false, false, false, true, true};
    else if (order->field != SortField::name && order->field != SortField::display_name)
      text[0] = false;
    if (after.size() != text.size())
      return fail(Errc::invalid_parameter,
                  "Invalid parameter search_after: a hit of this sort has " +
                      std::to_string(text.size()) + " sort values, not " +
                      std::to_string(after.size()));
    for (std::size_t k = 0; k < text.size(); ++k)
      if (std::holds_alternative<std::string>(after[k]) != text[k])
        return fail(Errc::invalid_parameter, "Invalid parameter search_after: value " +
                                                 std::to_string(k + 1) + " must be " +
                                                 (text[k] ? "a string" : "a number"));
    if (!parse_uuid(std::get<std::string>(after.back())))
      return fail(Errc::invalid_parameter,
                  "Invalid parameter search_after: the last value is not an id");
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
  auto facets = count_facets(window_of(matches), facet_fields, {}, max_buckets);
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
    for (std::size_t i = from; i < static_cast<std::size_t>(last - first) && page.size() < size;
         ++i)
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
    if (!found->lights.empty()) {
      auto texts = ev.texts(h.id, false, &h.record);  // the fields lit are the entity's own
      if (!texts) return texts.error();
      h.highlight = highlights(*texts, found->lights);
    }
    out.hits.push_back(std::move(h));
  }
  if (!found->query.match_all && !matches.empty()) {
    double best = 0;
    for (const auto& m : matches) best = std::max(best, m.score);
    out.max_score = best;
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
  if (!detail::valid_utf8(request.value))
    return fail(Errc::invalid_parameter, "Invalid parameter value: not UTF-8");
  Evaluator ev(tx, who);
  auto found = ev.run(request.q, *kinds, request.deleted, std::nullopt, nullptr);
  if (!found) return found.error();
  const std::string_view field = request.field;
  select_best(found->matches, max_window, found->order);
  auto facets = count_facets(window_of(found->matches), {&field, 1}, request.value,
                             static_cast<std::size_t>(request.size));
  if (!facets) return facets.error();
  return std::move(facets->front());
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_QUERY_IPP
