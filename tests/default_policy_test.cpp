// What the default policy (docs/SEMANTICS.md §12) does not allow, each an escalation that was
// possible: claiming an ownerless team, user or policy (the team's policies would go with it);
// creating anything by naming oneself its owner; reading an entity through a patch that changes
// nothing. Each refusal is forbidden and leaves the store as it was.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

using namespace catalog;
using test::parse;
using test::uuid_of;

namespace {

// A user `name` made by the admin, as a principal.
Principal user(Store& s, const std::string& name) {
  s.create_json(s.principal("admin").value(), Kind::user,
                parse(R"({"name":")" + name + R"(","email":")" + name + R"(@example.com"})"))
      .value();
  return s.principal(name).value();
}

}  // namespace

TEST_CASE("the default policy lets nobody claim an ownerless team, user or policy",
          "[authorization][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto admin = s.principal("admin").value();
  auto mallory = user(s, "mallory");
  auto victim = user(s, "victim");
  auto everything = s.create_json(admin, Kind::policy,
                                  parse(R"({"name":"everything","rules":[{"name":"all",
                                  "effect":"allow","resources":["all"],"operations":["All"]}]})"))
                        .value();
  auto team = s.create_json(admin, Kind::team,
                            parse(R"({"name":"Powerful","policies":[")" + test::id_of(everything) +
                                  R"("]})"))
                  .value();
  auto glossary = s.create_json(admin, Kind::glossary,
                                parse(R"({"name":"Theirs","description":"d","owners":[{"id":")" +
                                      to_string(victim.id) + R"(","type":"user"}]})"))
                      .value();
  const auto before = test::dump(s);
  const std::string claim =
      R"({"owners":[{"id":")" + to_string(mallory.id) + R"(","type":"user"}]})";
  for (auto [kind, target] : {std::pair{Kind::team, uuid_of(team)},
                              {Kind::policy, uuid_of(everything)},
                              {Kind::user, victim.id}}) {
    auto r = s.patch_json(mallory, kind, target, parse(claim));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::forbidden);
    CHECK_THAT(r.error().message(), Catch::Contains("EditOwners"));
  }
  // Without the team's policies, the glossary of another stays out of reach.
  DeleteOptions hard;
  hard.hard_delete = true;
  CHECK(s.remove_json(mallory, Kind::glossary, uuid_of(glossary), hard).error().kind() ==
        ErrorKind::forbidden);
  CHECK(test::dump(s) == before);
  // Data assets without owners may still be claimed by anyone.
  auto lone = s.create_json(admin, Kind::glossary, parse(R"({"name":"Lone","description":"d"})"))
                  .value();
  CHECK(s.patch_json(mallory, Kind::glossary, uuid_of(lone), parse(claim)).has_value());
}

TEST_CASE("naming oneself owner of what one creates grants no Create", "[authorization][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto admin = s.principal("admin").value();
  auto mallory = user(s, "mallory");
  auto glossary = s.create_json(admin, Kind::glossary,
                                parse(R"({"name":"Theirs","description":"d","owners":[{"id":")" +
                                      to_string(mallory.id) + R"(","type":"user"}]})"))
                      .value();
  const auto before = test::dump(s);
  const std::string me = R"([{"id":")" + to_string(mallory.id) + R"(","type":"user"}])";
  // A policy of one's own, a team that carries it with oneself in it, a glossary, a term in a
  // glossary one owns: each names mallory as owner, and each is refused.
  const std::pair<Kind, std::string> creates[] = {
      {Kind::policy, R"({"name":"mine","rules":[{"name":"all","effect":"allow","resources":["all"],"operations":["All"]}],"owners":)" + me + "}"},
      {Kind::team, R"({"name":"Mine","users":[")" + to_string(mallory.id) + R"("],"owners":)" + me + "}"},
      {Kind::glossary, R"({"name":"Mine","description":"d","owners":)" + me + "}"},
      {Kind::glossary_term, R"({"glossary":"Theirs","name":"T","description":"t","owners":)" + me + "}"},
  };
  for (const auto& [kind, body] : creates) {
    auto r = s.create_json(mallory, kind, parse(body));
    INFO(body);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::forbidden);
    CHECK_THAT(r.error().message(), Catch::Contains("Create"));
  }
  CHECK(test::dump(s) == before);
  // The owner still edits and deletes what it owns.
  CHECK(s.patch_json(mallory, Kind::glossary, uuid_of(glossary), parse(R"({"description":"e"})"))
            .has_value());
}

TEST_CASE("a patch that changes nothing answers only those who may view the entity",
          "[authorization][hardening]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto admin = s.principal("admin").value();
  auto mallory = user(s, "mallory");
  auto blind = s.create_json(admin, Kind::policy,
                             parse(R"({"name":"blind","rules":[{"name":"no","effect":"deny",
                             "resources":["all"],"operations":["ViewAll","ViewBasic"]}]})"))
                   .value();
  s.create_json(admin, Kind::team,
                parse(R"({"name":"Blind","users":[")" + to_string(mallory.id) +
                      R"("],"policies":[")" + test::id_of(blind) + R"("]})"))
      .value();
  auto glossary =
      s.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"d"})")).value();
  CHECK(s.get_json(mallory, Kind::glossary, uuid_of(glossary)).error().kind() ==
        ErrorKind::forbidden);
  for (const char* body : {"{}", "[]", R"({"description":"d"})"}) {
    auto r = s.patch_json(mallory, Kind::glossary, uuid_of(glossary), parse(body));
    INFO(body);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::forbidden);
  }
  CHECK(s.patch_json(admin, Kind::glossary, uuid_of(glossary), parse("{}")).has_value());
}
