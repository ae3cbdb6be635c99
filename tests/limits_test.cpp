// docs/SEMANTICS.md §15 limits on what a request produces, not only on what it sends: a JSON Patch that nests a
// document without bound or doubles it per operation is refused with 400 before anything is
// stored, whoever sends it; a document too large or too deep for the store is refused at
// create and patch; a bad name inside an FQN is a bad request in a path as in a cursor. Also
// the measuring and the patch budget of the JSON codec. Values a C++ caller builds are held to
// what a JSON body's parse allows, and store options that cannot work fail the open.
#include <catalog/json.hpp>
#include <catalog/json_patch.hpp>

#include "rest_support.hpp"

#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/store.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <random>
#include <string>

namespace {

using namespace rest_test;
namespace cj = catalog::json;
using catalog::Errc;

// A seeded random JSON value of bounded depth, for checking measure against serialize.
bj::value random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 0 ? 7 : 5);
  switch (pick(rng)) {
  case 0: return nullptr;
  case 1: return rng() % 2 == 0;
  case 2: return static_cast<std::int64_t>(rng()) - (1LL << 31);
  case 3: return static_cast<std::uint64_t>(rng()) << 32 | rng();
  case 4: return std::ldexp(static_cast<double>(rng()), static_cast<int>(rng() % 80) - 40);
  case 5: {
    std::string s;
    for (unsigned n = rng() % 12; n > 0; --n) {
      constexpr std::string_view alphabet = "ab\"\\\n\t\x01\x1f/ \xc3\xa9";
      s += alphabet[rng() % alphabet.size()];
    }
    return bj::string(s);
  }
  case 6: {
    bj::array a;
    for (unsigned n = rng() % 5; n > 0; --n) a.push_back(random_value(rng, depth - 1));
    return a;
  }
  default: {
    bj::object o;
    for (unsigned n = rng() % 5; n > 0; --n)
      o["k" + std::to_string(rng() % 100) + "\n"] = random_value(rng, depth - 1);
    return o;
  }
  }
}

// A parsed JSON Patch applied with explicit limits; the error code when it fails.
std::optional<Errc> patch_error(const bj::value& doc, std::string_view patch,
                                cj::PatchLimits limits = {}) {
  auto p = cj::parse(patch);
  REQUIRE(p);
  auto r = cj::apply_json_patch(doc, *p, limits);
  if (r) return std::nullopt;
  return r.error().code();
}

struct ModelFixture : Fixture {
  std::string model;
  std::string bob = token_for("bob");
  ModelFixture() {
    create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
    model = create("mlmodels", R"({"name":"churn","service":"mlflow","algorithm":"xgb"})");
    create("users", R"({"name":"bob","email":"bob@example.com"})");
  }

  // The store answers for the model exactly as before: entity, list, versions, events.
  void require_readable() const {
    auto entity = ok("GET", "/v1/mlmodels/" + model + "?fields=*");
    REQUIRE(entity.at("version").as_double() == 0.1);
    REQUIRE(ok("GET", "/v1/mlmodels").at("data").as_array().size() == 1);
    REQUIRE(ok("GET", "/v1/mlmodels/" + model + "/versions").at("versions").as_array().size() == 1);
    REQUIRE(ok("GET", "/v1/events?limit=100").at("data").is_array());
  }
};

}  // namespace

TEST_CASE("measure is the serialized size and the nesting, without recursion") {
  std::mt19937 rng(9);
  for (int i = 0; i < 2000; ++i) {
    auto v = random_value(rng, 6);
    auto e = cj::measure(v);
    INFO(cj::serialize(v));
    REQUIRE(e.bytes == cj::serialize(v).size());
  }
  CHECK(cj::measure(bj::value(1)).depth == 0);
  CHECK(cj::measure(cj::parse("[]").value()).depth == 1);
  CHECK(cj::measure(cj::parse(R"({"a":[{"b":[]}]})").value()).depth == 4);
  CHECK(cj::measure(cj::parse(R"([1,[2,[3]],{"x":{}}])").value()).depth == 3);
  SECTION("stops once past the limit") {
    bj::array big(1000, bj::array(100, bj::value(12345)));
    auto e = cj::measure(big, 1000);
    CHECK(e.bytes > 1000);
    CHECK(e.bytes < 2000);
  }
}

TEST_CASE("a JSON Patch may not nest the document deeper than its limit, however it moves") {
  auto doc = cj::parse(R"({"extension":{}})").value();
  // One triple reaches 63 levels: within 64; two would reach about 123.
  CHECK_FALSE(patch_error(doc, deepening_patch(1)));
  CHECK(patch_error(doc, deepening_patch(2)) == Errc::too_deep);
  CHECK(patch_error(doc, deepening_patch(2000)) == Errc::too_deep);
  cj::PatchLimits shallow{10, 1 << 20};
  CHECK(patch_error(doc, R"([{"op":"add","path":"/a","value":[[[[[[[[[[1]]]]]]]]]]}])", shallow) ==
        Errc::too_deep);
  CHECK_FALSE(patch_error(doc, R"([{"op":"add","path":"/a","value":[[[[[[[[[1]]]]]]]]]}])", shallow));
  // copy and replace count too; moving a value up never needs measuring.
  CHECK(patch_error(cj::parse(R"({"a":[[[[[[[[1]]]]]]]],"b":{"c":{}}})").value(),
                    R"([{"op":"copy","from":"/a","path":"/b/c/d"}])", shallow) == Errc::too_deep);
  CHECK_FALSE(patch_error(cj::parse(R"({"b":{"c":{"d":[[1]]}}})").value(),
                          R"([{"op":"move","from":"/b/c/d","path":"/e"}])", shallow));
}

TEST_CASE("a JSON Patch may not build more than its byte budget") {
  auto doc = cj::parse(R"({"extension":{},"description":"0123456789"})").value();
  // Each copy of the whole document doubles it: 20 copies would be over 20 MB from 1 KB.
  CHECK(patch_error(doc, doubling_patch(20)) == Errc::too_large);
  CHECK(patch_error(doc, doubling_patch(40)) == Errc::too_large);
  CHECK_FALSE(patch_error(doc, doubling_patch(5)));
  cj::PatchLimits small{cj::max_document_depth, 100};
  CHECK(patch_error(doc, R"([{"op":"add","path":"/a","value":")" + std::string(120, 'x') + "\"}]",
                    small) == Errc::too_large);
  // The budget is spent across operations, not per operation.
  std::string many = "[";
  for (int i = 0; i < 20; ++i)
    many += std::string(i ? "," : "") + R"({"op":"replace","path":"/description","value":"0123456789"})";
  CHECK(patch_error(doc, many + "]", small) == Errc::too_large);
}

TEST_CASE_METHOD(ModelFixture, "finding 1 and 2: a deepening patch is refused and stores nothing") {
  auto before = test::dump(store);
  for (int triples : {2, 70, 1700}) {
    INFO(triples);
    require_error(call("PATCH", "/v1/mlmodels/" + model, deepening_patch(triples)), 400,
                  "BAD_REQUEST", "deeper than 64");
    REQUIRE(test::dump(store) == before);
    require_readable();
  }
  SECTION("sent by a user with no rights, the same answer (the patch fails before S14 step 7)") {
    auto body = deepening_patch(11000);  // about 7 MB, under the 8 MiB body limit
    REQUIRE(body.size() > 6'900'000);
    require_error(call("PATCH", "/v1/mlmodels/" + model, body, {}, bob), 400, "BAD_REQUEST");
    REQUIRE(test::dump(store) == before);
  }
  SECTION("a patch within the limit still applies") {
    auto e = ok("PATCH", "/v1/mlmodels/" + model, deepening_patch(1));
    REQUIRE(e.at("version").as_double() == Approx(0.2));
    REQUIRE(ok("GET", "/v1/mlmodels/" + model + "/versions").at("versions").as_array().size() == 2);
  }
}

TEST_CASE_METHOD(ModelFixture, "finding 3: a doubling patch is refused early, whoever sends it") {
  auto before = test::dump(store);
  for (int copies : {20, 40}) {
    require_error(call("PATCH", "/v1/mlmodels/" + model, doubling_patch(copies)), 400,
                  "BAD_REQUEST", "bytes");
    require_error(call("PATCH", "/v1/mlmodels/" + model, doubling_patch(copies), {}, bob), 400,
                  "BAD_REQUEST", "bytes");
    REQUIRE(test::dump(store) == before);
  }
  require_readable();
  // Without the budget, bob would be refused (403) only after the copies were made.
  require_error(call("PATCH", "/v1/mlmodels/" + model, doubling_patch(3), {}, bob), 403,
                "FORBIDDEN");
}

TEST_CASE_METHOD(ModelFixture, "a patch result larger than the body limit is refused") {
  std::string big(5'000'000, 'd');
  ok("PATCH", "/v1/mlmodels/" + model, R"({"description":")" + big + "\"}");
  auto before = test::dump(store);
  // Each body is under 8 MiB; the result of copying the description would not be.
  require_error(call("PATCH", "/v1/mlmodels/" + model,
                     R"([{"op":"copy","from":"/description","path":"/displayName"}])"),
                400, "BAD_REQUEST", "larger than 8388608 bytes");
  require_error(call("PATCH", "/v1/mlmodels/" + model, R"({"displayName":")" + big + "\"}"), 400,
                "BAD_REQUEST", "larger than");
  REQUIRE(test::dump(store) == before);
}

TEST_CASE("the C++ API holds values to the same limits as REST bodies") {
  auto store = catalog::Store::in_memory(test::test_options()).value();
  auto admin = store.principal("admin").value();
  bj::value deep = bj::object();
  for (int i = 0; i < 70; ++i) deep = bj::object{{"x", std::move(deep)}};
  bj::object glossary{{"name", "G"}, {"description", "d"}, {"extension", deep}};
  auto r = store.create_json(admin, catalog::Kind::glossary, glossary);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == Errc::too_deep);

  auto options = test::test_options();
  options.max_document_bytes = 1000;
  auto small = catalog::Store::in_memory(std::move(options)).value();
  auto a = small.principal("admin").value();
  auto g = small.create_json(a, catalog::Kind::glossary, bj::object{{"name", "G"}, {"description", "d"}});
  REQUIRE(g);
  auto big = small.create_json(
      a, catalog::Kind::glossary,
      bj::object{{"name", "H"}, {"description", std::string(2000, 'x')}});
  REQUIRE_FALSE(big);
  CHECK(big.error().code() == Errc::too_large);
  auto p = small.patch_json(a, catalog::Kind::glossary, catalog::EntityKey::by_fqn("G"),
                            bj::object{{"description", std::string(2000, 'x')}});
  REQUIRE_FALSE(p);
  CHECK(p.error().code() == Errc::too_large);
  auto deep_patch = small.patch_json(a, catalog::Kind::glossary, catalog::EntityKey::by_fqn("G"),
                                     bj::object{{"extension", deep}});
  REQUIRE_FALSE(deep_patch);
  CHECK(deep_patch.error().code() == Errc::too_deep);

  // A patch reads only the members it names; the members it leaves count towards the limit too.
  auto wide = small.create_json(a, catalog::Kind::glossary,
                                bj::object{{"name", "W"}, {"description", std::string(600, 'x')}});
  REQUIRE(wide);
  const auto before = test::dump(small);
  auto grown = small.patch_json(a, catalog::Kind::glossary, catalog::EntityKey::by_fqn("W"),
                                bj::object{{"displayName", std::string(600, 'y')}});
  REQUIRE_FALSE(grown);
  CHECK(grown.error().code() == Errc::too_large);
  auto copied = small.patch_json(
      a, catalog::Kind::glossary, catalog::EntityKey::by_fqn("W"),
      test::parse(R"([{"op":"copy","from":"/description","path":"/displayName"}])"));
  REQUIRE_FALSE(copied);
  CHECK(copied.error().code() == Errc::too_large);
  CHECK(test::dump(small) == before);
  // A patch that shrinks the document passes.
  auto shrunk = small.patch_json(a, catalog::Kind::glossary, catalog::EntityKey::by_fqn("W"),
                                 bj::object{{"description", "short"}, {"displayName", "W"}});
  REQUIRE(shrunk);
  CHECK(shrunk->at("displayName") == "W");
}

TEST_CASE_METHOD(Fixture, "finding 6: a bad name inside an FQN is 400 in a path, as in a cursor") {
  create("glossaries", R"({"name":"Business","description":"d"})");
  for (std::string fqn : {"Business.a%00b", "a%3A%3Ab", "Business.%FF", "%22a%3A%3Ab.c%22",
                          "a%01", "%C3%28"}) {
    INFO(fqn);
    require_error(call("GET", "/v1/glossaries/name/" + fqn), 400, "BAD_REQUEST");
    require_error(call("GET", "/v1/glossaryTerms/name/" + fqn), 400, "BAD_REQUEST");
    require_error(call("DELETE", "/v1/glossaries/name/" + fqn), 400, "BAD_REQUEST");
  }
  // A valid name that does not exist is still 404.
  require_error(call("GET", "/v1/glossaries/name/Nothing"), 404, "NOT_FOUND");
  // The message names no invalid bytes: it stays valid JSON text.
  auto r = call("GET", "/v1/glossaries/name/%FF%FE");
  REQUIRE(cj::parse(r.body));
}

TEST_CASE("the C++ API refuses text that is not UTF-8 and numbers that are not finite, as a "
          "JSON body's parse does, and stores nothing, whatever the store's options") {
  test::TempDir dir;
  auto options = test::test_options();
  options.search_index = false;  // nothing reads the record back before the commit
  auto store = catalog::Store::open_lmdb(dir.path(), options).value();
  auto admin = store.principal("admin").value();
  catalog::CreateGlossary g;
  g.name = "G";
  g.description = "fine";
  REQUIRE(store.create<catalog::Glossary>(admin, g));
  const auto before = test::dump(store);

  g.name = "Latin1";
  g.description = "caf\xe9";
  auto typed = store.create<catalog::Glossary>(admin, g);
  REQUIRE_FALSE(typed);
  CHECK(typed.error().code() == Errc::invalid_json);
  auto display = store.create_json(
      admin, catalog::Kind::glossary,
      bj::object{{"name", "D"}, {"description", "d"}, {"displayName", "\xed\xa0\x80"}});
  REQUIRE_FALSE(display);
  CHECK(display.error().code() == Errc::invalid_json);
  bj::object bad_member{{"name", "M"}, {"description", "d"}};
  bad_member["x\xff"] = 1;
  auto member = store.create_json(admin, catalog::Kind::glossary, bad_member);
  REQUIRE_FALSE(member);
  CHECK(member.error().code() == Errc::invalid_json);
  auto merged = store.patch_json(admin, catalog::Kind::glossary, catalog::EntityKey::by_fqn("G"),
                                 bj::object{{"description", "\xff"}});
  REQUIRE_FALSE(merged);
  CHECK(merged.error().code() == Errc::invalid_json);
  auto not_finite = store.patch_json(
      admin, catalog::Kind::glossary, catalog::EntityKey::by_fqn("G"),
      bj::array{bj::object{{"op", "add"}, {"path", "/description"},
                           {"value", std::numeric_limits<double>::quiet_NaN()}}});
  REQUIRE_FALSE(not_finite);
  CHECK(not_finite.error().code() == Errc::invalid_json);
  auto edited = store.update<catalog::Glossary>(
      admin, catalog::EntityKey::by_fqn("G"),
      [](catalog::Glossary& e) { e.description = "tr\xc3uncated"; });
  REQUIRE_FALSE(edited);
  CHECK(edited.error().code() == Errc::invalid_json);
  CHECK(test::dump(store) == before);
  // Opened with the index on, as the text would have kept it from being: indexed and clean.
  auto indexed = catalog::Store::open_lmdb(dir.path(), test::test_options());
  REQUIRE(indexed);
  CHECK(indexed->verify().value().empty());

  // An Include that is none of its values, refused by get as by list.
  catalog::GetOptions get;
  get.include = static_cast<catalog::Include>(9);
  auto odd = store.get_json(admin, catalog::Kind::glossary, catalog::EntityKey::by_fqn("G"), get);
  REQUIRE_FALSE(odd);
  CHECK(odd.error().code() == Errc::invalid_parameter);
}

TEST_CASE("store options that cannot work fail the open, naming the option") {
  auto options = test::test_options();
  options.base_url = "http://catalog.example/\xe9";
  auto url = catalog::Store::in_memory(options);
  REQUIRE_FALSE(url);
  CHECK(url.error().code() == Errc::invalid_value);
  CHECK(url.error().message().find("base_url") != std::string::npos);

  // A deny rule whose condition does not read would never deny.
  options = test::test_options();
  catalog::PolicyRule rule;
  rule.name = "no-deletes";
  rule.effect = catalog::Effect::deny;
  rule.resources = {"all"};
  rule.operations = {"Delete"};
  rule.condition = "isOwner() && !noOwner( ";
  options.default_policy = std::vector<catalog::PolicyRule>{rule};
  auto policy = catalog::Store::in_memory(options);
  REQUIRE_FALSE(policy);
  CHECK(policy.error().code() == Errc::policy_rule);
  CHECK(policy.error().message().find("default_policy") != std::string::npos);

  // A map size that cannot be rounded up to a page wrapped to 0, and the open never returned.
  test::TempDir dir;
  catalog::storage::LmdbOptions lmdb;
  lmdb.map_size = std::numeric_limits<std::size_t>::max();
  auto huge = catalog::Store::open_lmdb(dir.path(), test::test_options(), lmdb);
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code() == Errc::invalid_value);
  CHECK(huge.error().message().find("map_size") != std::string::npos);
}
