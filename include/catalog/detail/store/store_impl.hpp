#ifndef CATALOG_DETAIL_STORE_STORE_IMPL_HPP
#define CATALOG_DETAIL_STORE_STORE_IMPL_HPP

// Store::Impl: the backend, the options, and the transaction runners every Store method uses.
// Store methods live in several files of impl/store/ (store.ipp, store_lifecycle.ipp,
// store_list.ipp, ...), one per group of operations.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/search/index.hpp>
#include <catalog/detail/store/counting.hpp>

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

  /// What the store counts (Store::counters()).
  detail::StoreCounting counting;

  /// Says `message` to the log sink, if there is one.
  void log(LogLevel level, const std::string& message) const {
    if (options.log) options.log(level, message);
  }

  /// Counts the final outcome of an operation that began at `start`, and logs it when it was
  /// slower than `options.slow_operation`. Returns `result`.
  template <class R>
  R&& finish(StoreOperation op, std::chrono::steady_clock::time_point start, R&& result) {
    if (result)
      counting.succeeded(op);
    else
      counting.failed(op, result.error().kind());
    if (options.slow_operation.count() > 0) {
      auto took = std::chrono::steady_clock::now() - start;
      if (took >= options.slow_operation) {
        counting.slow_operation();
        log(LogLevel::warning,
            "slow operation: " + std::string(store_operation_name(op)) + " took " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
                " ms" + (result ? "" : " and failed: " + result.error().message()));
      }
    }
    return std::forward<R>(result);
  }

  /// An operation `op` that failed before its transaction began: counted as such.
  Error failed(StoreOperation op, Error e) {
    counting.failed(op, e.kind());
    return e;
  }

  /// Attempts of an operation whose transaction keeps conflicting with concurrent writers (a
  /// backend that runs them concurrently: PostgreSQL) before it gives up.
  static constexpr int conflict_attempts = 12;

  /// Runs `fn` in one write transaction and commits. A full map aborts the transaction; the
  /// backend grows it and the whole operation runs again, so nothing is lost. A transaction the
  /// backend could not serialize with concurrent writers (storage_conflict) changed nothing: the
  /// whole operation runs again after a short random pause, growing with each conflict, at most
  /// `conflict_attempts` times in all; then storage_conflict, nothing changed.
  /// The operation is counted as `op`, with its final outcome.
  template <class F>
  auto write(StoreOperation op, F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    using R = decltype(fn(std::declval<engine::Tx&>()));
    const auto start = std::chrono::steady_clock::now();
    Attempts attempts(*this);
    for (;;) {
      auto txn = backend->begin(storage::Mode::read_write);
      if (!txn) return finish(op, start, R(txn.error()));
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (result && options.search_index)
        if (auto s = engine::search_index::update(tx); !s) result = s.error();
      if (!result) {
        if (attempts.again(result.error())) continue;
        return finish(op, start, R(attempts.final(result.error())));
      }
      const auto commit_start = std::chrono::steady_clock::now();
      auto committed = (*txn)->commit();
      if (!committed) {
        if (attempts.again(committed.error())) continue;
        return finish(op, start, R(attempts.final(committed.error())));
      }
      counting.commit(std::chrono::steady_clock::now() - commit_start);
      notify(tx.first_event(), tx.last_event());
      return finish(op, start, std::move(result));
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
  auto read(StoreOperation op, F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    using R = decltype(fn(std::declval<engine::Tx&>()));
    const auto start = std::chrono::steady_clock::now();
    Attempts attempts(*this);
    for (;;) {
      auto txn = backend->begin(storage::Mode::read_only);
      if (!txn) return finish(op, start, R(txn.error()));
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (!result && attempts.again(result.error())) continue;
      if (!result) return finish(op, start, R(attempts.final(result.error())));
      return finish(op, start, std::move(result));
    }
  }

  /// The retries of one operation: how many times the map was full or the transaction
  /// conflicted, and the pause before the next attempt. Each retry is counted and logged.
  class Attempts {
   public:
    explicit Attempts(Impl& impl) : impl_(impl) {}
    /// Whether to run the operation again after `e` (pausing first after a conflict).
    bool again(const Error& e);
    /// The error to answer: after the last conflict, one that says the operation gave up.
    Error final(Error e) const;
    int conflicts() const noexcept { return conflicts_; }

   private:
    Impl& impl_;
    int full_ = 0;
    int conflicts_ = 0;
  };
};

}  // namespace catalog

#endif  // CATALOG_DETAIL_STORE_STORE_IMPL_HPP
