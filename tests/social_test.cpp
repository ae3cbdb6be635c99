// Followers (docs/SEMANTICS.md §4), votes (docs/SEMANTICS.md §5) and reading change events (docs/SEMANTICS.md §13), on both backends: idempotency,
// ordering, no version change, one event per effective change, every refusal with its error
// and an unchanged store, and edges through soft and hard deletes.
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>

using namespace catalog;
using test::id_of;
using test::parse;
using test::uuid_of;
namespace bj = boost::json;

namespace {

struct World {
  Principal admin, alice, bob, zoe;
  bj::object u_alice, u_bob, u_zoe, u_carol;  // carol is soft-deleted
  bj::object glossary, term, index, model, domain, team, es;
};

bj::object user(Store& s, const Principal& admin, std::string name) {
  return s
      .create_json(admin, Kind::user,
                   parse(R"({"name":")" + name + R"(","email":")" + name + R"(@example.com"})"))
      .value();
}

World build(Store& s) {
  World w;
  w.admin = s.principal("admin").value();
  w.u_zoe = user(s, w.admin, "zoe");
  w.u_alice = user(s, w.admin, "alice");
  w.u_bob = user(s, w.admin, "bob");
  w.u_carol = user(s, w.admin, "carol");
  s.remove_json(w.admin, Kind::user, uuid_of(w.u_carol)).value();
  w.alice = s.principal("alice").value();
  w.bob = s.principal("bob").value();
  w.zoe = s.principal("zoe").value();
  w.glossary =
      s.create_json(w.admin, Kind::glossary, parse(R"({"name":"G","description":"g"})")).value();
  // A version with a change description, which follows and votes must leave as it is.
  w.glossary =
      s.patch_json(w.admin, Kind::glossary, uuid_of(w.glossary), parse(R"({"description":"h"})"))
          .value();
  w.term = s.create_json(w.admin, Kind::glossary_term,
                         parse(R"({"glossary":"G","name":"T","description":"t"})"))
               .value();
  w.es = s.create_json(w.admin, Kind::search_service,
                       parse(R"({"name":"es","serviceType":"ElasticSearch"})"))
             .value();
  w.index = s.create_json(w.admin, Kind::search_index,
                          parse(R"({"name":"idx","service":"es","fields":[]})"))
                .value();
  s.create_json(w.admin, Kind::mlmodel_service,
                parse(R"({"name":"mlflow","serviceType":"Mlflow"})"))
      .value();
  w.model = s.create_json(w.admin, Kind::mlmodel,
                          parse(R"({"name":"m","service":"mlflow","algorithm":"a"})"))
                .value();
  w.domain = s.create_json(w.admin, Kind::domain,
                           parse(R"({"name":"D","domainType":"Aggregate","description":"d"})"))
                 .value();
  w.team = s.create_json(w.admin, Kind::team, parse(R"({"name":"data"})")).value();
  return w;
}

std::vector<std::string> names(const bj::value& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs.as_array()) out.emplace_back(r.at("name").as_string());
  return out;
}

std::int64_t event_total(Store& s, const Principal& admin) {
  return s.events(admin, 0, 0).value().total;
}

// The events appended since `total`.
std::vector<bj::object> events_since(Store& s, const Principal& admin, std::int64_t total) {
  return s.events_json(admin, static_cast<std::uint64_t>(total), 1000).value().data;
}

// What follows and votes must never change.
void same_version(const bj::object& before, const bj::object& after) {
  CHECK(after.at("version") == before.at("version"));
  CHECK(after.at("updatedAt") == before.at("updatedAt"));
  CHECK(after.at("updatedBy") == before.at("updatedBy"));
  CHECK(after.at("changeDescription") == before.at("changeDescription"));
}

bj::object get_all(Store& s, const Principal& p, Kind k, const bj::object& e) {
  return s.get_json(p, k, uuid_of(e), {{"*"}, Include::all}).value();
}

}  // namespace

TEMPLATE_TEST_CASE("follow and unfollow: idempotent, sorted, no version, one event per change",
                   "[social][followers]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  const auto g = uuid_of(w.glossary);
  const auto start = get_all(s, w.admin, Kind::glossary, w.glossary);
  const auto history = s.history_json(w.admin, Kind::glossary, g).value().versions.size();
  int notified = 0;
  auto sub = s.subscribe([&](const ChangeEvent&) { ++notified; });
  auto total = event_total(s, w.admin);

  // As oneself.
  auto followed = s.follow_json(w.alice, Kind::glossary, g, w.alice.id).value();
  CHECK(names(followed.at("followers")) == std::vector<std::string>{"alice"});
  CHECK(followed.at("followers").at(0).at("type") == "user");
  CHECK(followed.at("followers").at(0).at("deleted") == false);
  CHECK(followed.at("votes").at("upVotes") == 0);  // all fields
  CHECK(followed.contains("reviewers"));
  same_version(start, followed);
  auto appended = events_since(s, w.admin, total);
  REQUIRE(appended.size() == 1);
  const auto& e = appended[0];
  CHECK(e.at("eventType") == "entityFieldsChanged");
  CHECK(e.at("entityType") == "glossary");
  CHECK(e.at("entityId").as_string() == id_of(w.glossary));
  CHECK(e.at("entityFullyQualifiedName") == "G");
  CHECK(e.at("userName") == "alice");
  CHECK(e.at("previousVersion") == start.at("version"));
  CHECK(e.at("currentVersion") == start.at("version"));
  const auto& change = e.at("changeDescription").as_object();
  CHECK(change.at("previousVersion") == start.at("version"));
  REQUIRE(change.at("fieldsAdded").as_array().size() == 1);
  CHECK(change.at("fieldsAdded").at(0).at("name") == "followers");
  CHECK(change.at("fieldsAdded").at(0).at("newValue") == followed.at("followers"));
  CHECK(change.at("fieldsUpdated").as_array().empty());
  CHECK(change.at("fieldsDeleted").as_array().empty());
  CHECK(notified == 1);

  // Again: 200, the same entity, nothing written or recorded.
  auto unchanged = test::dump(s);
  CHECK(s.follow_json(w.alice, Kind::glossary, g, w.alice.id).value() == followed);
  CHECK(test::dump(s) == unchanged);
  CHECK(notified == 1);

  // For other users (EditFollowers: admins here); followers sorted by name.
  s.follow_json(w.admin, Kind::glossary, g, w.zoe.id).value();
  auto three = s.follow_json(w.admin, Kind::glossary, g, w.bob.id).value();
  CHECK(names(three.at("followers")) == std::vector<std::string>{"alice", "bob", "zoe"});
  same_version(start, three);
  CHECK(notified == 3);
  CHECK(events_since(s, w.admin, total).size() == 3);
  // The same edge read from the user's side.
  auto bob = s.get_json(w.admin, Kind::user, w.bob.id, {{"follows"}}).value();
  CHECK(names(bob.at("follows")) == std::vector<std::string>{"G"});

  // Unfollow records the removed follower; again is a no-op.
  total = event_total(s, w.admin);
  auto two = s.unfollow_json(w.admin, Kind::glossary, g, w.bob.id).value();
  CHECK(names(two.at("followers")) == std::vector<std::string>{"alice", "zoe"});
  same_version(start, two);
  appended = events_since(s, w.admin, total);
  REQUIRE(appended.size() == 1);
  const auto& removed = appended[0].at("changeDescription").as_object();
  CHECK(removed.at("fieldsAdded").as_array().empty());
  REQUIRE(removed.at("fieldsDeleted").as_array().size() == 1);
  CHECK(removed.at("fieldsDeleted").at(0).at("name") == "followers");
  CHECK(names(removed.at("fieldsDeleted").at(0).at("oldValue")) == std::vector<std::string>{"bob"});
  CHECK(!removed.at("fieldsDeleted").at(0).as_object().contains("newValue"));
  CHECK(notified == 4);
  unchanged = test::dump(s);
  CHECK(s.unfollow_json(w.bob, Kind::glossary, g, w.bob.id).value() == two);
  CHECK(test::dump(s) == unchanged);
  CHECK(notified == 4);
  CHECK(s.get_json(w.admin, Kind::user, w.bob.id, {{"follows"}})
            .value()
            .at("follows")
            .as_array()
            .empty());

  // Nothing of it is in the entity's history.
  CHECK(s.history_json(w.admin, Kind::glossary, g).value().versions.size() == history);
  s.unsubscribe(sub);
  s.follow_json(w.bob, Kind::glossary, g, w.bob.id).value();
  CHECK(notified == 4);

  // Every kind with followers, typed.
  CHECK(
      s.template follow<MlModel>(w.alice, uuid_of(w.model), w.alice.id).value().followers.size() ==
      1);
  CHECK(s.template follow<GlossaryTerm>(w.alice, uuid_of(w.term), w.alice.id)
            .value()
            .followers.size() == 1);
  CHECK(s.template follow<SearchIndex>(w.alice, uuid_of(w.index), w.alice.id)
            .value()
            .followers.size() == 1);
  CHECK(
      s.template follow<Domain>(w.alice, uuid_of(w.domain), w.alice.id).value().followers.size() ==
      1);
  CHECK(s.template unfollow<Domain>(w.alice, uuid_of(w.domain), w.alice.id)
            .value()
            .followers.empty());
}

TEMPLATE_TEST_CASE("refused follows, unfollows and votes leave the store unchanged",
                   "[social][errors]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  auto gone =
      s.create_json(w.admin, Kind::glossary, parse(R"({"name":"Gone","description":"g"})")).value();
  s.remove_json(w.admin, Kind::glossary, uuid_of(gone)).value();
  s.follow_json(w.alice, Kind::glossary, uuid_of(w.glossary), w.alice.id).value();
  const auto before = test::dump(s);
  auto refused = [&](Result<bj::object> r, ErrorKind kind, std::string_view message) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == kind);
    CHECK_THAT(r.error().message(), Catch::Contains(std::string(message)));
    CHECK(test::dump(s) == before);
  };
  const auto g = uuid_of(w.glossary);
  const auto nobody = random_uuid();
  const auto carol = uuid_of(w.u_carol);
  const auto missing = "user instance for " + to_string(nobody) + " not found";

  refused(s.follow_json(w.admin, Kind::glossary, g, nobody), ErrorKind::not_found, missing);
  CHECK(s.follow_json(w.admin, Kind::glossary, g, nobody).error().message() == missing);
  refused(s.follow_json(w.admin, Kind::glossary, g, carol), ErrorKind::not_found,
          "user instance for " + to_string(carol) + " not found");
  // The follower is read without decoding its record: an entity of another kind is no user.
  refused(s.follow_json(w.admin, Kind::glossary, g, g), ErrorKind::not_found,
          "user instance for " + to_string(g) + " not found");
  refused(s.follow_json(w.alice, Kind::glossary, nobody, w.alice.id), ErrorKind::not_found,
          "glossary instance for " + to_string(nobody) + " not found");
  refused(s.follow_json(w.alice, Kind::glossary, uuid_of(gone), w.alice.id), ErrorKind::not_found,
          "glossary instance for " + to_string(uuid_of(gone)) + " not found");
  // An id of another kind is not an entity of this one.
  refused(s.follow_json(w.alice, Kind::domain, g, w.alice.id), ErrorKind::not_found, "domain");
  refused(s.unfollow_json(w.admin, Kind::glossary, g, nobody), ErrorKind::not_found, missing);
  refused(s.unfollow_json(w.alice, Kind::glossary, nobody, w.alice.id), ErrorKind::not_found,
          "not found");
  // Kinds without followers or votes: the routes do not exist.
  for (auto [kind, entity] : {std::pair{Kind::user, w.u_bob}, std::pair{Kind::team, w.team},
                              std::pair{Kind::search_service, w.es}}) {
    INFO(type_name(kind));
    refused(s.follow_json(w.admin, kind, uuid_of(entity), w.alice.id), ErrorKind::not_found,
            "has no followers");
    refused(s.unfollow_json(w.admin, kind, uuid_of(entity), w.alice.id), ErrorKind::not_found,
            "has no followers");
    refused(s.vote_json(w.alice, kind, uuid_of(entity), VoteType::voted_up), ErrorKind::not_found,
            "has no votes");
  }
  refused(s.vote_json(w.alice, Kind::domain, uuid_of(w.domain), VoteType::voted_up),
          ErrorKind::not_found, "domain has no votes");
  refused(s.vote_json(w.alice, Kind::glossary, nobody, VoteType::voted_up), ErrorKind::not_found,
          "glossary instance for");
  refused(s.vote_json(w.alice, Kind::glossary, uuid_of(gone), VoteType::voted_down),
          ErrorKind::not_found, "glossary instance for");
  refused(s.vote_json(w.alice, Kind::glossary, g, static_cast<VoteType>(9)), ErrorKind::bad_request,
          "updatedVoteType");
  // A principal whose user was deleted since cannot vote.
  auto bob = w.bob;
  s.remove_json(w.admin, Kind::user, bob.id).value();
  const auto after_delete = test::dump(s);
  auto stale = s.vote_json(bob, Kind::glossary, g, VoteType::voted_up);
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().kind() == ErrorKind::not_found);
  CHECK(stale.error().message() == "user instance for " + to_string(bob.id) + " not found");
  CHECK(test::dump(s) == after_delete);
}

TEMPLATE_TEST_CASE("votes: one per user, moved, removed, counted; no version, no repeats",
                   "[social][votes]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  const auto g = uuid_of(w.glossary);
  const auto start = get_all(s, w.admin, Kind::glossary, w.glossary);
  int notified = 0;
  s.subscribe([&](const ChangeEvent&) { ++notified; });
  auto total = event_total(s, w.admin);
  auto votes_after = [&](const Principal& who, VoteType v) {
    auto e = s.vote_json(who, Kind::glossary, g, v).value();
    same_version(start, e);
    return e.at("votes").as_object();
  };
  auto v = votes_after(w.zoe, VoteType::voted_up);
  v = votes_after(w.bob, VoteType::voted_down);
  v = votes_after(w.alice, VoteType::voted_up);
  CHECK(v.at("upVotes") == 2);
  CHECK(v.at("downVotes") == 1);
  CHECK(names(v.at("upVoters")) == std::vector<std::string>{"alice", "zoe"});
  CHECK(names(v.at("downVoters")) == std::vector<std::string>{"bob"});
  CHECK(notified == 3);

  auto appended = events_since(s, w.admin, total);
  REQUIRE(appended.size() == 3);
  const auto& e = appended[2];
  CHECK(e.at("eventType") == "entityFieldsChanged");
  CHECK(e.at("userName") == "alice");
  CHECK(e.at("currentVersion") == start.at("version"));
  const auto& change = e.at("changeDescription").as_object();
  CHECK(change.at("fieldsAdded").as_array().empty());
  CHECK(change.at("fieldsDeleted").as_array().empty());
  REQUIRE(change.at("fieldsUpdated").as_array().size() == 1);
  CHECK(change.at("fieldsUpdated").at(0) ==
        parse(R"({"name":"votes","oldValue":"unVoted","newValue":"votedUp"})"));

  // The same vote again, or unVoted without a vote: nothing written, nothing recorded.
  auto unchanged = test::dump(s);
  CHECK(votes_after(w.alice, VoteType::voted_up) == v);
  s.vote_json(w.admin, Kind::glossary, g, VoteType::un_voted).value();
  CHECK(test::dump(s) == unchanged);
  CHECK(notified == 3);

  // Up -> down -> unVoted moves, then removes, the one vote.
  total = event_total(s, w.admin);
  v = votes_after(w.alice, VoteType::voted_down);
  CHECK(v.at("upVotes") == 1);
  CHECK(v.at("downVotes") == 2);
  CHECK(names(v.at("downVoters")) == std::vector<std::string>{"alice", "bob"});
  v = votes_after(w.alice, VoteType::un_voted);
  CHECK(v.at("upVotes") == 1);
  CHECK(v.at("downVotes") == 1);
  CHECK(names(v.at("upVoters")) == std::vector<std::string>{"zoe"});
  CHECK(names(v.at("downVoters")) == std::vector<std::string>{"bob"});
  appended = events_since(s, w.admin, total);
  REQUIRE(appended.size() == 2);
  CHECK(appended[0].at("changeDescription").at("fieldsUpdated").at(0) ==
        parse(R"({"name":"votes","oldValue":"votedUp","newValue":"votedDown"})"));
  CHECK(appended[1].at("changeDescription").at("fieldsUpdated").at(0) ==
        parse(R"({"name":"votes","oldValue":"votedDown","newValue":"unVoted"})"));
  CHECK(notified == 5);
  CHECK(get_all(s, w.admin, Kind::glossary, w.glossary).at("votes") == v);

  // Every kind with votes, typed.
  CHECK(s.template vote<MlModel>(w.bob, uuid_of(w.model), VoteType::voted_up)
            .value()
            .votes->up_votes == 1);
  CHECK(s.template vote<GlossaryTerm>(w.bob, uuid_of(w.term), VoteType::voted_down)
            .value()
            .votes->down_votes == 1);
  auto idx = s.template vote<SearchIndex>(w.bob, uuid_of(w.index), VoteType::voted_up).value();
  REQUIRE(idx.votes->up_voters.size() == 1);
  CHECK(idx.votes->up_voters[0].name == "bob");
}

TEMPLATE_TEST_CASE("followers and votes through soft delete, restore and hard delete",
                   "[social][lifecycle]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  const auto idx = uuid_of(w.index);
  s.follow_json(w.alice, Kind::search_index, idx, w.alice.id).value();
  s.follow_json(w.bob, Kind::search_index, idx, w.bob.id).value();

  SECTION("followers survive soft delete and restore; unfollow works on a deleted entity") {
    s.remove_json(w.admin, Kind::search_index, idx).value();
    auto deleted = get_all(s, w.admin, Kind::search_index, w.index);
    CHECK(names(deleted.at("followers")) == std::vector<std::string>{"alice", "bob"});
    const auto before = test::dump(s);
    auto r = s.follow_json(w.zoe, Kind::search_index, idx, w.zoe.id);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::not_found);
    CHECK(s.vote_json(w.zoe, Kind::search_index, idx, VoteType::voted_up).error().kind() ==
          ErrorKind::not_found);
    CHECK(test::dump(s) == before);
    auto left = s.unfollow_json(w.bob, Kind::search_index, idx, w.bob.id).value();
    CHECK(left.at("deleted") == true);
    CHECK(names(left.at("followers")) == std::vector<std::string>{"alice"});
    s.restore_json(w.admin, Kind::search_index, idx).value();
    auto restored = get_all(s, w.admin, Kind::search_index, w.index);
    CHECK(names(restored.at("followers")) == std::vector<std::string>{"alice"});
  }

  SECTION("a soft-deleted follower shows deleted, and can still be unfollowed") {
    s.vote_json(w.bob, Kind::search_index, idx, VoteType::voted_up).value();
    s.remove_json(w.admin, Kind::user, w.bob.id).value();
    auto e = get_all(s, w.admin, Kind::search_index, w.index);
    REQUIRE(names(e.at("followers")) == std::vector<std::string>{"alice", "bob"});
    CHECK(e.at("followers").at(0).at("deleted") == false);
    CHECK(e.at("followers").at(1).at("deleted") == true);
    CHECK(e.at("votes").at("upVoters").at(0).at("deleted") == true);
    // Following needs a live user; unfollowing only a known one.
    const auto before = test::dump(s);
    CHECK(s.follow_json(w.admin, Kind::mlmodel, uuid_of(w.model), w.bob.id).error().message() ==
          "user instance for " + to_string(w.bob.id) + " not found");
    CHECK(test::dump(s) == before);
    auto left = s.unfollow_json(w.admin, Kind::search_index, idx, w.bob.id).value();
    CHECK(names(left.at("followers")) == std::vector<std::string>{"alice"});
  }

  SECTION("hard-deleting the user removes its follow and vote edges both ways") {
    s.vote_json(w.alice, Kind::search_index, idx, VoteType::voted_down).value();
    s.follow_json(w.alice, Kind::glossary, uuid_of(w.glossary), w.alice.id).value();
    DeleteOptions hard;
    hard.hard_delete = true;
    CHECK_FALSE(s.remove_json(w.admin, Kind::user, w.alice.id, hard).value());
    auto e = get_all(s, w.admin, Kind::search_index, w.index);
    CHECK(names(e.at("followers")) == std::vector<std::string>{"bob"});
    CHECK(e.at("votes").at("downVotes") == 0);
    CHECK(get_all(s, w.admin, Kind::glossary, w.glossary).at("followers").as_array().empty());
    auto dump = test::dump(s);
    CHECK(dump.find(std::string(reinterpret_cast<const char*>(w.alice.id.data), 16)) ==
          std::string::npos);
  }

  SECTION("hard-deleting the entity removes the edges from the users' side") {
    DeleteOptions hard;
    hard.hard_delete = true;
    CHECK_FALSE(s.remove_json(w.admin, Kind::search_index, idx, hard).value());
    auto alice = s.get_json(w.admin, Kind::user, w.alice.id, {{"follows"}}).value();
    CHECK(alice.at("follows").as_array().empty());
    CHECK(s.unfollow_json(w.alice, Kind::search_index, idx, w.alice.id).error().kind() ==
          ErrorKind::not_found);
  }
}

TEST_CASE("follow, unfollow and vote are authorized once, after the entity is read",
          "[social][auth]") {
  auto recorder = std::make_shared<test::RecordingAuthorizer>();
  auto options = test::test_options();
  options.authorizer = recorder;
  auto s = Store::in_memory(options).value();
  auto w = build(s);
  auto owned = s.create_json(w.admin, Kind::glossary,
                             parse(R"({"name":"Owned","description":"o","owners":[{"id":")" +
                                   id_of(w.u_zoe) + R"(","type":"user"}]})"))
                   .value();
  const auto g = uuid_of(owned);
  auto last_call = [&](std::size_t calls_before) {
    auto calls = recorder->calls();
    REQUIRE(calls.size() == calls_before + 1);
    return calls.back();
  };
  auto n = recorder->calls().size();
  s.follow_json(w.alice, Kind::glossary, g, w.alice.id).value();
  auto call = last_call(n);
  CHECK(call.ops == std::vector<Operation>{Operation::follow});
  CHECK(call.kind == Kind::glossary);
  CHECK(call.owners == 1);  // the stored entity's owners decide isOwner()

  n = recorder->calls().size();
  s.follow_json(w.alice, Kind::glossary, g, w.bob.id).value();
  CHECK(last_call(n).ops == std::vector<Operation>{Operation::edit_followers});
  n = recorder->calls().size();
  s.unfollow_json(w.alice, Kind::glossary, g, w.alice.id).value();
  CHECK(last_call(n).ops == std::vector<Operation>{Operation::follow});
  n = recorder->calls().size();
  s.unfollow_json(w.alice, Kind::glossary, g, w.bob.id).value();
  CHECK(last_call(n).ops == std::vector<Operation>{Operation::edit_followers});
  n = recorder->calls().size();
  s.vote_json(w.alice, Kind::glossary, g, VoteType::voted_up).value();
  CHECK(last_call(n).ops == std::vector<Operation>{Operation::edit_votes});

  const auto before = test::dump(s);
  recorder->deny(Operation::edit_followers);
  auto r = s.follow_json(w.alice, Kind::glossary, g, w.bob.id);
  CHECK(r.error().kind() == ErrorKind::forbidden);
  // 403 comes after the addressed entity (404) and before the referenced user (404) (docs/SEMANTICS.md §14).
  CHECK(s.follow_json(w.alice, Kind::glossary, random_uuid(), w.bob.id).error().kind() ==
        ErrorKind::not_found);
  CHECK(s.follow_json(w.alice, Kind::glossary, g, random_uuid()).error().kind() ==
        ErrorKind::forbidden);
  recorder->deny(Operation::edit_votes);
  CHECK(s.vote_json(w.alice, Kind::glossary, g, VoteType::voted_down).error().kind() ==
        ErrorKind::forbidden);
  recorder->deny(Operation::follow);
  CHECK(s.unfollow_json(w.alice, Kind::glossary, g, w.alice.id).error().kind() ==
        ErrorKind::forbidden);
  CHECK(test::dump(s) == before);
}

TEST_CASE("the default policy: following oneself and voting are open, others need rights",
          "[social][auth]") {
  auto s = Store::in_memory(test::test_options()).value();
  auto w = build(s);
  const auto g = uuid_of(w.glossary);
  CHECK(s.follow_json(w.alice, Kind::glossary, g, w.alice.id).has_value());
  CHECK(s.vote_json(w.alice, Kind::glossary, g, VoteType::voted_up).has_value());
  const auto before = test::dump(s);
  auto r = s.follow_json(w.alice, Kind::glossary, g, w.bob.id);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind() == ErrorKind::forbidden);
  CHECK(test::dump(s) == before);
}

TEMPLATE_TEST_CASE("events: admins only, pages after an offset, total, subscribers", "[events]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  std::vector<ChangeEvent> heard;
  auto sub = s.subscribe([&](const ChangeEvent& e) { heard.push_back(e); });
  s.follow_json(w.alice, Kind::glossary, uuid_of(w.glossary), w.alice.id).value();
  s.vote_json(w.alice, Kind::glossary, uuid_of(w.glossary), VoteType::voted_up).value();
  s.unsubscribe(sub);
  s.vote_json(w.bob, Kind::glossary, uuid_of(w.glossary), VoteType::voted_up).value();

  const auto total = event_total(s, w.admin);
  auto everything = s.events(w.admin, 0, 1'000'000).value();
  REQUIRE(everything.data.size() == static_cast<std::size_t>(total));
  CHECK(!everything.after);
  for (std::size_t i = 0; i < everything.data.size(); ++i)
    CHECK(everything.data[i].offset == i + 1);
  // Subscribers got exactly the stored events of the commits they heard.
  REQUIRE(heard.size() == 2);
  CHECK(to_json(heard[0]) == to_json(everything.data[total - 3]));
  CHECK(to_json(heard[1]) == to_json(everything.data[total - 2]));
  CHECK(heard[0].event_type == EventType::entity_fields_changed);
  CHECK(heard[0].user_name == "alice");

  // Paging: `after` is the last offset of a page when more follow.
  std::uint64_t after = 0;
  std::vector<std::uint64_t> offsets;
  for (int pages = 0;; ++pages) {
    REQUIRE(pages < 100);
    auto page = s.events(w.admin, after, 4).value();
    CHECK(page.total == total);
    for (const auto& e : page.data) offsets.push_back(e.offset);
    if (!page.after) break;
    CHECK(page.data.size() == 4);
    CHECK(*page.after == offsets.back());
    after = *page.after;
  }
  REQUIRE(offsets.size() == static_cast<std::size_t>(total));
  CHECK(offsets.back() == static_cast<std::uint64_t>(total));
  auto beyond = s.events(w.admin, static_cast<std::uint64_t>(total), 10).value();
  CHECK(beyond.data.empty());
  CHECK(!beyond.after);
  CHECK(beyond.total == total);
  CHECK(s.events(w.admin, std::numeric_limits<std::uint64_t>::max(), 10).value().data.empty());
  auto zero = s.events(w.admin, 0, 0).value();
  CHECK(zero.data.empty());
  CHECK(!zero.after);

  // Refused: not an admin (403); a limit out of range (400, checked first).
  const auto before = test::dump(s);
  CHECK(s.events(w.alice, 0, 10).error().kind() == ErrorKind::forbidden);
  CHECK(s.events(w.admin, 0, -1).error().code() == Errc::invalid_parameter);
  CHECK(s.events(w.admin, 0, 1'000'001).error().code() == Errc::invalid_parameter);
  CHECK(s.events(w.alice, 0, -1).error().kind() == ErrorKind::bad_request);
  CHECK(test::dump(s) == before);
}

TEMPLATE_TEST_CASE("typed follow, unfollow and vote answer what the JSON ones answer",
                   "[social][typed]", CATALOG_STORE_FIXTURES) {
  // The typed operations render the struct directly (no JSON); each must equal from_json of the
  // JSON answer to the same call, made again (a repeat changes nothing and answers the same).
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  // A follower with a display name, and followers and votes on every kind that has them.
  auto dana = s.create_json(w.admin, Kind::user,
                            parse(R"({"name":"dana","email":"dana@example.com",)"
                                  R"("displayName":"Dana \"D\" Ö"})"))
                  .value();
  auto same = [](auto typed, const bj::object& json) {
    using E = std::decay_t<decltype(typed)>;
    auto converted = from_json<E>(json);
    REQUIRE(converted.has_value());
    CHECK(catalog::json::serialize(to_json(typed)) ==
          catalog::json::serialize(to_json(*converted)));
  };
  auto check = [&]<class E>(const bj::object& entity) {
    const auto id = uuid_of(entity);
    for (const auto* u : {&w.u_zoe, &dana, &w.u_alice}) {
      same(s.template follow<E>(w.admin, id, uuid_of(*u)).value(),
           s.follow_json(w.admin, E::kind, id, uuid_of(*u)).value());
    }
    same(s.template unfollow<E>(w.admin, id, uuid_of(w.u_zoe)).value(),
         s.unfollow_json(w.admin, E::kind, id, uuid_of(w.u_zoe)).value());
    if (info(E::kind).has_votes) {
      same(s.template vote<E>(w.alice, id, VoteType::voted_up).value(),
           s.vote_json(w.alice, E::kind, id, VoteType::voted_up).value());
      same(s.template vote<E>(w.bob, id, VoteType::voted_down).value(),
           s.vote_json(w.bob, E::kind, id, VoteType::voted_down).value());
    }
    // Refusals are the same errors: a user that does not exist.
    auto missing = random_uuid();
    CHECK(s.template follow<E>(w.admin, id, missing).error().code() ==
          s.follow_json(w.admin, E::kind, id, missing).error().code());
  };
  check.template operator()<Glossary>(w.glossary);
  check.template operator()<GlossaryTerm>(w.term);
  check.template operator()<SearchIndex>(w.index);
  check.template operator()<MlModel>(w.model);
  check.template operator()<Domain>(w.domain);
  // The answer shows the display name a follower has.
  GetOptions followers;
  followers.fields = {"followers"};
  auto g = s.template get<Glossary>(w.admin, uuid_of(w.glossary), followers).value();
  REQUIRE(g.followers.size() == 2);
  CHECK(g.followers[0].name == "alice");
  CHECK(g.followers[1].display_name == "Dana \"D\" \xc3\x96");
}

TEMPLATE_TEST_CASE("many followers come back sorted by name, JSON and typed alike",
                   "[social][followers]", CATALOG_STORE_FIXTURES) {
  // References are gathered in edge (id) order and reordered in place: users made in a seeded
  // random order must come back sorted by name (user names are unique, so never by id). The
  // sort compares the first 16 bytes of names as integers first: names here tie there, are
  // prefixes of each other, or end before 16 bytes. 60 followers take the comparison sort, 200
  // the radix sort (64 and more).
  TestType f;
  auto& s = f.store;
  auto w = build(s);
  const std::string heads[] = {"u", "fifteen-bytes-x", "sixteen-bytes-xx", "sixteen-bytes-xxy"};
  for (int n : {60, 200}) {
    INFO(n << " followers");
    const auto g = uuid_of(
        s.create_json(w.admin, Kind::glossary,
                      parse(R"({"name":"G)" + std::to_string(n) + R"(","description":"d"})"))
            .value());
    std::vector<int> order(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    std::mt19937 rng(42);
    std::shuffle(order.begin(), order.end(), rng);
    for (int i : order) {
      auto name = heads[i % 4] + std::to_string(i % 45);
      auto u = s.create_json(w.admin, Kind::user,
                             parse(R"({"name":")" + name + "-" + std::to_string(i) + "-" +
                                   std::to_string(n) + R"(","displayName":")" + name +
                                   R"(","email":"x@example.com"})"))
                   .value();
      s.follow_json(w.admin, Kind::glossary, g, uuid_of(u)).value();
    }
    GetOptions followers;
    followers.fields = {"followers"};
    auto json = s.get_json(w.admin, Kind::glossary, g, followers).value();
    auto typed = s.template get<Glossary>(w.admin, g, followers).value();
    auto got = names(json.at("followers"));
    REQUIRE(got.size() == static_cast<std::size_t>(n));
    CHECK(std::is_sorted(got.begin(), got.end()));
    REQUIRE(typed.followers.size() == got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(typed.followers[i].name == got[i]);
      CHECK(to_string(typed.followers[i].id) == json.at("followers").at(i).at("id").as_string());
    }
  }
}
