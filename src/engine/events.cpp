// Reading change events (S13). Offsets are dense from 1, so the last offset is the total and
// `after` is a plain offset rather than a cursor.

#include "paging.hpp"

#include <catalog/json.hpp>

namespace catalog::engine {

Result<EventPage> events(Tx& tx, std::uint64_t after, std::int64_t limit) {
  EventPage page;
  const auto prefix = keys::event_prefix();
  {
    auto last = tx.raw().scan(storage::prefix_range(prefix), storage::Direction::reverse);
    if (!last) return last.error();
    if ((*last)->valid())
      page.total =
          static_cast<std::int64_t>(keys::decode_u64((*last)->key().substr(prefix.size())));
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
    // Stored events hold patched values nested deeper than a request may be.
    auto v = json::parse(c->value(), {json::max_parse_depth});
    if (!v || !v->is_object()) return fail(Errc::storage, "corrupt change event");
    last_offset = keys::decode_u64(c->key().substr(prefix.size()));
    // Parsed text gives an int64; the offset is written as the unsigned it was appended with.
    v->get_object()["offset"] = last_offset;
    page.data.push_back(std::move(v->get_object()));
    if (auto n = c->next(); !n) return n.error();
  }
  return page;
}

}  // namespace catalog::engine
