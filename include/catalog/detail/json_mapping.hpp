#ifndef CATALOG_DETAIL_JSON_MAPPING_HPP
#define CATALOG_DETAIL_JSON_MAPPING_HPP

// The mapping between entity structs and their JSON form, written once for every described
// struct: members are named in camelCase (`fully_qualified_name` is `fullyQualifiedName`),
// absent optionals are omitted, enumerations go through their name tables, and reading is
// strict (unknown members, wrong types, values outside an enumeration, missing required members
// are errors naming the member).

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/describe/members.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace catalog::detail {

/// `snake_case` to `camelCase`; `tag_fqn` is `tagFQN` (the wire name of tag labels).
CATALOG_DECL std::string camel_name(std::string_view snake);

/// The wire name of the member that descriptor `D` describes, computed once and kept. The
/// conversions take names from fields<T>(), which computes each once as well.
template <class D>
const std::string& wire_name() {
  static const std::string name = camel_name(D::name);
  return name;
}

/// Names of an enumeration on the wire. Specialized next to each enum with
/// `static constexpr std::array<std::pair<E, std::string_view>, N> values`.
template <class E>
struct EnumNames;

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires { EnumNames<E>::values; };

template <class T>
concept Described = boost::describe::has_describe_members<T>::value;

template <Described T>
using members_of = boost::describe::describe_members<T, boost::describe::mod_public |
                                                            boost::describe::mod_inherited>;

/// What the struct-level conversions need of one member type, as functions of a member's
/// address. There is one per member type (`field_ops<F>`), shared by every struct member of
/// that type, so a struct's conversions are loops over its Fields and not code made per member.
struct FieldOps {
  bool optional;                                     ///< a std::optional
  bool (*present)(const void* field);                ///< not an empty optional
  boost::json::value (*to_json)(const void* field);  ///< an empty optional as null
  Result<void> (*from_json)(const boost::json::value& v, void* field, std::string_view path);
  /// Reads `v` into a new F and moves it into `field` only when it converted whole, so a
  /// failure leaves `field` as it was; with `field` null, only whether it converts.
  Result<void> (*set_from_json)(const boost::json::value& v, void* field, std::string_view path);
  bool (*canonical)(const boost::json::value& v);    ///< canonical(v, type_identity<F>)
  void (*assign)(void* field, const void* from);     ///< copies `from` (an F) into `field`
};

/// One member of a described struct: its wire name, where it lies, what its type needs.
struct Field {
  std::string_view name;
  std::size_t offset;
  const FieldOps* ops;
  void* in(void* object) const noexcept { return static_cast<char*>(object) + offset; }
  const void* in(const void* object) const noexcept {
    return static_cast<const char*>(object) + offset;
  }
};

/// T's members in the order of its description (defined at the end of this file).
template <Described T>
std::span<const Field> fields();

/// A T as default-constructed: what a member takes when it is unset.
template <Described T>
const T& defaults() {
  static const T value{};
  return value;
}

template <NamedEnum E>
std::string_view enum_name(E e) {
  for (const auto& [value, name] : EnumNames<E>::values)
    if (value == e) return name;
  return {};
}

template <NamedEnum E>
std::optional<E> enum_from_name(std::string_view text) {
  for (const auto& [value, name] : EnumNames<E>::values)
    if (name == text) return value;
  return std::nullopt;
}

template <NamedEnum E>
std::string enum_choices() {
  std::string out;
  for (const auto& [value, name] : EnumNames<E>::values) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

/// Members a described struct requires on input: `static constexpr std::array
/// required_members{...}` of camelCase names; none when the struct declares none.
template <class T>
constexpr auto required_members() {
  if constexpr (requires { T::required_members; })
    return T::required_members;
  else
    return std::array<std::string_view, 0>{};
}

// ---- writing ----

inline boost::json::value to_json(const std::string& s) { return boost::json::string(s); }
inline boost::json::value to_json(bool b) { return b; }
inline boost::json::value to_json(std::int64_t i) { return i; }
inline boost::json::value to_json(std::uint64_t u) { return u; }
inline boost::json::value to_json(const Uuid& id) { return boost::json::string(to_string(id)); }
inline boost::json::value to_json(Version v) {
  return static_cast<double>(v.tenths()) / 10.0;
}
inline boost::json::value to_json(const boost::json::value& v) { return v; }
inline boost::json::value to_json(const boost::json::object& o) { return o; }

template <NamedEnum E>
boost::json::value to_json(E e) {
  return boost::json::string(enum_name(e));
}

template <class T>
boost::json::value to_json(const std::vector<T>& items);

template <Described T>
boost::json::value to_json(const T& s);

template <class T>
boost::json::value to_json(const std::vector<T>& items) {
  boost::json::array out;
  out.reserve(items.size());
  for (const auto& item : items) out.push_back(detail::to_json(item));
  return out;
}

// ---- reading ----

inline Error type_error(std::string_view path, const char* expected) {
  return fail(Errc::invalid_request,
              "Invalid member " + std::string(path) + ": expected " + expected);
}

CATALOG_DECL Result<void> from_json(const boost::json::value& v, std::string& out, std::string_view path);
CATALOG_DECL Result<void> from_json(const boost::json::value& v, bool& out, std::string_view path);
CATALOG_DECL Result<void> from_json(const boost::json::value& v, std::int64_t& out, std::string_view path);
inline Result<void> from_json(const boost::json::value& v, std::uint64_t& out,
                              std::string_view path) {
  if (v.is_uint64()) {
    out = v.get_uint64();
    return {};
  }
  if (v.is_int64() && v.get_int64() >= 0) {  // parsed text gives an int64 where it can
    out = static_cast<std::uint64_t>(v.get_int64());
    return {};
  }
  return type_error(path, "a non-negative integer");
}
CATALOG_DECL Result<void> from_json(const boost::json::value& v, Uuid& out, std::string_view path);
CATALOG_DECL Result<void> from_json(const boost::json::value& v, Version& out, std::string_view path);
CATALOG_DECL Result<void> from_json(const boost::json::value& v, boost::json::value& out, std::string_view);
CATALOG_DECL Result<void> from_json(const boost::json::value& v, boost::json::object& out,
                       std::string_view path);

template <NamedEnum E>
Result<void> from_json(const boost::json::value& v, E& out, std::string_view path) {
  if (!v.is_string()) return type_error(path, "a string");
  auto e = enum_from_name<E>(v.get_string());
  if (!e)
    return fail(Errc::invalid_value, "Invalid value " + std::string(v.get_string()) + " for " +
                                         std::string(path) + ": expected one of " +
                                         enum_choices<E>());
  out = *e;
  return {};
}

template <class T>
Result<void> from_json(const boost::json::value& v, std::vector<T>& out, std::string_view path);
template <class T>
Result<void> from_json(const boost::json::value& v, std::optional<T>& out,
                       std::string_view path);
/// A member that holds any JSON value keeps an explicit null (a change description's
/// `"newValue": null`): only an absent member is nullopt, so the value writes back as it read.
/// The copy is made on the default memory resource: `v` may live in a caller's scratch buffer.
inline Result<void> from_json(const boost::json::value& v, std::optional<boost::json::value>& out,
                              std::string_view) {
  out.emplace(v, boost::json::storage_ptr());
  return {};
}

/// Conversions first run quiet: `path` is a null string_view (`quiet_path`), no member path is
/// built, and a failure's message names no place. Only a failed member is converted again with
/// its path, to give the message that names it. Only error messages read paths, so a
/// conversion that succeeds builds none.
inline constexpr std::string_view quiet_path{};

inline bool is_quiet(std::string_view path) noexcept { return path.data() == nullptr; }

/// Declared before the readers of vectors and optionals below: an element that is a described
/// struct finds it (argument-dependent lookup would not look in catalog::detail).
template <Described T>
Result<void> from_json(const boost::json::value& v, T& out, std::string_view path);

template <class C, class T>
C class_of_member(T C::*);

/// Whether descriptor D describes the member P.
template <class D, auto P>
constexpr bool describes() {
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(D::pointer)>, decltype(P)>)
    return D::pointer == P;
  else
    return false;
}

/// The position of member P among the descriptors D (their count when none describes it).
template <auto P, template <class...> class L, class... D>
constexpr std::size_t position_of(L<D...>) {
  std::size_t at = sizeof...(D), i = 0;
  ((describes<D, P>() ? (void)(at = i++) : (void)i++), ...);
  return at;
}

/// The wire name of struct member `P`: `member_name<&EntityBase::display_name>()` is
/// "displayName". Code that speaks of a member by name takes the name from here, so it is the
/// description's and cannot drift from it.
template <auto P>
std::string_view member_name() {
  using C = decltype(class_of_member(P));
  constexpr std::size_t at = position_of<P>(members_of<C>{});
  static_assert(at < boost::mp11::mp_size<members_of<C>>::value,
                "member_name: not a described member");
  return fields<C>()[at].name;
}

/// A described struct's members by wire name: an open-addressing table of their positions in
/// its description, keyed by a hash of the name's length and three of its characters, so a
/// lookup is one or two probes and one comparison, never a search with a comparison per step.
struct MemberTable {
  static constexpr std::size_t size = 128;  // a power of two, over twice the largest struct
  struct Slot {
    std::string_view name;
    std::uint8_t position = 0;
  };
  std::array<Slot, size> slots{};

  explicit MemberTable(std::span<const Field> fields) noexcept {
    std::size_t position = 0;
    for (const Field& f : fields) {
      std::size_t i = hash(f.name);
      while (slots[i].name.data() != nullptr) i = (i + 1) & (size - 1);
      slots[i] = {f.name, static_cast<std::uint8_t>(position++)};
    }
  }
  static std::size_t hash(std::string_view name) noexcept {
    const std::size_t n = name.size();
    if (n == 0) return 0;
    const auto c = [&](std::size_t i) {
      return static_cast<std::size_t>(static_cast<unsigned char>(name[i]));
    };
    return (n * 131 + c(0) * 31 + c(n / 2) * 7 + c(n - 1)) & (size - 1);
  }
  std::optional<std::size_t> find(std::string_view name) const noexcept {
    for (std::size_t i = hash(name);; i = (i + 1) & (size - 1)) {
      const auto& slot = slots[i];
      if (slot.name.data() == nullptr) return std::nullopt;
      if (slot.name == name) return slot.position;
    }
  }
};

/// What the struct-level conversions need of a described struct, made once per struct
/// (`layout<T>()`): its members in order, the table of them by wire name, and the names it
/// requires on input. The conversions of every struct are the functions below, which take one;
/// a struct's own templates only pass it on, so no conversion is made again per struct.
struct Layout {
  std::span<const Field> fields;
  MemberTable table;
  std::span<const std::string_view> required;
  Layout(std::span<const Field> f, std::span<const std::string_view> r) noexcept
      : fields(f), table(f), required(r) {}
};

template <Described T>
const Layout& layout() {
  static_assert(boost::mp11::mp_size<members_of<T>>::value < 64,
                "a described struct has fewer than 64 members (positions are bits of a word)");
  static constexpr auto required = required_members<T>();
  static const Layout value(fields<T>(), required);
  return value;
}

/// The position in T's description of the member named `name` on the wire, if T has one.
template <Described T>
std::optional<std::size_t> member_position(std::string_view name) {
  return layout<T>().table.find(name);
}

/// Whether every member the struct requires on input is among the positions `seen` (bits).
CATALOG_DECL bool has_required(const Layout& layout, std::uint64_t seen);

/// Whether every member of the struct that is not optional is among the positions `seen`
/// (bits): to_json writes them all, so an object without one is not in its canonical form.
CATALOG_DECL bool has_every_non_optional(const Layout& layout, std::uint64_t seen);

/// to_json of the struct at `object`.
CATALOG_DECL boost::json::value struct_to_json(const void* object, const Layout& layout);

/// Reads `obj` into the struct at `out` in the object's own order, each member sent straight to
/// its struct member, so the work follows the members present and an absent optional member
/// costs nothing (struct members are never looked up in the object one by one). False on
/// anything unexpected (an unknown member, a value that does not convert, a required member
/// missing), with no message: the caller then reads again member by member to word the error.
CATALOG_DECL bool read_members(const boost::json::object& obj, void* out, const Layout& layout);

/// from_json of the struct at `out`.
CATALOG_DECL Result<void> struct_from_json(const boost::json::value& v, void* out,
                                           const Layout& layout, std::string_view path);

/// canonical() of a struct.
CATALOG_DECL bool struct_canonical(const boost::json::value& v, const Layout& layout);

template <Described T>
boost::json::value to_json(const T& s) {
  return struct_to_json(&s, layout<T>());
}

template <Described T>
Result<void> from_json(const boost::json::value& v, T& out, std::string_view path) {
  return struct_from_json(v, &out, layout<T>(), path);
}

template <class T>
Result<void> from_json(const boost::json::value& v, std::vector<T>& out, std::string_view path) {
  if (!v.is_array()) return type_error(path, "an array");
  out.clear();
  out.reserve(v.get_array().size());
  std::size_t i = 0;
  for (const auto& item : v.get_array()) {
    T element{};
    auto r = from_json(item, element, quiet_path);
    if (!r) {
      if (is_quiet(path)) return r.error();  // our caller converts us again, with a path
      std::string element_path(path);
      element_path += '[';
      element_path += std::to_string(i);
      element_path += ']';
      return from_json(item, element, element_path).error();
    }
    out.push_back(std::move(element));
    ++i;
  }
  return {};
}

template <class T>
Result<void> from_json(const boost::json::value& v, std::optional<T>& out,
                       std::string_view path) {
  if (v.is_null()) {  // an explicit null reads as absent
    out.reset();
    return {};
  }
  T element{};
  auto r = from_json(v, element, path);
  if (!r) return r.error();
  out = std::move(element);
  return {};
}

// ---- the canonical form ----

/// Whether `v`, which converts to a T, is in the form to_json writes for T, so that writing the
/// converted value gives `v` back byte for byte: a struct's members in its order with every
/// member that is not optional present, no explicit null for an optional, versions as doubles.
/// A caller that must keep bytes as written (the engine's stored documents) keeps `v` itself
/// when it is not.
template <class T>
bool canonical(const boost::json::value&, std::type_identity<T>) {
  return true;  // scalars, strings, enumerations, ids: one form each
}
inline bool canonical(const boost::json::value& v, std::type_identity<Version>) {
  return v.is_double();  // an integer is written back as a double (1 becomes 1.0)
}
inline bool canonical(const boost::json::value&, std::type_identity<std::optional<boost::json::value>>) {
  return true;  // an explicit null is kept (a change description's "newValue": null)
}
template <class T>
bool canonical(const boost::json::value& v, std::type_identity<std::optional<T>>);
template <class T>
bool canonical(const boost::json::value& v, std::type_identity<std::vector<T>>);
template <Described T>
bool canonical(const boost::json::value& v, std::type_identity<T>);

template <class T>
bool canonical(const boost::json::value& v, std::type_identity<std::optional<T>>) {
  return !v.is_null() && canonical(v, std::type_identity<T>{});
}

template <class T>
bool canonical(const boost::json::value& v, std::type_identity<std::vector<T>>) {
  if (!v.is_array()) return false;
  for (const auto& e : v.get_array())
    if (!canonical(e, std::type_identity<T>{})) return false;
  return true;
}

template <Described T>
bool canonical(const boost::json::value& v, std::type_identity<T>) {
  return struct_canonical(v, layout<T>());
}

// ---- the member table ----

/// The type of the member that descriptor D of T describes.
template <class T, class D>
using member_type = std::remove_cvref_t<decltype(std::declval<T&>().*D::pointer)>;

template <class F>
bool field_present(const void* field) {
  if constexpr (IsOptional<F>::value)
    return static_cast<const F*>(field)->has_value();
  else
    return true;
}
template <class F>
boost::json::value field_to_json(const void* field) {
  const F& f = *static_cast<const F*>(field);
  if constexpr (IsOptional<F>::value)
    return f ? detail::to_json(*f) : boost::json::value();
  else
    return detail::to_json(f);
}
template <class F>
Result<void> field_from_json(const boost::json::value& v, void* field, std::string_view path) {
  return detail::from_json(v, *static_cast<F*>(field), path);
}
template <class F>
Result<void> field_set_from_json(const boost::json::value& v, void* field, std::string_view path) {
  F now{};
  if (auto r = detail::from_json(v, now, path); !r) return r;
  if (field) *static_cast<F*>(field) = std::move(now);
  return {};
}
template <class F>
bool field_canonical(const boost::json::value& v) {
  return detail::canonical(v, std::type_identity<F>{});
}
template <class F>
void field_assign(void* field, const void* from) {
  *static_cast<F*>(field) = *static_cast<const F*>(from);
}

template <class F>
inline constexpr FieldOps field_ops{IsOptional<F>::value,     &field_present<F>,
                                    &field_to_json<F>,        &field_from_json<F>,
                                    &field_set_from_json<F>,  &field_canonical<F>,
                                    &field_assign<F>};

/// The member table of a struct, built from its described names, the offsets of its members
/// and their operations (in the order of its description), with the wire names it points at.
class FieldTable {
 public:
  CATALOG_DECL FieldTable(std::span<const std::string_view> described,
                          std::span<const std::size_t> offsets,
                          std::span<const FieldOps* const> ops);
  FieldTable(const FieldTable&) = delete;
  FieldTable& operator=(const FieldTable&) = delete;
  std::span<const Field> fields() const noexcept { return fields_; }

 private:
  std::vector<std::string> names_;
  std::vector<Field> fields_;
};

template <class T, template <class...> class L, class... D>
std::array<std::size_t, sizeof...(D)> member_offsets(L<D...>) {
  const T& object = defaults<T>();
  const char* base = reinterpret_cast<const char*>(std::addressof(object));
  (void)base;  // unused for a struct with no members
  return {static_cast<std::size_t>(
      reinterpret_cast<const char*>(std::addressof(object.*D::pointer)) - base)...};
}
template <class L>
struct DescribedNames;
template <template <class...> class L, class... D>
struct DescribedNames<L<D...>> {
  static constexpr std::array<std::string_view, sizeof...(D)> value{D::name...};
};
template <class T, class L>
struct MemberOps;
template <class T, template <class...> class L, class... D>
struct MemberOps<T, L<D...>> {
  static constexpr std::array<const FieldOps*, sizeof...(D)> value{&field_ops<member_type<T, D>>...};
};

template <Described T>
std::span<const Field> fields() {
  static const FieldTable table(DescribedNames<members_of<T>>::value,
                                member_offsets<T>(members_of<T>{}),
                                MemberOps<T, members_of<T>>::value);
  return table.fields();
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_JSON_MAPPING_HPP
