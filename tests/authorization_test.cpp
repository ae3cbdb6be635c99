// Authentication through the Store (docs/SEMANTICS.md §11) and the authorization matrix (docs/SEMANTICS.md §12): every operation
// against an admin, an owner, a member of an owning team, a member of a team with an allow
// policy, a user under a deny rule and an unrelated user; refusals change nothing.
#include <catalog/store.hpp>

#include <catalog/detail/base64url.hpp>

#include <catalog/detail/engine/keys.hpp>  // the key of a stored record, to break it
#include "support.hpp"

#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <functional>
#include <map>

using namespace catalog;
using test::parse;
using test::id_of;
using test::uuid_of;
namespace bj = boost::json;

namespace {

const std::string secret(40, 's');

std::string sign_hs256(const std::string& header, const std::string& payload) {
  using detail::base64url_encode;
  using detail::Padding;
  auto input = base64url_encode(header, Padding::none) + "." + base64url_encode(payload, Padding::none);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &size);
  return input + "." + base64url_encode(std::string(reinterpret_cast<char*>(mac), size), Padding::none);
}

// 2026-01-01T00:00:00Z, the fixture clock's start.
constexpr std::int64_t now_s = 1767225600;

std::string token_for(const std::string& email, std::int64_t exp = now_s + 3600) {
  return sign_hs256(R"({"alg":"HS256","typ":"JWT"})",
                    R"({"email":")" + email + R"(","exp":)" + std::to_string(exp) + "}");
}

StoreOptions options() {
  auto o = test::test_options();
  o.jwt.hs256_keys = {{secret, std::nullopt}};
  return o;
}


struct World {
  Principal admin;
  std::map<std::string, Principal> who;
  bj::object glossary;
  Uuid other_user;
};

// Users: owner (owns G), member (in team `owners`, which owns G), allowed (in `editors`, whose
// policy allows Create, EditDescription and Delete on glossaries), denied (in `blocked`, whose
// policy denies everything on glossaries), stranger (nothing).
World build(Store& s) {
  World w;
  w.admin = s.principal("admin").value();
  auto user = [&](const std::string& name) {
    return s.create_json(w.admin, Kind::user, parse(R"({"name":")" + name + R"(","email":")" + name + R"(@example.com"})")).value();
  };
  auto owner = user("owner"), member = user("member"), allowed = user("allowed"),
       denied = user("denied"), stranger = user("stranger");
  w.other_user = uuid_of(user("bystander"));
  auto allow = s.create_json(w.admin, Kind::policy, parse(R"({"name":"editing","rules":[{"name":"edit","effect":"allow","resources":["glossary"],"operations":["Create","EditDescription","Delete"]}]})")).value();
  auto deny = s.create_json(w.admin, Kind::policy, parse(R"({"name":"blocking","rules":[{"name":"no","effect":"deny","resources":["glossary"],"operations":["All"]}]})")).value();
  auto owners = s.create_json(w.admin, Kind::team, parse(R"({"name":"owners","users":[")" + id_of(member) + R"("]})")).value();
  s.create_json(w.admin, Kind::team, parse(R"({"name":"editors","users":[")" + id_of(allowed) + R"("],"policies":[")" + id_of(allow) + R"("]})")).value();
  // The deny policy sits on a parent department: policies of ancestors apply too.
  auto dept = s.create_json(w.admin, Kind::team, parse(R"({"name":"dept","teamType":"Department","policies":[")" + id_of(deny) + R"("]})")).value();
  s.create_json(w.admin, Kind::team, parse(R"({"name":"blocked","parents":[")" + id_of(dept) + R"("],"users":[")" + id_of(denied) + R"("]})")).value();
  w.glossary = s.create_json(w.admin, Kind::glossary, parse(R"({"name":"G","description":"g","owners":[{"id":")" + id_of(owner) + R"(","type":"user"},{"id":")" + id_of(owners) + R"(","type":"team"}]})")).value();
  w.who["admin"] = w.admin;
  for (auto name : {"owner", "member", "allowed", "denied", "stranger"})
    w.who[name] = s.authenticate(token_for(std::string(name) + "@example.com")).value();
  return w;
}

using Op = std::function<bool(Store&, World&, const Principal&)>;

struct Row {
  std::string operation;
  Op run;
  // admin, owner, member, allowed, denied, stranger
  std::array<bool, 6> expected;
};

template <class R>
bool allowed(const R& r) {
  if (r) return true;
  if (r.error().kind() != ErrorKind::forbidden) FAIL("unexpected error " << r.error().message());
  return false;
}

std::vector<Row> rows() {
  auto g = [](World& w) { return uuid_of(w.glossary); };
  return {
      {"Create", [](Store& s, World&, const Principal& p) { return allowed(s.create_json(p, Kind::glossary, parse(R"({"name":"New","description":"n"})"))); },
       {true, false, false, true, false, false}},
      {"ViewBasic (get)", [g](Store& s, World& w, const Principal& p) { return allowed(s.get_json(p, Kind::glossary, g(w))); },
       {true, true, true, true, false, true}},
      {"ViewAll (get with fields)", [g](Store& s, World& w, const Principal& p) { return allowed(s.get_json(p, Kind::glossary, g(w), {{"owners"}})); },
       {true, true, true, true, false, true}},
      {"ViewBasic (list)", [](Store& s, World&, const Principal& p) { return allowed(s.list_json(p, Kind::glossary)); },
       {true, true, true, true, false, true}},
      {"EditDescription", [g](Store& s, World& w, const Principal& p) { return allowed(s.patch_json(p, Kind::glossary, g(w), parse(R"({"description":"x"})"))); },
       {true, true, true, true, false, false}},
      {"EditOwners", [g](Store& s, World& w, const Principal& p) { return allowed(s.patch_json(p, Kind::glossary, g(w), parse(R"({"owners":[]})"))); },
       {true, true, true, false, false, false}},
      {"EditAll (mutuallyExclusive)", [g](Store& s, World& w, const Principal& p) { return allowed(s.patch_json(p, Kind::glossary, g(w), parse(R"({"mutuallyExclusive":true})"))); },
       {true, true, true, false, false, false}},
      {"EditDescription+EditAll", [g](Store& s, World& w, const Principal& p) { return allowed(s.patch_json(p, Kind::glossary, g(w), parse(R"({"description":"y","mutuallyExclusive":true})"))); },
       {true, true, true, false, false, false}},
      {"Delete", [g](Store& s, World& w, const Principal& p) { return allowed(s.remove_json(p, Kind::glossary, g(w))); },
       {true, true, true, true, false, false}},
      {"Delete (hard)", [g](Store& s, World& w, const Principal& p) { DeleteOptions o; o.hard_delete = true; return allowed(s.remove_json(p, Kind::glossary, g(w), o)); },
       {true, true, true, true, false, false}},
      {"Follow (self)", [g](Store& s, World& w, const Principal& p) { return allowed(s.follow_json(p, Kind::glossary, g(w), p.id)); },
       {true, true, true, true, false, true}},
      {"EditFollowers (another user)", [g](Store& s, World& w, const Principal& p) { return allowed(s.follow_json(p, Kind::glossary, g(w), w.other_user)); },
       {true, true, true, false, false, false}},
      {"EditVotes", [g](Store& s, World& w, const Principal& p) { return allowed(s.vote_json(p, Kind::glossary, g(w), VoteType::voted_up)); },
       {true, true, true, true, false, true}},
  };
}

const char* columns[] = {"admin", "owner", "member", "allowed", "denied", "stranger"};

}  // namespace

TEMPLATE_TEST_CASE("authorization matrix", "[authorization]", test::MemoryFixture,
                   test::LmdbFixture) {
  for (const auto& row : rows()) {
    for (std::size_t c = 0; c < 6; ++c) {
      test::TempDir dir;
      auto s = std::is_same_v<TestType, test::MemoryFixture>
                   ? Store::in_memory(options()).value()
                   : Store::open_lmdb(dir.path(), options()).value();
      auto w = build(s);
      INFO(row.operation << " by " << columns[c]);
      auto before = test::dump(s);
      bool ok = row.run(s, w, w.who.at(columns[c]));
      CHECK(ok == row.expected[c]);
      if (!ok) CHECK(test::dump(s) == before);  // same versions, no event, nothing
    }
  }
}

TEST_CASE("restore needs EditAll; version reads need only authentication", "[authorization]") {
  auto s = Store::in_memory(options()).value();
  auto w = build(s);
  s.remove_json(w.admin, Kind::glossary, uuid_of(w.glossary)).value();
  CHECK(s.restore_json(w.who.at("stranger"), Kind::glossary, uuid_of(w.glossary)).error().kind() == ErrorKind::forbidden);
  CHECK(s.restore_json(w.who.at("allowed"), Kind::glossary, uuid_of(w.glossary)).error().kind() == ErrorKind::forbidden);
  CHECK(s.restore_json(w.who.at("member"), Kind::glossary, uuid_of(w.glossary)));
  CHECK(s.history_json(w.who.at("denied"), Kind::glossary, uuid_of(w.glossary)).value().versions.size() == 3);
  CHECK(s.version_json(w.who.at("denied"), Kind::glossary, uuid_of(w.glossary), "0.1"));
}

TEST_CASE("a forbidden message names the operation", "[authorization]") {
  auto s = Store::in_memory(options()).value();
  auto w = build(s);
  auto r = s.patch_json(w.who.at("stranger"), Kind::glossary, uuid_of(w.glossary), parse(R"({"displayName":"x"})"));
  REQUIRE_FALSE(r);
  CHECK(r.error().kind() == ErrorKind::forbidden);
  CHECK_THAT(r.error().message(), Catch::Contains("EditDisplayName"));
}

TEST_CASE("owners are inherited from the nearest container", "[authorization]") {
  auto s = Store::in_memory(options()).value();
  auto w = build(s);
  auto term = s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"G","name":"T","description":"t"})")).value();
  auto child = s.create_json(w.admin, Kind::glossary_term, parse(R"({"glossary":"G","parent":"G.T","name":"C","description":"c"})")).value();
  // The owner of G may edit a term of G with no owners of its own.
  CHECK(s.patch_json(w.who.at("owner"), Kind::glossary_term, uuid_of(child), parse(R"({"description":"mine"})")));
  CHECK(s.patch_json(w.who.at("stranger"), Kind::glossary_term, uuid_of(child), parse(R"({"description":"no"})")).error().kind() == ErrorKind::forbidden);
  // Once the term has an owner of its own, that one decides.
  s.patch_json(w.admin, Kind::glossary_term, uuid_of(term), parse(R"({"owners":[{"id":")" + to_string(w.who.at("stranger").id) + R"(","type":"user"}]})")).value();
  CHECK(s.patch_json(w.who.at("stranger"), Kind::glossary_term, uuid_of(child), parse(R"({"description":"now mine"})")));
  CHECK(s.patch_json(w.who.at("owner"), Kind::glossary_term, uuid_of(child), parse(R"({"description":"not mine"})")).error().kind() == ErrorKind::forbidden);
  // Everyone may claim an entity that has no owner at all (noOwner() -> EditOwners).
  auto lone = s.create_json(w.admin, Kind::domain, parse(R"({"name":"Lone","domainType":"Aggregate","description":"d"})")).value();
  auto me = R"({"owners":[{"id":")" + to_string(w.who.at("stranger").id) + R"(","type":"user"}]})";
  CHECK(s.patch_json(w.who.at("stranger"), Kind::domain, uuid_of(lone), parse(me)));
}

TEST_CASE("a stored policy that does not decode fails closed", "[authorization]") {
  // Before, a policy that did not parse was skipped, and its deny rules with it: `denied` could
  // then read G. Now the call fails with a storage error and decides nothing.
  auto s = Store::in_memory(options()).value();
  auto w = build(s);
  auto policy = s.get_json(w.admin, Kind::policy, EntityKey::by_fqn("blocking")).value();
  const std::string key = engine::keys::entity(uuid_of(policy));
  {
    auto txn = s.backend().begin(storage::Mode::read_write).value();
    auto stored = txn->get(key).value().value();
    const std::string from = R"("effect":"deny")";
    auto at = stored.find(from);
    REQUIRE(at != std::string::npos);
    stored.replace(at, from.size(), R"("effect":"maybe")");
    txn->put(key, stored).value();
    txn->commit().value();
  }
  auto before = test::dump(s);
  auto read = s.get_json(w.who.at("denied"), Kind::glossary, uuid_of(w.glossary));
  REQUIRE_FALSE(read);
  CHECK(read.error().code() == Errc::storage);
  CHECK_THAT(read.error().message(), Catch::Contains("blocking"));
  auto follow = s.follow_json(w.who.at("denied"), Kind::glossary, uuid_of(w.glossary), w.who.at("denied").id);
  REQUIRE_FALSE(follow);
  CHECK(follow.error().code() == Errc::storage);
  CHECK(test::dump(s) == before);
  // Users outside the teams of that policy are judged as before.
  CHECK(s.get_json(w.who.at("stranger"), Kind::glossary, uuid_of(w.glossary)));
  // A disabled policy is still left out.
  auto disabled = s.get_json(w.admin, Kind::policy, EntityKey::by_fqn("editing")).value();
  s.patch_json(w.admin, Kind::policy, uuid_of(disabled), parse(R"({"enabled":false})")).value();
  CHECK(s.create_json(w.who.at("allowed"), Kind::glossary, parse(R"({"name":"N2","description":"n"})")).error().kind() == ErrorKind::forbidden);
}

TEST_CASE("authenticate: tokens to principals", "[authentication]") {
  auto s = Store::in_memory(options()).value();
  auto w = build(s);
  auto p = s.authenticate(token_for("owner@example.com")).value();
  CHECK(p.name == "owner");
  CHECK_FALSE(p.is_admin);
  CHECK(s.authenticate(token_for("admin@example.com")).value().is_admin);
  auto fail_kind = [&](const std::string& token) { return s.authenticate(token).error().kind(); };
  CHECK(fail_kind(token_for("ghost@example.com")) == ErrorKind::unauthorized);
  CHECK(fail_kind(token_for("owner@example.com", now_s - 61)) == ErrorKind::unauthorized);
  CHECK(fail_kind("garbage") == ErrorKind::unauthorized);
  CHECK(fail_kind("") == ErrorKind::unauthorized);
  // A soft-deleted user can no longer authenticate; restored, they can again.
  auto owner_id = s.principal("owner").value().id;
  s.remove_json(w.admin, Kind::user, owner_id).value();
  CHECK(fail_kind(token_for("owner@example.com")) == ErrorKind::unauthorized);
  s.restore_json(w.admin, Kind::user, owner_id).value();
  CHECK(s.authenticate(token_for("owner@example.com")));
  // With no key configured every token is refused.
  auto bare = Store::in_memory(test::test_options()).value();
  CHECK(bare.authenticate(token_for("admin@example.com")).error().kind() == ErrorKind::unauthorized);
  // A secret shorter than 32 bytes is refused when the store opens.
  auto weak = test::test_options();
  weak.jwt.hs256_keys = {{std::string(31, 'x'), std::nullopt}};
  CHECK(Store::in_memory(weak).error().kind() == ErrorKind::bad_request);
}
