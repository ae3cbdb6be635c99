#ifndef CATALOG_STORAGE_LMDB_BACKEND_HPP
#define CATALOG_STORAGE_LMDB_BACKEND_HPP

// The LMDB storage backend: the default, and the only one that persists.

#include <catalog/error.hpp>
#include <catalog/storage/backend.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>

namespace catalog::storage {

/// How much a commit waits for the disk. Every mode survives a crash of the process; they differ
/// in what a crash of the operating system may lose.
enum class Durability {
  sync,          // flush data and meta pages at every commit: a commit is durable
  no_meta_sync,  // MDB_NOMETASYNC: the last commit may be undone by a system crash
  no_sync,       // MDB_NOSYNC: recent commits may be undone by a system crash, and a file
                 // system that reorders writes may leave the database corrupt
};

/// Options of LmdbBackend::open. They apply when the environment is first opened in this
/// process; a second open of the same directory shares the environment and its options.
struct LmdbOptions {
  // Initial size of the memory map, rounded up to the page size; the map doubles when full.
  // Default: 64 MiB.
  std::size_t map_size = std::size_t{64} << 20;
  // Size the map never grows past: a write that needs more fails with storage_full.
  // Default: 1 TiB.
  std::size_t max_map_size = std::size_t{1} << 40;
  // Most read transactions open at once, over every process sharing the directory.
  // Default: 126.
  unsigned max_readers = 126;
  // Default: Durability::sync.
  Durability durability = Durability::sync;
};

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
/// Lifetimes: transactions may outlive the LmdbBackend; cursors die with their transaction.
class LmdbBackend final : public Backend {
 public:
  /// Opens (creating if missing) the environment in directory `dir`, creating the directory
  /// too, and clears reader slots left by dead processes. Errors: storage (the directory cannot
  /// be created or opened, or is not an LMDB environment).
  [[nodiscard]] static Result<std::unique_ptr<LmdbBackend>> open(const std::filesystem::path& dir,
                                                                 LmdbOptions options = {});

  ~LmdbBackend() override;
  LmdbBackend(const LmdbBackend&) = delete;
  LmdbBackend& operator=(const LmdbBackend&) = delete;

  /// Begins a transaction. A write transaction first grows the map if a write found it full
  /// (see the class comment), and every transaction adopts a map grown by another process.
  /// Errors: storage (including too many readers).
  [[nodiscard]] Result<std::unique_ptr<Transaction>> begin(Mode mode) override;

  /// Doubles the map now, up to `max_map_size`. Waits until every transaction of this process
  /// has ended. REQUIRES: the calling thread holds no transaction of this directory.
  /// Errors: storage_full (already at `max_map_size`), storage.
  [[nodiscard]] Result<void> grow();

  /// The current size of the memory map in bytes. Errors: none.
  [[nodiscard]] std::size_t map_size() const noexcept;

 private:
  explicit LmdbBackend(std::shared_ptr<detail::LmdbEnv> env);

  std::shared_ptr<detail::LmdbEnv> env_;
};

}  // namespace catalog::storage

#endif  // CATALOG_STORAGE_LMDB_BACKEND_HPP
