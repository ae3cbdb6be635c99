#ifndef CATALOG_IMPL_ENGINE_AUTHORIZATION_IPP
#define CATALOG_IMPL_ENGINE_AUTHORIZATION_IPP

// What the authorizer sees of an entity (RecordResource: its owners, own or inherited, the
// caller's teams and their policies, read in the operation's transaction), and `authorize`.

#include <catalog/detail/engine/engine.hpp>

#include <algorithm>

namespace catalog::engine {

Result<std::vector<OwnerRef>> RecordResource::owners() const {
  if (!own_.empty()) return own_;
  std::optional<Record> current;
  if (record_) current = *record_;
  while (current) {
    auto edges = tx_.edges(current->id, Rel::owns, true);
    if (!edges) return edges.error();
    if (!edges->empty()) {
      std::vector<OwnerRef> out;
      for (const auto& e : *edges) {
        auto o = tx_.find(e.other);
        if (!o) return o.error();
        if (*o) out.push_back(OwnerRef{e.other, (*o)->kind});
      }
      return out;
    }
    auto next = current->container ? current->container : current->glossary;
    if (!next || *next == current->id) break;
    auto c = tx_.find(*next);
    if (!c) return c.error();
    current = std::move(*c);
  }
  return std::vector<OwnerRef>{};
}

Result<std::vector<Uuid>> RecordResource::teams_of(const Uuid& user) const {
  std::vector<Uuid> out;
  auto direct = tx_.edges(user, Rel::member, true);
  if (!direct) return direct.error();
  std::vector<Uuid> stack;
  for (const auto& e : *direct) stack.push_back(e.other);
  while (!stack.empty()) {
    auto t = stack.back();
    stack.pop_back();
    if (std::find(out.begin(), out.end(), t) != out.end()) continue;
    out.push_back(t);
    auto parents = tx_.edges(t, Rel::contains, true);
    if (!parents) return parents.error();
    for (const auto& p : *parents) stack.push_back(p.other);
  }
  return out;
}

Result<std::vector<PolicyRule>> RecordResource::policies_of(std::span<const Uuid> teams) const {
  std::vector<PolicyRule> out;
  std::vector<Uuid> seen;
  for (const auto& t : teams) {
    auto ps = tx_.edges(t, Rel::policy, false);
    if (!ps) return ps.error();
    for (const auto& p : *ps) {
      if (std::find(seen.begin(), seen.end(), p.other) != seen.end()) continue;
      seen.push_back(p.other);
      auto rec = tx_.find(p.other);
      if (!rec) return rec.error();
      if (!*rec || (*rec)->deleted()) continue;
      // A stored policy that does not decode failed the read above (fail closed) instead of
      // being skipped with its deny rules.
      const auto* policy = std::get_if<Policy>(&(*rec)->value);
      if (!policy)
        return fail(Errc::storage,
                    "stored policy " + std::string((*rec)->fqn()) + " is not a policy");
      if (!policy->enabled) continue;
      out.insert(out.end(), policy->rules.begin(), policy->rules.end());
    }
  }
  return out;
}

std::string RecordResource::target() const {
  if (!target_.empty()) return target_;
  std::string out(type_name(kind_));
  if (record_ && record_->kind == kind_) {
    out += ' ';
    out += record_->fqn();
  }
  return out;
}

Result<void> authorize(Tx& tx, const Principal& who, std::span<const Operation> ops,
                       const RecordResource& what) {
  if (who.is_admin) return {};
  const auto& a = tx.env().options.authorizer;
  if (!a) return {};
  auto decision = a->authorize(who, ops, what);
  if (!decision && decision.error().kind() == ErrorKind::forbidden)
    return fail(Errc::forbidden, decision.error().message() + " on " + what.target());
  return decision;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_AUTHORIZATION_IPP
