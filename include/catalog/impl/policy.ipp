#ifndef CATALOG_IMPL_POLICY_IPP
#define CATALOG_IMPL_POLICY_IPP

#include <catalog/policy.hpp>

#include <algorithm>
#include <iterator>

namespace catalog::policy {

namespace {

constexpr Operation all_operations[] = {
    Operation::create,          Operation::delete_,          Operation::view_basic,
    Operation::view_all,        Operation::edit_all,         Operation::edit_description,
    Operation::edit_display_name, Operation::edit_owners,    Operation::edit_tags,
    Operation::edit_reviewers,  Operation::edit_users,       Operation::edit_policy,
    Operation::follow,          Operation::edit_followers,   Operation::edit_votes};

// Recursive descent over the closed grammar:
//   expr := term ('||' term)* ; term := factor ('&&' factor)* ;
//   factor := '!' factor | '(' expr ')' | 'isOwner()' | 'noOwner()'
// Depth is bounded so a hostile condition cannot exhaust the stack.
class Parser {
 public:
  Parser(std::string_view text, bool is_owner, bool no_owner)
      : s_(text), is_owner_(is_owner), no_owner_(no_owner) {}

  bool parse(bool& value) {
    if (!expr(value, 0)) return false;
    skip();
    return i_ == s_.size();
  }

 private:
  static constexpr int max_depth = 64;

  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  bool eat(std::string_view token) {
    skip();
    if (s_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }
  bool expr(bool& v, int depth) {
    if (depth > max_depth || !term(v, depth)) return false;
    while (eat("||")) {
      bool rhs = false;
      if (!term(rhs, depth)) return false;
      v = v || rhs;
    }
    return true;
  }
  bool term(bool& v, int depth) {
    if (!factor(v, depth)) return false;
    while (eat("&&")) {
      bool rhs = false;
      if (!factor(rhs, depth)) return false;
      v = v && rhs;
    }
    return true;
  }
  bool factor(bool& v, int depth) {
    if (depth > max_depth) return false;
    if (eat("!")) {
      if (!factor(v, depth + 1)) return false;
      v = !v;
      return true;
    }
    if (eat("(")) {
      if (!expr(v, depth + 1)) return false;
      return eat(")");
    }
    if (eat("isOwner()")) {
      v = is_owner_;
      return true;
    }
    if (eat("noOwner()")) {
      v = no_owner_;
      return true;
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool is_owner_;
  bool no_owner_;
};

bool covers(std::string_view granted, Operation wanted) {
  if (granted == "All") return true;
  auto op = operation_from_name(granted);
  if (!op) return false;
  if (*op == wanted) return true;
  if (*op == Operation::edit_all) return operation_name(wanted).starts_with("Edit");
  if (*op == Operation::view_all) return wanted == Operation::view_basic;
  return false;
}

bool matches_resource(const PolicyRule& rule, Kind kind) {
  return std::any_of(rule.resources.begin(), rule.resources.end(), [&](const std::string& r) {
    return r == "all" || r == type_name(kind);
  });
}

bool condition_holds(const PolicyRule& rule, const Facts& facts) {
  return !rule.condition || evaluate_condition(*rule.condition, facts.is_owner, facts.no_owner);
}

}  // namespace

std::optional<Operation> operation_from_name(std::string_view name) noexcept {
  for (auto op : all_operations)
    if (operation_name(op) == name) return op;
  return std::nullopt;
}

Result<void> validate_condition(std::string_view condition) {
  bool v = false;
  Parser p(condition, false, false);
  if (!p.parse(v))
    return fail(Errc::policy_rule,
                "Invalid condition " + std::string(condition.substr(0, 200)) +
                    ": expected isOwner(), noOwner(), !, &&, || and parentheses");
  return {};
}

bool evaluate_condition(std::string_view condition, bool is_owner, bool no_owner) {
  bool v = false;
  Parser p(condition, is_owner, no_owner);
  return p.parse(v) && v;
}

Result<void> validate_rules(const std::vector<PolicyRule>& rules) {
  for (const auto& rule : rules) {
    if (rule.name.empty()) return fail(Errc::policy_rule, "Invalid rule: name must not be empty");
    auto where = " in rule " + rule.name.substr(0, 200);
    for (const auto& r : rule.resources)
      if (r != "all" && !kind_from_type(r))
        return fail(Errc::policy_rule, "Invalid resource " + r.substr(0, 64) + where);
    for (const auto& o : rule.operations)
      if (o != "All" && !operation_from_name(o))
        return fail(Errc::policy_rule, "Invalid operation " + o.substr(0, 64) + where);
    if (rule.condition)
      if (auto c = validate_condition(*rule.condition); !c)
        return fail(Errc::policy_rule, c.error().message() + where);
  }
  return {};
}

Result<void> decide(std::span<const PolicyRule> rules, Kind kind,
                    std::span<const Operation> operations, const Facts& facts) {
  for (auto op : operations) {
    bool allowed = false;
    for (const auto& rule : rules) {
      if (!matches_resource(rule, kind) || !condition_holds(rule, facts)) continue;
      bool applies = std::any_of(rule.operations.begin(), rule.operations.end(),
                                 [&](const std::string& g) { return covers(g, op); });
      if (!applies) continue;
      if (rule.effect == Effect::deny)
        return fail(Errc::forbidden, "not allowed to perform operation " +
                                         std::string(operation_name(op)) + " (denied by rule " +
                                         rule.name + ")");
      allowed = true;
    }
    if (!allowed)
      return fail(Errc::forbidden, "not allowed to perform operation " +
                                       std::string(operation_name(op)));
  }
  return {};
}

std::vector<PolicyRule> default_rules() {
  return {
      PolicyRule{"everyone-view-follow-vote",
                 Effect::allow,
                 {"all"},
                 {"ViewAll", "Follow", "EditVotes"},
                 std::nullopt,
                 std::nullopt},
      // Everything but Create: a create is judged by the owners its request names, so owners
      // allowed Create would let anyone create anything (a team with a policy of their own
      // among its members' policies) by naming themselves its owner.
      PolicyRule{"owners-all-but-create",
                 Effect::allow,
                 {"all"},
                 {"Delete", "ViewAll", "EditAll", "Follow", "EditFollowers", "EditVotes"},
                 "isOwner()",
                 std::nullopt},
      // Data assets only (docs/SEMANTICS.md §12): claiming an ownerless team would hand its
      // members' policies to anyone, and a user or policy is no asset to claim.
      PolicyRule{"claim-unowned",
                 Effect::allow,
                 {"mlmodel", "mlmodelService", "glossary", "glossaryTerm", "domain", "searchIndex",
                  "searchService"},
                 {"EditOwners"},
                 "noOwner()",
                 std::nullopt},
  };
}

Result<void> PolicyAuthorizer::authorize(const Principal& who,
                                         std::span<const Operation> operations,
                                         const Resource& what) const {
  if (who.is_admin) return {};
  auto teams = what.teams_of(who.id);
  if (!teams) return teams.error();
  auto team_rules = what.policies_of(*teams);
  if (!team_rules) return team_rules.error();
  std::vector<PolicyRule> rules = organization_;
  rules.insert(rules.end(), std::make_move_iterator(team_rules->begin()),
               std::make_move_iterator(team_rules->end()));
  auto owners = what.owners();
  if (!owners) return owners.error();
  Facts facts;
  facts.no_owner = owners->empty();
  for (const auto& o : *owners)
    if (o.id == who.id ||
        (info(o.kind).members_own &&
         std::find(teams->begin(), teams->end(), o.id) != teams->end()))
      facts.is_owner = true;
  auto decision = decide(rules, what.kind(), operations, facts);
  if (!decision) return fail(Errc::forbidden, who.name + " is " + decision.error().message());
  return {};
}

}  // namespace catalog::policy

#endif  // CATALOG_IMPL_POLICY_IPP
