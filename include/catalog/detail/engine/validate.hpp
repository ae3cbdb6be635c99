#ifndef CATALOG_DETAIL_ENGINE_VALIDATE_HPP
#define CATALOG_DETAIL_ENGINE_VALIDATE_HPP

// Value rules of docs/SEMANTICS.md §2 shared by create and patch: emails, tags, search index
// fields, servers, and resolution of references to live entities.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/entities.hpp>

namespace catalog::engine {

/// docs/SEMANTICS.md §15 limits on a JSON value the engine is given or is about to store: nesting
/// at most `max_depth`, serialized size at most `max_bytes`, and only what JSON text parses to
/// (UTF-8 strings and names, finite numbers). `what` names it in the message. Measures without
/// recursion and stops at the limit. Errors: bad_request (too_deep, too_large, invalid_json).
Result<void> check_limits(const boost::json::value& v, std::size_t max_depth,
                          std::size_t max_bytes, std::string_view what);

/// The member of `o` named `key`, looked for first at position `hint` (where a document with
/// the same members in the same order has it), then by name; nullptr when `o` has none. A
/// patched document keeps its entity's order, so the first probe almost always finds it.
inline const boost::json::value* find_aligned(const boost::json::object& o, std::size_t hint,
                                              std::string_view key) {
  if (hint < o.size())
    if (const auto& kv = *(o.begin() + static_cast<std::ptrdiff_t>(hint)); kv.key() == key)
      return &kv.value();
  return o.if_contains(key);
}

/// Whether `after`, the document a patch made of `before` (an entity of `kind` as rendered,
/// which reads as its struct), reads as the kind's struct too: each member whose JSON differs
/// from before's is converted alone. False when that cannot tell (a member removed, unknown,
/// or not converting): then the whole document must be read, which words the error.
bool patched_members_read(Kind kind, const boost::json::object& before,
                          const boost::json::object& after);

/// 6 to 127 characters, one '@', a dot after it, no whitespace. Errors: bad_request.
Result<void> validate_email(std::string_view email, std::string_view field = "email");
/// tagFQN lengths; fills defaults; sorts by tagFQN and drops duplicates. Errors: bad_request.
Result<std::vector<TagLabel>> normalized_tags(const std::vector<TagLabel>& tags);
/// normalized_tags as JSON.
Result<boost::json::array> normalize_tags(const std::vector<TagLabel>& tags);
/// dataType of every field (recursively). Errors: bad_request (invalid_value).
Result<void> validate_index_fields(const std::vector<SearchIndexField>& fields);
/// A URI: a scheme, ':', no whitespace. Errors: bad_request.
Result<void> validate_uri(std::string_view uri, std::string_view field);
/// 1 to 32 characters. Errors: bad_request.
Result<void> validate_source_hash(std::string_view hash);

/// Owners: live users or live teams of type Group. Errors: bad_request (other types, a team
/// that is not a Group), not_found.
Result<std::vector<Record>> resolve_owners(Tx& tx, const std::vector<EntityReference>& refs);
/// Live entities of kind `target` by reference (reviewers, experts, team users, ...).
/// Errors: bad_request (a reference of another type, naming `field`), not_found.
Result<std::vector<Record>>
resolve_refs(Tx& tx, Kind target, const std::vector<EntityReference>& refs, std::string_view field);
/// That every reference of `refs` (named by `field`) is of type `target`, as resolve_refs checks
/// first. Errors: bad_request (invalid_value).
Result<void> check_ref_types(Kind target, const std::vector<EntityReference>& refs,
                             std::string_view field);
/// Live entities of `kind` by id. Errors: not_found.
Result<std::vector<Record>> resolve_ids(Tx& tx, Kind kind, const std::vector<Uuid>& ids);
/// Live entities of `kind` by FQN (user names for users). Errors: bad_request, not_found.
Result<std::vector<Record>> resolve_fqns(Tx& tx, Kind kind, const std::vector<std::string>& fqns);

/// The value rules of docs/SEMANTICS.md §2 on an entity's own fields, checked on its struct: the
/// name, emails, a service's type, a model's server, tags, synonyms, index fields and source
/// hash, policy rules. Create checks each new entity with it, import each entity it reads. What
/// needs other entities (references, team type rules) is not among them. Errors: bad_request.
Result<void> check_entity_values(const Record& r);
/// check_entity_values of an entity struct.
Result<void> check_entity_values(const AnyEntity& entity);
/// Its two halves: the name, then the other fields (a create that checks its request's own
/// values between the two keeps the order of its messages).
Result<void> check_entity_name(const AnyEntity& entity);
Result<void> check_field_values(const AnyEntity& entity);

/// Tags as the engine stores them (normalized_tags: defaults filled, sorted by tagFQN, each
/// once), for entities that were not written by the engine (import). Errors: bad_request.
Result<void> check_stored_tags(const Record& r);

/// The docs/SEMANTICS.md §9 team type rules that count parents alone (an Organization has none;
/// a Division and a BusinessUnit exactly one), for a team of `type` with `parents` distinct
/// parent ids: checked before the parents are looked up, so that a request these rules refuse
/// is 400 even when a parent it names is missing (§14: step 8 before step 9). Errors:
/// bad_request (team_rule).
Result<void> check_team_parent_count(TeamType type, std::size_t parents);
/// check_team_parent_count with the parent ids a request names (each counted once).
Result<void> check_team_parent_count(TeamType type, std::vector<Uuid> parent_ids);

/// docs/SEMANTICS.md §9 team type rules for a team of `type` with `parents` and (when it exists)
/// `children`. Errors: bad_request (team_rule).
Result<void> check_team_rules(TeamType type, const std::vector<Record>& parents,
                              const std::vector<Record>& children);

/// The containment chain from `top` down to `bottom`, both included (`[top]` when they are the
/// same), when `top` contains `bottom` directly or through others; empty otherwise. Walks up
/// the containment edges from `bottom`, each entity at most once, so a stored cycle cannot
/// make it loop. Errors: storage.
Result<std::vector<Uuid>> containment_path(Tx& tx, const Uuid& top, const Uuid& bottom);

/// A containment cycle written out by names, "A > B > C > A": each entity contains the next.
/// `path` is a containment_path whose last entity contains its first. Errors: storage.
Result<std::string> cycle_text(Tx& tx, const std::vector<Uuid>& path);

/// docs/SEMANTICS.md §9: a team is never its own ancestor. The containment cycle that making
/// `parents` the parents of `team` would close, by names; nullopt when there is none. Errors:
/// storage.
Result<std::optional<std::string>> team_cycle(Tx& tx, const Uuid& team,
                                              const std::vector<Uuid>& parents);

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_VALIDATE_HPP
