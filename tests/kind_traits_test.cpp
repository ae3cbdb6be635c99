// The per-kind traits (entities.hpp) and the table built from them (kind_traits.hpp): every field
// a kind's traits name is a member of its struct, the relationship fields agree with each other
// across kinds, and visiting a kind hands over its own struct.
#include <catalog/kind_traits.hpp>

#include <catch2/catch.hpp>

#include <boost/describe/members.hpp>
#include <boost/mp11/algorithm.hpp>

#include <set>
#include <string>
#include <string_view>
#include <type_traits>

using namespace catalog;

namespace {

/// The JSON member names of entity struct `E`.
template <class E>
std::set<std::string, std::less<>> members_of() {
  std::set<std::string, std::less<>> out;
  boost::mp11::mp_for_each<boost::describe::describe_members<
      E, boost::describe::mod_public | boost::describe::mod_inherited>>(
      [&](auto member) { out.insert(detail::wire_name<decltype(member)>()); });
  return out;
}

std::string kind_name(Kind k) { return std::string(type_name(k)); }

}  // namespace

TEST_CASE("the table has every kind at its own index, found by type and by collection") {
  for (auto k : all_kinds) {
    CAPTURE(kind_name(k));
    CHECK(info(k).kind == k);
    CHECK(kind_from_type(info(k).type) == k);
    CHECK(kind_from_collection(info(k).collection) == k);
    CHECK(visit_kind(k, []<class E>(std::type_identity<E>) { return E::kind; }) == k);
  }
  CHECK_FALSE(kind_from_type("table").has_value());
  CHECK(service_kind(Kind::mlmodel) == Kind::mlmodel_service);
  CHECK(service_kind(Kind::search_index) == Kind::search_service);
  CHECK_FALSE(service_kind(Kind::glossary).has_value());
}

TEST_CASE("every field a kind's traits name is a member of its struct") {
  boost::mp11::mp_for_each<boost::mp11::mp_transform<std::type_identity, entity_types>>(
      [](auto type) {
        using E = typename decltype(type)::type;
        const auto& kind = KindTraits<E>::info;
        const auto members = members_of<E>();
        CAPTURE(kind_name(E::kind));
        auto check = [&](std::span<const std::string_view> fields) {
          for (auto f : fields) {
            CAPTURE(std::string(f));
            CHECK(members.count(f) == 1);
          }
        };
        check(kind.extra_fields);
        check(kind.read_only);
        check(kind.required);
        check(kind.major_fields);
        check(kind.admin_only);
        check(kind.rule_fields);
        for (const auto& rf : kind.relations) {
          CAPTURE(std::string(rf.field));
          CHECK(members.count(rf.field) == 1);
          CHECK_FALSE(rf.others.empty());
        }
        for (const auto& c : kind.counts) CHECK(members.count(c.field) == 1);
        if (!kind.container_field.empty()) CHECK(members.count(kind.container_field) == 1);
        if (!kind.container_type.empty()) CHECK(members.count(kind.container_type) == 1);
        if (kind.in_glossary) CHECK(members.count("glossary") == 1);
        // Required fields are the struct's own, never left out of its JSON, and the create
        // request gives each (or its default, as a team's type).
        const auto rendered = to_json(E{}).as_object();
        const auto requested = members_of<typename E::create_type>();
        for (auto f : kind.required) {
          CAPTURE(std::string(f));
          CHECK(rendered.contains(f));
          CHECK(requested.count(f) == 1);
        }
      });
}

TEST_CASE("relationship fields of both ends agree") {
  // An edge a kind names from its side (rel, forward, to O) is named by O from its side
  // (rel, reverse, from the kind), wherever O renders that relation at all.
  for (auto k : all_kinds)
    for (const auto& rf : info(k).relations)
      for (auto o : all_kinds) {
        if (!rf.others.contains(o)) continue;
        for (const auto& back : info(o).relations) {
          if (back.rel != rf.rel || back.reverse == rf.reverse) continue;
          CAPTURE(kind_name(k), std::string(rf.field), kind_name(o), std::string(back.field));
          CHECK(back.others.contains(k));
        }
      }
}

TEST_CASE("followers, votes, owners and containers follow the kinds' flags") {
  for (auto k : all_kinds) {
    const auto& kind = info(k);
    CAPTURE(kind_name(k));
    bool followers = false, owners = false;
    for (const auto& rf : kind.relations) {
      if (rf.rel == Relation::follows && rf.reverse) followers = true;
      if (rf.rel == Relation::owns && rf.reverse) {
        owners = true;
        for (auto o : all_kinds) CHECK(rf.others.contains(o) == info(o).may_own);
      }
    }
    CHECK(followers == kind.has_followers);
    CHECK(owners == (kind.kind != Kind::user));  // users own; nothing owns a user
    CHECK(kind.container_field.empty() == (kind.placement == Placement::top_level));
    if (kind.placement != Placement::top_level) CHECK_FALSE(kind.containers.empty());
    if (kind.has_votes) CHECK(kind.has_followers);
    CHECK(kind.service.has_value() == !kind.container_type.empty());
  }
  CHECK(info(Kind::team).owner_rule != nullptr);
  CHECK(info(Kind::team).members_own);
  CHECK_FALSE(info(Kind::user).members_own);
}
