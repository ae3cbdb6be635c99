// The key schema's decoders (<catalog/detail/engine/keys.hpp>): each reads back exactly what its family's
// encoder wrote, and refuses bytes that are not a key of its family, so no caller takes a stored
// key apart by offsets.
#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <catalog/detail/engine/keys.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace catalog;
namespace keys = catalog::engine::keys;
using keys::Rel;

namespace {

Uuid id_of(const char* text) { return parse_uuid(text).value(); }

const Uuid a = id_of("00000000-0000-4000-8000-000000000001");
const Uuid b = id_of("ffffffff-0000-4000-8000-0000000000ff");

}  // namespace

TEST_CASE("keys: entity and event keys decode to what they encode", "[keys]") {
  CHECK(keys::decode_entity(keys::entity(a)) == a);
  CHECK(keys::decode_entity(keys::entity(b)) == b);
  CHECK_FALSE(keys::decode_entity(keys::entity(a).substr(0, 16)));
  CHECK_FALSE(keys::decode_entity(keys::history_prefix(a)));  // another tag, same length
  for (std::uint64_t offset : {std::uint64_t{1}, std::uint64_t{256}, ~std::uint64_t{0}})
    CHECK(keys::decode_event(keys::event(offset)) == offset);
  CHECK_FALSE(keys::decode_event(keys::event_prefix()));
  CHECK_FALSE(keys::decode_event(keys::event(7) + 'x'));
  CHECK(keys::decode_meta(keys::meta("event_offset")) == std::string_view("event_offset"));
  CHECK_FALSE(keys::decode_meta(keys::entity(a)));
}

TEST_CASE("keys: name keys keep their kind and FQN key", "[keys]") {
  for (Kind kind : all_kinds) {
    const auto key = keys::name(kind, "svc.model");  // the decoded views point into it
    auto decoded = keys::decode_name(key);
    REQUIRE(decoded);
    CHECK(decoded->kind == kind);
    CHECK(decoded->fqn_key == "svc.model");
  }
  // A long FQN is stored as its prefix, 0xff and its SHA-256: the decoder gives that back.
  const std::string long_fqn(600, 'n');
  const auto key = keys::name(Kind::glossary, long_fqn);
  auto decoded = keys::decode_name(key);
  REQUIRE(decoded);
  CHECK(decoded->fqn_key.size() == 400 + 1 + 32);
  CHECK(decoded->fqn_key.substr(0, 400) == long_fqn.substr(0, 400));
  CHECK_FALSE(keys::decode_name("N"));
  CHECK_FALSE(keys::decode_name(std::string("N") + static_cast<char>('a' + 40) + "x"));
}

TEST_CASE("keys: history keys keep id and version", "[keys]") {
  for (auto v : {Version::initial(), Version::from_tenths(13), Version::from_tenths(0xfffffff)}) {
    auto decoded = keys::decode_history(keys::history(b, v));
    REQUIRE(decoded);
    CHECK(decoded->id == b);
    CHECK(decoded->version == v);
  }
  CHECK_FALSE(keys::decode_history(keys::history_prefix(b)));
}

TEST_CASE("keys: list keys and positions decode, names with any bytes but 0x00", "[keys]") {
  for (bool deleted : {false, true})
    for (const Uuid& scope : {keys::all_scope, b}) {
      const std::string name = "na\xc3\xafve \xff name";
      auto key = keys::list(Kind::mlmodel, deleted, scope, name, a);
      auto decoded = keys::decode_list(key);
      REQUIRE(decoded);
      CHECK(decoded->kind == Kind::mlmodel);
      CHECK(decoded->deleted == deleted);
      CHECK(decoded->scope == scope);
      CHECK(decoded->name == name);
      CHECK(decoded->id == a);
      auto position =
          keys::decode_list_position(std::string_view(key).substr(keys::list_prefix_size));
      REQUIRE(position);
      CHECK(position->name == name);
      CHECK(position->id == a);
      CHECK(key.substr(0, keys::list_prefix_size) ==
            keys::list_prefix(Kind::mlmodel, deleted, scope));
    }
  auto key = keys::list(Kind::user, false, keys::all_scope, "x", a);
  CHECK_FALSE(keys::decode_list(keys::list_prefix(Kind::user, false, keys::all_scope)));
  std::string bad_state = key;
  bad_state[2] = '2';
  CHECK_FALSE(keys::decode_list(bad_state));
  std::string no_separator = key;
  no_separator[keys::list_prefix_size + 1] = 'y';
  CHECK_FALSE(keys::decode_list(no_separator));
  // An empty name is not one the engine writes.
  CHECK_FALSE(keys::decode_list_position(keys::list_position("", a)));
}

TEST_CASE("keys: counter keys, sharded and of key schema 1", "[keys]") {
  for (unsigned shard : {0u, keys::counter_shards - 1}) {
    auto decoded = keys::decode_counter(keys::counter(Kind::domain, true, b, shard));
    REQUIRE(decoded);
    CHECK(decoded->kind == Kind::domain);
    CHECK(decoded->deleted);
    CHECK(decoded->scope == b);
    CHECK(decoded->shard == shard);
  }
  auto schema_1 = keys::decode_counter(keys::counter_prefix(Kind::team, false, keys::all_scope));
  REQUIRE(schema_1);
  CHECK(schema_1->kind == Kind::team);
  CHECK_FALSE(schema_1->shard);
  CHECK_FALSE(keys::decode_counter(keys::counter(Kind::team, false, a, keys::counter_shards)));
  CHECK_FALSE(keys::decode_counter(keys::list_prefix(Kind::team, false, a)));

  CHECK(keys::decode_count(keys::encode_u64(42)) == 42);
  CHECK(keys::decode_count(keys::encode_u64(static_cast<std::uint64_t>(std::int64_t{-3}))) == -3);
  CHECK_FALSE(keys::decode_count("1234567"));
}

TEST_CASE("keys: both directions of an edge decode to the same edge", "[keys]") {
  for (Rel rel : {Rel::owns, Rel::follows, Rel::votes, Rel::reviews, Rel::expert, Rel::contains,
                  Rel::member, Rel::policy, Rel::domain, Rel::related}) {
    auto forward = keys::decode_edge(keys::edge(a, rel, b));
    auto reverse = keys::decode_reverse_edge(keys::reverse_edge(b, rel, a));
    REQUIRE(forward);
    REQUIRE(reverse);
    CHECK(forward->from == a);
    CHECK(forward->rel == rel);
    CHECK(forward->to == b);
    CHECK(reverse->from == a);
    CHECK(reverse->rel == rel);
    CHECK(reverse->to == b);
  }
  // The tag says which direction a key is; a relation byte outside Rel is no edge.
  CHECK_FALSE(keys::decode_edge(keys::reverse_edge(b, Rel::owns, a)));
  CHECK_FALSE(keys::decode_reverse_edge(keys::edge(a, Rel::owns, b)));
  std::string unknown = keys::edge(a, Rel::owns, b);
  unknown[1 + keys::id_size] = 'z';
  CHECK_FALSE(keys::decode_edge(unknown));
  CHECK_FALSE(keys::decode_edge(keys::edge_prefix(a, Rel::owns)));
}
