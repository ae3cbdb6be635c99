// Stores written by an earlier main open with today's code and answer the same: the stored
// encoding and key schema may change, but stores already written must not be lost.
//
// tests/fixtures/store_schema2.pairs holds every key and value of a small store as main wrote it
// at key schema 2 (hex, one pair a line), made by the hidden "[.generate]" case below: every kind,
// histories with minor and major versions, a soft-deleted and restored tree, a soft-deleted term,
// a hard delete, followers, votes, a team with a policy. tests/fixtures/store_schema2.answers holds
// what rest::Api answered to a fixed list of reads of that store then (every list, every entity
// with all its fields, every history and version, the event log): one JSON line per read,
// {"method", "target", "status", "body"}. The test loads the pairs into a fresh backend (memory
// and LMDB), opens a Store over it, asks the same reads and wants the same bytes; then the store
// verifies clean and keeps working.
//
// Regenerate only when the store format changes, and keep the old files beside the new ones:
//   ./format_fixture_test "[.generate]"   (writes into tests/fixtures/)
#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/validate.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include "fixture_support.hpp"
#include "rest_support.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace catalog;
using namespace rest_test;
namespace bj = boost::json;

namespace {

// The store the fixture was made from, through the REST surface as a client builds one.
void build(const Fixture& f) {
  auto user = [&](std::string name) {
    return f.create("users", R"({"name":")" + name + R"(","email":")" + name + R"(@example.com"})");
  };
  auto alice = user("alice"), bob = user("bob"), carol = user("carol");
  auto policy = f.create("policies", R"j({"name":"no-deletes","rules":[{"name":"deny","effect":"deny","resources":["glossaryTerm"],"operations":["Delete"],"condition":"!isOwner()"}]})j");
  f.create("teams", R"({"name":"data","teamType":"Department","users":[")" + bob + R"("],"policies":[")" + policy + R"("]})");
  f.create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto churn = f.create("mlmodels", R"j({"name":"churn","service":"mlflow","algorithm":"xgboost","description":"Churn \u00e9t\u00e9 \"quoted\"","tags":[{"tagFQN":"PII.Sensitive"}],"owners":[{"id":")j" + alice + R"(","type":"user"}],"mlFeatures":[{"name":"age","dataType":"numerical"}]})");
  f.ok("PATCH", "/v1/mlmodels/" + churn, R"({"description":"Churn, second"})", 200,
       {{"Content-Type", "application/merge-patch+json"}});
  f.ok("PATCH", "/v1/mlmodels/" + churn, R"([{"op":"replace","path":"/algorithm","value":"lightgbm"}])", 200,
       {{"Content-Type", "application/json-patch+json"}});
  f.ok("PUT", "/v1/mlmodels/" + churn + "/followers", "\"" + bob + "\"");
  f.ok("PUT", "/v1/mlmodels/" + churn + "/followers", "\"" + carol + "\"");
  f.ok("PUT", "/v1/mlmodels/" + churn + "/vote", R"({"updatedVoteType":"votedUp"})");
  f.create("mlmodels", R"({"name":"ltv","service":"mlflow","algorithm":"linear"})");
  auto glossary = f.create("glossaries", R"({"name":"Business","description":"terms","reviewers":[{"id":")" + carol + R"(","type":"user"}]})");
  f.create("glossaryTerms", R"({"glossary":"Business","name":"Revenue","description":"money in","synonyms":["income"]})");
  f.create("glossaryTerms", R"({"glossary":"Business","parent":"Business.Revenue","name":"v1.0","description":"dotted"})");
  auto cost = f.create("glossaryTerms", R"({"glossary":"Business","name":"Cost","description":"money out","relatedTerms":["Business.Revenue"]})");
  f.ok("DELETE", "/v1/glossaries/" + glossary + "?recursive=true");
  f.ok("PUT", "/v1/glossaries/restore", R"({"id":")" + glossary + R"("})");
  f.ok("DELETE", "/v1/glossaryTerms/" + cost);
  auto gone = f.create("glossaryTerms", R"({"glossary":"Business","name":"Gone","description":"soon"})");
  REQUIRE(f.call("DELETE", "/v1/glossaryTerms/" + gone + "?hardDelete=true").status == 204);
  auto sales = f.create("domains", R"({"name":"Sales","domainType":"Aggregate","description":"sales","experts":["alice"]})");
  f.create("domains", R"({"name":"EMEA","domainType":"Source-aligned","description":"emea","parent":"Sales"})");
  f.ok("PUT", "/v1/domains/" + sales + "/followers", "\"" + alice + "\"");
  f.create("services/searchServices", R"({"name":"elastic","serviceType":"ElasticSearch"})");
  auto index = f.create("searchIndexes", R"({"name":"customers","service":"elastic","fields":[{"name":"id","dataType":"KEYWORD"},{"name":"address","dataType":"OBJECT","children":[{"name":"city","dataType":"TEXT"}]}]})");
  f.ok("PUT", "/v1/searchIndexes/" + index + "/vote", R"({"updatedVoteType":"votedDown"})");
  f.ok("PATCH", "/v1/searchIndexes/" + index, R"({"displayName":"Customers"})", 200,
       {{"Content-Type", "application/merge-patch+json"}});
}

const char* const collections[] = {
    "users", "teams", "policies", "services/mlmodelServices", "services/searchServices",
    "mlmodels",        "glossaries", "glossaryTerms", "domains",         "searchIndexes"};

// The reads the answers file records, made from the store itself: every list, then every
// entity with all its fields, its history and each of its versions, then the event log.
std::vector<std::string> reads(const Fixture& f) {
  std::vector<std::string> out;
  for (std::string c : collections) {
    out.push_back("/v1/" + c + "?include=all&limit=1000");
    out.push_back("/v1/" + c + "?include=all&limit=1000&fields=*");
    auto page = f.ok("GET", "/v1/" + c + "?include=all&limit=1000");
    for (const auto& e : page.at("data").as_array()) {
      auto id = str(e, "id");
      out.push_back("/v1/" + c + "/" + id + "?include=all&fields=*");
      out.push_back("/v1/" + c + "/" + id + "/versions");
      auto history = f.ok("GET", "/v1/" + c + "/" + id + "/versions");
      for (const auto& v : history.at("versions").as_array()) {
        auto version = bj::parse(v.as_string()).as_object();
        out.push_back("/v1/" + c + "/" + id + "/versions/" +
                      catalog::json::serialize(version.at("version")));
      }
    }
  }
  out.push_back("/v1/events?after=0&limit=1000");
  return out;
}

std::string answer_line(const std::string& target, const Response& r) {
  bj::object line;
  line["method"] = "GET";
  line["target"] = target;
  line["status"] = r.status;
  line["body"] = r.body;
  return catalog::json::serialize(line);
}

// Loads the pairs into `backend` in one transaction.
void load(storage::Backend& backend, const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto txn = backend.begin(storage::Mode::read_write).value();
  for (const auto& [k, v] : pairs) txn->put(k, v).value();
  txn->commit().value();
}

StoreOptions fixture_options() {
  auto options = test::test_options();
  options.jwt.hs256_keys = {{std::string(secret), {}}};
  options.clock = [] { return now_seconds * 1000; };
  return options;
}

void check_answers(Store& store) {
  Api api{store};
  std::ifstream in(fixtures + "/store_schema2.answers");
  REQUIRE(in);
  const auto admin = token_for("admin");
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    auto expected = bj::parse(line).as_object();
    Request r;
    r.method = "GET";
    r.target = std::string(expected.at("target").as_string());
    r.headers.emplace_back("Authorization", "Bearer " + admin);
    auto got = api.handle(r);
    INFO(r.target);
    CHECK(got.status == expected.at("status").as_int64());
    CHECK(got.body == std::string(expected.at("body").as_string()));
  }
  CHECK(n == 84);  // every read of the file: 20 lists, 17 entities and their histories, 29 versions, the events
}

}  // namespace

TEST_CASE("write the key schema 2 fixture", "[.generate]") {
  Fixture f;
  build(f);
  std::ofstream answers(fixtures + "/store_schema2.answers");
  for (const auto& target : reads(f)) answers << answer_line(target, f.call("GET", target)) << '\n';
  std::ofstream pairs(fixtures + "/store_schema2.pairs");
  auto txn = f.store.backend().begin(storage::Mode::read_only).value();
  auto cursor = txn->scan(storage::Range{}, storage::Direction::forward).value();
  for (; cursor->valid(); (void)cursor->next())
    pairs << hex(cursor->key()) << ' ' << hex(cursor->value()) << '\n';
}

TEST_CASE("a store written at key schema 2 opens and answers the same", "[format]") {
  const auto pairs = read_pairs(fixtures + "/store_schema2.pairs");
  REQUIRE(pairs.size() > 100);
  test::TempDir dir;
  for (bool on_lmdb : {false, true}) {
    INFO((on_lmdb ? "lmdb" : "memory"));
    std::unique_ptr<storage::Backend> backend;
    if (on_lmdb)
      backend = storage::LmdbBackend::open(dir.path()).value();
    else
      backend = std::make_unique<storage::MemoryBackend>();
    load(*backend, pairs);
    // Written before search: opening it builds the index, and says so through the log sink.
    std::vector<std::string> logged;
    auto options = fixture_options();
    options.log = [&](LogLevel level, std::string_view message) {
      CHECK(level == LogLevel::info);
      logged.emplace_back(message);
    };
    auto store = Store::open(std::move(backend), options).value();
    REQUIRE(logged.size() == 2);
    CHECK(logged[0].starts_with("building the search index (version "));
    CHECK(logged[1].starts_with("built the search index: "));
    CHECK_FALSE(logged[1].starts_with("built the search index: 0 "));
    check_answers(store);
    CHECK(store.verify().value().empty());
    // It keeps working: a change is one more version on top of the stored history.
    Api api{store};
    Request r;
    r.method = "PATCH";
    r.target = "/v1/glossaries/name/Business";  // PATCH by FQN (docs/REST.md)
    r.headers = {{"Authorization", "Bearer " + token_for("admin")},
                 {"Content-Type", "application/merge-patch+json"}};
    r.body = R"({"description":"after the upgrade"})";
    auto patched = api.handle(r);
    INFO(patched.body);
    REQUIRE(patched.status == 200);
    auto body = bj::parse(patched.body).as_object();
    CHECK(catalog::json::serialize(body.at("version")) == "0.4");
    CHECK(store.verify().value().empty());
  }
}

namespace {

// `json` (an entity as a JSON read gives it) read as the struct of `kind`, written back as JSON.
std::string as_struct(Kind kind, const bj::object& json) {
  return visit_kind(kind, [&]<class E>(std::type_identity<E>) -> std::string {
    auto e = catalog::from_json<E>(bj::value(json));
    REQUIRE(e.has_value());
    return catalog::json::serialize(catalog::to_json(*e));
  });
}

std::string any_as_json(const AnyEntity& e) {
  return std::visit([](const auto& v) { return catalog::json::serialize(catalog::to_json(v)); }, e);
}

}  // namespace

// Typed reads (Store::get<E>, list<E>) take the engine's structs without rendering their own
// fields as JSON; they must give what the JSON reads give, read as structs, for every entity of
// the fixture store with every field set, deleted or not, with and without a base URL.
TEST_CASE("typed reads give what the JSON reads give", "[format][typed]") {
  const auto pairs = read_pairs(fixtures + "/store_schema2.pairs");
  for (bool with_href : {false, true}) {
    INFO((with_href ? "with base_url" : "without base_url"));
    auto backend = std::make_unique<storage::MemoryBackend>();
    load(*backend, pairs);
    auto options = fixture_options();
    if (with_href) options.base_url = "http://catalog.test";
    auto store = Store::open(std::move(backend), options).value();
    const auto admin = store.principal("admin").value();
    std::size_t compared = 0;
    for (auto kind : all_kinds) {
      const auto& extras = info(kind).extra_fields;
      std::vector<std::vector<std::string>> field_sets{{}, {"*"}};
      for (auto extra : extras) field_sets.push_back({std::string(extra)});
      for (const auto& fields : field_sets) {
        ListOptions lo;
        lo.include = Include::all;
        lo.limit = 1000;
        lo.fields = fields;
        auto json_page = store.list_json(admin, kind, lo).value();
        auto typed_page = store.list_entities(admin, kind, lo).value();
        REQUIRE(json_page.data.size() == typed_page.data.size());
        CHECK(json_page.total == typed_page.total);
        CHECK(json_page.after == typed_page.after);
        for (std::size_t i = 0; i < typed_page.data.size(); ++i) {
          const auto& item = json_page.data[i].as_object();
          INFO(catalog::json::serialize(item));
          CHECK(any_as_json(typed_page.data[i]) == as_struct(kind, item));
          GetOptions go;
          go.include = Include::all;
          go.fields = fields;
          auto key = EntityKey::by_id(test::uuid_of(item));
          auto got = store.get_entity(admin, kind, key, go).value();
          auto got_json = store.get_json(admin, kind, key, go).value();
          CHECK(any_as_json(got) == as_struct(kind, got_json));
          ++compared;
        }
      }
    }
    CHECK(compared > 100);
  }
}

TEST_CASE("every stored record of the fixture decodes and encodes to the same bytes",
          "[format]") {
  // Records are structs now; the stored document they write must be the one they were read
  // from, byte for byte (member order, explicit nulls, numbers, escapes).
  std::size_t records = 0;
  for (const auto& [key, value] : read_pairs(fixtures + "/store_schema2.pairs")) {
    if (!engine::keys::decode_entity(key)) continue;
    auto r = engine::decode(value);
    REQUIRE(r.has_value());
    CHECK(engine::encode(*r) == value);
    ++records;
  }
  CHECK(records == 17);  // every entity of the fixture store
}

TEST_CASE("a document written by hand keeps its bytes through a record", "[format]") {
  // What an import may hold that the catalog would write differently: an integer version, a
  // change description with its members in another order, an explicit null, a nested change
  // without a member the struct has. The record keeps such members as written.
  const std::string change =
      R"({"fieldsUpdated":[{"newValue":"x","name":"description","oldValue":null}],)"
      R"("fieldsAdded":[{"newValue":1}],"fieldsDeleted":[],"previousVersion":1})";
  const std::string stored =
      R"({"k":"domain","doc":{"id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0","name":"D",)"
      R"("fullyQualifiedName":"D","description":"d","domainType":"Aggregate","version":2,)"
      R"("updatedAt":1,"updatedBy":"a","deleted":false,"displayName":null,)"
      R"("changeDescription":)" + change + "}}";
  auto r = engine::decode(stored);
  REQUIRE(r.has_value());
  CHECK(engine::encode(*r) == stored);
  CHECK(catalog::json::serialize(r->member("changeDescription").value()) == change);
  CHECK(r->member("displayName").value().is_null());
  CHECK(r->version() == Version::parse("2.0").value());
}

TEST_CASE("a member that does not convert leaves the record as it was", "[format]") {
  // Record::set_member converts aside: a bad element late in an array neither half-writes the
  // member nor stores it, and the error is the request's (bad_request).
  auto r = engine::Record(Kind::search_index);
  auto good = bj::parse(R"([{"name":"a","dataType":"TEXT"}])");
  REQUIRE(r.set_member("fields", &good));
  const auto before = engine::encode(r);
  auto bad = bj::parse(R"([{"name":"b","dataType":"TEXT"},{"name":"c","dataType":"TEXT"},5])");
  auto set = r.set_member("fields", &bad);
  REQUIRE_FALSE(set);
  CHECK(set.error().kind() == ErrorKind::bad_request);
  CHECK(r.as<SearchIndex>().fields.size() == 1);
  CHECK(engine::encode(r) == before);
  auto unknown = bj::value(1);
  CHECK(r.set_member("noSuchMember", &unknown).error().code() == Errc::invalid_request);
  CHECK(engine::encode(r) == before);
}

// A patch reads only the members it changed as their struct members
// (engine::patched_members_read) and the whole document only when that cannot tell. It must
// never pass a document that the whole read refuses: checked on seeded mutations of every
// entity of the fixture store, rendered with all its fields.
TEST_CASE("a patch's member-wise read never passes what the whole read refuses", "[format]") {
  auto backend = std::make_unique<storage::MemoryBackend>();
  load(*backend, read_pairs(fixtures + "/store_schema2.pairs"));
  auto store = Store::open(std::move(backend), fixture_options()).value();
  const auto admin = store.principal("admin").value();
  const bj::value pool[] = {bj::parse(R"("text")"), bj::parse("1"), bj::parse("-1.5"),
                            bj::parse("true"), bj::parse("null"), bj::parse("[]"),
                            bj::parse("{}"), bj::parse("[1]"), bj::parse(R"({"a":1})"),
                            bj::parse(R"([{"id":"not-an-id"}])"), bj::parse(R"([{"name":"x"}])"),
                            bj::parse(R"("0.2")"), bj::parse("0.2"), bj::parse(R"("votedUp")")};
  std::mt19937 rng(10);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::size_t passed = 0, refused = 0;
  for (auto kind : all_kinds) {
    ListOptions lo;
    lo.include = Include::all;
    lo.limit = 1000;
    lo.fields = {"*"};
    for (const auto& item : store.list_json(admin, kind, lo).value().data) {
      const auto& before = item.as_object();
      CHECK(engine::patched_members_read(kind, before, before));
      for (int round = 0; round < 60; ++round) {
        bj::object after = before;
        auto it = after.begin() + static_cast<std::ptrdiff_t>(pick(after.size()));
        const auto& value = pool[pick(std::size(pool))];
        switch (round % 5) {
          case 0: it->value() = value; break;
          case 3:  // another string: valid for most string members, not for ids or enumerations
            if (it->value().is_string())
              it->value() = bj::string(std::string(it->value().get_string()) + "!");
            else
              it->value() = value;
            break;
          case 1: {  // one member of one element or member deeper down
            bj::value* v = &it->value();
            if (v->is_array() && !v->get_array().empty())
              v = &v->get_array()[pick(v->get_array().size())];
            if (v->is_object() && !v->get_object().empty()) {
              auto& o = v->get_object();
              (o.begin() + static_cast<std::ptrdiff_t>(pick(o.size())))->value() = value;
            } else {
              *v = value;
            }
            break;
          }
          case 2: after["bogus"] = value; break;
          default: after.erase(it); break;
        }
        const bool fast = engine::patched_members_read(kind, before, after);
        const bool whole = visit_kind(kind, [&]<class E>(std::type_identity<E>) {
          return catalog::from_json<E>(bj::value(after)).has_value();
        });
        INFO(catalog::json::serialize(after));
        CHECK((!fast || whole));
        (fast ? passed : refused) += after != before ? 1 : 0;
      }
    }
  }
  // Both ways were taken many times.
  CHECK(passed > 100);
  CHECK(refused > 200);
}
