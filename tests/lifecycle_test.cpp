// Delete (docs/SEMANTICS.md §6), restore (docs/SEMANTICS.md §7), patch (docs/SEMANTICS.md §9), history (docs/SEMANTICS.md §3) and change events (docs/SEMANTICS.md §13), on both
// backends.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cctype>
#include <set>
#include <thread>
#include <tuple>

using namespace catalog;
using test::id_of;
using test::parse;
using test::uuid_of;
using test::version_of;
namespace bj = boost::json;

namespace {

DeleteOptions opts(bool hard, bool recursive, std::optional<Version> expected = {}) {
  DeleteOptions o;
  o.hard_delete = hard;
  o.recursive = recursive;
  o.expected_version = expected;
  return o;
}

struct Fixture {
  Principal admin;
  bj::object alice, team, glossary, a, a1, a1x, b, domain;
};

// Glossary G with terms A (children A1 (child A1x)) and B: three levels.
Fixture build(Store& s) {
  Fixture f;
  f.admin = s.principal("admin").value();
  f.alice =
      s.create_json(f.admin, Kind::user, parse(R"({"name":"alice","email":"alice@example.com"})"))
          .value();
  f.team =
      s.create_json(f.admin, Kind::team, parse(R"({"name":"data","description":"d"})")).value();
  f.glossary = s.create_json(f.admin, Kind::glossary,
                             parse(R"({"name":"G","description":"g","owners":[{"id":")" +
                                   id_of(f.alice) + R"(","type":"user"}]})"))
                   .value();
  f.a = s.create_json(f.admin, Kind::glossary_term,
                      parse(R"({"glossary":"G","name":"A","description":"a"})"))
            .value();
  f.a1 = s.create_json(f.admin, Kind::glossary_term,
                       parse(R"({"glossary":"G","parent":"G.A","name":"A1","description":"a"})"))
             .value();
  f.a1x =
      s.create_json(f.admin, Kind::glossary_term,
                    parse(R"({"glossary":"G","parent":"G.A.A1","name":"A1x","description":"a"})"))
          .value();
  f.b = s.create_json(f.admin, Kind::glossary_term,
                      parse(R"({"glossary":"G","name":"B","description":"b"})"))
            .value();
  f.domain = s.create_json(f.admin, Kind::domain,
                           parse(R"({"name":"Sales","domainType":"Aggregate","description":"d"})"))
                 .value();
  return f;
}

bj::object get_all(Store& s, const Principal& p, Kind k, const bj::object& e) {
  return s.get_json(p, k, uuid_of(e), {{}, Include::all}).value();
}

std::uint64_t event_count(Store& s, const Principal& admin) {
  return static_cast<std::uint64_t>(s.events(admin, 0, 0).value().total);
}

}  // namespace

TEMPLATE_TEST_CASE("soft delete, restore, hard delete: the seed's state table", "[lifecycle]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);

  auto deleted = s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  REQUIRE(deleted);
  CHECK(deleted->at("deleted") == true);
  CHECK(version_of(*deleted) == "0.2");
  auto& cd = deleted->at("changeDescription").as_object();
  CHECK(cd.at("fieldsUpdated").at(0).at("name") == "deleted");
  CHECK(cd.at("fieldsUpdated").at(0).at("oldValue") == false);
  CHECK(cd.at("fieldsUpdated").at(0).at("newValue") == true);
  CHECK(catalog::json::serialize(cd.at("previousVersion")) == "0.1");
  // Not found by default, found with include=deleted, name stays reserved.
  CHECK(s.get_json(f.admin, Kind::glossary_term, uuid_of(f.b)).error().kind() ==
        ErrorKind::not_found);
  CHECK(s.get_json(f.admin, Kind::glossary_term, EntityKey::by_fqn("G.B"), {{}, Include::deleted}));
  CHECK(s.create_json(f.admin, Kind::glossary_term,
                      parse(R"({"glossary":"G","name":"B","description":"b"})"))
            .error()
            .kind() == ErrorKind::conflict);
  // Soft-deleting again changes nothing.
  auto dump = test::dump(s);
  auto again = s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  CHECK(version_of(*again) == "0.2");
  CHECK(test::dump(s) == dump);

  auto restored = s.restore_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  CHECK(restored.at("deleted") == false);
  CHECK(version_of(restored) == "0.3");
  CHECK(restored.at("changeDescription").at("fieldsUpdated").at(0).at("oldValue") == true);
  // Restore is idempotent: no new version.
  dump = test::dump(s);
  CHECK(version_of(s.restore_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value()) == "0.3");
  CHECK(test::dump(s) == dump);

  // Hard delete from active and from soft-deleted: gone, history too.
  CHECK_FALSE(
      s.remove_json(f.admin, Kind::glossary_term, EntityKey::by_fqn("G.B"), opts(true, false))
          .value());
  CHECK(s.get_json(f.admin, Kind::glossary_term, uuid_of(f.b), {{}, Include::all}).error().kind() ==
        ErrorKind::not_found);
  CHECK(s.history_json(f.admin, Kind::glossary_term, uuid_of(f.b)).error().kind() ==
        ErrorKind::not_found);
  CHECK(s.restore_json(f.admin, Kind::glossary_term, uuid_of(f.b)).error().kind() ==
        ErrorKind::not_found);
  // The name is free again.
  CHECK(s.create_json(f.admin, Kind::glossary_term,
                      parse(R"({"glossary":"G","name":"B","description":"b"})")));
  auto d = s.remove_json(f.admin, Kind::domain, uuid_of(f.domain)).value();
  CHECK_FALSE(s.remove_json(f.admin, Kind::domain, uuid_of(f.domain), opts(true, false)).value());
  (void)d;
}

TEMPLATE_TEST_CASE("recursive delete and restore bring back exactly what the delete took",
                   "[lifecycle]", CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  // A1x is deleted on its own first; then the glossary recursively.
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.a1x)).value();
  auto a1x_version = version_of(get_all(s, f.admin, Kind::glossary_term, f.a1x));
  auto events_before = event_count(s, f.admin);

  auto not_empty = s.remove_json(f.admin, Kind::glossary, uuid_of(f.glossary));
  REQUIRE_FALSE(not_empty.has_value());
  CHECK(not_empty.error().kind() == ErrorKind::bad_request);
  CHECK(not_empty.error().message() == "glossary is not empty");

  s.remove_json(f.admin, Kind::glossary, EntityKey::by_fqn("G"), opts(false, true)).value();
  // G, A, A1, B: four events, the glossary first.
  auto events = s.events(f.admin, events_before, 100).value();
  REQUIRE(events.data.size() == 4);
  CHECK(events.data[0].entity_type == Kind::glossary);
  for (auto& e : events.data) CHECK(e.event_type == EventType::entity_soft_deleted);
  for (auto* t : {&f.a, &f.a1, &f.b}) {
    auto got = get_all(s, f.admin, Kind::glossary_term, *t);
    CHECK(got.at("deleted") == true);
    CHECK(version_of(got) == "0.2");
  }
  CHECK(version_of(get_all(s, f.admin, Kind::glossary_term, f.a1x)) == a1x_version);

  // A term under the deleted glossary can't be restored first.
  auto early = s.restore_json(f.admin, Kind::glossary_term, uuid_of(f.a));
  REQUIRE_FALSE(early);
  CHECK(early.error().kind() == ErrorKind::bad_request);
  CHECK_THAT(early.error().message(), Catch::Contains("restore glossary G first"));

  s.restore_json(f.admin, Kind::glossary, uuid_of(f.glossary)).value();
  for (auto* t : {&f.a, &f.a1, &f.b}) {
    auto got = get_all(s, f.admin, Kind::glossary_term, *t);
    CHECK(got.at("deleted") == false);
    CHECK(version_of(got) == "0.3");
  }
  auto stays = get_all(s, f.admin, Kind::glossary_term, f.a1x);
  CHECK(stays.at("deleted") == true);
  CHECK(version_of(stays) == a1x_version);
}

TEMPLATE_TEST_CASE("teams: recursive delete takes child teams; restore needs live parents",
                   "[lifecycle]", CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto org =
      s.create_json(f.admin, Kind::team, parse(R"({"name":"acme","teamType":"Organization"})"))
          .value();
  auto dept = s.create_json(f.admin, Kind::team,
                            parse(R"({"name":"eng","teamType":"Department","parents":[")" +
                                  id_of(org) + R"("]})"))
                  .value();
  CHECK(s.remove_json(f.admin, Kind::team, uuid_of(org)).error().code() == Errc::not_empty);
  s.remove_json(f.admin, Kind::team, uuid_of(org), opts(false, true)).value();
  CHECK(get_all(s, f.admin, Kind::team, dept).at("deleted") == true);
  auto early = s.restore_json(f.admin, Kind::team, uuid_of(dept));
  CHECK(early.error().code() == Errc::container_deleted);
  CHECK_THAT(early.error().message(), Catch::Contains("restore team acme first"));
  s.restore_json(f.admin, Kind::team, uuid_of(org)).value();
  CHECK(get_all(s, f.admin, Kind::team, dept).at("deleted") == false);
}

TEMPLATE_TEST_CASE("hard delete removes the subtree and every edge both ways", "[lifecycle]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto owns = [&] {
    return s.get_json(f.admin, Kind::user, uuid_of(f.alice), {{"owns"}})
        .value()
        .at("owns")
        .as_array()
        .size();
  };
  CHECK(owns() == 1);
  auto not_empty = s.remove_json(f.admin, Kind::glossary, uuid_of(f.glossary), opts(true, false));
  CHECK(not_empty.error().code() == Errc::not_empty);
  // Even soft-deleted children count for a hard delete.
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.a), opts(false, true)).value();
  CHECK(s.remove_json(f.admin, Kind::glossary, uuid_of(f.glossary), opts(true, false))
            .error()
            .code() == Errc::not_empty);
  auto before = event_count(s, f.admin);
  CHECK_FALSE(
      s.remove_json(f.admin, Kind::glossary, uuid_of(f.glossary), opts(true, true)).value());
  CHECK(event_count(s, f.admin) == before + 5);
  CHECK(owns() == 0);
  for (auto* t : {&f.a, &f.a1, &f.a1x, &f.b})
    CHECK(
        s.get_json(f.admin, Kind::glossary_term, uuid_of(*t), {{}, Include::all}).error().kind() ==
        ErrorKind::not_found);
  // Only the users, team, domain and their indexes remain: no G/term keys anywhere.
  auto dump = test::dump(s);
  for (auto* e : {&f.glossary, &f.a, &f.a1, &f.a1x, &f.b}) {
    auto id = uuid_of(*e);
    CHECK(dump.find(std::string(reinterpret_cast<const char*>(id.data), 16)) == std::string::npos);
  }
  // Hard-deleting a user removes ownership edges from the entity's side.
  auto g2 = s.create_json(f.admin, Kind::glossary,
                          parse(R"({"name":"G2","description":"g","owners":[{"id":")" +
                                id_of(f.alice) + R"(","type":"user"}]})"))
                .value();
  CHECK_FALSE(s.remove_json(f.admin, Kind::user, uuid_of(f.alice), opts(true, false)).value());
  CHECK(s.get_json(f.admin, Kind::glossary, uuid_of(g2), {{"owners"}})
            .value()
            .at("owners")
            .as_array()
            .empty());
}

TEMPLATE_TEST_CASE("delete with an expected version", "[lifecycle]", CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto dump = test::dump(s);
  auto r = s.remove_json(f.admin, Kind::domain, uuid_of(f.domain),
                         opts(false, false, Version::parse("0.2").value()));
  CHECK(r.error().kind() == ErrorKind::conflict);
  CHECK(test::dump(s) == dump);
  CHECK(s.remove_json(f.admin, Kind::domain, uuid_of(f.domain),
                      opts(false, false, Version::parse("0.1").value()))
            .has_value());
  CHECK(s.remove_json(f.admin, Kind::domain, uuid_of(f.glossary)).error().kind() ==
        ErrorKind::not_found);
}

TEMPLATE_TEST_CASE("patch: merge patch and JSON Patch, versions and change descriptions", "[patch]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto p = s.patch_json(f.admin, Kind::domain, EntityKey::by_fqn("Sales"),
                        parse(R"({"description":"new","displayName":"Sales!"})"))
               .value();
  CHECK(version_of(p) == "0.2");
  CHECK(p.at("description") == "new");
  auto& cd = p.at("changeDescription").as_object();
  CHECK(cd.at("fieldsAdded").at(0).at("name") == "displayName");
  CHECK(cd.at("fieldsAdded").at(0).at("newValue") == "Sales!");
  CHECK(cd.at("fieldsUpdated").at(0).at("name") == "description");
  CHECK(cd.at("fieldsUpdated").at(0).at("oldValue") == "d");
  // A patch that changes nothing makes no version (a client may send back what it read).
  auto dump = test::dump(s);
  auto same = s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), p).value();
  CHECK(version_of(same) == "0.2");
  CHECK(test::dump(s) == dump);
  // JSON Patch on a team, owners and users by reference, the seed's `domain` field.
  auto alice = R"({"id":")" + id_of(f.alice) + R"(","type":"user"})";
  auto t =
      s.patch_json(
           f.admin, Kind::team, uuid_of(f.team),
           parse(
               R"([{"op":"replace","path":"/description","value":"x"},{"op":"add","path":"/users/-","value":)" +
               alice + "}]"))
          .value();
  CHECK(version_of(t) == "0.2");
  CHECK(t.at("users").at(0).at("name") == "alice");
  CHECK(t.at("changeDescription").at("fieldsAdded").at(0).at("name") == "users");
  auto alice_teams = s.get_json(f.admin, Kind::user, uuid_of(f.alice), {{"teams"}}).value();
  CHECK(alice_teams.at("teams").at(0).at("name") == "data");
  auto td =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                   parse(R"({"domain":"Sales","email":"data@example.com","isJoinable":false})"))
          .value();
  CHECK(td.at("domains").at(0).at("name") == "Sales");
  CHECK(version_of(td) == "0.3");
  auto cleared =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"domain":null})")).value();
  CHECK(cleared.at("domains").as_array().empty());
  // ML model: algorithm, server, target are major changes.
  s.create_json(f.admin, Kind::mlmodel_service, parse(R"({"name":"ml","serviceType":"Mlflow"})"))
      .value();
  auto m =
      s.create_json(f.admin, Kind::mlmodel, parse(R"({"name":"m","service":"ml","algorithm":"a"})"))
          .value();
  auto m2 =
      s.patch_json(f.admin, Kind::mlmodel, uuid_of(m), parse(R"({"description":"minor"})")).value();
  CHECK(version_of(m2) == "0.2");
  auto m3 = s.patch_json(f.admin, Kind::mlmodel, uuid_of(m), parse(R"({"algorithm":"b"})")).value();
  CHECK(version_of(m3) == "1.2");
  auto m4 =
      s.patch_json(f.admin, Kind::mlmodel, uuid_of(m), parse(R"({"target":"churn"})")).value();
  CHECK(version_of(m4) == "2.2");
  // Owners as references; tags compare as sets.
  auto g = s.patch_json(f.admin, Kind::glossary, uuid_of(f.glossary),
                        parse(R"({"tags":[{"tagFQN":"b"},{"tagFQN":"a"}]})"))
               .value();
  CHECK(g.at("tags").at(0).at("tagFQN") == "a");
  dump = test::dump(s);
  s.patch_json(f.admin, Kind::glossary, uuid_of(f.glossary),
               parse(R"({"tags":[{"tagFQN":"a"},{"tagFQN":"b","source":"Classification"}]})"))
      .value();
  CHECK(test::dump(s) == dump);
}

TEMPLATE_TEST_CASE("a tag kept with other details is recorded beside the tags gained and lost",
                   "[patch]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §3: tags gained go into fieldsAdded, tags lost into fieldsDeleted, and a
  // tag kept whose details change makes a fieldsUpdated entry (the tags before and after), with
  // the others or alone.
  TestType fx;
  auto& s = fx.store;
  const auto admin = s.principal("admin").value();
  auto g = s.create_json(admin, Kind::glossary,
                         parse(R"({"name":"G","description":"d","tags":[{"tagFQN":"A.t"},)"
                               R"({"tagFQN":"B.t"}]})"))
               .value();
  const auto before = g.at("tags");
  auto p = s.patch_json(admin, Kind::glossary, uuid_of(g),
                        parse(R"({"tags":[{"tagFQN":"A.t","labelType":"Derived"},)"
                              R"({"tagFQN":"C.t"}]})"))
               .value();
  const auto& change = p.at("changeDescription").as_object();
  REQUIRE(change.at("fieldsAdded").as_array().size() == 1);
  CHECK(change.at("fieldsAdded").at(0).at("newValue").at(0).at("tagFQN") == "C.t");
  REQUIRE(change.at("fieldsDeleted").as_array().size() == 1);
  CHECK(change.at("fieldsDeleted").at(0).at("oldValue").at(0).at("tagFQN") == "B.t");
  REQUIRE(change.at("fieldsUpdated").as_array().size() == 1);
  const auto& updated = change.at("fieldsUpdated").at(0).as_object();
  CHECK(updated.at("name") == "tags");
  CHECK(updated.at("oldValue") == before);
  CHECK(updated.at("newValue") == p.at("tags"));
  CHECK(p.at("tags").at(0).at("labelType") == "Derived");
  // Gained and lost alone: no update.
  auto q = s.patch_json(admin, Kind::glossary, uuid_of(g),
                        parse(R"({"tags":[{"tagFQN":"A.t","labelType":"Derived"},)"
                              R"({"tagFQN":"D.t"}]})"))
               .value();
  CHECK(q.at("changeDescription").at("fieldsUpdated").as_array().empty());
  CHECK(q.at("changeDescription").at("fieldsAdded").as_array().size() == 1);
  CHECK(q.at("changeDescription").at("fieldsDeleted").as_array().size() == 1);
}

TEMPLATE_TEST_CASE("a patch that sends a number back spelled otherwise changes nothing", "[patch]",
                   CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §3: a patch that changes nothing makes no version. 2 and 2.0 are one JSON
  // number (RFC 6902's `test` says so too), so a client that sends back what it read, whatever
  // its JSON library does to the spelling, makes no version and no event.
  TestType fx;
  auto& s = fx.store;
  const auto admin = s.principal("admin").value();
  s.create_json(admin, Kind::mlmodel_service, parse(R"({"name":"ms","serviceType":"Mlflow"})"))
      .value();
  auto model = s.create_json(admin, Kind::mlmodel,
                             parse(R"({"name":"m","service":"ms","algorithm":"a",)"
                                   R"("extension":{"k":2.0,"n":1,"big":1e3,"list":[1.0,2]}})"))
                   .value();
  const auto id = uuid_of(model);
  const auto events = event_count(s, admin);
  const auto before = test::dump(s);
  for (const char* same :
       {R"({"extension":{"k":2,"n":1.0,"big":1000,"list":[1,2.0]}})",
        R"([{"op":"replace","path":"/extension/k","value":2},)"
        R"({"op":"replace","path":"/extension/big","value":1000}])"}) {
    INFO(same);
    auto r = s.patch_json(admin, Kind::mlmodel, id, parse(same)).value();
    CHECK(test::version_of(r) == "0.1");
    CHECK(event_count(s, admin) == events);
    CHECK(test::dump(s) == before);
  }
  // A number that is another value is a change.
  auto changed = s.patch_json(admin, Kind::mlmodel, id, parse(R"({"extension":{"k":2.5}})")).value();
  CHECK(test::version_of(changed) == "0.2");
  CHECK(event_count(s, admin) == events + 1);
}

TEMPLATE_TEST_CASE("a patch that removes a member the kind always has gives it its default",
                   "[patch]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §2: base fields are always returned. A merge patch's null (or a JSON Patch
  // remove) on a flag, an enumeration with a default or a list sets the default, as a create
  // without the member would; at the default already, it changes nothing.
  TestType fx;
  auto& s = fx.store;
  const auto admin = s.principal("admin").value();
  auto g = s.create_json(admin, Kind::glossary, parse(R"({"name":"g","description":"d"})")).value();
  const auto gid = uuid_of(g);
  auto t = s.create_json(admin, Kind::glossary_term,
                         parse(R"({"glossary":"g","name":"t","description":"d"})"))
               .value();
  const auto tid = uuid_of(t);
  auto u = s.create_json(admin, Kind::user, parse(R"({"name":"u","email":"u@example.com"})"))
               .value();
  const auto events = event_count(s, admin);
  const auto before = test::dump(s);
  const std::vector<std::tuple<Kind, Uuid, const char*>> same = {
      {Kind::glossary, gid, R"({"mutuallyExclusive":null})"},
      {Kind::glossary, gid, R"([{"op":"remove","path":"/mutuallyExclusive"}])"},
      {Kind::glossary, gid, R"({"tags":null})"},
      {Kind::glossary_term, tid, R"({"synonyms":null,"mutuallyExclusive":null})"},
      {Kind::user, uuid_of(u), R"({"isBot":null,"isAdmin":null})"}};
  for (const auto& [kind, id, patch] : same) {
    INFO(patch);
    auto r = s.patch_json(admin, kind, id, parse(patch)).value();
    CHECK(test::version_of(r) == "0.1");
  }
  CHECK(event_count(s, admin) == events);
  CHECK(test::dump(s) == before);
  // Away from the default, removing it is a change back to the default, still present.
  s.patch_json(admin, Kind::glossary, gid, parse(R"({"mutuallyExclusive":true})")).value();
  auto back = s.patch_json(admin, Kind::glossary, gid, parse(R"({"mutuallyExclusive":null})"))
                  .value();
  CHECK(test::version_of(back) == "0.3");
  CHECK(back.at("mutuallyExclusive") == false);
  const auto& cd = back.at("changeDescription").as_object();
  CHECK(cd.at("fieldsDeleted").as_array().empty());
  CHECK(cd.at("fieldsUpdated").at(0).at("name") == "mutuallyExclusive");
  CHECK(cd.at("fieldsUpdated").at(0).at("newValue") == false);
  CHECK(s.get_json(admin, Kind::glossary, EntityKey::by_id(gid)).value().contains(
      "mutuallyExclusive"));
  // A term's status has no default of its own: removing it is refused, and changes nothing.
  const auto kept = test::dump(s);
  for (const char* patch : {R"({"status":null})", R"([{"op":"remove","path":"/status"}])"}) {
    INFO(patch);
    auto refused = s.patch_json(admin, Kind::glossary_term, tid, parse(patch));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code() == Errc::invalid_request);
  }
  CHECK(test::dump(s) == kept);
}

TEMPLATE_TEST_CASE("a reference sent back in capitals is no change; under another type it is",
                   "[patch]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §2: a UUID is read in either case, and reference arrays compare as sets.
  TestType fx;
  auto& s = fx.store;
  const auto admin = s.principal("admin").value();
  auto bob = s.create_json(admin, Kind::user, parse(R"({"name":"bob","email":"b@example.com"})"))
                 .value();
  auto id = std::string(bob.at("id").as_string());
  s.create_json(admin, Kind::glossary, parse(R"({"name":"g","description":"d"})")).value();
  const auto g = EntityKey::by_fqn("g");
  auto first = s.patch_json(admin, Kind::glossary, g,
                            parse(R"({"reviewers":[{"id":")" + id + R"(","type":"user"}]})"))
                   .value();
  CHECK(test::version_of(first) == "0.2");
  std::string upper = id;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto events = event_count(s, admin);
  const auto before = test::dump(s);
  auto again = s.patch_json(admin, Kind::glossary, g,
                            parse(R"({"reviewers":[{"id":")" + upper + R"(","type":"user"}]})"))
                   .value();
  CHECK(test::version_of(again) == "0.2");
  CHECK(event_count(s, admin) == events);
  CHECK(test::dump(s) == before);
  // The same id as a team is not the user it names: refused, nothing written.
  auto as_team = s.patch_json(admin, Kind::glossary, g,
                              parse(R"({"reviewers":[{"id":")" + id + R"(","type":"team"}]})"));
  REQUIRE_FALSE(as_team);
  CHECK(as_team.error().code() == Errc::invalid_value);
  auto untyped =
      s.patch_json(admin, Kind::glossary, g, parse(R"({"reviewers":[{"id":")" + id + R"("}]})"));
  REQUIRE_FALSE(untyped);
  CHECK(untyped.error().kind() == ErrorKind::bad_request);
  CHECK(test::dump(s) == before);
}

TEMPLATE_TEST_CASE("a create whose entity would pass the document limit is refused",
                   "[create][errors]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §15: limits bind what a request produces. The stored entity holds more
  // than its request (id, FQN, version, stamps): a request just under the limit makes one over
  // it, which an import would refuse.
  TestType fx;
  auto& s = fx.store;
  const auto admin = s.principal("admin").value();
  const auto before = test::dump(s);
  const StoreOptions defaults;
  const auto limit = defaults.max_document_bytes;
  boost::json::object body{{"name", "big"}, {"description", std::string(limit - 100, 'x')}};
  auto refused = s.create_json(admin, Kind::glossary, boost::json::value(body));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == Errc::too_large);
  CHECK(test::dump(s) == before);
  body["description"] = std::string(limit - 400, 'x');
  CHECK(s.create_json(admin, Kind::glossary, boost::json::value(body)));
}

TEMPLATE_TEST_CASE("refused patches leave the store unchanged", "[patch][errors]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto org =
      s.create_json(f.admin, Kind::team, parse(R"({"name":"acme","teamType":"Organization"})"))
          .value();
  s.create_json(
       f.admin, Kind::team,
       parse(R"({"name":"bu","teamType":"BusinessUnit","parents":[")" + id_of(org) + R"("]})"))
      .value();
  auto user_ref = R"({"id":")" + id_of(f.alice) + R"(","type":"user"})";
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  auto before = test::dump(s);
  auto refused = [&](Kind kind, const bj::object& e, std::string body, ErrorKind expected,
                     std::string_view words, PatchOptions options = {}) {
    INFO(body);
    auto r = s.patch_json(f.admin, kind, uuid_of(e), parse(body), options);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind() == expected);
    CHECK_THAT(r.error().message(), Catch::Contains(std::string(words)));
    CHECK(test::dump(s) == before);
  };
  refused(Kind::domain, f.domain, R"("text")", ErrorKind::bad_request, "object");
  refused(Kind::domain, f.domain, R"({"name":"Other"})", ErrorKind::bad_request,
          "domain attribute name can't be modified");
  refused(Kind::domain, f.domain, R"({"id":"00000000-0000-0000-0000-000000000000"})",
          ErrorKind::bad_request, "attribute id");
  refused(Kind::domain, f.domain, R"({"version":0.5})", ErrorKind::bad_request,
          "attribute version");
  refused(Kind::domain, f.domain, R"({"deleted":true})", ErrorKind::bad_request,
          "attribute deleted");
  refused(Kind::domain, f.domain, R"({"followers":[)" + user_ref + "]}", ErrorKind::bad_request,
          "attribute followers");
  refused(Kind::domain, f.domain, R"({"domainType":"Sideways"})", ErrorKind::bad_request,
          "Source-aligned");
  refused(Kind::domain, f.domain, R"({"domainType":null})", ErrorKind::bad_request, "domainType");
  refused(Kind::domain, f.domain, R"({"colour":"red"})", ErrorKind::bad_request, "colour");
  refused(Kind::domain, f.domain, R"({"description":7})", ErrorKind::bad_request, "description");
  refused(Kind::domain, f.domain,
          R"({"experts":[{"id":")" + id_of(f.team) + R"(","type":"team"}]})",
          ErrorKind::bad_request, "must be user");
  refused(Kind::domain, f.domain,
          R"({"owners":[{"id":"00000000-0000-0000-0000-000000000001","type":"user"}]})",
          ErrorKind::not_found, "user instance");
  refused(Kind::domain, f.domain, R"({"owners":[{"id":")" + id_of(org) + R"(","type":"team"}]})",
          ErrorKind::bad_request, "only Group teams");
  refused(Kind::domain, f.domain, R"([{"op":"test","path":"/description","value":"nope"}])",
          ErrorKind::bad_request, "");
  refused(Kind::domain, f.domain, R"([{"op":"remove","path":"/nothing"}])", ErrorKind::bad_request,
          "");
  refused(Kind::domain, f.domain, R"({"description":"x"})", ErrorKind::conflict, "version",
          PatchOptions{PatchFormat::detect, Version::parse("0.9").value()});
  refused(Kind::glossary_term, f.b, R"({"description":"x"})", ErrorKind::not_found, "deleted");
  refused(Kind::user, f.alice, R"({"email":"nope"})", ErrorKind::bad_request, "email");
  refused(Kind::team, f.team, R"({"teamType":"Department"})", ErrorKind::bad_request,
          "Group can't change");
  refused(Kind::team, f.team, R"({"domain":"Sales","domains":[]})", ErrorKind::bad_request,
          "not both");
  refused(Kind::team, f.team, R"({"domain":"Nowhere"})", ErrorKind::not_found, "Nowhere");
  refused(Kind::team, f.team, R"([{"op":"add","path":"/domain","value":"Sales"}])",
          ErrorKind::bad_request, "domain");
  refused(Kind::team, org, R"({"teamType":"Group"})", ErrorKind::bad_request, "child teams");
  refused(Kind::glossary, f.glossary, R"({"tags":[{"tagFQN":""}]})", ErrorKind::bad_request, "tag");
  // A patch with the right expected version applies.
  CHECK(s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse(R"({"description":"x"})"),
                     {PatchFormat::detect, Version::parse("0.1").value()}));
  // Media type decides: a merge format with an array body is refused.
  CHECK(
      s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse("[]"), {PatchFormat::merge, {}})
          .error()
          .kind() == ErrorKind::bad_request);
  CHECK(s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse("{}"),
                     {PatchFormat::json_patch, {}})
            .error()
            .kind() == ErrorKind::bad_request);
}

TEMPLATE_TEST_CASE("concurrent patches with expected versions: exactly one wins", "[patch]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  std::atomic<int> ok{0}, conflicts{0};
  auto expected = Version::parse("0.1").value();
  auto run = [&](std::string text) {
    auto r = s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                          parse(R"({"description":")" + text + R"("})"),
                          {PatchFormat::detect, expected});
    if (r)
      ++ok;
    else if (r.error().kind() == ErrorKind::conflict)
      ++conflicts;
  };
  std::thread t1(run, "one"), t2(run, "two");
  t1.join();
  t2.join();
  CHECK(ok == 1);
  CHECK(conflicts == 1);
  CHECK(version_of(s.get_json(f.admin, Kind::team, uuid_of(f.team)).value()) == "0.2");
}

TEMPLATE_TEST_CASE("history and version reads", "[history]", CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"description":"two"})")).value();
  s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"displayName":"Data"})")).value();
  auto h = s.history_json(f.admin, Kind::team, uuid_of(f.team)).value();
  CHECK(h.entity_type == "team");
  REQUIRE(h.versions.size() == 3);
  std::vector<std::string> versions;
  for (auto& text : h.versions) versions.push_back(version_of(parse(text).as_object()));
  CHECK(versions == std::vector<std::string>{"0.3", "0.2", "0.1"});
  CHECK(parse(h.versions[1]).at("description") == "two");
  CHECK(parse(h.versions[1]).at("changeDescription").at("fieldsUpdated").at(0).at("newValue") ==
        "two");
  CHECK(h.versions[0].find("1E-1") == std::string::npos);
  auto v1 = s.version_json(f.admin, Kind::team, uuid_of(f.team), "0.1").value();
  CHECK(v1.at("description") == "d");
  CHECK(!v1.contains("changeDescription"));
  CHECK(s.version_json(f.admin, Kind::team, uuid_of(f.team), "0.3").value().at("displayName") ==
        "Data");
  for (auto bad : {"1", "1e1", "0.15", "-1", ".5", "abc", "0.0", "01.1", ""}) {
    INFO(bad);
    CHECK(s.version_json(f.admin, Kind::team, uuid_of(f.team), bad).error().code() ==
          Errc::invalid_version);
  }
  auto missing = s.version_json(f.admin, Kind::team, uuid_of(f.team), "0.9");
  CHECK(missing.error().kind() == ErrorKind::not_found);
  CHECK(missing.error().message() ==
        "team instance for " + id_of(f.team) + " and version 0.9 not found");
  CHECK(s.history_json(f.admin, Kind::glossary, uuid_of(f.team)).error().kind() ==
        ErrorKind::not_found);
  // Soft-deleted entities keep their history.
  s.remove_json(f.admin, Kind::team, uuid_of(f.team)).value();
  CHECK(s.history_json(f.admin, Kind::team, uuid_of(f.team)).value().versions.size() == 4);
}

TEMPLATE_TEST_CASE("events: dense offsets, subscribers after commit only", "[events]",
                   CATALOG_STORE_FIXTURES) {
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  std::vector<std::string> seen;
  auto id = s.subscribe(
      [&](const ChangeEvent& e) { seen.emplace_back(catalog::detail::enum_name(e.event_type)); });
  s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse(R"({"description":"x"})")).value();
  CHECK(s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse(R"({"name":"x"})"))
            .error()
            .kind() == ErrorKind::bad_request);
  s.patch_json(f.admin, Kind::domain, uuid_of(f.domain), parse(R"({"description":"x"})"))
      .value();  // no-op
  s.remove_json(f.admin, Kind::glossary, uuid_of(f.glossary), opts(false, true)).value();
  CHECK(seen == std::vector<std::string>{"entityUpdated", "entitySoftDeleted", "entitySoftDeleted",
                                         "entitySoftDeleted", "entitySoftDeleted",
                                         "entitySoftDeleted"});
  s.unsubscribe(id);
  s.restore_json(f.admin, Kind::glossary, uuid_of(f.glossary)).value();
  CHECK(seen.size() == 6);
  auto all = s.events(f.admin, 0, 1000).value();
  for (std::size_t i = 0; i < all.data.size(); ++i) CHECK(all.data[i].offset == i + 1);
}

TEMPLATE_TEST_CASE("stored events: S13's members in order, exactly as serializing them writes",
                   "[events]", CATALOG_STORE_FIXTURES) {
  // Events are written as text member by member (event_text), not serialized from an object:
  // each stored event must be what serializing its own parse writes, with docs/SEMANTICS.md §13's members in the
  // order the object had them.
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);  // entityCreated
  s.patch_json(f.admin, Kind::glossary_term, uuid_of(f.b),
               parse(R"({"description":"\"q\"\u00e9"})"))
      .value();  // entityUpdated
  s.follow_json(f.admin, Kind::glossary_term, uuid_of(f.b), uuid_of(f.alice)).value();  // changed
  s.vote_json(f.admin, Kind::glossary_term, uuid_of(f.b), VoteType::voted_up).value();
  s.unfollow_json(f.admin, Kind::glossary_term, uuid_of(f.b), uuid_of(f.alice)).value();
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b), opts(false, false)).value();
  s.restore_json(f.admin, Kind::glossary_term, uuid_of(f.b)).value();
  s.remove_json(f.admin, Kind::glossary_term, uuid_of(f.b), opts(true, false)).value();

  auto txn = s.backend().begin(storage::Mode::read_only).value();
  auto c = txn->scan(storage::prefix_range("V"), storage::Direction::forward).value();
  std::set<std::string> types;
  std::size_t n = 0;
  for (; c->valid(); c->next().value(), ++n) {
    const std::string text(c->value());
    INFO(text);
    auto parsed = bj::parse(text);
    CHECK(catalog::json::serialize(parsed) == text);
    std::vector<std::string> names;
    for (const auto& m : parsed.as_object()) names.emplace_back(m.key());
    const std::string type(parsed.at("eventType").as_string());
    types.insert(type);
    // ChangeEvent's members in their order, the change description before the offset.
    std::vector<std::string> expected(ChangeEvent::required_members.begin(),
                                      ChangeEvent::required_members.end() - 1);
    if (type != "entityCreated") expected.push_back("changeDescription");
    expected.push_back("offset");
    CHECK(names == expected);
    CHECK(parsed.at("offset").to_number<std::uint64_t>() == n + 1);
    // What each says: the change it carries is its own, not the record's last one.
    const auto& e = parsed.as_object();
    if (type == "entityCreated") CHECK(e.at("previousVersion") == e.at("currentVersion"));
    if (type == "entityUpdated") {
      const auto& updated = e.at("changeDescription").at("fieldsUpdated").as_array();
      REQUIRE(updated.size() == 1);
      CHECK(updated[0].at("name") == "description");
    }
    if (type == "entityFieldsChanged") {
      const auto& cd = e.at("changeDescription").as_object();
      const auto& changed =
          cd.at("fieldsAdded").as_array().empty()
              ? (cd.at("fieldsUpdated").as_array().empty() ? cd.at("fieldsDeleted").as_array()
                                                           : cd.at("fieldsUpdated").as_array())
              : cd.at("fieldsAdded").as_array();
      REQUIRE(changed.size() == 1);
      const auto& field = changed[0].at("name");
      CHECK((field == "followers" || field == "votes"));
    }
  }
  CHECK(n == event_count(s, f.admin));
  CHECK(types == std::set<std::string>{"entityCreated", "entityUpdated", "entityFieldsChanged",
                                       "entitySoftDeleted", "entityRestored", "entityDeleted"});
}

TEMPLATE_TEST_CASE("a patch answers the entity exactly as a get reads it afterwards", "[patch]",
                   CATALOG_STORE_FIXTURES) {
  // A patch of own fields renders its answer from the containers and relationships it read
  // before the change; anything else renders again. Either way the answer is what a get gives.
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto all = [&](Kind k, const bj::object& e) {
    return s.get_json(f.admin, k, uuid_of(e), {{"*"}}).value();
  };
  auto alice = R"({"id":")" + id_of(f.alice) + R"(","type":"user"})";
  REQUIRE(s.follow_json(f.admin, Kind::glossary_term, uuid_of(f.a1), uuid_of(f.alice)));
  auto owned = s.patch_json(f.admin, Kind::glossary_term, uuid_of(f.a1),
                            parse(R"({"owners":[)" + alice + "]}"))
                   .value();
  CHECK(owned == all(Kind::glossary_term, f.a1));
  auto own = s.patch_json(f.admin, Kind::glossary_term, uuid_of(f.a1),
                          parse(R"({"description":"own fields only","displayName":"A one"})"))
                 .value();
  CHECK(own == all(Kind::glossary_term, f.a1));
  CHECK(own.at("owners").at(0).at("name") == "alice");
  CHECK(own.at("followers").at(0).at("name") == "alice");
  CHECK(own.at("parent").at("name") == "A");

  // A team among its own owners shows its own displayName there: the patch renders again.
  auto self = R"({"id":")" + id_of(f.team) + R"(","type":"team"})";
  auto owns_itself =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"owners":[)" + self + "]}"));
  REQUIRE(owns_itself);
  auto renamed =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"displayName":"Data people"})"))
          .value();
  CHECK(renamed.at("owners").at(0).at("displayName") == "Data people");
  CHECK(renamed == all(Kind::team, f.team));
}

TEMPLATE_TEST_CASE("a JSON Patch that sets an optional member to null removes it",
                   "[patch]", CATALOG_STORE_FIXTURES) {
  // A member is never null (docs/SEMANTICS.md §2): in a request null means leaving the member
  // out, so the patch removes it, as a merge patch's null does; the answer, a later get and the
  // references to the team show no displayName, and the next patch can add it again.
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  PatchOptions json_patch;
  json_patch.format = PatchFormat::json_patch;
  s.patch_json(f.admin, Kind::team, uuid_of(f.team), parse(R"({"displayName":"Data team"})"))
      .value();
  auto nulled =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                   parse(R"([{"op":"add","path":"/displayName","value":null}])"), json_patch)
          .value();
  CHECK(nulled == s.get_json(f.admin, Kind::team, uuid_of(f.team), {{"*"}}).value());
  auto got = s.get_json(f.admin, Kind::team, uuid_of(f.team)).value();
  CHECK_FALSE(got.contains("displayName"));
  CHECK(catalog::json::serialize(got).find("null") == std::string::npos);
  const auto& change = got.at("changeDescription");
  REQUIRE(change.at("fieldsDeleted").as_array().size() == 1);
  CHECK(change.at("fieldsDeleted").at(0).at("name") == "displayName");
  CHECK(change.at("fieldsDeleted").at(0).at("oldValue") == "Data team");
  CHECK(change.at("fieldsUpdated").as_array().empty());
  // Null again: nothing left to remove, no new version.
  auto again =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                   parse(R"([{"op":"add","path":"/displayName","value":null}])"), json_patch)
          .value();
  CHECK(again.at("version") == got.at("version"));
  auto added =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                   parse(R"([{"op":"add","path":"/displayName","value":"Data"}])"), json_patch);
  REQUIRE(added);
  CHECK(added->at("displayName") == "Data");
  // `replace` with null removes it too; a relationship set to null is emptied.
  auto replaced =
      s.patch_json(f.admin, Kind::team, uuid_of(f.team),
                   parse(R"([{"op":"replace","path":"/displayName","value":null},)"
                         R"({"op":"replace","path":"/owners","value":null}])"),
                   json_patch)
          .value();
  CHECK_FALSE(replaced.contains("displayName"));
  CHECK(replaced.at("owners").as_array().empty());
  // Refused, nothing changed: a required member set to null (the same error as removing it),
  // and a name the kind does not have, null or not.
  const auto before = s.get_json(f.admin, Kind::user, uuid_of(f.alice)).value();
  for (const auto& [body, message] :
       {std::pair{R"([{"op":"replace","path":"/email","value":null}])",
                  "Missing required member email"},
        std::pair{R"([{"op":"add","path":"/colour","value":null}])", "Unknown member colour"}}) {
    auto refused = s.patch_json(f.admin, Kind::user, uuid_of(f.alice), parse(body), json_patch);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code() == Errc::invalid_request);
    CHECK(refused.error().message() == message);
    CHECK(s.get_json(f.admin, Kind::user, uuid_of(f.alice)).value() == before);
  }
}

TEMPLATE_TEST_CASE("a patched nested shape keeps the member order and nulls it was given",
                   "[patch]", CATALOG_STORE_FIXTURES) {
  // Records are structs, yet a patch's value that the struct would write back differently
  // (members in another order, a null inside) is kept as written, so the answers and the stored
  // bytes are the value as sent.
  TestType fx;
  auto& s = fx.store;
  auto f = build(s);
  auto policy =
      s.create_json(
           f.admin, Kind::policy,
           parse(
               R"({"name":"p","rules":[{"name":"r","effect":"allow","resources":["glossary"],"operations":["ViewAll"]}]})"))
          .value();
  const std::string rules =
      R"([{"operations":["ViewAll"],"resources":["glossary"],"effect":"deny","name":"r2","description":null}])";
  auto patched =
      s.patch_json(f.admin, Kind::policy, uuid_of(policy), parse(R"({"rules":)" + rules + "}"))
          .value();
  CHECK(catalog::json::serialize(patched.at("rules")) == rules);
  auto got = s.get_json(f.admin, Kind::policy, uuid_of(policy)).value();
  CHECK(catalog::json::serialize(got.at("rules")) == rules);
  CHECK(catalog::json::serialize(
            got.at("changeDescription").at("fieldsUpdated").at(0).at("newValue")) == rules);
  // The typed read is the struct, as a JSON read converted to it gives.
  auto typed = s.template get<Policy>(f.admin, uuid_of(policy)).value();
  REQUIRE(typed.rules.size() == 1);
  CHECK(typed.rules[0].effect == Effect::deny);
  CHECK_FALSE(typed.rules[0].description.has_value());
  // A later change of another member keeps it; a change of the member itself drops the old form.
  auto renamed = s.patch_json(f.admin, Kind::policy, uuid_of(policy),
                              parse(R"({"description":"now described"})"))
                     .value();
  CHECK(catalog::json::serialize(renamed.at("rules")) == rules);
  auto canonical =
      s.patch_json(
           f.admin, Kind::policy, uuid_of(policy),
           parse(
               R"({"rules":[{"name":"r3","effect":"allow","resources":["glossary"],"operations":["ViewAll"]}]})"))
          .value();
  CHECK(catalog::json::serialize(canonical.at("rules")) ==
        R"([{"name":"r3","effect":"allow","resources":["glossary"],"operations":["ViewAll"]}])");
  CHECK(s.verify().value().empty());
}
