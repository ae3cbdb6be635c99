#ifndef CATALOG_IMPL_ENGINE_EVENTS_IPP
#define CATALOG_IMPL_ENGINE_EVENTS_IPP

// Reading change events (S13). Offsets are dense from 1, so the last offset is the total and
// `after` is a plain offset rather than a cursor.

#include <catalog/detail/engine/paging.hpp>

namespace catalog::engine {

Result<JsonEventPage> events(Tx& tx, std::uint64_t after, std::int64_t limit) {
  JsonEventPage page;
  const auto prefix = keys::event_prefix();
  {
    auto last = tx.raw().scan(storage::prefix_range(prefix), storage::Direction::reverse);
    if (!last) return last.error();
    if ((*last)->valid()) {
      auto offset = keys::decode_event((*last)->key());
      if (!offset) return fail(Errc::storage, "corrupt event key");
      page.total = static_cast<std::int64_t>(*offset);
    }
  }
  // Also keeps `after + 1` from wrapping around.
  if (limit == 0 || after >= static_cast<std::uint64_t>(page.total)) return page;
  auto range = storage::prefix_range(prefix);
  range.begin = keys::event(after + 1);
  auto cursor = tx.raw().scan(range, storage::Direction::forward);
  if (!cursor) return cursor.error();
  std::uint64_t last_offset = 0;
  for (auto& c = *cursor; c->valid();) {
    if (page.data.size() == static_cast<std::size_t>(limit)) {
      page.after = last_offset;
      break;
    }
    auto offset = keys::decode_event(c->key());
    if (!offset) return fail(Errc::storage, "corrupt event key");
    auto event = decode_event(*offset, c->value());
    if (!event) return event.error();
    last_offset = *offset;
    page.data.push_back(std::move(*event));
    if (auto n = c->next(); !n) return n.error();
  }
  return page;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_EVENTS_IPP
