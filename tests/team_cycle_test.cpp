// A team is never its own ancestor (docs/SEMANTICS.md §9), and no walk of the containment tree
// loops, whatever is stored: a patch closing a cycle is refused naming it; a cycle written into
// the store's bytes (as a store from before the rule may hold) is reported by verify, refused by
// import, and a recursive delete or restore of its teams ends; a team's new type suits its child
// teams. The default policy's hardening is default_policy_test.cpp.
#include <catalog/admin.hpp>
#include <catalog/store.hpp>

#include <catalog/detail/engine/keys.hpp>  // containment edges, to write a cycle into the bytes
#include "support.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace catalog;
using test::parse;
using test::uuid_of;
namespace bj = boost::json;
namespace keys = catalog::engine::keys;

namespace {

struct Teams {
  Principal admin;
  bj::object a, b, c;  // Departments: a > b > c (each the parent of the next)
};

Teams chain(Store& s) {
  Teams t;
  t.admin = s.principal("admin").value();
  t.a = s.create_json(t.admin, Kind::team, parse(R"({"name":"A","teamType":"Department"})")).value();
  t.b = s.create_json(t.admin, Kind::team,
                      parse(R"({"name":"B","teamType":"Department","parents":[")" +
                            test::id_of(t.a) + R"("]})"))
            .value();
  t.c = s.create_json(t.admin, Kind::team,
                      parse(R"({"name":"C","teamType":"Department","parents":[")" +
                            test::id_of(t.b) + R"("]})"))
            .value();
  return t;
}

// `n` Departments named `prefix`0, `prefix`1, ... below `top`, each the parent of the next; the
// deepest.
bj::object extend(Store& s, const Principal& admin, const bj::object& top, int n,
                  const std::string& prefix) {
  bj::object last = top;
  for (int i = 0; i < n; ++i)
    last = s.create_json(admin, Kind::team,
                         parse(R"({"name":")" + prefix + std::to_string(i) +
                               R"(","teamType":"Department","parents":[")" + test::id_of(last) +
                               R"("]})"))
               .value();
  return last;
}

std::string parents_patch(const bj::object& parent) {
  return R"({"parents":[{"id":")" + test::id_of(parent) + R"(","type":"team"}]})";
}

// Writes the containment edge `parent` contains `child` straight into the store, both directions,
// as the engine's key schema has them: what a store written before docs/SEMANTICS.md §9's rule
// may hold.
void write_containment(Store& s, const Uuid& parent, const Uuid& child) {
  auto txn = s.backend().begin(storage::Mode::read_write).value();
  txn->put(keys::edge(parent, keys::Rel::contains, child), "").value();
  txn->put(keys::reverse_edge(child, keys::Rel::contains, parent), "").value();
  txn->commit().value();
}

std::vector<std::string> problems_of(Store& s) {
  std::vector<std::string> out;
  for (const auto& p : s.verify().value()) out.push_back(p.message);
  return out;
}

}  // namespace

TEST_CASE("a patch that would make a team its own ancestor is refused naming the cycle",
          "[teams][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  const auto before = test::dump(s);

  SECTION("itself as its parent") {
    auto r = s.patch_json(t.admin, Kind::team, uuid_of(t.b), parse(parents_patch(t.b)));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::bad_request);
    CHECK(r.error().code() == Errc::team_rule);
    CHECK_THAT(r.error().message(), Catch::Contains("B > B"));
  }
  SECTION("a loop through three teams") {
    auto r = s.patch_json(t.admin, Kind::team, uuid_of(t.a), parse(parents_patch(t.c)));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::team_rule);
    CHECK(r.error().message() ==
          "Team A can't be its own ancestor: these parents would close the cycle A > B > C > A");
  }
  SECTION("a JSON Patch adding a descendant to the parents") {
    auto r = s.patch_json(t.admin, Kind::team, uuid_of(t.a),
                          parse(R"([{"op":"add","path":"/parents","value":[{"id":")" +
                                test::id_of(t.c) + R"(","type":"team"}]}])"));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::team_rule);
    CHECK_THAT(r.error().message(), Catch::Contains("A > B > C > A"));
  }
  SECTION("the typed update") {
    auto r = s.update<Team>(t.admin, EntityKey::by_id(uuid_of(t.b)), [&](Team& team) {
      team.parents = {EntityReference{uuid_of(t.c), "team"}};
    });
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::team_rule);
    CHECK_THAT(r.error().message(), Catch::Contains("B > C > B"));
  }
  CHECK(test::dump(s) == before);
  CHECK(problems_of(s).empty());
  // Parents that close no cycle are still fine: C under A directly as well as under B.
  CHECK(s.patch_json(t.admin, Kind::team, uuid_of(t.c),
                     parse(R"({"parents":[{"id":")" + test::id_of(t.a) + R"(","type":"team"},{"id":")" +
                           test::id_of(t.b) + R"(","type":"team"}]})")).has_value());
}

TEST_CASE("a stored team cycle is found by verify and refused by import", "[teams][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  write_containment(s, uuid_of(t.c), uuid_of(t.a));  // A > B > C > A
  auto problems = problems_of(s);
  REQUIRE(problems.size() == 3);  // each team of the cycle is its own ancestor
  CHECK_THAT(problems[0] + problems[1] + problems[2],
             Catch::Contains("team A (" + test::id_of(t.a) + ") is its own ancestor: A > B > C > A"));

  std::stringstream exported;
  REQUIRE(admin::export_store(s, exported).has_value());
  auto target = Store::in_memory().value();  // no admins: opening it writes no user
  const auto empty = test::dump(target);
  auto imported = admin::import_store(target, exported);
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().code() == Errc::invalid_request);
  CHECK_THAT(imported.error().message(), Catch::Contains("is its own ancestor"));
  CHECK(test::dump(target) == empty);
}

TEST_CASE("verify reads a deep team hierarchy once, and names only the teams of a cycle",
          "[teams][hardening]") {
  // Verify walks each team's ancestry remembering what it finished, so a chain of n teams costs
  // about n reads of parents, not n^2/2.
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  extend(s, t.admin, t.c, 300, "D");
  CHECK(problems_of(s).empty());
  // A recursive soft delete takes all 303 by A's event: each leads up to A one parent at a time.
  DeleteOptions recursive;
  recursive.recursive = true;
  REQUIRE(s.remove_json(t.admin, Kind::team, EntityKey::by_id(uuid_of(t.a)), recursive)
              .has_value());
  CHECK(problems_of(s).empty());
  REQUIRE(s.restore_json(t.admin, Kind::team, uuid_of(t.a)).has_value());
  CHECK(problems_of(s).empty());

  // A > B > C > A: the 300 teams below C are not on the cycle, only under it.
  write_containment(s, uuid_of(t.c), uuid_of(t.a));
  auto problems = problems_of(s);
  REQUIRE(problems.size() == 3);
  for (const auto* team : {&t.a, &t.b, &t.c})
    CHECK_THAT(problems[0] + problems[1] + problems[2],
               Catch::Contains("(" + test::id_of(*team) + ") is its own ancestor"));

  // The deepest team made the parent of the top one: every team of the chain is on the cycle.
  auto s2 = Store::in_memory(test::test_options()).value();
  auto t2 = chain(s2);
  const auto deepest = extend(s2, t2.admin, t2.c, 40, "E");
  write_containment(s2, uuid_of(deepest), uuid_of(t2.a));
  CHECK(problems_of(s2).size() == 43);
}

TEST_CASE("recursive deletes and restores of a stored team cycle end", "[teams][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  write_containment(s, uuid_of(t.c), uuid_of(t.a));
  GetOptions all, deleted;
  all.include = Include::all;
  deleted.include = Include::deleted;

  SECTION("a recursive hard delete takes the whole cycle") {
    DeleteOptions hard;
    hard.hard_delete = true;
    hard.recursive = true;
    REQUIRE(s.remove_json(t.admin, Kind::team, uuid_of(t.b), hard).has_value());
    for (const auto* team : {&t.a, &t.b, &t.c})
      CHECK(s.get_json(t.admin, Kind::team, uuid_of(*team), all).error().kind() ==
            ErrorKind::not_found);
    CHECK(problems_of(s).empty());
  }
  SECTION("a recursive soft delete, then restore of the team named") {
    DeleteOptions soft;
    soft.recursive = true;
    REQUIRE(s.remove_json(t.admin, Kind::team, uuid_of(t.a), soft).has_value());
    for (const auto* team : {&t.a, &t.b, &t.c})
      CHECK(s.get_json(t.admin, Kind::team, uuid_of(*team), deleted).has_value());
    // A's parent C went with A's delete and comes back with A: no "restore C first" for ever.
    auto restored = s.restore_json(t.admin, Kind::team, uuid_of(t.a));
    REQUIRE(restored.has_value());
    for (const auto* team : {&t.a, &t.b, &t.c})
      CHECK(s.get_json(t.admin, Kind::team, uuid_of(*team)).has_value());
    // In a cycle each team is below each other: restoring B brings A and C back with it.
    REQUIRE(s.remove_json(t.admin, Kind::team, uuid_of(t.a), soft).has_value());
    REQUIRE(s.restore_json(t.admin, Kind::team, uuid_of(t.b)).has_value());
    for (const auto* team : {&t.a, &t.b, &t.c})
      CHECK(s.get_json(t.admin, Kind::team, uuid_of(*team)).has_value());
    // A team below the cycle still needs its parent back first (docs/SEMANTICS.md §7).
    auto d = s.create_json(t.admin, Kind::team,
                           parse(R"({"name":"D","teamType":"Group","parents":[")" +
                                 test::id_of(t.c) + R"("]})"))
                 .value();
    REQUIRE(s.remove_json(t.admin, Kind::team, uuid_of(t.a), soft).has_value());
    CHECK(s.get_json(t.admin, Kind::team, uuid_of(d), deleted).has_value());
    auto early = s.restore_json(t.admin, Kind::team, uuid_of(d));
    REQUIRE_FALSE(early.has_value());
    CHECK(early.error().code() == Errc::container_deleted);
    CHECK_THAT(early.error().message(), Catch::Contains("restore team C first"));
    CHECK(problems_of(s).size() == 3);  // the cycle, and nothing else
  }
  SECTION("a non-recursive delete of a team in the cycle is not empty") {
    DeleteOptions hard;
    hard.hard_delete = true;
    auto r = s.remove_json(t.admin, Kind::team, uuid_of(t.c), hard);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::not_empty);
  }
}

TEST_CASE("a restore brings back no team under a parent the same delete took",
          "[teams][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  auto p = s.create_json(t.admin, Kind::team, parse(R"({"name":"P","teamType":"Department"})"))
               .value();
  REQUIRE(s.patch_json(t.admin, Kind::team, uuid_of(t.a), parse(parents_patch(p))).has_value());
  write_containment(s, uuid_of(t.c), uuid_of(t.a));  // P > A > B > C > A
  DeleteOptions soft;
  soft.recursive = true;
  REQUIRE(s.remove_json(t.admin, Kind::team, uuid_of(p), soft).has_value());
  const auto before = test::dump(s);
  // B's cycle would bring A back, and A lives in P, which the same delete took.
  auto r = s.restore_json(t.admin, Kind::team, uuid_of(t.b));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::container_deleted);
  CHECK_THAT(r.error().message(), Catch::Contains("restore team P first"));
  CHECK(test::dump(s) == before);
  REQUIRE(s.restore_json(t.admin, Kind::team, uuid_of(p)).has_value());
  for (const auto* team : {&t.a, &t.b, &t.c})
    CHECK(s.get_json(t.admin, Kind::team, uuid_of(*team)).has_value());
}

TEST_CASE("a team's new type must suit its child teams too", "[teams][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto admin = s.principal("admin").value();
  auto o = s.create_json(admin, Kind::team, parse(R"({"name":"O","teamType":"Organization"})"))
               .value();
  auto x = s.create_json(admin, Kind::team,
                         parse(R"({"name":"X","teamType":"BusinessUnit","parents":[")" +
                               test::id_of(o) + R"("]})"))
               .value();
  s.create_json(admin, Kind::team,
                parse(R"({"name":"D","teamType":"Division","parents":[")" + test::id_of(x) +
                      R"("]})"))
      .value();
  const auto before = test::dump(s);
  // A Division's parent is a Division, BusinessUnit or Organization: not a Department.
  auto r = s.patch_json(admin, Kind::team, uuid_of(x), parse(R"({"teamType":"Department"})"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::team_rule);
  CHECK(r.error().message() ==
        "Team X can't change its type: for its child team D, Team of type Division can't have a "
        "parent of type Department (X)");
  CHECK(test::dump(s) == before);
  CHECK(s.verify().value().empty());
  // A type the child accepts is fine.
  CHECK(s.patch_json(admin, Kind::team, uuid_of(x), parse(R"({"teamType":"Division"})"))
            .has_value());
}

TEST_CASE("a patch the rules on the number of parents refuse is 400, even naming a missing team",
          "[teams]") {
  // docs/SEMANTICS.md §14: the team rules (step 8) before the 404 of a missing reference (9).
  auto s = Store::in_memory(test::test_options()).value();
  auto t = chain(s);
  auto org = s.create_json(t.admin, Kind::team, parse(R"({"name":"O","teamType":"Organization"})"))
                 .value();
  const auto before = test::dump(s);
  const std::string missing = R"({"id":"00000000-0000-0000-0000-000000000001","type":"team"})";
  auto r = s.patch_json(t.admin, Kind::team, uuid_of(org), parse(R"({"parents":[)" + missing + "]}"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::team_rule);
  CHECK(r.error().message() == "Team of type Organization can't have parents");
  // A reference of another type is a value (§14 step 3): invalid_value before any team rule.
  r = s.patch_json(t.admin, Kind::team, uuid_of(org),
                   parse(R"({"parents":[{"id":"00000000-0000-0000-0000-000000000001","type":"user"}]})"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::invalid_value);
  CHECK(r.error().message() == "Invalid parents type user: must be team");
  // A type that allows the parent: the missing team is 404.
  r = s.patch_json(t.admin, Kind::team, uuid_of(t.b), parse(R"({"parents":[)" + missing + "]}"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind() == ErrorKind::not_found);
  CHECK(test::dump(s) == before);
}
