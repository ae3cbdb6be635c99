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

FieldTable::FieldTable(std::span<const std::string_view> described,
                       std::span<const std::size_t> offsets, std::span<const FieldOps* const> ops) {
  names_.reserve(described.size());  // never grows again: the fields point into it
  for (auto name : described) names_.push_back(camel_name(name));
  fields_.reserve(described.size());
  for (std::size_t i = 0; i < described.size(); ++i)
    fields_.push_back(Field{names_[i], offsets[i], ops[i]});
}

bool has_required(const Layout& layout, std::uint64_t seen) {
  for (auto name : layout.required)
    if (auto at = layout.table.find(name); !at || !(seen >> *at & 1)) return false;
  return true;
}

bool has_every_non_optional(const Layout& layout, std::uint64_t seen) {
  for (std::size_t i = 0; i < layout.fields.size(); ++i)
    if (!layout.fields[i].ops->optional && !(seen >> i & 1)) return false;
  return true;
}

boost::json::value struct_to_json(const void* object, const Layout& layout) {
  boost::json::object out;
  for (const Field& f : layout.fields) {
    const void* field = f.in(object);
    if (f.ops->present(field)) out[f.name] = f.ops->to_json(field);
  }
  return out;
}

bool read_members(const boost::json::object& obj, void* out, const Layout& layout) {
  std::uint64_t seen = 0;
  for (const auto& kv : obj) {
    auto at = layout.table.find(kv.key());
    if (!at) return false;
    const Field& f = layout.fields[*at];
    if (!f.ops->from_json(kv.value(), f.in(out), quiet_path)) return false;
    seen |= std::uint64_t{1} << *at;
  }
  return has_required(layout, seen);
}

Result<void> struct_from_json(const boost::json::value& v, void* out, const Layout& layout,
                              std::string_view path) {
  if (!v.is_object()) return type_error(path, "an object");
  const auto& obj = v.get_object();
  if (read_members(obj, out, layout)) return {};
  // Quiet, the caller only needs to know that we failed: it converts us again with a path to
  // find out why. Looking here too would convert every failing level twice, exponential in the
  // depth of nested structs (search index fields nest).
  if (is_quiet(path)) return fail(Errc::invalid_request, "Invalid member");
  // Something is wrong: find what, in the order the messages are defined (a missing required
  // member first, then the members in struct order, then an unknown member). Each member is
  // converted quietly (linear) and only the failing one again with its path.
  auto member_path = [&](std::string_view name) {
    std::string p;
    if (!path.empty()) {
      p.reserve(path.size() + 1 + name.size());
      p.append(path);
      p += '.';
    }
    p.append(name);
    return p;
  };
  for (auto name : layout.required)
    if (!obj.contains(name))
      return fail(Errc::invalid_request, "Missing required member " + member_path(name));
  for (const Field& f : layout.fields) {
    auto kv = obj.find(f.name);
    if (kv == obj.end()) continue;
    void* field = f.in(out);
    if (f.ops->from_json(kv->value(), field, quiet_path)) continue;
    return f.ops->from_json(kv->value(), field, member_path(f.name)).error();
  }
  for (const auto& kv : obj)
    if (!layout.table.find(kv.key()))
      return fail(Errc::invalid_request, "Unknown member " + member_path(kv.key()));
  return {};
}

bool struct_canonical(const boost::json::value& v, const Layout& layout) {
  if (!v.is_object()) return false;
  const auto& obj = v.get_object();
  std::uint64_t seen = 0;
  std::size_t next = 0;  // the smallest position the next member may have
  for (const auto& kv : obj) {
    auto at = layout.table.find(kv.key());
    if (!at || *at < next) return false;
    next = *at + 1;
    seen |= std::uint64_t{1} << *at;
    if (!layout.fields[*at].ops->canonical(kv.value())) return false;
  }
  return obj.size() == layout.fields.size() || has_every_non_optional(layout, seen);
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
