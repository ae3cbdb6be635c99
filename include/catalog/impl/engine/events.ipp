#ifndef CATALOG_IMPL_ENGINE_EVENTS_IPP
#define CATALOG_IMPL_ENGINE_EVENTS_IPP

// Change events (docs/SEMANTICS.md §13): the text an event is stored as, and reading them.
// Offsets are dense from 1, so the last offset is the total and `after` is a plain offset rather
// than a cursor.

#include <catalog/detail/engine/paging.hpp>

#include <catalog/detail/json_text.hpp>
#include <catalog/json.hpp>

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

// Written as text, not built as a JSON object and serialized: every write makes an event, so an
// event allocates no object and no strings beyond its own text.
EventText event_text(EventType type, const Record& r, std::optional<Version> previous,
                     const Principal& who, std::int64_t now, std::string_view change) {
  using catalog::json::serialize_string_to;
  EventText event;
  auto& out = event.text;
  out.reserve(320);
  out += '{';
  wire::key(out, detail::member_name<&ChangeEvent::id>(), true);
  detail::write_text(out, random_uuid());
  wire::key(out, wire::event_type());
  detail::write_text(out, type);
  wire::key(out, wire::entity_type());
  serialize_string_to(out, type_name(r.kind));
  wire::key(out, wire::entity_id());
  detail::write_text(out, r.id);
  wire::key(out, wire::entity_fqn());
  serialize_string_to(out, r.fqn());
  wire::key(out, detail::member_name<&ChangeEvent::previous_version>());
  detail::write_text(out, previous.value_or(r.version()));
  wire::key(out, wire::current_version());
  detail::write_text(out, r.version());
  wire::key(out, wire::user_name());
  serialize_string_to(out, who.name);
  wire::key(out, wire::timestamp());
  detail::write_text(out, now);
  const auto before_change = out.size();
  wire::key(out, detail::member_name<&ChangeEvent::change_description>());
  if (!change.empty())
    out += change;
  else if (type == EventType::entity_created || !r.write_member(wire::change_description(), out))
    out.resize(before_change);
  return event;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_EVENTS_IPP
