#ifndef CATALOG_DETAIL_STORE_STORE_IMPL_HPP
#define CATALOG_DETAIL_STORE_STORE_IMPL_HPP

// Store::Impl: the backend, the options, and the transaction runners every Store method uses.
// Store methods live in several files of impl/store/ (store.ipp, store_lifecycle.ipp,
// store_list.ipp, ...), one per group of operations.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/search/index.hpp>
#include <catalog/detail/store/counting.hpp>
#include <catalog/detail/store/in_transaction.hpp>
#include <catalog/detail/utf8.hpp>

#include <catalog/auth/jwt.hpp>
#include <catalog/store.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>

namespace catalog {

// The library's own, though nested in the exported Store: a shared libcatalog does not export it.
struct CATALOG_LOCAL Store::Impl {
  std::unique_ptr<storage::Backend> backend;
  StoreOptions options;

  // Subscriptions (docs/SEMANTICS.md §13): called after commit with the events the commit appended.
  std::mutex listeners_mutex;
  std::uint64_t next_listener = 1;
  // Shared, so that a commit calls the listener itself (a stateful one keeps its state) while
  // unsubscribe may drop it from the map.
  std::map<std::uint64_t, std::shared_ptr<const std::function<void(const ChangeEvent&)>>> listeners;

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

  /// Logs (error) that a listener threw `thrown` at event `offset`. Never throws: the commit
  /// the listener was told of stands whatever happens here.
  void listener_threw(std::uint64_t offset, std::exception_ptr thrown) noexcept;

  /// Says `message` to the log sink, if there is one. A sink that throws is not heard: what the
  /// store was saying is beside an answer, which the exception must not change. The sink may not
  /// call a Store (options.hpp): while it runs, a Store operation on this thread is refused as
  /// one called from inside a transaction, wherever the line is logged from (a slow operation
  /// after its commit, a listener's exception after the listeners).
  void log(LogLevel level, const std::string& message) const noexcept {
    if (!options.log) return;
    detail::InTransaction sink;
    try {
      options.log(level, detail::one_line(message));
    } catch (...) {
    }
  }

  /// Counts the final outcome of an operation that began at `start` (`error` null for a
  /// success), and logs it when it was slower than `options.slow_operation`.
  void finished(StoreOperation op, std::chrono::steady_clock::time_point start,
                const Error* error);

  /// A `kind` that is none of Kind's values (an integer cast to it) as the error of `op`,
  /// counted; nothing for a kind that is one. Errors: bad_request (invalid_value).
  std::optional<Error> unknown_kind(StoreOperation op, Kind kind) {
    if (std::find(std::begin(all_kinds), std::end(all_kinds), kind) != std::end(all_kinds))
      return std::nullopt;
    return failed(op, Error(Errc::invalid_value,
                            "Unknown kind " + std::to_string(static_cast<int>(kind)) +
                                ": not a value of catalog::Kind"));
  }

  /// An operation `op` that failed before its transaction began: counted as such.
  Error failed(StoreOperation op, Error e) {
    counting.failed(op, e.kind());
    return e;
  }

  /// Attempts of an operation whose transaction keeps conflicting with concurrent writers (a
  /// backend that runs them concurrently: PostgreSQL) before it gives up.
  static constexpr int conflict_attempts = 12;
  /// Attempts of an operation whose transaction's session the database server keeps ending
  /// before it commits (storage_unavailable) before it gives up.
  static constexpr int unavailable_attempts = 3;

  /// One attempt of an operation in transaction `tx`: calls the operation and keeps its result
  /// (`context` is where), and returns its error, or null for a success.
  using Attempt = const Error* (*)(void* context, engine::Tx& tx);

  /// Runs `attempt` in one transaction of `mode`, again as long as it may be retried (below),
  /// and for a write updates the search index and commits. Counts the outcome as `op` (while
  /// the last transaction is still open, so its end is not in the time). Returns the error
  /// that ends the operation, or nothing when it succeeded (the result the attempt kept is then
  /// its answer).
  /// A step of a longer operation (`op` nullopt: write_step, read_step) is not counted.
  std::optional<Error> run(std::optional<StoreOperation> op, storage::Mode mode, void* context,
                           Attempt attempt);

  /// Runs `fn` in one write transaction and commits. A full map aborts the transaction; the
  /// backend grows it and the whole operation runs again, so nothing is lost. A transaction the
  /// backend could not serialize with concurrent writers (storage_conflict) changed nothing: the
  /// whole operation runs again after a short random pause, growing with each conflict, at most
  /// `conflict_attempts` times in all; then storage_conflict, nothing changed. One whose session
  /// the server ended before it committed (storage_unavailable) runs again at once, at most
  /// `unavailable_attempts` times in all (its next transaction waits for the server).
  /// The operation is counted as `op`, with its final outcome.
  template <class F>
  auto write(StoreOperation op, F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    return run_typed(op, storage::Mode::read_write, fn);
  }

  /// write() and read() for one transaction of an operation that takes several (opening a
  /// store, a reindex): not counted on its own. The operation is counted once, as a whole, by
  /// `counted`.
  template <class F>
  auto write_step(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    return run_typed(std::nullopt, storage::Mode::read_write, fn);
  }
  /// \copydoc write_step
  template <class F>
  auto read_step(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    return run_typed(std::nullopt, storage::Mode::read_only, fn);
  }

  /// Runs `steps`, an operation of several transactions made of write_step and read_step, and
  /// counts it once as `op`, timed as a whole, with its outcome.
  template <class F>
  auto counted(StoreOperation op, F&& steps) -> decltype(steps()) {
    const auto start = std::chrono::steady_clock::now();
    auto result = steps();
    finished(op, start, result ? nullptr : &result.error());
    return result;
  }

  /// The work of opening a store (Store::open), in steps: converts an older key schema,
  /// builds the search index where it is missing or of another version, and makes the
  /// configured admins. Logs each conversion. Errors: storage, and the admins' own.
  Result<void> prepare();

  /// Whether searches may read the index in `tx`: always, unless the backend is read-only and
  /// the index is not built (or is of another version, or a reindex is under way): it cannot be
  /// built then, and a search is refused rather than answered from part of it. Errors: storage.
  Result<void> searchable(engine::Tx& tx) const;

  /// Builds the search index from the entities in transactions of `batch` entities; goes on
  /// with a reindex under way unless `from_scratch`. Returns the entities indexed. Errors:
  /// storage. Its transactions are steps: the caller counts the operation.
  Result<std::uint64_t> reindex(std::size_t batch, bool from_scratch);

  /// Calls every listener with each event of offsets [first, last], in order, reading them back
  /// in batches so that a large operation's events are never all in memory.
  void notify(std::uint64_t first, std::uint64_t last);

  /// Runs `fn` in one read transaction (again, as `write` does, if it conflicted: a serializable
  /// read can, with concurrent writers).
  template <class F>
  auto read(StoreOperation op, F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    return run_typed(op, storage::Mode::read_only, fn);
  }

  /// run() for `fn`, whose result is the operation's answer.
  template <class F>
  auto run_typed(std::optional<StoreOperation> op, storage::Mode mode, F& fn)
      -> decltype(fn(std::declval<engine::Tx&>())) {
    using R = decltype(fn(std::declval<engine::Tx&>()));
    R result{Error()};  // each attempt's result replaces it
    AttemptOf<F, R> context{&fn, &result};
    if (auto error = run(op, mode, &context, &AttemptOf<F, R>::attempt))
      return R(std::move(*error));
    return result;
  }

  /// An Attempt of `fn`, keeping its result in `result`.
  template <class F, class R>
  struct AttemptOf {
    F* fn;
    R* result;
    static const Error* attempt(void* context, engine::Tx& tx) {
      auto& self = *static_cast<AttemptOf*>(context);
      *self.result = (*self.fn)(tx);
      return *self.result ? nullptr : &self.result->error();
    }
  };

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
    int unavailable_ = 0;
  };
};

/// An operation's answer as the *_json surface has it, made after its transaction.
inline Result<boost::json::object> answer_json(Result<engine::Answer> answer) {
  if (!answer) return answer.error();
  return engine::answer_json(std::move(*answer));
}
inline Result<std::optional<boost::json::object>> answer_json(
    Result<std::optional<engine::Answer>> answer) {
  if (!answer) return answer.error();
  if (!*answer) return std::optional<boost::json::object>();
  auto json = engine::answer_json(std::move(**answer));
  if (!json) return json.error();
  return std::optional<boost::json::object>(std::move(*json));
}

/// An operation's answer as its kind's struct, for typed callers, made after its transaction.
inline Result<AnyEntity> answer_entity(Result<engine::Answer> answer) {
  if (!answer) return answer.error();
  return engine::answer_entity(std::move(*answer));
}
inline Result<std::optional<AnyEntity>> answer_entity(
    Result<std::optional<engine::Answer>> answer) {
  if (!answer) return answer.error();
  if (!*answer) return std::optional<AnyEntity>();
  auto entity = engine::answer_entity(std::move(**answer));
  if (!entity) return entity.error();
  return std::optional<AnyEntity>(std::move(*entity));
}

}  // namespace catalog

#endif  // CATALOG_DETAIL_STORE_STORE_IMPL_HPP
