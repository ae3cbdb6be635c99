#ifndef CATALOG_SRC_ENGINE_STORE_IMPL_HPP
#define CATALOG_SRC_ENGINE_STORE_IMPL_HPP

// Store::Impl: the backend, the options, and the transaction runners every Store method uses.
// Store methods live in several files (store.cpp, store_lifecycle.cpp, store_list.cpp, ...),
// one per group of operations.

#include "engine.hpp"

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

  // Subscriptions (S13): called after commit with the events the commit appended.
  std::mutex listeners_mutex;
  std::uint64_t next_listener = 1;
  std::map<std::uint64_t, std::function<void(const boost::json::object&)>> listeners;

  std::int64_t now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// Runs `fn` in one write transaction and commits. A full map aborts the transaction; the
  /// backend grows it and the whole operation runs again, so nothing is lost.
  template <class F>
  auto write(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    for (int attempt = 0;; ++attempt) {
      auto txn = backend->begin(storage::Mode::read_write);
      if (!txn) return txn.error();
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (!result) {
        if (result.error().code() == Errc::storage_full && attempt < 40) continue;
        return result;
      }
      auto committed = (*txn)->commit();
      if (!committed) {
        if (committed.error().code() == Errc::storage_full && attempt < 40) continue;
        return committed.error();
      }
      notify(tx.first_event(), tx.last_event());
      return result;
    }
  }

  /// Calls every listener with each event of offsets [first, last], in order, reading them back
  /// in batches so that a large operation's events are never all in memory.
  void notify(std::uint64_t first, std::uint64_t last);

  /// Runs `fn` in one read transaction.
  template <class F>
  auto read(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    auto txn = backend->begin(storage::Mode::read_only);
    if (!txn) return txn.error();
    engine::Env env{options, now()};
    engine::Tx tx(**txn, env);
    return fn(tx);
  }
};

}  // namespace catalog

#endif  // CATALOG_SRC_ENGINE_STORE_IMPL_HPP
