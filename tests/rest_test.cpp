// The REST surface (docs/REST.md) through Api::handle: every route over every collection, every
// status (200, 201, 204, 400, 401, 403, 404, 405, 409) with its errorType, the order of checks
// of docs/SEMANTICS.md §14, the headers (ETag, Content-Type, Allow), and a seeded run of hostile
// requests that must all be answered. Tokens are HS256 JWTs signed here with OpenSSL.
#include <catalog/rest/api.hpp>

#include "rest_support.hpp"

#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace rest_test;

const std::string zero_id = "00000000-0000-4000-8000-000000000000";

}  // namespace

TEST_CASE("each error kind is answered with its status", "[rest]") {
  using catalog::ErrorKind;
  CHECK(catalog::rest::http_status(ErrorKind::bad_request) == 400);
  CHECK(catalog::rest::http_status(ErrorKind::unauthorized) == 401);
  CHECK(catalog::rest::http_status(ErrorKind::forbidden) == 403);
  CHECK(catalog::rest::http_status(ErrorKind::not_found) == 404);
  CHECK(catalog::rest::http_status(ErrorKind::conflict) == 409);
  CHECK(catalog::rest::http_status(ErrorKind::internal) == 500);
}

TEST_CASE_METHOD(Fixture, "integers past 64 bits are 400 naming what was sent, not clamped") {
  require_error(call("GET", "/v1/events?after=18446744073709551616"), 400, "BAD_REQUEST",
                "Query parameter after is too large, not a 64-bit integer: 18446744073709551616");
  require_error(call("GET", "/v1/glossaries?limit=99999999999999999999999"), 400, "BAD_REQUEST",
                "Query parameter limit is too large, not a 64-bit integer: "
                "99999999999999999999999");
  // The largest is a number still: an offset past the log's end is an empty page.
  auto last = call("GET", "/v1/events?after=9223372036854775807");
  CHECK(last.status == 200);
  require_error(call("GET", "/v1/events?after=9223372036854775808"), 400, "BAD_REQUEST",
                "is too large");
}

TEST_CASE_METHOD(Fixture, "refuse_unauthenticated: handle's 401 from the headers alone, before "
                          "a body") {
  const std::string body = R"({"name":"g","description":"d"})";
  for (auto value : {"", "Basic YWRtaW46YWRtaW4=", "Bearer not-a-token"}) {
    INFO(value);
    Request head{"POST", "/v1/glossaries", {{"Content-Type", "application/json"}}, ""};
    if (*value) head.headers.emplace_back("Authorization", value);
    auto refused = api.refuse_unauthenticated(head);
    REQUIRE(refused.has_value());
    require_error(*refused, 401, "UNAUTHORIZED");
    auto whole = head;
    whole.body = body;
    const auto answered = api.handle(whole);
    CHECK(refused->body == answered.body);
    CHECK(refused->headers == answered.headers);
  }
  // A valid token: nothing to refuse, and nothing done (the body is not there yet).
  Request head{"POST", "/v1/glossaries", {{"Authorization", "Bearer " + admin}}, ""};
  const auto before = test::dump(store);
  CHECK_FALSE(api.refuse_unauthenticated(head).has_value());
  CHECK(test::dump(store) == before);
  // Whatever the path: the Api's 401 comes before its 404.
  head = Request{"PUT", "/nowhere", {}, ""};
  REQUIRE(api.refuse_unauthenticated(head).has_value());
  CHECK(api.refuse_unauthenticated(head)->status == 401);
}

TEST_CASE_METHOD(Fixture, "401 comes first, whatever the request asks") {
  SECTION("no header, other schemes, malformed tokens") {
    for (auto value :
         {"", "Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer ", "Bearer\tabc", "Bearerabc",
          " Bearer abc", "Bearer a b", "Bearer abc+def", "Bearer abc=", "Bearer \"abc\""}) {
      Request r{"GET", "/v1/glossaries", {{"Authorization", value}}, ""};
      INFO(value);
      auto resp = api.handle(r);
      require_error(resp, 401, "UNAUTHORIZED");
      REQUIRE(header(resp, "WWW-Authenticate") == "Bearer");
    }
    require_error(api.handle(Request{"GET", "/v1/glossaries", {}, ""}), 401, "UNAUTHORIZED",
                  "Missing");
  }
  SECTION("the scheme in any case, several spaces, trailing spaces and tabs") {
    for (auto prefix : {"Bearer ", "bearer ", "BEARER   ", "bEaReR "}) {
      Request r{"GET", "/v1/glossaries", {{"authorization", prefix + admin + " \t "}}, ""};
      INFO(prefix);
      REQUIRE(api.handle(r).status == 200);
    }
  }
  SECTION("two Authorization headers") {
    Request r{"GET",
              "/v1/glossaries",
              {{"Authorization", "Bearer " + admin}, {"Authorization", "Bearer " + admin}},
              ""};
    require_error(api.handle(r), 401, "UNAUTHORIZED");
  }
  SECTION("tokens that fail a check") {
    auto expired = sign(R"({"sub":"admin","exp":)" + std::to_string(now_seconds - 3600) + "}");
    auto wrong_key = sign(R"({"sub":"admin","exp":)" + std::to_string(now_seconds + 60) + "}",
                          "another-secret-of-at-least-32-bytes!!");
    auto unknown = token_for("nobody");
    for (const auto& t : {expired, wrong_key, unknown, std::string("abc.def.ghi")})
      require_error(call("GET", "/v1/glossaries", {}, {}, t), 401, "UNAUTHORIZED");
  }
  SECTION("before 404, 405 and every 400") {
    Headers bad{{"Authorization", "Bearer x.y.z"}};
    for (auto [method, target] : std::initializer_list<std::pair<const char*, const char*>>{
             {"GET", "/nowhere"},
             {"DELETE", "/v1/glossaries"},
             {"GET", "/v1/glossaries/not-a-uuid"},
             {"GET", "/v1/glossaries?limit=abc"},
             {"GET", "/v1/%zz"},
             {"GET", "not a target"}}) {
      INFO(method << " " << target);
      require_error(api.handle(Request{method, target, bad, "{"}), 401, "UNAUTHORIZED");
    }
  }
  SECTION("a soft-deleted user is no principal") {
    auto carol = create("users", R"({"name":"carol","email":"carol@example.com"})");
    REQUIRE(call("GET", "/v1/glossaries", {}, {}, token_for("carol")).status == 200);
    ok("DELETE", "/v1/users/" + carol);
    require_error(call("GET", "/v1/glossaries", {}, {}, token_for("carol")), 401, "UNAUTHORIZED");
  }
}

TEST_CASE_METHOD(Fixture, "404 unknown paths, 405 other methods with Allow") {
  auto service = create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto user = create("users", R"({"name":"alice","email":"alice@example.com"})");
  auto domain = create("domains", R"({"name":"Sales","domainType":"Aggregate","description":"d"})");

  SECTION("unknown paths") {
    for (std::string target : std::vector<std::string>{
             "/", "/v1", "/v2/glossaries", "/v1/nothing", "/v1/glossaries/", "/v1/Glossaries",
             "/v1/services", "/v1/services/nothing", "/v1/mlmodelServices",
             "/v1/services%2FmlmodelServices", "/v1/glossaries/name", "/v1/glossaries/name/a/b",
             "/v1/glossaries/restore/x", "/v1/events/1", "/v1/glossaries/" + zero_id + "/other",
             "/v1/glossaries/not-a-uuid/other", "/v1/glossaries/" + zero_id + "/versions/0.1/x",
             // no followers on users, no votes on domains (docs/SEMANTICS.md §4, §5)
             "/v1/users/" + user + "/followers", "/v1/users/" + user + "/vote",
             "/v1/domains/" + domain + "/vote", "/v1/teams/" + zero_id + "/followers/" + user,
             "/v1/services/mlmodelServices/" + service + "/followers"}) {
      INFO(target);
      require_error(call("GET", target), 404, "NOT_FOUND");
    }
  }
  SECTION("known paths, other methods") {
    struct Case {
      std::string method, target, allow;
    };
    for (const auto& c :
         std::vector<Case>{{"DELETE", "/v1/glossaries", "GET, POST"},
                           {"PUT", "/v1/services/searchServices", "GET, POST"},
                           {"POST", "/v1/glossaries/" + zero_id, "GET, PATCH, DELETE"},
                           {"PUT", "/v1/teams/name/x", "GET, PATCH, DELETE"},
                           {"GET", "/v1/glossaries/restore", "PUT"},
                           {"PATCH", "/v1/glossaries/restore", "PUT"},
                           {"DELETE", "/v1/teams/" + zero_id + "/versions", "GET"},
                           {"PUT", "/v1/teams/" + zero_id + "/versions/0.1", "GET"},
                           {"GET", "/v1/mlmodels/" + zero_id + "/followers", "PUT"},
                           {"PUT", "/v1/mlmodels/" + zero_id + "/followers/" + user, "DELETE"},
                           {"GET", "/v1/glossaryTerms/" + zero_id + "/vote", "PUT"},
                           {"POST", "/v1/events", "GET"},
                           {"get", "/v1/glossaries", "GET, POST"},
                           {"HEAD", "/v1/glossaries", "GET, POST"}}) {
      INFO(c.method << " " << c.target);
      auto r = call(c.method, c.target, "not json");
      require_error(r, 405, "METHOD_NOT_ALLOWED");
      REQUIRE(header(r, "Allow") == c.allow);
    }
  }
  SECTION("the path decides before its values: 404 and 405 before 400") {
    require_error(call("GET", "/v1/glossaries/not-a-uuid/x"), 404, "NOT_FOUND");
    require_error(call("POST", "/v1/glossaries/not-a-uuid", "{"), 405, "METHOD_NOT_ALLOWED");
    require_error(call("GET", "/v1/mlmodels/not-a-uuid/followers"), 405, "METHOD_NOT_ALLOWED");
  }
  SECTION("percent-encoded literal segments are the same segments") {
    REQUIRE(call("GET", "/v1/gloss%61ries").status == 200);
    REQUIRE(call("GET", "/%761/services/mlmodel%53ervices").status == 200);
  }
}

TEST_CASE_METHOD(Fixture, "400: what the request alone decides") {
  create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto model = create("mlmodels", R"({"name":"churn","service":"mlflow","algorithm":"xgb"})");
  auto glossary = create("glossaries", R"({"name":"Business","description":"d"})");
  auto g = "/v1/glossaries/" + glossary;

  SECTION("targets that are not origin-form") {
    for (auto target : {"/v1/glossaries?limit=%zz", "/v1/%", "/v1/glossaries#frag",
                        "http://host/v1/glossaries", "v1/glossaries", "", "*"}) {
      INFO(target);
      require_error(call("GET", target), 400, "BAD_REQUEST");
    }
  }
  SECTION("path ids, user ids, FQNs and versions") {
    for (std::string target : std::vector<std::string>{
             "/v1/glossaries/not-a-uuid", "/v1/glossaries/{" + glossary + "}",
             "/v1/glossaries/" + glossary.substr(0, 35), "/v1/glossaries/name/%22Business",
             "/v1/glossaries/name/a..b", g + "/versions/1", g + "/versions/0.15",
             g + "/versions/1e1", g + "/versions/0.0", "/v1/glossaries/x/versions"}) {
      INFO(target);
      require_error(call("GET", target), 400, "BAD_REQUEST");
    }
    require_error(call("DELETE", "/v1/mlmodels/" + model + "/followers/nobody"), 400, "BAD_REQUEST",
                  "UUID");
    require_error(call("PUT", "/v1/mlmodels/x/vote", R"({"updatedVoteType":"votedUp"})"), 400,
                  "BAD_REQUEST");
  }
  SECTION("query values") {
    for (auto query : {"limit=abc",
                       "limit=-1",
                       "limit=1.5",
                       "limit=1e3",
                       "limit=",
                       "limit",
                       "limit=1&limit=1",
                       "limit=1000001",
                       "limit=99999999999999999999999",
                       "limit=+1",
                       "include=bogus",
                       "include=",
                       "include=Deleted",
                       "fields=owners+tags",
                       "fields=owners,,tags",
                       "fields=",
                       "fields=colour",
                       "before=abc",
                       "after=",
                       "before=x&after=y",
                       "after=%00"}) {
      INFO(query);
      require_error(call("GET", std::string("/v1/glossaries?") + query), 400, "BAD_REQUEST");
    }
    require_error(call("GET", "/v1/glossaries?after=a&after=b"), 400, "BAD_REQUEST",
                  "more than once");
    for (auto query : {"hardDelete=yes", "hardDelete=True", "hardDelete=", "recursive=1",
                       "recursive=true&recursive=true"}) {
      INFO(query);
      require_error(call("DELETE", g + "?" + query), 400, "BAD_REQUEST");
    }
    require_error(call("GET", g + "?fields=bogus"), 400, "BAD_REQUEST", "Invalid field name");
    require_error(call("GET", g + "?include=nope"), 400, "BAD_REQUEST");
    require_error(call("GET", "/v1/events?after=x"), 400, "BAD_REQUEST");
    require_error(call("GET", "/v1/events?limit=1000001"), 400, "BAD_REQUEST");
  }
  SECTION("parameters a route does not use are ignored") {
    REQUIRE(call("GET", g + "?limit=abc&hardDelete=maybe&x&y=").status == 200);
    REQUIRE(call("GET", "/v1/glossaries?service=x&service=y&hardDelete=no").status == 200);
    REQUIRE(call("GET", g + "/versions?fields=bogus&include=no").status == 200);
  }
  SECTION("bodies: not I-JSON, duplicates, too deep, missing") {
    std::string deep = std::string(65, '[') + std::string(65, ']');
    for (std::string body :
         std::vector<std::string>{std::string("{"), std::string(R"({"name":"x","name":"y"})"),
                                  std::string(R"({"name":"\ud800","description":"d"})"),
                                  std::string("{\"name\":\"\xff\",\"description\":\"d\"}"),
                                  std::string("{} x"), std::string(""), deep}) {
      INFO(body);
      require_error(call("POST", "/v1/glossaries", body), 400, "BAD_REQUEST");
      require_error(call("PATCH", g, body), 400, "BAD_REQUEST");
    }
    std::string deep_ok = R"({"name":"x","description":"d","extension":)" + std::string(62, '[') +
                          std::string(62, ']') + "}";
    // 63 levels in all: within the limit (the glossary refuses `extension`, but as a member).
    require_error(call("POST", "/v1/glossaries", deep_ok), 400, "BAD_REQUEST", "extension");
  }
  SECTION("create bodies with unknown, missing or mistyped members") {
    require_error(call("POST", "/v1/glossaries", R"({"name":"x","description":"d","colour":1})"),
                  400, "BAD_REQUEST", "colour");
    require_error(call("POST", "/v1/glossaries", R"({"description":"d"})"), 400, "BAD_REQUEST");
    require_error(call("POST", "/v1/glossaries", R"({"name":7,"description":"d"})"), 400,
                  "BAD_REQUEST");
    require_error(call("POST", "/v1/glossaries", "[]"), 400, "BAD_REQUEST");
  }
  SECTION("the body limit") {
    Api small(store, ApiOptions{64});
    Request r{"POST",
              "/v1/glossaries",
              {{"Authorization", "Bearer " + admin}},
              R"({"name":"x","description":")" + std::string(64, 'd') + R"("})"};
    require_error(small.handle(r), 400, "BAD_REQUEST", "larger than 64");
    r.body = R"({"name":"small","description":"d"})";
    REQUIRE(small.handle(r).status == 201);
  }
  SECTION("PATCH media types") {
    for (auto type : {"text/plain", "application/xml", "application/merge-patch",
                      "application/json-patch", "", "application/jsonx"}) {
      INFO(type);
      require_error(call("PATCH", g, R"({"description":"x"})", {{"Content-Type", type}}), 400,
                    "BAD_REQUEST", "media type");
    }
    require_error(
        call("PATCH", g, R"({"description":"x"})",
             {{"Content-Type", "application/json"}, {"content-type", "application/json"}}),
        400, "BAD_REQUEST");
  }
  SECTION("If-Match on PATCH and DELETE") {
    for (auto value : {"0.1", "\"1\"", "W/\"0.1\"", "\"0.1\", \"0.2\"", "\"\"", "**", "\"0.15\"",
                       "\"abc\"", ""}) {
      INFO(value);
      require_error(call("PATCH", g, R"({"description":"x"})", {{"If-Match", value}}), 400,
                    "BAD_REQUEST", "If-Match");
      require_error(call("DELETE", g, {}, {{"If-Match", value}}), 400, "BAD_REQUEST", "If-Match");
    }
    // Ignored where the route does not use it.
    REQUIRE(call("GET", g, {}, {{"If-Match", "nonsense"}}).status == 200);
  }
  SECTION("restore, follow and vote bodies") {
    for (std::string body : std::vector<std::string>{
             R"({})", R"({"id":7})", R"({"id":"x"})", R"({"id":")" + glossary + R"(","x":1})",
             R"(")" + glossary + R"(")", R"([")" + glossary + R"("])"}) {
      INFO(body);
      require_error(call("PUT", "/v1/glossaries/restore", body), 400, "BAD_REQUEST");
    }
    auto alice = create("users", R"({"name":"alice","email":"alice@example.com"})");
    for (std::string body :
         std::vector<std::string>{R"({"id":")" + alice + R"("})", R"("not-a-uuid")", "7", "null",
                                  R"(["x"])", R"("{)" + alice + R"(}")"}) {
      INFO(body);
      require_error(call("PUT", "/v1/mlmodels/" + model + "/followers", body), 400, "BAD_REQUEST");
    }
    for (std::string body : std::vector<std::string>{
             R"({})", R"({"updatedVoteType":"up"})", R"({"updatedVoteType":"VotedUp"})",
             R"({"updatedVoteType":"votedUp","x":1})", R"({"updatedVoteType":1})", R"("votedUp")",
             R"({"vote":"votedUp"})"}) {
      INFO(body);
      require_error(call("PUT", "/v1/mlmodels/" + model + "/vote", body), 400, "BAD_REQUEST");
    }
  }
  SECTION("400 of the request before 404 of the entity") {
    require_error(call("GET", "/v1/glossaries/" + zero_id + "?fields=bogus"), 400, "BAD_REQUEST");
    require_error(call("PATCH", "/v1/glossaries/" + zero_id, "{", {}), 400, "BAD_REQUEST");
    require_error(call("DELETE", "/v1/glossaries/" + zero_id + "?recursive=no"), 400,
                  "BAD_REQUEST");
    require_error(call("GET", "/v1/glossaries/" + zero_id + "/versions/1"), 400, "BAD_REQUEST");
    require_error(call("PUT", "/v1/mlmodels/" + zero_id + "/followers", "7"), 400, "BAD_REQUEST");
  }
  SECTION("the store is unchanged by every refused request") {
    auto before = test::dump(store);
    (void)call("POST", "/v1/glossaries", R"({"name":"x","description":"d","colour":1})");
    (void)call("PATCH", g, R"({"description":"x"})", {{"If-Match", "W/\"0.1\""}});
    (void)call("DELETE", g + "?hardDelete=maybe");
    REQUIRE(test::dump(store) == before);
  }
}

TEST_CASE_METHOD(Fixture, "every collection: create, read, list, patch, delete, restore, history") {
  auto alice = create("users", R"({"name":"alice","email":"alice@example.com"})");
  struct Case {
    std::string collection, body, fqn, patch;
  };
  std::vector<Case> cases = {
      {"users", R"({"name":"bob","email":"bob@example.com"})", "bob", R"({"displayName":"Bob"})"},
      {"teams", R"({"name":"data","users":[")" + alice + R"("]})", "data",
       R"({"description":"the data team"})"},
      {"policies",
       R"({"name":"p1","rules":[{"name":"r","effect":"allow","resources":["glossary"],"operations":["EditDescription"]}]})",
       "p1", R"({"description":"p"})"},
      {"services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})", "mlflow",
       R"({"description":"s"})"},
      {"services/searchServices", R"({"name":"es","serviceType":"ElasticSearch"})", "es",
       R"({"description":"s"})"},
      {"mlmodels", R"({"name":"churn","service":"mlflow","algorithm":"xgb"})", "mlflow.churn",
       R"({"description":"m"})"},
      {"glossaries", R"({"name":"a.b","description":"d"})", "\"a.b\"", R"({"description":"e"})"},
      {"glossaryTerms", R"({"glossary":"\"a.b\"","name":"v1.0","description":"t"})",
       "\"a.b\".\"v1.0\"", R"({"synonyms":["x"]})"},
      {"domains", R"({"name":"Sales","domainType":"Aggregate","description":"d"})", "Sales",
       R"({"domainType":"Source-aligned"})"},
      {"searchIndexes",
       R"({"name":"logs","service":"es","fields":[{"name":"msg","dataType":"TEXT"}]})", "es.logs",
       R"({"description":"i"})"},
  };
  for (const auto& c : cases) {
    INFO(c.collection);
    const std::string base = "/v1/" + c.collection;

    // Create: 201, ETag "0.1", the version written as a plain decimal.
    auto r = call("POST", base, c.body);
    INFO(r.body);
    REQUIRE(r.status == 201);
    REQUIRE(header(r, "ETag") == "\"0.1\"");
    REQUIRE(header(r, "Content-Type") == "application/json");
    REQUIRE(r.body.find("\"version\":0.1") != std::string::npos);
    auto entity = body_of(r);
    auto id = str(entity, "id");
    REQUIRE(str(entity, "fullyQualifiedName") == c.fqn);
    require_error(call("POST", base, c.body), 409, "CONFLICT", "Entity already exists");

    // Get by id and by FQN (percent-encoded once), with fields and include.
    auto got = call("GET", base + "/" + id + "?fields=*&include=all");
    REQUIRE(got.status == 200);
    REQUIRE(header(got, "ETag") == "\"0.1\"");
    std::string encoded;
    for (char ch : c.fqn) encoded += ch == '"' ? std::string("%22") : std::string(1, ch);
    REQUIRE(str(ok("GET", base + "/name/" + encoded), "id") == id);
    REQUIRE(str(ok("GET", base + "/name/" + encoded + "?include=non-deleted"), "id") == id);
    require_error(call("GET", base + "/" + id + "?include=deleted"), 404, "NOT_FOUND");
    require_error(call("GET", base + "/" + zero_id), 404, "NOT_FOUND");
    require_error(call("GET", base + "/name/nothing"), 404, "NOT_FOUND");

    // List.
    auto page = ok("GET", base + "?limit=1000");
    REQUIRE(page.at("paging").at("total").as_int64() >= 1);
    REQUIRE(page.at("data").as_array().size() ==
            std::size_t(page.at("paging").at("total").as_int64()));

    // Patch: merge patch with If-Match, then 409 on a stale If-Match, then "*" passes.
    auto patched = call("PATCH", base + "/" + id, c.patch, {{"If-Match", "\"0.1\""}});
    INFO(patched.body);
    REQUIRE(patched.status == 200);
    REQUIRE(header(patched, "ETag") == "\"0.2\"");
    require_error(
        call("PATCH", base + "/" + id, R"({"displayName":"X"})", {{"If-Match", "\"0.1\""}}), 409,
        "CONFLICT");
    auto by_name = call(
        "PATCH", base + "/name/" + encoded, R"([{"op":"add","path":"/displayName","value":"Y"}])",
        {{"Content-Type", "application/json-patch+json; charset=utf-8"}, {"If-Match", "*"}});
    INFO(by_name.body);
    REQUIRE(by_name.status == 200);
    REQUIRE(header(by_name, "ETag") == "\"0.3\"");

    // History and versions.
    auto history = ok("GET", base + "/" + id + "/versions");
    REQUIRE(history.as_object().size() == 2);
    REQUIRE(history.at("versions").as_array().size() == 3);
    REQUIRE(history.at("versions").as_array()[0].is_string());
    auto v1 = call("GET", base + "/" + id + "/versions/0.1");
    REQUIRE(v1.status == 200);
    REQUIRE(header(v1, "ETag") == "\"0.1\"");
    require_error(call("GET", base + "/" + id + "/versions/9.9"), 404, "NOT_FOUND");
    require_error(call("GET", base + "/" + zero_id + "/versions"), 404, "NOT_FOUND");

    // Soft delete (stale If-Match first), restore, hard delete.
    require_error(call("DELETE", base + "/" + id, {}, {{"If-Match", "\"0.1\""}}), 409, "CONFLICT");
    auto deleted = call("DELETE", base + "/" + id, {}, {{"If-Match", "\"0.3\""}});
    INFO(deleted.body);
    REQUIRE(deleted.status == 200);
    REQUIRE(body_of(deleted).at("deleted").as_bool());
    REQUIRE(header(deleted, "ETag") == "\"0.4\"");
    require_error(call("PATCH", base + "/" + id, c.patch), 404, "NOT_FOUND");
    auto restored = call("PUT", base + "/restore", R"({"id":")" + id + R"("})");
    REQUIRE(restored.status == 200);
    REQUIRE_FALSE(body_of(restored).at("deleted").as_bool());
    REQUIRE(header(restored, "ETag") == "\"0.5\"");
    require_error(call("PUT", base + "/restore", R"({"id":")" + zero_id + R"("})"), 404,
                  "NOT_FOUND");
  }

  // Hard deletes, children first: 204 with no body and no Content-Type.
  for (auto it = cases.rbegin(); it != cases.rend(); ++it) {
    std::string encoded;
    for (char ch : it->fqn) encoded += ch == '"' ? std::string("%22") : std::string(1, ch);
    auto r = call("DELETE", "/v1/" + it->collection + "/name/" + encoded + "?hardDelete=true");
    INFO(it->collection << " " << r.body);
    REQUIRE(r.status == 204);
    REQUIRE(r.body.empty());
    REQUIRE_FALSE(header(r, "Content-Type"));
    REQUIRE_FALSE(header(r, "ETag"));
    require_error(call("GET", "/v1/" + it->collection + "/name/" + encoded + "?include=all"), 404,
                  "NOT_FOUND");
  }
}

TEST_CASE_METHOD(Fixture, "delete flags, non-empty containers and recursive restore") {
  create("glossaries", R"({"name":"Business","description":"d"})");
  auto term =
      create("glossaryTerms", R"({"glossary":"Business","name":"Revenue","description":"r"})");
  require_error(call("DELETE", "/v1/glossaries/name/Business"), 400, "BAD_REQUEST", "not empty");
  auto gone = ok("DELETE", "/v1/glossaries/name/Business?recursive=true&hardDelete=false");
  REQUIRE(gone.at("deleted").as_bool());
  require_error(call("GET", "/v1/glossaryTerms/" + term), 404, "NOT_FOUND");
  REQUIRE(ok("GET", "/v1/glossaryTerms/" + term + "?include=deleted").at("deleted").as_bool());
  // A term under a deleted glossary cannot come back first.
  require_error(call("PUT", "/v1/glossaryTerms/restore", R"({"id":")" + term + R"("})"), 400,
                "BAD_REQUEST");
  ok("PUT", "/v1/glossaries/restore", R"({"id":")" + str(gone, "id") + R"("})");
  REQUIRE_FALSE(ok("GET", "/v1/glossaryTerms/" + term).at("deleted").as_bool());
  auto r = call("DELETE", "/v1/glossaries/name/Business?recursive=true&hardDelete=true");
  REQUIRE(r.status == 204);
  require_error(call("GET", "/v1/glossaryTerms/" + term + "?include=all"), 404, "NOT_FOUND");
}

TEST_CASE_METHOD(Fixture, "list paging over REST") {
  for (int i = 0; i < 5; ++i)
    create("glossaries", R"({"name":"g)" + std::to_string(i) + R"(","description":"d"})");
  auto first = ok("GET", "/v1/glossaries?limit=2");
  REQUIRE(first.at("data").as_array().size() == 2);
  REQUIRE(first.at("paging").at("total").as_int64() == 5);
  REQUIRE_FALSE(first.at("paging").as_object().contains("before"));
  std::vector<std::string> names;
  auto page = first;
  for (;;) {
    for (const auto& e : page.at("data").as_array()) names.push_back(str(e, "name"));
    if (!page.at("paging").as_object().contains("after")) break;
    page = ok("GET", "/v1/glossaries?limit=2&after=" + str(page.at("paging"), "after"));
  }
  REQUIRE(names == std::vector<std::string>{"g0", "g1", "g2", "g3", "g4"});
  auto back = ok("GET", "/v1/glossaries?limit=2&before=" + str(page.at("paging"), "before"));
  REQUIRE(str(back.at("data").as_array()[1], "name") == "g3");
  auto none = ok("GET", "/v1/glossaries?limit=0");
  REQUIRE(none.at("data").as_array().empty());
  REQUIRE(none.at("paging").as_object().size() == 1);
  // Deleted ones, by include.
  ok("DELETE", "/v1/glossaries/name/g0");
  REQUIRE(ok("GET", "/v1/glossaries?include=deleted").at("paging").at("total").as_int64() == 1);
  REQUIRE(ok("GET", "/v1/glossaries?include=all").at("paging").at("total").as_int64() == 5);
  REQUIRE(ok("GET", "/v1/glossaries").at("paging").at("total").as_int64() == 4);
  // Service filter on search indexes; fields on a list.
  create("services/searchServices", R"({"name":"es","serviceType":"ElasticSearch"})");
  create("services/searchServices", R"({"name":"os","serviceType":"OpenSearch"})");
  create("searchIndexes", R"({"name":"a","service":"es","fields":[]})");
  create("searchIndexes", R"({"name":"b","service":"os","fields":[]})");
  auto es = ok("GET", "/v1/searchIndexes?service=es&fields=followers,votes");
  REQUIRE(es.at("paging").at("total").as_int64() == 1);
  REQUIRE(es.at("data").as_array()[0].as_object().contains("followers"));
  REQUIRE(ok("GET", "/v1/searchIndexes?service=nothing").at("paging").at("total").as_int64() == 0);
  require_error(call("GET", "/v1/searchIndexes?service=es&service=os"), 400, "BAD_REQUEST");
}

TEST_CASE_METHOD(Fixture, "followers and votes") {
  create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto model = create("mlmodels", R"({"name":"churn","service":"mlflow","algorithm":"xgb"})");
  auto alice = create("users", R"({"name":"alice","email":"alice@example.com"})");
  auto m = "/v1/mlmodels/" + model;

  auto followed = call("PUT", m + "/followers", "\"" + alice + "\"");
  INFO(followed.body);
  REQUIRE(followed.status == 200);
  REQUIRE(header(followed, "ETag") == "\"0.1\"");  // no version change (docs/SEMANTICS.md §3)
  auto f = body_of(followed);
  REQUIRE(f.at("followers").as_array().size() == 1);
  REQUIRE(str(f.at("followers").as_array()[0], "id") == alice);
  require_error(call("PUT", m + "/followers", "\"" + zero_id + "\""), 404, "NOT_FOUND");
  require_error(call("PUT", "/v1/mlmodels/" + zero_id + "/followers", "\"" + alice + "\""), 404,
                "NOT_FOUND");

  auto unfollowed = ok("DELETE", m + "/followers/" + alice);
  REQUIRE(unfollowed.at("followers").as_array().empty());
  require_error(call("DELETE", m + "/followers/" + zero_id), 404, "NOT_FOUND");

  auto voted = ok("PUT", m + "/vote", R"({"updatedVoteType":"votedUp"})");
  REQUIRE(voted.at("votes").at("upVotes").as_int64() == 1);
  voted = ok("PUT", m + "/vote", R"({"updatedVoteType":"votedDown"})");
  REQUIRE(voted.at("votes").at("upVotes").as_int64() == 0);
  REQUIRE(voted.at("votes").at("downVotes").as_int64() == 1);
  voted = ok("PUT", m + "/vote", R"({"updatedVoteType":"unVoted"})");
  REQUIRE(voted.at("votes").at("downVotes").as_int64() == 0);
  require_error(
      call("PUT", "/v1/mlmodels/" + zero_id + "/vote", R"({"updatedVoteType":"votedUp"})"), 404,
      "NOT_FOUND");

  // The other kinds with followers and votes answer the same routes.
  auto glossary = create("glossaries", R"({"name":"Business","description":"d"})");
  REQUIRE(call("PUT", "/v1/glossaries/" + glossary + "/followers", "\"" + alice + "\"").status ==
          200);
  REQUIRE(call("PUT", "/v1/glossaries/" + glossary + "/vote", R"({"updatedVoteType":"votedUp"})")
              .status == 200);
  auto domain = create("domains", R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
  REQUIRE(call("PUT", "/v1/domains/" + domain + "/followers", "\"" + alice + "\"").status == 200);
}

TEST_CASE_METHOD(Fixture, "403: policies refuse a user who is not an admin") {
  create("users", R"({"name":"bob","email":"bob@example.com"})");
  auto bob = token_for("bob");
  auto glossary = create("glossaries", R"({"name":"Business","description":"d"})");

  // Only admins create (docs/SEMANTICS.md §12 default policy).
  require_error(call("POST", "/v1/glossaries", R"({"name":"Mine","description":"d"})", {}, bob),
                403, "FORBIDDEN");
  // Events are for admins only.
  require_error(call("GET", "/v1/events", {}, {}, bob), 403, "FORBIDDEN");
  // Deleting what one does not own (the glossary has an owner, so noOwner() does not apply).
  auto bob_id = str(ok("GET", "/v1/users/name/bob"), "id");
  auto alice = create("users", R"({"name":"alice","email":"alice@example.com"})");
  ok("PATCH", "/v1/glossaries/" + glossary,
     R"({"owners":[{"id":")" + alice + R"(","type":"user"}]})");
  require_error(call("DELETE", "/v1/glossaries/" + glossary, {}, {}, bob), 403, "FORBIDDEN");
  require_error(call("PATCH", "/v1/glossaries/" + glossary, R"({"description":"x"})", {}, bob), 403,
                "FORBIDDEN");
  // An admin flag needs an admin (docs/SEMANTICS.md §9).
  require_error(call("PATCH", "/v1/users/" + bob_id, R"({"isAdmin":true})", {}, bob), 403,
                "FORBIDDEN");
  // What the default policy allows everyone.
  REQUIRE(call("GET", "/v1/glossaries", {}, {}, bob).status == 200);
  REQUIRE(call("GET", "/v1/glossaries/" + glossary + "?fields=owners", {}, {}, bob).status == 200);
  REQUIRE(call("PUT", "/v1/glossaries/" + glossary + "/vote", R"({"updatedVoteType":"votedUp"})",
               {}, bob)
              .status == 200);
  REQUIRE(call("PUT", "/v1/glossaries/" + glossary + "/followers", "\"" + bob_id + "\"", {}, bob)
              .status == 200);
  REQUIRE(call("GET", "/v1/glossaries/" + glossary + "/versions", {}, {}, bob).status == 200);
  // 403 comes after 404 (docs/SEMANTICS.md §14): a missing entity is 404 even for bob.
  require_error(call("DELETE", "/v1/glossaries/" + zero_id, {}, {}, bob), 404, "NOT_FOUND");
}

TEST_CASE_METHOD(Fixture, "change events over REST") {
  create("glossaries", R"({"name":"Business","description":"d"})");
  create("glossaries", R"({"name":"Finance","description":"d"})");
  auto all = ok("GET", "/v1/events");
  auto total = all.at("paging").at("total").as_int64();
  REQUIRE(total >= 2);
  REQUIRE_FALSE(all.at("paging").as_object().contains("before"));
  auto page = ok("GET", "/v1/events?limit=1");
  REQUIRE(page.at("data").as_array().size() == 1);
  REQUIRE(page.at("paging").as_object().contains("after"));
  auto last = ok("GET", "/v1/events?after=" + std::to_string(total - 1));
  REQUIRE(last.at("data").as_array().size() == 1);
  REQUIRE(str(last.at("data").as_array()[0], "entityFullyQualifiedName") == "Finance");
  REQUIRE(str(last.at("data").as_array()[0], "eventType") == "entityCreated");
  REQUIRE_FALSE(last.at("paging").as_object().contains("after"));
  REQUIRE(ok("GET", "/v1/events?after=" + std::to_string(total)).at("data").as_array().empty());
}

TEST_CASE_METHOD(Fixture, "FQN segments are percent-decoded exactly once") {
  create("glossaries", R"({"name":"g1","description":"d"})");
  auto t1 = create("glossaryTerms", R"({"glossary":"g1","name":"t1","description":"d"})");
  auto dotted = create("glossaryTerms",
                       R"({"glossary":"g1","parent":"g1.t1","name":"a.b","description":"d"})");
  REQUIRE(str(ok("GET", "/v1/glossaryTerms/name/g1.t1.%22a.b%22"), "id") == dotted);
  REQUIRE(str(ok("GET", "/v1/glossaryTerms/name/%22g1%22.t1"), "id") == t1);
  // %2522 decodes once to the text %22, which is no quote.
  require_error(call("GET", "/v1/glossaryTerms/name/g1.t1.%2522a.b%2522"), 404, "NOT_FOUND");
  // A plus is a plus, in paths and in queries.
  create("glossaries", R"({"name":"c++","description":"d"})");
  REQUIRE(call("GET", "/v1/glossaries/name/c++").status == 200);
  REQUIRE(call("GET", "/v1/glossaries/name/c%2B%2B").status == 200);
}

TEST_CASE_METHOD(Fixture, "LMDB behind the Api") {
  test::TempDir dir;
  auto options = test::test_options();
  options.jwt.hs256_keys = {{std::string(secret), {}}};
  options.clock = [] { return now_seconds * 1000; };
  auto lmdb = catalog::Store::open_lmdb(dir.path(), std::move(options)).value();
  Api on_disk(lmdb);
  auto send = [&](std::string method, std::string target, std::string body) {
    return on_disk.handle(Request{std::move(method),
                                  std::move(target),
                                  {{"Authorization", "Bearer " + admin}},
                                  std::move(body)});
  };
  auto made = send("POST", "/v1/glossaries", R"({"name":"Business","description":"d"})");
  REQUIRE(made.status == 201);
  auto id = str(body_of(made), "id");
  REQUIRE(send("DELETE", "/v1/glossaries/" + id, "").status == 200);
  REQUIRE(send("PUT", "/v1/glossaries/restore", R"({"id":")" + id + R"("})").status == 200);
  REQUIRE(send("DELETE", "/v1/glossaries/" + id + "?hardDelete=true", "").status == 204);
}

TEST_CASE_METHOD(Fixture, "hostile requests are all answered, with valid JSON") {
  create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto model = create("mlmodels", R"({"name":"churn","service":"mlflow","algorithm":"xgb"})");
  std::mt19937 rng(20260101);
  const std::vector<std::string> methods = {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
  const std::vector<std::string> pieces = {"/v1",
                                           "/mlmodels",
                                           "/" + model,
                                           "/followers",
                                           "/vote",
                                           "/name",
                                           "/mlflow.churn",
                                           "/versions",
                                           "/0.1",
                                           "/restore",
                                           "/services",
                                           "/glossaries",
                                           "/%",
                                           "/%ff",
                                           "/%00",
                                           "?",
                                           "&",
                                           "limit=",
                                           "1",
                                           "=",
                                           "%2",
                                           "+",
                                           "#",
                                           "/..",
                                           "/.",
                                           "//",
                                           "fields=*",
                                           "include=all",
                                           "\xff",
                                           " ",
                                           "after=",
                                           "eyJ9"};
  const std::vector<std::string> bodies = {"",
                                           "{",
                                           "null",
                                           "\"x\"",
                                           "[]",
                                           "{}",
                                           "\xff\xfe",
                                           "[[[[[[[[[[",
                                           R"({"a":1,"a":2})",
                                           R"({"updatedVoteType":"votedUp"})",
                                           "\"" + model + "\""};
  for (int i = 0; i < 3000; ++i) {
    std::string target;
    int n = int(rng() % 7);
    for (int k = 0; k < n; ++k) target += pieces[rng() % pieces.size()];
    auto r = call(methods[rng() % methods.size()], target, bodies[rng() % bodies.size()],
                  {{"Content-Type", rng() % 2 ? "application/json" : "x/y"}});
    INFO(target << " -> " << r.status << " " << r.body);
    REQUIRE((r.status == 200 || r.status == 201 || r.status == 204 || r.status == 400 ||
             r.status == 403 || r.status == 404 || r.status == 405 || r.status == 409));
    if (r.status != 204) REQUIRE(catalog::json::parse(r.body));
  }
}
