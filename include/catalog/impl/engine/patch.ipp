#ifndef CATALOG_IMPL_ENGINE_PATCH_IPP
#define CATALOG_IMPL_ENGINE_PATCH_IPP

// Patch (docs/SEMANTICS.md §9): apply a merge patch or JSON Patch to the entity's full JSON, find
// what changed, authorize by the changed fields, refuse read-only changes, validate the result as
// an entity of its kind, then write own fields and edge differences as one new version.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/validate.hpp>
#include <catalog/detail/utf8.hpp>

#include <catalog/entities.hpp>
#include <catalog/json.hpp>
#include <catalog/json_patch.hpp>
#include <catalog/kind_traits.hpp>
#include <catalog/policy.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

namespace catalog::engine {

namespace json = boost::json;

/// The team member the seed patches by a domain FQN (docs/SEMANTICS.md §9), read into `domains`.
inline constexpr std::string_view team_domain = "domain";

/// A patch body read and checked alone (docs/SEMANTICS.md §14 step 3): its format, and a team's
/// `domain` member taken out, to be resolved once the entity is read.
struct PatchBody {
  PatchFormat format = PatchFormat::merge;
  json::value body;
  std::optional<json::value> team_domain;
};

namespace {

bool listed(std::span<const std::string_view> fields, std::string_view field) {
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

bool read_only(Kind kind, std::string_view field) {
  return listed(common_read_only, field) || listed(info(kind).read_only, field);
}

std::optional<RelField> relation(Kind kind, std::string_view field) {
  for (const auto& rf : relation_fields(kind))
    if (rf.field == field) return rf;
  return std::nullopt;
}

/// The kind a patchable relation field refers to (owners, users or teams, resolve apart).
Kind target_kind(const RelField& rf) {
  for (auto k : all_kinds)
    if (rf.others.contains(k)) return k;
  return Kind::user;
}

/// The references of a reference array as a set: each one's id (lower case: a UUID is read in
/// either case, docs/SEMANTICS.md §2) with its type, so that the same references sent back in
/// capitals are no change, and one sent back under another type (a user as a team) is a change
/// that resolve_field then refuses.
std::vector<std::string> reference_set(const json::value* v) {
  std::vector<std::string> out;
  if (v && v->is_array())
    for (const auto& e : v->as_array()) {
      if (!e.is_object()) continue;
      const auto& o = e.as_object();
      const auto* id = o.if_contains(wire::id());
      if (!id || !id->is_string()) continue;
      auto key = detail::ascii_lowered(id->get_string());
      key += '\0';
      if (const auto* type = o.if_contains(wire::reference_type()); type && type->is_string())
        key += type->get_string();
      else
        key += '\1';  // no type: never the stored reference's
      out.push_back(std::move(key));
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool is_reference_array(Kind kind, std::string_view field) {
  return relation(kind, field).has_value();
}

/// Whether `field` differs between the two documents, comparing reference arrays and tags as
/// sets (docs/SEMANTICS.md §2).
bool differs(Kind kind, std::string_view field, const json::value* a, const json::value* b) {
  if (!a || !b) return (a == nullptr) != (b == nullptr);
  if (is_reference_array(kind, field) && a->is_array() && b->is_array()) {
    // Elements without an id are malformed; compare them whole so validation reports them.
    for (const auto* v : {a, b})
      for (const auto& e : v->as_array())
        if (!e.is_object() || !e.as_object().contains(wire::id()))
          return !catalog::json::equal(*a, *b);
    return reference_set(a) != reference_set(b);
  }
  if (field == wire::tags() && a->is_array() && b->is_array()) {
    auto ta = from_json<std::vector<TagLabel>>(*a);
    auto tb = from_json<std::vector<TagLabel>>(*b);
    if (!ta || !tb) return !catalog::json::equal(*a, *b);
    auto na = normalize_tags(*ta), nb = normalize_tags(*tb);
    if (!na || !nb) return true;
    return *na != *nb;
  }
  // The same JSON is no change (docs/SEMANTICS.md §3): 2 and 2.0 are one number, so a document
  // sent back as it was read makes no version.
  return !catalog::json::equal(*a, *b);
}

const json::value* member(const json::object& o, std::string_view k) {
  auto it = o.find(k);
  return it == o.end() ? nullptr : &it->value();
}

/// Reads the patched members as the kind's struct: types, enumerations, unknown members. An
/// entity's struct requires no member (what a kind requires is checked per changed field,
/// check_required), so the members a patch touched read alone as the whole document would.
Result<void> check_shape(Kind kind, const json::object& after) {
  Record read(kind);
  return detail::struct_from_json(json::value(after), read.object(), layout_of(kind), "");
}

/// A changed own field the kind requires may be neither removed nor null.
Result<void> check_required(Kind kind, std::string_view field, const json::value* v) {
  if ((!v || v->is_null()) && listed(info(kind).required, field))
    return fail(Errc::invalid_request, "Missing required member " + std::string(field));
  return {};
}

/// The value rules (check_entity_values) of `r` with the changed own members set as patched.
Result<void> check_patched_values(Kind kind, const Record& r, const json::object& after,
                                  const std::vector<std::string>& changed) {
  Record patched = r;
  for (const auto& f : changed)
    if (!rendered_only(kind, f))
      if (auto s = patched.set_member(f, member(after, f)); !s) return s.error();
  return check_entity_values(patched.value);
}

/// Live records a relation field names. Errors: bad_request (wrong type), not_found.
Result<std::vector<Record>> resolve_field(Tx& tx, const RelField& rf, const json::value* v) {
  if (!v) return std::vector<Record>{};
  auto refs = from_json<std::vector<EntityReference>>(*v);
  if (!refs) return refs.error();
  if (rf.rel == Rel::owns && rf.reverse) return resolve_owners(tx, *refs);
  return resolve_refs(tx, target_kind(rf), *refs, rf.field);
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

Result<PatchBody> read_body(Kind kind, const json::value& body, PatchFormat format,
                            std::size_t max_bytes) {
  if (format == PatchFormat::detect) {
    if (body.is_object())
      format = PatchFormat::merge;
    else if (body.is_array())
      format = PatchFormat::json_patch;
    else
      return fail(Errc::invalid_patch,
                  "Invalid patch: expected a JSON object (merge patch) or array (JSON Patch)");
  }
  if (format != PatchFormat::merge && format != PatchFormat::json_patch)
    return fail(Errc::invalid_value, "Unknown patch format " +
                                         std::to_string(static_cast<int>(format)) +
                                         ": not a value of catalog::PatchFormat");
  if (format == PatchFormat::merge && !body.is_object())
    return fail(Errc::invalid_patch, "Invalid merge patch: expected a JSON object");
  if (format == PatchFormat::json_patch && !body.is_array())
    return fail(Errc::invalid_patch, "Invalid JSON Patch: expected an array of operations");
  // C++ callers hand over values the REST parser never saw: the same docs/SEMANTICS.md §15 limits
  // bind them.
  if (auto l = check_limits(body, catalog::json::max_body_depth, max_bytes, "The patch"); !l)
    return l.error();
  PatchBody out{format, body, std::nullopt};
  // The team field `domain` (a domain FQN, as the seed has it) is merge-patch only.
  if (format == PatchFormat::merge && info(kind).domain_by_fqn) {
    auto& o = out.body.as_object();
    if (auto d = o.find(team_domain); d != o.end()) {
      if (o.contains(wire::domains()))
        return fail(Errc::invalid_patch, "Invalid patch: give domain or domains, not both");
      if (!d->value().is_string() && !d->value().is_null())
        return fail(Errc::invalid_request, "Invalid member domain: expected a domain FQN string");
      out.team_domain = d->value();
      o.erase(team_domain);
    }
  }
  return out;
}

/// The entity a patch applies to: it exists, is live, and is at the expected version
/// (docs/SEMANTICS.md §14 steps 4 and 5).
Result<Record> load_patchable(Tx& tx, Kind kind, const EntityKey& key,
                              const PatchOptions& options) {
  auto r = tx.load(kind, key, Include::all);
  if (!r) return r.error();
  if (r->deleted())
    return fail(Errc::not_found, std::string(type_name(kind)) + " instance for " + key.text() +
                                     " is deleted; restore it first");
  if (options.expected_version && *options.expected_version != r->version())
    return fail(Errc::version_mismatch, std::string(type_name(kind)) + " " + std::string(r->fqn()) +
                                            " is at version " + r->version().to_string() +
                                            ", not " + options.expected_version->to_string());
  return r;
}

/// The members a patch body touches: a merge patch's member names, a JSON Patch's first path
/// tokens (of `path` and `from`), with the team's `domains` for its `domain`, and every member
/// the kind's structural rules read when it touches one. None when it may touch more than the
/// entity's own stored members and relationships: the root, an operation not well formed (the
/// patch of the whole document words its error), containers, votes, counts, href, the change
/// description, or a name the kind does not have.
std::optional<std::vector<std::string>> touched_members(Kind kind, const PatchBody& p) {
  std::vector<std::string> names;
  if (p.team_domain) names.emplace_back(wire::domains());
  if (p.format == PatchFormat::merge) {
    for (const auto& kv : p.body.as_object()) names.emplace_back(kv.key());
  } else {
    for (const auto& op : p.body.as_array()) {
      const auto* o = op.if_object();
      if (!o) return std::nullopt;
      for (std::string_view which : {"path", "from"}) {
        const auto* path = o->if_contains(which);
        if (!path) continue;
        if (!path->is_string()) return std::nullopt;
        std::string_view text = path->get_string();
        if (text.size() < 2 || text[0] != '/') return std::nullopt;
        auto token = text.substr(1, text.find('/', 1) - 1);
        if (token.find('~') != std::string_view::npos) return std::nullopt;
        names.emplace_back(token);
      }
    }
  }
  const auto rules = info(kind).rule_fields;
  const auto& layout = layout_of(kind);
  bool rule = false;
  for (const auto& name : names) {
    if (!layout.table.find(name) || name == wire::change_description() ||
        (rendered_only(kind, name) && !relation(kind, name)))
      return std::nullopt;
    rule = rule || listed(rules, name);
  }
  if (rule) names.insert(names.end(), rules.begin(), rules.end());
  return names;
}

/// The members of `r` named in `names` as its rendering has them, in its order: own stored
/// members, then relationships.
Result<json::object> touched_document(Tx& tx, const Record& r,
                                      const std::vector<std::string>& names) {
  const auto named = [&](std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  json::object out;
  r.visit_stored([&](const detail::Field& field, const detail::TextOps&, const void*,
                     const json::value*) {
    if (named(field.name))
      if (auto v = r.member(field.name)) out.emplace(field.name, std::move(*v));
  });
  for (const auto& rf : relation_fields(r.kind)) {
    if (!named(rf.field)) continue;
    auto edges = tx.edges(r.id, rf.rel, rf.reverse);
    if (!edges) return edges.error();
    auto refs = references(tx, *edges);
    if (!refs) return refs.error();
    out.emplace(rf.field, std::move(*refs));
  }
  return out;
}

/// What a patch starts from: the whole entity as rendered, or only the members it touches.
struct Before {
  json::object document;
  bool whole = true;
};

/// The document the body makes of `before` (docs/SEMANTICS.md §14 step 6), within the
/// docs/SEMANTICS.md §15 limits: the patched members with the entity's stored members they
/// leave.
Result<json::value> apply_body(Tx& tx, Kind kind, const Record& r, const Before& before,
                               PatchBody& p) {
  const auto max_bytes = tx.env().options.max_document_bytes;
  const auto& current = before.document;
  if (p.team_domain) {
    json::array domains;
    if (p.team_domain->is_string()) {
      auto d = tx.live_by_fqn(Kind::domain, p.team_domain->as_string());
      if (!d) return d.error();
      domains.push_back(reference(*d));
    }
    p.body.as_object()[wire::domains()] = std::move(domains);
  }
  json::value patched;
  if (p.format == PatchFormat::merge) {
    patched = catalog::json::merge_patch(current, p.body);
  } else {
    // What the operations may build is bounded too (docs/SEMANTICS.md §15), so a patch's cost is a
    // small multiple of the body limit whoever sends it, even before authorization decides.
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
    const std::size_t budget = max_bytes > most / 3 ? most : 3 * max_bytes;
    auto applied = catalog::json::apply_json_patch(
        current, p.body, {catalog::json::max_document_depth, budget});
    if (!applied) return applied.error();
    patched = std::move(*applied);
  }
  if (!patched.is_object())
    return fail(Errc::invalid_patch, "Invalid patch: the result is not a JSON object");
  // A member is never null (docs/SEMANTICS.md §2): in a request null means leaving the member
  // out, so an operation that sets one of the kind's members to null removes it, as a merge
  // patch's null does. Left as they are: a null the entity already held (stored by an earlier
  // version of the library), and a name the kind does not have (400 Unknown member, below). The
  // other members keep their order.
  auto dropped = [&](const json::key_value_pair& m) {
    if (!m.value().is_null()) return false;
    if (const auto* was = current.if_contains(m.key())) return !was->is_null();
    return layout_of(kind).table.find(m.key()).has_value() || relation(kind, m.key()).has_value();
  };
  if (auto& o = patched.as_object(); std::any_of(o.begin(), o.end(), dropped)) {
    json::object kept(o.storage());
    kept.reserve(o.size());
    for (auto& m : o)
      if (!dropped(m)) kept.emplace(m.key(), std::move(m.value()));
    o = std::move(kept);
  }
  const auto what = "The patched " + std::string(type_name(kind));
  if (auto l = check_limits(patched, catalog::json::max_document_depth, max_bytes, what); !l)
    return l.error();
  if (!before.whole) {
    // The stored members the patch left count too.
    const auto grown = catalog::json::measure(patched).bytes;
    const auto was = catalog::json::measure(json::value(current)).bytes;
    if (grown > was) {
      std::string stored;
      r.write_stored(stored);
      if (stored.size() + 2 + grown - was > max_bytes)
        return fail(Errc::too_large,
                    what + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  return patched;
}

/// A base field is never missing (docs/SEMANTICS.md §2): an own member the kind always has (a
/// flag, an enumeration with a default, a list) that the patch removed takes its default, as a
/// create without it would (docs/SEMANTICS.md §9), so removing one already at its default changes
/// nothing. A glossary term's status has no default of its own (its create chooses one by the
/// glossary's reviewers): removing it is refused. Required and read-only members are left
/// missing for check_patched to refuse.
Result<void> default_removed(Kind kind, const json::object& before, json::object& after) {
  std::optional<Record> fresh;  // the kind's defaults, made when a member is missing
  for (const auto& kv : before) {
    const auto name = kv.key();
    if (after.contains(name)) continue;
    if (kind == Kind::glossary_term && name == wire::status())
      return fail(Errc::invalid_request,
                  "Invalid status: a glossary term's status may be changed, not removed");
    if (!fresh) fresh.emplace(kind);
    const auto pos = fresh->position(name);
    if (!pos || rendered_only(kind, name) || relation(kind, name) || read_only(kind, name) ||
        listed(info(kind).required, name))
      continue;
    const auto& field = fresh->fields()[*pos];
    if (!field.ops->optional) after[name] = field.ops->to_json(field.in(fresh->object()));
  }
  return {};
}

/// The top-level fields whose values differ (docs/SEMANTICS.md §2: reference arrays and tags as
/// sets).
std::vector<std::string> changed_fields(Kind kind, const json::object& before,
                                        const json::object& after) {
  std::vector<std::string> changed;
  std::size_t position = 0;
  for (const auto& kv : before)
    if (differs(kind, kv.key(), &kv.value(), find_aligned(after, position++, kv.key())))
      changed.emplace_back(kv.key());
  position = 0;
  for (const auto& kv : after)
    if (!find_aligned(before, position++, kv.key())) changed.emplace_back(kv.key());
  return changed;
}

/// Authorization by the operations of the changed fields (docs/SEMANTICS.md §9, §14 step 7).
Result<void> authorize_changes(Tx& tx, const Principal& who, Kind kind, const Record& r,
                               const std::vector<std::string>& changed) {
  std::vector<Operation> ops;
  for (const auto& f : changed) {
    auto op = edit_operation(f);
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  RecordResource resource(tx, kind, &r);
  return authorize(tx, who, ops, resource);
}

/// The rules the changed document must keep (docs/SEMANTICS.md §9, §14 step 8): read-only fields,
/// the kind's shape and values, admin-only flags.
Result<void> check_changes(Kind kind, const Principal& who, const Record& r,
                           const json::object& before, const json::object& after,
                           const std::vector<std::string>& changed) {
  for (const auto& f : changed)
    if (read_only(kind, f))
      return fail(Errc::read_only_field,
                  std::string(type_name(kind)) + " attribute " + f + " can't be modified");
  // The members the patch touched are read alone first, so that a patch of one member does not
  // read the whole document; only when they do not tell is it read whole.
  if (!patched_members_read(kind, before, after))
    if (auto shape = check_shape(kind, after); !shape) return shape.error();
  for (const auto& f : changed)
    if (!relation(kind, f))
      if (auto v = check_required(kind, f, member(after, f)); !v) return v.error();
  const auto checked = info(kind).checked_fields;
  if (std::any_of(changed.begin(), changed.end(),
                  [&](const std::string& f) { return listed(checked, f); }))
    if (auto v = check_patched_values(kind, r, after, changed); !v) return v.error();
  const auto admin_only = info(kind).admin_only;
  if (!who.is_admin && std::any_of(changed.begin(), changed.end(),
                                   [&](const std::string& f) { return listed(admin_only, f); })) {
    std::string fields;
    for (auto f : admin_only) fields += (fields.empty() ? "" : " or ") + std::string(f);
    return fail(Errc::forbidden, "Only an admin may change " + fields);
  }
  return {};
}

/// The structural rules of a kind, checked again when a patch changes one of its
/// `rule_fields`: none but the team rules below.
template <class E>
Result<void> check_rules(std::type_identity<E>, Tx&, const Record&, const json::object&,
                         const json::object&) {
  return {};
}

/// Team type rules for the type and parents the patch leaves (docs/SEMANTICS.md §9).
Result<void> check_rules(std::type_identity<Team>, Tx& tx, const Record& r,
                         const json::object& before, const json::object& after) {
  auto old_type = team_type_of(member(before, wire::team_type()));
  auto new_type = team_type_of(member(after, wire::team_type()));
  if (old_type == TeamType::group && new_type != TeamType::group)
    return fail(Errc::team_rule, "Team of type Group can't change its type");
  // The rules on the number of parents first, as create does: 400 before the 404 of a
  // missing parent (docs/SEMANTICS.md §14, step 8 before 9).
  std::vector<EntityReference> refs;
  if (const auto* v = member(after, wire::parents())) {
    auto read = from_json<std::vector<EntityReference>>(*v);
    if (!read) return read.error();
    refs = std::move(*read);
  }
  // A reference of another type is a value error (§14 step 3), before any team rule.
  if (auto typed = check_ref_types(Kind::team, refs, wire::parents()); !typed)
    return typed.error();
  std::vector<Uuid> named;
  for (const auto& ref : refs) named.push_back(ref.id);
  if (auto counted = check_team_parent_count(new_type, std::move(named)); !counted)
    return counted.error();
  auto parents = resolve_refs(tx, Kind::team, refs, wire::parents());
  if (!parents) return parents.error();
  auto children = tx.edges(r.id, Rel::contains, false);
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
  if (new_type != old_type) {
    // Each child team keeps its own rules with this team's new type among its parents.
    Record changed = r;
    if (auto* team = std::get_if<Team>(&changed.value)) team->team_type = new_type;
    for (const auto& child : child_records) {
      const auto* child_team = std::get_if<Team>(&child.value);
      if (!child_team) continue;
      auto edges = tx.edges(child.id, Rel::contains, true);
      if (!edges) return edges.error();
      std::vector<Record> its_parents;
      for (const auto& e : *edges) {
        if (e.other == r.id) {
          its_parents.push_back(changed);
          continue;
        }
        auto p = tx.find(e.other);
        if (!p) return p.error();
        if (*p) its_parents.push_back(std::move(**p));
      }
      if (auto rules = check_team_rules(child_team->team_type, its_parents, {}); !rules)
        return fail(Errc::team_rule, "Team " + std::string(r.name()) + " can't change its type: " +
                                         "for its child team " + std::string(child.name()) +
                                         ", " + rules.error().message());
    }
  }
  std::vector<Uuid> parent_ids;
  for (const auto& p : *parents) parent_ids.push_back(p.id);
  auto cycle = team_cycle(tx, r.id, parent_ids);
  if (!cycle) return cycle.error();
  if (*cycle)
    return fail(Errc::team_rule, "Team " + std::string(r.name()) +
                                     " can't be its own ancestor: these parents would close the "
                                     "cycle " + **cycle);
  return {};
}

/// Every rule the patched document must keep (docs/SEMANTICS.md §14 step 8): check_changes, and the
/// kind's structural rules when a field they depend on changed.
Result<void> check_patched(Tx& tx, const Principal& who, Kind kind, const Record& r,
                           const json::object& before, const json::object& after,
                           const std::vector<std::string>& changed) {
  if (auto c = check_changes(kind, who, r, before, after, changed); !c) return c.error();
  const auto rule_fields = info(kind).rule_fields;
  if (!std::any_of(changed.begin(), changed.end(),
                   [&](const std::string& f) { return listed(rule_fields, f); }))
    return {};
  return visit_kind(kind, [&](auto type) { return check_rules(type, tx, r, before, after); });
}

/// The change description being built: one list per kind of change.
struct Changes {
  ChangeDescription change;
  bool major = false;

  static std::optional<json::value> value_of(const json::value* v) {
    if (!v) return std::nullopt;
    return *v;
  }
  void record(std::string_view f, const json::value* old_value, const json::value* new_value) {
    FieldChange c{std::string(f), value_of(old_value), value_of(new_value)};
    if (!old_value)
      change.fields_added.push_back(std::move(c));
    else if (!new_value)
      change.fields_deleted.push_back(std::move(c));
    else
      change.fields_updated.push_back(std::move(c));
  }
  // What a set-valued field gained and lost (references by id, tags by tagFQN).
  void record_sets(std::string_view f, json::array gained, json::array lost) {
    if (!gained.empty())
      change.fields_added.push_back(FieldChange{std::string(f), std::nullopt, std::move(gained)});
    if (!lost.empty())
      change.fields_deleted.push_back(FieldChange{std::string(f), std::move(lost), std::nullopt});
  }
  ChangeDescription description() { return std::move(change); }
};

/// A relation field: the edges it gained and lost, written as edge differences.
Result<void> write_relation(Tx& tx, const Record& r, const RelField& rf,
                            const std::vector<Record>& now, const json::value* old_value,
                            Changes& changes) {
  json::array new_refs;
  for (const auto& rec : now) new_refs.push_back(reference(rec));
  json::value new_refs_value = std::move(new_refs);
  auto gained = minus(&new_refs_value, old_value, wire::id());
  auto lost = minus(old_value, &new_refs_value, wire::id());
  auto other_of = [](const json::value& e) {
    return *parse_uuid(e.as_object().at(wire::id()).as_string());
  };
  for (const auto& e : lost) {
    auto other = other_of(e);
    auto u = rf.reverse ? tx.unlink(other, rf.rel, r.id) : tx.unlink(r.id, rf.rel, other);
    if (!u) return u.error();
  }
  for (const auto& e : gained) {
    auto other = other_of(e);
    auto l = rf.reverse ? tx.link(other, rf.rel, r.id) : tx.link(r.id, rf.rel, other);
    if (!l) return l.error();
  }
  changes.record_sets(rf.field, std::move(gained), std::move(lost));
  return {};
}

/// Whether a tag in both `old_value` and `now` (by tagFQN) has other details in `now`.
bool kept_tag_changed(const json::value* old_value, const json::value& now) {
  if (!old_value || !old_value->is_array() || !now.is_array()) return false;
  for (const auto& e : now.as_array()) {
    const auto* fqn = e.is_object() ? e.as_object().if_contains(wire::tag_fqn()) : nullptr;
    if (!fqn) continue;
    for (const auto& o : old_value->as_array())
      if (o.is_object() && o.as_object().if_contains(wire::tag_fqn()) &&
          *o.as_object().if_contains(wire::tag_fqn()) == *fqn && o != e)
        return true;
  }
  return false;
}

/// Tags: stored normalized; recorded as the tags gained and lost (docs/SEMANTICS.md §3), and as
/// an update, the tags before and after, when only their details changed or when a tag kept
/// changed its details beside those gained or lost.
Result<void> write_tags(Record& r, const json::value* old_value, const json::value* new_value,
                        Changes& changes) {
  auto tags = from_json<std::vector<TagLabel>>(new_value ? *new_value : json::value(json::array()));
  json::value now = *normalize_tags(*tags);  // check_changes validated them
  auto gained = minus(&now, old_value, wire::tag_fqn());
  auto lost = minus(old_value, &now, wire::tag_fqn());
  if ((gained.empty() && lost.empty()) || kept_tag_changed(old_value, now))
    changes.record(wire::tags(), old_value, &now);
  changes.record_sets(wire::tags(), std::move(gained), std::move(lost));
  return r.set_member(wire::tags(), &now);
}

/// Writes the changed fields into `r` and their edges (docs/SEMANTICS.md §14 step 9 for
/// references); what changed, for the new version's change description.
Result<Changes> write_fields(Tx& tx, Kind kind, Record& r, const json::object& before,
                             const json::object& after, const std::vector<std::string>& changed) {
  // References resolve before anything is written, so a missing one (404) changes nothing.
  std::vector<std::pair<RelField, std::vector<Record>>> relations;
  for (const auto& f : changed)
    if (auto rf = relation(kind, f)) {
      auto records = resolve_field(tx, *rf, member(after, f));
      if (!records) return records.error();
      relations.emplace_back(*rf, std::move(*records));
    }
  Changes changes;
  auto next_relation = relations.begin();  // in the order of `changed`, as the fields are
  for (const auto& f : changed) {
    const auto* old_value = member(before, f);
    if (relation(kind, f)) {
      const auto& [rf, records] = *next_relation++;
      if (auto w = write_relation(tx, r, rf, records, old_value, changes); !w) return w.error();
      continue;
    }
    const auto* new_value = member(after, f);
    if (f == wire::tags()) {
      if (auto w = write_tags(r, old_value, new_value, changes); !w) return w.error();
      continue;
    }
    if (auto w = r.set_member(f, new_value); !w) return w.error();
    changes.record(f, old_value, new_value);
    if (listed(info(kind).major_fields, f)) changes.major = true;
  }
  return changes;
}

/// Whether a rendering lists the entity itself among its relationships (a team among its own
/// owners): such a reference shows the entity's own fields, so it is rendered again.
bool lists_itself(Kind kind, const json::object& rendered, const Uuid& id) {
  const auto self = to_string(id);
  for (const auto& rf : relation_fields(kind)) {
    const auto* refs = rendered.if_contains(rf.field);
    if (!refs || !refs->is_array()) continue;
    for (const auto& ref : refs->get_array())
      if (const auto* o = ref.if_object())
        if (const auto* i = o->if_contains(wire::id()); i && i->is_string() && i->get_string() == self)
          return true;
  }
  return false;
}

/// docs/SEMANTICS.md §9 once the entity is read and the body validated: change, authorize,
/// check, write, record.
Result<Answer> patch_record(Tx& tx, const Principal& who, Kind kind, Record& r, Before& before,
                            PatchBody& p, AnswerForm form) {
  // Change: the members the body makes of the entity's, and those that differ.
  auto patched = apply_body(tx, kind, r, before, p);
  if (!patched) return patched.error();
  const auto& current = before.document;
  if (auto d = default_removed(kind, current, patched->as_object()); !d) return d.error();
  const auto& after = patched->as_object();
  auto changed = changed_fields(kind, current, after);
  if (changed.empty()) {  // no version for a patch that changes nothing
    // It answers the entity with all its fields, as a get asking for them all would.
    Operation view = Operation::view_all;
    RecordResource resource(tx, kind, &r);
    if (auto a = authorize(tx, who, {&view, 1}, resource); !a) return a.error();
    if (before.whole && form == AnswerForm::json)
      return Answer{kind, std::move(before.document), std::nullopt};
    return answer(tx, r, form);
  }
  // Authorize by what changes; then the result must still be a valid entity of its kind.
  if (auto a = authorize_changes(tx, who, kind, r, changed); !a) return a.error();
  if (auto c = check_patched(tx, who, kind, r, current, after, changed); !c) return c.error();
  // Write the fields and edges, then record them as a new version with its event; its snapshot
  // is the answer. When the whole entity was rendered and only own fields changed, the
  // containers and relationships shown are those read before.
  const auto containers = std::pair(r.container, r.glossary);
  auto changes = write_fields(tx, kind, r, current, after, changed);
  if (!changes) return changes.error();
  const bool own_only =
      before.whole && containers == std::pair(r.container, r.glossary) &&
      std::none_of(changed.begin(), changed.end(),
                   [&](const std::string& f) { return relation(kind, f).has_value(); }) &&
      !lists_itself(kind, current, r.id);
  return write_version(tx, who, r, false, changes->description(), EventType::entity_updated,
                       changes->major, form,
                       RenderFrom{nullptr, own_only ? &current : nullptr});
}

}  // namespace

/// docs/SEMANTICS.md §9: validate the body alone, then read the entity (only the members the
/// body touches, when they are own members and relationships), change, authorize, check, write
/// and record.
Result<Answer> patch(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                     const json::value& body, const PatchOptions& options, AnswerForm form) {
  auto p = read_body(kind, body, options.format, tx.env().options.max_document_bytes);
  if (!p) return p.error();
  auto r = load_patchable(tx, kind, key, options);
  if (!r) return r.error();
  Before before;
  if (auto touched = touched_members(kind, *p)) {
    auto document = touched_document(tx, *r, *touched);
    if (!document) return document.error();
    before.document = std::move(*document);
    before.whole = false;
  } else {
    auto current = render(tx, *r, FieldSet::everything());
    if (!current) return current.error();
    before.document = std::move(*current);
  }
  return patch_record(tx, who, kind, *r, before, *p, form);
}

/// patch() with the body made from the whole entity as rendered.
Result<Answer> patch_with(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                          const PatchMaker& make, const PatchOptions& options, AnswerForm form) {
  auto r = load_patchable(tx, kind, key, options);
  if (!r) return r.error();
  auto current = render(tx, *r, FieldSet::everything());
  if (!current) return current.error();
  Before before{std::move(*current), true};
  auto body = make(before.document);
  if (!body) return body.error();
  auto p = read_body(kind, *body, PatchFormat::json_patch, tx.env().options.max_document_bytes);
  if (!p) return p.error();
  return patch_record(tx, who, kind, *r, before, *p, form);
}


}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_PATCH_IPP
