#ifndef CATALOG_DETAIL_STORE_STORE_IMPL_HPP
#define CATALOG_DETAIL_STORE_STORE_IMPL_HPP

// Store::Impl: the backend, the options, and the transaction runners every Store method uses.
// Store methods live in several files of impl/store/ (store.ipp, store_lifecycle.ipp,
// store_list.ipp, ...), one per group of operations.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/search/index.hpp>

#include <catalog/auth/jwt.hpp>
#include <catalog/store.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

namespace catalog {

struct Store::Impl {
  std::unique_ptr<storage::Backend> backend;
  StoreOptions options;

  // Subscriptions (docs/SEMANTICS.md §13): called after commit with the events the commit appended.
  std::mutex listeners_mutex;
  std::uint64_t next_listener = 1;
  std::map<std::uint64_t, std::function<void(const ChangeEvent&)>> listeners;

  /// A stored event (engine::decode_event) as the struct. Errors: storage ("corrupt change
  /// event"), naming the member that does not decode.
  static Result<ChangeEvent> typed_event(const boost::json::object& stored);

  std::int64_t now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// Attempts of an operation whose transaction keeps conflicting with concurrent writers (a
  /// backend that runs them concurrently: PostgreSQL) before it gives up.
  static constexpr int conflict_attempts = 12;

  /// Runs `fn` in one write transaction and commits. A full map aborts the transaction; the
  /// backend grows it and the whole operation runs again, so nothing is lost. A transaction the
  /// backend could not serialize with concurrent writers (storage_conflict) changed nothing: the
  /// whole operation runs again after a short random pause, growing with each conflict, at most
  /// `conflict_attempts` times in all; then storage_conflict, nothing changed.
  template <class F>
  auto write(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    Attempts attempts;
    for (;;) {
      auto txn = backend->begin(storage::Mode::read_write);
      if (!txn) return txn.error();
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (result && options.search_index)
        if (auto s = engine::search_index::update(tx); !s) result = s.error();
      if (!result) {
        if (attempts.again(result.error())) continue;
        return attempts.final(result.error());
      }
      auto committed = (*txn)->commit();
      if (!committed) {
        if (attempts.again(committed.error())) continue;
        return attempts.final(committed.error());
      }
      notify(tx.first_event(), tx.last_event());
      return result;
    }
  }

  /// Builds the search index from the entities in transactions of `batch` entities; goes on
  /// with a reindex under way unless `from_scratch`. Returns the entities indexed. Errors:
  /// storage.
  Result<std::uint64_t> reindex(std::size_t batch, bool from_scratch);

  /// Calls every listener with each event of offsets [first, last], in order, reading them back
  /// in batches so that a large operation's events are never all in memory.
  void notify(std::uint64_t first, std::uint64_t last);

  /// Runs `fn` in one read transaction (again, as `write` does, if it conflicted: a serializable
  /// read can, with concurrent writers).
  template <class F>
  auto read(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    Attempts attempts;
    for (;;) {
      auto txn = backend->begin(storage::Mode::read_only);
      if (!txn) return txn.error();
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (!result && attempts.again(result.error())) continue;
      if (!result) return attempts.final(result.error());
      return result;
    }
  }

  /// The retries of one operation: how many times the map was full or the transaction
  /// conflicted, and the pause before the next attempt.
  class Attempts {
   public:
    /// Whether to run the operation again after `e` (pausing first after a conflict).
    bool again(const Error& e);
    /// The error to answer: after the last conflict, one that says the operation gave up.
    Error final(Error e) const;
    int conflicts() const noexcept { return conflicts_; }

   private:
    int full_ = 0;
    int conflicts_ = 0;
  };
};

}  // namespace catalog

#endif  // CATALOG_DETAIL_STORE_STORE_IMPL_HPP
