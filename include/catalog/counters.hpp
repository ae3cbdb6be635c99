#ifndef CATALOG_COUNTERS_HPP
#define CATALOG_COUNTERS_HPP

// What a Store counts while it works (Store::counters()), for a host's metrics: operations by
// kind and outcome, the retries the store made on its own, and how long commits take.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace catalog {

/// The operations a Store counts: one per group of Store methods (the `_json` and typed forms of
/// an operation count as the same one).
enum class StoreOperation {
  create,        ///< create
  get,           ///< get by id or FQN
  list,          ///< list and list_to_sink
  patch,         ///< patch (JSON merge patch or JSON Patch)
  update,        ///< update and update_json (an edit applied as a JSON Patch)
  remove,        ///< soft or hard delete
  restore,       ///< restore
  follow,        ///< follow and unfollow
  vote,          ///< vote
  history,       ///< version history and one version
  events,        ///< change events
  search,        ///< search
  suggest,       ///< suggest (typeahead)
  aggregate,     ///< aggregate (one facet)
  authenticate,  ///< authenticate and principal
  verify,        ///< verify
  reindex,       ///< reindex, however many transactions it takes
  maintain,      ///< the work of opening a store: converting an older key schema, building a
                 ///< missing search index, making the configured admins
};

/// How many StoreOperation values there are.
inline constexpr std::size_t store_operation_count =
    static_cast<std::size_t>(StoreOperation::maintain) + 1;

/// How many ErrorKind values there are.
inline constexpr std::size_t error_kind_count = static_cast<std::size_t>(ErrorKind::internal) + 1;

/// The operation's name in snake case: `create`, `get`, ..., `maintain`.
CATALOG_DECL std::string_view store_operation_name(StoreOperation op) noexcept;

/// The outcomes of one operation since the store was opened.
struct OperationCounts {
  /// Operations that succeeded.
  std::uint64_t ok = 0;
  /// Operations that failed, by the kind of their error (index: `static_cast<std::size_t>(kind)`).
  std::array<std::uint64_t, error_kind_count> failed{};
};

/// A snapshot of a Store's counters, all since the store was opened (Store::counters()).
struct StoreCounters {
  /// Outcomes by operation (index: `static_cast<std::size_t>(StoreOperation)`). An operation is
  /// counted once, with its final outcome, however many times it ran again.
  std::array<OperationCounts, store_operation_count> operations{};
  /// Runs again after a full LMDB map, which the backend grew.
  std::uint64_t map_full_retries = 0;
  /// Runs again after a conflict with concurrent writers (PostgreSQL).
  std::uint64_t conflict_retries = 0;
  /// Operations that gave up after conflicting on every attempt (answered storage_conflict).
  std::uint64_t conflicts_given_up = 0;
  /// Runs again after the database server ended the transaction's session before it committed
  /// (storage_unavailable: a restart, a failover; PostgreSQL).
  std::uint64_t unavailable_retries = 0;
  /// Operations slower than `StoreOptions::slow_operation` (when that is set).
  std::uint64_t slow_operations = 0;
  /// Write transactions committed.
  std::uint64_t commits = 0;
  /// Commit time percentiles: the time the backend takes to make a write durable. Each is the
  /// upper end of a histogram bucket, at most 25% above the true value; zero before any commit.
  std::chrono::microseconds commit_p50{};
  std::chrono::microseconds commit_p90{};  ///< see commit_p50
  std::chrono::microseconds commit_p99{};  ///< see commit_p50
  std::chrono::microseconds commit_max{};  ///< the slowest commit, exactly
  std::chrono::microseconds commit_total{};  ///< all commits together
};

}  // namespace catalog

#endif  // CATALOG_COUNTERS_HPP
