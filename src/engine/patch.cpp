// Patch (S9): apply a merge patch or JSON Patch to the entity's full JSON, find what changed,
// authorize by the changed fields, refuse read-only changes, validate the result as an entity
// of its kind, then write own fields and edge differences as one new version.

#include "engine.hpp"
#include "validate.hpp"

#include <catalog/entities.hpp>
#include <catalog/json.hpp>
#include <catalog/policy.hpp>

#include <algorithm>

namespace catalog::engine {

namespace json = boost::json;

namespace {

constexpr std::string_view always_read_only[] = {"id",
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

bool read_only(Kind kind, std::string_view field) {
  if (std::find(std::begin(always_read_only), std::end(always_read_only), field) !=
      std::end(always_read_only))
    return true;
  if (field == "serviceType" && service_kind(kind)) return true;  // it comes from the service
  if (field == "teams" && kind == Kind::policy) return true;
  return false;
}

std::optional<RelField> relation(Kind kind, std::string_view field) {
  for (const auto& rf : relation_fields(kind))
    if (rf.field == field) return rf;
  return std::nullopt;
}

/// The kind a patchable relation field refers to.
Kind target_kind(Kind kind, std::string_view field) {
  if (field == "policies") return Kind::policy;
  if (field == "domains") return Kind::domain;
  if (field == "parents" || (field == "teams" && kind == Kind::user)) return Kind::team;
  if (field == "relatedTerms") return Kind::glossary_term;
  return Kind::user;  // reviewers, experts, users (owners are users or teams)
}

std::vector<std::string> ids_of(const json::value* v) {
  std::vector<std::string> out;
  if (v && v->is_array())
    for (const auto& e : v->as_array())
      if (e.is_object())
        if (auto id = e.as_object().find("id");
            id != e.as_object().end() && id->value().is_string())
          out.emplace_back(id->value().as_string());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool is_reference_array(Kind kind, std::string_view field) {
  return relation(kind, field).has_value();
}

/// Whether `field` differs between the two documents, comparing reference arrays and tags as
/// sets (S2).
bool differs(Kind kind, std::string_view field, const json::value* a, const json::value* b) {
  if (!a || !b) return (a == nullptr) != (b == nullptr);
  if (is_reference_array(kind, field) && a->is_array() && b->is_array()) {
    // Elements without an id are malformed; compare them whole so validation reports them.
    for (const auto* v : {a, b})
      for (const auto& e : v->as_array())
        if (!e.is_object() || !e.as_object().contains("id")) return *a != *b;
    return ids_of(a) != ids_of(b);
  }
  if (field == "tags" && a->is_array() && b->is_array()) {
    auto ta = from_json<std::vector<TagLabel>>(*a);
    auto tb = from_json<std::vector<TagLabel>>(*b);
    if (!ta || !tb) return *a != *b;
    auto na = normalize_tags(*ta), nb = normalize_tags(*tb);
    if (!na || !nb) return true;
    return *na != *nb;
  }
  return *a != *b;
}

const json::value* member(const json::object& o, std::string_view k) {
  auto it = o.find(k);
  return it == o.end() ? nullptr : &it->value();
}

Operation operation_for(std::string_view field) {
  if (field == "description") return Operation::edit_description;
  if (field == "displayName") return Operation::edit_display_name;
  if (field == "owners") return Operation::edit_owners;
  if (field == "tags") return Operation::edit_tags;
  if (field == "experts" || field == "reviewers") return Operation::edit_reviewers;
  if (field == "users") return Operation::edit_users;
  if (field == "policies") return Operation::edit_policy;
  return Operation::edit_all;
}

/// Reads the patched document as the kind's struct: types, enumerations, unknown members.
Result<void> check_shape(Kind kind, const json::value& doc) {
  auto check = [&](auto tag) -> Result<void> {
    using E = decltype(tag);
    auto r = from_json<E>(doc);
    if (!r) return r.error();
    return {};
  };
  switch (kind) {
  case Kind::user: return check(User{});
  case Kind::team: return check(Team{});
  case Kind::policy: return check(Policy{});
  case Kind::mlmodel_service: return check(MlModelService{});
  case Kind::search_service: return check(SearchService{});
  case Kind::mlmodel: return check(MlModel{});
  case Kind::glossary: return check(Glossary{});
  case Kind::glossary_term: return check(GlossaryTerm{});
  case Kind::domain: return check(Domain{});
  case Kind::search_index: return check(SearchIndex{});
  }
  return {};
}

/// Values rules for changed own fields (S2).
Result<void> check_value(Kind kind, std::string_view field, const json::value* v) {
  auto missing = [&] {
    return fail(Errc::invalid_request, "Missing required member " + std::string(field));
  };
  auto required = [&](std::initializer_list<std::pair<Kind, std::string_view>> list) {
    for (auto [k, f] : list)
      if (k == kind && f == field) return true;
    return false;
  };
  if (!v) {
    if (required({{Kind::mlmodel, "algorithm"},
                  {Kind::user, "email"},
                  {Kind::domain, "domainType"},
                  {Kind::team, "teamType"},
                  {Kind::mlmodel_service, "serviceType"},
                  {Kind::search_service, "serviceType"},
                  {Kind::policy, "rules"},
                  {Kind::search_index, "fields"}}))
      return missing();
    return {};
  }
  if (field == "email") return validate_email(v->as_string());
  if (field == "serviceType" && v->as_string().empty())
    return fail(Errc::invalid_value, "Invalid serviceType: must not be empty");
  if (field == "server") return validate_uri(v->as_string(), "server");
  if (field == "sourceHash") return validate_source_hash(v->as_string());
  if (field == "fields" && kind == Kind::search_index) {
    auto f = from_json<std::vector<SearchIndexField>>(*v);
    if (!f) return f.error();
    return validate_index_fields(*f);
  }
  if (field == "rules" && kind == Kind::policy) {
    auto rules = from_json<std::vector<PolicyRule>>(*v);
    if (!rules) return rules.error();
    return policy::validate_rules(*rules);
  }
  if (field == "tags") {
    auto tags = from_json<std::vector<TagLabel>>(*v);
    if (!tags) return tags.error();
    auto n = normalize_tags(*tags);
    if (!n) return n.error();
  }
  if (field == "synonyms")
    for (const auto& s : v->as_array())
      if (s.as_string().empty())
        return fail(Errc::invalid_value, "Invalid synonym: must not be empty");
  return {};
}

/// Live records a relation field names. Errors: bad_request (wrong type), not_found.
Result<std::vector<Record>> resolve_field(Tx& tx, Kind kind, std::string_view field,
                                          const json::value* v) {
  if (!v) return std::vector<Record>{};
  auto refs = from_json<std::vector<EntityReference>>(*v);
  if (!refs) return refs.error();
  if (field == "owners") return resolve_owners(tx, *refs);
  return resolve_refs(tx, target_kind(kind, field), *refs, field);
}

/// Elements of `a` whose key (id, or tagFQN for tags) is not in `b`.
json::array minus(const json::value* a, const json::value* b, std::string_view key) {
  json::array out;
  if (!a || !a->is_array()) return out;
  auto keys_of = [&](const json::value* v) {
    std::vector<json::value> k;
    if (v && v->is_array())
      for (const auto& e : v->as_array())
        if (e.is_object())
          if (auto it = e.as_object().find(key); it != e.as_object().end())
            k.push_back(it->value());
    return k;
  };
  auto kb = keys_of(b);
  for (const auto& e : a->as_array()) {
    if (!e.is_object()) continue;
    auto it = e.as_object().find(key);
    if (it == e.as_object().end()) continue;
    if (std::find(kb.begin(), kb.end(), it->value()) == kb.end()) out.push_back(e);
  }
  return out;
}

TeamType team_type_of(const json::value* v) {
  if (!v || !v->is_string()) return TeamType::group;
  auto t = detail::enum_from_name<TeamType>(v->as_string());
  return t ? *t : TeamType::group;
}

}  // namespace

Result<json::object> patch(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                           const json::value& body, const PatchOptions& options) {
  auto format = options.format;
  if (format == PatchFormat::detect) {
    if (body.is_object())
      format = PatchFormat::merge;
    else if (body.is_array())
      format = PatchFormat::json_patch;
    else
      return fail(Errc::invalid_patch,
                  "Invalid patch: expected a JSON object (merge patch) or array (JSON Patch)");
  }
  if (format == PatchFormat::merge && !body.is_object())
    return fail(Errc::invalid_patch, "Invalid merge patch: expected a JSON object");
  if (format == PatchFormat::json_patch && !body.is_array())
    return fail(Errc::invalid_patch, "Invalid JSON Patch: expected an array of operations");
  const auto max_bytes = tx.env().options.max_document_bytes;
  // C++ callers hand over values the REST parser never saw: the same S15 limits bind them.
  if (auto l = check_limits(body, catalog::json::max_body_depth, max_bytes, "The patch"); !l)
    return l.error();
  // The team field `domain` (a domain FQN, as the seed has it) is merge-patch only.
  json::value merge_body = body;
  std::optional<json::value> team_domain;
  if (format == PatchFormat::merge && kind == Kind::team) {
    auto& o = merge_body.as_object();
    if (auto d = o.find("domain"); d != o.end()) {
      if (o.contains("domains"))
        return fail(Errc::invalid_patch, "Invalid patch: give domain or domains, not both");
      if (!d->value().is_string() && !d->value().is_null())
        return fail(Errc::invalid_request, "Invalid member domain: expected a domain FQN string");
      team_domain = d->value();
      o.erase("domain");
    }
  }

  auto r = tx.load(kind, key, Include::all);
  if (!r) return r.error();
  if (r->deleted())
    return fail(Errc::not_found, std::string(type_name(kind)) + " instance for " + key.text() +
                                     " is deleted; restore it first");
  if (options.expected_version && *options.expected_version != r->version())
    return fail(Errc::version_mismatch, std::string(type_name(kind)) + " " + std::string(r->fqn()) +
                                            " is at version " + r->version().to_string() +
                                            ", not " + options.expected_version->to_string());

  auto current = render(tx, *r, FieldSet::everything());
  if (!current) return current.error();
  if (team_domain) {
    json::array domains;
    if (team_domain->is_string()) {
      auto d = tx.live_by_fqn(Kind::domain, team_domain->as_string());
      if (!d) return d.error();
      domains.push_back(reference(*d));
    }
    merge_body.as_object()["domains"] = std::move(domains);
  }
  json::value patched;
  if (format == PatchFormat::merge) {
    patched = catalog::json::merge_patch(*current, merge_body);
  } else {
    // What the operations may build is bounded too (S15), so a patch's cost is a small multiple
    // of the body limit whoever sends it, even before authorization decides.
    auto applied = catalog::json::apply_json_patch(
        *current, body, {catalog::json::max_document_depth, 3 * max_bytes});
    if (!applied) return applied.error();
    patched = std::move(*applied);
  }
  if (!patched.is_object())
    return fail(Errc::invalid_patch, "Invalid patch: the result is not a JSON object");
  if (auto l = check_limits(patched, catalog::json::max_document_depth, max_bytes,
                            "The patched " + std::string(type_name(kind)));
      !l)
    return l.error();
  const auto& after = patched.as_object();

  std::vector<std::string> changed;
  for (const auto& kv : *current)
    if (differs(kind, kv.key(), &kv.value(), member(after, kv.key())))
      changed.emplace_back(kv.key());
  for (const auto& kv : after)
    if (!current->contains(kv.key())) changed.emplace_back(kv.key());
  if (changed.empty()) return std::move(*current);  // no version for a patch that changes nothing

  std::vector<Operation> ops;
  for (const auto& f : changed) {
    auto op = operation_for(f);
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  RecordResource resource(tx, kind, &*r);
  if (auto a = authorize(tx, who, ops, resource); !a) return a.error();

  for (const auto& f : changed)
    if (read_only(kind, f))
      return fail(Errc::read_only_field,
                  std::string(type_name(kind)) + " attribute " + f + " can't be modified");
  if (auto shape = check_shape(kind, patched); !shape) return shape.error();
  for (const auto& f : changed)
    if (!relation(kind, f))
      if (auto v = check_value(kind, f, member(after, f)); !v) return v.error();
  if (kind == Kind::user && !who.is_admin &&
      std::any_of(changed.begin(), changed.end(),
                  [](const std::string& f) { return f == "isAdmin" || f == "isBot"; }))
    return fail(Errc::forbidden, "Only an admin may change isAdmin or isBot");

  // Team type rules apply to the type and parents the patch leaves.
  bool team_shape_changed =
      kind == Kind::team && std::any_of(changed.begin(), changed.end(), [](const std::string& f) {
        return f == "teamType" || f == "parents";
      });
  std::vector<std::pair<std::string, std::vector<Record>>> resolved;
  if (team_shape_changed) {
    auto old_type = team_type_of(member(*current, "teamType"));
    auto new_type = team_type_of(member(after, "teamType"));
    if (old_type == TeamType::group && new_type != TeamType::group)
      return fail(Errc::team_rule, "Team of type Group can't change its type");
    auto parents = resolve_field(tx, kind, "parents", member(after, "parents"));
    if (!parents) return parents.error();
    auto children = tx.edges(r->id, Rel::contains, false);
    if (!children) return children.error();
    std::vector<Record> child_records;
    for (const auto& c : *children) {
      auto rec = tx.find(c.other);
      if (!rec) return rec.error();
      if (*rec) child_records.push_back(std::move(**rec));
    }
    if (new_type == TeamType::group && !child_records.empty())
      return fail(Errc::team_rule, "Team with child teams can't become a Group");
    if (auto rules = check_team_rules(new_type, *parents, child_records); !rules)
      return rules.error();
  }
  for (const auto& f : changed) {
    if (!relation(kind, f)) continue;
    auto records = resolve_field(tx, kind, f, member(after, f));
    if (!records) return records.error();
    resolved.emplace_back(f, std::move(*records));
  }

  // Write: own fields into the document, relation fields as edge differences.
  json::array added, updated, deleted;
  bool major = false;
  for (const auto& f : changed) {
    const auto* old_value = member(*current, f);
    const auto* new_value = member(after, f);
    if (auto rf = relation(kind, f)) {
      auto records = std::find_if(resolved.begin(), resolved.end(),
                                  [&](const auto& p) { return p.first == f; });
      json::array new_refs;
      for (const auto& rec : records->second) new_refs.push_back(reference(rec));
      json::value new_refs_value = new_refs;
      auto gained = minus(&new_refs_value, old_value, "id");
      auto lost = minus(old_value, &new_refs_value, "id");
      for (const auto& e : lost) {
        auto other = *parse_uuid(e.as_object().at("id").as_string());
        auto u = rf->reverse ? tx.unlink(other, rf->rel, r->id) : tx.unlink(r->id, rf->rel, other);
        if (!u) return u.error();
      }
      for (const auto& e : gained) {
        auto other = *parse_uuid(e.as_object().at("id").as_string());
        auto l = rf->reverse ? tx.link(other, rf->rel, r->id) : tx.link(r->id, rf->rel, other);
        if (!l) return l.error();
      }
      if (!gained.empty()) {
        json::value gained_value = gained;
        added.push_back(field_change(f, nullptr, &gained_value));
      }
      if (!lost.empty()) {
        json::value lost_value = lost;
        deleted.push_back(field_change(f, &lost_value, nullptr));
      }
      continue;
    }
    if (f == "tags") {
      auto tags =
          from_json<std::vector<TagLabel>>(new_value ? *new_value : json::value(json::array()));
      auto normalized = normalize_tags(*tags);
      json::value now = *normalized;
      auto gained = minus(&now, old_value, "tagFQN");
      auto lost = minus(old_value, &now, "tagFQN");
      if (!gained.empty()) {
        json::value g = gained;
        added.push_back(field_change(f, nullptr, &g));
      }
      if (!lost.empty()) {
        json::value l = lost;
        deleted.push_back(field_change(f, &l, nullptr));
      }
      if (gained.empty() && lost.empty()) updated.push_back(field_change(f, old_value, &now));
      r->doc["tags"] = std::move(now);
      continue;
    }
    if (new_value)
      r->doc[f] = *new_value;
    else
      r->doc.erase(f);
    if (!old_value)
      added.push_back(field_change(f, nullptr, new_value));
    else if (!new_value)
      deleted.push_back(field_change(f, old_value, nullptr));
    else
      updated.push_back(field_change(f, old_value, new_value));
    if (kind == Kind::mlmodel && (f == "algorithm" || f == "server" || f == "target")) major = true;
  }
  json::object change;
  change["fieldsAdded"] = std::move(added);
  change["fieldsUpdated"] = std::move(updated);
  change["fieldsDeleted"] = std::move(deleted);
  if (auto w = write_version(tx, who, *r, false, std::move(change), "entityUpdated", major); !w)
    return w.error();
  return render(tx, *r, FieldSet::everything());
}

}  // namespace catalog::engine
