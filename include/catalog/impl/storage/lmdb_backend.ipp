#ifndef CATALOG_IMPL_STORAGE_LMDB_BACKEND_IPP
#define CATALOG_IMPL_STORAGE_LMDB_BACKEND_IPP

#include <catalog/storage/lmdb_backend.hpp>

#include <catalog/detail/storage/transaction_state.hpp>

#include <fcntl.h>
#include <lmdb.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace catalog::storage {

namespace detail {

// Lets any number of transactions in at once, or one map resize alone (LMDB may resize the map
// only while the process has no transaction). Not a std::shared_mutex: that must be unlocked by
// the thread that locked it, and a read transaction may end on another thread. A waiting resize
// holds back new transactions, so a stream of readers cannot starve it.
class TxnGate {
 public:
  void enter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !exclusive_; });
    ++active_;
  }

  void leave() noexcept {
    std::lock_guard lock(mutex_);
    if (--active_ == 0) {
      changed_.notify_all();
    }
  }

  void lock_exclusive() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !exclusive_; });
    exclusive_ = true;
    changed_.wait(lock, [&] { return active_ == 0; });
  }

  void unlock_exclusive() noexcept {
    std::lock_guard lock(mutex_);
    exclusive_ = false;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t active_ = 0;
  bool exclusive_ = false;
};

// One LMDB environment, shared by every LmdbBackend and transaction of its directory in this
// process.
struct LmdbEnv {
  LmdbEnv() = default;
  LmdbEnv(const LmdbEnv&) = delete;
  LmdbEnv& operator=(const LmdbEnv&) = delete;
  ~LmdbEnv() {
    // An environment inherited through fork() is left alone: closing it in the child would clear
    // the parent's reader slots.
    if (env != nullptr && pid == ::getpid()) {
      mdb_env_close(env);
    }
    if (map_lock_fd >= 0) {
      ::close(map_lock_fd);
    }
  }

  // Begins an LMDB transaction, adopting a map grown by another process. On success the caller
  // is inside the gate and must leave it after ending the transaction.
  Result<MDB_txn*> begin_txn(unsigned flags);
  // Grows the map if a write found it full since the last growth.
  Result<void> grow_if_needed();
  // Grows the map now. REQUIRES: the gate is held exclusively.
  Result<void> grow_locked();
  // The error of a write that found the map full; makes the next write transaction grow it.
  Error map_full();
  void refresh_map_size() noexcept;
  // Reserves the disk blocks of data.mdb up to the map size (posix_fallocate). With
  // MDB_WRITEMAP a write transaction stores into the map's pages directly, and a page whose
  // block the file system cannot supply (a full disk) raises SIGBUS in the writer: reserved,
  // a full disk shows at this call, where it is an error. Errors: storage (the system's words,
  // "No space left on device").
  Result<void> reserve_map();
  // Reserves the map unless that is done: what a write transaction must have before it begins.
  // Holds the map lock, not the gate.
  Result<void> ensure_reserved();

  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  std::filesystem::path path;
  pid_t pid = 0;
  std::size_t max_map_size = 0;
  std::atomic<std::size_t> map_size{0};
  std::atomic<bool> growth_needed{false};
  // A write found the map full at max_map_size, and it has not grown since: running a write
  // again cannot help (LmdbBackend::grows_when_full).
  std::atomic<bool> full_at_max{false};
  // The blocks of the whole map are reserved on disk (reserve_map), so writes cannot meet a
  // full disk. False after a reservation failed: write transactions are refused until one
  // succeeds.
  // Only false -> true while a transaction of this process is open: growth (under the exclusive
  // gate) is what turns it false.
  std::atomic<bool> reserved{false};
  // Taken by MapLock before its flock: the threads of this process size the map one at a time.
  std::mutex sizing_mutex;
  TxnGate gate;
  // `map.lock` beside the data: held (flock) by whichever process sizes its map, see MapLock.
  // -1 in a read-only environment that could not open it: a reader sizes nothing.
  int map_lock_fd = -1;
  // Opened with MDB_RDONLY (LmdbOptions::read_only): nothing reserved, grown or written.
  bool read_only = false;
};

// With MDB_WRITEMAP, LMDB ftruncates data.mdb to the map size whenever a process maps it (open,
// growth, adopting another process's growth), and opening adopts the size asked for, not the
// file's. So a process could cut the file below a map another process is already writing into,
// which then dies of SIGBUS. Every sizing and reservation therefore happens under this lock and
// never asks for less than the file's current size. flock serializes processes, not the threads
// sharing its descriptor, so a mutex of the environment comes first.
class MapLock {
 public:
  MapLock(std::mutex& threads, int fd) : threads_(threads), fd_(fd) {
    threads_.lock();
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~MapLock() {
    ::flock(fd_, LOCK_UN);
    threads_.unlock();
  }
  MapLock(const MapLock&) = delete;
  MapLock& operator=(const MapLock&) = delete;

 private:
  std::mutex& threads_;
  int fd_;
};

// The size of data.mdb in `dir` now (0 when it does not exist yet).
inline std::size_t data_file_size(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat((dir / "data.mdb").c_str(), &st) != 0) return 0;
  return static_cast<std::size_t>(st.st_size);
}

}  // namespace detail

namespace {

using detail::LmdbEnv;

Error lmdb_error(int rc, std::string_view what) {
  return Error(Errc::storage, "LMDB " + std::string(what) + ": " + mdb_strerror(rc));
}

MDB_val to_val(std::string_view bytes) noexcept {
  // LMDB copies from mv_data even for zero bytes: never give it a null pointer.
  static char empty = 0;
  return MDB_val{bytes.size(), bytes.empty() ? &empty : const_cast<char*>(bytes.data())};
}

std::string_view to_view(const MDB_val& val) noexcept {
  return {static_cast<const char*>(val.mv_data), val.mv_size};
}

// How large the map is. No key or value LMDB hands out can be larger, unless a damaged page gave
// its node a size it does not have: reading that many bytes would run past the map, so it is
// refused as corruption rather than done. (LMDB does not say where the map is, only with
// MDB_FIXEDMAP, so the check is of the size alone.)
struct MapBounds {
  std::size_t size = 0;

  static MapBounds of(MDB_env* env) noexcept {
    MDB_envinfo info{};
    mdb_env_info(env, &info);
    return {info.me_mapsize};
  }

  // Errors: storage ("the store is corrupt: ...").
  Result<void> check(const MDB_val& v, std::string_view what) const {
    if (v.mv_size <= size) return {};
    return fail(Errc::storage, "the store is corrupt: LMDB gave a " + std::string(what) + " of " +
                                   std::to_string(v.mv_size) + " bytes, more than its map of " +
                                   std::to_string(size));
  }
};

std::size_t page_size() noexcept {
  const long size = ::sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

class ExclusiveGate {
 public:
  explicit ExclusiveGate(detail::TxnGate& gate) : gate_(gate) { gate_.lock_exclusive(); }
  ~ExclusiveGate() { gate_.unlock_exclusive(); }
  ExclusiveGate(const ExclusiveGate&) = delete;
  ExclusiveGate& operator=(const ExclusiveGate&) = delete;

 private:
  detail::TxnGate& gate_;
};

}  // namespace

namespace detail {

Result<MDB_txn*> LmdbEnv::begin_txn(unsigned flags) {
  // Another process may grow the map again between our adoption and our retry; a few rounds
  // settle it.
  constexpr int max_attempts = 8;
  for (int attempt = 1;; ++attempt) {
    gate.enter();
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env, nullptr, flags, &txn);
    if (rc == MDB_SUCCESS) {
      return txn;
    }
    gate.leave();
    if (rc != MDB_MAP_RESIZED || attempt == max_attempts) {
      return lmdb_error(rc, "begin transaction");
    }
    ExclusiveGate exclusive(gate);
    MapLock sizing(sizing_mutex, map_lock_fd);
    // The file is at least the committed map size (growth extends it before committing), and
    // may be larger if another process is growing it right now: never map less than it.
    const std::size_t before = map_size.load();
    const std::size_t file = data_file_size(path);
    rc = mdb_env_set_mapsize(env, file > before ? file : 0);
    if (rc != MDB_SUCCESS) {
      return lmdb_error(rc, "adopt the map size of another process");
    }
    refresh_map_size();
    // The process that grew it reserved it before committing; a writer that does not (another
    // program) is covered by reserving here. If that fails, writes wait for space (start()).
    if (!read_only && map_size.load() > before && !reserve_map()) {
      reserved.store(false);
    }
  }
}

Result<void> LmdbEnv::grow_if_needed() {
  if (!growth_needed.load()) {
    return {};
  }
  ExclusiveGate exclusive(gate);
  if (!growth_needed.exchange(false)) {
    return {};  // another writer grew it while we waited
  }
  return grow_locked();
}

Result<void> LmdbEnv::grow_locked() {
  MDB_envinfo info;
  mdb_env_info(env, &info);
  const std::size_t current = info.me_mapsize;
  if (current >= max_map_size) {
    return fail(Errc::storage_full, "LMDB map is at its maximum size of " +
                                        std::to_string(max_map_size) +
                                        " bytes (LmdbOptions::max_map_size)");
  }
  MapLock sizing(sizing_mutex, map_lock_fd);
  // Another process may have grown the file further than our map: never cut it.
  const std::size_t file = data_file_size(path);
  const bool was_reserved = reserved.load();
  reserved.store(false);  // until the grown map is
  const std::size_t next =
      std::max(current > max_map_size / 2 ? max_map_size : current * 2, file);
  if (int rc = mdb_env_set_mapsize(env, next); rc != MDB_SUCCESS) {
    reserved.store(was_reserved);
    return lmdb_error(rc, "grow the map to " + std::to_string(next) + " bytes");
  }
  refresh_map_size();
  if (auto r = reserve_map(); !r) {
    // Give the disk back: no process maps more than the file was before (the map lock is held
    // and no transaction of this process is open), so the map may shrink to it again.
    if (file <= current && mdb_env_set_mapsize(env, current) == MDB_SUCCESS) {
      refresh_map_size();
      reserved.store(was_reserved);
    }
    return r.error();
  }
  return {};
}

Result<void> reserve_blocks(int fd, std::size_t size, int mode, const std::filesystem::path& file) {
  auto refused = [&](int err, std::size_t missing) {
    return fail(Errc::storage, "LMDB cannot reserve " + std::to_string(missing) +
                                   " more bytes of disk for " + file.string() + ": " +
                                   std::strerror(err) +
                                   "; nothing was written (free disk space and try again)");
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return refused(errno, size);
  }
  const auto allocated = static_cast<std::size_t>(st.st_blocks) * 512;
  if (allocated >= size) {
    return {};
  }
  auto allocate = [&](int how, off_t length) {
    int rc = 0;
    do {
      rc = ::fallocate(fd, how, 0, length) == 0 ? 0 : errno;
    } while (rc == EINTR);
    return rc;
  };
  // A file system that cannot reserve blocks (no fallocate: NFS, older ZFS, some FUSE mounts;
  // or a sandbox that forbids it) leaves the file as LMDB has it, as before reservations were
  // made; not glibc's posix_fallocate emulation, which writes into a file others map. Asked
  // first with one byte that changes nothing, so that its free-space figures are not trusted
  // where they may not apply (compression).
  if (const int probe = allocate(FALLOC_FL_KEEP_SIZE, 1);
      probe == EOPNOTSUPP || probe == ENOSYS || probe == EINVAL || probe == EPERM) {
    return {};
  }
  // A disk that cannot hold what is missing is found before anything is allocated: a failed
  // fallocate may keep the blocks it got (ext4, XFS), which would leave the disk full for every
  // other writer too. Root may use the blocks kept for it.
  struct statvfs vfs {};
  if (::fstatvfs(fd, &vfs) == 0) {
    const auto free_blocks = ::geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail;
    if (size - allocated > static_cast<std::size_t>(free_blocks) * vfs.f_frsize) {
      return refused(ENOSPC, size - allocated);
    }
  }
  if (const int rc = allocate(mode, static_cast<off_t>(size)); rc != 0 && rc != EOPNOTSUPP) {
    return refused(rc, size - allocated);
  }
  return {};
}

Result<void> LmdbEnv::reserve_map() {
  int fd = -1;
  if (int rc = mdb_env_get_fd(env, &fd); rc != MDB_SUCCESS) {
    return lmdb_error(rc, "get the data file");
  }
  if (auto r = reserve_blocks(fd, map_size.load(), 0, path / "data.mdb"); !r) {
    return r.error();
  }
  reserved.store(true);
  return {};
}

Result<void> LmdbEnv::ensure_reserved() {
  if (reserved.load()) {
    return {};
  }
  // Not the gate: reserving blocks changes no page, so readers and writers go on meanwhile.
  MapLock sizing(sizing_mutex, map_lock_fd);
  if (reserved.load()) {
    return {};
  }
  return reserve_map();
}

Error LmdbEnv::map_full() {
  // Called while the failed transaction still holds the gate, so no growth of this process
  // comes between its write and this size: the size it failed at.
  const std::size_t size = map_size.load();
  if (size >= max_map_size) {
    // Nothing to grow: the same write would fail again, until the map grows (adopted from a
    // process allowed a larger one).
    full_at_max.store(true);
    return Error(Errc::storage_full, "LMDB map is full at " + std::to_string(size) +
                                         " bytes, its maximum size (LmdbOptions::max_map_size " +
                                         std::to_string(max_map_size) + ")");
  }
  growth_needed.store(true);
  return Error(Errc::storage_full, "LMDB map is full at " + std::to_string(size) +
                                       " bytes; the next write transaction grows it");
}

void LmdbEnv::refresh_map_size() noexcept {
  MDB_envinfo info;
  mdb_env_info(env, &info);
  if (map_size.exchange(info.me_mapsize) < info.me_mapsize) full_at_max.store(false);
}

}  // namespace detail

namespace {

class LmdbTransaction;

class LmdbCursor final : public Cursor {
 public:
  LmdbCursor(LmdbTransaction* txn, const Range& range, Direction dir)
      : txn_(txn), range_(range), dir_(dir) {}
  ~LmdbCursor() override;
  LmdbCursor(const LmdbCursor&) = delete;
  LmdbCursor& operator=(const LmdbCursor&) = delete;

  bool valid() const noexcept override { return cursor_ != nullptr && on_entry_; }
  std::string_view key() const noexcept override {
    return saved_key_ ? std::string_view(*saved_key_) : to_view(key_);
  }
  std::string_view value() const noexcept override {
    return saved_key_ ? std::string_view() : to_view(value_);
  }

  Result<void> next() override {
    if (cursor_ == nullptr) {
      return fail(Errc::storage, "cursor used after its transaction ended");
    }
    if (!on_entry_) {
      return fail(Errc::storage, "next() on a cursor past the end of its range");
    }
    if (saved_key_) {
      // The transaction wrote since we were positioned: find our place again by key rather
      // than trust LMDB's cursor fix-ups.
      const std::string key = std::move(*saved_key_);
      saved_key_.reset();
      return settle(dir_ == Direction::forward ? first_after(key) : last_before(key));
    }
    return settle(step(dir_ == Direction::forward ? MDB_NEXT : MDB_PREV));
  }

  Result<void> open(MDB_txn* txn, MDB_dbi dbi) {
    if (int rc = mdb_cursor_open(txn, dbi, &cursor_); rc != MDB_SUCCESS) {
      cursor_ = nullptr;
      return lmdb_error(rc, "open cursor");
    }
    bounds_ = MapBounds::of(mdb_txn_env(txn));
    if (range_.end && range_.begin >= *range_.end) {
      return {};  // empty range
    }
    if (dir_ == Direction::forward) {
      return settle(first_at_or_after(range_.begin));
    }
    return settle(range_.end ? last_before(*range_.end) : step(MDB_LAST));
  }

  // Called before the transaction writes: LMDB's pages, and so our views, may change.
  void save_position() {
    if (on_entry_ && !saved_key_) {
      saved_key_.emplace(to_view(key_));
    }
  }

  // Called by the transaction before it ends.
  void close() noexcept {
    if (cursor_ != nullptr) {
      mdb_cursor_close(cursor_);
    }
    cursor_ = nullptr;
    txn_ = nullptr;
    on_entry_ = false;
    saved_key_.reset();
  }

 private:
  // Moves the LMDB cursor; false when there is no such entry.
  Result<bool> step(MDB_cursor_op op) {
    const int rc = mdb_cursor_get(cursor_, &key_, &value_, op);
    if (rc == MDB_NOTFOUND) {
      return false;
    }
    if (rc != MDB_SUCCESS) {
      return lmdb_error(rc, "move cursor");
    }
    if (auto inside = bounds_.check(key_, "key"); !inside) {
      return inside.error();
    }
    if (auto inside = bounds_.check(value_, "value"); !inside) {
      return inside.error();
    }
    return true;
  }

  Result<bool> first_at_or_after(std::string_view key) {
    if (key.empty()) {
      return step(MDB_FIRST);  // LMDB refuses an empty key for MDB_SET_RANGE
    }
    key_ = to_val(key);
    return step(MDB_SET_RANGE);
  }

  Result<bool> first_after(std::string_view key) {
    auto found = first_at_or_after(key);
    if (found && *found && to_view(key_) == key) {
      return step(MDB_NEXT);
    }
    return found;
  }

  Result<bool> last_before(std::string_view key) {
    if (key.empty()) {
      return false;
    }
    key_ = to_val(key);
    auto found = step(MDB_SET_RANGE);
    if (!found) {
      return found;
    }
    return step(*found ? MDB_PREV : MDB_LAST);
  }

  // Records where a move landed: on an entry inside the range, or done.
  Result<void> settle(Result<bool> found) {
    if (!found) {
      on_entry_ = false;
      return found.error();
    }
    if (!*found) {
      on_entry_ = false;
    } else if (dir_ == Direction::forward) {
      on_entry_ = !range_.end || to_view(key_) < *range_.end;
    } else {
      on_entry_ = to_view(key_) >= range_.begin;
    }
    return {};
  }

  LmdbTransaction* txn_;          // null once the transaction closed us
  MDB_cursor* cursor_ = nullptr;  // null once closed
  Range range_;
  Direction dir_;
  MDB_val key_{};
  MDB_val value_{};
  MapBounds bounds_;
  bool on_entry_ = false;
  std::optional<std::string> saved_key_;
};

class LmdbTransaction final : public Transaction,
                              public detail::TransactionState<LmdbTransaction, LmdbCursor> {
 public:
  LmdbTransaction(std::shared_ptr<LmdbEnv> env, Mode mode)
      : TransactionState(mode), env_(std::move(env)) {}
  ~LmdbTransaction() override { end(); }
  LmdbTransaction(const LmdbTransaction&) = delete;
  LmdbTransaction& operator=(const LmdbTransaction&) = delete;

  Result<void> start() {
    auto txn = env_->begin_txn(mode_ == Mode::read_only ? MDB_RDONLY : 0);
    if (!txn) {
      return txn.error();
    }
    txn_ = *txn;
    bounds_ = MapBounds::of(env_->env);
    // A growth by another thread between the reservation and this begin may have left the map
    // unreserved (the disk was full for the grown part): no write goes into it then.
    if (mode_ == Mode::read_write && !env_->reserved.load()) {
      end();
      return fail(Errc::storage, "LMDB map of " + env_->path.string() +
                                     " is not reserved on disk (the disk was full when it grew); "
                                     "nothing was written (free disk space and try again)");
    }
    return {};
  }

  Result<std::optional<std::string>> get(std::string_view key) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    if (auto checked = check_key(key); !checked) {
      return checked.error();
    }
    MDB_val k = to_val(key);
    MDB_val v;
    const int rc = mdb_get(txn_, env_->dbi, &k, &v);
    if (rc == MDB_NOTFOUND) {
      return std::optional<std::string>();
    }
    if (rc != MDB_SUCCESS) {
      return lmdb_error(rc, "get");
    }
    if (auto inside = bounds_.check(v, "value"); !inside) {
      return inside.error();
    }
    return std::optional<std::string>(std::in_place, to_view(v));
  }

  // A reader's pages do not change while it lasts, and the map is not resized under a
  // transaction (TxnGate).
  bool views_last() const noexcept override {
    return mode_ == Mode::read_only;
  }

  // LMDB's own bytes: valid until the transaction writes or ends, which no call before the next
  // one does.
  Result<std::optional<std::string_view>> get_view(std::string_view key) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    if (auto checked = check_key(key); !checked) {
      return checked.error();
    }
    MDB_val k = to_val(key);
    MDB_val v;
    const int rc = mdb_get(txn_, env_->dbi, &k, &v);
    if (rc == MDB_NOTFOUND) {
      return std::optional<std::string_view>();
    }
    if (rc != MDB_SUCCESS) {
      return lmdb_error(rc, "get");
    }
    if (auto inside = bounds_.check(v, "value"); !inside) {
      return inside.error();
    }
    return std::optional<std::string_view>(to_view(v));
  }

  // One cursor for all the keys: LMDB finds a key on the leaf page the cursor is on without
  // descending the tree again, so ascending keys close together cost a search of one page each.
  // Each key is looked up before the one before it is visited, and its value's cache lines asked
  // for, so that they arrive while the caller reads the previous value (nothing writes during
  // get_each, so both views stay valid).
  Result<void> get_each(std::span<const std::string_view> keys, const Visit& visit) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    MDB_cursor* cursor = nullptr;
    if (const int rc = mdb_cursor_open(txn_, env_->dbi, &cursor); rc != MDB_SUCCESS) {
      return lmdb_error(rc, "get");
    }
    const std::unique_ptr<MDB_cursor, decltype(&mdb_cursor_close)> closer(cursor,
                                                                         &mdb_cursor_close);
    // The value at keys[i], or nullopt; prefetched.
    auto look_up = [&](std::size_t i) -> Result<std::optional<std::string_view>> {
      if (auto checked = check_key(keys[i]); !checked) {
        return checked.error();
      }
      MDB_val k = to_val(keys[i]);
      MDB_val v;
      const int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET);
      if (rc == MDB_NOTFOUND) {
        return std::optional<std::string_view>();
      }
      if (rc != MDB_SUCCESS) {
        return lmdb_error(rc, "get");
      }
      if (auto inside = bounds_.check(v, "value"); !inside) {
        return inside.error();
      }
      for (std::size_t at = 0; at < v.mv_size && at < 1024; at += 64) {
        __builtin_prefetch(static_cast<const char*>(v.mv_data) + at);
      }
      return std::optional<std::string_view>(to_view(v));
    };
    if (keys.empty()) {
      return {};
    }
    auto next = look_up(0);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!next) {
        return next.error();
      }
      const std::optional<std::string_view> value = *next;
      if (i + 1 < keys.size()) {
        next = look_up(i + 1);
      }
      visit(i, value);
    }
    return {};
  }

  Result<void> put(std::string_view key, std::string_view value) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    auto writer = write_cursor();
    if (!writer) {
      return writer.error();
    }
    MDB_val k = to_val(key);
    MDB_val v = to_val(value);
    if (const int rc = mdb_cursor_put(*writer, &k, &v, 0); rc != MDB_SUCCESS) {
      return write_failed(rc, "put");
    }
    return {};
  }

  Result<bool> erase(std::string_view key) override {
    if (auto ok = prepare_write(key); !ok) {
      return ok.error();
    }
    auto writer = write_cursor();
    if (!writer) {
      return writer.error();
    }
    MDB_val k = to_val(key);
    MDB_val v;
    int rc = mdb_cursor_get(*writer, &k, &v, MDB_SET);
    if (rc == MDB_SUCCESS) {
      rc = mdb_cursor_del(*writer, 0);
    }
    if (rc == MDB_NOTFOUND) {
      return false;
    }
    if (rc != MDB_SUCCESS) {
      return write_failed(rc, "erase");
    }
    return true;
  }

  // The write cursor stands on each key in turn: LMDB moves it onto the next key when it
  // deletes one (to the next page at the end of one), so no key is copied or looked up again.
  Result<std::uint64_t> erase_range(const Range& range, std::uint64_t limit) override {
    if (auto ok = prepare_writes(); !ok) {
      return ok.error();
    }
    if (limit == 0 || (range.end && range.begin >= *range.end)) {
      return std::uint64_t{0};
    }
    auto writer = write_cursor();
    if (!writer) {
      return writer.error();
    }
    MDB_val k = to_val(range.begin);
    MDB_val v;
    int rc = range.begin.empty() ? mdb_cursor_get(*writer, &k, &v, MDB_FIRST)
                                 : mdb_cursor_get(*writer, &k, &v, MDB_SET_RANGE);
    std::uint64_t erased = 0;
    while (rc == MDB_SUCCESS && erased < limit) {
      if (auto inside = bounds_.check(k, "key"); !inside) {
        return die(inside.error());
      }
      if (range.end && to_view(k) >= *range.end) {
        break;
      }
      if (rc = mdb_cursor_del(*writer, 0); rc != MDB_SUCCESS) {
        return write_failed(rc, "erase");
      }
      ++erased;
      rc = mdb_cursor_get(*writer, &k, &v, MDB_NEXT);
    }
    if (rc != MDB_SUCCESS && rc != MDB_NOTFOUND) {
      return write_failed(rc, "erase");
    }
    return erased;
  }

  Result<std::unique_ptr<Cursor>> scan(const Range& range, Direction dir) override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    auto cursor = std::make_unique<LmdbCursor>(this, range, dir);
    track(cursor.get());
    if (auto opened = cursor->open(txn_, env_->dbi); !opened) {
      return opened.error();
    }
    return std::unique_ptr<Cursor>(std::move(cursor));
  }

  Result<void> commit() override {
    if (auto ok = alive(); !ok) {
      return ok.error();
    }
    close_cursors();
    close_writer();
    // LMDB frees the transaction whether the commit succeeds or not: release our handle first
    // so nothing can abort it again.
    MDB_txn* txn = std::exchange(txn_, nullptr);
    int rc = MDB_SUCCESS;
    if (mode_ == Mode::read_only) {
      mdb_txn_abort(txn);
    } else {
      rc = mdb_txn_commit(txn);
    }
    env_->gate.leave();
    if (rc == MDB_MAP_FULL) {
      dead_ = env_->map_full();
      return *dead_;
    }
    if (rc != MDB_SUCCESS) {
      dead_ = lmdb_error(rc, "commit");
      return *dead_;
    }
    committed();
    return {};
  }

 private:
  friend class detail::TransactionState<LmdbTransaction, LmdbCursor>;

  // The cursor every put and erase goes through, opened at the first. LMDB looks a key up on the
  // leaf page its cursor stands on before it descends from the root, so writes of keys close
  // together (a batch written in key order) search one page each. LMDB keeps the cursor right
  // across the transaction's other writes, as it does for every cursor of a write transaction.
  Result<MDB_cursor*> write_cursor() {
    if (writer_ == nullptr) {
      if (const int rc = mdb_cursor_open(txn_, env_->dbi, &writer_); rc != MDB_SUCCESS) {
        writer_ = nullptr;
        return die(lmdb_error(rc, "open cursor"));
      }
    }
    return writer_;
  }

  void close_writer() noexcept {
    if (writer_ != nullptr) {
      mdb_cursor_close(std::exchange(writer_, nullptr));
    }
  }

  Error write_failed(int rc, std::string_view what) {
    return die(rc == MDB_MAP_FULL ? env_->map_full() : lmdb_error(rc, what));
  }

  // Ends the transaction without committing (freeing LMDB's writer lock and letting the map
  // grow). Idempotent.
  void end() noexcept {
    if (txn_ == nullptr) {
      return;
    }
    close_cursors();
    close_writer();
    mdb_txn_abort(std::exchange(txn_, nullptr));
    env_->gate.leave();
  }

  std::shared_ptr<LmdbEnv> env_;
  MDB_txn* txn_ = nullptr;        // null once ended
  MDB_cursor* writer_ = nullptr;  // write_cursor(), once opened
  MapBounds bounds_;              // of the map this transaction reads
};

LmdbCursor::~LmdbCursor() {
  if (txn_ != nullptr) {
    txn_->forget(this);
  }
  if (cursor_ != nullptr) {
    mdb_cursor_close(cursor_);
  }
}

// Environments open in this process, by canonical path: LMDB must not open one directory twice
// in a process (closing either would drop the other's file locks).
struct Registry {
  struct Entry {
    std::weak_ptr<LmdbEnv> env;
    const LmdbEnv* raw;  // identifies the entry's environment once `env` has expired
    pid_t pid;           // entries copied into a fork()ed child are not the child's
  };
  std::mutex mutex;
  std::condition_variable closed;
  std::map<std::filesystem::path, Entry> envs;
};

Registry& registry() {
  // Never destroyed: a backend in a static object may close after static destruction began.
  static Registry* const instance = new Registry();
  return *instance;
}

// The deleter of a shared environment: closes it and removes it from the registry in one step,
// so that an open of the same directory never overlaps the close.
void release_env(LmdbEnv* env) noexcept {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  if (auto it = reg.envs.find(env->path); it != reg.envs.end() && it->second.raw == env) {
    reg.envs.erase(it);
  }
  delete env;
  reg.closed.notify_all();
}

unsigned env_flags(Durability durability) noexcept {
  // MDB_NOTLS: read transactions are not tied to threads, so the store may hand them between
  // threads and keep several on one thread.
  // MDB_WRITEMAP: a write transaction changes pages in the map itself instead of keeping a
  // malloc'd copy of every page it dirties until commit. Without it a single transaction that
  // touches a large tree (a recursive delete of 100,000 terms, which docs/SEMANTICS.md §6
  // requires in one call) would hold a heap copy of every page it changes; with it the heap
  // stays flat. The costs, from lmdb.h: a stray write through a wild pointer in the host could
  // reach the map (the map is read-only to readers either way), and data.mdb is extended to the
  // map size (whose blocks reserve_map reserves).
  unsigned flags = MDB_NOTLS | MDB_WRITEMAP;
  switch (durability) {
  case Durability::sync: break;
  case Durability::no_meta_sync: flags |= MDB_NOMETASYNC; break;
  case Durability::no_sync: flags |= MDB_NOSYNC; break;
  }
  return flags;
}

// LMDB keeps its reader table in lock.mdb, a shared mapping it writes through: a new lock file
// on a full disk would take SIGBUS at its first write. So a new one is made here first, with the
// blocks of the table LMDB will lay out reserved (beyond its end, which LMDB then sets).
// Under the map lock: another process opening the store at once waits, and finds the file with
// its blocks. A file whose blocks cannot be had is left (empty: LMDB lays it out) and the open
// fails, saying why.
Result<void> reserve_lock_file(LmdbEnv& env, const std::filesystem::path& dir,
                               unsigned max_readers) {
  detail::MapLock sizing(env.sizing_mutex, env.map_lock_fd);
  const auto file = dir / "lock.mdb";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  const bool made = fd >= 0;
  if (!made) {
    // There already: its blocks are reserved too (a no-op where they are). One that an open
    // made and could not reserve, on a full disk, is empty, and LMDB lays it out through a
    // mapping: SIGBUS where the disk cannot give it the pages.
    fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return {};  // not ours to write (read-only media): LMDB says why, if anything
  }
  // The table's header and one 64-byte slot per reader, a page more for slack.
  const std::size_t size = (std::size_t{max_readers} + 2) * 64 + 2 * page_size();
  auto reserved = detail::reserve_blocks(fd, size, FALLOC_FL_KEEP_SIZE, file);
  ::close(fd);
  if (!reserved && made) ::unlink(file.c_str());  // the next open makes it again
  return reserved;
}

// Opens `map.lock` beside the data, which every sizing of the map holds (MapLock). Read-only,
// it is opened for reading (flock needs no more), and not created: without it (read-only media
// that a copy made without it) the reader adopts other processes' growth unlocked, as LMDB
// itself does there.
Result<void> open_map_lock(LmdbEnv& env, const std::filesystem::path& dir) {
  if (env.read_only) {
    env.map_lock_fd = ::open((dir / "map.lock").c_str(), O_RDONLY | O_CLOEXEC);
    return {};
  }
  env.map_lock_fd = ::open((dir / "map.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (env.map_lock_fd < 0) {
    return fail(Errc::storage, "open " + (dir / "map.lock").string() + ": " + std::strerror(errno));
  }
  return {};
}

// Data larger than `map_size` (a directory reopened with a smaller size) makes LMDB map just
// the data, so the first write would fail; start at the first doubling that leaves room.
Result<void> grow_past_data(LmdbEnv& env, std::size_t map_size) {
  MDB_envinfo info;
  mdb_env_info(env.env, &info);
  if (info.me_mapsize > map_size) {
    while (map_size <= info.me_mapsize && map_size < env.max_map_size) {
      map_size = map_size > env.max_map_size / 2 ? env.max_map_size : map_size * 2;
    }
    if (map_size > info.me_mapsize) {
      if (int rc = mdb_env_set_mapsize(env.env, map_size); rc != MDB_SUCCESS) {
        return lmdb_error(rc, "set map size");
      }
    }
  }
  return {};
}

// Maps and opens the environment under the map lock, at no less than the data file's size.
Result<void> map_env(LmdbEnv& env, const std::filesystem::path& dir, const LmdbOptions& options,
                     std::size_t map_size, std::size_t page) {
  detail::MapLock sizing(env.sizing_mutex, env.map_lock_fd);
  // Opening maps the size asked for and cuts the file to it: ask for no less than the file is,
  // which another process may have grown (the doubling below keeps room for writes).
  map_size = std::max(map_size, detail::data_file_size(dir) / page * page);
  env.max_map_size = std::max(env.max_map_size, map_size);
  if (int rc = mdb_env_set_mapsize(env.env, map_size); rc != MDB_SUCCESS) {
    return lmdb_error(rc, "set map size");
  }
  // Read-only: MDB_RDONLY (LMDB leaves out MDB_WRITEMAP then, and never cuts the file).
  const unsigned flags = env_flags(options.durability) | (env.read_only ? MDB_RDONLY : 0u);
  if (int rc = mdb_env_open(env.env, dir.c_str(), flags, 0644); rc != MDB_SUCCESS) {
    return lmdb_error(rc, "open " + dir.string());
  }
  int dead_readers = 0;
  if (int rc = mdb_reader_check(env.env, &dead_readers); rc != MDB_SUCCESS) {
    return lmdb_error(rc, "clear stale readers");
  }
  if (env.read_only) return {};  // writes no data: needs no room for it
  return grow_past_data(env, map_size);
}

// Opens the main (unnamed) database, whose handle every transaction uses.
Result<void> open_main_db(LmdbEnv& env) {
  auto txn = env.begin_txn(MDB_RDONLY);
  if (!txn) {
    return txn.error();
  }
  int rc = mdb_dbi_open(*txn, nullptr, 0, &env.dbi);
  if (rc == MDB_SUCCESS) {
    rc = mdb_txn_commit(*txn);  // commit keeps the database handle
  } else {
    mdb_txn_abort(*txn);
  }
  env.gate.leave();
  if (rc != MDB_SUCCESS) {
    return lmdb_error(rc, "open the main database");
  }
  return {};
}

Result<std::unique_ptr<LmdbEnv>> open_env(const std::filesystem::path& dir,
                                          const LmdbOptions& options) {
  auto env = std::make_unique<LmdbEnv>();
  env->path = dir;
  env->pid = ::getpid();
  env->read_only = options.read_only;
  const std::size_t page = page_size();
  // A size no page count can hold (rounded up, it would wrap to 0) is refused.
  if (options.map_size > std::numeric_limits<std::size_t>::max() - page)
    return Error(Errc::invalid_value, "LmdbOptions::map_size " + std::to_string(options.map_size) +
                                          " is larger than any map");
  const std::size_t map_size = (std::max(options.map_size, page) + page - 1) / page * page;
  env->max_map_size = std::max(map_size, options.max_map_size / page * page);

  if (int rc = mdb_env_create(&env->env); rc != MDB_SUCCESS) {
    env->env = nullptr;
    return lmdb_error(rc, "create environment");
  }
  if (int rc = mdb_env_set_maxreaders(env->env, options.max_readers); rc != MDB_SUCCESS) {
    return lmdb_error(rc, "set max readers");
  }
  if (auto l = open_map_lock(*env, dir); !l) {
    return l.error();
  }
  if (!env->read_only) {
    if (auto l = reserve_lock_file(*env, dir, options.max_readers); !l) {
      return l.error();
    }
  }
  if (auto m = map_env(*env, dir, options, map_size, page); !m) {
    return m.error();
  }
  env->refresh_map_size();
  if (!env->read_only) {
    // A disk too full for the map still lets the store be read (verify, export); write
    // transactions try again and are refused until the reservation succeeds.
    detail::MapLock sizing(env->sizing_mutex, env->map_lock_fd);
    (void)env->reserve_map();
  }
  if (auto d = open_main_db(*env); !d) {
    return d.error();
  }
  return env;
}

}  // namespace

LmdbBackend::LmdbBackend(std::shared_ptr<LmdbEnv> env, bool read_only)
    : env_(std::move(env)), read_only_(read_only) {}

LmdbBackend::~LmdbBackend() = default;

Result<std::unique_ptr<LmdbBackend>> LmdbBackend::open(const std::filesystem::path& dir,
                                                       LmdbOptions options) {
  std::error_code ec;
  if (options.read_only) {
    // Nothing is created: a store to read must be there.
    if (!std::filesystem::is_regular_file(dir / "data.mdb", ec)) {
      return fail(Errc::storage, "no LMDB store in " + dir.string() + " to open read-only (no " +
                                     (dir / "data.mdb").string() + ")");
    }
  } else {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fail(Errc::storage, "cannot create directory " + dir.string() + ": " + ec.message());
    }
  }
  const std::filesystem::path path = std::filesystem::canonical(dir, ec);
  if (ec) {
    return fail(Errc::storage, "cannot resolve directory " + dir.string() + ": " + ec.message());
  }

  std::shared_ptr<LmdbEnv> env;
  {
    Registry& reg = registry();
    std::unique_lock lock(reg.mutex);
    const pid_t pid = ::getpid();
    for (;;) {
      auto it = reg.envs.find(path);
      if (it == reg.envs.end() || it->second.pid != pid) {
        break;
      }
      env = it->second.env.lock();
      if (env) {
        if (env->read_only && !options.read_only) {
          return fail(Errc::storage, "the LMDB store in " + path.string() +
                                         " is open read-only in this process: it cannot be "
                                         "opened read-write until every handle is closed");
        }
        break;
      }
      reg.closed.wait(lock);  // its last user is closing it
    }
    if (!env) {
      auto opened = open_env(path, options);
      if (!opened) {
        return opened.error();
      }
      env = std::shared_ptr<LmdbEnv>(opened->release(), release_env);
      reg.envs.insert_or_assign(path, Registry::Entry{env, env.get(), pid});
    }
  }
  return std::unique_ptr<LmdbBackend>(new LmdbBackend(std::move(env), options.read_only));
}

Result<std::unique_ptr<Transaction>> LmdbBackend::begin(Mode mode) {
  if (mode == Mode::read_write && read_only_) {
    return fail(Errc::storage, "the LMDB store in " + env_->path.string() +
                                   " is open read-only (LmdbOptions::read_only): it takes no write");
  }
  if (mode == Mode::read_write) {
    // At the maximum size the write may still fit (erasures free pages): go on, and let a
    // write that does not fit fail with storage_full.
    if (auto grown = env_->grow_if_needed(); !grown && grown.error().code() != Errc::storage_full) {
      return grown.error();
    }
    if (auto reserved = env_->ensure_reserved(); !reserved) {
      return reserved.error();
    }
  }
  auto txn = std::make_unique<LmdbTransaction>(env_, mode);
  if (auto started = txn->start(); !started) {
    return started.error();
  }
  return std::unique_ptr<Transaction>(std::move(txn));
}

Result<void> LmdbBackend::grow() {
  if (read_only_) {
    return fail(Errc::storage, "the LMDB store in " + env_->path.string() +
                                   " is open read-only (LmdbOptions::read_only): its map does "
                                   "not grow");
  }
  ExclusiveGate exclusive(env_->gate);
  env_->growth_needed.store(false);
  return env_->grow_locked();
}

std::size_t LmdbBackend::map_size() const noexcept { return env_->map_size.load(); }

bool LmdbBackend::grows_when_full() const noexcept {
  return !read_only_ && !env_->full_at_max.load();
}

namespace {

// mdb_reader_list writes one line per reader slot: "pid thread txnid", txnid "-" for a slot
// whose transaction has ended, after a header line. Counts the others.
int count_reader(const char* line, void* context) {
  std::string_view text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const auto last = text.rfind(' ');
  const auto txnid = last == std::string_view::npos ? text : text.substr(last + 1);
  if (!txnid.empty() && txnid != "-" && txnid != "txnid" && txnid != "readers)" &&
      txnid.find_first_not_of("0123456789") == std::string_view::npos)
    ++*static_cast<unsigned*>(context);
  return 0;
}

// Flushes `path` (a file or a directory) to disk.
Result<void> sync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(Errc::storage, "cannot open " + path.string() + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0)
    return fail(Errc::storage, "cannot flush " + path.string() + ": " + std::strerror(saved));
  return {};
}

}  // namespace

Result<LmdbStats> LmdbBackend::stats() const {
  LmdbStats out;
  MDB_envinfo info;
  if (int rc = mdb_env_info(env_->env, &info); rc != MDB_SUCCESS)
    return lmdb_error(rc, "environment info");
  out.map_size = info.me_mapsize;
  out.pages_in_use = info.me_last_pgno + 1;
  out.last_transaction = info.me_last_txnid;
  out.max_readers = info.me_maxreaders;
  out.reader_slots_used = info.me_numreaders;
  // Before our own read transaction, so that it is not counted.
  if (int rc = mdb_reader_list(env_->env, count_reader, &out.readers); rc < 0)
    return lmdb_error(rc, "reader list");

  auto txn = env_->begin_txn(MDB_RDONLY);
  if (!txn) return txn.error();
  struct End {
    LmdbEnv& env;
    MDB_txn* txn;
    ~End() {
      mdb_txn_abort(txn);
      env.gate.leave();
    }
  } end{*env_, *txn};
  MDB_stat stat;
  if (int rc = mdb_stat(*txn, env_->dbi, &stat); rc != MDB_SUCCESS)
    return lmdb_error(rc, "statistics");
  out.page_size = stat.ms_psize;
  out.entries = stat.ms_entries;
  out.depth = stat.ms_depth;
  out.branch_pages = stat.ms_branch_pages;
  out.leaf_pages = stat.ms_leaf_pages;
  out.overflow_pages = stat.ms_overflow_pages;
  // The free list is database 0: each value is a list of page numbers led by its length, as
  // mdb_stat -f counts it. The length is taken from the value's size, which LMDB writes as
  // exactly that many numbers and one more: a damaged page can give a node data outside the
  // map, and its size is all that is read of it.
  MDB_cursor* cursor = nullptr;
  if (int rc = mdb_cursor_open(*txn, 0, &cursor); rc != MDB_SUCCESS)
    return lmdb_error(rc, "open the free list");
  MDB_val key, value;
  int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
  for (; rc == MDB_SUCCESS; rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
    constexpr std::size_t number = sizeof(std::size_t);  // LMDB's page number, pgno_t
    if (value.mv_size < number || value.mv_size % number != 0 ||
        value.mv_size > out.pages_in_use * number + number) {
      mdb_cursor_close(cursor);
      return fail(Errc::storage, "the store is corrupt: a free list entry of " +
                                     std::to_string(value.mv_size) + " bytes");
    }
    out.free_pages += value.mv_size / number - 1;
  }
  mdb_cursor_close(cursor);
  if (rc != MDB_NOTFOUND) return lmdb_error(rc, "read the free list");
  return out;
}

Result<std::optional<MapStats>> LmdbBackend::map_stats() const {
  auto s = stats();
  if (!s) return s.error();
  return std::optional<MapStats>(*s);
}

void LmdbBackend::make_room(std::uint64_t bytes) {
  auto s = stats();
  if (!s) return;
  // The data takes about what its export does, plus indexes and half-full pages. Room for twice
  // that: the map's blocks are reserved as it grows, so room made is disk taken.
  const std::uint64_t wanted = s->pages_in_use * s->page_size + 2 * bytes;
  while (map_size() < wanted)
    if (!grow()) return;  // at its maximum, or the disk is full: the writes will tell
}

Result<bool> LmdbBackend::copy_to(const std::filesystem::path& dir) const {
  {
    // The copy's data.mdb is made here, its owner's alone from the start (LMDB would make it
    // readable by all the umask lets), and never over an existing file.
    const auto file = dir / "data.mdb";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
      return fail(Errc::storage, "copy to " + dir.string() + ": cannot create " + file.string() +
                                     ": " + std::strerror(errno));
    // Inside the gate, like a transaction: the map must not be resized under the copy's reader.
    env_->gate.enter();
    const int rc = mdb_env_copyfd2(env_->env, fd, MDB_CP_COMPACT);
    env_->gate.leave();
    ::close(fd);
    if (rc != MDB_SUCCESS) return lmdb_error(rc, "copy to " + dir.string());
  }
  // mdb_env_copy2 writes the file but does not flush it: a backup should survive a crash.
  if (auto s = sync_path(dir / "data.mdb", false); !s) return s.error();
  if (auto s = sync_path(dir, true); !s) return s.error();
  return true;
}

}  // namespace catalog::storage

#endif  // CATALOG_IMPL_STORAGE_LMDB_BACKEND_IPP
