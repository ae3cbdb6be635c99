#include <catalog/kind.hpp>

namespace catalog {

namespace {
using F = std::string_view;
constexpr F mlmodel_extras[] = {"owners", "followers", "votes", "tags", "domains", "extension"};
constexpr F glossary_extras[] = {"owners",    "tags",      "domains", "reviewers",
                                 "followers", "votes",     "termCount"};
constexpr F term_extras[] = {"owners",       "tags",      "children", "reviewers",
                             "relatedTerms", "followers", "votes",    "domains"};
constexpr F index_extras[] = {"followers", "votes", "extension", "sourceHash"};
constexpr F domain_extras[] = {"owners", "children", "experts", "followers"};
constexpr F team_extras[] = {"parents",  "users",    "owners",    "domains",
                             "children", "policies", "userCount", "childrenCount"};
constexpr F user_extras[] = {"teams", "follows", "owns", "domains"};
constexpr F policy_extras[] = {"owners", "teams"};
constexpr F service_extras[] = {"owners", "tags", "domains"};

constexpr KindInfo kinds[] = {
    {Kind::user, "user", "users", user_extras, false, false},
    {Kind::team, "team", "teams", team_extras, false, false},
    {Kind::policy, "policy", "policies", policy_extras, false, false},
    {Kind::mlmodel_service, "mlmodelService", "services/mlmodelServices", service_extras, false,
     false},
    {Kind::search_service, "searchService", "services/searchServices", service_extras, false,
     false},
    {Kind::mlmodel, "mlmodel", "mlmodels", mlmodel_extras, true, true},
    {Kind::glossary, "glossary", "glossaries", glossary_extras, true, true},
    {Kind::glossary_term, "glossaryTerm", "glossaryTerms", term_extras, true, true},
    {Kind::domain, "domain", "domains", domain_extras, true, false},
    {Kind::search_index, "searchIndex", "searchIndexes", index_extras, true, true},
};
}  // namespace

const KindInfo& info(Kind k) noexcept { return kinds[static_cast<int>(k)]; }

std::optional<Kind> service_kind(Kind k) noexcept {
  switch (k) {
    case Kind::mlmodel: return Kind::mlmodel_service;
    case Kind::search_index: return Kind::search_service;
    default: return std::nullopt;
  }
}

std::optional<Kind> kind_from_type(std::string_view type) noexcept {
  for (const auto& k : kinds)
    if (k.type == type) return k.kind;
  return std::nullopt;
}

std::optional<Kind> kind_from_collection(std::string_view collection) noexcept {
  for (const auto& k : kinds)
    if (k.collection == collection) return k.kind;
  return std::nullopt;
}

}  // namespace catalog
