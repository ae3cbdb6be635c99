#ifndef CATALOG_IMPL_ENGINE_VALUES_IPP
#define CATALOG_IMPL_ENGINE_VALUES_IPP

// The stored values: every JSON value the engine stores (entity records, history snapshots,
// change events) is read back through parse_stored, the one parse of stored JSON; the other
// values are fixed-width numbers and ids (keys.hpp: decode_count, decode_u64, id_from_bytes).
// Entity records are encoded and decoded here: straight from their text when they are in the
// form the engine writes, else through the parsed document.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/json.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <cstring>

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
  v->get_object()[wire::offset()] = offset;
  return std::move(v->get_object());
}

// ---- entity records ----

std::string encode(const Record& r) {
  // Written member by member, as serializing the object {k, c?, g?, d?, doc} writes it, without
  // building that object or any member's JSON: type names, ids and member names need no
  // escapes, and the document's members are written from the struct (write_text).
  std::string out;
  out.reserve(512);
  out += R"({"k":")";
  out += type_name(r.kind);
  out += '"';
  auto id = [&](const char* member, const std::optional<Uuid>& v) {
    if (!v) return;
    out += member;
    out += to_string(*v);
    out += '"';
  };
  id(R"(,"c":")", r.container);
  id(R"(,"g":")", r.glossary);
  if (r.deleted_by) {
    out += R"(,"d":)";
    out += std::to_string(r.deleted_by);
  }
  wire::key(out, envelope::document);
  out += '{';
  r.write_stored(out);
  out += "}}";
  return out;
}

bool decode_text(std::string_view bytes, Record& out) {
  detail::TextReader in(bytes);
  std::string_view type;
  if (!in.eat(R"({"k":)") || !in.plain_string(type)) return false;
  auto kind = kind_from_type(type);
  if (!kind) return false;
  std::optional<Uuid> container, glossary;
  std::uint64_t deleted_by = 0;
  auto id = [&](std::string_view member, std::optional<Uuid>& v) {
    if (!in.eat(member)) return true;
    return detail::read_text(in, v.emplace());
  };
  if (!id(R"(,"c":)", container) || !id(R"(,"g":)", glossary)) return false;
  if (in.eat(R"(,"d":)") && !detail::read_text(in, deleted_by)) return false;
  std::string_view member;
  if (!in.eat(',') || !in.key(member) || member != envelope::document) return false;
  if (!record_from_text(*kind, in, out) || !in.eat('}') || !in.at_end()) return false;
  out.container = container;
  out.glossary = glossary;
  out.deleted_by = deleted_by;
  return true;
}

std::optional<Record> decode_text(std::string_view bytes) {
  std::optional<Record> r(std::in_place);
  if (!decode_text(bytes, *r)) r.reset();
  return r;
}

Result<void> decode(std::string_view bytes, Record& out) {
  // Records the engine wrote are read straight into their struct; anything else (a document
  // kept in another form, or one that does not decode) goes through the DOM, which reads every
  // form and words the error.
  if (decode_text(bytes, out)) return {};
  auto r = decode_document(bytes);
  if (!r) return r.error();
  out = std::move(*r);
  return {};
}

Result<Record> decode(std::string_view bytes) {
  Record r;
  if (auto d = decode(bytes, r); !d) return d.error();
  return r;
}

Result<Record> decode_document(std::string_view bytes) {
  auto corrupt = [] { return fail(Errc::storage, "corrupt entity record"); };
  // The parsed document lives only until it is read into the struct: one buffer holds it.
  unsigned char buffer[4096];
  json::monotonic_resource scratch(buffer, sizeof buffer);
  auto v = parse_stored(bytes, &scratch);
  if (!v || !v->is_object()) return corrupt();
  auto& o = v->get_object();
  auto k = o.find("k");
  if (k == o.end() || !k->value().is_string()) return corrupt();
  auto kind = kind_from_type(k->value().get_string());
  if (!kind) return corrupt();
  auto doc = o.find(envelope::document);
  if (doc == o.end() || !doc->value().is_object()) return corrupt();
  auto r = record_from_document(*kind, doc->value().get_object());
  if (!r) return r.error();
  auto id_of = [](const json::value& v) -> std::optional<Uuid> {
    if (!v.is_string()) return std::nullopt;
    auto id = parse_uuid(v.get_string());
    if (!id) return std::nullopt;
    return *id;
  };
  if (auto c = o.find("c"); c != o.end()) {
    r->container = id_of(c->value());
    if (!r->container) return corrupt();
  }
  if (auto g = o.find("g"); g != o.end()) {
    r->glossary = id_of(g->value());
    if (!r->glossary) return corrupt();
  }
  if (auto d = o.find("d"); d != o.end()) {
    const auto& n = d->value();
    if (n.is_uint64())
      r->deleted_by = n.get_uint64();
    else if (n.is_int64() && n.get_int64() >= 0)
      r->deleted_by = static_cast<std::uint64_t>(n.get_int64());
    else
      return corrupt();
  }
  return r;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_VALUES_IPP
