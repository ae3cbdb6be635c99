#ifndef CATALOG_STORAGE_MEMORY_BACKEND_HPP
#define CATALOG_STORAGE_MEMORY_BACKEND_HPP

// A storage backend in memory: for unit tests and for hosts that want no files.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/storage/backend.hpp>

#include <memory>

namespace catalog::storage {

namespace detail {
struct MemoryState;
}  // namespace detail

/// A Backend over an ordered map in memory; nothing persists. Thread-safe: transactions may be
/// begun from any thread. A read transaction sees the store as it was when it began and is never
/// blocked by an open write transaction. One write transaction at a time: `begin(read_write)`
/// waits until the previous one ends. A write transaction keeps its changes apart from the map
/// (O(log n) a write; one that only reads copies nothing). Its commit applies them to the map in
/// place, O(changes), if no read transaction holds the store's current state (a read transaction
/// begun meanwhile waits that long); otherwise it copies the map once, O(n), so those readers keep
/// their snapshot. Transactions may outlive the backend. Keys follow `check_key`, the same rule
/// as LmdbBackend.
class CATALOG_DECL MemoryBackend final : public Backend {
 public:
  /// An empty store.
  MemoryBackend();
  /// Destroys the backend; open transactions may outlive it.
  ~MemoryBackend() override;
  /// Not copyable.
  MemoryBackend(const MemoryBackend&) = delete;
  /// Not assignable.
  MemoryBackend& operator=(const MemoryBackend&) = delete;

  /// Begins a transaction; a write transaction first waits for the current writer to end.
  /// REQUIRES (read_write): the calling thread holds no write transaction of this backend.
  /// Errors: none in practice (Result for the interface).
  [[nodiscard]] Result<std::unique_ptr<Transaction>> begin(Mode mode) override;

 private:
  std::shared_ptr<detail::MemoryState> state_;
};

}  // namespace catalog::storage

#endif  // CATALOG_STORAGE_MEMORY_BACKEND_HPP
