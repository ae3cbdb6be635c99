// Create and get (docs/SEMANTICS.md §10) for every kind, on both backends: shapes, containers, references,
// and every refused request with its error kind and an unchanged store.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

using namespace catalog;
using test::parse;
using test::id_of;

namespace {

struct World {
  Principal admin;
  boost::json::object alice, bob, team, ml_service, search_service, glossary, domain;
};

World build(Store& s) {
  World w;
  w.admin = s.principal("admin").value();
  w.alice = s.create_json(w.admin, Kind::user, parse(R"({"name":"alice","email":"alice@example.com"})")).value();
  w.bob = s.create_json(w.admin, Kind::user, parse(R"({"name":"bob","email":"bob@example.com","displayName":"Bob"})")).value();
  w.team = s.create_json(w.admin, Kind::team, parse(R"({"name":"data","users":[")" +
      std::string(w.alice.at("id").as_string()) + R"("]})")).value();
  w.ml_service = s.create_json(w.admin, Kind::mlmodel_service, parse(R"({"name":"mlflow","serviceType":"Mlflow"})")).value();
  w.search_service = s.create_json(w.admin, Kind::search_service, parse(R"({"name":"es","serviceType":"ElasticSearch"})")).value();
  w.glossary = s.create_json(w.admin, Kind::glossary, parse(R"({"name":"Business","description":"Terms"})")).value();
  w.domain = s.create_json(w.admin, Kind::domain, parse(R"({"name":"Sales","domainType":"Aggregate","description":"d"})")).value();
  return w;
}


}  // namespace

TEMPLATE_TEST_CASE("create returns the entity at 0.1 with all fields", "[create]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  auto owner = R"({"id":")" + id_of(w.alice) + R"(","type":"user"})";

  SECTION("ML model under its service, with owners, followers and votes present") {
    auto m = s.create_json(w.admin, Kind::mlmodel, parse(R"({"name":"churn","service":"mlflow","algorithm":"xgboost","owners":[)" + owner + R"(],"server":"http://ml:8080"})")).value();
    CHECK(m.at("fullyQualifiedName") == "mlflow.churn");
    CHECK(boost::json::serialize(m.at("version")) == "1E-1");  // Boost prints it so; our codec does not:
    CHECK(catalog::json::serialize(m.at("version")) == "0.1");
    CHECK(m.at("service").at("name") == "mlflow");
    CHECK(m.at("service").at("type") == "mlmodelService");
    CHECK(m.at("serviceType") == "Mlflow");
    CHECK(m.at("owners").as_array().size() == 1);
    CHECK(m.at("owners").at(0).at("name") == "alice");
    CHECK(m.at("followers").as_array().empty());
    CHECK(m.at("votes").at("upVotes") == 0);
    CHECK(m.at("deleted") == false);
    CHECK(m.at("updatedBy") == "admin");
    CHECK(!m.contains("href"));
    // The user's owns lists it, built from the same edge.
    auto alice = s.get_json(w.admin, Kind::user, EntityKey::by_fqn("alice"), {{"owns"}}).value();
    REQUIRE(alice.at("owns").as_array().size() == 1);
    CHECK(alice.at("owns").at(0).at("fullyQualifiedName") == "mlflow.churn");
  }

  SECTION("glossary terms nest, with dotted names quoted in the FQN") {
    auto root = s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"Business","name":"Revenue","description":"r"})")).value();
    CHECK(root.at("fullyQualifiedName") == "Business.Revenue");
    CHECK(root.at("status") == "Approved");
    CHECK(!root.contains("parent"));
    auto child = s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"Business","parent":"Business.Revenue","name":"v1.0","description":"r"})")).value();
    CHECK(child.at("fullyQualifiedName") == "Business.Revenue.\"v1.0\"");
    CHECK(child.at("parent").at("name") == "Revenue");
    CHECK(child.at("glossary").at("name") == "Business");
    auto got = s.get_json(w.admin, Kind::glossary_term, EntityKey::by_fqn("\"Business\".Revenue.\"v1.0\""), {{"children"}}).value();
    CHECK(got.at("id") == child.at("id"));
    auto parent = s.get_json(w.admin, Kind::glossary_term, EntityKey::by_fqn("Business.Revenue"), {{"children"}}).value();
    REQUIRE(parent.at("children").as_array().size() == 1);
    CHECK(parent.at("children").at(0).at("name") == "v1.0");
    auto g = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{"termCount"}}).value();
    CHECK(g.at("termCount") == 2);
  }

  SECTION("a glossary whose name has a dot") {
    auto g = s.create_json(w.admin, Kind::glossary, parse(R"({"name":"a.b","description":"x"})")).value();
    CHECK(g.at("fullyQualifiedName") == "\"a.b\"");
    auto t = s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"\"a.b\"","name":"t","description":"x"})")).value();
    CHECK(t.at("fullyQualifiedName") == "\"a.b\".t");
  }

  SECTION("search index with nested fields and base owners/tags/domains") {
    auto i = s.create_json(w.admin, Kind::search_index, parse(R"({"name":"logs","service":"es","fields":[{"name":"msg","dataType":"TEXT","children":[{"name":"x","dataType":"KEYWORD"}]}],"tags":[{"tagFQN":"PII.Sensitive"}],"domains":["Sales"]})")).value();
    CHECK(i.at("indexType") == "Index");
    CHECK(i.at("serviceType") == "ElasticSearch");
    CHECK(i.at("tags").at(0).at("source") == "Classification");
    CHECK(i.at("tags").at(0).at("labelType") == "Manual");
    CHECK(i.at("domains").at(0).at("name") == "Sales");
    auto basic = s.get_json(w.admin, Kind::search_index, EntityKey::by_fqn("es.logs")).value();
    CHECK(basic.contains("owners"));
    CHECK(basic.contains("tags"));
    CHECK(!basic.contains("followers"));
    auto typed = s.template get<SearchIndex>(w.admin, EntityKey::by_fqn("es.logs")).value();
    CHECK(typed.fields.at(0).children->at(0).name == "x");
  }

  SECTION("domains and sub-domains with experts by user name") {
    auto sub = s.create_json(w.admin, Kind::domain, parse(R"({"name":"EMEA","domainType":"Source-aligned","description":"d","parent":"Sales","experts":["bob"]})")).value();
    CHECK(sub.at("fullyQualifiedName") == "Sales.EMEA");
    CHECK(sub.at("parent").at("name") == "Sales");
    CHECK(sub.at("experts").at(0).at("displayName") == "Bob");
    // Experts are named by user name, so a name with a dot is one name.
    s.create_json(w.admin, Kind::user, parse(R"({"name":"john.doe","email":"john.doe@example.com"})")).value();
    auto dotted = s.create_json(w.admin, Kind::domain, parse(R"({"name":"APAC","domainType":"Aggregate","description":"d","experts":["john.doe"]})")).value();
    CHECK(dotted.at("experts").at(0).at("fullyQualifiedName") == "\"john.doe\"");
    CHECK(s.principal("john.doe").value().name == "john.doe");
  }

  SECTION("teams: members, parents, policies; user teams") {
    auto pol = s.create_json(w.admin, Kind::policy, parse(R"J({"name":"p1","rules":[{"name":"r","effect":"allow","resources":["glossary"],"operations":["EditDescription"],"condition":"isOwner() && !noOwner()"}]})J")).value();
    auto org = s.create_json(w.admin, Kind::team, parse(R"({"name":"acme","teamType":"Organization"})")).value();
    auto bu = s.create_json(w.admin, Kind::team, parse(R"({"name":"bu","teamType":"BusinessUnit","parents":[")" + id_of(org) + R"("]})")).value();
    auto grp = s.create_json(w.admin, Kind::team, parse(R"({"name":"g","parents":[")" + id_of(bu) + R"("],"policies":[")" + id_of(pol) + R"("],"users":[")" + id_of(w.bob) + R"("]})")).value();
    CHECK(grp.at("teamType") == "Group");
    CHECK(grp.at("parents").at(0).at("name") == "bu");
    CHECK(grp.at("policies").at(0).at("name") == "p1");
    auto bob = s.template get<User>(w.admin, EntityKey::by_fqn("bob"), {{"teams"}}).value();
    REQUIRE(bob.teams.size() == 1);
    CHECK(bob.teams[0].name == "g");
    auto p = s.get_json(w.admin, Kind::policy, EntityKey::by_fqn("p1"), {{"teams"}}).value();
    CHECK(p.at("teams").at(0).at("name") == "g");
    auto t = s.template get<Team>(w.admin, EntityKey::by_fqn("bu"), {{"*"}}).value();
    CHECK(t.children.size() == 1);
    CHECK(t.children_count == 1);
  }

  SECTION("typed create and get round trip") {
    CreateGlossary req;
    req.name = "Typed";
    req.description = "made from C++";
    req.reviewers = {EntityReference{parse_uuid(id_of(w.bob)).value(), "user", {}, {}, {}, {}}};
    auto g = s.template create<Glossary>(w.admin, req).value();
    CHECK(g.version == Version::initial());
    CHECK(g.fully_qualified_name == "Typed");
    REQUIRE(g.reviewers.size() == 1);
    CHECK(g.reviewers[0].name == "bob");
    auto again = s.template get<Glossary>(w.admin, g.id).value();
    CHECK(again.name == "Typed");
    CHECK(again.reviewers.empty());  // an extra field, not asked for
    CreateGlossaryTerm term;
    term.glossary = "Typed";
    term.name = "T";
    term.description = "x";
    CHECK(s.template create<GlossaryTerm>(w.admin, term).value().status == TermStatus::draft);
  }
}

TEMPLATE_TEST_CASE("refused creates leave the store unchanged", "[create][errors]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"Business","name":"Gone","description":"r"})")).value();
  auto before = test::dump(s);
  auto refused = [&](Kind kind, std::string body, ErrorKind expected, std::string_view words) {
    INFO(body);
    auto r = s.create_json(w.admin, kind, parse(body));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind() == expected);
    CHECK_THAT(r.error().message(), Catch::Contains(std::string(words)));
    CHECK(test::dump(s) == before);
  };
  auto alice = id_of(w.alice);
  refused(Kind::glossary, R"({"name":"Business","description":"again"})", ErrorKind::conflict, "Entity already exists");
  refused(Kind::glossary, R"({"description":"x"})", ErrorKind::bad_request, "name");
  refused(Kind::glossary, R"({"name":"x","description":"x","colour":"red"})", ErrorKind::bad_request, "colour");
  refused(Kind::glossary, R"({"name":"x","description":7})", ErrorKind::bad_request, "description");
  refused(Kind::glossary, R"({"name":"a::b","description":"x"})", ErrorKind::bad_request, "::");
  refused(Kind::glossary, R"({"name":"a\"b","description":"x"})", ErrorKind::bad_request, "name");
  refused(Kind::glossary, R"({"name":"a\u0001b","description":"x"})", ErrorKind::bad_request, "control");
  refused(Kind::glossary, R"({"name":"","description":"x"})", ErrorKind::bad_request, "empty");
  refused(Kind::glossary, R"({"name":")" + std::string(257, 'x') + R"(","description":"x"})", ErrorKind::bad_request, "256");
  refused(Kind::domain, R"({"name":"D","domainType":"Sideways","description":"x"})", ErrorKind::bad_request, "Source-aligned");
  refused(Kind::domain, R"({"name":"D","domainType":"Aggregate","description":"x","parent":"Nowhere"})", ErrorKind::not_found, "domain instance for Nowhere not found");
  refused(Kind::domain, R"({"name":"D","domainType":"Aggregate","description":"x","experts":["nobody"]})", ErrorKind::not_found, "nobody");
  refused(Kind::mlmodel, R"({"name":"m","service":"nope","algorithm":"a"})", ErrorKind::not_found, "mlmodelService instance for nope not found");
  refused(Kind::mlmodel, R"({"name":"m","service":"mlflow","algorithm":"a","server":"not a uri"})", ErrorKind::bad_request, "server");
  refused(Kind::mlmodel, R"({"name":"m","service":"mlflow"})", ErrorKind::bad_request, "algorithm");
  refused(Kind::mlmodel, R"({"name":"m","service":"mlflow","algorithm":"a","mlFeatures":[{"name":"f","dataType":"float"}]})", ErrorKind::bad_request, "numerical");
  refused(Kind::search_index, R"({"name":"i","service":"es","fields":[{"name":"f","dataType":"STRING"}]})", ErrorKind::bad_request, "dataType");
  refused(Kind::search_index, R"({"name":"i","service":"es","fields":[],"sourceHash":")" + std::string(33, 'a') + R"("})", ErrorKind::bad_request, "sourceHash");
  refused(Kind::search_index, R"({"name":"i","service":"es","fields":[],"tags":[{"tagFQN":""}]})", ErrorKind::bad_request, "tag");
  refused(Kind::glossary_term, R"({"glossary":"Business","name":"t","description":"x","parent":"\"Business.Nope"})", ErrorKind::bad_request, "unbalanced");
  refused(Kind::glossary_term, R"({"glossary":"Business..x","name":"t","description":"x"})", ErrorKind::bad_request, "empty part");
  refused(Kind::glossary, R"({"name":"x","description":"x","owners":[{"id":")" + alice + R"(","type":"glossary"}]})", ErrorKind::bad_request, "owner type");
  refused(Kind::glossary, R"({"name":"x","description":"x","owners":[{"id":"00000000-0000-0000-0000-000000000000","type":"user"}]})", ErrorKind::not_found, "user instance for");
  refused(Kind::glossary, R"({"name":"x","description":"x","owners":[{"id":"not-a-uuid","type":"user"}]})", ErrorKind::bad_request, "UUID");
  refused(Kind::user, R"({"name":"carol","email":"carol"})", ErrorKind::bad_request, "email");
  refused(Kind::user, R"({"name":"carol","email":"ca rol@x.org"})", ErrorKind::bad_request, "whitespace");
  refused(Kind::team, R"({"name":"div","teamType":"Division"})", ErrorKind::bad_request, "exactly one parent");
  // The rules on the number of parents before the 404 of a missing parent (docs/SEMANTICS.md
  // §14, step 8 before 9); one parent named twice is one.
  const std::string missing1 = R"("00000000-0000-0000-0000-000000000001")";
  const std::string missing2 = R"("00000000-0000-0000-0000-000000000002")";
  refused(Kind::team, R"({"name":"div","teamType":"Division","parents":[)" + missing1 + "," + missing2 + "]}", ErrorKind::bad_request, "Division must have exactly one parent");
  refused(Kind::team, R"({"name":"bu","teamType":"BusinessUnit","parents":[)" + missing1 + "," + missing2 + "]}", ErrorKind::bad_request, "BusinessUnit must have exactly one parent");
  refused(Kind::team, R"({"name":"org","teamType":"Organization","parents":[)" + missing1 + "]}", ErrorKind::bad_request, "Organization can't have parents");
  refused(Kind::team, R"({"name":"div","teamType":"Division","parents":[)" + missing1 + "," + missing1 + "]}", ErrorKind::not_found, "team instance for 00000000-0000-0000-0000-000000000001 not found");
  refused(Kind::team, R"({"name":"g2","parents":[")" + id_of(w.team) + R"("]})", ErrorKind::bad_request, "parent of type Group");
  refused(Kind::policy, R"J({"name":"p","rules":[{"name":"r","effect":"allow","resources":["all"],"operations":["All"],"condition":"isAdmin()"}]})J", ErrorKind::bad_request, "condition");
  refused(Kind::policy, R"({"name":"p","rules":[{"name":"r","effect":"maybe","resources":["all"],"operations":["All"]}]})", ErrorKind::bad_request, "allow");
  refused(Kind::policy, R"({"name":"p","rules":[{"name":"r","effect":"allow","resources":["tables"],"operations":["All"]}]})", ErrorKind::bad_request, "resource");
  refused(Kind::policy, R"({"name":"p","rules":[{"name":"r","effect":"allow","resources":["all"],"operations":["Fly"]}]})", ErrorKind::bad_request, "operation");
  refused(Kind::search_service, R"({"name":"s","serviceType":""})", ErrorKind::bad_request, "serviceType");
  refused(Kind::glossary, R"(["not","an","object"])", ErrorKind::bad_request, "expected an object");
  // Owners may be Group teams only.
  auto org = s.create_json(w.admin, Kind::team, parse(R"({"name":"acme","teamType":"Organization"})")).value();
  before = test::dump(s);
  refused(Kind::glossary, R"({"name":"x","description":"x","owners":[{"id":")" + id_of(org) + R"(","type":"team"}]})", ErrorKind::bad_request, "only Group teams");
  // A soft-deleted container is treated as missing; that needs delete, tested with lifecycle.
}

TEMPLATE_TEST_CASE("get by id and FQN with fields and include", "[get]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  auto by_id = s.get_json(w.admin, Kind::glossary, parse_uuid(id_of(w.glossary)).value()).value();
  CHECK(by_id.at("name") == "Business");
  CHECK(!by_id.contains("owners"));
  auto all = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{"*"}}).value();
  for (auto field : {"owners", "tags", "domains", "reviewers", "followers", "votes", "termCount"})
    CHECK(all.contains(field));
  auto bad_field = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{"owners", "colour"}});
  REQUIRE_FALSE(bad_field);
  CHECK(bad_field.error().kind() == ErrorKind::bad_request);
  CHECK(bad_field.error().message() == "Invalid field name colour");
  auto empty_field = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{""}});
  CHECK(empty_field.error().code() == Errc::invalid_field);
  auto missing = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Nope"));
  CHECK(missing.error().kind() == ErrorKind::not_found);
  CHECK(missing.error().message() == "glossary instance for Nope not found");
  auto wrong_kind = s.get_json(w.admin, Kind::domain, parse_uuid(id_of(w.glossary)).value());
  CHECK(wrong_kind.error().kind() == ErrorKind::not_found);
  auto deleted_only = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{}, Include::deleted});
  CHECK(deleted_only.error().kind() == ErrorKind::not_found);
  CHECK(s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("Business"), {{}, Include::all}));
  auto bad_fqn = s.get_json(w.admin, Kind::glossary, EntityKey::by_fqn("\"open"));
  CHECK(bad_fqn.error().code() == Errc::invalid_fqn);
}

TEST_CASE("admins are created or promoted on every open; principals must be live users",
          "[store][admin]") {
  test::TempDir dir;
  {
    auto s = Store::open_lmdb(dir.path(), test::test_options()).value();
    auto admin = s.principal("admin").value();
    CHECK(admin.is_admin);
    s.create_json(admin, Kind::user, parse(R"({"name":"root2","email":"root2@example.com"})")).value();
    CHECK_FALSE(s.principal("root2").value().is_admin);
    CHECK(s.principal("ghost").error().kind() == ErrorKind::unauthorized);
  }
  auto options = test::test_options();
  options.admins = {"admin", "root2"};
  auto s = Store::open_lmdb(dir.path(), options).value();
  CHECK(s.principal("root2").value().is_admin);
  // The promotion is a change like any other: a new version, its snapshot, an event.
  auto admin = s.principal("admin").value();
  auto root2 = s.get_json(admin, Kind::user, EntityKey::by_fqn("root2")).value();
  CHECK(catalog::json::serialize(root2.at("version")) == "0.2");
  auto history = s.history_json(admin, Kind::user, parse_uuid(std::string(root2.at("id").as_string())).value()).value();
  REQUIRE(history.versions.size() == 2);
  CHECK(parse(history.versions[1]).at("isAdmin") == false);
  auto events = s.events(admin, 0, 100).value();
  CHECK(events.data.back().event_type == EventType::entity_updated);
  CHECK(events.data.back().entity_fully_qualified_name == "root2");
  auto u = s.template get<User>(s.principal("admin").value(), EntityKey::by_fqn("admin")).value();
  CHECK(u.email == "admin@example.com");
  CHECK(u.is_admin);
}

TEST_CASE("a soft-deleted user named as an admin principal is restored on open, and made admin",
          "[store][admin]") {
  test::TempDir dir;
  {
    auto s = Store::open_lmdb(dir.path(), test::test_options()).value();
    auto admin = s.principal("admin").value();
    for (std::string name : {"root2", "ops"}) {
      const std::string is_admin = name == "root2" ? "true" : "false";
      s.create_json(admin, Kind::user,
                    parse(R"({"name":")" + name + R"(","email":")" + name +
                          R"(@example.com","isAdmin":)" + is_admin + "}"))
          .value();
      s.remove_json(admin, Kind::user, EntityKey::by_fqn(name), DeleteOptions{}).value();
      CHECK(s.principal(name).error().kind() == ErrorKind::unauthorized);
    }
  }
  auto options = test::test_options();
  options.admins = {"admin", "root2", "ops"};
  std::vector<std::string> logged;
  options.log = [&](LogLevel, std::string_view message) { logged.emplace_back(message); };
  std::size_t total = 0;
  {
    auto s = Store::open_lmdb(dir.path(), options).value();
    CHECK(s.principal("root2").value().is_admin);
    CHECK(s.principal("ops").value().is_admin);
    CHECK(std::count_if(logged.begin(), logged.end(), [](const std::string& m) {
            return m.find("restored the soft-deleted user") != std::string::npos;
          }) == 2);
    // Each a change like any other: root2 restored (0.3); ops restored (0.3), made admin (0.4).
    auto admin = s.principal("admin").value();
    auto root2 = s.get_json(admin, Kind::user, EntityKey::by_fqn("root2")).value();
    CHECK(catalog::json::serialize(root2.at("version")) == "0.3");
    CHECK(root2.at("deleted") == false);
    auto ops = s.get_json(admin, Kind::user, EntityKey::by_fqn("ops")).value();
    CHECK(catalog::json::serialize(ops.at("version")) == "0.4");
    auto events = s.events(admin, 0, 100).value();
    total = events.data.size();
    REQUIRE(total >= 3);
    CHECK(events.data[total - 3].event_type == EventType::entity_restored);
    CHECK(events.data[total - 3].entity_fully_qualified_name == "root2");
    CHECK(events.data[total - 2].event_type == EventType::entity_restored);
    CHECK(events.data[total - 1].event_type == EventType::entity_updated);
    CHECK(events.data[total - 1].entity_fully_qualified_name == "ops");
  }
  // Opened again: nothing more to do, nothing written.
  logged.clear();
  auto s = Store::open_lmdb(dir.path(), options).value();
  CHECK(s.events(s.principal("admin").value(), 0, 100).value().data.size() == total);
  CHECK(logged.empty());
}

TEST_CASE("only an admin creates an admin user", "[create]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto admin = s.principal("admin").value();
  s.create_json(admin, Kind::user, parse(R"({"name":"alice","email":"alice@example.com"})")).value();
  auto alice = s.principal("alice").value();
  auto r = s.create_json(alice, Kind::user, parse(R"({"name":"eve","email":"eve@example.com","isAdmin":true})"));
  CHECK(r.error().kind() == ErrorKind::forbidden);
}

TEST_CASE("a Kind or PatchFormat that is none of its values is invalid_value, store unchanged",
          "[create][hardening]") {
  // An integer cast to the enumeration (a host's bug) is refused as a value, never read as an
  // index into the kinds' tables.
  auto s = Store::in_memory(test::test_options()).value();
  const auto admin = s.principal("admin").value();
  auto g = s.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"d"})")).value();
  const auto id = test::uuid_of(g);
  const auto before = test::dump(s);
  const auto bad_kind = [](Error e) {
    CHECK(e.code() == Errc::invalid_value);
    CHECK(e.kind() == ErrorKind::bad_request);
    CHECK_THAT(e.message(), Catch::StartsWith("Unknown kind "));
  };
  for (int n : {-1, 10, 99}) {
    CAPTURE(n);
    const auto kind = static_cast<Kind>(n);
    bad_kind(s.create_json(admin, kind, parse(R"({"name":"x"})")).error());
    bad_kind(s.get_json(admin, kind, id).error());
    bad_kind(s.get_entity(admin, kind, id).error());
    bad_kind(s.list_json(admin, kind).error());
    bad_kind(s.list_entities(admin, kind).error());
    bad_kind(s.patch_json(admin, kind, id, parse(R"({"description":"e"})")).error());
    bad_kind(s.update_json(admin, kind, id, [](const boost::json::object&) {
                  return Result<boost::json::value>(boost::json::array());
                }).error());
    bad_kind(s.remove_json(admin, kind, id).error());
    bad_kind(s.restore_json(admin, kind, id).error());
    bad_kind(s.history_json(admin, kind, id).error());
    bad_kind(s.version_json(admin, kind, id, "0.1").error());
    bad_kind(s.follow_json(admin, kind, id, admin.id).error());
    bad_kind(s.unfollow_json(admin, kind, id, admin.id).error());
    bad_kind(s.vote_json(admin, kind, id, VoteType::voted_up).error());
  }
  PatchOptions odd;
  odd.format = static_cast<PatchFormat>(7);
  auto patched = s.patch_json(admin, Kind::glossary, id, parse(R"({"description":"e"})"), odd);
  REQUIRE_FALSE(patched.has_value());
  CHECK(patched.error().code() == Errc::invalid_value);
  CHECK(patched.error().message() == "Unknown patch format 7: not a value of catalog::PatchFormat");
  CHECK(test::dump(s) == before);
}
