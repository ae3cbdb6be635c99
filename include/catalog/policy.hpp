#ifndef CATALOG_POLICY_HPP
#define CATALOG_POLICY_HPP

// Policies (docs/SEMANTICS.md §12): rule validation, the closed condition grammar, and evaluation
// as a pure function of the rules, the requested operations and the facts about the caller.

#include <catalog/detail/export.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/principal.hpp>

#include <optional>
#include <span>
#include <string_view>
#include <vector>

/// Policies (docs/SEMANTICS.md §12): rule checks, the condition grammar, the decision, and the
/// authorizer a Store uses by default.
namespace catalog::policy {

/// The operation named `name` ("EditOwners"), if any.
CATALOG_DECL std::optional<Operation> operation_from_name(std::string_view name) noexcept;

/// Checks a condition against the grammar: `isOwner()`, `noOwner()`, `!`, `&&`, `||`,
/// parentheses, whitespace between tokens. Errors: bad_request (policy_rule).
CATALOG_DECL Result<void> validate_condition(std::string_view condition);

/// Evaluates a condition (REQUIRES: valid) given whether the caller owns the entity and
/// whether it has no owners.
CATALOG_DECL bool evaluate_condition(std::string_view condition, bool is_owner, bool no_owner);

/// Checks every rule: name non-empty, resources kinds or "all", operations known or "All",
/// condition in the grammar. Errors: bad_request (policy_rule) naming the rule.
CATALOG_DECL Result<void> validate_rules(const std::vector<PolicyRule>& rules);

/// Facts about the caller and the entity that conditions use.
struct Facts {
  bool is_owner = false;  ///< `isOwner()`: the caller or a team of theirs owns the entity
  bool no_owner = false;  ///< `noOwner()`: the entity has no owners, own or inherited
};

/// The docs/SEMANTICS.md §12 decision: any matching deny refuses; otherwise every operation must be
/// allowed by some matching rule. `All` covers every operation, `EditAll` every Edit*, `ViewAll`
/// ViewBasic. Errors: forbidden, "not allowed to perform operation <op>" naming the first refused
/// one.
CATALOG_DECL Result<void> decide(std::span<const PolicyRule> rules, Kind kind,
                    std::span<const Operation> operations, const Facts& facts);

/// The default organization policy: everyone ViewAll, Follow, EditVotes; owners every operation
/// but Create (only admins, and policies a host or admin attaches, allow creating); everyone
/// EditOwners of a data asset (ML models, glossaries and terms, domains, search indexes and
/// their services) that has no owner; never of users, teams or policies.
CATALOG_DECL std::vector<PolicyRule> default_rules();

/// The docs/SEMANTICS.md §12 authorizer: the default organization policy plus the enabled policies
/// of every team the caller belongs to and of those teams' ancestors; deny overrides. (Admins never
/// reach it: the store lets them through.) Immutable; thread-safe.
class CATALOG_DECL PolicyAuthorizer final : public Authorizer {
 public:
  /// `organization`: the default policy's rules (Default: default_rules()).
  explicit PolicyAuthorizer(std::vector<PolicyRule> organization = default_rules())
      : organization_(std::move(organization)) {}
  /// Errors: forbidden naming the refused operation; storage.
  Result<void> authorize(const Principal& who, std::span<const Operation> operations,
                         const Resource& what) const override;

 private:
  std::vector<PolicyRule> organization_;
};

}  // namespace catalog::policy

#endif  // CATALOG_POLICY_HPP
