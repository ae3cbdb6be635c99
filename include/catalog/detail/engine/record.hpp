#ifndef CATALOG_DETAIL_ENGINE_RECORD_HPP
#define CATALOG_DETAIL_ENGINE_RECORD_HPP

// The engine's record of one entity: the entity struct of its kind (entities.hpp) holding its
// own fields, and what the engine keeps beside them (container, glossary, deleting operation).
// Relationship members of the struct stay empty: relationships are edges, rendered when read.
//
// A record also remembers which own members it stores and in which order. Stored documents (and
// so the answers rendered from them) list the members written at create first and a member a
// later patch added after them; keeping that order keeps every answer byte for byte what
// earlier versions gave for the same store.

#include <catalog/detail/json_mapping.hpp>
#include <catalog/detail/json_text.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/kind_traits.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace catalog::engine {

using EntityValue = AnyEntity;

/// The members of a stored record's envelope (values.ipp) that name more than a letter: the
/// entity's document.
namespace envelope {
inline constexpr std::string_view document = "doc";
}  // namespace envelope

/// Whether member `name` of a kind is rendered from edges or containers rather than stored:
/// relationship fields, votes, counts, the container members and `href`.
bool rendered_only(Kind kind, std::string_view name);

/// The layout of the struct of `kind` (detail::layout): its member table and names.
const detail::Layout& layout_of(Kind kind);

/// One stored entity: its own fields (`value`) and what the engine keeps beside them.
struct Record {
  Kind kind = Kind::user;
  Uuid id{};
  std::optional<Uuid> container;  // service, glossary or parent term, parent domain
  std::optional<Uuid> glossary;   // glossary terms: their glossary
  std::uint64_t deleted_by = 0;   // the operation (event offset) that soft-deleted it
  EntityValue value;              // the struct of `kind`; relationship members empty
  /// The own members stored, in stored order: positions in the struct's description. An
  /// optional member stored but empty is an explicit null in the document (a patch can set one).
  std::vector<std::uint8_t> stored;
  /// Stored members whose JSON as written is not what their struct member writes back: a nested
  /// shape a patch gave with its members in another order or with an explicit null inside. They
  /// are kept as written, so the document and every answer keep their bytes. Usually empty.
  std::vector<std::pair<std::uint8_t, boost::json::value>> written;

  Record() = default;
  /// A record of `kind` holding its struct's defaults and storing nothing yet.
  explicit Record(Kind k);
  /// Makes this a record of `kind` holding its struct's defaults and storing nothing.
  void reset(Kind k);

  const EntityBase& base() const {
    return std::visit([](const auto& e) -> const EntityBase& { return e; }, value);
  }
  EntityBase& base() {
    return std::visit([](auto& e) -> EntityBase& { return e; }, value);
  }
  template <class E>
  E& as() {
    return std::get<E>(value);
  }
  template <class E>
  const E& as() const {
    return std::get<E>(value);
  }

  std::string_view name() const { return base().name; }
  std::string_view fqn() const { return base().fully_qualified_name; }
  bool deleted() const { return base().deleted; }
  Version version() const { return base().version; }
  /// The list scope beside "all": the service of ML models and search indexes.
  std::optional<Uuid> scope() const;

  /// Calls `f(name, json)` for every stored member, in stored order.
  template <class F>
  void for_each_stored(F&& f) const;
  /// The stored members as the members of a JSON object, `"name":value` joined by commas, in
  /// stored order: what serializing for_each_stored's names and values writes, without them.
  void write_stored(std::string& out) const;
  /// Calls `f(field, text, address, as_written)` for each stored member in stored order: its
  /// entry in the struct's member table, its text conversions, its address in `value`, and the
  /// JSON it is kept as written as (or null).
  template <class F>
  void visit_stored(F&& f) const;
  /// The member table of the struct of `kind` (detail::fields), and its text conversions.
  std::span<const detail::Field> fields() const;
  std::span<const detail::TextOps* const> text_fields() const;
  /// The address of the struct in `value`, and of a default one of the same kind.
  const void* object() const;
  void* object() { return const_cast<void*>(std::as_const(*this).object()); }
  const void* defaults() const;
  /// The position of own member `name` in the struct's description, if the kind has one.
  std::optional<std::size_t> position(std::string_view name) const;
  /// Whether the record stores own member `name`.
  bool stores(std::string_view name) const;
  /// The JSON of own member `name` when the record stores it.
  std::optional<boost::json::value> member(std::string_view name) const;
  /// member(name) serialized onto `out`, without the JSON value in between; false (nothing
  /// written) when the record does not store it.
  bool write_member(std::string_view name, std::string& out) const;
  /// Sets own member `name` from JSON (`nullptr` removes it); a member not stored before is
  /// stored after the others. Errors: bad_request (a value of the wrong shape, an unknown member).
  Result<void> set_member(std::string_view name, const boost::json::value* v);
  /// Stores member `name` (set in the struct directly) after the others, unless stored already;
  /// from now on it is written as its struct member writes it.
  void keep(std::string_view name);
  /// Drops what member `pos` was written as (it is set from its struct member again).
  void forget_written(std::size_t pos) {
    std::erase_if(written, [&](const auto& w) { return w.first == pos; });
  }
  /// The JSON member `pos` was written as, when it is kept (`written`).
  const boost::json::value* written_as(std::size_t pos) const {
    for (const auto& [at, json] : written)
      if (at == pos) return &json;
    return nullptr;
  }
  /// For a new entity whose struct is filled in: stores every member it has, in the order of
  /// creation (id, name, FQN, display name, description, the kind's own members, then version,
  /// updatedAt, updatedBy, deleted).
  void store_present();
};

/// A record of `kind` from its stored document. Errors: storage (`what` and the reason).
Result<Record> record_from_document(Kind kind, const boost::json::object& doc,
                                    std::string_view what = "corrupt entity record");
/// Reads into `r` the record of `kind` whose stored document starts at `in`, straight from the
/// text into its struct (detail::read_text), leaving `in` after the document. False when the
/// text is not in the canonical form the engine writes, or would not decode (`r` is then
/// anything): the caller then parses it and calls record_from_document, which reads every form
/// and words the error.
bool record_from_text(Kind kind, detail::TextReader& in, Record& r);

// ---- inline and template definitions ----

namespace record_detail {

template <class E>
inline constexpr std::size_t member_count = boost::mp11::mp_size<detail::members_of<E>>::value;

}  // namespace record_detail

template <class F>
void Record::visit_stored(F&& f) const {
  const void* at = object();
  auto all = fields();
  auto text = text_fields();
  for (auto pos : stored) f(all[pos], *text[pos], all[pos].in(at), written_as(pos));
}

template <class F>
void Record::for_each_stored(F&& f) const {
  visit_stored([&](const detail::Field& field, const detail::TextOps&, const void* address,
                   const boost::json::value* as_written) {
    // A stored but empty optional is an explicit null in the document, kept as written.
    if (as_written)
      f(field.name, *as_written);
    else
      f(field.name, field.ops->to_json(address));
  });
}

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_RECORD_HPP
