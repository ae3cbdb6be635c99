// Typed edits (Store::update<E>): a C++ host changes an entity in a lambda and gets exactly what
// the equivalent patch gives (version step, change description, events, authorization and
// refusals), with optimistic retries when someone else wrote in between.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catalog/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <random>
#include <thread>
#include <vector>

namespace {

using catalog::Errc;
using catalog::Glossary;
using catalog::MlModel;
using test::version_of;

struct Fixture : test::MemoryFixture {
  catalog::Principal admin = store.principal("admin").value();

  catalog::Glossary glossary(const std::string& name) {
    catalog::CreateGlossary g;
    g.name = name;
    g.description = "first";
    return store.create<Glossary>(admin, g).value();
  }
};

}  // namespace

TEST_CASE_METHOD(Fixture, "an edit is the equivalent patch") {
  auto a = glossary("A");
  auto b = glossary("B");
  auto edited = store.update<Glossary>(admin, a.id, [](Glossary& g) {
    g.description = "second";
    g.display_name = "The A";
  });
  REQUIRE(edited);
  auto patched = store.patch<Glossary>(
      admin, b.id, test::parse(R"({"description":"second","displayName":"The A"})"));
  REQUIRE(patched);
  CHECK(edited->description == "second");
  CHECK(edited->version == patched->version);
  CHECK(edited->version.to_string() == "0.2");
  auto with_names = [](const catalog::ChangeDescription& c) {
    std::vector<std::string> names;
    for (const auto* list : {&c.fields_added, &c.fields_updated, &c.fields_deleted})
      for (const auto& f : *list)
        names.push_back(f.name + "=" + catalog::json::serialize(catalog::to_json(f)));
    std::sort(names.begin(), names.end());
    return names;
  };
  REQUIRE(edited->change_description);
  CHECK(with_names(*edited->change_description) == with_names(*patched->change_description));
  auto history = store.history<Glossary>(admin, a.id).value();
  CHECK(history.versions.size() == 2);
}

TEST_CASE_METHOD(Fixture, "an edit that changes nothing writes nothing") {
  auto a = glossary("A");
  auto before = test::dump(store);
  auto same = store.update<Glossary>(admin, a.id, [](Glossary&) {});
  REQUIRE(same);
  CHECK(same->version.to_string() == "0.1");
  CHECK(test::dump(store) == before);
}

TEST_CASE_METHOD(Fixture, "an edit is refused as the patch would be, and changes nothing") {
  auto a = glossary("A");
  auto before = test::dump(store);
  SECTION("a read-only field") {
    auto r = store.update<Glossary>(admin, a.id, [](Glossary& g) { g.name = "Renamed"; });
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Errc::read_only_field);
    auto v = store.update<Glossary>(admin, a.id, [](Glossary& g) { g.deleted = true; });
    REQUIRE_FALSE(v);
    CHECK(v.error().code() == Errc::read_only_field);
  }
  SECTION("an expected version that is not the current one") {
    catalog::PatchOptions o;
    o.expected_version = catalog::Version::parse("0.3").value();
    auto r = store.update<Glossary>(
        admin, a.id, [](Glossary& g) { g.description = "x"; }, o);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Errc::version_mismatch);
  }
  SECTION("a user without the right") {
    catalog::CreateUser u;
    u.name = "carol";
    u.email = "carol@example.com";
    REQUIRE(store.create<catalog::User>(admin, u));
    before = test::dump(store);
    auto carol = store.principal("carol").value();
    auto r = store.update<Glossary>(carol, a.id, [](Glossary& g) { g.description = "x"; });
    REQUIRE_FALSE(r);
    CHECK(r.error().kind() == catalog::ErrorKind::forbidden);
  }
  SECTION("a soft-deleted entity") {
    REQUIRE(store.remove<Glossary>(admin, a.id).has_value());
    before = test::dump(store);
    auto r = store.update<Glossary>(admin, a.id, [](Glossary& g) { g.description = "x"; });
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Errc::not_found);
    CHECK(r.error().message().find("deleted") != std::string::npos);
  }
  CHECK(test::dump(store) == before);
}

TEST_CASE_METHOD(Fixture, "a major field of an ML model is a major version, by FQN too") {
  catalog::CreateService s;
  s.name = "mlflow";
  s.service_type = "Mlflow";
  REQUIRE(store.create<catalog::MlModelService>(admin, s));
  catalog::CreateMlModel m;
  m.name = "churn";
  m.service = "mlflow";
  m.algorithm = "xgb";
  REQUIRE(store.create<MlModel>(admin, m));
  auto r = store.update<MlModel>(admin, catalog::EntityKey::by_fqn("mlflow.churn"),
                                 [](MlModel& model) { model.algorithm = "lightgbm"; });
  REQUIRE(r);
  CHECK(r->version.to_string() == "1.1");
  CHECK(r->algorithm == "lightgbm");
}

TEST_CASE("concurrent edits lose nothing: each reads and writes in one transaction") {
  test::LmdbFixture f;
  auto admin = f.store.principal("admin").value();
  catalog::CreateGlossary g;
  g.name = "Shared";
  g.description = "";
  auto id = f.store.create<Glossary>(admin, g).value().id;
  constexpr int threads = 4, edits = 25;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < edits; ++i) {
        auto r = f.store.update<Glossary>(admin, id, [&](Glossary& e) {
          *e.description += static_cast<char>('a' + t);
        });
        REQUIRE(r);
      }
    });
  for (auto& w : workers) w.join();
  auto final = f.store.get<Glossary>(admin, id).value();
  REQUIRE(final.description->size() == threads * edits);
  for (int t = 0; t < threads; ++t)
    CHECK(std::count(final.description->begin(), final.description->end(), 'a' + t) == edits);
  CHECK(final.version.to_string() == "10.1");  // 0.1 + 100 steps of 0.1
  CHECK(f.store.verify().value().empty());
}

// A patch that names only own members and relationships reads only those (docs/SEMANTICS.md
// §15); one that names more reads the whole entity. The two must answer alike: twin glossaries
// get the same seeded random patches, the second's each naming also `votes` at its current value
// (which changes nothing, and makes the patch read the whole entity).
TEST_CASE_METHOD(Fixture, "a patch that reads only the members it names answers as a whole one") {
  namespace bj = boost::json;
  catalog::CreateUser u;
  u.name = "bob";
  u.email = "bob@example.com";
  const auto bob = catalog::to_string(store.create<catalog::User>(admin, u).value().id);
  const auto a = glossary("Twin1");
  const auto b = glossary("Twin2");
  const std::string a_id = catalog::to_string(a.id), b_id = catalog::to_string(b.id);
  const std::vector<std::string> names = {"description", "displayName", "tags", "owners",
                                          "reviewers", "extension", "mutuallyExclusive",
                                          "domains", "name", "version", "bogus", "followers"};
  const std::vector<std::string> values = {
      R"("x")", R"("y z")", "null", "1", "true", "[]", "{}", R"({"a":1,"b":{"c":null}})",
      R"([{"tagFQN":"PII.Sensitive"}])", R"([{"tagFQN":"B.A"},{"tagFQN":"PII.Sensitive"}])",
      R"([{"id":")" + bob + R"(","type":"user"}])", R"([{"id":")" + bob + R"(","type":"team"}])",
      R"([{"id":"00000000-0000-0000-0000-000000000001","type":"user"}])"};
  std::mt19937 random(20261129);
  const auto pick = [&](const std::vector<std::string>& from) {
    return from[random() % from.size()];
  };
  // What an answer says, with the twin's id and name, and the time, taken out.
  const auto said = [&](const catalog::Result<bj::object>& r) {
    if (!r) return std::to_string(static_cast<int>(r.error().code())) + " " + r.error().message();
    bj::object o = *r;
    o.erase("updatedAt");
    auto text = catalog::json::serialize(o);
    for (auto [from, to] :
         {std::pair{b_id, a_id}, std::pair{std::string("Twin2"), std::string("Twin1")}})
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at))
        text.replace(at, from.size(), to);
    return text;
  };
  int changed = 0, refused = 0;
  for (int i = 0; i < 400; ++i) {
    const bool merge = random() % 2 == 0;
    std::string body;
    const int members = 1 + static_cast<int>(random() % 2);
    std::string first;
    for (int m = 0; m < members; ++m) {
      const auto name = pick(names);
      const auto value = pick(values);
      if (m == 0) first = name;
      if (m > 0 && merge && name == first) continue;  // a member named twice is not JSON text
      if (merge) {
        body += (m ? "," : "") + ("\"" + name + "\":" + value);
      } else {
        const std::string op = random() % 3 == 0 ? "add" : random() % 2 ? "replace" : "remove";
        body += std::string(m ? "," : "") + R"({"op":")" + op + R"(","path":"/)" + name + "\"" +
                (op == "remove" ? "" : ",\"value\":" + value) + "}";
      }
    }
    auto votes =
        store.get_json(admin, catalog::Kind::glossary, b.id, {{"votes"}}).value().at("votes");
    const auto votes_text = catalog::json::serialize(votes);
    const auto partial = merge ? "{" + body + "}" : "[" + body + "]";
    const auto whole = merge ? "{" + body + ",\"votes\":" + votes_text + "}"
                             : "[" + body + R"(,{"op":"test","path":"/votes","value":)" +
                                   votes_text + "}]";
    INFO(partial);
    auto one = store.patch_json(admin, catalog::Kind::glossary, a.id, test::parse(partial));
    auto two = store.patch_json(admin, catalog::Kind::glossary, b.id, test::parse(whole));
    REQUIRE(said(one) == said(two));
    (one ? changed : refused) += 1;
  }
  // The sequence exercises both outcomes.
  CHECK(changed > 40);
  CHECK(refused > 40);
  CHECK(store.history<Glossary>(admin, a.id).value().versions.size() ==
        store.history<Glossary>(admin, b.id).value().versions.size());
}
