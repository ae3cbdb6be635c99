// What the catalog::admin tests share (admin_test.cpp, postgres/admin_postgres_test.cpp): a
// workload that leaves something of every family of the key schema, exports as strings, and
// the raw contents of a store.
#ifndef CATALOG_TESTS_ADMIN_SUPPORT_HPP
#define CATALOG_TESTS_ADMIN_SUPPORT_HPP

#include <catalog/admin.hpp>
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace test::admin {

using namespace catalog;

inline boost::json::object make(Store& s, const Principal& who, Kind kind,
                                const std::string& body) {
  auto made = s.create_json(who, kind, parse(body));
  INFO(body);
  REQUIRE(made);
  return *made;
}

/// Requires `r` to hold a value, showing the error otherwise.
template <class T>
void need(const catalog::Result<T>& r) {
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.has_value());
}

inline DeleteOptions deletion(bool hard, bool recursive) {
  DeleteOptions o;
  o.hard_delete = hard;
  o.recursive = recursive;
  return o;
}

/// Fills `s` (opened with test_options(), so with the admin user) with every kind, nested and
/// quoted names, an FQN long enough for a hashed name key, minor and major versions, follows,
/// unfollows, votes, soft, recursive and hard deletes and restores, and `extra` more glossary
/// terms, each patched and followed (for tests that want a few thousand entities).
inline void workload(Store& s, int extra = 0) {
  const auto admin = s.principal("admin").value();
  auto alice = make(s, admin, Kind::user, R"({"name":"alice","email":"alice@example.com"})");
  auto bob = make(s, admin, Kind::user, R"({"name":"bob.b","email":"bob@example.com"})");
  auto carol = make(s, admin, Kind::user, R"({"name":"carol","email":"carol@example.com"})");
  auto policy = make(
      s, admin, Kind::policy,
      R"({"name":"editing","rules":[{"name":"edit","effect":"allow","resources":["glossary"],"operations":["Create","EditDescription","Delete"]}]})");
  auto dept =
      make(s, admin, Kind::team,
           R"({"name":"dept","teamType":"Department","policies":[")" + id_of(policy) + R"("]})");
  auto team = make(s, admin, Kind::team,
                   R"({"name":"data","parents":[")" + id_of(dept) + R"("],"users":[")" +
                       id_of(alice) + R"(",")" + id_of(carol) + R"("]})");
  make(s, admin, Kind::domain, R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
  auto emea = make(
      s, admin, Kind::domain,
      R"({"name":"EMEA","domainType":"Source-aligned","description":"d","parent":"Sales","experts":["bob.b"]})");
  make(s, admin, Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto model = make(
      s, admin, Kind::mlmodel,
      R"({"name":"churn","service":"mlflow","algorithm":"xgboost","domains":["Sales"],"owners":[{"id":")" +
          id_of(alice) + R"(","type":"user"}]})");
  auto major =
      make(s, admin, Kind::mlmodel,
           R"({"name":"v1.0","service":"mlflow","algorithm":"lr","description":"ünï \"q\""})");
  make(s, admin, Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  make(s, admin, Kind::search_index,
       R"({"name":"logs","service":"es","fields":[{"name":"msg","dataType":"TEXT"}]})");
  make(s, admin, Kind::search_service, R"({"name":"solr","serviceType":"ElasticSearch"})");
  make(s, admin, Kind::search_index,
       R"({"name":"docs","service":"solr","fields":[{"name":"body","dataType":"TEXT"}]})");
  auto glossary =
      make(s, admin, Kind::glossary,
           R"({"name":"G","description":"g","reviewers":[{"id":")" + id_of(bob) +
               R"(","type":"user"}],"owners":[{"id":")" + id_of(team) + R"(","type":"team"}]})");
  auto term_a =
      make(s, admin, Kind::glossary_term, R"({"glossary":"G","name":"A","description":"a"})");
  make(s, admin, Kind::glossary_term,
       R"({"glossary":"G","parent":"G.A","name":"A1","description":"a"})");
  auto a1x = make(s, admin, Kind::glossary_term,
                  R"({"glossary":"G","parent":"G.A.A1","name":"A1x","description":"a"})");
  auto term_b = make(s, admin, Kind::glossary_term,
                     R"({"glossary":"G","name":"B","description":"b","relatedTerms":["G.A"]})");
  const std::string long_name(250, 'n');  // two levels of it: a hashed name key
  make(s, admin, Kind::glossary_term,
       R"({"glossary":"G","parent":"G.A","name":")" + long_name + R"(","description":"l"})");
  make(s, admin, Kind::glossary_term,
       R"({"glossary":"G","parent":"G.A.)" + long_name + R"(","name":")" + long_name +
           R"(","description":"l"})");

  auto patch = [&](Kind kind, const boost::json::object& e, const std::string& body) {
    need(s.patch_json(admin, kind, uuid_of(e), parse(body)));
  };
  patch(Kind::mlmodel, model, R"({"description":"who leaves"})");
  patch(Kind::mlmodel, model, R"({"algorithm":"lightgbm"})");  // a major version
  patch(Kind::glossary, glossary, R"([{"op":"replace","path":"/description","value":"g2"}])");
  patch(Kind::team, team, R"({"users":[{"id":")" + id_of(alice) + R"(","type":"user"}]})");
  need(s.follow_json(admin, Kind::mlmodel, uuid_of(model), uuid_of(alice)));
  need(s.follow_json(admin, Kind::mlmodel, uuid_of(model), uuid_of(bob)));
  need(s.follow_json(admin, Kind::glossary_term, uuid_of(term_a), uuid_of(bob)));
  need(s.unfollow_json(admin, Kind::mlmodel, uuid_of(model), uuid_of(bob)));
  need(s.vote_json(admin, Kind::mlmodel, uuid_of(model), VoteType::voted_up));
  need(s.vote_json(admin, Kind::glossary_term, uuid_of(term_a), VoteType::voted_down));
  need(s.remove_json(admin, Kind::glossary_term, uuid_of(term_b)));
  need(s.restore_json(admin, Kind::glossary_term, uuid_of(term_b)));
  need(s.remove_json(admin, Kind::glossary_term, uuid_of(a1x)));
  need(s.remove_json(admin, Kind::glossary, uuid_of(glossary), deletion(false, true)));
  need(s.restore_json(admin, Kind::glossary, uuid_of(glossary)));
  need(s.remove_json(admin, Kind::glossary_term, uuid_of(a1x), deletion(true, false)));
  need(s.remove_json(admin, Kind::user, uuid_of(carol), deletion(true, false)));
  need(s.remove_json(admin, Kind::domain, uuid_of(emea), deletion(true, false)));
  need(s.remove_json(admin, Kind::search_service, EntityKey::by_fqn("es"), deletion(true, true)));
  need(s.remove_json(admin, Kind::mlmodel, uuid_of(major)));
  need(
      s.remove_json(admin, Kind::search_service, EntityKey::by_fqn("solr"), deletion(false, true)));
  need(s.remove_json(admin, Kind::user, uuid_of(bob)));
  for (int i = 0; i < extra; ++i) {
    auto term =
        make(s, admin, Kind::glossary_term,
             R"({"glossary":"G","name":"t)" + std::to_string(i) + R"(","description":"x"})");
    patch(Kind::glossary_term, term, R"({"description":"y"})");
    need(s.follow_json(admin, Kind::glossary_term, uuid_of(term), uuid_of(alice)));
  }
}

/// The export of `s` as a string. REQUIRES: it succeeds.
inline std::string export_text(Store& s, catalog::admin::ExportInfo* info = nullptr) {
  std::ostringstream out;
  auto exported = catalog::admin::export_store(s, out);
  INFO((exported ? "" : exported.error().message()));
  REQUIRE(exported.has_value());
  if (info) *info = *exported;
  return out.str();
}

/// Imports `text` into `s`. Errors: import_store's.
inline catalog::Result<catalog::admin::DumpCounts> import_text(Store& s, const std::string& text) {
  std::istringstream in(text);
  return catalog::admin::import_store(s, in);
}

/// The lines of `text`.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace test::admin

#endif  // CATALOG_TESTS_ADMIN_SUPPORT_HPP
