#ifndef CATALOG_CHANGE_EVENT_HPP
#define CATALOG_CHANGE_EVENT_HPP

// A change event (docs/SEMANTICS.md §13) as a struct. Its JSON form is the generic mapping of
// detail/json_mapping.hpp, member for member the stored event that GET /v1/events answers:
// the members in the order the engine writes them, `offset` last (it is added when the event
// is appended), `changeDescription` absent from entityCreated events (an entityDeleted event
// carries the deleted entity's last one).

#include <catalog/detail/json_mapping.hpp>
#include <catalog/entities.hpp>
#include <catalog/kind.hpp>
#include <catalog/kind_traits.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/describe/class.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace catalog {

/// What happened to the entity (docs/SEMANTICS.md §13). entityFieldsChanged: a follow, unfollow or
/// vote, which changes neither the version nor the document.
enum class EventType {
  entity_created,         ///< `entityCreated`: a create
  entity_updated,         ///< `entityUpdated`: fields changed in a new version (a patch)
  entity_fields_changed,  ///< `entityFieldsChanged`: a follow, unfollow or vote
  entity_soft_deleted,    ///< `entitySoftDeleted`: a soft delete
  entity_deleted,         ///< `entityDeleted`: a hard delete
  entity_restored,        ///< `entityRestored`: a restore
};

}  // namespace catalog

namespace catalog::detail {

template <>
struct EnumNames<EventType> {
  static constexpr std::array<std::pair<EventType, std::string_view>, 6> values{{
      {EventType::entity_created, "entityCreated"},
      {EventType::entity_updated, "entityUpdated"},
      {EventType::entity_fields_changed, "entityFieldsChanged"},
      {EventType::entity_soft_deleted, "entitySoftDeleted"},
      {EventType::entity_deleted, "entityDeleted"},
      {EventType::entity_restored, "entityRestored"},
  }};
};

/// A kind on the wire is its reference type ("glossaryTerm"), taken from the kinds' traits so
/// that a new kind needs nothing here.
template <>
struct EnumNames<Kind> {
  static constexpr auto values = [] {
    std::array<std::pair<Kind, std::string_view>, std::size(all_kinds)> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = {kind_table[i].kind, kind_table[i].type};
    return out;
  }();
};

}  // namespace catalog::detail

namespace catalog {

/// One change event (docs/SEMANTICS.md §13). `previous_version` equals `current_version` on
/// entityCreated (a new entity has no earlier version) and on entityFieldsChanged and entityDeleted
/// (no new version).
///
/// The JSON of `change_description` is the mapping's: fieldsAdded, fieldsUpdated, fieldsDeleted,
/// previousVersion. Events of entityFieldsChanged were always stored with previousVersion first
/// in it, so theirs equals the stored event as a JSON value but not byte for byte; the `*_json`
/// reads (Store::events_json, GET /v1/events) answer the stored bytes.
struct ChangeEvent {
  Uuid id{};                      ///< `id`: the event's own id
  /// `eventType`: what happened.
  EventType event_type = EventType::entity_created;
  Kind entity_type = Kind::user;  ///< `entityType`: the kind of the entity
  Uuid entity_id{};               ///< `entityId`: the entity's id
  /// `entityFullyQualifiedName`: the entity's FQN.
  std::string entity_fully_qualified_name{};
  Version previous_version;       ///< `previousVersion`: the version before the change
  Version current_version;        ///< `currentVersion`: the version after it
  std::string user_name{};        ///< `userName`: who made the change
  std::int64_t timestamp = 0;     ///< `timestamp`: epoch milliseconds (StoreOptions::clock)
  /// `changeDescription`: what changed; absent on entityCreated.
  std::optional<ChangeDescription> change_description{};
  std::uint64_t offset = 0;       ///< `offset`: from 1, dense (docs/SEMANTICS.md §13)
  /// The members its JSON must have (for from_json).
  static constexpr std::array<std::string_view, 10> required_members{"id",
                                                                     "eventType",
                                                                     "entityType",
                                                                     "entityId",
                                                                     "entityFullyQualifiedName",
                                                                     "previousVersion",
                                                                     "currentVersion",
                                                                     "userName",
                                                                     "timestamp",
                                                                     "offset"};
};
BOOST_DESCRIBE_STRUCT(ChangeEvent, (),
                      (id, event_type, entity_type, entity_id, entity_fully_qualified_name,
                       previous_version, current_version, user_name, timestamp, change_description,
                       offset))

}  // namespace catalog

namespace catalog::detail {
// Made once, in the library, as the entities' (entities.hpp).
extern template CATALOG_DECL const Layout& layout<ChangeEvent>();
}  // namespace catalog::detail

#endif  // CATALOG_CHANGE_EVENT_HPP
