#ifndef CATALOG_STORAGE_LMDB_BACKEND_HPP
#define CATALOG_STORAGE_LMDB_BACKEND_HPP

// The LMDB storage backend: the default, and the only one that persists.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/storage/backend.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace catalog::storage {

/// How much a commit waits for the disk. Every mode survives a crash of the process; they differ
/// in what a crash of the operating system may lose.
enum class Durability {
  sync,          ///< flush data and meta pages at every commit: a commit is durable
  no_meta_sync,  ///< MDB_NOMETASYNC: the last commit may be undone by a system crash
  no_sync,       ///< MDB_NOSYNC: recent commits may be undone by a system crash, and a file
                 ///< system that reorders writes may leave the database corrupt
};

/// Options of LmdbBackend::open. They apply when the environment is first opened in this
/// process; a second open of the same directory shares the environment and its options.
struct LmdbOptions {
  /// Initial size of the memory map, rounded up to the page size; the map doubles when full.
  /// A size that cannot be rounded up (within a page of SIZE_MAX) fails the open
  /// (invalid_value). Default: 64 MiB.
  std::size_t map_size = std::size_t{64} << 20;
  /// Size the map never grows past: a write that needs more fails with storage_full.
  /// Default: 1 TiB.
  std::size_t max_map_size = std::size_t{1} << 40;
  /// Most read transactions open at once, over every process sharing the directory.
  /// Default: 126.
  unsigned max_readers = 126;
  /// How much a commit waits for the disk (docs/SEMANTICS.md §15). Default: Durability::sync.
  Durability durability = Durability::sync;
  /// Open for reading only (LMDB's MDB_RDONLY): the store must exist, nothing is created,
  /// reserved or grown, and every write transaction fails with Errc::storage. A store on
  /// read-only media opens so (LMDB then takes no locks: no process may write it meanwhile); on
  /// a writable file system LMDB still needs to write `lock.mdb`, as every reader does. A
  /// directory already open read-write in this process is shared, and this backend still refuses
  /// writes; one already open read-only cannot be opened read-write in the same process.
  /// Default: false.
  bool read_only = false;
};

/// What LMDB says about an environment (the MapStats of the storage interface).
using LmdbStats = MapStats;

namespace detail {
struct LmdbEnv;
}  // namespace detail

/// A Backend over an LMDB environment in a directory (files `data.mdb` and `lock.mdb`).
///
/// Thread safety: transactions may be begun from any thread. A read transaction sees a snapshot
/// and may move between threads (the environment uses MDB_NOTLS). A write transaction must end
/// on the thread that began it (LMDB's writer lock belongs to a thread); one writer at a time,
/// over every process sharing the directory.
///
/// Processes: several processes may open the same directory at once. Within a process, every
/// open of one directory shares one environment, which closes when the last LmdbBackend and
/// transaction using it are gone. A child created by fork() must not use its parent's backends
/// or transactions; it may open its own.
///
/// Map size: when a write finds the map full, it fails with storage_full and the next
/// `begin(read_write)` doubles the map (up to `max_map_size`), so retrying the whole
/// transaction succeeds. Growing waits until every transaction of this process has ended and
/// holds back new ones meanwhile: a thread must not begin a write transaction, or call `grow`,
/// while it holds another transaction of the same directory.
///
/// Disk space: the blocks of the whole map are reserved in data.mdb when it is opened and each
/// time it grows (posix_fallocate), so data.mdb takes the map's size on disk. A write into the
/// map can therefore never meet a full disk (with MDB_WRITEMAP that would kill the process with
/// SIGBUS): a full disk shows when the map is reserved, as a storage error with the system's
/// words ("No space left on device") from `begin(read_write)`, nothing written. Reading goes on;
/// once space is freed, the next write transaction reserves the map and proceeds.
///
/// Lifetimes: transactions may outlive the LmdbBackend; cursors die with their transaction.
class CATALOG_DECL LmdbBackend final : public Backend {
 public:
  /// Opens (creating if missing) the environment in directory `dir`, creating the directory
  /// too, and clears reader slots left by dead processes; read-only (LmdbOptions::read_only), it
  /// opens an existing one and creates nothing. Errors: storage (the directory cannot be created
  /// or opened, is not an LMDB environment, or has no data.mdb when read-only; one open
  /// read-only in this process asked for read-write).
  [[nodiscard]] static Result<std::unique_ptr<LmdbBackend>> open(const std::filesystem::path& dir,
                                                                 LmdbOptions options = {});

  /// Closes this handle; the environment closes when no backend or transaction uses it.
  ~LmdbBackend() override;
  /// Not copyable: open the directory again for another handle.
  LmdbBackend(const LmdbBackend&) = delete;
  /// Not assignable.
  LmdbBackend& operator=(const LmdbBackend&) = delete;

  /// Begins a transaction. A write transaction first grows the map if a write found it full
  /// (see the class comment) and reserves its disk blocks if that has not been done, and every
  /// transaction adopts a map grown by another process. Errors: storage (including too many
  /// readers, a disk too full for the map, and a write transaction of a read-only backend).
  [[nodiscard]] Result<std::unique_ptr<Transaction>> begin(Mode mode) override;

  /// Doubles the map now, up to `max_map_size`. Waits until every transaction of this process
  /// has ended. REQUIRES: the calling thread holds no transaction of this directory.
  /// Errors: storage_full (already at `max_map_size`), storage (also a disk too full for the
  /// grown map: the map stays as it was).
  [[nodiscard]] Result<void> grow();

  /// The current size of the memory map in bytes. Errors: none.
  [[nodiscard]] std::size_t map_size() const noexcept;

  /// The environment's figures (see LmdbStats), read in a read transaction of their own; the
  /// free list is walked, O(its length). Errors: storage.
  [[nodiscard]] Result<LmdbStats> stats() const;
  /// stats(), for maintenance tools that ask any backend.
  [[nodiscard]] Result<std::optional<MapStats>> map_stats() const override;

  /// Writes a consistent copy of the environment into `dir`/data.mdb, compacted (free pages
  /// left out, pages renumbered: `mdb_env_copy2` with MDB_CP_COMPACT), and flushes it to disk;
  /// returns true. The copy is the store as one read transaction sees it: writers in this and
  /// other processes go on meanwhile. Holds a reader slot while it runs, and the map cannot grow
  /// in this process until it ends. REQUIRES: the calling thread holds no write transaction of
  /// this directory. Errors: storage (`dir` missing, data.mdb already there, a failed write).
  [[nodiscard]] Result<bool> copy_to(const std::filesystem::path& dir) const override;

  /// Whether a write that failed with storage_full may succeed when run again: true, as the
  /// next write transaction grows the map, unless read-only, or a write found the map full at
  /// `max_map_size` and it has not grown since (that write fails so, saying so).
  [[nodiscard]] bool grows_when_full() const noexcept override;
  /// Whether it was opened with LmdbOptions::read_only.
  [[nodiscard]] bool read_only() const noexcept override { return read_only_; }
  /// Grows the map ahead of `bytes` more data: to the pages in use plus twice `bytes` (its
  /// blocks are reserved as it grows), stopping at `max_map_size` or at the first growth that
  /// fails.
  void make_room(std::uint64_t bytes) override;

 private:
  LmdbBackend(std::shared_ptr<detail::LmdbEnv> env, bool read_only);

  std::shared_ptr<detail::LmdbEnv> env_;
  bool read_only_ = false;
};

}  // namespace catalog::storage

#endif  // CATALOG_STORAGE_LMDB_BACKEND_HPP
