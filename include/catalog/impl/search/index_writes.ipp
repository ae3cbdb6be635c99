#ifndef CATALOG_IMPL_SEARCH_INDEX_WRITES_IPP
#define CATALOG_IMPL_SEARCH_INDEX_WRITES_IPP

// The search index kept by every write and rebuilt by a reindex (docs/SEARCH_INDEX.md, "How a
// write keeps it"): the update that writes only the keys whose bytes change, buffered and
// written in key order, and the reindex's steps, whose documents a second thread makes.

#include <catalog/detail/search/index.hpp>

#include <catalog/detail/engine/reference_sort.hpp>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace catalog::engine::search_index {

namespace {

/// Index writes gathered, then made at once in key order (docs/SEARCH_INDEX.md, "Writing").
/// Index keys begin with a word or a name, so an entity's keys are spread over the whole index;
/// the keys of many entities in order fall on the same pages one after another, where LMDB often
/// finds the next without descending from the root, and on pages still in cache. Each key is
/// written at most once (an entity's keys hold its id, and an update visits each entity once);
/// the field statistics, shared by all, are summed and written once per key. Gathering and
/// sorting touch no transaction: a reindex does them on another thread.
class WriteBuffer {
 public:
  Result<void> put(std::string_view key, std::string_view value) {
    add(key, value, false);
    return {};
  }
  Result<void> erase(std::string_view key) {
    add(key, {}, true);
    return {};
  }
  void add_field_stats(unsigned field, unsigned shard, std::int64_t documents,
                       std::int64_t length) {
    if (documents == 0 && length == 0) return;
    auto& s = stats_[{field, shard}];
    s.first += documents;
    s.second += length;
  }
  std::size_t bytes() const { return bytes_.size(); }

  /// Puts the writes in key order, and in the order made where keys are equal (as written one by
  /// one). What is sorted is 24 bytes a write: the key's first 16 bytes (a tag and most of a
  /// word) and its position; whole keys are compared only where those tie.
  void sort() {
    order_.clear();
    order_.reserve(writes_.size());
    for (std::size_t i = 0; i < writes_.size(); ++i) order_.push_back({name_head(key(i)), i});
    sort_references(order_, [&](const HeadKey& a, const HeadKey& b) {
      const int c = key(a.index).compare(key(b.index));
      return c != 0 ? c < 0 : a.index < b.index;
    });
  }

  /// Applies the statistics' sums to their stored values, then every write in the order sort()
  /// gave, and empties the buffer.
  Result<void> write_to(storage::Transaction& txn) {
    // The statistics' stored values in one round trip where reads cost one each (PostgreSQL):
    // a write changes those of its fields in its shard, a reindex part all of them.
    if (txn.reads_ahead() && !stats_.empty()) {
      std::vector<std::string> keys;
      for (const auto& [at, delta] : stats_) keys.push_back(keys::field_stats(at.first, at.second));
      std::vector<std::string_view> views(keys.begin(), keys.end());
      if (auto p = txn.prefetch(views, {}); !p) return p.error();
    }
    for (const auto& [at, delta] : stats_)
      if (auto s = apply_stats(txn, at.first, at.second, delta.first, delta.second); !s) return s;
    stats_.clear();
    // The writes are visited out of the order they were made in: each one's bytes are asked for
    // a little ahead, so that they arrive before LMDB copies them.
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < order_.size(); ++i) {
      if (i + ahead < order_.size())
        __builtin_prefetch(bytes_.data() + writes_[order_[i + ahead].index].at);
      const std::size_t w = order_[i].index;
      if (writes_[w].erase) {
        if (auto e = txn.erase(key(w)); !e) return e.error();
      } else if (auto p = txn.put(key(w), value(w)); !p) {
        return p.error();
      }
    }
    writes_.clear();
    bytes_.clear();
    order_.clear();
    return {};
  }

 private:
  // A write's key and then its value, at `at` in bytes_.
  struct Write {
    std::size_t at;
    std::uint32_t key_size;
    std::uint32_t value_size;
    bool erase;
  };

  void add(std::string_view k, std::string_view v, bool erase) {
    writes_.push_back({bytes_.size(), static_cast<std::uint32_t>(k.size()),
                       static_cast<std::uint32_t>(v.size()), erase});
    bytes_.append(k);
    bytes_.append(v);
  }
  std::string_view key(std::size_t i) const {
    return std::string_view(bytes_).substr(writes_[i].at, writes_[i].key_size);
  }
  std::string_view value(std::size_t i) const {
    return std::string_view(bytes_).substr(writes_[i].at + writes_[i].key_size,
                                           writes_[i].value_size);
  }

  static Result<void> apply_stats(storage::Transaction& txn, unsigned field, unsigned shard,
                                  std::int64_t documents, std::int64_t length) {
    if (documents == 0 && length == 0) return {};
    const auto key = keys::field_stats(field, shard);
    auto v = txn.get(key);
    if (!v) return v.error();
    std::int64_t d = 0, l = 0;
    if (*v) {
      if ((*v)->size() != 16)
        return fail(Errc::storage, "corrupt search statistic " + keys::printable(key));
      d = static_cast<std::int64_t>(keys::decode_u64((*v)->substr(0, 8)));
      l = static_cast<std::int64_t>(keys::decode_u64((*v)->substr(8)));
    }
    d += documents;
    l += length;
    if (d == 0 && l == 0) {
      if (auto e = txn.erase(key); !e) return e.error();
      return {};
    }
    return txn.put(key, keys::encode_u64(static_cast<std::uint64_t>(d)) +
                            keys::encode_u64(static_cast<std::uint64_t>(l)));
  }

  std::vector<Write> writes_;
  std::string bytes_;  // every write's key and value, one after another
  std::vector<HeadKey> order_;
  std::map<std::pair<unsigned, unsigned>, std::pair<std::int64_t, std::int64_t>> stats_;
};

/// The writes of one update into its transaction, written out every `limit` bytes, so that a
/// large update (a recursive delete of many entities) holds bounded memory.
class IndexWrites {
 public:
  explicit IndexWrites(storage::Transaction& txn) : txn_(txn) {}
  Result<void> put(std::string_view key, std::string_view value) {
    (void)buffer_.put(key, value);
    return buffer_.bytes() >= limit ? flush() : Result<void>();
  }
  Result<void> erase(std::string_view key) {
    (void)buffer_.erase(key);
    return buffer_.bytes() >= limit ? flush() : Result<void>();
  }
  void add_field_stats(unsigned field, unsigned shard, std::int64_t documents,
                       std::int64_t length) {
    buffer_.add_field_stats(field, shard, documents, length);
  }
  Result<void> flush() {
    buffer_.sort();
    return buffer_.write_to(txn_);
  }

 private:
  static constexpr std::size_t limit = std::size_t{8} << 20;  // bytes of keys and values
  storage::Transaction& txn_;
  WriteBuffer buffer_;
};

/// Writes the difference between two sets of `text 0x00 id` keys of one family.
template <class Out, class KeyOf>
Result<void> write_set_difference(Out& out, const std::vector<std::string>& before,
                                  const std::vector<std::string>& after, KeyOf key_of) {
  for (const auto& s : before)
    if (!std::binary_search(after.begin(), after.end(), s))
      if (auto e = out.erase(key_of(s)); !e) return e.error();
  for (const auto& s : after)
    if (!std::binary_search(before.begin(), before.end(), s))
      if (auto p = out.put(key_of(s), ""); !p) return p.error();
  return {};
}

/// What update_document reads of one entity in the transaction: its stored document, its record
/// and the record the index was written from, and what other entities give its document.
struct Indexed {
  Uuid id{};
  std::optional<std::string> stored;  // Y
  std::optional<Record> record;       // nullopt: none (hard-deleted)
  /// The record the index was written from, when the transaction wrote the record (Tx::before;
  /// nullopt inside: it had none); when it did not, `record` is that one too.
  std::optional<std::optional<Record>> before;
  Related related;
};

/// Adds the bytes of the entity's stored record to `bytes`.
Result<Indexed> read_indexed(Tx& tx, const Uuid& id, std::size_t& bytes) {
  Indexed in;
  in.id = id;
  auto& txn = tx.raw();
  auto stored = txn.get(keys::search_doc(id));
  if (!stored) return stored.error();
  in.stored = std::move(*stored);
  auto r = tx.find(id, bytes);
  if (!r) return r.error();
  in.record = std::move(*r);
  if (const auto* before = tx.before(id)) {
    in.before.emplace();
    if (*before) {
      auto old = decode(**before);
      if (!old) return old.error();
      in.before->emplace(std::move(*old));
    }
  }
  if (in.record && searched(in.record->kind)) {
    auto rel = read_related(tx, *in.record);
    if (!rel) return rel.error();
    in.related = std::move(*rel);
  }
  return in;
}

/// Asks a backend that pays a round trip per read (PostgreSQL) for all that read_indexed reads of
/// `ids`, in two round trips instead of about six an entity: their documents, records
/// and the edges of their owners, domains and votes; then the records those edges and the
/// records' containers name. Does nothing on the others.
Result<void> prefetch_indexed(Tx& tx, std::span<const Uuid> ids) {
  if (!tx.raw().reads_ahead() || ids.empty()) return {};
  std::vector<std::string> keys;
  std::vector<storage::Range> ranges;
  for (const auto& id : ids) {
    keys.push_back(keys::search_doc(id));
    keys.push_back(keys::entity(id));
    ranges.push_back(storage::prefix_range(keys::reverse_edge_prefix(id, Rel::owns)));
    ranges.push_back(storage::prefix_range(keys::edge_prefix(id, Rel::domain)));
    ranges.push_back(storage::prefix_range(keys::reverse_edge_prefix(id, Rel::votes)));
  }
  std::vector<std::string_view> views(keys.begin(), keys.end());
  if (auto p = tx.raw().prefetch(views, ranges); !p) return p;
  std::vector<Uuid> named;
  for (const auto& id : ids) {
    auto r = tx.find(id);
    if (!r) return r.error();
    if (*r && (*r)->container) named.push_back(*(*r)->container);
    if (*r && (*r)->glossary) named.push_back(*(*r)->glossary);
    for (auto [rel, reverse] : {std::pair{Rel::owns, true}, std::pair{Rel::domain, false}}) {
      auto edges = tx.edges(id, rel, reverse);
      if (!edges) return edges.error();
      for (const auto& e : *edges) named.push_back(e.other);
    }
  }
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  return prefetch_records(tx, named);
}

/// Brings the index of one entity to what it now is, whatever its state, through `out`, from
/// what read_indexed read (consumed); true when a user or team changed what its owned entities
/// show of it. Touches no transaction.
template <class Out>
Result<bool> write_document(Out& out, Indexed& in) {
  const Uuid& id = in.id;
  const auto& stored = in.stored;
  // The document the index holds: its Y record, and the terms of the record it was written
  // from, made again with what the Y record holds of other entities. A Y record that does not
  // decode is replaced whole: its postings, statistics and typeahead keys cannot be known, and
  // verify reports what it left behind.
  std::optional<Document> old;
  if (stored)
    if (auto d = decode_document(*stored)) old = std::move(*d);
  const std::optional<Record>& was = in.before ? *in.before : in.record;
  const bool replaced = old && was && searched(was->kind);
  // The replaced record's document (its terms, or without `analyse` its texts).
  const auto made_before = [&](std::vector<FieldText>* texts, bool analyse, Analysed* analysed) {
    auto related = related_of(*old);
    return make_document(*was, &related, texts, analyse, analysed);
  };
  std::optional<Document> now;
  if (in.record && searched(in.record->kind) && replaced) {
    // The texts alone first (no analysis): where both documents have the same, in the same
    // fields, they have the same terms and lengths, and no posting changes (a soft delete, a
    // restore, a vote, a change of what is not searched). Else both are analysed, a text they
    // share once.
    std::vector<FieldText> before_texts, now_texts;
    (void)made_before(&before_texts, false, nullptr);
    auto related = in.related;
    now = make_document(*in.record, &related, &now_texts, false);
    if (before_texts == now_texts) {
      now->lengths = old->lengths;
    } else {
      Analysed analysed;
      old->terms = made_before(nullptr, true, &analysed).terms;
      now = make_document(*in.record, &in.related, nullptr, true, &analysed);
    }
  } else if (in.record && searched(in.record->kind)) {
    now = make_document(*in.record, &in.related, nullptr, true);
  } else if (replaced) {
    old->terms = made_before(nullptr, true, nullptr).terms;
  }
  if (old == now && (old || !stored)) return false;
  const auto shard = keys::search_shard(id);
  // Postings: only the words whose (field, count) pairs differ. A word's document frequency is
  // the length of its postings, which a query reads whole: no shared count to keep.
  using Words = std::vector<std::span<const Term>>;
  const Words before = old ? postings(*old) : Words();
  const Words after = now ? postings(*now) : Words();
  const auto word = [](std::span<const Term> t) -> const std::string& { return t.front().word; };
  // A word's posting holds the length class of each of its fields: where a field's class
  // changed, the postings of its words are written again, changed counts or not.
  std::array<bool, field_count> reclassed{};
  if (old && now)
    for (std::size_t f = 0; f < field_count; ++f)
      reclassed[f] = length_class(old->lengths[f]) != length_class(now->lengths[f]);
  const auto moved = [&](std::span<const Term> t) {
    return std::any_of(t.begin(), t.end(), [&](const Term& x) {
      return reclassed[static_cast<std::size_t>(x.field)];
    });
  };
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && word(*b) < word(*a))) {
      if (auto e = out.erase(keys::posting(word(*b), id)); !e) return e.error();
      ++b;
    } else if (b == before.end() || word(*a) < word(*b)) {
      if (auto p = out.put(keys::posting(word(*a), id), encode_posting(*a, now->lengths)); !p)
        return p.error();
      ++a;
    } else {
      if (!std::equal(a->begin(), a->end(), b->begin(), b->end()) || moved(*a))
        if (auto p = out.put(keys::posting(word(*a), id), encode_posting(*a, now->lengths)); !p)
          return p.error();
      ++a;
      ++b;
    }
  }
  // Field statistics.
  for (std::size_t f = 0; f < field_count; ++f) {
    const std::int64_t lb = old ? old->lengths[f] : 0, la = now ? now->lengths[f] : 0;
    out.add_field_stats(static_cast<unsigned>(f), shard, (la > 0 ? 1 : 0) - (lb > 0 ? 1 : 0),
                        la - lb);
  }
  out.add_field_stats(all_documents, shard, (now ? 1 : 0) - (old ? 1 : 0), 0);
  // Typeahead keys, made of the names alone.
  if (!old || !now || old->name != now->name || old->display_name != now->display_name) {
    const std::vector<std::string> none;
    if (auto k = write_set_difference(
            out, old ? name_entries(*old) : none, now ? name_entries(*now) : none,
            [&](const std::string& s) { return keys::name_entry(s, id); });
        !k)
      return k.error();
    if (auto j = write_set_difference(
            out, old ? name_words(*old) : none, now ? name_words(*now) : none,
            [&](const std::string& s) { return keys::name_word(s, id); });
        !j)
      return j.error();
  }
  // Facet keys, where the facet values changed.
  if (!old || !now || old->owners != now->owners || old->tags != now->tags ||
      old->domains != now->domains || old->service != now->service ||
      old->glossary != now->glossary || old->status != now->status) {
    const std::vector<std::string> none;
    if (auto f = write_set_difference(out, old ? facet_entries(*old) : none,
                                      now ? facet_entries(*now) : none,
                                      [&](const std::string& s) { return keys::facet(s, id); });
        !f)
      return f.error();
  }
  // The document, where its bytes changed.
  if (now) {
    if (auto y = encode(*now); !stored || *stored != y)
      if (auto p = out.put(keys::search_doc(id), std::move(y)); !p) return p.error();
  } else if (stored) {
    if (auto e = out.erase(keys::search_doc(id)); !e) return e.error();
  }
  const bool owner_kind = (old   ? old->kind
                           : now ? now->kind
                                 : Kind::policy) == Kind::user ||
                          (old   ? old->kind
                           : now ? now->kind
                                 : Kind::policy) == Kind::team;
  return owner_kind && old && now &&
         (old->name != now->name || old->display_name != now->display_name);
}

Result<bool> update_document(Tx& tx, IndexWrites& out, const Uuid& id) {
  std::size_t bytes = 0;
  auto in = read_indexed(tx, id, bytes);
  if (!in) return in.error();
  return write_document(out, *in);
}

/// The writes of some entities' documents, in key order: what a reindex's other thread makes.
WriteBuffer write_documents(std::vector<Indexed> in) {
  WriteBuffer out;
  for (auto& x : in) (void)write_document(out, x);  // a WriteBuffer's writes do not fail
  out.sort();
  return out;
}

/// A thread that makes the writes of a reindex's parts (write_documents), one part at a time,
/// beside the transaction's thread: one thread for a whole step, so that its stemmer's memory and
/// its allocator's arena serve every part. On one core, or where no thread can be started, parts
/// are made where they are given.
class PartMaker {
 public:
  PartMaker() {
    if (std::thread::hardware_concurrency() == 1) return;
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
    }
  }
  PartMaker(const PartMaker&) = delete;
  PartMaker& operator=(const PartMaker&) = delete;
  ~PartMaker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  /// Starts making a part's writes; the part given before must have been taken.
  void give(std::vector<Indexed> in) {
    if (!thread_.joinable()) {
      out_ = write_documents(std::move(in));
      made_ = true;
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_ = std::move(in);
      given_ = true;
    }
    changed_.notify_all();
  }
  /// The writes of the part given last, once made (what making it threw is thrown here).
  WriteBuffer take() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return made_; });
    made_ = false;
    if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    return std::move(out_);
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || given_; });
      if (stop_) return;
      auto in = std::move(in_);
      given_ = false;
      lock.unlock();
      WriteBuffer out;
      std::exception_ptr failed;
      try {
        out = write_documents(std::move(in));
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      out_ = std::move(out);
      failed_ = failed;
      made_ = true;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Indexed> in_;
  WriteBuffer out_;
  std::exception_ptr failed_;
  bool given_ = false, made_ = false, stop_ = false;
  std::thread thread_;  // last: started once the members it reads are
};

}  // namespace

Result<void> update(Tx& tx) {
  IndexWrites out(tx.raw());
  std::set<Uuid> done;
  auto pending = tx.take_touched();
  while (!pending.empty()) {
    std::sort(pending.begin(), pending.end());
    pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
    std::vector<Uuid> next;
    for (std::size_t at = 0; at < pending.size(); at += reindex_prefetch) {
      const auto ahead = std::span<const Uuid>(pending).subspan(
          at, std::min(reindex_prefetch, pending.size() - at));
      if (auto p = prefetch_indexed(tx, ahead); !p) return p.error();
    }
    for (const auto& id : pending) {
      if (!done.insert(id).second) continue;
      auto changed = update_document(tx, out, id);
      if (!changed) return changed.error();
      if (*changed) {  // what its owned entities show of their owner changed
        auto owned = tx.edges(id, Rel::owns, false);
        if (!owned) return owned.error();
        for (const auto& e : *owned) next.push_back(e.other);
      }
    }
    // Nothing above touches the Tx's own list; a later write (none here) would.
    pending = std::move(next);
  }
  return out.flush();
}

std::string reindex_progress(const Uuid& last) {
  return keys::id_bytes(last) + keys::encode_u64(index_version);
}

std::optional<Uuid> decode_reindex_progress(std::string_view bytes) {
  if (bytes.size() != 24 || keys::decode_u64(bytes.substr(16)) != index_version)
    return std::nullopt;
  return keys::id_from_bytes(bytes.substr(0, 16));
}

Result<bool> current(Tx& tx) {
  auto v = tx.raw().get(keys::meta(analyzer_meta));
  if (!v) return v.error();
  if (!*v || (*v)->size() != 8 || keys::decode_u64(**v) != index_version) return false;
  auto r = tx.raw().get(keys::meta(reindex_meta));
  if (!r) return r.error();
  return !r->has_value();
}

Result<bool> clear_step(Tx& tx, std::size_t batch) {
  std::uint64_t erased = 0;
  for (char tag : families) {
    auto e = tx.raw().erase_range(storage::prefix_range(std::string(1, tag)), batch - erased);
    if (!e) return e.error();
    erased += *e;
    if (erased >= batch) break;
  }
  return erased > 0;
}

Result<std::optional<Uuid>> index_step(Tx& tx, const std::optional<Uuid>& after, std::size_t batch,
                                       std::uint64_t& indexed) {
  auto range = storage::prefix_range(std::string(1, keys::entity_tag));
  if (after) range.begin = keys::entity(*after) + '\0';
  std::vector<Uuid> ids;
  {
    auto cursor = tx.raw().scan(range, storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid() && ids.size() < batch;) {
      if (auto id = keys::decode_entity(c->key())) ids.push_back(*id);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  // Two threads, in turn over parts of the batch (docs/SEARCH_INDEX.md, "Writing"): this one
  // reads a part's entities and writes the keys of the part before, while the other makes the
  // part's documents and their writes in key order (analysis and sorting). The writes are those
  // of update_document, one entity at a time. A part ends at reindex_part_bytes of records, so
  // that large entities hold bounded memory.
  const std::size_t part = std::clamp<std::size_t>((batch + reindex_parts - 1) / reindex_parts, 1,
                                                   reindex_part_limit);
  PartMaker maker;
  bool making = false;  // a part given and not yet taken
  std::size_t fetched = 0;  // ids[..fetched] asked for ahead (prefetch_indexed)
  for (std::size_t next = 0; next < ids.size();) {
    std::vector<Indexed> in;
    std::size_t bytes = 0;
    while (next < ids.size() && in.size() < part && bytes < reindex_part_bytes) {
      if (next == fetched) {
        fetched = std::min(ids.size(), next + reindex_prefetch);
        auto ahead = std::span<const Uuid>(ids).subspan(next, fetched - next);
        if (auto p = prefetch_indexed(tx, ahead); !p) return p.error();
      }
      auto x = read_indexed(tx, ids[next++], bytes);
      if (!x) return x.error();
      in.push_back(std::move(*x));
    }
    indexed += in.size();
    // A part's writes follow the part before's, so that the last write of a key wins as it
    // would one entity at a time (an entity's keys are its own; the statistics are sums).
    std::optional<WriteBuffer> before;
    if (making) before = maker.take();
    maker.give(std::move(in));
    making = true;
    if (before)
      if (auto w = before->write_to(tx.raw()); !w) return w.error();
  }
  if (making)
    if (auto w = maker.take().write_to(tx.raw()); !w) return w.error();
  if (ids.empty()) return std::optional<Uuid>();
  return std::optional<Uuid>(ids.back());
}

Result<std::uint64_t> rebuild(Tx& tx) {
  while (true) {
    auto more = clear_step(tx, 100000);
    if (!more) return more.error();
    if (!*more) break;
  }
  std::uint64_t indexed = 0;
  std::optional<Uuid> after;
  while (true) {
    auto last = index_step(tx, after, 100000, indexed);
    if (!last) return last.error();
    if (!*last) break;
    after = *last;
  }
  if (auto p = tx.raw().put(keys::meta(analyzer_meta), keys::encode_u64(index_version));
      !p)
    return p.error();
  if (auto e = tx.raw().erase(keys::meta(reindex_meta)); !e) return e.error();
  return indexed;
}

}  // namespace catalog::engine::search_index

#endif  // CATALOG_IMPL_SEARCH_INDEX_WRITES_IPP
