#include <catalog/storage/memory_backend.hpp>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace catalog::storage {

namespace {

// std::string compares through char_traits<char>, which orders bytes as unsigned char: memcmp
// order, the same as LMDB's default.
using Map = std::map<std::string, std::string, std::less<>>;

}  // namespace

namespace detail {

struct MemoryState {
  std::mutex mutex;  // guards `current` and `writer_active`
  std::condition_variable writer_done;
  std::shared_ptr<const Map> current = std::make_shared<const Map>();
  // A flag rather than a held mutex: a write transaction may end on another thread.
  bool writer_active = false;
};

}  // namespace detail

namespace {

// The single writer slot of a state, held by a write transaction until it ends (also released
// if constructing the transaction fails). On commit the release publishes the new map.
class WriterLease {
 public:
  WriterLease() = default;
  explicit WriterLease(std::shared_ptr<detail::MemoryState> state) : state_(std::move(state)) {}
  ~WriterLease() { release(nullptr); }
  WriterLease(WriterLease&&) noexcept = default;
  WriterLease& operator=(WriterLease&& other) noexcept {
    if (this != &other) {
      release(nullptr);
      state_ = std::move(other.state_);
    }
    return *this;
  }

  void release(std::shared_ptr<const Map> publish) noexcept {
    if (!state_) {
      return;
    }
    {
      std::lock_guard lock(state_->mutex);
      if (publish) {
        state_->current = std::move(publish);
      }
      state_->writer_active = false;
    }
    state_->writer_done.notify_one();
    state_.reset();
  }

 private:
  std::shared_ptr<detail::MemoryState> state_;
};

class MemoryTransaction;

class MemoryCursor final : public Cursor {
 public:
  MemoryCursor(MemoryTransaction* txn, const Map* map, const Range& range, Direction dir)
      : txn_(txn), map_(map), range_(range), dir_(dir) {}
  ~MemoryCursor() override;
  MemoryCursor(const MemoryCursor&) = delete;
  MemoryCursor& operator=(const MemoryCursor&) = delete;

  bool valid() const noexcept override { return map_ != nullptr && on_entry_; }
  std::string_view key() const noexcept override {
    return saved_key_ ? std::string_view(*saved_key_) : std::string_view(it_->first);
  }
  std::string_view value() const noexcept override {
    return saved_key_ ? std::string_view() : std::string_view(it_->second);
  }

  Result<void> next() override {
    if (map_ == nullptr) {
      return fail(Errc::storage, "cursor used after its transaction ended");
    }
    if (!on_entry_) {
      return fail(Errc::storage, "next() on a cursor past the end of its range");
    }
    if (saved_key_) {
      // The transaction wrote since we were positioned: find our place again by key.
      std::string key = std::move(*saved_key_);
      saved_key_.reset();
      if (dir_ == Direction::forward) {
        settle_forward(map_->upper_bound(key));
      } else {
        settle_reverse(map_->lower_bound(key));
      }
    } else if (dir_ == Direction::forward) {
      settle_forward(std::next(it_));
    } else {
      settle_reverse(it_);
    }
    return {};
  }

  void seek_first() {
    if (range_.end && range_.begin >= *range_.end) {
      on_entry_ = false;
    } else if (dir_ == Direction::forward) {
      settle_forward(map_->lower_bound(range_.begin));
    } else {
      settle_reverse(range_.end ? map_->lower_bound(*range_.end) : map_->end());
    }
  }

  // Called before the transaction writes: iterators and views may not survive the write.
  void save_position() {
    if (on_entry_ && !saved_key_) {
      saved_key_ = it_->first;
    }
  }

  // Called when the transaction ends: the map may be gone.
  void invalidate() noexcept {
    txn_ = nullptr;
    map_ = nullptr;
    on_entry_ = false;
    saved_key_.reset();
  }

 private:
  void settle_forward(Map::const_iterator it) {
    it_ = it;
    on_entry_ = it_ != map_->end() && (!range_.end || it_->first < *range_.end);
  }

  // Positions on the entry just before `upper`, if it is inside the range.
  void settle_reverse(Map::const_iterator upper) {
    if (upper == map_->begin()) {
      on_entry_ = false;
      return;
    }
    it_ = std::prev(upper);
    on_entry_ = it_->first >= range_.begin;
  }

  MemoryTransaction* txn_;
  const Map* map_;
  Range range_;
  Direction dir_;
  Map::const_iterator it_;
  bool on_entry_ = false;
  std::optional<std::string> saved_key_;
};

class MemoryTransaction final : public Transaction {
 public:
  // A writer passes the writer slot it holds; a reader passes an empty lease.
  MemoryTransaction(WriterLease writer, Mode mode, std::shared_ptr<const Map> snapshot)
      : writer_(std::move(writer)), mode_(mode) {
    if (mode_ == Mode::read_write) {
      working_ = std::make_shared<Map>(*snapshot);
      view_ = working_.get();
    } else {
      view_ = snapshot.get();
    }
    snapshot_ = std::move(snapshot);
  }

  ~MemoryTransaction() override { end(); }
  MemoryTransaction(const MemoryTransaction&) = delete;
  MemoryTransaction& operator=(const MemoryTransaction&) = delete;

  Result<std::optional<std::string>> get(std::string_view key) override {
    if (dead_) {
      return *dead_;
    }
    if (auto checked = check_key(key); !checked) {
      return checked.error();
    }
    auto it = view_->find(key);
    if (it == view_->end()) {
      return std::optional<std::string>();
    }
    return std::optional<std::string>(it->second);
  }

  Result<void> put(std::string_view key, std::string_view value) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    auto it = working_->find(key);
    if (it == working_->end()) {
      working_->emplace(std::string(key), std::string(value));
    } else {
      it->second.assign(value);
    }
    return {};
  }

  Result<bool> erase(std::string_view key) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    auto it = working_->find(key);
    if (it == working_->end()) {
      return false;
    }
    working_->erase(it);
    return true;
  }

  Result<std::unique_ptr<Cursor>> scan(const Range& range, Direction dir) override {
    if (dead_) {
      return *dead_;
    }
    auto cursor = std::make_unique<MemoryCursor>(this, view_, range, dir);
    cursor->seek_first();
    cursors_.push_back(cursor.get());
    return std::unique_ptr<Cursor>(std::move(cursor));
  }

  Result<void> commit() override {
    if (dead_) {
      return *dead_;
    }
    close_cursors();
    writer_.release(std::move(working_));
    end();
    dead_ = Error(Errc::storage, "transaction used after commit");
    return {};
  }

  void forget(MemoryCursor* cursor) noexcept {
    cursors_.erase(std::remove(cursors_.begin(), cursors_.end(), cursor), cursors_.end());
  }

 private:
  Result<void> prepare_write(std::string_view key) {
    if (dead_) {
      return *dead_;
    }
    if (mode_ == Mode::read_only) {
      return die(Error(Errc::storage, "write in a read-only transaction"));
    }
    if (auto checked = check_key(key); !checked) {
      return die(checked.error());
    }
    for (MemoryCursor* cursor : cursors_) {
      cursor->save_position();
    }
    return {};
  }

  Error die(Error error) {
    end();
    dead_ = error;
    return error;
  }

  void close_cursors() noexcept {
    for (MemoryCursor* cursor : cursors_) {
      cursor->invalidate();
    }
    cursors_.clear();
  }

  // Ends the transaction without publishing anything. Idempotent.
  void end() noexcept {
    close_cursors();
    working_.reset();
    snapshot_.reset();
    view_ = nullptr;
    writer_.release(nullptr);
  }

  WriterLease writer_;  // first member: released even if the constructor throws
  Mode mode_;
  std::shared_ptr<const Map> snapshot_;  // the map as of begin
  std::shared_ptr<Map> working_;         // a writer's private copy
  const Map* view_ = nullptr;            // what get and scan read
  std::vector<MemoryCursor*> cursors_;
  std::optional<Error> dead_;
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
  std::shared_ptr<const Map> snapshot;
  WriterLease writer;
  {
    std::unique_lock lock(state_->mutex);
    if (mode == Mode::read_write) {
      state_->writer_done.wait(lock, [&] { return !state_->writer_active; });
      state_->writer_active = true;
      writer = WriterLease(state_);
    }
    snapshot = state_->current;
  }
  // A writer copies the map in the constructor, outside the lock, so readers are not held up.
  return std::unique_ptr<Transaction>(
      std::make_unique<MemoryTransaction>(std::move(writer), mode, std::move(snapshot)));
}

}  // namespace catalog::storage
