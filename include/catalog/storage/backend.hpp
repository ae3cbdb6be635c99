#ifndef CATALOG_STORAGE_BACKEND_HPP
#define CATALOG_STORAGE_BACKEND_HPP

// The storage interface: a dumb, memcmp-ordered key-value store with transactions and cursors.
// Catalog rules never live here; a backend only stores bytes.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

/// Storage: the key-value interface the catalog runs on (transactions, cursors, memcmp order) and
/// its backends (memory, LMDB, PostgreSQL).
namespace catalog::storage {

/// Longest key any backend accepts (LMDB's default limit). Longer keys: Errc::key_too_long.
inline constexpr std::size_t max_key_size = 511;

/// What a transaction may do.
enum class Mode {
  read_only,  ///< reads only: a snapshot, never blocked by a writer
  read_write  ///< reads and writes
};
/// The order of a scan.
enum class Direction {
  forward,  ///< ascending keys
  reverse   ///< descending keys
};

/// A half-open key range [begin, end). No `end` means up to the end of the keyspace.
struct Range {
  std::string begin;               ///< inclusive lower bound; "" = start of the keyspace
  std::optional<std::string> end;  ///< exclusive upper bound; nullopt = end of keyspace
};

/// The range of every key starting with `prefix`: `end` is `prefix` with its trailing 0xFF
/// bytes dropped and its last other byte incremented; no `end` if nothing is left (an empty
/// prefix, or one made only of 0xFF bytes). Errors: none.
CATALOG_DECL Range prefix_range(std::string_view prefix);

/// Checks the key rule every backend applies: not empty (LMDB refuses empty keys), at most
/// `max_key_size` bytes. Errors: invalid_value (empty), key_too_long.
[[nodiscard]] CATALOG_DECL Result<void> check_key(std::string_view key);

/// A position in a scan. Not thread-safe. Dies with its transaction: the transaction closes
/// its cursors before it ends. `key()` and `value()` views are valid until the next `next()`
/// or until the transaction writes. After the transaction writes, `next()` moves to the entry
/// following (in the scan's direction) the key the cursor was on, as the transaction now sees
/// the store, so a scan may erase the entries it visits.
class CATALOG_DECL Cursor {
 public:
  /// Closes the cursor.
  virtual ~Cursor() = default;
  /// True while positioned on an entry inside the range.
  virtual bool valid() const noexcept = 0;
  /// REQUIRES: valid().
  virtual std::string_view key() const noexcept = 0;
  /// REQUIRES: valid().
  virtual std::string_view value() const noexcept = 0;
  /// Moves one entry in the scan's direction. REQUIRES: valid(). Errors: storage.
  [[nodiscard]] virtual Result<void> next() = 0;
};

/// One transaction. Used by one thread at a time. Sees its own writes. Destruction without a
/// successful commit rolls back. After any failed write or commit the transaction is dead:
/// every later call fails with the same error. A put or erase refused by `check_key` is a failed
/// write; a `get` or `scan` refused by `check_key` or failing in the backend itself does not
/// kill the transaction, but one that fails with storage_conflict does, and so may one that
/// failed on a database server (see the backend). After a commit every call fails with
/// Errc::storage.
///
/// storage_conflict: a backend whose write transactions run concurrently (PostgreSQL) fails a
/// transaction that cannot be serialized with the others, from any call; it is then dead and
/// changed nothing: run it again from the start. Memory and LMDB never return it.
///
/// storage_unavailable: a backend over a database server (PostgreSQL) whose session for the
/// transaction ended before it committed (a restart, a failover) fails the transaction from any
/// call, the commit included; it is then dead and changed nothing: run it again from the start,
/// once the server takes sessions again. Memory and LMDB never return it.
class CATALOG_DECL Transaction {
 public:
  /// Ends the transaction: rolls it back unless it committed.
  virtual ~Transaction() = default;
  /// The value stored at `key`, or nullopt. Errors: invalid_value, key_too_long,
  /// storage_conflict, storage.
  [[nodiscard]] virtual Result<std::optional<std::string>> get(std::string_view key) = 0;
  /// What `get` returns, as a view the backend may lend from its own memory instead of a copy
  /// (LMDB's map, the memory backend's values). The view is valid until the next call on this
  /// transaction, whatever it is. The default keeps `get`'s copy in the transaction. Errors:
  /// as `get`.
  [[nodiscard]] virtual Result<std::optional<std::string_view>> get_view(std::string_view key) {
    auto v = get(key);
    if (!v) return v.error();
    if (!*v) return std::optional<std::string_view>();
    lent_ = std::move(**v);
    return std::optional<std::string_view>(lent_);
  }
  /// Whether the views `get_view`, `get_each` and its cursors' `key()` and `value()` lend stay
  /// valid, and unchanged, until this transaction ends, whatever is called on it in between:
  /// true for an LMDB read-only transaction (its map's pages do not change under a reader). A
  /// reader that keeps many values (a search's candidates) copies them only when this is false.
  /// The default: false.
  [[nodiscard]] virtual bool views_last() const noexcept { return false; }
  /// The callback of get_each: the index of a key in `keys`, and the value stored at it or
  /// nullopt.
  using Visit = std::function<void(std::size_t, std::optional<std::string_view>)>;
  /// What `get_view` answers for each of `keys`, in their order: `visit(i, value)` for i = 0, 1,
  /// ..., with the value stored at keys[i] or nullopt. A view is valid during its visit only, and
  /// `visit` must not call this transaction. Keys in ascending order read fastest: LMDB keeps its
  /// place in the tree from one key to the next, and PostgreSQL asks for a batch of keys in one
  /// round trip. The default calls `get_view` key by key. On an error, keys before the one that
  /// failed may have been visited, that one and those after it are not, and the transaction is
  /// left as a failed `get` leaves it (PostgreSQL: dead after a failed round trip). An exception
  /// from `visit` propagates; the transaction stays usable. Errors: as `get`.
  [[nodiscard]] virtual Result<void> get_each(std::span<const std::string_view> keys,
                                              const Visit& visit) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      auto v = get_view(keys[i]);
      if (!v) return v.error();
      visit(i, *v);
    }
    return {};
  }
  /// Says that the transaction is about to read `keys` and scan each of `ranges` forward, so that
  /// a backend paying a round trip per read fetches them together, in one, and answers those
  /// reads from what it fetched (PostgreSQL: up to 1,024 keys, and each range of up to 128
  /// entries, kept while the transaction lasts and its writes are not sent). What every read
  /// answers is the same with or without it. A range without an end is left out. The default,
  /// for backends whose reads cost no round trip (memory, LMDB), checks the keys and does
  /// nothing more: see `reads_ahead`. Errors: as `get` (a refused key: as `check_key`).
  [[nodiscard]] virtual Result<void> prefetch(std::span<const std::string_view> keys,
                                              std::span<const Range> ranges) {
    (void)ranges;
    for (auto key : keys)
      if (auto checked = check_key(key); !checked) return checked.error();
    return {};
  }
  /// Whether `prefetch` does anything: a caller that would work to name what it reads next
  /// skips that work when it does not. The default: false.
  [[nodiscard]] virtual bool reads_ahead() const noexcept { return false; }
  /// Stores `value` at `key` (replacing). Errors: invalid_value, key_too_long, storage_full
  /// (the map is full: the transaction is dead; retry it from the start), storage_conflict,
  /// storage (also: a write in a read-only transaction).
  [[nodiscard]] virtual Result<void> put(std::string_view key, std::string_view value) = 0;
  /// Removes `key`; true if it existed. Errors: invalid_value, key_too_long, storage_full,
  /// storage_conflict, storage.
  [[nodiscard]] virtual Result<bool> erase(std::string_view key) = 0;
  /// Removes the keys of `range` in ascending order, at most `limit` of them, and says how many
  /// it removed: fewer than `limit` means none is left in the range. Open cursors go on as after
  /// `erase`. The default erases each key a scan of the range stands on (PostgreSQL then knows
  /// it exists without asking the server); LMDB removes each key where its own cursor stands,
  /// without looking it up again. Errors: as `erase`.
  [[nodiscard]] virtual Result<std::uint64_t> erase_range(const Range& range, std::uint64_t limit) {
    auto cursor = scan(range, Direction::forward);
    if (!cursor) return cursor.error();
    std::uint64_t erased = 0;
    for (auto& c = *cursor; c->valid() && erased < limit; ++erased) {
      const std::string key(c->key());  // the view may not outlive the erase
      if (auto e = erase(key); !e) return e.error();
      if (auto n = c->next(); !n) return n.error();
    }
    return erased;
  }
  /// A cursor over `range`, ascending (forward) or descending (reverse). Errors:
  /// storage_conflict, storage.
  [[nodiscard]] virtual Result<std::unique_ptr<Cursor>> scan(const Range& range, Direction dir) = 0;
  /// Makes the writes durable and visible; closes cursors. A read-only transaction's commit
  /// just ends it. Errors: storage_full or storage_conflict (nothing written; the caller may
  /// retry), storage.
  [[nodiscard]] virtual Result<void> commit() = 0;

 private:
  std::string lent_;  // the default get_view's copy
};

/// What a backend kept in one memory-mapped B-tree file says of it (LMDB's mdb_env_info,
/// mdb_env_stat, free list and reader table, as `mdb_stat -efr` prints them). Plain data.
struct MapStats {
  std::size_t map_size = 0;      ///< bytes of the memory map
  std::size_t page_size = 0;     ///< bytes of a page
  std::size_t pages_in_use = 0;  ///< pages of the file written so far (last page + 1)
  std::size_t free_pages = 0;    ///< of those, pages on the free list (reused by writes)
  std::size_t entries = 0;       ///< keys stored
  std::size_t depth = 0;         ///< of the B-tree
  std::size_t branch_pages = 0;  ///< B-tree pages by type: branch pages
  std::size_t leaf_pages = 0;    ///< leaf pages
  std::size_t overflow_pages = 0;      ///< values larger than a page take overflow pages
  std::uint64_t last_transaction = 0;  ///< id of the last committed write transaction
  unsigned max_readers = 0;            ///< reader slots of the environment
  unsigned reader_slots_used = 0;      ///< slots taken since the lock file was created
  unsigned readers = 0;                ///< read transactions open now, over every process
};

/// A store of bytes. Thread-safe: transactions may be begun from any thread. Read transactions
/// see a snapshot (taken in `begin`) and are never blocked by a writer. Memory and LMDB run one
/// write transaction at a time; a backend that runs them concurrently (PostgreSQL) makes them
/// serializable and fails the ones it cannot serialize with storage_conflict.
///
/// Beside `begin`, what maintenance tools (catalog::admin) ask of a backend, each with a default
/// that suits a backend which can do nothing special: a backend overrides what it does better.
class CATALOG_DECL Backend {
 public:
  /// Destroys the backend (the memory, LMDB and PostgreSQL backends let transactions outlive it).
  virtual ~Backend() = default;
  /// Begins a transaction. Errors: storage.
  [[nodiscard]] virtual Result<std::unique_ptr<Transaction>> begin(Mode mode) = 0;

  /// The figures of a memory-mapped file, for a backend that keeps one. Default: none.
  /// Errors: storage.
  [[nodiscard]] virtual Result<std::optional<MapStats>> map_stats() const {
    return std::optional<MapStats>();
  }
  /// Writes a consistent copy of the store into the empty directory `dir` in the backend's own
  /// way, as one read transaction sees it, and returns true; or returns false, having written
  /// nothing, when the backend has no such way (the caller then copies key by key). Default:
  /// false. Errors: storage.
  [[nodiscard]] virtual Result<bool> copy_to(const std::filesystem::path& dir) const {
    (void)dir;
    return false;
  }
  /// Whether a write transaction that failed with storage_full may succeed when run again,
  /// because the backend makes room meanwhile (an LMDB map below its maximum size): asked after
  /// each such failure. Default: false.
  [[nodiscard]] virtual bool grows_when_full() const noexcept { return false; }
  /// Makes room ahead of about `bytes` more data, so that a large transaction need not fill the
  /// store and run again. A hint: failing to is not an error. Default: nothing.
  virtual void make_room(std::uint64_t bytes) { (void)bytes; }
  /// Whether every write transaction is refused (a store opened for reading only, as
  /// LmdbOptions::read_only): Store::open then writes nothing, and refuses a store it would
  /// have to convert or an admin it would have to make.
  /// Default: false.
  [[nodiscard]] virtual bool read_only() const noexcept { return false; }
};

}  // namespace catalog::storage

#endif  // CATALOG_STORAGE_BACKEND_HPP
