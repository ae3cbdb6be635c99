// Store::verify: a store after a rich workload verifies clean on both backends; each
// invariant of the key schema, broken through raw backend writes, is reported under its key.
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include <catalog/detail/engine/keys.hpp>  // the key schema, to break exactly one key of it
#include "forwarding_transaction.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

using namespace catalog;
using test::id_of;
using test::parse;
using test::uuid_of;
namespace bj = boost::json;
namespace keys = catalog::engine::keys;

namespace {

DeleteOptions deletion(bool hard, bool recursive) {
  DeleteOptions o;
  o.hard_delete = hard;
  o.recursive = recursive;
  return o;
}

bj::object make(Store& s, const Principal& who, Kind kind, const std::string& body) {
  return s.create_json(who, kind, parse(body)).value();
}

// What the workload left, for the tests that break it.
struct Workload {
  Principal admin;
  bj::object alice, bob, model, major_model, glossary, term_a, term_b, long_term, domain, team;
  std::string long_fqn;
};

// Creates of every kind (a nested glossary, an FQN with a quoted part, one long enough for a
// hashed name key), merge and JSON patches (minor and major versions), follows, unfollows,
// votes, soft, recursive, hard and recursive hard deletes, restores.
Workload run_workload(Store& s) {
  Workload w;
  w.admin = s.principal("admin").value();
  const auto& admin = w.admin;
  w.alice = make(s, admin, Kind::user, R"({"name":"alice","email":"alice@example.com"})");
  w.bob = make(s, admin, Kind::user, R"({"name":"bob.b","email":"bob@example.com"})");
  auto carol = make(s, admin, Kind::user, R"({"name":"carol","email":"carol@example.com"})");
  auto policy = make(
      s, admin, Kind::policy,
      R"({"name":"editing","rules":[{"name":"edit","effect":"allow","resources":["glossary"],"operations":["Create","EditDescription","Delete"]}]})");
  auto dept =
      make(s, admin, Kind::team,
           R"({"name":"dept","teamType":"Department","policies":[")" + id_of(policy) + R"("]})");
  w.team = make(s, admin, Kind::team,
                R"({"name":"data","parents":[")" + id_of(dept) + R"("],"users":[")" +
                    id_of(w.alice) + R"(",")" + id_of(carol) + R"("]})");
  w.domain = make(s, admin, Kind::domain,
                  R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
  auto emea = make(
      s, admin, Kind::domain,
      R"({"name":"EMEA","domainType":"Source-aligned","description":"d","parent":"Sales","experts":["bob.b"]})");
  make(s, admin, Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
  w.model = make(
      s, admin, Kind::mlmodel,
      R"({"name":"churn","service":"mlflow","algorithm":"xgboost","domains":["Sales"],"owners":[{"id":")" +
          id_of(w.alice) + R"(","type":"user"}]})");
  w.major_model =
      make(s, admin, Kind::mlmodel, R"({"name":"v1.0","service":"mlflow","algorithm":"lr"})");
  make(s, admin, Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  make(s, admin, Kind::search_index,
       R"({"name":"logs","service":"es","fields":[{"name":"msg","dataType":"TEXT"}]})");
  w.glossary =
      make(s, admin, Kind::glossary,
           R"({"name":"G","description":"g","reviewers":[{"id":")" + id_of(w.bob) +
               R"(","type":"user"}],"owners":[{"id":")" + id_of(w.team) + R"(","type":"team"}]})");
  w.term_a =
      make(s, admin, Kind::glossary_term, R"({"glossary":"G","name":"A","description":"a"})");
  auto a1 = make(s, admin, Kind::glossary_term,
                 R"({"glossary":"G","parent":"G.A","name":"A1","description":"a"})");
  auto a1x = make(s, admin, Kind::glossary_term,
                  R"({"glossary":"G","parent":"G.A.A1","name":"A1x","description":"a"})");
  w.term_b = make(s, admin, Kind::glossary_term,
                  R"({"glossary":"G","name":"B","description":"b","relatedTerms":["G.A"]})");
  // Over 400 bytes of FQN: its name key is a prefix and a hash.
  const std::string long_name(250, 'n');
  w.long_term =
      make(s, admin, Kind::glossary_term,
           R"({"glossary":"G","parent":"G.A","name":")" + long_name + R"(","description":"l"})");
  auto long_child = make(s, admin, Kind::glossary_term,
                         R"({"glossary":"G","parent":"G.A.)" + long_name + R"(","name":")" +
                             long_name + R"(","description":"l"})");
  w.long_fqn = std::string(long_child.at("fullyQualifiedName").as_string());

  // Versions: minor (merge patch, JSON Patch) and major (algorithm).
  s.patch_json(admin, Kind::mlmodel, uuid_of(w.model), parse(R"({"description":"who leaves"})"))
      .value();
  s.patch_json(admin, Kind::mlmodel, uuid_of(w.model), parse(R"({"algorithm":"lightgbm"})"))
      .value();
  s.patch_json(admin, Kind::glossary, uuid_of(w.glossary),
               parse(R"([{"op":"replace","path":"/description","value":"g2"}])"))
      .value();
  s.patch_json(admin, Kind::team, uuid_of(w.team),
               parse(R"({"users":[{"id":")" + id_of(w.alice) + R"(","type":"user"}]})"))
      .value();

  // Followers and votes.
  s.follow_json(admin, Kind::mlmodel, uuid_of(w.model), uuid_of(w.alice)).value();
  s.follow_json(admin, Kind::mlmodel, uuid_of(w.model), uuid_of(w.bob)).value();
  s.follow_json(admin, Kind::glossary_term, uuid_of(w.term_a), uuid_of(w.bob)).value();
  s.unfollow_json(admin, Kind::mlmodel, uuid_of(w.model), uuid_of(w.bob)).value();
  s.vote_json(admin, Kind::mlmodel, uuid_of(w.model), VoteType::voted_up).value();
  s.vote_json(admin, Kind::glossary_term, uuid_of(w.term_a), VoteType::voted_down).value();
  s.vote_json(admin, Kind::glossary, uuid_of(w.glossary), VoteType::voted_up).value();
  s.vote_json(admin, Kind::glossary, uuid_of(w.glossary), VoteType::un_voted).value();

  // Soft delete and restore of one term; a term deleted on its own, then the glossary
  // recursively, then restored (the term deleted before stays deleted).
  s.remove_json(admin, Kind::glossary_term, uuid_of(w.term_b)).value();
  s.restore_json(admin, Kind::glossary_term, uuid_of(w.term_b)).value();
  s.remove_json(admin, Kind::glossary_term, uuid_of(a1x)).value();
  s.remove_json(admin, Kind::glossary, uuid_of(w.glossary), deletion(false, true)).value();
  s.restore_json(admin, Kind::glossary, uuid_of(w.glossary)).value();
  // Hard deletes: a leaf term, a followed and voted user, a sub-domain, a service with its
  // index (recursive).
  s.remove_json(admin, Kind::glossary_term, uuid_of(a1x), deletion(true, false)).value();
  s.remove_json(admin, Kind::user, uuid_of(carol), deletion(true, false)).value();
  s.remove_json(admin, Kind::domain, uuid_of(emea), deletion(true, false)).value();
  s.remove_json(admin, Kind::search_service, EntityKey::by_fqn("es"), deletion(true, true)).value();
  // Soft-deleted entities that stay so, one of them in a service scope.
  s.remove_json(admin, Kind::mlmodel, uuid_of(w.major_model)).value();
  s.remove_json(admin, Kind::user, uuid_of(w.bob)).value();
  (void)a1;
  return w;
}

// The key as verify prints it: bytes outside printable ASCII, and the backslash, as \xNN.
std::string printable(std::string_view key) {
  std::string out;
  char buf[5];
  for (char ch : key) {
    auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += ch;
    } else {
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    }
  }
  return out;
}

std::string show(const std::vector<IntegrityProblem>& problems) {
  std::string out;
  for (const auto& p : problems) out += p.key + ": " + p.message + "\n";
  return out;
}

// The problems reported under `key` whose message contains `words`.
std::size_t reported(const std::vector<IntegrityProblem>& problems, std::string_view key,
                     std::string_view words) {
  std::size_t n = 0;
  for (const auto& p : problems)
    if (p.key == printable(key) && p.message.find(words) != std::string::npos) ++n;
  return n;
}

void raw_write(Store& s, const std::function<void(storage::Transaction&)>& change) {
  auto txn = s.backend().begin(storage::Mode::read_write).value();
  change(*txn);
  txn->commit().value();
}

void erase(Store& s, const std::string& key) {
  raw_write(s, [&](storage::Transaction& t) { REQUIRE(t.erase(key).value()); });
}

void put(Store& s, const std::string& key, const std::string& value) {
  raw_write(s, [&](storage::Transaction& t) { t.put(key, value).value(); });
}

std::string get(Store& s, const std::string& key) {
  auto txn = s.backend().begin(storage::Mode::read_only).value();
  auto v = txn->get(key).value();
  REQUIRE(v);
  return *v;
}

std::uint64_t last_event(Store& s) { return keys::decode_u64(get(s, keys::meta("event_offset"))); }

// Runs verify, shows its answer, and requires at least one problem.
std::vector<IntegrityProblem> broken(Store& s) {
  auto problems = s.verify().value();
  INFO(show(problems));
  REQUIRE_FALSE(problems.empty());
  return problems;
}

}  // namespace

TEMPLATE_TEST_CASE("a store after a rich workload verifies clean", "[verify]", test::MemoryFixture,
                   test::LmdbFixture) {
  TestType fx;
  auto& s = fx.store;
  CHECK(s.verify().value().empty());  // only the admin
  run_workload(s);
  auto problems = s.verify().value();
  INFO(show(problems));
  CHECK(problems.empty());
}

TEST_CASE("an LMDB store verifies clean after reopening", "[verify]") {
  test::TempDir dir;
  {
    auto s = Store::open_lmdb(dir.path(), test::test_options()).value();
    run_workload(s);
  }
  // A second admin on reopen: promotion of an existing user is a new version too.
  auto options = test::test_options();
  options.admins.push_back("alice");
  auto s = Store::open_lmdb(dir.path(), options).value();
  auto problems = s.verify().value();
  INFO(show(problems));
  CHECK(problems.empty());
}

TEMPLATE_TEST_CASE("verify reports each broken invariant under its key", "[verify]",
                   test::MemoryFixture, test::LmdbFixture) {
  TestType fx;
  auto& s = fx.store;
  auto w = run_workload(s);
  REQUIRE(s.verify().value().empty());
  const auto model = uuid_of(w.model);
  const auto alice = uuid_of(w.alice);
  const auto service =
      parse_uuid(
          std::string(
              s.get_json(w.admin, Kind::mlmodel, model).value().at("service").at("id").as_string()))
          .value();

  // What import refuses, verify reports (docs/EXPORT_FORMAT.md): the value rules, one container,
  // owners the kind's rule allows, nothing live in a soft-deleted container.
  const auto edit_record = [&](const Uuid& id, std::string_view from, std::string_view to) {
    auto bytes = get(s, keys::entity(id));
    const auto at = bytes.find(from);
    REQUIRE(at != std::string::npos);
    bytes.replace(at, from.size(), to);
    put(s, keys::entity(id), bytes);
  };
  SECTION("a record holding a value its rules refuse") {
    edit_record(alice, "alice@example.com", "alice_example.com");
    CHECK(reported(broken(s), keys::entity(alice), "Invalid email alice_example.com") == 1);
  }
  SECTION("a containment edge from an entity that is not the container") {
    const auto a = uuid_of(w.term_a), b = uuid_of(w.term_b);
    put(s, keys::edge(a, keys::Rel::contains, b), "");
    put(s, keys::reverse_edge(b, keys::Rel::contains, a), "");
    CHECK(reported(broken(s), keys::edge(a, keys::Rel::contains, b),
                   "glossaryTerm G.B (" + to_string(b) + "), which is not its container") == 1);
  }
  SECTION("an owner team that is not a Group") {
    const auto dept =
        uuid_of(s.get_json(w.admin, Kind::team, EntityKey::by_fqn("dept")).value());
    put(s, keys::edge(dept, keys::Rel::owns, model), "");
    put(s, keys::reverse_edge(model, keys::Rel::owns, dept), "");
    CHECK(reported(broken(s), keys::edge(dept, keys::Rel::owns, model),
                   "cannot own entities: only Group teams can") == 1);
  }
  SECTION("a live entity in a soft-deleted container") {
    edit_record(uuid_of(w.glossary), R"("deleted":false)", R"("deleted":true)");
    CHECK(reported(broken(s), keys::entity(uuid_of(w.term_b)),
                   "is in soft-deleted glossary G") == 1);
  }
  SECTION("a missing name key") {
    auto key = keys::name(Kind::mlmodel, "mlflow.churn");
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: name entry of mlmodel mlflow.churn") == 1);
  }
  SECTION("a missing hashed name key of a long FQN") {
    auto key = keys::name(Kind::glossary_term, w.long_fqn);
    REQUIRE(key.size() < w.long_fqn.size());
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: name entry") == 1);
  }
  SECTION("a name key pointing to another entity") {
    auto key = keys::name(Kind::mlmodel, "mlflow.churn");
    put(s, key, keys::id_bytes(uuid_of(w.major_model)));
    auto problems = broken(s);
    CHECK(reported(problems, key, "points to another id") == 1);
    CHECK(reported(problems, key, "which has another FQN") == 1);
  }
  SECTION("a name key of a missing entity") {
    auto key = keys::name(Kind::user, "ghost");
    put(s, key, keys::id_bytes(random_uuid()));
    CHECK(reported(broken(s), key, "points to a missing entity") == 1);
  }
  SECTION("a stray list key: a missing entity, and its counter") {
    const auto ghost = random_uuid();
    auto key = keys::list(Kind::user, false, keys::all_scope, "ghost", ghost);
    put(s, key, "");
    auto problems = broken(s);
    CHECK(reported(problems, key, "list entry of a missing entity") == 1);
    // The ghost's counter shard: missing, or one short, as other users fall.
    const auto shard = keys::counter_shard(ghost);
    CHECK(reported(problems, keys::counter(Kind::user, false, keys::all_scope, shard),
                   "entries in shard " + std::to_string(shard)) +
              reported(problems, keys::counter(Kind::user, false, keys::all_scope, shard),
                       "entries of its list in shard " + std::to_string(shard)) ==
          1);
  }
  SECTION("a list key for the other deletion state") {
    auto key = keys::list(Kind::mlmodel, true, keys::all_scope, "churn", model);
    put(s, key, "");
    auto problems = broken(s);
    CHECK(reported(problems, key, "other deletion state") == 1);
    CHECK(reported(problems, key, "list entry of the deleted state") == 1);
    // The deleted list's shard of churn: the soft-deleted model v1.0 may be in it too.
    auto counter = keys::counter(Kind::mlmodel, true, keys::all_scope, keys::counter_shard(model));
    if (keys::counter_shard(model) == keys::counter_shard(uuid_of(w.major_model)))
      CHECK(reported(problems, counter, "counter is 1 but its list has 2 entries in shard") == 1);
    else
      CHECK(reported(problems, counter, "missing: counter of the 1 entries of its list") == 1);
  }
  SECTION("a missing list key in the service scope") {
    auto key = keys::list(Kind::mlmodel, false, service, "churn", model);
    erase(s, key);
    auto problems = broken(s);
    CHECK(reported(problems, key, "missing: list entry of mlmodel mlflow.churn") == 1);
    // The only live model of its service: its counter is left with no entries.
    CHECK(reported(problems,
                   keys::counter(Kind::mlmodel, false, service, keys::counter_shard(model)),
                   "no entries") == 1);
  }
  SECTION("a counter changed") {
    auto key = keys::counter(Kind::user, false, keys::all_scope, keys::counter_shard(alice));
    const auto n = keys::decode_u64(get(s, key));
    put(s, key, keys::encode_u64(n + 5));
    CHECK(reported(broken(s), key,
                   "counter is " + std::to_string(n + 5) + " but its list has " +
                       std::to_string(n) + " entries in shard") == 1);
  }
  SECTION("a counter missing, and one stored at zero") {
    auto key = keys::counter(Kind::glossary, false, keys::all_scope,
                             keys::counter_shard(uuid_of(w.glossary)));
    erase(s, key);
    auto zero = keys::counter(Kind::search_index, true, keys::all_scope, 0);
    put(s, zero, keys::encode_u64(0));
    auto problems = broken(s);
    CHECK(reported(problems, key, "missing: counter of the 1 entries of its list in shard") == 1);
    CHECK(reported(problems, zero, "a stored counter is positive") == 1);
  }
  SECTION("counter keys outside the schema: key schema 1, a shard out of range") {
    auto old = keys::counter_prefix(Kind::user, false, keys::all_scope);
    put(s, old, keys::encode_u64(3));
    auto out_of_range = keys::counter(Kind::user, false, keys::all_scope, keys::counter_shards);
    put(s, out_of_range, keys::encode_u64(1));
    auto problems = broken(s);
    CHECK(reported(problems, old, "counter of key schema 1") == 1);
    CHECK(reported(problems, out_of_range, "malformed counter key") == 1);
  }
  SECTION("the key schema record wrong, then missing") {
    auto key = keys::meta("key_schema");
    put(s, key, keys::encode_u64(keys::key_schema + 1));
    CHECK(reported(broken(s), key, "key schema is not") == 1);
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: the key schema record") == 1);
  }
  SECTION("a reverse edge missing") {
    auto key = keys::reverse_edge(model, keys::Rel::follows, alice);
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: reverse edge") == 1);
  }
  SECTION("a forward edge missing") {
    auto key = keys::edge(alice, keys::Rel::follows, model);
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: edge of reverse edge") == 1);
  }
  SECTION("edge twins with different data") {
    auto reverse = keys::reverse_edge(model, keys::Rel::votes, w.admin.id);
    REQUIRE(get(s, reverse) == "u");
    put(s, reverse, "d");
    CHECK(reported(broken(s), reverse, "other data") == 1);
  }
  SECTION("an edge to a missing entity") {
    auto ghost = random_uuid();
    auto key = keys::edge(alice, keys::Rel::follows, ghost);
    put(s, key, "");
    put(s, keys::reverse_edge(ghost, keys::Rel::follows, alice), "");
    CHECK(reported(broken(s), key, "edge to a missing entity") == 1);
  }
  SECTION("an edge its relation does not allow") {
    auto key = keys::edge(model, keys::Rel::member, alice);  // only teams have members
    put(s, key, "");
    put(s, keys::reverse_edge(alice, keys::Rel::member, model), "");
    CHECK(reported(broken(s), key, "cannot go from") == 1);
  }
  SECTION("a missing containment edge") {
    auto key = keys::edge(service, keys::Rel::contains, model);
    erase(s, key);
    erase(s, keys::reverse_edge(model, keys::Rel::contains, service));
    CHECK(reported(broken(s), key, "missing: containment edge") == 1);
  }
  SECTION("a history version missing in the middle") {
    // churn: 0.1, 0.2 (description), 1.2 (algorithm, a major change).
    auto key = keys::history(model, Version::from_tenths(2));
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: snapshot of version 0.2") == 1);
  }
  SECTION("a major change written as a minor one, and a minor one as 1.0") {
    // churn: 0.1 and 0.2 with algorithm xgboost, 1.2 with lightgbm. 0.2 edited to lightgbm
    // makes 0.1 -> 0.2 a major change and 0.2 -> 1.2 none.
    auto key = keys::history(model, Version::from_tenths(2));
    auto bytes = get(s, key);
    const auto at = bytes.find("xgboost");
    REQUIRE(at != std::string::npos);
    put(s, key, bytes.replace(at, 7, "lightgbm"));
    auto problems = broken(s);
    CHECK(reported(problems, key,
                   "version 0.2 changes a major field of version 0.1 but is not 1.0 after it") == 1);
    CHECK(reported(problems, keys::history(model, Version::from_tenths(12)),
                   "version 1.2 is 1.0 after version 0.2 but changes no major field") == 1);
    CHECK(problems.size() == 2);
  }
  SECTION("the first and the current history versions missing") {
    auto first = keys::history(model, Version::initial());
    auto current = keys::history(model, Version::from_tenths(12));
    erase(s, first);
    erase(s, current);
    auto problems = broken(s);
    CHECK(reported(problems, first, "missing: snapshot of version 0.1") == 1);
    CHECK(reported(problems, current, "missing: snapshot of the current version 1.2") == 1);
  }
  SECTION("a snapshot of a missing entity, and one that does not decode") {
    auto orphan = keys::history(random_uuid(), Version::initial());
    put(s, orphan, "{}");
    auto garbled = keys::history(model, Version::from_tenths(2));
    put(s, garbled, "[1,");
    auto problems = broken(s);
    CHECK(reported(problems, orphan, "snapshot of a missing entity") == 1);
    CHECK(reported(problems, garbled, "does not decode") == 1);
  }
  SECTION("an event removed: a gap") {
    auto key = keys::event(3);
    erase(s, key);
    CHECK(reported(broken(s), key, "missing: event 3 (offsets jump from 2 to 4)") == 1);
  }
  SECTION("the last event removed, and one that does not decode") {
    auto last = last_event(s);
    auto key = keys::event(last);
    erase(s, key);
    auto garbled = keys::event(1);
    put(s, garbled, "not json");
    auto problems = broken(s);
    CHECK(reported(problems, key, "missing: event " + std::to_string(last)) == 1);
    CHECK(reported(problems, garbled, "does not decode") == 1);
  }
  SECTION("an entity record that does not decode") {
    auto key = keys::entity(model);
    put(s, key, "{\"k\":\"mlmodel\",");
    CHECK(reported(broken(s), key, "entity record does not decode: not JSON") == 1);
  }
  SECTION("entity records of the wrong shape") {
    // Each would make the engine's decoder read a member as the wrong type.
    auto key = keys::entity(model);
    const std::vector<std::string> shapes{
        R"({"k":"mlmodel","c":5,"doc":{"id":")" + to_string(model) + R"("}})",
        R"({"k":"mlmodel","doc":{"id":7}})", R"({"k":"nothing","doc":{}})",
        R"({"k":"mlmodel","d":-1,"doc":{"id":")" + to_string(model) + R"("}})",
        R"({"k":"mlmodel","doc":{"id":")" + to_string(model) + R"("}})"};
    for (const auto& bad : shapes) {
      INFO(bad);
      put(s, key, bad);
      CHECK(reported(broken(s), key, "entity record does not decode") == 1);
    }
  }
  SECTION("an entity record under another id") {
    auto other = keys::entity(random_uuid());
    put(s, other, get(s, keys::entity(model)));
    CHECK(reported(broken(s), other, "not the id of its key") == 1);
  }
  SECTION("unknown keys and metadata") {
    put(s, "Zzz", "");
    put(s, keys::meta("mystery"), "");
    auto problems = broken(s);
    CHECK(reported(problems, "Zzz", "unknown key family") == 1);
    CHECK(reported(problems, keys::meta("mystery"), "unknown metadata") == 1);
  }
  SECTION("the last event offset behind the events") {
    auto key = keys::meta("event_offset");
    put(s, key, keys::encode_u64(last_event(s) - 1));
    CHECK(reported(broken(s), key, "but events go up to") == 1);
  }
}

namespace {
// A memory backend whose lent reads of entity records fail while `fail` is set: what the search
// index check reads an entity with (a disk error, a statement timeout).
class FailingEntityReads final : public storage::Backend {
 public:
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    auto t = inner_.begin(mode);
    if (!t) return t.error();
    return std::unique_ptr<storage::Transaction>(std::make_unique<Txn>(std::move(*t), fail));
  }
  bool fail = false;

 private:
  class Txn final : public test::ForwardingTransaction {
   public:
    Txn(std::unique_ptr<storage::Transaction> inner, bool fail)
        : ForwardingTransaction(std::move(inner)), fail_(fail) {}
    Result<std::optional<std::string_view>> get_view(std::string_view key) override {
      const std::string entity_prefix = keys::entity(Uuid{}).substr(0, 1);
      if (fail_ && key.starts_with(entity_prefix))
        return Error(Errc::storage, "read failed: input/output error");
      return inner_->get_view(key);
    }

   private:
    bool fail_;
  };
  storage::MemoryBackend inner_;
};
}  // namespace

TEST_CASE("a read that fails while verify checks the search index is verify's error, not "
          "damage it reports",
          "[verify]") {
  auto owned = std::make_unique<FailingEntityReads>();
  auto* backend = owned.get();
  auto s = Store::open(std::move(owned), test::test_options()).value();
  auto admin = s.principal("admin").value();
  for (const char* name : {"A", "B", "C"})
    REQUIRE(s.create_json(admin, Kind::glossary,
                          parse(std::string(R"({"name":")") + name + R"(","description":"d"})")));
  REQUIRE(s.verify().value().empty());
  backend->fail = true;
  auto failed = s.verify();
  backend->fail = false;
  if (failed) {
    std::string reported;
    for (const auto& p : *failed) reported += p.key + ": " + p.message + "\n";
    INFO("verify reported instead:\n" << reported);
    CHECK(failed->empty());
  }
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code() == Errc::storage);
  CHECK(s.verify().value().empty());
}

TEST_CASE("verify stops after 1000 problems", "[verify]") {
  auto s = Store::in_memory(test::test_options()).value();
  raw_write(s, [](storage::Transaction& t) {
    for (int i = 0; i < 1500; ++i) {
      std::string key(1, 'Z');  // not "Z" + ...: GCC 12 -O3 warns -Wrestrict on that
      key += std::to_string(i);
      t.put(key, "").value();
    }
  });
  auto problems = s.verify().value();
  REQUIRE(problems.size() == 1001);
  CHECK(problems.back().message == "stopped after 1000 problems");
}

TEST_CASE("verify prints non-ASCII key bytes as \\xNN", "[verify]") {
  auto s = Store::in_memory(test::test_options()).value();
  put(s, std::string("Z\x01\\\xff", 4), "");
  auto problems = s.verify().value();
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "Z\\x01\\x5c\\xff");
}

// Not run by default: writes the stores the catalog_admin_verify test (tests/admin/verify.cmake)
// runs catalog-admin on, into $CATALOG_ADMIN_STORES: `clean` after the workload, and `broken`,
// the same with the name key of mlflow.churn and event 3 erased.
TEST_CASE("write stores for catalog-admin", "[.admin_stores]") {
  const char* dir = std::getenv("CATALOG_ADMIN_STORES");
  REQUIRE(dir);
  const std::filesystem::path root(dir);
  for (bool broken : {false, true}) {
    auto path = root / (broken ? "broken" : "clean");
    std::filesystem::remove_all(path);
    auto s = Store::open_lmdb(path, test::test_options()).value();
    run_workload(s);
    if (broken) {
      erase(s, keys::name(Kind::mlmodel, "mlflow.churn"));
      erase(s, keys::event(3));
    }
    CHECK(s.verify().value().empty() != broken);
  }
}
