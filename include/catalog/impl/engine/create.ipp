#ifndef CATALOG_IMPL_ENGINE_CREATE_IPP
#define CATALOG_IMPL_ENGINE_CREATE_IPP

// Create (docs/SEMANTICS.md §10): validate the request, resolve containers and references,
// authorize, then write the entity, its name, list indexes, counters, edges, first snapshot and
// event.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/validate.hpp>

#include <catalog/json.hpp>

#include <catalog/entities.hpp>
#include <catalog/fqn.hpp>
#include <catalog/kind_traits.hpp>
#include <catalog/policy.hpp>

#include <type_traits>

namespace catalog::engine {

namespace json = boost::json;

namespace {

struct Link {
  Uuid from{};
  Rel rel;
  Uuid to{};
};

/// What a kind's preparation produces; `write_new` does the rest the same way for every kind.
struct Draft {
  Record record;
  std::string parent_fqn;        // "" for top-level entities
  std::optional<Record> parent;  // the container record, for owner inheritance
  std::vector<Link> links;       // `record.id` is filled in before they are written
  std::vector<OwnerRef> owners;  // as the request names them: isOwner() before they resolve
  bool admin_only = false;  // only an admin may create it (an admin user, docs/SEMANTICS.md §11)
};

// Placeholder for the new entity's id in links, replaced once the id is known.
constexpr Uuid self{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                     0xff, 0xff, 0xff}};

// Reads the kind's create request strictly, and notes the owners it names.
template <class T>
Result<T> read_request(Kind kind, const json::value& body, Draft& d) {
  if (!body.is_object())
    return fail(Errc::invalid_request,
                "Invalid " + std::string(type_name(kind)) + " create request: expected an object");
  auto request = from_json<T>(body);
  if constexpr (requires { request->owners; })
    if (request)
      for (const auto& ref : request->owners)
        d.owners.push_back(OwnerRef{ref.id, kind_from_type(ref.type).value_or(Kind::user)});
  return request;
}

void set_base(EntityBase& e, std::string_view name, const std::optional<std::string>& display,
              const std::optional<std::string>& description) {
  e.name = name;
  e.display_name = display;
  e.description = description;
}

// The service struct of a service record (either service kind).
ServiceBase& service_of(Record& r) {
  return *std::visit(
      [](auto& e) -> ServiceBase* {
        if constexpr (std::is_base_of_v<ServiceBase, std::remove_cvref_t<decltype(e)>>)
          return &e;
        else
          return nullptr;
      },
      r.value);
}

void add_owners(Draft& d, const std::vector<Record>& owners) {
  for (const auto& o : owners) {
    d.links.push_back({o.id, Rel::owns, self});
  }
}

void add_links(Draft& d, Rel rel, const std::vector<Record>& targets) {
  for (const auto& t : targets) d.links.push_back({self, rel, t.id});
}

// The new entity lives under `container` (docs/SEMANTICS.md §1): its FQN starts with the
// container's, and it inherits the container's owners until it has its own.
void place_under(Draft& d, Record container) {
  d.record.container = container.id;
  d.parent_fqn = std::string(container.fqn());
  d.parent = std::move(container);
}

// Each link_* resolves references to live entities (404, or 400 for a wrong type) and records
// the edges the new entity will get.
Result<void> link_owners(Tx& tx, Draft& d, const std::vector<EntityReference>& refs) {
  auto owners = resolve_owners(tx, refs);
  if (!owners) return owners.error();
  add_owners(d, *owners);
  return {};
}

Result<void> link_users(Tx& tx, Draft& d, Rel rel, const std::vector<EntityReference>& refs,
                        std::string_view field) {
  auto users = resolve_refs(tx, Kind::user, refs, field);
  if (!users) return users.error();
  add_links(d, rel, *users);
  return {};
}

Result<void> link_fqns(Tx& tx, Draft& d, Kind kind, Rel rel, const std::vector<std::string>& fqns) {
  auto targets = resolve_fqns(tx, kind, fqns);
  if (!targets) return targets.error();
  add_links(d, rel, *targets);
  return {};
}

Result<void> link_owners_and_domains(Tx& tx, Draft& d, const std::vector<EntityReference>& owners,
                                     const std::vector<std::string>& domains) {
  if (auto o = link_owners(tx, d, owners); !o) return o.error();
  return link_fqns(tx, d, Kind::domain, Rel::domain, domains);
}

// An ML model or a search index lives in the live service its request names by FQN
// (docs/SEMANTICS.md §1).
Result<void> place_in_service(Tx& tx, Draft& d, Kind kind, std::string_view service) {
  auto found = tx.live_by_fqn(*service_kind(kind), service);
  if (!found) return found.error();
  place_under(d, std::move(*found));
  return {};
}

Result<void> link_ids(Tx& tx, Draft& d, Kind kind, Rel rel, const std::vector<Uuid>& ids) {
  auto targets = resolve_ids(tx, kind, ids);
  if (!targets) return targets.error();
  add_links(d, rel, *targets);
  return {};
}

// How a create request becomes an entity, one `prepare` per request type: it validates the
// request alone (400), resolves its container (404) and fills in the draft; references are
// resolved after authorization, by the `resolve` callback it leaves.
using Resolver = std::function<Result<void>(Tx&, Draft&)>;

struct Prepared {
  Draft draft;
  Resolver resolve;  // references (after authorization)
};

Result<void> prepare([[maybe_unused]] Tx& tx, [[maybe_unused]] Kind kind, const CreateUser& r,
                     Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<User>();
  set_base(e, r.name, r.display_name, r.description);
  e.email = r.email;
  e.is_admin = r.is_admin.value_or(false);
  d.admin_only = e.is_admin;
  e.is_bot = r.is_bot.value_or(false);
  if (auto v = check_entity_values(d.record); !v) return v.error();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    auto teams = resolve_ids(tx, Kind::team, req.teams);
    if (!teams) return teams.error();
    for (const auto& t : *teams) d.links.push_back({t.id, Rel::member, self});
    return {};
  };
  return {};
}

Result<void> prepare([[maybe_unused]] Tx& tx, [[maybe_unused]] Kind kind, const CreateTeam& r,
                     Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<Team>();
  set_base(e, r.name, r.display_name, r.description);
  auto type = r.team_type.value_or(TeamType::group);
  e.team_type = type;
  e.email = r.email;
  e.is_joinable = r.is_joinable.value_or(true);
  if (auto v = check_entity_values(d.record); !v) return v.error();
  p.resolve = [req = r, type](Tx& tx, Draft& d) -> Result<void> {
    // The rules on the number of parents first: a parent that is missing is no reason to
    // answer 404 to a request they refuse (docs/SEMANTICS.md §14, step 8 before 9).
    if (auto counted = check_team_parent_count(type, req.parents); !counted) return counted.error();
    auto parents = resolve_ids(tx, Kind::team, req.parents);
    if (!parents) return parents.error();
    if (auto rules = check_team_rules(type, *parents, {}); !rules) return rules.error();
    for (const auto& t : *parents) d.links.push_back({t.id, Rel::contains, self});
    if (auto l = link_ids(tx, d, Kind::user, Rel::member, req.users); !l) return l.error();
    if (auto l = link_ids(tx, d, Kind::policy, Rel::policy, req.policies); !l) return l.error();
    return link_owners_and_domains(tx, d, req.owners, req.domains);
  };
  return {};
}

Result<void> prepare([[maybe_unused]] Tx& tx, [[maybe_unused]] Kind kind, const CreatePolicy& r,
                     Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<Policy>();
  set_base(e, r.name, r.display_name, r.description);
  e.rules = r.rules;
  e.enabled = r.enabled.value_or(true);
  if (auto v = check_entity_values(d.record); !v) return v.error();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    if (auto o = link_owners(tx, d, req.owners); !o) return o.error();
    return {};
  };
  return {};
}

Result<void> prepare([[maybe_unused]] Tx& tx, [[maybe_unused]] Kind kind, const CreateService& r,
                     Prepared& p) {
  Draft& d = p.draft;
  auto& e = service_of(d.record);
  set_base(e, r.name, r.display_name, r.description);
  e.service_type = r.service_type;
  e.tags = r.tags;
  if (auto v = check_entity_values(d.record); !v) return v.error();
  e.tags = normalized_tags(e.tags).value();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    return link_owners_and_domains(tx, d, req.owners, req.domains);
  };
  return {};
}

Result<void> prepare(Tx& tx, Kind kind, const CreateMlModel& r, Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<MlModel>();
  set_base(e, r.name, r.display_name, r.description);
  e.algorithm = r.algorithm;
  e.target = r.target;
  e.server = r.server;
  e.ml_features = r.ml_features;
  e.ml_hyper_parameters = r.ml_hyper_parameters;
  e.tags = r.tags;
  e.extension = r.extension;
  if (auto v = check_entity_values(d.record); !v) return v.error();
  e.tags = normalized_tags(e.tags).value();
  if (auto in = place_in_service(tx, d, kind, r.service); !in) return in.error();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    return link_owners_and_domains(tx, d, req.owners, req.domains);
  };
  return {};
}

Result<void> prepare([[maybe_unused]] Tx& tx, [[maybe_unused]] Kind kind, const CreateGlossary& r,
                     Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<Glossary>();
  set_base(e, r.name, r.display_name, r.description);
  e.mutually_exclusive = r.mutually_exclusive.value_or(false);
  e.tags = r.tags;
  if (auto v = check_entity_values(d.record); !v) return v.error();
  e.tags = normalized_tags(e.tags).value();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    if (auto l = link_users(tx, d, Rel::reviews, req.reviewers, "reviewer"); !l) return l.error();
    return link_owners_and_domains(tx, d, req.owners, req.domains);
  };
  return {};
}

Result<void> prepare(Tx& tx, [[maybe_unused]] Kind kind, const CreateGlossaryTerm& r, Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<GlossaryTerm>();
  set_base(e, r.name, r.display_name, r.description);
  e.synonyms = r.synonyms;
  e.mutually_exclusive = r.mutually_exclusive.value_or(false);
  e.tags = r.tags;
  if (auto n = check_entity_name(d.record.value); !n) return n.error();
  if (auto f = fqn::canonical(r.glossary); !f) return f.error();
  if (r.parent)
    if (auto f = fqn::canonical(*r.parent); !f) return f.error();
  if (auto v = check_field_values(d.record.value); !v) return v.error();
  e.tags = normalized_tags(e.tags).value();
  auto glossary = tx.live_by_fqn(Kind::glossary, r.glossary);
  if (!glossary) return glossary.error();
  d.record.glossary = glossary->id;
  if (r.parent) {
    auto parent = tx.live_by_fqn(Kind::glossary_term, *r.parent);
    if (!parent) return parent.error();
    if (parent->glossary != glossary->id)
      return fail(Errc::invalid_value,
                  "Invalid parent " + *r.parent + ": the term belongs to another glossary");
    place_under(d, std::move(*parent));
  } else {
    place_under(d, *glossary);
  }
  auto glossary_reviewers = tx.edges(glossary->id, Rel::reviews, false);
  if (!glossary_reviewers) return glossary_reviewers.error();
  bool reviewed = !glossary_reviewers->empty() || !r.reviewers.empty();
  e.status = reviewed ? TermStatus::draft : TermStatus::approved;
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    if (auto l = link_users(tx, d, Rel::reviews, req.reviewers, "reviewer"); !l) return l.error();
    if (auto o = link_owners(tx, d, req.owners); !o) return o.error();
    if (auto l = link_fqns(tx, d, Kind::glossary_term, Rel::related, req.related_terms); !l)
      return l.error();
    return {};
  };
  return {};
}

Result<void> prepare(Tx& tx, [[maybe_unused]] Kind kind, const CreateDomain& r, Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<Domain>();
  set_base(e, r.name, r.display_name, r.description);
  e.domain_type = r.domain_type;
  if (auto v = check_entity_values(d.record); !v) return v.error();
  if (r.parent) {
    if (auto f = fqn::canonical(*r.parent); !f) return f.error();
    auto parent = tx.live_by_fqn(Kind::domain, *r.parent);
    if (!parent) return parent.error();
    place_under(d, std::move(*parent));
  }
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    // Experts are user names, not FQNs: a name with a dot is one part ("john.doe").
    std::vector<std::string> expert_fqns;
    for (const auto& name : req.experts) expert_fqns.push_back(fqn::quote(name));
    if (auto l = link_fqns(tx, d, Kind::user, Rel::expert, expert_fqns); !l) return l.error();
    if (auto o = link_owners(tx, d, req.owners); !o) return o.error();
    return {};
  };
  return {};
}

Result<void> prepare(Tx& tx, Kind kind, const CreateSearchIndex& r, Prepared& p) {
  Draft& d = p.draft;
  auto& e = d.record.as<SearchIndex>();
  set_base(e, r.name, r.display_name, r.description);
  e.fields = r.fields;
  e.index_type = r.index_type.value_or(IndexType::index);
  e.tags = r.tags;
  e.extension = r.extension;
  e.source_hash = r.source_hash;
  if (auto v = check_entity_values(d.record); !v) return v.error();
  e.tags = normalized_tags(e.tags).value();
  if (auto in = place_in_service(tx, d, kind, r.service); !in) return in.error();
  p.resolve = [req = r](Tx& tx, Draft& d) -> Result<void> {
    return link_owners_and_domains(tx, d, req.owners, req.domains);
  };
  return {};
}

// Reads the create request of the kind's type (`E::create_type`) and prepares it.
Result<Prepared> prepare(Tx& tx, Kind kind, const json::value& body) {
  Prepared p;
  p.draft.record = Record(kind);
  auto r = visit_kind(kind, [&]<class E>(std::type_identity<E>) -> Result<void> {
    auto request = read_request<typename E::create_type>(kind, body, p.draft);
    if (!request) return request.error();
    return prepare(tx, kind, *request, p);
  });
  if (!r) return r.error();
  return p;
}

}  // namespace

Result<Answer> write_new(Tx& tx, const Principal& who, Draft& d, AnswerForm form);

namespace {

// An admin's email (docs/SEMANTICS.md §11): <name>@example.com, with what an email cannot hold
// (whitespace, a second @) made a dot, and no longer than an email may be (cut between UTF-8
// sequences).
std::string admin_email(std::string_view name) {
  constexpr std::string_view domain = "@example.com";
  std::string local(name);
  for (auto& c : local)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '@')
      c = '.';
  std::size_t cut = std::min(local.size(), 127 - domain.size());
  while (cut > 0 && cut < local.size() && (static_cast<unsigned char>(local[cut]) & 0xC0) == 0x80)
    --cut;
  local.resize(cut);
  return local + std::string(domain);
}

}  // namespace

Result<Answer> create(Tx& tx, const Principal& who, Kind kind, const json::value& body,
                      AnswerForm form) {
  // C++ callers hand over values the REST parser never saw: the same docs/SEMANTICS.md §15 limits
  // bind them.
  if (auto l = check_limits(body, catalog::json::max_body_depth,
                            tx.env().options.max_document_bytes, "The create request");
      !l)
    return l.error();
  auto prepared = prepare(tx, kind, body);
  if (!prepared) return prepared.error();
  auto& d = prepared->draft;
  // Owners named in the request decide isOwner() for the new entity; else the container's.
  RecordResource resource(tx, kind, d.parent ? &*d.parent : nullptr, d.owners,
                          "a new " + std::string(type_name(kind)));
  Operation op = Operation::create;
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();
  if (d.admin_only && !who.is_admin)
    return fail(Errc::forbidden, "Only an admin may create an admin user");
  if (auto r = prepared->resolve(tx, d); !r) return r.error();
  return write_new(tx, who, d, form);
}

Result<Answer> write_new(Tx& tx, const Principal& who, Draft& d, AnswerForm form) {
  auto& r = d.record;
  auto fqn_text = fqn::append(d.parent_fqn, r.name());
  if (fqn_text.size() > fqn::max_fqn_bytes)
    return fail(Errc::invalid_fqn, "Invalid fullyQualifiedName: longer than 3072 bytes");
  auto existing = tx.find(r.kind, fqn_text);
  if (!existing) return existing.error();
  if (*existing) return fail(Errc::already_exists, "Entity already exists");

  r.id = random_uuid();
  auto& base = r.base();
  base.id = r.id;
  base.fully_qualified_name = std::move(fqn_text);
  base.version = Version::initial();
  base.updated_at = tx.env().now_ms;
  base.updated_by = who.name;
  base.deleted = false;
  r.store_present();

  // Limits bind what a request produces (docs/SEMANTICS.md §15): the entity's document holds more
  // than the request did (id, FQN, version, stamps). Measured as a patch and an import measure
  // it (its members and braces), so that an import takes back what a create wrote.
  {
    std::string document;
    r.write_stored(document);
    if (document.size() + 2 > tx.env().options.max_document_bytes)
      return fail(Errc::too_large, "The created " + std::string(type_name(r.kind)) +
                                       " is larger than " +
                                       std::to_string(tx.env().options.max_document_bytes) +
                                       " bytes");
  }
  if (auto p = tx.put(r); !p) return p.error();
  if (auto p = tx.put_name(r); !p) return p.error();
  if (auto p = tx.index(r, true); !p) return p.error();
  if (r.container)
    if (auto l = tx.link(*r.container, Rel::contains, r.id); !l) return l.error();
  for (auto& link : d.links) {
    auto from = link.from == self ? r.id : link.from;
    auto to = link.to == self ? r.id : link.to;
    if (auto l = tx.link(from, link.rel, to); !l) return l.error();
  }
  auto event = event_text(EventType::entity_created, r, std::nullopt, who, tx.env().now_ms);
  auto answer = snapshot_answer(tx, r, form);  // the last use of r
  if (!answer) return answer.error();
  if (auto e = tx.append_event(std::move(event)); !e) return e.error();
  return answer;
}

Result<bool> ensure_admin(Tx& tx, std::string_view name) {
  auto canonical = fqn::validate_name(name, "admin name");
  if (!canonical) return canonical.error();
  auto existing = tx.find(Kind::user, fqn::quote(name));
  if (!existing) return existing.error();
  Principal system{Uuid{}, std::string(name), true};
  bool restored = false;
  if (*existing && (*existing)->deleted()) {
    // docs/SEMANTICS.md §11: a configured admin principal is one that can act, and a
    // soft-deleted user cannot authenticate: it is restored, as an admin's restore would
    // (its own version and event), then made admin if it is not.
    const Uuid id = (*existing)->id;
    if (auto r = restore(tx, system, Kind::user, id, AnswerForm::none); !r) return r.error();
    restored = true;
    existing = tx.find(Kind::user, fqn::quote(name));
    if (!existing) return existing.error();
    if (!*existing) return fail(Errc::storage, "restored admin user " + std::string(name) + " is missing");
  }
  if (*existing) {
    auto& r = **existing;
    auto& user = r.as<User>();
    if (user.is_admin) return restored;
    // docs/SEMANTICS.md §11: an existing admin principal is made admin: a change like any other, so
    // it gets its own version, history snapshot and event (docs/SEMANTICS.md §3, §13).
    user.is_admin = true;
    r.keep(wire::is_admin());
    ChangeDescription change;
    change.fields_updated.push_back(FieldChange{std::string(wire::is_admin()), json::value(false), json::value(true)});
    auto w = write_version(tx, system, r, r.deleted(), std::move(change),
                           EventType::entity_updated, false, AnswerForm::none);
    if (!w) return w.error();
    return restored;
  }
  Draft d;
  d.record = Record(Kind::user);
  auto& user = d.record.as<User>();
  user.name = name;
  user.email = admin_email(name);
  user.is_admin = true;
  user.is_bot = false;
  auto made = write_new(tx, system, d, AnswerForm::none);
  if (!made) return made.error();
  return false;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_CREATE_IPP
