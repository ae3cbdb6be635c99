#ifndef CATALOG_KIND_HPP
#define CATALOG_KIND_HPP

// The entity kinds of SEMANTICS.md S1 and what the catalog knows about each: its reference
// type, its REST collection, the extra fields `fields` may ask for, and whether it has
// followers and votes.

#include <optional>
#include <span>
#include <string_view>

namespace catalog {

enum class Kind {
  user,
  team,
  policy,
  mlmodel_service,
  search_service,
  mlmodel,
  glossary,
  glossary_term,
  domain,
  search_index,
};

inline constexpr Kind all_kinds[] = {Kind::user,          Kind::team,           Kind::policy,
                                     Kind::mlmodel_service, Kind::search_service, Kind::mlmodel,
                                     Kind::glossary,      Kind::glossary_term,  Kind::domain,
                                     Kind::search_index};

/// What the catalog knows about one kind. Static data; thread-safe.
struct KindInfo {
  Kind kind;
  std::string_view type;        // reference `type` and `entityType`, e.g. "glossaryTerm"
  std::string_view collection;  // REST collection path after /v1/, e.g. "glossaryTerms"
  std::span<const std::string_view> extra_fields;  // S2 "extra" column
  bool has_followers;
  bool has_votes;
};

/// The description of `k`.
const KindInfo& info(Kind k) noexcept;

/// The reference `type` of a kind ("mlmodelService").
inline std::string_view type_name(Kind k) noexcept { return info(k).type; }

/// The service kind an entity of `k` belongs to (ML models: mlmodelService; search indexes:
/// searchService), which lists filter by (S8); nullopt for other kinds.
std::optional<Kind> service_kind(Kind k) noexcept;

/// The kind whose reference type is `type`, if any.
std::optional<Kind> kind_from_type(std::string_view type) noexcept;

/// The kind whose REST collection is `collection`, if any.
std::optional<Kind> kind_from_collection(std::string_view collection) noexcept;

}  // namespace catalog

#endif  // CATALOG_KIND_HPP
