#ifndef CATALOG_DETAIL_ENGINE_PAGING_HPP
#define CATALOG_DETAIL_ENGINE_PAGING_HPP

// Paged reads: lists with cursors (docs/SEMANTICS.md §8) and change events (docs/SEMANTICS.md §13).
// Each page costs O(limit + log n): a seek in the ordered index, then `limit + 1` keys; totals come
// from counters.

#include <catalog/detail/engine/cursor.hpp>
#include <catalog/detail/engine/engine.hpp>

#include <catalog/options.hpp>
#include <catalog/results.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace catalog::engine {

/// Largest `limit` of a list or events page (docs/SEMANTICS.md §8, §15).
inline constexpr std::int64_t max_limit = 1'000'000;

/// Checks a page size: 0 to `max_limit`. Errors: bad_request (invalid_parameter).
Result<void> check_limit(std::int64_t limit);

/// A list request checked on its own (docs/SEMANTICS.md §14 step 3), before any transaction.
struct ListQuery {
  Kind kind = Kind::user;
  std::int64_t limit = 10;
  /// At most one of them; `cursor_text` is the cursor exactly as received (empty pages echo it).
  std::optional<ListPosition> before;
  std::optional<ListPosition> after;
  std::string cursor_text;
  FieldSet fields;
  Include include = Include::non_deleted;
  std::optional<std::string> service;  // canonical FQN of the service
};

/// Errors (bad_request): invalid_parameter (limit, both cursors, a cursor that does not decode,
/// include, a service filter on a kind without services), invalid_field, invalid_fqn (service).
Result<ListQuery> parse_list_query(Kind kind, const ListOptions& options);

/// One page of `query`, authorized as ViewBasic (ViewAll with extra fields) on the kind.
/// An unknown service gives an empty page with total 0. Errors: forbidden, storage.
Result<JsonPage> list(Tx& tx, const Principal& who, const ListQuery& query);
/// list() with the entities as their structs (render_entity), each moved into `sink`.
/// Errors: those of list(), storage (an entity `sink` does not take).
Result<detail::PageCursors> list_entities(Tx& tx, const Principal& who, const ListQuery& query,
                                          detail::EntitySink sink);

/// Events with offsets after `after`, at most `limit` (already checked); `after` of the page is
/// set when more follow; `total` is the number of events. Errors: storage.
Result<JsonEventPage> events(Tx& tx, std::uint64_t after, std::int64_t limit);

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_PAGING_HPP
