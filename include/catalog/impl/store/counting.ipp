#ifndef CATALOG_IMPL_STORE_COUNTING_IPP
#define CATALOG_IMPL_STORE_COUNTING_IPP

#include <catalog/detail/store/counting.hpp>

#include <bit>

namespace catalog {

std::string_view store_operation_name(StoreOperation op) noexcept {
  switch (op) {
  case StoreOperation::create: return "create";
  case StoreOperation::get: return "get";
  case StoreOperation::list: return "list";
  case StoreOperation::patch: return "patch";
  case StoreOperation::update: return "update";
  case StoreOperation::remove: return "remove";
  case StoreOperation::restore: return "restore";
  case StoreOperation::follow: return "follow";
  case StoreOperation::vote: return "vote";
  case StoreOperation::history: return "history";
  case StoreOperation::events: return "events";
  case StoreOperation::search: return "search";
  case StoreOperation::suggest: return "suggest";
  case StoreOperation::aggregate: return "aggregate";
  case StoreOperation::authenticate: return "authenticate";
  case StoreOperation::verify: return "verify";
  case StoreOperation::reindex: return "reindex";
  case StoreOperation::maintain: return "maintain";
  }
  return "maintain";
}

namespace detail {

// Times below 4 microseconds have a bucket each; above, a power of two [2^e, 2^(e+1)) splits
// into four buckets of 2^(e-2) each.
std::size_t StoreCounting::bucket(std::uint64_t us) noexcept {
  if (us < 4) return static_cast<std::size_t>(us);
  const auto e = static_cast<std::size_t>(std::bit_width(us) - 1);  // 2 <= e <= 63
  const auto quarter = static_cast<std::size_t>((us >> (e - 2)) & 3);
  return 4 * (e - 1) + quarter;
}

std::uint64_t StoreCounting::bucket_top(std::size_t b) noexcept {
  if (b < 4) return b;
  const auto e = b / 4 + 1;
  const auto quarter = b % 4;
  if (e >= 63 && quarter == 3) return UINT64_MAX;
  return ((std::uint64_t{4} + quarter + 1) << (e - 2)) - 1;
}

void StoreCounting::commit(std::chrono::nanoseconds took) noexcept {
  const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(took).count()));
  add(commit_us_[bucket(us)]);
  commit_total_us_.fetch_add(us, std::memory_order_relaxed);
  auto max = commit_max_us_.load(std::memory_order_relaxed);
  while (us > max && !commit_max_us_.compare_exchange_weak(max, us, std::memory_order_relaxed)) {
  }
}

StoreCounters StoreCounting::snapshot() const noexcept {
  StoreCounters c;
  for (std::size_t op = 0; op < store_operation_count; ++op) {
    c.operations[op].ok = operations_[op][0].load(std::memory_order_relaxed);
    for (std::size_t k = 0; k < error_kind_count; ++k)
      c.operations[op].failed[k] = operations_[op][1 + k].load(std::memory_order_relaxed);
  }
  c.map_full_retries = map_full_retries_.load(std::memory_order_relaxed);
  c.conflict_retries = conflict_retries_.load(std::memory_order_relaxed);
  c.conflicts_given_up = conflicts_given_up_.load(std::memory_order_relaxed);
  c.unavailable_retries = unavailable_retries_.load(std::memory_order_relaxed);
  c.slow_operations = slow_operations_.load(std::memory_order_relaxed);
  std::array<std::uint64_t, bucket_count> counts{};
  for (std::size_t b = 0; b < bucket_count; ++b) {
    counts[b] = commit_us_[b].load(std::memory_order_relaxed);
    c.commits += counts[b];
  }
  c.commit_max = std::chrono::microseconds(commit_max_us_.load(std::memory_order_relaxed));
  c.commit_total = std::chrono::microseconds(commit_total_us_.load(std::memory_order_relaxed));
  // The q-th percentile: the top of the first bucket at which the count so far reaches q% of
  // all commits, but never above the slowest commit seen.
  auto percentile = [&](std::uint64_t q) {
    if (c.commits == 0) return std::chrono::microseconds{0};
    const auto want = (c.commits * q + 99) / 100;
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < bucket_count; ++b) {
      seen += counts[b];
      if (seen >= want && seen > 0)
        return std::min(c.commit_max, std::chrono::microseconds(static_cast<std::int64_t>(
                                          std::min<std::uint64_t>(bucket_top(b), INT64_MAX))));
    }
    return c.commit_max;
  };
  c.commit_p50 = percentile(50);
  c.commit_p90 = percentile(90);
  c.commit_p99 = percentile(99);
  return c;
}

}  // namespace detail
}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_COUNTING_IPP
