#ifndef CATALOG_KIND_HPP
#define CATALOG_KIND_HPP

// The entity kinds of docs/SEMANTICS.md §1 and what the catalog knows about each (`KindInfo`): its
// reference type, its REST collection, the extra fields `fields` may ask for, its relationship
// fields, containers, read-only and required fields, and the other rules that differ between
// kinds. Each kind states them once, in its `KindTraits` next to its struct in entities.hpp;
// kind_traits.hpp gathers them into the table `info()` reads and visits kinds by type.

#include <catalog/detail/export.hpp>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

namespace catalog {

/// The entity kinds (docs/SEMANTICS.md §1), in the order of `all_kinds` and of entity_types
/// (entities.hpp). On the wire a kind is its reference `type` (type_name()).
enum class Kind {
  user,             ///< `user`, struct User
  team,             ///< `team`, struct Team
  policy,           ///< `policy`, struct Policy
  mlmodel_service,  ///< `mlmodelService`, struct MlModelService
  search_service,   ///< `searchService`, struct SearchService
  mlmodel,          ///< `mlmodel`, struct MlModel
  glossary,         ///< `glossary`, struct Glossary
  glossary_term,    ///< `glossaryTerm`, struct GlossaryTerm
  domain,           ///< `domain`, struct Domain
  search_index,     ///< `searchIndex`, struct SearchIndex
};

/// Every kind, in the order of `Kind`.
inline constexpr Kind all_kinds[] = {Kind::user,          Kind::team,           Kind::policy,
                                     Kind::mlmodel_service, Kind::search_service, Kind::mlmodel,
                                     Kind::glossary,      Kind::glossary_term,  Kind::domain,
                                     Kind::search_index};

/// A set of kinds. A plain value.
class KindSet {
 public:
  /// The empty set.
  constexpr KindSet() noexcept = default;
  /// The set of `kinds`.
  constexpr KindSet(std::initializer_list<Kind> kinds) noexcept {
    for (auto k : kinds) bits_ |= bit(k);
  }
  /// Whether `k` is in the set.
  constexpr bool contains(Kind k) const noexcept { return (bits_ & bit(k)) != 0; }
  /// Whether the set has no kind.
  constexpr bool empty() const noexcept { return bits_ == 0; }

 private:
  static constexpr std::uint32_t bit(Kind k) noexcept {
    return std::uint32_t{1} << static_cast<unsigned>(k);
  }
  std::uint32_t bits_ = 0;
};

/// Relationships between entities, stored as one byte in edge keys (the engine's key schema).
enum class Relation : char {
  owns = 'o',      ///< owner (user/team) -> entity
  follows = 'f',   ///< user -> entity
  votes = 'v',     ///< user -> entity; data "u" or "d"
  reviews = 'r',   ///< entity -> reviewer user
  expert = 'x',    ///< domain -> expert user
  contains = 'c',  ///< container -> child (glossary->term, term->term, service->asset,
                   ///< domain->sub-domain, team->child team)
  member = 'm',    ///< team -> user
  policy = 'p',    ///< team -> policy
  domain = 'd',    ///< entity -> domain it is assigned to
  related = 't',   ///< term -> related term
};

/// A relationship field of a kind (docs/SEMANTICS.md §2): rendered from the edges of `rel` from the
/// entity (or to it, when `reverse`); `others` are the kinds at the other end.
struct RelationField {
  std::string_view field;  ///< the field's wire name (`owners`)
  Relation rel;            ///< the relation of its edges
  bool reverse;            ///< edges to the entity (listing their sources), not from it
  KindSet others;          ///< the kinds at the other end
};

/// A count shown as an extra field: the edges of `rel` from the entity, or with `deep` every
/// entity of the containment tree below it.
struct CountField {
  std::string_view field;  ///< the field's wire name (`termCount`)
  Relation rel;            ///< the relation counted
  bool deep;               ///< false: the edges from the entity; true: the whole tree below it
};

/// Whether an entity of a kind lives in a container (docs/SEMANTICS.md §1): `Record::container`,
/// rendered as the kind's `container_field`.
enum class Placement {
  top_level,           ///< its FQN is its name (a team's parent teams do not enter it)
  optional_container,  ///< in a container when it has one (a sub-domain in its parent domain)
  in_container         ///< always in a container (an ML model in its service, a term)
};

/// An entity of the kind may own others only when its `field` is `value` (docs/SEMANTICS.md §9). A
/// refusal reads "<what> <name> of type <actual> <refusal>".
struct OwnerRule {
  std::string_view what;     ///< the kind as the refusal names it (`Team`)
  std::string_view field;    ///< the member that decides (`teamType`)
  std::string_view value;    ///< the value that may own (`Group`)
  std::string_view refusal;  ///< the end of the refusal's message
};

/// What the catalog knows about one kind: every rule that differs between kinds. Static data;
/// thread-safe. Each kind's is `KindTraits<E>::info` (entities.hpp); omitted members keep the
/// defaults below.
struct KindInfo {
  Kind kind = Kind::user;         ///< the kind described
  std::string_view type{};        ///< reference `type` and `entityType`, e.g. "glossaryTerm"
  std::string_view collection{};  ///< REST collection path after /v1/, e.g. "glossaryTerms"
  std::span<const std::string_view> extra_fields{};  ///< docs/SEMANTICS.md §2 "extra" column
  bool has_followers = false;                        ///< followable (docs/SEMANTICS.md §4)
  bool has_votes = false;                            ///< votable (docs/SEMANTICS.md §5)
  /// Relationship fields, in the order they are rendered.
  std::span<const RelationField> relations{};
  /// Read-only beyond the fields read-only in every kind (`common_read_only`).
  std::span<const std::string_view> read_only{};
  /// Own fields an entity of the kind always has: a patch may not remove them.
  std::span<const std::string_view> required{};
  /// Fields whose change makes a major version (+1.0) rather than a minor one (docs/SEMANTICS.md
  /// §3).
  std::span<const std::string_view> major_fields{};
  /// Fields only an admin may change (docs/SEMANTICS.md §11).
  std::span<const std::string_view> admin_only{};
  /// Fields whose change re-checks the kind's structural rules (the team rules of docs/SEMANTICS.md
  /// §9).
  std::span<const std::string_view> rule_fields{};
  /// Own fields with value rules of their own (emails, URIs, tags, ...: the engine's
  /// check_entity_values): a patch that changes one has the patched entity checked.
  std::span<const std::string_view> checked_fields{};
  /// Counted extra fields, rendered in this order after votes.
  std::span<const CountField> counts{};
  /// The service kind an entity belongs to: lists filter by it (docs/SEMANTICS.md §8), a create
  /// names it, and its `serviceType` is the service's (read-only).
  std::optional<Kind> service{};
  /// Whether an entity of the kind lives in a container (docs/SEMANTICS.md §1).
  Placement placement = Placement::top_level;
  /// The kinds whose containment edges may point at an entity of this kind; a delete cascades
  /// along them (docs/SEMANTICS.md §6) and a restore needs the containers live (docs/SEMANTICS.md
  /// §7).
  KindSet containers{};
  /// The member rendering the container (`service`, `parent`); with `container_type` the member
  /// copied from it (`serviceType`).
  std::string_view container_field{};
  /// The member copied from the container (`serviceType`); empty when none is.
  std::string_view container_type{};
  bool in_glossary = false;    ///< has a `glossary` beside its container (terms)
  bool glossary_root = false;  ///< the glossary its terms name
  bool may_own = false;        ///< owners may be of this kind (docs/SEMANTICS.md §9)
  /// What an owner of this kind must be, beyond its kind (teams: of type Group); null: nothing.
  const OwnerRule* owner_rule = nullptr;
  /// Its members count as owners where it owns (teams, docs/SEMANTICS.md §12 `isOwner()`).
  bool members_own = false;
  bool principal = false;  ///< callers are of this kind: they follow and vote (users)
  /// A merge patch may name the one domain by FQN in `domain` instead of `domains` (teams).
  bool domain_by_fqn = false;
};

/// Fields no patch may change, whatever the kind (docs/SEMANTICS.md §9): the base fields and the
/// fields the catalog computes or keeps as edges (a kind without one refuses it as read-only all
/// the same). `KindInfo::read_only` adds a kind's own.
inline constexpr std::string_view common_read_only[] = {"id",
                                                        "name",
                                                        "fullyQualifiedName",
                                                        "version",
                                                        "updatedAt",
                                                        "updatedBy",
                                                        "href",
                                                        "changeDescription",
                                                        "deleted",
                                                        "followers",
                                                        "votes",
                                                        "children",
                                                        "service",
                                                        "glossary",
                                                        "parent",
                                                        "follows",
                                                        "owns",
                                                        "termCount",
                                                        "userCount",
                                                        "childrenCount"};

/// The traits of entity struct `E` (entities.hpp): `static constexpr KindInfo info`.
template <class E>
struct KindTraits;

/// The description of `k`.
CATALOG_DECL const KindInfo& info(Kind k) noexcept;

/// The reference `type` of a kind ("mlmodelService").
inline std::string_view type_name(Kind k) noexcept { return info(k).type; }

/// The service kind an entity of `k` belongs to (ML models: mlmodelService; search indexes:
/// searchService), which lists filter by (docs/SEMANTICS.md §8); nullopt for other kinds.
CATALOG_DECL std::optional<Kind> service_kind(Kind k) noexcept;

/// The kind whose reference type is `type`, if any.
CATALOG_DECL std::optional<Kind> kind_from_type(std::string_view type) noexcept;

/// The kind whose REST collection is `collection`, if any.
CATALOG_DECL std::optional<Kind> kind_from_collection(std::string_view collection) noexcept;

}  // namespace catalog

#endif  // CATALOG_KIND_HPP
