#ifndef CATALOG_IMPL_JSON_MAPPING_IPP
#define CATALOG_IMPL_JSON_MAPPING_IPP

#include <catalog/detail/json_mapping.hpp>

#include <cmath>

namespace catalog::detail {

std::string camel_name(std::string_view snake) {
  if (snake == "tag_fqn") return "tagFQN";
  std::string out;
  out.reserve(snake.size());
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

Result<void> from_json(const boost::json::value& v, std::string& out, std::string_view path) {
  if (!v.is_string()) return type_error(path, "a string");
  out.assign(v.get_string().data(), v.get_string().size());
  return {};
}

Result<void> from_json(const boost::json::value& v, bool& out, std::string_view path) {
  if (!v.is_bool()) return type_error(path, "a boolean");
  out = v.get_bool();
  return {};
}

Result<void> from_json(const boost::json::value& v, std::int64_t& out, std::string_view path) {
  if (v.is_int64()) {
    out = v.get_int64();
    return {};
  }
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    out = static_cast<std::int64_t>(v.get_uint64());
    return {};
  }
  return type_error(path, "an integer");
}

Result<void> from_json(const boost::json::value& v, Uuid& out, std::string_view path) {
  if (!v.is_string()) return type_error(path, "a UUID string");
  auto id = parse_uuid(v.get_string());
  if (!id) return fail(Errc::invalid_uuid, "Invalid member " + std::string(path) + ": " +
                                               id.error().message());
  out = *id;
  return {};
}

Result<void> from_json(const boost::json::value& v, Version& out, std::string_view path) {
  // A version is a number with one decimal; the double must be exactly tenths/10.
  double d = 0;
  if (v.is_double())
    d = v.get_double();
  else if (v.is_int64())
    d = static_cast<double>(v.get_int64());
  else if (v.is_uint64())
    d = static_cast<double>(v.get_uint64());
  else
    return type_error(path, "a version number");
  double tenths = std::round(d * 10.0);
  if (!(tenths >= 1.0 && tenths < 4e9) || static_cast<double>(tenths) / 10.0 != d)
    return type_error(path, "a version number like 0.1");
  out = Version::from_tenths(static_cast<std::uint32_t>(tenths));
  return {};
}

Result<void> from_json(const boost::json::value& v, boost::json::value& out, std::string_view) {
  out = v;  // assignment keeps `out`'s memory resource: `v` may live in a scratch buffer
  return {};
}

Result<void> from_json(const boost::json::value& v, boost::json::object& out,
                       std::string_view path) {
  if (!v.is_object()) return type_error(path, "an object");
  out = v.get_object();
  return {};
}

}  // namespace catalog::detail

#endif  // CATALOG_IMPL_JSON_MAPPING_IPP
