#ifndef CATALOG_IMPL_ENGINE_CURSOR_IPP
#define CATALOG_IMPL_ENGINE_CURSOR_IPP

// List cursors (docs/SEMANTICS.md §8): encode and decode in one place.

#include <catalog/detail/engine/cursor.hpp>
#include <catalog/detail/engine/wire.hpp>

#include <catalog/detail/base64url.hpp>
#include <catalog/fqn.hpp>
#include <catalog/json.hpp>

#include <boost/json/object.hpp>

namespace catalog::engine {

std::string encode_cursor(const ListPosition& position) {
  boost::json::object o;
  o[wire::name()] = position.name;
  o[wire::id()] = to_string(position.id);
  return detail::base64url_encode(catalog::json::serialize(o), detail::Padding::required);
}

Result<ListPosition> decode_cursor(std::string_view text, std::string_view parameter) {
  auto refused = [&] {
    return fail(Errc::invalid_parameter,
                "Invalid " + std::string(parameter) + " cursor: not a cursor this catalog issued");
  };
  auto bytes = detail::base64url_decode(text, detail::Padding::required);
  if (!bytes) return refused();
  // Strict parse: a cursor with duplicate members or trailing bytes is not one we wrote.
  auto value = catalog::json::parse(*bytes);
  if (!value || !value->is_object()) return refused();
  const auto& o = value->get_object();
  if (o.size() != 2) return refused();
  auto name = o.find(wire::name());
  auto id = o.find(wire::id());
  if (name == o.end() || id == o.end() || !name->value().is_string() || !id->value().is_string())
    return refused();
  // Only a name an entity could have is a position: it also keeps the seek key within the
  // backend's key limit.
  if (!fqn::validate_name(name->value().get_string())) return refused();
  auto uuid = parse_uuid(id->value().get_string());
  if (!uuid) return refused();
  return ListPosition{std::string(name->value().get_string()), *uuid};
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_CURSOR_IPP
