#ifndef CATALOG_DETAIL_ENGINE_WIRE_HPP
#define CATALOG_DETAIL_ENGINE_WIRE_HPP

// The wire names the engine speaks of, each taken from the struct member it names
// (detail::member_name), so that no member's name is spelled in the engine: renaming a member
// renames it here, and a name that names no member does not compile.

#include <catalog/change_event.hpp>
#include <catalog/detail/json_mapping.hpp>
#include <catalog/entities.hpp>

#include <string>
#include <string_view>

namespace catalog::engine::wire {

// Every entity (EntityBase).
inline std::string_view id() { return detail::member_name<&EntityBase::id>(); }
inline std::string_view name() { return detail::member_name<&EntityBase::name>(); }
inline std::string_view fqn() { return detail::member_name<&EntityBase::fully_qualified_name>(); }
inline std::string_view display_name() { return detail::member_name<&EntityBase::display_name>(); }
inline std::string_view description() { return detail::member_name<&EntityBase::description>(); }
inline std::string_view version() { return detail::member_name<&EntityBase::version>(); }
inline std::string_view updated_at() { return detail::member_name<&EntityBase::updated_at>(); }
inline std::string_view updated_by() { return detail::member_name<&EntityBase::updated_by>(); }
inline std::string_view href() { return detail::member_name<&EntityBase::href>(); }
inline std::string_view deleted() { return detail::member_name<&EntityBase::deleted>(); }
inline std::string_view change_description() {
  return detail::member_name<&EntityBase::change_description>();
}

// Members some kinds have; the name is the same in every kind that has it.
inline std::string_view tags() { return detail::member_name<&Glossary::tags>(); }
inline std::string_view domains() { return detail::member_name<&Glossary::domains>(); }
inline std::string_view followers() { return detail::member_name<&Glossary::followers>(); }
inline std::string_view votes() { return detail::member_name<&Glossary::votes>(); }
inline std::string_view glossary() { return detail::member_name<&GlossaryTerm::glossary>(); }
inline std::string_view status() { return detail::member_name<&GlossaryTerm::status>(); }
inline std::string_view is_admin() { return detail::member_name<&User::is_admin>(); }
inline std::string_view team_type() { return detail::member_name<&Team::team_type>(); }
inline std::string_view parents() { return detail::member_name<&Team::parents>(); }
inline std::string_view server() { return detail::member_name<&MlModel::server>(); }

// Inside members: references, tags, votes, change descriptions.
inline std::string_view reference_type() { return detail::member_name<&EntityReference::type>(); }
inline std::string_view tag_fqn() { return detail::member_name<&TagLabel::tag_fqn>(); }
inline std::string_view up_votes() { return detail::member_name<&Votes::up_votes>(); }
inline std::string_view down_votes() { return detail::member_name<&Votes::down_votes>(); }
inline std::string_view up_voters() { return detail::member_name<&Votes::up_voters>(); }
inline std::string_view down_voters() { return detail::member_name<&Votes::down_voters>(); }
inline std::string_view fields_added() {
  return detail::member_name<&ChangeDescription::fields_added>();
}
inline std::string_view fields_updated() {
  return detail::member_name<&ChangeDescription::fields_updated>();
}
inline std::string_view fields_deleted() {
  return detail::member_name<&ChangeDescription::fields_deleted>();
}
inline std::string_view previous_version() {
  return detail::member_name<&ChangeDescription::previous_version>();
}
inline std::string_view field_name() { return detail::member_name<&FieldChange::name>(); }
inline std::string_view old_value() { return detail::member_name<&FieldChange::old_value>(); }
inline std::string_view new_value() { return detail::member_name<&FieldChange::new_value>(); }

// Change events (docs/SEMANTICS.md §13).
inline std::string_view event_type() { return detail::member_name<&ChangeEvent::event_type>(); }
inline std::string_view entity_type() { return detail::member_name<&ChangeEvent::entity_type>(); }
inline std::string_view entity_id() { return detail::member_name<&ChangeEvent::entity_id>(); }
inline std::string_view entity_fqn() {
  return detail::member_name<&ChangeEvent::entity_fully_qualified_name>();
}
inline std::string_view current_version() {
  return detail::member_name<&ChangeEvent::current_version>();
}
inline std::string_view user_name() { return detail::member_name<&ChangeEvent::user_name>(); }
inline std::string_view timestamp() { return detail::member_name<&ChangeEvent::timestamp>(); }
inline std::string_view offset() { return detail::member_name<&ChangeEvent::offset>(); }

/// `,"name":` (or `"name":` first in an object) appended to JSON text being written.
inline void key(std::string& out, std::string_view name, bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += name;
  out += "\":";
}

}  // namespace catalog::engine::wire

#endif  // CATALOG_DETAIL_ENGINE_WIRE_HPP
