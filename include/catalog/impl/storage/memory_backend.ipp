#ifndef CATALOG_IMPL_STORAGE_MEMORY_BACKEND_IPP
#define CATALOG_IMPL_STORAGE_MEMORY_BACKEND_IPP

#include <catalog/storage/memory_backend.hpp>

#include <catalog/detail/storage/transaction_state.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// How it works. The store is a sequence of versions; `MemoryState::current` is the newest. A read
// transaction pins the current version and only reads it. A write transaction never touches the
// version it began on while it runs: its changes go to a private overlay (a value, or a tombstone
// for a key erased from the version), which get() and scans merge with the version. So a write
// costs O(log n) and a transaction that only reads copies nothing.
//
// Commit turns the overlay into the next version. If no read transaction holds the current version
// (a count kept per version, raised only under the state mutex), the commit changes that version's
// map in place, under the mutex so that no reader can pin it meanwhile: O(changes), because the
// positions are looked up beforehand, outside the mutex. Otherwise the readers must keep their
// snapshot, so the commit copies the map once (O(n), outside the mutex) and publishes the copy.

namespace catalog::storage {

namespace {

// std::string compares through char_traits<char>, which orders bytes as unsigned char: memcmp
// order, the same as LMDB's default.
using Map = std::map<std::string, std::string, std::less<>>;

// A write transaction's changes over its version: the new value, or nullopt for a key erased from
// the version. A key that is neither in the version nor written has no entry (erasing a key the
// transaction created removes its entry rather than leaving a tombstone).
using Overlay = std::map<std::string, std::optional<std::string>, std::less<>>;

}  // namespace

namespace detail {

// One state of the store.
struct Version {
  Version() = default;
  explicit Version(const Map& from) : map(from) {}

  // Changed only by a commit that holds MemoryState::mutex and has seen `readers` at 0.
  Map map;
  // Read transactions pinning this version. Raised only under MemoryState::mutex, so while a
  // committer holds the mutex and has seen 0, nobody can start reading the map. Lowered by a
  // reader as it ends, without the mutex, with release ordering: the committer's acquire load
  // that reads 0 then orders every read those readers made before its in-place changes.
  std::atomic<std::size_t> readers{0};
};

struct MemoryState {
  // Guards `current` and `writer_active`, and is held while a commit changes `current->map` in
  // place (a reader that begins meanwhile waits: O(changes)).
  std::mutex mutex;
  std::condition_variable writer_done;
  std::shared_ptr<Version> current = std::make_shared<Version>();
  // A flag rather than a held mutex: a write transaction may end on another thread.
  bool writer_active = false;
};

}  // namespace detail

namespace {

using detail::MemoryState;
using detail::Version;

// The single writer slot of a state, held by a write transaction until it ends (also released
// if constructing the transaction fails).
class WriterLease {
 public:
  WriterLease() = default;
  explicit WriterLease(std::shared_ptr<MemoryState> state) : state_(std::move(state)) {}
  ~WriterLease() { release(); }
  WriterLease(WriterLease&&) noexcept = default;
  WriterLease& operator=(WriterLease&& other) noexcept {
    if (this != &other) {
      release();
      state_ = std::move(other.state_);
    }
    return *this;
  }

  // REQUIRES: the slot is held.
  MemoryState& state() const noexcept { return *state_; }

  void release() noexcept {
    if (!state_) {
      return;
    }
    {
      std::lock_guard lock(state_->mutex);
      state_->writer_active = false;
    }
    state_->writer_done.notify_one();
    state_.reset();
  }

 private:
  std::shared_ptr<MemoryState> state_;
};

// A read transaction's pin on its version: while it is held, no commit changes the version in
// place. Taken under the state mutex (see Version::readers); released without it.
class ReaderPin {
 public:
  ReaderPin() = default;
  // REQUIRES: the caller holds the state mutex and `version` is current.
  explicit ReaderPin(std::shared_ptr<Version> version) noexcept : version_(std::move(version)) {
    version_->readers.fetch_add(1, std::memory_order_relaxed);
  }
  ~ReaderPin() { release(); }
  ReaderPin(ReaderPin&& other) noexcept = default;
  ReaderPin& operator=(ReaderPin&& other) noexcept {
    if (this != &other) {
      release();
      version_ = std::move(other.version_);
    }
    return *this;
  }

  // After this the reader must not touch the version's map again.
  void release() noexcept {
    if (version_) {
      version_->readers.fetch_sub(1, std::memory_order_release);
      version_.reset();
    }
  }

 private:
  std::shared_ptr<Version> version_;
};

class MemoryTransaction;

// A scan merging the overlay and the version in key order. Each source has an iterator on its
// next candidate in the scan's direction: forward, the candidate is the entry it points to;
// reverse, the one before it (the reverse_iterator convention). The overlay wins over the version
// for an equal key, and a tombstone hides the version's entry.
class MemoryCursor final : public Cursor {
 public:
  MemoryCursor(MemoryTransaction* txn, const Overlay* overlay, const Map* map, const Range& range,
               Direction dir)
      : txn_(txn), overlay_(overlay), map_(map), range_(range), dir_(dir) {}
  ~MemoryCursor() override;
  MemoryCursor(const MemoryCursor&) = delete;
  MemoryCursor& operator=(const MemoryCursor&) = delete;

  bool valid() const noexcept override { return txn_ != nullptr && on_entry_; }
  std::string_view key() const noexcept override {
    return saved_key_ ? std::string_view(*saved_key_) : std::string_view(*key_);
  }
  std::string_view value() const noexcept override {
    return saved_key_ ? std::string_view() : std::string_view(*value_);
  }

  Result<void> next() override {
    if (txn_ == nullptr) {
      return fail(Errc::storage, "cursor used after its transaction ended");
    }
    if (!on_entry_) {
      return fail(Errc::storage, "next() on a cursor past the end of its range");
    }
    if (saved_key_) {
      // The transaction wrote since we were positioned, and the write may have removed the
      // overlay entry an iterator points to: find our place again by key, in both sources.
      const std::string key = std::move(*saved_key_);
      saved_key_.reset();
      if (forward()) {
        over_ = overlay_->upper_bound(key);
        base_ = map_->upper_bound(key);
      } else {
        over_ = overlay_->lower_bound(key);
        base_ = map_->lower_bound(key);
      }
    } else {
      step_past(*key_);
    }
    settle();
    return {};
  }

  void seek_first() {
    if (range_.end && range_.begin >= *range_.end) {
      on_entry_ = false;
      return;
    }
    if (forward()) {
      over_ = overlay_->lower_bound(range_.begin);
      base_ = map_->lower_bound(range_.begin);
    } else {
      over_ = range_.end ? overlay_->lower_bound(*range_.end) : overlay_->end();
      base_ = range_.end ? map_->lower_bound(*range_.end) : map_->end();
    }
    settle();
  }

  // Called before the transaction writes: iterators and views may not survive the write.
  void save_position() {
    if (on_entry_ && !saved_key_) {
      saved_key_ = *key_;
    }
  }

  // Called when the transaction ends: the maps may be gone, or changed by the commit.
  void close() noexcept {
    txn_ = nullptr;
    overlay_ = nullptr;
    map_ = nullptr;
    on_entry_ = false;
    saved_key_.reset();
  }

 private:
  bool forward() const noexcept { return dir_ == Direction::forward; }

  const Overlay::value_type* over_candidate() const {
    if (forward()) {
      return over_ == overlay_->end() ? nullptr : &*over_;
    }
    return over_ == overlay_->begin() ? nullptr : &*std::prev(over_);
  }

  const Map::value_type* base_candidate() const {
    if (forward()) {
      return base_ == map_->end() ? nullptr : &*base_;
    }
    return base_ == map_->begin() ? nullptr : &*std::prev(base_);
  }

  // Moves each source whose candidate has `key` past it. `key` may be a candidate's own key: it
  // is compared before either iterator moves, and moving an iterator destroys nothing.
  void step_past(const std::string& key) {
    const auto* over = over_candidate();
    const auto* base = base_candidate();
    const bool over_on = over != nullptr && over->first == key;
    const bool base_on = base != nullptr && base->first == key;
    if (over_on) {
      forward() ? ++over_ : --over_;
    }
    if (base_on) {
      forward() ? ++base_ : --base_;
    }
  }

  // Positions on the first visible entry from the sources' candidates, or off the range.
  void settle() {
    for (;;) {
      const auto* over = over_candidate();
      const auto* base = base_candidate();
      if (over == nullptr && base == nullptr) {
        on_entry_ = false;
        return;
      }
      // The overlay's candidate comes first unless the version's comes strictly before it.
      const bool from_overlay =
          over != nullptr && (base == nullptr || (forward() ? over->first <= base->first
                                                            : over->first >= base->first));
      const std::string& key = from_overlay ? over->first : base->first;
      const bool in_range = forward() ? (!range_.end || key < *range_.end) : key >= range_.begin;
      if (!in_range) {
        on_entry_ = false;
        return;
      }
      if (from_overlay && !over->second) {
        step_past(key);  // a tombstone: skip it and the version's entry it hides
        continue;
      }
      key_ = &key;
      value_ = from_overlay ? &*over->second : &base->second;
      on_entry_ = true;
      return;
    }
  }

  MemoryTransaction* txn_;  // null once the transaction ended
  const Overlay* overlay_;
  const Map* map_;
  Range range_;
  Direction dir_;
  Overlay::const_iterator over_;
  Map::const_iterator base_;
  const std::string* key_ = nullptr;  // the current entry, while on_entry_ and no write since
  const std::string* value_ = nullptr;
  bool on_entry_ = false;
  std::optional<std::string> saved_key_;  // the current key, once the transaction wrote
};

// One change of a commit, planned outside the state mutex so that applying it in place under the
// mutex costs O(1) (amortized) and cannot fail.
struct Step {
  enum class Op { replace, insert, erase };
  Op op;
  const std::string* key;  // the overlay's key
  std::string* value;      // replace: the overlay's value, swapped in
  Map::iterator at;        // in place: the entry to replace or erase, or the insertion hint
  Map::node_type node;     // insert: the new entry, allocated beforehand; erase: the removed
                           // entry, so that it is freed after the mutex is released
};

class MemoryTransaction final
    : public Transaction,
      public detail::TransactionState<MemoryTransaction, MemoryCursor> {
 public:
  // A writer passes the writer slot it holds and no pin; a reader passes an empty lease and its
  // pin on `version`.
  MemoryTransaction(WriterLease writer, ReaderPin pin, Mode mode, std::shared_ptr<Version> version)
      : TransactionState(mode), writer_(std::move(writer)), pin_(std::move(pin)),
        version_(std::move(version)) {}

  ~MemoryTransaction() override { end(); }
  MemoryTransaction(const MemoryTransaction&) = delete;
  MemoryTransaction& operator=(const MemoryTransaction&) = delete;

  Result<std::optional<std::string>> get(std::string_view key) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    if (auto checked = check_key(key); !checked) {
      return checked.error();
    }
    if (auto it = overlay_.find(key); it != overlay_.end()) {
      return it->second;
    }
    const Map& map = version_->map;
    auto it = map.find(key);
    if (it == map.end()) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(it->second);
  }

  // The value in the overlay or the version this transaction reads: neither changes before
  // this transaction's next call.
  Result<std::optional<std::string_view>> get_view(std::string_view key) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    if (auto checked = check_key(key); !checked) {
      return checked.error();
    }
    if (auto it = overlay_.find(key); it != overlay_.end()) {
      if (!it->second) return std::optional<std::string_view>();
      return std::optional<std::string_view>(*it->second);
    }
    const Map& map = version_->map;
    auto it = map.find(key);
    if (it == map.end()) {
      return std::optional<std::string_view>();
    }
    return std::optional<std::string_view>(it->second);
  }

  Result<void> put(std::string_view key, std::string_view value) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    auto it = overlay_.lower_bound(key);
    if (it != overlay_.end() && it->first == key) {
      it->second.emplace(value);
    } else {
      overlay_.emplace_hint(it, std::string(key), std::string(value));
    }
    return {};
  }

  Result<bool> erase(std::string_view key) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    const Map& map = version_->map;
    const bool in_version = map.find(key) != map.end();
    if (auto it = overlay_.find(key); it != overlay_.end()) {
      const bool existed = it->second.has_value();
      if (in_version) {
        it->second.reset();
      } else {
        overlay_.erase(it);
      }
      return existed;
    }
    if (!in_version) {
      return false;
    }
    overlay_.emplace(std::string(key), std::nullopt);
    return true;
  }

  Result<std::unique_ptr<Cursor>> scan(const Range& range, Direction dir) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    auto cursor = std::make_unique<MemoryCursor>(this, &overlay_, &version_->map, range, dir);
    cursor->seek_first();
    track(cursor.get());
    return std::unique_ptr<Cursor>(std::move(cursor));
  }

  Result<void> commit() override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    close_cursors();
    if (!overlay_.empty()) {
      try {
        publish();
      } catch (const std::bad_alloc&) {
        // publish() gives the strong guarantee: nothing was published.
        return die(Error(Errc::storage, "out of memory while committing"));
      }
    }
    end();
    committed();
    return {};
  }

 private:
  friend class detail::TransactionState<MemoryTransaction, MemoryCursor>;

  // Makes the overlay the store's new state. Only a writer gets here, and while it holds the
  // writer slot nobody else changes or replaces `version_`, which is still the current version;
  // reading its map outside the mutex is safe because readers only read it too. Consumes the
  // overlay's values. Throws only std::bad_alloc, and then has published nothing.
  void publish() {
    MemoryState& state = writer_.state();
    std::vector<Step> steps = plan();
    {
      std::lock_guard lock(state.mutex);
      if (version_->readers.load(std::memory_order_acquire) == 0) {
        // Nobody reads the map and nobody can start until we unlock: change it in place.
        apply_in_place(steps);
        return;
      }
    }
    // Readers hold the current map: they keep it, and the store moves on to a changed copy.
    auto next = std::make_shared<Version>(version_->map);
    for (Step& step : steps) {
      switch (step.op) {
      case Step::Op::replace: next->map.find(*step.key)->second.swap(*step.value); break;
      case Step::Op::insert: next->map.insert(std::move(step.node)); break;
      case Step::Op::erase: next->map.erase(*step.key); break;
      }
    }
    std::lock_guard lock(state.mutex);
    state.current = std::move(next);
  }

  // The overlay's effective changes in key order, with their positions in the version's map and
  // the nodes of new entries. The overlay holds each key once and only tombstones of keys in the
  // version, so every step changes the map.
  std::vector<Step> plan() {
    Map& map = version_->map;  // only read here (lower_bound counts as const for data races)
    std::vector<Step> steps;
    steps.reserve(overlay_.size());
    for (auto& [key, change] : overlay_) {
      const auto at = map.lower_bound(key);
      const bool found = at != map.end() && at->first == key;
      if (!change) {
        if (found) {
          steps.push_back(Step{Step::Op::erase, &key, nullptr, at, {}});
        }
      } else if (found) {
        steps.push_back(Step{Step::Op::replace, &key, &*change, at, {}});
      } else {
        Map fresh;  // the only way to get a map node is to extract it from a map
        fresh.emplace(key, std::move(*change));
        steps.push_back(Step{Step::Op::insert, &key, nullptr, at, fresh.extract(fresh.begin())});
      }
    }
    return steps;
  }

  // REQUIRES: the state mutex is held and no reader pins the version. Nothing here allocates or
  // throws, so the map is never left half changed.
  void apply_in_place(std::vector<Step>& steps) noexcept {
    Map& map = version_->map;
    for (Step& step : steps) {
      switch (step.op) {
      case Step::Op::replace: step.at->second.swap(*step.value); break;
      case Step::Op::insert:
        // The hint is the first entry after the key in the map as planned. Earlier steps only
        // inserted or erased smaller keys, so it is still that entry and still in the map.
        map.insert(step.at, std::move(step.node));
        break;
      case Step::Op::erase: step.node = map.extract(step.at); break;
      }
    }
  }

  // Ends the transaction without publishing anything. Idempotent.
  void end() noexcept {
    close_cursors();
    overlay_.clear();
    pin_.release();
    version_.reset();
    writer_.release();
  }

  WriterLease writer_;  // first member: released even if the constructor throws
  ReaderPin pin_;       // a reader's pin on version_
  std::shared_ptr<Version> version_;  // the store as of begin; only commit() changes it
  Overlay overlay_;                   // a writer's changes
};

MemoryCursor::~MemoryCursor() {
  if (txn_ != nullptr) {
    txn_->forget(this);
  }
}

}  // namespace

MemoryBackend::MemoryBackend() : state_(std::make_shared<detail::MemoryState>()) {}

MemoryBackend::~MemoryBackend() = default;

Result<std::unique_ptr<Transaction>> MemoryBackend::begin(Mode mode) {
  std::shared_ptr<Version> version;
  WriterLease writer;
  ReaderPin pin;
  {
    std::unique_lock lock(state_->mutex);
    if (mode == Mode::read_write) {
      state_->writer_done.wait(lock, [&] { return !state_->writer_active; });
      state_->writer_active = true;
      writer = WriterLease(state_);
    } else {
      pin = ReaderPin(state_->current);
    }
    version = state_->current;
  }
  return std::unique_ptr<Transaction>(std::make_unique<MemoryTransaction>(
      std::move(writer), std::move(pin), mode, std::move(version)));
}

}  // namespace catalog::storage

#endif  // CATALOG_IMPL_STORAGE_MEMORY_BACKEND_IPP
