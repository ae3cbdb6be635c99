#ifndef CATALOG_IMPL_ENGINE_VALUES_IPP
#define CATALOG_IMPL_ENGINE_VALUES_IPP

// The stored values: every JSON value the engine stores (entity records, history snapshots,
// change events) is read back through parse_stored, the one parse of stored JSON; the other
// values are fixed-width numbers and ids (keys.hpp: decode_count, decode_u64, id_from_bytes).

#include <catalog/detail/engine/engine.hpp>

#include <catalog/json.hpp>

#include <boost/json/parse.hpp>

namespace catalog::engine {

namespace json = boost::json;

Result<json::value> parse_stored(std::string_view bytes, json::storage_ptr storage) {
  // What the engine stored was serialized from values that passed the strict parse on the way
  // in (catalog::json::parse: no duplicate members, valid UTF-8, finite numbers), so Boost's own
  // parser reads it back, faster; only the depth is larger than a request's: stored values wrap
  // a document in a few levels (history, events, change descriptions).
  json::parse_options po;
  po.max_depth = catalog::json::max_parse_depth;
  boost::system::error_code ec;
  auto v = json::parse(bytes, ec, std::move(storage), po);
  if (ec) return fail(Errc::storage, ec.message());
  return v;
}

Result<json::object> decode_snapshot(std::string_view bytes) {
  auto v = parse_stored(bytes);
  if (!v || !v->is_object()) return fail(Errc::storage, "corrupt snapshot");
  return std::move(v->get_object());
}

Result<json::object> decode_event(std::uint64_t offset, std::string_view bytes) {
  auto v = parse_stored(bytes);
  if (!v || !v->is_object()) return fail(Errc::storage, "corrupt change event");
  // Parsed text gives an int64; the offset is written as the unsigned it was appended with.
  v->get_object()["offset"] = offset;
  return std::move(v->get_object());
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_VALUES_IPP
