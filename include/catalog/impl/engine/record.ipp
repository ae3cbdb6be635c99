#ifndef CATALOG_IMPL_ENGINE_RECORD_IPP
#define CATALOG_IMPL_ENGINE_RECORD_IPP

// Records: the entity struct of a kind as the engine keeps it, its stored members in order, and
// its stored document.

#include <catalog/detail/engine/record.hpp>
#include <catalog/detail/engine/wire.hpp>
#include <catalog/detail/json_text.hpp>
#include <catalog/json.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <type_traits>

namespace catalog::engine {

namespace json = boost::json;

bool rendered_only(Kind kind, std::string_view name) {
  const auto& k = info(kind);
  if (name == wire::href() || name == wire::votes()) return true;
  if (name == k.container_field || (!k.container_type.empty() && name == k.container_type))
    return true;
  if (k.in_glossary && name == wire::glossary()) return true;
  for (const auto& rf : k.relations)
    if (rf.field == name) return true;
  for (const auto& c : k.counts)
    if (c.field == name) return true;
  return false;
}

namespace {

// What a record's conversions need of the struct of a kind, made once per kind: they are then
// loops over its member table, written once, not code made per kind.
struct Shape {
  const detail::Layout* layout = nullptr;
  std::span<const detail::TextOps* const> text;
  std::uint64_t rendered_only = 0;  // the positions of rendered-only members, as bits
  std::uint64_t required = 0;  // of what record_from_document requires: id, version, deleted
  const void* defaults = nullptr;   // a default struct of the kind
};

const Shape& shape(Kind kind) {
  static const auto shapes = [] {
    std::array<Shape, std::size(all_kinds)> out{};
    for (Kind k : all_kinds) {
      Shape& s = out[static_cast<std::size_t>(k)];
      visit_kind(k, [&]<class E>(std::type_identity<E>) {
        static_assert(record_detail::member_count<E> <= 64);
        // What a kind requires is its traits' (KindInfo::required), checked per field: a patch
        // reads the members it touched alone (patch.ipp).
        static_assert(std::size(detail::required_members<E>()) == 0);
        s.layout = &detail::layout<E>();
        s.text = detail::text_fields<E>();
        s.defaults = &detail::defaults<E>();
      });
      const auto all = s.layout->fields;
      for (std::size_t i = 0; i < all.size(); ++i)
        if (rendered_only(k, all[i].name)) s.rendered_only |= std::uint64_t{1} << i;
      for (std::string_view name : {wire::id(), wire::version(), wire::deleted()})
        s.required |= std::uint64_t{1} << *s.layout->table.find(name);
    }
    return out;
  }();
  return shapes[static_cast<std::size_t>(kind)];
}

}  // namespace

const detail::Layout& layout_of(Kind kind) { return *shape(kind).layout; }

Record::Record(Kind k) { reset(k); }

void Record::reset(Kind k) {
  kind = k;
  id = Uuid{};
  container.reset();
  glossary.reset();
  deleted_by = 0;
  visit_kind(k, [&]<class E>(std::type_identity<E>) { value.emplace<E>(); });
  stored.clear();
  written.clear();
}

std::optional<Uuid> Record::scope() const {
  if (service_kind(kind)) return container;
  return std::nullopt;
}

std::span<const detail::Field> Record::fields() const { return shape(kind).layout->fields; }

std::span<const detail::TextOps* const> Record::text_fields() const { return shape(kind).text; }

const void* Record::object() const {
  return std::visit([](const auto& e) -> const void* { return &e; }, value);
}

const void* Record::defaults() const { return shape(kind).defaults; }

std::optional<std::size_t> Record::position(std::string_view name) const {
  return shape(kind).layout->table.find(name);
}

namespace record_detail {

// The position of own member `name` of `r` when `r` stores it.
std::optional<std::size_t> stored_position(const Record& r, std::string_view name) {
  auto pos = r.position(name);
  if (!pos || std::find(r.stored.begin(), r.stored.end(), *pos) == r.stored.end())
    return std::nullopt;
  return pos;
}

}  // namespace record_detail

bool Record::stores(std::string_view name) const {
  return record_detail::stored_position(*this, name).has_value();
}

std::optional<json::value> Record::member(std::string_view name) const {
  auto pos = record_detail::stored_position(*this, name);
  if (!pos) return std::nullopt;
  if (const auto* as_written = written_as(*pos)) return *as_written;
  const auto& field = fields()[*pos];
  return field.ops->to_json(field.in(object()));  // a stored empty optional: null
}

bool Record::write_member(std::string_view name, std::string& out) const {
  auto pos = record_detail::stored_position(*this, name);
  if (!pos) return false;
  if (const auto* as_written = written_as(*pos))
    catalog::json::serialize_to(out, *as_written);
  else
    text_fields()[*pos]->write(out, fields()[*pos].in(object()));  // an empty optional: null
  return true;
}

void Record::write_stored(std::string& out) const {
  bool first = true;
  visit_stored([&](const detail::Field& field, const detail::TextOps& text, const void* address,
                   const json::value* as_written) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += field.name;
    out += "\":";
    if (as_written)
      catalog::json::serialize_to(out, *as_written);
    else
      text.write(out, address);  // an empty optional: null
  });
}

Result<void> Record::set_member(std::string_view name, const json::value* v) {
  auto pos = position(name);
  if (!pos) return fail(Errc::invalid_request, "Unknown member " + std::string(name));
  const auto& field = fields()[*pos];
  void* address = field.in(object());
  if (v) {
    // Converted aside and moved in only whole: a value that fails leaves the member as it was
    // (a vector would otherwise keep the elements read before the bad one).
    if (auto r = field.ops->set_from_json(*v, address, name); !r) return r.error();
  } else {
    field.ops->assign(address, field.in(defaults()));  // unset: the struct's default
  }
  forget_written(*pos);
  if (v && !field.ops->canonical(*v)) written.emplace_back(*pos, json::value(*v, {}));
  auto at = std::find(stored.begin(), stored.end(), static_cast<std::uint8_t>(*pos));
  if (!v) {
    if (at != stored.end()) stored.erase(at);
  } else if (at == stored.end()) {
    stored.push_back(static_cast<std::uint8_t>(*pos));
  }
  return {};
}

void Record::keep(std::string_view name) {
  auto pos = position(name);
  if (!pos) return;
  auto p = static_cast<std::uint8_t>(*pos);
  forget_written(p);
  if (std::find(stored.begin(), stored.end(), p) == stored.end()) stored.push_back(p);
}

void Record::store_present() {
  // EntityBase's members come first in every struct's description: its head (id to
  // description), then its tail (version to changeDescription); a kind's own members are
  // stored between the two.
  constexpr std::size_t base_n = record_detail::member_count<EntityBase>;
  static const std::size_t head = *detail::member_position<EntityBase>(wire::version());
  const Shape& s = shape(kind);
  const auto all = s.layout->fields;
  const void* e = object();
  stored.clear();
  written.clear();
  const auto add = [&](std::size_t p) {
    if (!(s.rendered_only >> p & 1) && all[p].ops->present(all[p].in(e)))
      stored.push_back(static_cast<std::uint8_t>(p));
  };
  for (std::size_t p = 0; p < head; ++p) add(p);
  for (std::size_t p = base_n; p < all.size(); ++p) add(p);
  for (std::size_t p = head; p < base_n; ++p) add(p);
}

Result<Record> record_from_document(Kind kind, const json::object& doc, std::string_view what_is) {
  // Messages name the entity when the document has its FQN (a policy that does not decode).
  std::string what(what_is);
  if (const auto* f = doc.if_contains(wire::fqn()); f && f->is_string())
    what += " (" + std::string(type_name(kind)) + " " + std::string(f->get_string()) + ")";
  Record r(kind);
  const Shape& s = shape(kind);
  void* e = r.object();
  // One pass in the document's own order: each member is converted straight into its struct
  // member and its position noted; only a failure converts again, for the reason.
  r.stored.reserve(doc.size());
  for (const auto& kv : doc) {
    auto pos = s.layout->table.find(kv.key());
    if (!pos || (s.rendered_only >> *pos & 1))
      return fail(Errc::storage, what + ": unknown member " + std::string(kv.key()));
    const auto& field = s.layout->fields[*pos];
    const bool converted =
        static_cast<bool>(field.ops->from_json(kv.value(), field.in(e), detail::quiet_path));
    const bool canonical = !converted || field.ops->canonical(kv.value());
    // Kept as written, copied out of the caller's (scratch) memory.
    if (converted && !canonical)
      r.written.emplace_back(static_cast<std::uint8_t>(*pos), json::value(kv.value(), {}));
    if (!converted) {
      auto why = detail::struct_from_json(json::value(doc), e, *s.layout, "");
      return fail(Errc::storage, what + (why ? std::string() : ": " + why.error().message()));
    }
    r.stored.push_back(static_cast<std::uint8_t>(*pos));
  }
  const auto& b = r.base();
  if (b.name.empty() || b.fully_qualified_name.empty() || !doc.contains(wire::id()) ||
      !doc.contains(wire::version()) || !doc.contains(wire::deleted()))
    return fail(Errc::storage, what + ": no id, name, FQN, version or deleted flag");
  r.id = b.id;
  return r;
}

bool record_from_text(Kind kind, detail::TextReader& in, Record& r) {
  r.reset(kind);
  const Shape& s = shape(kind);
  void* e = r.object();
  if (!in.eat('{')) return false;
  r.stored.reserve(s.layout->fields.size());  // one allocation
  std::uint64_t seen = 0;  // positions read, as bits (a member twice is not canonical)
  do {
    std::string_view name;
    if (!in.key(name)) return false;
    auto pos = s.layout->table.find(name);
    if (!pos || ((s.rendered_only | seen) >> *pos & 1)) return false;
    seen |= std::uint64_t{1} << *pos;
    if (!s.text[*pos]->read(in, s.layout->fields[*pos].in(e))) return false;
    r.stored.push_back(static_cast<std::uint8_t>(*pos));
  } while (in.eat(','));
  if ((seen & s.required) != s.required || !in.eat('}')) return false;
  const auto& b = r.base();
  if (b.name.empty() || b.fully_qualified_name.empty()) return false;
  r.id = b.id;
  return true;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_RECORD_IPP
