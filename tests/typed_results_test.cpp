// Typed change events and histories: Store::events and subscriptions give
// ChangeEvent structs whose JSON form is the stored event that events_json and GET /v1/events
// answer, and Store::history<E> decodes every version that history_json gives as text.
#include "support.hpp"

#include <catalog/change_event.hpp>
#include <catalog/detail/engine/keys.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

using namespace catalog;
using test::parse;
using test::uuid_of;
namespace bj = boost::json;

namespace {

/// A store where every eventType has happened: creates, merge and JSON patches (members added,
/// changed, removed and set to null, tags, references, major steps), follow, vote, unfollow, a
/// soft delete of a tree, its restore, and a hard delete.
struct Busy {
  Principal admin;
  Principal alice;
  bj::object glossary, term, child, model;
};

Busy build(Store& s) {
  Busy b;
  b.admin = s.principal("admin").value();
  auto alice =
      s.create_json(b.admin, Kind::user, parse(R"({"name":"alice","email":"alice@example.com"})"))
          .value();
  b.alice = s.principal("alice").value();
  b.glossary = s.create_json(b.admin, Kind::glossary,
                             parse(R"({"name":"G","description":"g \"quoted\" été"})"))
                   .value();
  b.term = s.create_json(b.admin, Kind::glossary_term,
                         parse(R"({"name":"T","glossary":"G","description":"t"})"))
               .value();
  b.child = s.create_json(b.admin, Kind::glossary_term,
                          parse(R"({"name":"C","glossary":"G","parent":"G.T","description":"c"})"))
                .value();
  s.create_json(b.admin, Kind::mlmodel_service,
                parse(R"({"name":"mlflow","serviceType":"Mlflow"})"))
      .value();
  b.model = s.create_json(b.admin, Kind::mlmodel,
                          parse(R"({"name":"churn","service":"mlflow","algorithm":"xgboost"})"))
                .value();
  const auto g = uuid_of(b.glossary), t = uuid_of(b.term), m = uuid_of(b.model);
  // Added, updated, removed members; tags gained and lost; owners (references).
  s.patch_json(
       b.admin, Kind::glossary, g,
       parse(R"({"displayName":"Gee","description":"second","tags":[{"tagFQN":"PII.Sensitive"}]})"))
      .value();
  s.patch_json(b.admin, Kind::glossary, g,
               parse(R"([{"op":"remove","path":"/displayName"},
                         {"op":"replace","path":"/tags","value":[{"tagFQN":"Tier.Tier1"}]},
                         {"op":"add","path":"/owners","value":[{"id":")" +
                     test::id_of(alice) + R"(","type":"user"}]}])"))
      .value();
  s.patch_json(b.admin, Kind::mlmodel, m, parse(R"({"algorithm":"lightgbm"})")).value();  // major
  // A JSON Patch that sets a member to null removes it (a member is never null).
  s.patch_json(b.admin, Kind::mlmodel, m, parse(R"({"target":"churned"})")).value();
  s.patch_json(b.admin, Kind::mlmodel, m, parse(R"([{"op":"add","path":"/target","value":null}])"))
      .value();
  s.follow_json(b.alice, Kind::glossary_term, t, b.alice.id).value();
  s.vote_json(b.alice, Kind::glossary_term, t, VoteType::voted_up).value();
  s.vote_json(b.alice, Kind::glossary_term, t, VoteType::voted_down).value();
  s.unfollow_json(b.alice, Kind::glossary_term, t, b.alice.id).value();
  DeleteOptions recursive;
  recursive.recursive = true;
  s.remove_json(b.admin, Kind::glossary, g, recursive).value();
  s.restore_json(b.admin, Kind::glossary, g).value();
  DeleteOptions hard;
  hard.hard_delete = true;
  s.remove_json(b.admin, Kind::mlmodel, m, hard).value();
  return b;
}

/// `o` without its changeDescription.
bj::object without_change(bj::object o) {
  o.erase("changeDescription");
  return o;
}

}  // namespace

TEST_CASE("a kind and an event type are named on the wire as in events", "[events][typed]") {
  for (auto k : all_kinds) {
    CHECK(detail::enum_name(k) == type_name(k));
    CHECK(detail::enum_from_name<Kind>(type_name(k)) == k);
  }
  CHECK_FALSE(detail::enum_from_name<Kind>("table"));
  CHECK(detail::enum_name(EventType::entity_fields_changed) == "entityFieldsChanged");
  CHECK(detail::enum_from_name<EventType>("entityRestored") == EventType::entity_restored);
}

TEMPLATE_TEST_CASE("typed change events are the stored events, for every eventType",
                   "[events][typed]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  std::vector<ChangeEvent> heard;
  s.subscribe([&](const ChangeEvent& e) { heard.push_back(e); });
  auto b = build(s);

  auto typed = s.events(b.admin, 0, 1000).value();
  auto stored = s.events_json(b.admin, 0, 1000).value();
  REQUIRE(typed.data.size() == stored.data.size());
  CHECK(typed.total == stored.total);
  CHECK(typed.total == static_cast<std::int64_t>(typed.data.size()));
  std::set<EventType> types;
  for (std::size_t i = 0; i < typed.data.size(); ++i) {
    const auto& e = typed.data[i];
    const auto& json = stored.data[i];
    INFO(catalog::json::serialize(json));
    types.insert(e.event_type);
    CHECK(e.offset == i + 1);
    CHECK(detail::enum_name(e.event_type) == json.at("eventType").as_string());
    CHECK(type_name(e.entity_type) == json.at("entityType").as_string());
    CHECK(to_string(e.entity_id) == json.at("entityId").as_string());
    CHECK(e.user_name == json.at("userName").as_string());
    CHECK(e.timestamp == json.at("timestamp").as_int64());
    CHECK(e.change_description.has_value() == json.contains("changeDescription"));
    // Equal as JSON values, and byte for byte: members in the same order with the same shapes.
    const auto back = to_json(e);
    CHECK(back == bj::value(json));
    if (e.event_type != EventType::entity_fields_changed) {
      CHECK(catalog::json::serialize(back) == catalog::json::serialize(json));
    } else {
      // Follows and votes store their change description with previousVersion first (what
      // /v1/events has always answered); the struct's order puts it last. All else is the same.
      REQUIRE(e.change_description);
      CHECK(e.current_version == e.previous_version);
      CHECK(e.change_description->previous_version == e.current_version);
      CHECK(catalog::json::serialize(without_change(back.as_object())) ==
            catalog::json::serialize(without_change(json)));
      CHECK(to_json(*e.change_description) == json.at("changeDescription"));
    }
    // Created events repeat the current version as the previous one and carry no change.
    if (e.event_type == EventType::entity_created) {
      CHECK(e.previous_version == e.current_version);
      CHECK_FALSE(e.change_description);
    }
    if (e.event_type == EventType::entity_updated || e.event_type == EventType::entity_restored ||
        e.event_type == EventType::entity_soft_deleted) {
      REQUIRE(e.change_description);
      CHECK(e.change_description->previous_version == e.previous_version);
      CHECK(e.previous_version < e.current_version);
    }
  }
  CHECK(types == std::set<EventType>{EventType::entity_created, EventType::entity_updated,
                                     EventType::entity_fields_changed,
                                     EventType::entity_soft_deleted, EventType::entity_deleted,
                                     EventType::entity_restored});

  // The hard delete: the model's major version steps (algorithm, target) and its last change.
  const auto& hard = typed.data.back();
  CHECK(hard.event_type == EventType::entity_deleted);
  CHECK(hard.entity_type == Kind::mlmodel);
  CHECK(hard.entity_fully_qualified_name == "mlflow.churn");
  CHECK(hard.current_version.to_string() == "3.1");
  REQUIRE(hard.change_description);  // the model's last, where a null removed target
  CHECK(hard.change_description->fields_added.empty());
  REQUIRE(hard.change_description->fields_deleted.size() == 1);
  CHECK(hard.change_description->fields_deleted[0].name == "target");
  REQUIRE(hard.change_description->fields_deleted[0].old_value);
  CHECK(*hard.change_description->fields_deleted[0].old_value == "churned");
  CHECK_FALSE(hard.change_description->fields_deleted[0].new_value);

  // Subscribers heard the same events as the log has (after the admin's creation at open).
  REQUIRE(heard.size() <= typed.data.size());
  REQUIRE_FALSE(heard.empty());
  const auto skipped = typed.data.size() - heard.size();
  for (std::size_t i = 0; i < heard.size(); ++i)
    CHECK(to_json(heard[i]) == to_json(typed.data[skipped + i]));

  // Pages: the same offsets, `after` and total as the JSON pages.
  for (std::uint64_t after : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{10}}) {
    auto page = s.events(b.admin, after, 4).value();
    auto json_page = s.events_json(b.admin, after, 4).value();
    CHECK(page.after == json_page.after);
    CHECK(page.total == json_page.total);
    REQUIRE(page.data.size() == json_page.data.size());
    for (std::size_t i = 0; i < page.data.size(); ++i)
      CHECK(to_json(page.data[i]) == bj::value(json_page.data[i]));
  }
  // Refusals are the same on both.
  CHECK(s.events(b.alice, 0, 10).error().kind() == ErrorKind::forbidden);
  CHECK(s.events_json(b.alice, 0, 10).error().kind() == ErrorKind::forbidden);
  CHECK(s.events(b.admin, 0, -1).error().code() == Errc::invalid_parameter);
}

TEST_CASE("a stored event that does not decode is a storage error of the typed read only",
          "[events][typed]") {
  test::MemoryFixture f;
  auto& s = f.store;
  auto admin = s.principal("admin").value();
  auto page = s.events_json(admin, 0, 10).value();
  REQUIRE(page.data.size() == 1);
  // The admin's creation, rewritten with an event type nobody knows.
  auto bad = page.data[0];
  bad["eventType"] = "entityRenamed";
  auto txn = s.backend().begin(storage::Mode::read_write).value();
  std::string key = "E";
  {
    // Find the event's key: the only key whose value is the stored event.
    auto cursor = txn->scan({}, storage::Direction::forward).value();
    for (; cursor->valid(); cursor->next().value()) {
      auto v = catalog::json::parse(cursor->value());
      if (v && v->is_object() && v->as_object().contains("eventType")) {
        key = std::string(cursor->key());
        break;
      }
    }
  }
  REQUIRE(key != "E");
  txn->put(key, catalog::json::serialize(bad)).value();
  txn->commit().value();
  CHECK(s.events_json(admin, 0, 10).value().data[0].at("eventType") == "entityRenamed");
  auto typed = s.events(admin, 0, 10);
  REQUIRE_FALSE(typed.has_value());
  CHECK(typed.error().code() == Errc::storage);
  CHECK_THAT(typed.error().message(), Catch::Contains("eventType"));
}

TEMPLATE_TEST_CASE("a typed history decodes every version, newest first", "[history][typed]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto b = build(s);
  const auto g = uuid_of(b.glossary);
  auto typed = s.template history<Glossary>(b.admin, g).value();
  auto text = s.history_json(b.admin, Kind::glossary, g).value();
  CHECK(typed.entity_type == "glossary");
  CHECK(typed.entity_type == text.entity_type);
  REQUIRE(typed.versions.size() == text.versions.size());
  REQUIRE(typed.versions.size() == 5);  // create, two patches, soft delete, restore
  std::vector<std::string> versions;
  for (std::size_t i = 0; i < typed.versions.size(); ++i) {
    const auto& v = typed.versions[i];
    INFO(text.versions[i]);
    versions.push_back(v.version.to_string());
    CHECK(to_json(v) == parse(text.versions[i]));
    CHECK(v.id == g);
  }
  CHECK(versions == std::vector<std::string>{"0.5", "0.4", "0.3", "0.2", "0.1"});
  CHECK(typed.versions[4].description == "g \"quoted\" été");
  CHECK_FALSE(typed.versions[4].change_description);
  CHECK(typed.versions[3].display_name == "Gee");
  CHECK(typed.versions[2].display_name == std::nullopt);
  REQUIRE(typed.versions[2].change_description);
  CHECK(typed.versions[2].change_description->previous_version.to_string() == "0.2");
  CHECK(typed.versions[1].deleted);
  CHECK_FALSE(typed.versions[0].deleted);
  REQUIRE(typed.versions[0].owners.size() == 1);
  CHECK(typed.versions[0].owners[0].name == "alice");

  // Terms too, with their relationships; and the refusals of history_json.
  auto term = s.template history<GlossaryTerm>(b.admin, uuid_of(b.child)).value();
  CHECK(term.entity_type == "glossaryTerm");
  REQUIRE(term.versions.size() == 3);
  CHECK(term.versions[0].fully_qualified_name == "G.T.C");
  auto wrong = s.template history<Team>(b.admin, g);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().kind() == ErrorKind::not_found);
  auto gone = s.template history<MlModel>(b.admin, uuid_of(b.model));
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().kind() == ErrorKind::not_found);
}

namespace {

/// The typed writes (create, patch, update, remove, restore) each answer with the struct the
/// engine builds in the walk that renders the history snapshot, or without JSON at all: every
/// answer must equal from_json of what the JSON surface shows of the entity right after.
void check_typed_writes(Store& s) {
  const auto admin = s.principal("admin").value();
  // `is_snapshot`: the answer is that of a create, patch or update, whose history snapshot is
  // the entity as it is now (a delete or restore of a tree writes the entity's snapshot before
  // its descendants change).
  auto same = [&](const auto& typed, bool is_snapshot = true) {
    using E = std::decay_t<decltype(typed)>;
    GetOptions all;
    all.fields = {"*"};
    all.include = Include::all;
    auto json = s.get_json(admin, E::kind, EntityKey::by_id(typed.id), all).value();
    auto converted = from_json<E>(json);
    REQUIRE(converted.has_value());
    INFO(catalog::json::serialize(json));
    CHECK(catalog::json::serialize(to_json(typed)) ==
          catalog::json::serialize(to_json(*converted)));
    // The history snapshot the write stored (rendered in the same walk as the struct) is that
    // same JSON, byte for byte.
    if (!is_snapshot) return;
    auto txn = s.backend().begin(storage::Mode::read_only).value();
    auto snapshot = txn->get(engine::keys::history(typed.id, typed.version)).value();
    REQUIRE(snapshot.has_value());
    CHECK(*snapshot == catalog::json::serialize(json));
  };
  CreateUser u;
  u.name = "alice";
  u.email = "alice@example.com";
  auto alice = s.create<User>(admin, u).value();
  same(alice);
  u.name = "dana";
  u.email = "dana@example.com";
  u.display_name = "Dana \"D\" \xc3\x96";
  auto dana = s.create<User>(admin, u).value();
  same(dana);
  CreateTeam t;
  t.name = "data";
  t.team_type = TeamType::group;
  t.users = {alice.id, dana.id};
  same(s.create<Team>(admin, t).value());
  CreateDomain d;
  d.name = "Sales";
  d.description = "sales";
  d.experts = {"dana"};
  d.owners = {EntityReference{alice.id, "user"}};
  same(s.create<Domain>(admin, d).value());

  // A glossary and terms: containers, a parent, reviewers, owners and related terms.
  CreateGlossary g;
  g.name = "G";
  g.description = "g";
  g.reviewers = {EntityReference{dana.id, "user"}};
  g.tags = {TagLabel{"PII.Sensitive"}};
  g.domains = {"Sales"};
  auto glossary = s.create<Glossary>(admin, g).value();
  same(glossary);
  CreateGlossaryTerm ct;
  ct.glossary = "G";
  ct.name = "T";
  ct.description = "t";
  ct.owners = {EntityReference{alice.id, "user"}};
  auto term = s.create<GlossaryTerm>(admin, ct).value();
  same(term);
  ct.parent = "G.T";
  ct.name = "C";
  ct.related_terms = {"G.T"};
  ct.reviewers = {EntityReference{dana.id, "user"}, EntityReference{alice.id, "user"}};
  auto child = s.create<GlossaryTerm>(admin, ct).value();
  same(child);
  for (const auto* user : {&alice, &dana})
    s.follow_json(admin, Kind::glossary_term, term.id, user->id).value();
  s.vote_json(admin, Kind::glossary_term, term.id, VoteType::voted_up).value();

  // Patches: own fields only (the answer copies the relationships rendered before the
  // change), a relationship, a major step, and one that changes nothing (no new version).
  same(s.patch<GlossaryTerm>(admin, term.id, parse(R"({"description":"t2"})")).value());
  same(s.patch<GlossaryTerm>(admin, term.id,
                             parse(R"({"owners":[{"id":")" + to_string(dana.id) +
                                   R"(","type":"user"}],"displayName":"Tee"})"))
           .value());
  auto unchanged = s.patch<GlossaryTerm>(admin, term.id, parse(R"({"description":"t2"})")).value();
  CHECK(unchanged.version.to_string() == "0.3");
  same(unchanged);
  same(s.update<Glossary>(admin, glossary.id, [](Glossary& e) { e.display_name = "Gee"; }).value());
  same(s.update<GlossaryTerm>(admin, child.id, [](GlossaryTerm& e) {
          e.synonyms = {"kid"};
        }).value());

  // A container whose member the entity copies (a search index's serviceType).
  CreateService svc;
  svc.name = "es";
  svc.service_type = "ElasticSearch";
  same(s.create<SearchService>(admin, svc).value());
  CreateSearchIndex ci;
  ci.name = "orders";
  ci.service = "es";
  ci.fields = {SearchIndexField{"id", "KEYWORD"}};
  auto index = s.create<SearchIndex>(admin, ci).value();
  same(index);
  CHECK(index.service_type == "ElasticSearch");
  same(s.patch<SearchIndex>(admin, index.id, parse(R"({"description":"orders"})")).value());
  // Members kept as written (a nested shape in another order, with an explicit null inside): a
  // typed write's snapshot, written from the record, keeps their bytes. A member set to null is
  // removed (a member is never null).
  PatchOptions as_json_patch;
  as_json_patch.format = PatchFormat::json_patch;
  auto kept = s.patch_json(admin, Kind::search_index, index.id,
                           parse(R"([{"op":"replace","path":"/fields","value":)"
                                 R"([{"dataType":"KEYWORD","name":"id","description":null}]},)"
                                 R"({"op":"add","path":"/displayName","value":null}])"),
                           as_json_patch)
                  .value();
  CHECK(catalog::json::serialize(kept.at("fields")) ==
        R"([{"dataType":"KEYWORD","name":"id","description":null}])");
  CHECK_FALSE(kept.contains("displayName"));
  same(s.patch<SearchIndex>(admin, index.id, parse(R"({"description":"orders 2"})")).value());

  // Soft delete of a tree (and again, which changes nothing), restore, hard delete.
  DeleteOptions recursive;
  recursive.recursive = true;
  auto removed = s.remove<GlossaryTerm>(admin, term.id, recursive).value();
  REQUIRE(removed);
  CHECK(removed->deleted);
  same(*removed, false);
  same(*s.remove<GlossaryTerm>(admin, term.id, recursive).value(), false);
  auto restored = s.restore<GlossaryTerm>(admin, term.id).value();
  CHECK_FALSE(restored.deleted);
  same(restored, false);
  DeleteOptions hard;
  hard.hard_delete = true;
  CHECK_FALSE(s.remove<SearchIndex>(admin, index.id, hard).value());

  // Refusals are the JSON surface's errors.
  auto missing = random_uuid();
  CHECK(s.patch<GlossaryTerm>(admin, missing, parse(R"({"description":"x"})")).error().code() ==
        s.patch_json(admin, Kind::glossary_term, missing, parse(R"({"description":"x"})"))
            .error()
            .code());
  CHECK(s.restore<SearchIndex>(admin, index.id).error().code() ==
        s.restore_json(admin, Kind::search_index, index.id).error().code());
  CHECK(s.create<Glossary>(admin, g).error().code() == Errc::already_exists);

  // Typed pages (each struct rendered in place and moved into a Page<E>) hold what the JSON
  // pages hold, in the same order, with every field and with none.
  auto same_pages = [&]<class E>(std::type_identity<E>) {
    for (std::vector<std::string> fields : {std::vector<std::string>{}, {"*"}}) {
      ListOptions lo;
      lo.include = Include::all;
      lo.fields = fields;
      auto typed = s.list<E>(admin, lo).value();
      auto json = s.list_json(admin, E::kind, lo).value();
      REQUIRE(typed.data.size() == json.data.size());
      CHECK(typed.total == json.total);
      for (std::size_t i = 0; i < typed.data.size(); ++i)
        CHECK(catalog::json::serialize(to_json(typed.data[i])) ==
              catalog::json::serialize(to_json(from_json<E>(json.data[i]).value())));
    }
  };
  same_pages(std::type_identity<User>{});
  same_pages(std::type_identity<Team>{});
  same_pages(std::type_identity<Domain>{});
  same_pages(std::type_identity<Glossary>{});
  same_pages(std::type_identity<GlossaryTerm>{});
  same_pages(std::type_identity<SearchService>{});
}

}  // namespace

TEMPLATE_TEST_CASE("typed writes answer what the JSON surface shows", "[typed][lifecycle]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  check_typed_writes(f.store);
}

TEST_CASE("typed writes answer what the JSON surface shows, with a base URL", "[typed]") {
  auto options = test::test_options();
  options.base_url = "http://catalog.test";
  auto s = Store::in_memory(options).value();
  check_typed_writes(s);
}
