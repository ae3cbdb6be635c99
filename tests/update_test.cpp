// Typed edits (Store::update<E>): a C++ host changes an entity in a lambda and gets exactly what
// the equivalent patch gives (version step, change description, events, authorization and
// refusals), with optimistic retries when someone else wrote in between.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catalog/json.hpp>

#include <catch2/catch.hpp>

#include <string>
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
