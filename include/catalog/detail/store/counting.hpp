#ifndef CATALOG_DETAIL_STORE_COUNTING_HPP
#define CATALOG_DETAIL_STORE_COUNTING_HPP

// The Store's counters as it keeps them: relaxed atomics any thread adds to, read as a
// StoreCounters snapshot (<catalog/counters.hpp>). Commit times go into a histogram of buckets
// a quarter of a power of two wide (so a percentile read from it is at most 25% high).

#include <catalog/counters.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace catalog::detail {

class StoreCounting {
 public:
  /// One operation's final outcome: success, or failure with an error of kind `kind`.
  void succeeded(StoreOperation op) noexcept { add(operations_[index(op)][0]); }
  void failed(StoreOperation op, ErrorKind kind) noexcept {
    add(operations_[index(op)][1 + static_cast<std::size_t>(kind)]);
  }
  void map_full_retry() noexcept { add(map_full_retries_); }
  void conflict_retry() noexcept { add(conflict_retries_); }
  void conflict_given_up() noexcept { add(conflicts_given_up_); }
  void unavailable_retry() noexcept { add(unavailable_retries_); }
  void slow_operation() noexcept { add(slow_operations_); }
  void commit(std::chrono::nanoseconds took) noexcept;

  StoreCounters snapshot() const noexcept;

  /// The histogram bucket of a time in microseconds, and the largest time it holds.
  static std::size_t bucket(std::uint64_t us) noexcept;
  static std::uint64_t bucket_top(std::size_t bucket) noexcept;
  static constexpr std::size_t bucket_count = 4 * 64;

 private:
  static void add(std::atomic<std::uint64_t>& n) noexcept {
    n.fetch_add(1, std::memory_order_relaxed);
  }
  static std::size_t index(StoreOperation op) noexcept { return static_cast<std::size_t>(op); }

  // Per operation: [0] ok, [1 + kind] failed.
  std::array<std::array<std::atomic<std::uint64_t>, error_kind_count + 1>, store_operation_count>
      operations_{};
  std::atomic<std::uint64_t> map_full_retries_{0};
  std::atomic<std::uint64_t> conflict_retries_{0};
  std::atomic<std::uint64_t> conflicts_given_up_{0};
  std::atomic<std::uint64_t> unavailable_retries_{0};
  std::atomic<std::uint64_t> slow_operations_{0};
  std::atomic<std::uint64_t> commit_max_us_{0};
  std::atomic<std::uint64_t> commit_total_us_{0};
  std::array<std::atomic<std::uint64_t>, bucket_count> commit_us_{};
};

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_STORE_COUNTING_HPP
