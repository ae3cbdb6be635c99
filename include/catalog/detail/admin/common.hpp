#ifndef CATALOG_DETAIL_ADMIN_COMMON_HPP
#define CATALOG_DETAIL_ADMIN_COMMON_HPP

// What the admin functions share: relation names of the export format, progress reports, and
// the engine's view of a raw transaction.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/admin.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace catalog::admin::detail {

/// The relations of the key schema by the names the export format and stats use.
struct RelationName {
  engine::Rel rel;
  std::string_view name;
};
inline constexpr RelationName relation_names[] = {
    {engine::Rel::owns, "owns"},     {engine::Rel::follows, "follows"},
    {engine::Rel::votes, "votes"},   {engine::Rel::reviews, "reviews"},
    {engine::Rel::expert, "expert"}, {engine::Rel::contains, "contains"},
    {engine::Rel::member, "member"}, {engine::Rel::policy, "policy"},
    {engine::Rel::domain, "domain"}, {engine::Rel::related, "related"},
};

/// The name of the relation stored as byte `rel`; empty for a byte that is none.
inline std::string_view relation_name(char rel) noexcept {
  for (const auto& r : relation_names)
    if (static_cast<char>(r.rel) == rel) return r.name;
  return {};
}

inline std::optional<engine::Rel> relation_from_name(std::string_view name) noexcept {
  for (const auto& r : relation_names)
    if (r.name == name) return r.rel;
  return std::nullopt;
}

/// The options the engine's Tx reads nothing of that the admin functions use (they write and
/// read records, indexes and edges; they authorize and render nothing).
inline const StoreOptions& plain_options() {
  static const StoreOptions options;
  return options;
}

/// Reports one phase of an operation to a ProgressFn: at most every `every` calls of `step`,
/// and once at the end.
class Reporter {
 public:
  Reporter(const ProgressFn& fn, std::string_view phase, std::uint64_t every = 1024)
      : fn_(fn), every_(every), start_(std::chrono::steady_clock::now()) {
    progress_.phase = phase;
  }

  Progress& progress() noexcept { return progress_; }

  /// Counts one step (an entity, a line, a key) and reports every `every` steps.
  void step() {
    if (fn_ && ++steps_ % every_ == 0) report();
  }
  /// Reports now.
  void report() {
    if (!fn_) return;
    progress_.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    fn_(progress_);
  }
  void finish() {
    progress_.finished = true;
    report();
  }

 private:
  const ProgressFn& fn_;
  std::uint64_t every_;
  std::uint64_t steps_ = 0;
  std::chrono::steady_clock::time_point start_;
  Progress progress_;
};

}  // namespace catalog::admin::detail

#endif  // CATALOG_DETAIL_ADMIN_COMMON_HPP
