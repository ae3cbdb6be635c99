// The bad-input table: several hundred malformed requests through rest::Api::handle, each
// with its expected status, errorType and (often) a piece of the message, in the order of
// checks of docs/SEMANTICS.md S14. After every row the store must be byte for byte what it was before
// the table ran, and Store::verify() must find nothing. Families are generated where a rule
// applies to every collection, but every row states its own expectation.
#include <catalog/rest/api.hpp>

#include "rest_support.hpp"
#include "support.hpp"

#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace bj = boost::json;
using catalog::rest::Api;
using catalog::rest::Request;
using catalog::rest::Response;
using rest_test::b64;
using rest_test::header;
using rest_test::now_seconds;  // the store's clock
using rest_test::secret;
using rest_test::token_for;

constexpr std::size_t body_limit = std::size_t{8} << 20;  // ApiOptions' default (docs/SEMANTICS.md §15)
const std::string zero_id = "00000000-0000-4000-8000-000000000000";

// ---- tokens with any header, signed here with OpenSSL ----

std::string hmac_sha256(std::string_view input, std::string_view key) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &size);
  return std::string(reinterpret_cast<const char*>(mac), size);
}

// A JWT with this header and payload (JSON texts, sent as given), HMAC-SHA256 signed with `key`.
std::string jwt(std::string_view header, std::string_view payload, std::string_view key = secret) {
  std::string input = b64(header) + "." + b64(payload);
  return input + "." + b64(hmac_sha256(input, key));
}

const std::string hs256_header = R"({"alg":"HS256","typ":"JWT"})";

std::string claims(std::string_view sub, std::int64_t exp = now_seconds + 3600) {
  return R"({"sub":")" + std::string(sub) + R"(","exp":)" + std::to_string(exp) + "}";
}

// ---- JSON text helpers ----

// `s` as a JSON string literal (control characters escaped).
std::string json_text(std::string_view s) {
  return catalog::json::serialize(bj::value(bj::string(s.data(), s.size())));
}

// `depth` nested objects: {"k":{"k":...{}}}.
std::string nested_objects(std::size_t depth, std::string_view key) {
  std::string out;
  for (std::size_t i = 1; i < depth; ++i) out += "{\"" + std::string(key) + "\":";
  out += "{}";
  out += std::string(depth - 1, '}');
  return out;
}

// A list cursor as the catalog writes them (docs/SEMANTICS.md §8): base64url with padding of `json`.
std::string cursor(std::string_view json) {
  return catalog::detail::base64url_encode(json, catalog::detail::Padding::required);
}

// Percent-encodes every byte that is not unreserved (RFC 3986), for paths and queries.
std::string pct(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// ---- the table ----

// One malformed request and what it must get.
struct Row {
  std::string what;  // family and case, for failure messages
  Request request;
  int status = 0;
  std::string type;
  std::string message;  // a part of the error message; empty: not checked
  std::string allow;    // for 405: the Allow header

  Row& header(std::string name, std::string value) {
    request.headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  // Replaces the Authorization header; nullopt sends none.
  Row& authorization(std::optional<std::string> value) {
    std::erase_if(request.headers, [](const auto& h) { return h.first == "Authorization"; });
    if (value) request.headers.emplace_back("Authorization", std::move(*value));
    return *this;
  }
  Row& as(const std::string& token) { return authorization("Bearer " + token); }
  Row& expect(int s, std::string t, std::string m = {}) {
    status = s;
    type = std::move(t);
    message = std::move(m);
    return *this;
  }
  Row& is400(std::string m = {}) { return expect(400, "BAD_REQUEST", std::move(m)); }
  Row& is401(std::string m = {}) { return expect(401, "UNAUTHORIZED", std::move(m)); }
  Row& is403(std::string m = {}) { return expect(403, "FORBIDDEN", std::move(m)); }
  Row& is404(std::string m = {}) { return expect(404, "NOT_FOUND", std::move(m)); }
  Row& is405(std::string allowed) {
    allow = allowed;
    return expect(405, "METHOD_NOT_ALLOWED", "allowed: " + allowed);
  }
  Row& is409(std::string m = {}) { return expect(409, "CONFLICT", std::move(m)); }
};

// The rows, in a deque so that a Row& stays valid while the next one is added.
class Table {
 public:
  explicit Table(std::string admin_token) : admin_(std::move(admin_token)) {}

  // A row sent by the admin with no other header; its expectation follows.
  Row& add(std::string what, std::string method, std::string target, std::string body = {}) {
    Row& r = rows_.emplace_back();
    r.what = std::move(what);
    r.request.method = std::move(method);
    r.request.target = std::move(target);
    r.request.body = std::move(body);
    r.as(admin_);
    return r;
  }
  const std::deque<Row>& rows() const { return rows_; }

 private:
  std::string admin_;
  std::deque<Row> rows_;
};

// ---- the catalog the rows run against ----

// One entity per collection (docs/SEMANTICS.md §1), plus the users and soft-deleted entities the rows need.
struct Collection {
  std::string path;  // "glossaries", "services/mlmodelServices", ...
  std::string id;    // an entity of the collection
  std::string fqn;   // its FQN, percent-encoded for a path
  bool followers = false;
  bool votes = false;
};

// `body` (a JSON object text) with `member` set to the JSON text `value`.
std::string with(const std::string& body, const std::string& member, const std::string& value) {
  auto o = test::parse(body).as_object();
  o[member] = test::parse(value);
  return catalog::json::serialize(bj::value(std::move(o)));
}

catalog::StoreOptions store_options() {
  auto options = test::test_options();
  options.jwt.hs256_keys = {{std::string(secret), {}}};
  options.clock = [] { return now_seconds * 1000; };
  return options;
}

class World {
 public:
  explicit World(catalog::Store store) : store_(std::move(store)), api_(store_) { build(); }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  catalog::Store& store() { return store_; }
  const Api& api() const { return api_; }

  std::string admin = token_for("admin");
  std::string bob = token_for("bob");  // a plain user: no rights on what alice owns
  std::string alice_id, bob_id, gone_id;
  std::string churn;           // mlmodel mlflow.churn, owned by alice
  std::string business;        // glossary Business, owned by alice, with the term Revenue
  std::string old;             // glossary Old, soft-deleted with its term Old.t
  std::string old_term;        // Old.t
  std::size_t churn_size = 0;  // serialized length of churn with all fields
  std::vector<Collection> collections;

 private:
  bj::object made(std::string method, std::string target, std::string body, int status) {
    auto r = api_.handle(Request{
        std::move(method), target, {{"Authorization", "Bearer " + admin}}, std::move(body)});
    INFO(target << " -> " << r.status << " " << r.body);
    REQUIRE(r.status == status);
    return test::parse(r.body).as_object();
  }
  std::string create(const std::string& collection, std::string body) {
    return test::id_of(made("POST", "/v1/" + collection, std::move(body), 201));
  }

  void build() {
    alice_id = create("users", R"({"name":"alice","email":"alice@example.com"})");
    bob_id = create("users", R"({"name":"bob","email":"bob@example.com"})");
    gone_id = create("users", R"({"name":"gone","email":"gone@example.com"})");
    made("DELETE", "/v1/users/" + gone_id, {}, 200);
    const std::string alice_owner = R"([{"id":")" + alice_id + R"(","type":"user"}])";

    auto mlflow = create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
    const std::string churn_body = R"({"name":"churn","service":"mlflow","algorithm":"xgboost"})";
    churn = create("mlmodels", with(churn_body, "owners", alice_owner));
    // A second version, so history rows address an entity with a past.
    made("PATCH", "/v1/mlmodels/" + churn, R"({"description":"Who leaves"})", 200);
    churn_size = catalog::json::serialize(
                     bj::value(made("GET", "/v1/mlmodels/" + churn + "?fields=*", {}, 200)))
                     .size();
    auto es = create("services/searchServices", R"({"name":"es","serviceType":"ElasticSearch"})");
    auto logs =
        create("searchIndexes",
               R"({"name":"logs","service":"es","fields":[{"name":"msg","dataType":"TEXT"}]})");
    business = create("glossaries",
                      R"({"name":"Business","description":"d","owners":)" + alice_owner + "}");
    auto revenue =
        create("glossaryTerms", R"({"glossary":"Business","name":"Revenue","description":"r"})");
    auto sales =
        create("domains", R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
    auto data = create("teams", R"({"name":"data","users":[")" + alice_id + R"("]})");
    auto p1 = create("policies", R"({"name":"p1","rules":[{"name":"r","effect":"allow",)"
                                 R"("resources":["glossary"],"operations":["EditDescription"]}]})");
    old = create("glossaries", R"({"name":"Old","description":"d"})");
    old_term = create("glossaryTerms", R"({"glossary":"Old","name":"t","description":"d"})");
    made("DELETE", "/v1/glossaries/" + old + "?recursive=true", {}, 200);

    collections = {
        {"users", alice_id, "alice", false, false},
        {"teams", data, "data", false, false},
        {"policies", p1, "p1", false, false},
        {"services/mlmodelServices", mlflow, "mlflow", false, false},
        {"services/searchServices", es, "es", false, false},
        {"mlmodels", churn, "mlflow.churn", true, true},
        {"glossaries", business, "Business", true, true},
        {"glossaryTerms", revenue, "Business.Revenue", true, true},
        {"domains", sales, "Sales", true, false},
        {"searchIndexes", logs, "es.logs", true, true},
    };
  }

  catalog::Store store_;
  Api api_;
};

// A valid create body of the collection's kind whose name is the JSON text `name`.
std::string create_body(std::string_view collection, const std::string& name) {
  if (collection == "users") return R"({"name":)" + name + R"(,"email":"x@example.com"})";
  if (collection == "teams") return R"({"name":)" + name + "}";
  if (collection == "policies")
    return R"({"name":)" + name +
           R"(,"rules":[{"name":"r","effect":"allow","resources":["all"],"operations":["ViewAll"]}]})";
  if (collection == "services/mlmodelServices")
    return R"({"name":)" + name + R"(,"serviceType":"Mlflow"})";
  if (collection == "services/searchServices")
    return R"({"name":)" + name + R"(,"serviceType":"ElasticSearch"})";
  if (collection == "mlmodels")
    return R"({"name":)" + name + R"(,"service":"mlflow","algorithm":"a"})";
  if (collection == "glossaries") return R"({"name":)" + name + R"(,"description":"d"})";
  if (collection == "glossaryTerms")
    return R"({"glossary":"Business","name":)" + name + R"(,"description":"d"})";
  if (collection == "domains")
    return R"({"name":)" + name + R"(,"domainType":"Aggregate","description":"d"})";
  return R"({"name":)" + name + R"(,"service":"es","fields":[]})";  // searchIndexes
}

// The required members of each collection's create request (docs/REST.md).
std::vector<std::string> required_members(std::string_view collection) {
  if (collection == "users") return {"name", "email"};
  if (collection == "teams") return {"name"};
  if (collection == "policies") return {"name", "rules"};
  if (collection == "services/mlmodelServices" || collection == "services/searchServices")
    return {"name", "serviceType"};
  if (collection == "mlmodels") return {"name", "service", "algorithm"};
  if (collection == "glossaries") return {"name", "description"};
  if (collection == "glossaryTerms") return {"glossary", "name", "description"};
  if (collection == "domains") return {"name", "domainType", "description"};
  return {"name", "service", "fields"};
}

// `body` (a JSON object text) without its member `name`.
std::string without(const std::string& body, const std::string& name) {
  auto o = test::parse(body).as_object();
  REQUIRE(o.erase(name) == 1);
  return catalog::json::serialize(bj::value(std::move(o)));
}

// ---- hostile JSON Patches ----

// rest_test::doubling_patch with `pad` bytes of text added to /extension before the copies, to
// set the size the document doubles from.
std::string padded_doubling_patch(int copies, std::size_t pad) {
  std::string patch = rest_test::doubling_patch(copies);
  const std::string first = R"({"op":"add","path":"/extension","value":{}})";
  REQUIRE(patch.compare(1, first.size(), first) == 0);
  patch.insert(1 + first.size(),
               R"(,{"op":"add","path":"/extension/pad","value":")" + std::string(pad, 'p') + "\"}");
  return patch;
}

// Adds 62-deep objects, each inside the innermost object of the one before.
std::string nested_add_patch(int adds) {
  const std::string chain = nested_objects(62, "a");
  std::string body = R"([{"op":"add","path":"/extension","value":{}})";
  std::string path = "/extension";
  for (int i = 0; i < adds; ++i) {
    body += R"(,{"op":"add","path":")" + path + "/a\",\"value\":" + chain + "}";
    for (int k = 0; k < 62; ++k) path += "/a";
  }
  return body + "]";
}

// ---- the families ----

void token_rows(Table& t, World& w) {
  const std::string list = "/v1/glossaries";
  auto add = [&](std::string what, std::optional<std::string> authorization,
                 std::string target = "/v1/glossaries") -> Row& {
    return t.add("token: " + what, "GET", std::move(target))
        .authorization(std::move(authorization));
  };
  add("no Authorization header", std::nullopt).is401("Missing Authorization header");
  add("empty header", "").is401("not 'Bearer <token>'");
  add("Basic scheme", "Basic YWRtaW46YWRtaW4=").is401("not 'Bearer <token>'");
  add("Bearer alone", "Bearer").is401("not 'Bearer <token>'");
  add("Bearer and spaces", "Bearer   ").is401("not 'Bearer <token>'");
  add("tab after Bearer", "Bearer\t" + w.admin).is401("not 'Bearer <token>'");
  add("no space after Bearer", "Bearer" + w.admin).is401("not 'Bearer <token>'");
  add("leading space", " Bearer " + w.admin).is401("not 'Bearer <token>'");
  add("two tokens", "Bearer " + w.admin + " " + w.admin).is401("not 'Bearer <token>'");
  add("quoted token", "Bearer \"" + w.admin + "\"").is401("not 'Bearer <token>'");
  add("base64 padding", "Bearer " + w.admin + "=").is401("not 'Bearer <token>'");
  add("one segment", "Bearer abc").is401("3 segments");
  add("two segments", "Bearer abc.def").is401("3 segments");
  add("four segments", "Bearer " + w.admin + ".x").is401("3 segments");
  add("empty segments", "Bearer ..").is401();
  add("garbage segments", "Bearer abc.def.ghi").is401();
  add("signature missing", "Bearer " + b64(hs256_header) + "." + b64(claims("admin")) + ".")
      .is401("signature missing");
  add("signed with another key",
      "Bearer " + jwt(hs256_header, claims("admin"), "another-secret-of-at-least-32-bytes!!"))
      .is401("signature invalid");
  {
    std::string tampered = w.admin;
    tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
    add("signature changed", "Bearer " + tampered).is401();
  }
  {
    // The admin's signature over a payload naming someone else.
    auto dot = w.admin.rfind('.');
    auto forged = b64(hs256_header) + "." + b64(claims("alice")) + w.admin.substr(dot);
    add("payload swapped under a signature", "Bearer " + forged).is401("signature invalid");
  }
  add("alg none, no signature",
      "Bearer " + b64(R"({"alg":"none","typ":"JWT"})") + "." + b64(claims("admin")) + ".")
      .is401();
  add("alg none, signed", "Bearer " + jwt(R"({"alg":"none"})", claims("admin")))
      .is401("none is not accepted");
  add("alg NONE", "Bearer " + jwt(R"({"alg":"NONE"})", claims("admin"))).is401("none");
  add("alg HS512", "Bearer " + jwt(R"({"alg":"HS512"})", claims("admin"))).is401("HS512");
  add("alg RS256 with an HMAC secret", "Bearer " + jwt(R"({"alg":"RS256"})", claims("admin")))
      .is401();
  add("alg missing", "Bearer " + jwt(R"({"typ":"JWT"})", claims("admin")))
      .is401("algorithm missing");
  add("alg not a string", "Bearer " + jwt(R"({"alg":1})", claims("admin"))).is401();
  add("unknown kid", "Bearer " + jwt(R"({"alg":"HS256","kid":"other"})", claims("admin")))
      .is401("unknown");
  add("crit", "Bearer " + jwt(R"({"alg":"HS256","crit":["exp"]})", claims("admin"))).is401();
  add("duplicate alg", "Bearer " + jwt(R"({"alg":"HS256","alg":"HS256"})", claims("admin")))
      .is401("duplicate");
  add("duplicate sub", "Bearer " + jwt(hs256_header, R"({"sub":"bob","sub":"admin","exp":)" +
                                                         std::to_string(now_seconds + 60) + "}"))
      .is401("duplicate");
  add("header not JSON", "Bearer " + jwt("{alg:HS256}", claims("admin"))).is401("not valid JSON");
  add("header an array", "Bearer " + jwt(R"(["HS256"])", claims("admin")))
      .is401("not a JSON object");
  add("payload not JSON", "Bearer " + jwt(hs256_header, "admin")).is401("not valid JSON");
  add("payload with a BOM", "Bearer " + jwt(hs256_header, "\xEF\xBB\xBF" + claims("admin")))
      .is401();
  add("payload with trailing text", "Bearer " + jwt(hs256_header, claims("admin") + "x")).is401();
  add("payload not UTF-8",
      "Bearer " + jwt(hs256_header,
                      R"({"sub":"adm\xFFin","exp":)" + std::to_string(now_seconds + 60) + "}"))
      .is401();
  add("payload deeper than 64",
      "Bearer " + jwt(hs256_header, R"({"sub":"admin","exp":)" + std::to_string(now_seconds + 60) +
                                        R"(,"x":)" + nested_objects(64, "x") + "}"))
      .is401("deeper than 64");
  add("header segment with padding",
      "Bearer " +
          catalog::detail::base64url_encode(hs256_header, catalog::detail::Padding::required) +
          "." + b64(claims("admin")) + ".x")
      .is401();
  add("standard base64 alphabet",
      "Bearer " + b64(hs256_header) + "." + b64(claims("admin")) + ".ab+c/def")
      .is401();
  add("expired an hour ago", "Bearer " + jwt(hs256_header, claims("admin", now_seconds - 3600)))
      .is401("expired");
  add("expired exactly at the leeway",
      "Bearer " + jwt(hs256_header, claims("admin", now_seconds - 60)))
      .is401("expired");
  add("exp missing", "Bearer " + jwt(hs256_header, R"({"sub":"admin"})")).is401("no exp");
  add("exp a string", "Bearer " + jwt(hs256_header, R"({"sub":"admin","exp":"9999999999"})"))
      .is401("must be a number");
  add("not yet valid",
      "Bearer " +
          jwt(hs256_header, R"({"sub":"admin","exp":)" + std::to_string(now_seconds + 7200) +
                                R"(,"nbf":)" + std::to_string(now_seconds + 61) + "}"))
      .is401("not yet valid");
  add("issued in the future",
      "Bearer " +
          jwt(hs256_header, R"({"sub":"admin","exp":)" + std::to_string(now_seconds + 7200) +
                                R"(,"iat":)" + std::to_string(now_seconds + 3600) + "}"))
      .is401("future");
  add("no principal claim",
      "Bearer " + jwt(hs256_header, R"({"exp":)" + std::to_string(now_seconds + 60) + "}"))
      .is401("principal");
  add("unknown user", "Bearer " + token_for("nobody")).is401("Unknown principal");
  add("soft-deleted user", "Bearer " + token_for("gone")).is401("Unknown principal");
  add("user name that is no name", "Bearer " + token_for("a::b")).is401("Unknown principal");
  add("user name with a NUL",
      "Bearer " + jwt(hs256_header,
                      R"({"sub":"adm\u0000in","exp":)" + std::to_string(now_seconds + 60) + "}"))
      .is401("Unknown principal");
  add("token over 8 KiB",
      "Bearer " + jwt(hs256_header, R"({"sub":"admin","pad":")" + std::string(8200, 'p') +
                                        R"(","exp":)" + std::to_string(now_seconds + 60) + "}"))
      .is401("too large");
  t.add("token: two Authorization headers", "GET", list)
      .header("Authorization", "Bearer " + w.admin)
      .is401("More than one");
  // 401 comes before everything else the request would get (docs/SEMANTICS.md §14 step 1).
  const std::string bad = "Bearer " + token_for("nobody");
  add("before 404", bad, "/v1/nothing").is401();
  add("before 400 of the target", bad, "/v1/%zz").is401();
  add("before 400 of a query", bad, "/v1/glossaries?limit=abc").is401();
  t.add("token: before 405", "DELETE", list).authorization(bad).is401();
  t.add("token: before 400 of a body", "POST", list, "{").authorization(bad).is401();
  t.add("token: before 400 of a huge body", "POST", list, std::string(body_limit + 1, ' '))
      .authorization(bad)
      .is401();
}

void path_rows(Table& t, World& w) {
  // 404: no such route (docs/SEMANTICS.md §14 step 2), whatever the method.
  for (std::string target :
       {"/", "/v1", "/v2/glossaries", "/v1/nothing", "/v1/glossaries/", "/v1//glossaries",
        "/v1/Glossaries", "/v1/services", "/v1/services/nothing", "/v1/mlmodelServices",
        "/v1/services%2FmlmodelServices", "/v1/glossaries/name", "/v1/events/1", "/v1/events/",
        "/V1/glossaries"})
    t.add("unknown path " + target, "GET", target).is404("Unknown path");
  for (const auto& c : w.collections) {
    const std::string base = "/v1/" + c.path;
    t.add("unknown path under " + c.path, "GET", base + "/" + c.id + "/nothing")
        .is404("Unknown path");
    t.add("unknown path under " + c.path, "PUT", base + "/name/" + c.fqn + "/x")
        .is404("Unknown path");
    t.add("unknown path under " + c.path, "PUT", base + "/restore/" + c.id).is404("Unknown path");
    t.add("unknown path under " + c.path, "GET", base + "/" + c.id + "/versions/0.1/x")
        .is404("Unknown path");
    // Follower and vote routes exist only for the kinds that have them (docs/SEMANTICS.md §4, §5).
    if (!c.followers)
      t.add("no followers on " + c.path, "PUT", base + "/" + c.id + "/followers",
            json_text(w.alice_id))
          .is404("Unknown path");
    if (!c.votes)
      t.add("no votes on " + c.path, "PUT", base + "/" + c.id + "/vote",
            R"({"updatedVoteType":"votedUp"})")
          .is404("Unknown path");
  }
  // A body over the limit does not hide an unknown path (404 before 400).
  t.add("unknown path with a huge body", "POST", "/v1/nothing", std::string(body_limit + 1, '{'))
      .is404("Unknown path");

  // 405: a known path, another method, with Allow.
  for (const auto& c : w.collections) {
    const std::string base = "/v1/" + c.path;
    t.add("405 on " + c.path, "DELETE", base).is405("GET, POST");
    t.add("405 on " + c.path, "POST", base + "/" + c.id, "{").is405("GET, PATCH, DELETE");
    t.add("405 on " + c.path, "PUT", base + "/name/" + c.fqn).is405("GET, PATCH, DELETE");
    t.add("405 on " + c.path, "PATCH", base + "/restore", "{").is405("PUT");
    t.add("405 on " + c.path, "DELETE", base + "/" + c.id + "/versions").is405("GET");
    t.add("405 on " + c.path, "POST", base + "/" + c.id + "/versions/0.1").is405("GET");
  }
  t.add("405 on events", "POST", "/v1/events", "{}").is405("GET");
  t.add("405 follow route", "GET", "/v1/mlmodels/" + w.churn + "/followers").is405("PUT");
  t.add("405 unfollow route", "PUT", "/v1/mlmodels/" + w.churn + "/followers/" + w.alice_id)
      .is405("DELETE");
  t.add("405 vote route", "GET", "/v1/glossaries/" + w.business + "/vote").is405("PUT");
  for (std::string method : {"get", "HEAD", "OPTIONS", "BREW", "", "GET ", "TRACE"})
    t.add("405 method '" + method + "'", method, "/v1/glossaries").is405("GET, POST");
  // 405 before any 400 of the path's values or the body.
  t.add("405 before a bad uuid", "POST", "/v1/glossaries/not-a-uuid", "{")
      .is405("GET, PATCH, DELETE");
  t.add("405 before a huge body", "PUT", "/v1/glossaries", std::string(body_limit + 1, '['))
      .is405("GET, POST");

  // Targets that are not origin-form: 400.
  for (std::string target : {"/v1/%", "/v1/%zz", "/v1/glossaries?limit=%zz", "/v1/glossaries#x",
                             "http://host/v1/glossaries", "v1/glossaries", "", "*",
                             "/v1/glos saries", "/v1/glossaries?a=%"})
    t.add("target '" + target + "'", "GET", target).is400("Invalid request target");

  // Bad UUIDs in {id} and {userId} (docs/SEMANTICS.md §2): 400, before any lookup.
  const std::vector<std::string> bad_ids = {
      "not-a-uuid",
      "%7B" + zero_id + "%7D",
      "00000000000040008000000000000000",
      zero_id.substr(0, 35),
      zero_id + "0",
      "g0000000-0000-4000-8000-000000000000",
      "00000000-0000-4000-8000-00000000000%20",
      "urn:uuid:" + zero_id,
      "00000000_0000_4000_8000_000000000000",
      "0000000-00000-4000-8000-000000000000",
  };
  for (std::size_t i = 0; i < w.collections.size(); ++i) {
    const auto& c = w.collections[i];
    const std::string base = "/v1/" + c.path + "/";
    const auto& bad = bad_ids[i];
    t.add("bad uuid " + bad + " on " + c.path, "GET", base + bad).is400("UUID");
    t.add("bad uuid " + bad + " on " + c.path, "PATCH", base + bad, R"({"description":"x"})")
        .is400("UUID");
    t.add("bad uuid " + bad + " on " + c.path, "DELETE", base + bad).is400("UUID");
    t.add("bad uuid " + bad + " in history of " + c.path, "GET", base + bad + "/versions")
        .is400("UUID");
    t.add("bad uuid " + bad + " in a version of " + c.path, "GET", base + bad + "/versions/0.1")
        .is400("UUID");
  }
  t.add("bad uuid on follow", "PUT", "/v1/mlmodels/not-a-uuid/followers", json_text(w.alice_id))
      .is400("UUID");
  t.add("bad uuid on vote", "PUT", "/v1/mlmodels/not-a-uuid/vote",
        R"({"updatedVoteType":"votedUp"})")
      .is400("UUID");
  for (const auto& bad : {bad_ids[0], bad_ids[2], bad_ids[4]})
    t.add("bad user uuid " + bad + " on unfollow", "DELETE",
          "/v1/mlmodels/" + w.churn + "/followers/" + bad)
        .is400("UUID");

  // Bad FQNs in /name/{fqn} (docs/SEMANTICS.md §2, §15): syntax, and parts that are no names. 400, before lookup.
  const std::vector<std::pair<std::string, std::string>> bad_fqns = {
      {"%22Business", "unbalanced quotes"},
      {"a..b", "empty part"},
      {".a", "empty part"},
      {"a.", "empty part"},
      {"%22%22", "empty part"},
      {"%22a%22b", "quote"},
      {"a%22b", "quote"},
      {std::string(3073, 'a'), "3072"},
      {"a%00b", "control"},
      {"Business.a%00", "control"},
      {"a::b", "::"},
      {"Business.Rev::enue", "::"},
      {"%FF", "UTF-8"},
      {"Business.%C0%AF", "UTF-8"},
      {"%ED%A0%80", "UTF-8"},
      {"Business.%F4%90%80%80", "UTF-8"},
      {"%F5%80%80%80", "UTF-8"},
      {"a%E2%82", "UTF-8"},
      {"a%01b", "control"},
      {"a%7Fb", "control"},
      {"a%C2%85b", "control"},
      {"Business." + std::string(401, 'r'), "400 bytes"},
      {std::string(257, 'x'), "256 characters"},
  };
  for (const auto& [fqn, message] : bad_fqns) {
    std::string shown = fqn.size() > 40 ? fqn.substr(0, 40) + "..." : fqn;
    t.add("bad FQN " + shown, "GET", "/v1/glossaryTerms/name/" + fqn).is400(message);
  }
  for (const auto& [fqn, message] :
       std::vector<std::pair<std::string, std::string>>{{"mlflow.%22churn", "unbalanced quotes"},
                                                        {"mlflow.ch%00urn", "control"},
                                                        {"mlflow::churn", "::"},
                                                        {"mlflow.%FE", "UTF-8"}}) {
    t.add("bad FQN on PATCH " + fqn, "PATCH", "/v1/mlmodels/name/" + fqn, R"({"description":"x"})")
        .is400(message);
    t.add("bad FQN on DELETE " + fqn, "DELETE", "/v1/mlmodels/name/" + fqn + "?hardDelete=true")
        .is400(message);
  }
}

void query_rows(Table& t, World& w) {
  const std::string uuid = w.alice_id;
  // limit (docs/SEMANTICS.md §8): [0-9]+ from 0 to 1,000,000.
  for (std::string q : {"limit=abc", "limit=-1", "limit=1.5", "limit=1e3", "limit=", "limit",
                        "limit=1000001", "limit=99999999999999999999999", "limit=+1", "limit=%201",
                        "limit=0x10", "limit=%EF%BC%91", "limit=1&limit=1", "limit=10%00"})
    t.add("list " + q, "GET", "/v1/mlmodels?" + q).is400("limit");
  // Cursors: both, empty, and every way of not being a cursor this catalog wrote.
  const std::string good = cursor(R"({"name":"churn","id":")" + uuid + R"("})");
  t.add("both before and after", "GET", "/v1/mlmodels?before=" + good + "&after=" + good)
      .is400("Only one of before or after query parameter allowed");
  t.add("after twice", "GET", "/v1/mlmodels?after=" + good + "&after=" + good)
      .is400("more than once");
  t.add("after empty", "GET", "/v1/mlmodels?after=").is400("after");
  t.add("before empty", "GET", "/v1/mlmodels?before").is400("before");
  std::string standard = cursor(R"({"name":"???>>>???","id":")" + uuid + R"("})");
  REQUIRE(standard.find_first_of("-_") != std::string::npos);
  for (auto& c : standard) c = c == '-' ? '+' : c == '_' ? '/' : c;
  std::string unpadded;
  for (std::string name = "a"; unpadded.empty() || unpadded.back() != '='; name += 'a')
    unpadded = cursor(R"({"name":")" + name + R"(","id":")" + uuid + R"("})");
  while (unpadded.back() == '=') unpadded.pop_back();
  const std::vector<std::pair<std::string, std::string>> bad_cursors = {
      {"garbage", "abc"},
      {"not base64url", "!!!!"},
      {"standard base64 alphabet", pct(standard)},
      {"padding missing", unpadded},
      {"NUL", "%00"},
      {"not JSON", cursor("not json")},
      {"an array", cursor("[]")},
      {"a string", cursor(R"("churn")")},
      {"id missing", cursor(R"({"name":"churn"})")},
      {"name missing", cursor(R"({"id":")" + uuid + R"("})")},
      {"an extra member", cursor(R"({"name":"churn","id":")" + uuid + R"(","x":1})")},
      {"id not a uuid", cursor(R"({"name":"churn","id":"not-a-uuid"})")},
      {"name a number", cursor(R"({"name":7,"id":")" + uuid + R"("})")},
      {"name empty", cursor(R"({"name":"","id":")" + uuid + R"("})")},
      {"name with NUL", cursor(R"({"name":"a\u0000b","id":")" + uuid + R"("})")},
      {"name with ::", cursor(R"({"name":"a::b","id":")" + uuid + R"("})")},
      {"name over 400 bytes",
       cursor(R"({"name":")" + std::string(401, 'n') + R"(","id":")" + uuid + R"("})")},
      {"name not UTF-8", cursor("{\"name\":\"\xFF\",\"id\":\"" + uuid + "\"}")},
      {"name a lone surrogate", cursor(R"({"name":"\ud800","id":")" + uuid + R"("})")},
      {"duplicate members", cursor(R"({"name":"a","name":"b","id":")" + uuid + R"("})")},
      {"trailing text", cursor(R"({"name":"churn","id":")" + uuid + R"("}x)")},
      {"BOM", cursor("\xEF\xBB\xBF{\"name\":\"churn\",\"id\":\"" + uuid + "\"}")},
      {"deeper than 64", cursor(nested_objects(65, "name"))},
  };
  for (const auto& [what, value] : bad_cursors) {
    t.add("after cursor: " + what, "GET", "/v1/mlmodels?after=" + value).is400("cursor");
    t.add("before cursor: " + what, "GET", "/v1/glossaries?limit=2&before=" + value)
        .is400("cursor");
  }
  // fields (docs/SEMANTICS.md §8): extra fields of the kind or *, comma-separated, no spaces.
  for (std::string q :
       {"fields=colour", "fields=owners,,tags", "fields=", "fields=owners,bogus", "fields=OWNERS",
        "fields=owners%20", "fields=owners+tags", "fields=name", "fields=,", "fields=*,colour"})
    t.add("list " + q, "GET", "/v1/glossaries?" + q).is400();
  t.add("fields=followers on users", "GET", "/v1/users?fields=followers")
      .is400("Invalid field name followers");
  t.add("fields=bogus on a get", "GET", "/v1/glossaries/" + w.business + "?fields=bogus")
      .is400("Invalid field name bogus");
  t.add("fields=bogus on a get by name", "GET", "/v1/glossaries/name/Business?fields=bogus")
      .is400("Invalid field name bogus");
  t.add("fields=bogus before 404", "GET", "/v1/glossaries/" + zero_id + "?fields=bogus")
      .is400("Invalid field name bogus");
  // include (docs/SEMANTICS.md §8, §10).
  for (std::string q : {"include=bogus", "include=", "include=Deleted", "include=non_deleted",
                        "include=all&include=all", "include=ALL"})
    t.add("list " + q, "GET", "/v1/glossaries?" + q).is400("include");
  t.add("include on a get", "GET", "/v1/glossaries/" + w.business + "?include=none")
      .is400("include");
  t.add("include before 404", "GET", "/v1/glossaries/" + zero_id + "?include=yes").is400("include");
  // service (docs/SEMANTICS.md §8, §15): given twice, empty, or an FQN that is no FQN.
  t.add("service twice", "GET", "/v1/mlmodels?service=mlflow&service=mlflow")
      .is400("more than once");
  t.add("service empty", "GET", "/v1/searchIndexes?service=").is400("service");
  t.add("service a..b", "GET", "/v1/searchIndexes?service=a..b").is400("empty part");
  t.add("service unbalanced", "GET", "/v1/mlmodels?service=%22mlflow").is400("unbalanced");
  t.add("service with NUL", "GET", "/v1/mlmodels?service=ml%00flow").is400("control");
  t.add("service with ::", "GET", "/v1/mlmodels?service=ml::flow").is400("::");
  t.add("service not UTF-8", "GET", "/v1/mlmodels?service=%FF").is400("UTF-8");
  t.add("service overlong UTF-8", "GET", "/v1/mlmodels?service=ml%C0%AFflow").is400("UTF-8");
  // hardDelete and recursive (docs/SEMANTICS.md §6): true or false, once.
  for (std::string q : {"hardDelete=yes", "hardDelete=True", "hardDelete=", "hardDelete",
                        "hardDelete=1", "hardDelete=true&hardDelete=true", "recursive=0",
                        "recursive=TRUE", "recursive=", "recursive=false%20"}) {
    t.add("delete " + q, "DELETE", "/v1/mlmodels/" + w.churn + "?" + q).is400(q.substr(0, 9));
    t.add("delete by name " + q, "DELETE", "/v1/glossaries/name/Business?" + q)
        .is400(q.substr(0, 9));
  }
  t.add("delete flags before 404", "DELETE", "/v1/glossaries/" + zero_id + "?recursive=no")
      .is400("recursive");
  // Events (docs/SEMANTICS.md §13): after and limit are [0-9]+; 400 before the 403 of a user who is no admin.
  for (std::string q : {"after=abc", "after=-1", "after=", "after=1.5", "after=1&after=2",
                        "limit=1000001", "limit=x"})
    t.add("events " + q, "GET", "/v1/events?" + q).is400();
  t.add("events query by a user", "GET", "/v1/events?after=x").as(w.bob).is400("after");
}

void header_rows(Table& t, World& w) {
  const std::string model = "/v1/mlmodels/" + w.churn;
  // If-Match (docs/REST.md): "<version>" or *, once.
  for (std::string value :
       {"0.2", "\"2\"", "W/\"0.2\"", "\"0.2\", \"0.3\"", "\"\"", "**", "\"0.15\"", "\"abc\"", "",
        "\"0.0\"", "\"-1\"", "\"1e1\"", "'0.2'", "\"0.2", "\"0.2\"x", "\" 0.2\""}) {
    t.add("If-Match " + value + " on PATCH", "PATCH", model, R"({"description":"x"})")
        .header("If-Match", value)
        .is400("If-Match");
    t.add("If-Match " + value + " on DELETE", "DELETE", model)
        .header("If-Match", value)
        .is400("If-Match");
  }
  t.add("two If-Match headers", "PATCH", model, R"({"description":"x"})")
      .header("If-Match", "\"0.2\"")
      .header("if-match", "\"0.2\"")
      .is400("More than one If-Match");
  t.add("bad If-Match before 404", "PATCH", "/v1/mlmodels/" + zero_id, R"({"description":"x"})")
      .header("If-Match", "0.1")
      .is400("If-Match");
  // A well-formed If-Match naming another version: 409, nothing changes.
  t.add("stale If-Match on PATCH", "PATCH", model, R"({"description":"x"})")
      .header("If-Match", "\"0.1\"")
      .is409("is at version 0.2, not 0.1");
  t.add("stale If-Match on DELETE", "DELETE", model).header("If-Match", "\"9.9\"").is409("not 9.9");
  t.add("stale If-Match on DELETE by name", "DELETE", "/v1/mlmodels/name/mlflow.churn")
      .header("If-Match", "\"0.3\"")
      .is409("not 0.3");
  // Well formed, past the largest version a catalog writes: it names no entity's version, so
  // 409 as any other, naming the version as sent.
  t.add("If-Match past the largest version on PATCH", "PATCH", model, R"({"description":"x"})")
      .header("If-Match", "\"99999999999999999999999.1\"")
      .is409("is at version 0.2, not 99999999999999999999999.1");
  t.add("If-Match past the largest version on DELETE", "DELETE", model)
      .header("If-Match", "\"429496729.5\"")
      .is409("not 429496729.5");
  t.add("If-Match past the largest version on a missing entity", "DELETE",
        "/v1/mlmodels/" + zero_id)
      .header("If-Match", "\"4294967296.0\"")
      .is404();
  // Content-Type on PATCH (docs/REST.md): the two patch types or application/json.
  for (std::string type : {"text/plain", "application/xml", "application/merge-patch",
                           "application/json-patch", "", "application/jsonx", "json",
                           "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"})
    t.add("Content-Type '" + type + "'", "PATCH", model, R"({"description":"x"})")
        .header("Content-Type", type)
        .is400("media type");
  t.add("two Content-Type headers", "PATCH", model, R"({"description":"x"})")
      .header("Content-Type", "application/json")
      .header("content-type", "application/json")
      .is400("More than one Content-Type");
  t.add("merge-patch+json with an array", "PATCH", model,
        R"([{"op":"add","path":"/description","value":"x"}])")
      .header("Content-Type", "application/merge-patch+json")
      .is400("merge patch");
  t.add("json-patch+json with an object", "PATCH", model, R"({"description":"x"})")
      .header("Content-Type", "application/json-patch+json")
      .is400("JSON Patch");
  t.add("bad Content-Type before 404", "PATCH", "/v1/mlmodels/" + zero_id, R"({"description":"x"})")
      .header("Content-Type", "text/plain")
      .is400("media type");
}

// Bodies that are not I-JSON (docs/SEMANTICS.md §15), have duplicate members, or nest deeper than 64.
std::vector<std::pair<std::string, std::string>> malformed_bodies() {
  return {
      {"empty", ""},
      {"whitespace", " \n"},
      {"unterminated object", "{"},
      {"unterminated string", "{\"name\":\"x"},
      {"missing value", R"({"name":})"},
      {"trailing comma in array", "[1,]"},
      {"trailing comma in object", R"({"name":"x",})"},
      {"single quotes", "{'name':'x'}"},
      {"bare word", "nul"},
      {"leading zero", "01"},
      {"NaN", "NaN"},
      {"Infinity", "-Infinity"},
      {"number out of range", R"({"description":1e400})"},
      {"comment", "/* c */ {}"},
      {"bad escape", R"({"name":"\x41"})"},
      {"short unicode escape", R"({"name":"\u12"})"},
      {"raw control character", "{\"name\":\"a\tb\"}"},
      {"trailing text", "{} x"},
      {"two values", "{}{}"},
      {"trailing comment", "{} // c"},
      {"trailing NUL", std::string("{}\0", 3)},
      {"trailing comma", "{},"},
      {"BOM", "\xEF\xBB\xBF{}"},
      {"BOM at the end", "{}\xEF\xBB\xBF"},
      {"invalid UTF-8 in a string", "{\"name\":\"\xFF\"}"},
      {"overlong UTF-8", "{\"name\":\"\xC0\xAF\"}"},
      {"UTF-8 encoded surrogate", "{\"name\":\"\xED\xA0\x80\"}"},
      {"truncated UTF-8", "{\"name\":\"\xE2\x82\"}"},
      {"UTF-8 above U+10FFFF", "{\"name\":\"\xF4\x90\x80\x80\"}"},
      {"lone continuation byte", "{\"name\":\"\x80\"}"},
      {"invalid UTF-8 in a member name", "{\"na\xFFme\":\"x\"}"},
      {"invalid UTF-8 outside strings", "{\xFF}"},
      {"lone high surrogate", R"({"name":"\ud800"})"},
      {"lone low surrogate", R"({"name":"\udfff"})"},
      {"high surrogate then a letter", R"({"name":"\ud800\u0041"})"},
      {"surrogates reversed", R"({"name":"\udc00\ud800"})"},
      {"lone surrogate in a member name", R"({"\ud834":"x"})"},
      {"duplicate members", R"({"name":"x","name":"y"})"},
      {"duplicate nested members", R"({"tags":[{"tagFQN":"a","tagFQN":"b"}]})"},
      {"65 arrays", std::string(65, '[') + std::string(65, ']')},
      {"65 objects", nested_objects(65, "a")},
      {"10000 arrays", std::string(10000, '[') + std::string(10000, ']')},
      {"unclosed 10000 arrays", std::string(10000, '[')},
  };
}

void body_rows(Table& t, World& w) {
  const std::string model = "/v1/mlmodels/" + w.churn;
  for (const auto& [what, body] : malformed_bodies()) {
    t.add("create body: " + what, "POST", "/v1/glossaries", body).is400();
    t.add("patch body: " + what, "PATCH", model, body).is400();
    t.add("vote body: " + what, "PUT", model + "/vote", body).is400();
  }
  for (std::string what : {"unterminated object", "BOM", "lone high surrogate", "duplicate members",
                           "65 arrays", "invalid UTF-8 in a string", "empty"}) {
    std::string body;
    for (const auto& [w2, b] : malformed_bodies())
      if (w2 == what) body = b;
    t.add("restore body: " + what, "PUT", "/v1/glossaries/restore", body).is400();
    t.add("follow body: " + what, "PUT", model + "/followers", body).is400();
    t.add("merge-patch body: " + what, "PATCH", "/v1/glossaries/name/Business", body)
        .header("Content-Type", "application/merge-patch+json")
        .is400();
  }
  // Messages that say what was wrong.
  t.add("message: duplicate", "POST", "/v1/glossaries", R"({"name":"x","name":"y"})")
      .is400("duplicate member name \"name\"");
  t.add("message: BOM", "POST", "/v1/glossaries", "\xEF\xBB\xBF{}").is400("byte order mark");
  t.add("message: surrogate", "POST", "/v1/glossaries", R"({"name":"\ud800","description":"d"})")
      .is400("surrogate");
  t.add("message: trailing", "POST", "/v1/glossaries", "{} x").is400("after the JSON value");
  t.add("message: too deep", "POST", "/v1/glossaries", nested_objects(65, "a"))
      .is400("deeper than 64");
  t.add("message: missing", "POST", "/v1/glossaries").is400("missing");
  // Exactly 64 levels parse; the body is then refused for what it says, not for its depth.
  t.add("64 levels in a create", "POST", "/v1/glossaries",
        R"({"name":"x","description":"d","extension":)" + nested_objects(63, "e") + "}")
      .is400("extension");
  t.add("64 levels in a follow", "PUT", model + "/followers", nested_objects(64, "e"))
      .is400("Follow body");
  t.add("65 levels in an extension", "POST", "/v1/mlmodels",
        R"({"name":"deep","service":"mlflow","algorithm":"a","extension":)" +
            nested_objects(64, "e") + "}")
      .is400("deeper than 64");

  // Bodies over the limit (docs/SEMANTICS.md §15: 8 MiB): 400 for every route that takes a body, and for those
  // that do not.
  const std::string huge_description =
      R"({"name":"huge","description":")" + std::string(body_limit, 'd') + R"("})";
  t.add("huge create", "POST", "/v1/glossaries", huge_description).is400("larger than 8388608");
  t.add("huge merge patch", "PATCH", model,
        R"({"description":")" + std::string(body_limit, 'd') + R"("})")
      .is400("larger than 8388608");
  t.add("huge restore", "PUT", "/v1/glossaries/restore", std::string(body_limit + 1, ' '))
      .is400("larger than 8388608");
  t.add("huge vote", "PUT", model + "/vote", std::string(body_limit + 1, '"'))
      .is400("larger than 8388608");
  t.add("huge body on a list", "GET", "/v1/glossaries", std::string(body_limit + 1, 'x'))
      .is400("larger than 8388608");

  // Restore bodies (docs/SEMANTICS.md §7): {"id": "<uuid>"}.
  for (std::string body :
       {std::string("{}"), std::string(R"({"id":7})"), std::string(R"({"id":"x"})"),
        R"({"id":")" + w.old + R"(","x":1})", json_text(w.old), "[" + json_text(w.old) + "]",
        R"({"ID":")" + w.old + R"("})", R"({"id":"{)" + w.old + R"(}"})", std::string("null"),
        std::string(R"({"id":null})")})
    t.add("restore body " + body, "PUT", "/v1/glossaries/restore", body).is400();
  t.add("restore of nothing", "PUT", "/v1/glossaries/restore", R"({"id":")" + zero_id + R"("})")
      .is404("not found");
  t.add("restore under a deleted glossary", "PUT", "/v1/glossaryTerms/restore",
        R"({"id":")" + w.old_term + R"("})")
      .is400("Old");
  // Follow bodies (docs/SEMANTICS.md §4): the user id as a JSON string.
  for (std::string body :
       {R"({"id":")" + w.alice_id + R"("})", std::string(R"("not-a-uuid")"), std::string("7"),
        std::string("null"), "[" + json_text(w.alice_id) + "]", json_text("{" + w.alice_id + "}"),
        json_text(w.alice_id + " "), std::string("true")})
    t.add("follow body " + body, "PUT", model + "/followers", body).is400();
  t.add("follow by an unknown user", "PUT", model + "/followers", json_text(zero_id))
      .is404("user instance for " + zero_id + " not found");
  t.add("follow by a soft-deleted user", "PUT", model + "/followers", json_text(w.gone_id))
      .is404("user instance");
  t.add("follow of nothing", "PUT", "/v1/mlmodels/" + zero_id + "/followers", json_text(w.alice_id))
      .is404("not found");
  t.add("follow of a soft-deleted glossary", "PUT", "/v1/glossaries/" + w.old + "/followers",
        json_text(w.alice_id))
      .is404();
  t.add("unfollow by an unknown user", "DELETE", model + "/followers/" + zero_id)
      .is404("not found");
  // Vote bodies (docs/SEMANTICS.md §5).
  for (std::string body : {"{}", R"({"updatedVoteType":"up"})", R"({"updatedVoteType":"VotedUp"})",
                           R"({"updatedVoteType":"votedUp","x":1})", R"({"updatedVoteType":1})",
                           R"("votedUp")", R"({"vote":"votedUp"})", R"({"updatedVoteType":null})",
                           R"({"updatedVoteType":"votedup"})", R"({"updatedVoteType":"votedUp "})"})
    t.add("vote body " + std::string(body), "PUT", model + "/vote", body).is400("Vote body");
  t.add("vote on nothing", "PUT", "/v1/mlmodels/" + zero_id + "/vote",
        R"({"updatedVoteType":"votedUp"})")
      .is404("not found");
  t.add("vote on a soft-deleted glossary", "PUT", "/v1/glossaries/" + w.old + "/vote",
        R"({"updatedVoteType":"votedUp"})")
      .is404();
}

void create_rows(Table& t, World& w) {
  // Names (docs/SEMANTICS.md §2): 1 to 256 characters, at most 400 bytes, no control characters, no :: or ".
  std::string euros;
  for (int i = 0; i < 134; ++i) euros += "\xE2\x82\xAC";  // 134 characters, 402 bytes
  const std::vector<std::pair<std::string, std::string>> bad_names = {
      {"empty", json_text("")},
      {"257 characters", json_text(std::string(257, 'n'))},
      {"402 bytes", json_text(euros)},
      {"NUL", R"("a\u0000b")"},
      {"U+0001", R"("a\u0001b")"},
      {"newline", R"("a\nb")"},
      {"DEL", R"("a\u007fb")"},
      {"C1 control", R"("a\u0085b")"},
      {"::", R"("a::b")"},
      {"quote", R"("a\"b")"},
  };
  for (const auto& c : w.collections)
    for (const auto& [what, name] : bad_names)
      t.add("name " + what + " in " + c.path, "POST", "/v1/" + c.path, create_body(c.path, name))
          .is400("name");
  // Missing required members, unknown members, wrong types: 400 naming the member (docs/SEMANTICS.md §2).
  for (const auto& c : w.collections) {
    const std::string body = create_body(c.path, json_text("fresh"));
    for (const auto& member : required_members(c.path))
      t.add("missing " + member + " in " + c.path, "POST", "/v1/" + c.path, without(body, member))
          .is400("Missing required member " + member);
    t.add("unknown member in " + c.path, "POST", "/v1/" + c.path, with(body, "colour", "1"))
        .is400("Unknown member colour");
    t.add("member id in " + c.path, "POST", "/v1/" + c.path, with(body, "id", json_text(zero_id)))
        .is400("Unknown member id");
    t.add("name a number in " + c.path, "POST", "/v1/" + c.path, with(body, "name", "7"))
        .is400("Invalid member name");
    t.add("name null in " + c.path, "POST", "/v1/" + c.path, with(body, "name", "null"))
        .is400("name");
    t.add("body an array in " + c.path, "POST", "/v1/" + c.path, "[" + body + "]").is400();
    t.add("body a string in " + c.path, "POST", "/v1/" + c.path, json_text(body)).is400();
  }
  auto create = [&](std::string what, std::string collection, std::string body) -> Row& {
    return t.add("create " + collection + ": " + what, "POST", "/v1/" + collection,
                 std::move(body));
  };
  // Wrong types.
  create("email true", "users", R"({"name":"u","email":true})").is400("email");
  create("isAdmin a string", "users", R"({"name":"u","email":"u@example.com","isAdmin":"true"})")
      .is400("isAdmin");
  create("teams a string", "users", R"({"name":"u","email":"u@example.com","teams":"data"})")
      .is400("teams");
  create("teams not uuids", "users", R"({"name":"u","email":"u@example.com","teams":["data"]})")
      .is400("teams");
  create("description an array", "glossaries", R"({"name":"g","description":[]})")
      .is400("description");
  create("mutuallyExclusive a string", "glossaries",
         R"({"name":"g","description":"d","mutuallyExclusive":"yes"})")
      .is400("mutuallyExclusive");
  create("tags an object", "glossaries", R"({"name":"g","description":"d","tags":{}})")
      .is400("tags");
  create("owners an object", "glossaries", R"({"name":"g","description":"d","owners":{}})")
      .is400("owners");
  create("owner id not a uuid", "glossaries",
         R"({"name":"g","description":"d","owners":[{"id":"alice","type":"user"}]})")
      .is400("owners");
  create("fields an object", "searchIndexes", R"({"name":"i","service":"es","fields":{}})")
      .is400("fields");
  create("mlFeatures an object", "mlmodels",
         R"({"name":"m","service":"mlflow","algorithm":"a","mlFeatures":{}})")
      .is400("mlFeatures");
  create("extension an array", "mlmodels",
         R"({"name":"m","service":"mlflow","algorithm":"a","extension":[]})")
      .is400("extension");
  create("synonyms of numbers", "glossaryTerms",
         R"({"glossary":"Business","name":"t","description":"d","synonyms":[1]})")
      .is400("synonyms");
  create("experts a string", "domains",
         R"({"name":"d","domainType":"Aggregate","description":"d","experts":"alice"})")
      .is400("experts");
  create("rules an object", "policies", R"({"name":"p","rules":{}})").is400("rules");
  create("enabled a number", "policies", R"({"name":"p","rules":[],"enabled":1})").is400("enabled");
  create("isJoinable a string", "teams", R"({"name":"t","isJoinable":"no"})").is400("isJoinable");
  // Enumerations (docs/SEMANTICS.md §2, §12).
  create("domainType lower case", "domains",
         R"({"name":"d","domainType":"aggregate","description":"d"})")
      .is400("aggregate");
  create("domainType unknown", "domains", R"({"name":"d","domainType":"Mesh","description":"d"})")
      .is400("Mesh");
  create("teamType lower case", "teams", R"({"name":"t","teamType":"group"})").is400("group");
  create("teamType unknown", "teams", R"({"name":"t","teamType":"Squad"})").is400("Squad");
  create("indexType unknown", "searchIndexes",
         R"({"name":"i","service":"es","fields":[],"indexType":"index"})")
      .is400("index");
  create("field dataType lower case", "searchIndexes",
         R"({"name":"i","service":"es","fields":[{"name":"f","dataType":"text"}]})")
      .is400("text");
  create("nested field dataType", "searchIndexes",
         R"({"name":"i","service":"es","fields":[{"name":"f","dataType":"OBJECT",)"
         R"("children":[{"name":"g","dataType":"STRING"}]}]})")
      .is400("STRING");
  create("feature dataType", "mlmodels",
         R"({"name":"m","service":"mlflow","algorithm":"a",)"
         R"("mlFeatures":[{"name":"f","dataType":"numeric"}]})")
      .is400("numeric");
  create("tag source", "glossaries",
         R"({"name":"g","description":"d","tags":[{"tagFQN":"PII","source":"Tag"}]})")
      .is400("Tag");
  create("tag labelType", "glossaries",
         R"({"name":"g","description":"d","tags":[{"tagFQN":"PII","labelType":"manual"}]})")
      .is400("manual");
  create("tag state", "glossaries",
         R"({"name":"g","description":"d","tags":[{"tagFQN":"PII","state":"Done"}]})")
      .is400("Done");
  create("owner type", "glossaries",
         R"({"name":"g","description":"d","owners":[{"id":")" + w.alice_id +
             R"(","type":"robot"}]})")
      .is400("robot");
  create("rule effect", "policies",
         R"({"name":"p","rules":[{"name":"r","effect":"permit","resources":["all"],)"
         R"("operations":["All"]}]})")
      .is400("permit");
  create("rule operation", "policies",
         R"({"name":"p","rules":[{"name":"r","effect":"allow","resources":["all"],)"
         R"("operations":["Fly"]}]})")
      .is400("Fly");
  create("rule resource", "policies",
         R"({"name":"p","rules":[{"name":"r","effect":"deny","resources":["table"],)"
         R"("operations":["All"]}]})")
      .is400("table");
  create("rule condition", "policies",
         R"({"name":"p","rules":[{"name":"r","effect":"allow","resources":["all"],)"
         R"x("operations":["All"],"condition":"isOwner() && hack()"}]})x")
      .is400();
  // Values outside their shape.
  create("email without a dot", "users", R"({"name":"u","email":"u@example"})").is400("email");
  create("email with a space", "users", R"({"name":"u","email":"u v@example.com"})").is400("email");
  create("email with two @", "users", R"({"name":"u","email":"u@v@example.com"})").is400("email");
  create("serviceType empty", "services/mlmodelServices", R"({"name":"s","serviceType":""})")
      .is400("serviceType");
  create("server not a URI", "mlmodels",
         R"({"name":"m","service":"mlflow","algorithm":"a","server":"not a uri"})")
      .is400("server");
  create("sourceHash of 33", "searchIndexes",
         R"({"name":"i","service":"es","fields":[],"sourceHash":")" + std::string(33, 'h') + "\"}")
      .is400("sourceHash");
  create("sourceHash empty", "searchIndexes",
         R"({"name":"i","service":"es","fields":[],"sourceHash":""})")
      .is400("sourceHash");
  create("synonym empty", "glossaryTerms",
         R"({"glossary":"Business","name":"t","description":"d","synonyms":[""]})")
      .is400("synonym");
  create("tagFQN empty", "glossaries", R"({"name":"g","description":"d","tags":[{"tagFQN":""}]})")
      .is400("tag");
  create("tagFQN of 129", "glossaries",
         R"({"name":"g","description":"d","tags":[{"tagFQN":")" + std::string(129, 't') + "\"}]}")
      .is400("tag");
  create("field name empty", "searchIndexes",
         R"({"name":"i","service":"es","fields":[{"name":"","dataType":"TEXT"}]})")
      .is400("name");
  create("Division without a parent", "teams", R"({"name":"t","teamType":"Division"})")
      .is400("exactly one parent");
  // FQNs in bodies (docs/SEMANTICS.md §2, §15): 400 when they are no FQNs, 404 when nothing has them.
  create("service a..b", "mlmodels", R"({"name":"m","service":"a..b","algorithm":"a"})")
      .is400("empty part");
  create("service with NUL", "mlmodels", R"({"name":"m","service":"ml\u0000flow","algorithm":"a"})")
      .is400("control");
  create("service with ::", "searchIndexes", R"({"name":"i","service":"e::s","fields":[]})")
      .is400("::");
  create("glossary unbalanced", "glossaryTerms",
         R"({"glossary":"\"Business","name":"t","description":"d"})")
      .is400("unbalanced");
  create("parent with an empty part", "glossaryTerms",
         R"({"glossary":"Business","parent":"Business..Revenue","name":"t","description":"d"})")
      .is400("empty part");
  create("domain a.", "glossaries", R"({"name":"g","description":"d","domains":["a."]})")
      .is400("empty part");
  create("related term with ::", "glossaryTerms",
         R"({"glossary":"Business","name":"t","description":"d","relatedTerms":["a::b"]})")
      .is400("::");
  create("parent domain empty", "domains",
         R"({"name":"d","domainType":"Aggregate","description":"d","parent":""})")
      .is400("empty");
  create("unknown service", "mlmodels", R"({"name":"m","service":"nothing","algorithm":"a"})")
      .is404("nothing");
  create("deleted glossary", "glossaryTerms", R"({"glossary":"Old","name":"t2","description":"d"})")
      .is404("Old");
  create("unknown team member", "teams",
         R"({"name":"t","users":[")" + w.alice_id + R"(",")" + zero_id + R"("]})")
      .is404(zero_id);
  create("unknown owner", "glossaries",
         R"({"name":"g","description":"d","owners":[{"id":")" + zero_id + R"(","type":"user"}]})")
      .is404(zero_id);
  create("unknown expert", "domains",
         R"({"name":"d","domainType":"Aggregate","description":"d","experts":["nobody"]})")
      .is404("nobody");
  // Already there (also soft-deleted): 409.
  create("existing name", "glossaries", R"({"name":"Business","description":"d"})")
      .is409("Entity already exists");
  create("soft-deleted name", "glossaries", R"({"name":"Old","description":"d"})")
      .is409("Entity already exists");
  // Only admins create; a bad body is 400 before that (docs/SEMANTICS.md §14 step 3 before 7).
  create("by a user", "glossaries", R"({"name":"g","description":"d"})").as(w.bob).is403("Create");
  create("bad body by a user", "glossaries", R"({"name":"g"})").as(w.bob).is400("description");
  create("bad name by a user", "glossaries", R"({"name":"a::b","description":"d"})")
      .as(w.bob)
      .is400("name");
}

void patch_rows(Table& t, World& w) {
  const std::string model = "/v1/mlmodels/" + w.churn;
  auto json_patch = [&](std::string what, std::string ops) -> Row& {
    return t.add("JSON Patch: " + what, "PATCH", model, "[" + std::move(ops) + "]")
        .header("Content-Type", "application/json-patch+json");
  };
  auto merge = [&](std::string what, std::string body, std::string target = {}) -> Row& {
    return t.add("merge patch: " + what, "PATCH", target.empty() ? model : target, std::move(body));
  };
  // Operations that fail (docs/SEMANTICS.md §9): 400.
  json_patch("test fails", R"({"op":"test","path":"/name","value":"other"})").is400("test failed");
  json_patch("test 1 against 1.0", R"({"op":"test","path":"/version","value":0.1})")
      .is400("test failed");
  json_patch("test of a missing member", R"({"op":"test","path":"/nothing","value":1})")
      .is400("does not exist");
  json_patch("test without value", R"({"op":"test","path":"/name"})").is400("value");
  json_patch("remove a missing member", R"({"op":"remove","path":"/nothing"})")
      .is400("does not exist");
  json_patch("replace a missing member", R"({"op":"replace","path":"/nothing","value":1})")
      .is400("does not exist");
  json_patch("add under a missing parent", R"({"op":"add","path":"/a/b","value":1})")
      .is400("does not exist");
  json_patch("add under a string", R"({"op":"add","path":"/name/x","value":1})").is400();
  json_patch("pointer without a slash", R"({"op":"add","path":"description","value":"x"})")
      .is400("must start with '/'");
  json_patch("pointer ~2", R"({"op":"add","path":"/~2","value":"x"})").is400("~");
  json_patch("pointer ending in ~", R"({"op":"add","path":"/description~","value":"x"})")
      .is400("~");
  json_patch("index with a leading zero", R"({"op":"add","path":"/mlFeatures/01","value":{}})")
      .is400("leading zero");
  json_patch("index out of bounds", R"({"op":"add","path":"/mlFeatures/5","value":{}})")
      .is400("out of bounds");
  json_patch("replace at -", R"({"op":"replace","path":"/mlFeatures/-","value":{}})").is400();
  json_patch("negative index", R"({"op":"remove","path":"/mlFeatures/-1"})").is400();
  json_patch("remove the document", R"({"op":"remove","path":""})").is400("whole document");
  json_patch("move into its own child",
             R"({"op":"move","from":"/mlFeatures","path":"/mlFeatures/0"})")
      .is400("own children");
  json_patch("move from a missing member", R"({"op":"move","from":"/nothing","path":"/x"})")
      .is400("nothing");
  json_patch("copy without from", R"({"op":"copy","path":"/x"})").is400("from");
  json_patch("from a number", R"({"op":"copy","from":1,"path":"/x"})").is400("from");
  json_patch("op missing", R"({"path":"/description","value":"x"})").is400("op");
  json_patch("op unknown", R"({"op":"append","path":"/description","value":"x"})")
      .is400("unknown op");
  json_patch("op a number", R"({"op":1,"path":"/description","value":"x"})").is400("op");
  json_patch("path missing", R"({"op":"add","value":"x"})").is400("path");
  json_patch("path a number", R"({"op":"add","path":1,"value":"x"})").is400("path");
  json_patch("operation a string", R"("add")").is400("must be an object");
  json_patch("duplicate op member",
             R"({"op":"add","op":"remove","path":"/description","value":"x"})")
      .is400("duplicate");
  json_patch("a good operation then a failing one",
             R"({"op":"replace","path":"/description","value":"changed"},)"
             R"({"op":"test","path":"/name","value":"no"})")
      .is400("operation 1");
  json_patch("result not an object", R"({"op":"replace","path":"","value":7})")
      .is400("not a JSON object");
  t.add("patch body a string", "PATCH", model, R"("description")").is400("Invalid patch");
  t.add("patch body null", "PATCH", model, "null").is400("Invalid patch");
  t.add("patch body a number", "PATCH", model, "7").is400("Invalid patch");

  // Read-only fields (docs/SEMANTICS.md §9): 400 naming the field, by merge patch and by JSON Patch.
  for (std::string field :
       {"id", "name", "fullyQualifiedName", "version", "updatedAt", "updatedBy", "href",
        "changeDescription", "deleted", "followers", "votes", "service", "serviceType"})
    merge("read-only " + field, R"({")" + field + R"(":"x"})")
        .is400("mlmodel attribute " + field + " can't be modified");
  json_patch("read-only name", R"({"op":"replace","path":"/name","value":"x"})")
      .is400("attribute name can't be modified");
  json_patch("read-only id removed", R"({"op":"remove","path":"/id"})")
      .is400("attribute id can't be modified");
  json_patch("read-only version moved", R"({"op":"move","from":"/version","path":"/v"})")
      .is400("can't be modified");
  merge("read-only glossary termCount", R"({"termCount":5})", "/v1/glossaries/" + w.business)
      .is400("attribute termCount can't be modified");
  merge("read-only term glossary", R"({"glossary":null})",
        "/v1/glossaryTerms/name/Business.Revenue")
      .is400("attribute glossary can't be modified");
  merge("read-only team userCount", R"({"userCount":0})", "/v1/teams/name/data")
      .is400("attribute userCount can't be modified");
  merge("read-only user owns", R"({"owns":[]})", "/v1/users/" + w.alice_id)
      .header("Content-Type", "application/merge-patch+json")
      .is400("attribute owns can't be modified");

  // Results that are no valid entity (docs/SEMANTICS.md §9): 400, or 404 for a reference to nothing.
  merge("algorithm a number", R"({"algorithm":7})").is400("algorithm");
  merge("algorithm removed", R"({"algorithm":null})").is400("algorithm");
  merge("unknown member", R"({"colour":"red"})").is400("colour");
  merge("description a number", R"({"description":7})").is400("description");
  merge("feature dataType", R"({"mlFeatures":[{"name":"f","dataType":"numeric"}]})")
      .is400("numeric");
  merge("hyperparameter value a number", R"({"mlHyperParameters":[{"name":"h","value":1}]})")
      .is400("value");
  merge("server not a URI", R"({"server":"not a uri"})").is400("server");
  merge("tag source", R"({"tags":[{"tagFQN":"PII","source":"Tag"}]})").is400("Tag");
  merge("extension a string", R"({"extension":"x"})").is400("extension");
  merge("owner type", R"({"owners":[{"id":")" + w.bob_id + R"(","type":"robot"}]})").is400("robot");
  merge("owner not a uuid", R"({"owners":[{"id":"alice","type":"user"}]})").is400();
  merge("owner missing", R"({"owners":[{"id":")" + zero_id + R"(","type":"user"}]})")
      .is404(zero_id);
  merge("owner soft-deleted", R"({"owners":[{"id":")" + w.gone_id + R"(","type":"user"}]})")
      .is404();
  merge("domain missing", R"({"domains":[{"id":")" + zero_id + R"(","type":"domain"}]})")
      .is404(zero_id);
  merge("domainType", R"({"domainType":"aggregate"})", "/v1/domains/name/Sales").is400("aggregate");
  merge("email", R"({"email":"not-an-email"})", "/v1/users/" + w.alice_id).is400("email");
  merge("email removed", R"({"email":null})", "/v1/users/" + w.alice_id).is400("email");
  merge("teamType", R"({"teamType":"Squad"})", "/v1/teams/name/data").is400("Squad");
  merge("Group changes type", R"({"teamType":"Department"})", "/v1/teams/name/data").is400("Group");
  merge("team domain and domains", R"({"domain":"Sales","domains":[]})", "/v1/teams/name/data")
      .is400("domain");
  merge("rule effect",
        R"({"rules":[{"name":"r","effect":"permit","resources":["all"],)"
        R"("operations":["All"]}]})",
        "/v1/policies/name/p1")
      .is400("permit");
  merge("index field dataType", R"({"fields":[{"name":"f","dataType":"text"}]})",
        "/v1/searchIndexes/name/es.logs")
      .is400("text");
  merge("term status", R"({"status":"Done"})", "/v1/glossaryTerms/name/Business.Revenue")
      .is400("Done");
  merge("mutuallyExclusive a string", R"({"mutuallyExclusive":"yes"})",
        "/v1/glossaries/" + w.business)
      .is400("mutuallyExclusive");
  merge("synonym empty", R"({"synonyms":[""]})", "/v1/glossaryTerms/name/Business.Revenue")
      .is400("synonym");

  // The order of checks (docs/SEMANTICS.md §14) for a patch: 404, then 409, then a failing operation, then 403,
  // then the rules on the result.
  t.add("patch of nothing", "PATCH", "/v1/mlmodels/" + zero_id,
        R"([{"op":"test","path":"/name","value":"no"}])")
      .is404("not found");
  t.add("patch of a soft-deleted glossary", "PATCH", "/v1/glossaries/" + w.old,
        R"({"description":"x"})")
      .is404("deleted");
  t.add("stale If-Match before a failing operation", "PATCH", model,
        R"([{"op":"test","path":"/name","value":"no"}])")
      .header("If-Match", "\"0.1\"")
      .is409();
  t.add("by a user: failing operation before 403", "PATCH", model,
        R"([{"op":"test","path":"/name","value":"no"}])")
      .as(w.bob)
      .is400("test failed");
  t.add("by a user: stale If-Match before 403", "PATCH", model, R"({"description":"x"})")
      .header("If-Match", "\"0.1\"")
      .as(w.bob)
      .is409();
  t.add("by a user: 403", "PATCH", model, R"({"description":"x"})").as(w.bob).is403("bob");
  t.add("by a user: 403 before read-only", "PATCH", model, R"({"name":"x"})")
      .as(w.bob)
      .is403("bob");
  t.add("by a user: 403 before an invalid result", "PATCH", model, R"({"algorithm":7})")
      .as(w.bob)
      .is403("bob");
  t.add("by a user: 403 on an admin flag", "PATCH", "/v1/users/" + w.bob_id, R"({"isAdmin":true})")
      .as(w.bob)
      .is403();
  t.add("by a user: delete", "DELETE", model).as(w.bob).is403("Delete");
  t.add("by a user: follow for someone else", "PUT", model + "/followers", json_text(w.alice_id))
      .as(w.bob)
      .is403();
  t.add("by a user: events", "GET", "/v1/events").as(w.bob).is403();
  // Deletes refused by the rules on stored state (docs/SEMANTICS.md §6).
  t.add("delete a glossary with terms", "DELETE", "/v1/glossaries/" + w.business)
      .is400("not empty");
  t.add("hard delete a service with models", "DELETE",
        "/v1/services/mlmodelServices/name/mlflow?hardDelete=true")
      .is400("not empty");
}

void version_rows(Table& t, World& w) {
  // A version matches (0|[1-9][0-9]*)\.[0-9] and is not 0.0 (docs/SEMANTICS.md §3); anything else is 400.
  const std::vector<std::string> bad_versions = {
      "1",    "0.15",   "1e1", "0.0", "-1",  ".5",          "abc",    "01.1", "1.",   "0.1.1",
      "+0.1", "%200.1", "0x1", "1,2", "0.a", "%EF%BC%91.0", "0.1%00", "1.0.", "00.1", "0..1"};
  for (std::size_t i = 0; i < bad_versions.size(); ++i) {
    const auto& c = w.collections[i % w.collections.size()];
    t.add("version " + bad_versions[i] + " of " + c.path, "GET",
          "/v1/" + c.path + "/" + c.id + "/versions/" + bad_versions[i])
        .is400("Invalid version");
  }
  t.add("bad version before 404 of the entity", "GET", "/v1/mlmodels/" + zero_id + "/versions/1")
      .is400("Invalid version");
  // Well-formed but never written: 404 naming the version.
  for (const auto& c : w.collections)
    t.add("version 9.9 of " + c.path, "GET", "/v1/" + c.path + "/" + c.id + "/versions/9.9")
        .is404("and version 9.9 not found");
  // Past the largest version a catalog can write, and still of the grammar: 404 all the same.
  t.add("version 99999999999999999999999.1", "GET",
        "/v1/" + w.collections[0].path + "/" + w.collections[0].id +
            "/versions/99999999999999999999999.1")
      .is404("and version 99999999999999999999999.1 not found");
  t.add("history of nothing", "GET", "/v1/mlmodels/" + zero_id + "/versions").is404("not found");
  t.add("version of nothing", "GET", "/v1/mlmodels/" + zero_id + "/versions/0.1")
      .is404("not found");
}

// Patches whose result, or what they build on the way, passes the docs/SEMANTICS.md §15 limits. Refused with 400
// before anything is stored, for an admin and for a user with no rights alike (the operations
// fail before authorization, docs/SEMANTICS.md §14 step 6).
void hostile_rows(Table& t, World& w) {
  const std::string model = "/v1/mlmodels/" + w.churn;
  // Pad the document so that 10 doublings land at about 9 MiB: over the 8 MiB limit, yet
  // within what a patch may build on the way (so the result check refuses it).
  constexpr int doublings = 10;
  const std::size_t target = (std::size_t{9} << 20) >> doublings;
  const std::size_t padded = w.churn_size + std::string_view(R"(,"extension":{"pad":""})").size();
  REQUIRE(padded < target);
  for (const auto* who : {&w.admin, &w.bob}) {
    const std::string by = who == &w.admin ? " by the admin" : " by a user with no rights";
    t.add("70 deepening triples" + by, "PATCH", model, rest_test::deepening_patch(70))
        .as(*who)
        .is400("deeper than");
    t.add("1700 deepening triples" + by, "PATCH", model, rest_test::deepening_patch(1700))
        .as(*who)
        .is400("deeper than");
    t.add("nested adds" + by, "PATCH", model, nested_add_patch(3)).as(*who).is400("deeper than");
    t.add("20 doubling copies" + by, "PATCH", model, rest_test::doubling_patch(20))
        .as(*who)
        .is400("more than");
    t.add("40 doubling copies" + by, "PATCH", model, rest_test::doubling_patch(40))
        .as(*who)
        .is400("more than");
    t.add("a result over the body limit" + by, "PATCH", model,
          padded_doubling_patch(doublings, target - padded))
        .as(*who)
        .is400("larger than");
  }
}

std::vector<Row> all_rows(World& w) {
  Table t(w.admin);
  token_rows(t, w);
  path_rows(t, w);
  query_rows(t, w);
  header_rows(t, w);
  body_rows(t, w);
  create_rows(t, w);
  patch_rows(t, w);
  version_rows(t, w);
  hostile_rows(t, w);
  return {t.rows().begin(), t.rows().end()};
}

std::string cut(std::string_view s, std::size_t n = 300) {
  return s.size() <= n ? std::string(s) : std::string(s.substr(0, n)) + "...";
}

// Runs every row; returns how many ran.
std::size_t run(World& w, const std::vector<Row>& rows) {
  const std::string before = test::dump(w.store());
  {
    auto problems = w.store().verify();
    REQUIRE(problems.has_value());
    REQUIRE(problems->empty());
  }
  std::size_t tried = 0;
  for (const auto& row : rows) {
    REQUIRE(row.status != 0);  // every row states its expectation
    const auto& q = row.request;
    auto r = w.api().handle(q);
    ++tried;
    INFO("row " << tried << ": " << row.what << "\n  " << cut(q.method) << " " << cut(q.target)
                << "\n  body: " << cut(q.body) << "\n  -> " << r.status << " " << cut(r.body, 600));
    CHECK(r.status == row.status);
    CHECK(header(r, "Content-Type") == "application/json");
    auto body = catalog::json::parse(r.body);
    CHECK(body);
    if (body && body->is_object()) {
      const auto& o = body->as_object();
      CHECK(o.size() == 3);
      CHECK(o.contains("code"));
      if (o.contains("code")) CHECK(o.at("code") == bj::value(row.status));
      const auto* type = o.if_contains("errorType");
      CHECK((type && type->is_string() && *type == row.type.c_str()));
      const auto* message = o.if_contains("message");
      CHECK((message && message->is_string()));
      if (message && message->is_string() && !row.message.empty())
        CHECK(std::string_view(message->as_string()).find(row.message) != std::string_view::npos);
    }
    if (row.status == 401) CHECK(header(r, "WWW-Authenticate") == "Bearer");
    if (row.status == 405) CHECK(header(r, "Allow") == row.allow);
    // Nothing a refused request does may stay behind (docs/SEMANTICS.md §14, §15).
    const bool unchanged = test::dump(w.store()) == before;
    REQUIRE(unchanged);
    auto problems = w.store().verify();
    REQUIRE(problems.has_value());
    if (!problems->empty()) {
      for (const auto& p : *problems) UNSCOPED_INFO(p.key << ": " << p.message);
      FAIL("verify() found problems");
    }
  }
  return tried;
}

}  // namespace

TEST_CASE("bad input table: in memory") {
  World w(catalog::Store::in_memory(store_options()).value());
  auto rows = all_rows(w);
  REQUIRE(rows.size() >= 300);
  auto tried = run(w, rows);
  std::cout << "bad_input_test: " << tried << " bad requests tried on the memory store\n";
}

TEST_CASE("bad input table: LMDB") {
  test::TempDir dir;
  World w(catalog::Store::open_lmdb(dir.path(), store_options()).value());
  auto rows = all_rows(w);
  auto tried = run(w, rows);
  std::cout << "bad_input_test: " << tried << " bad requests tried on the LMDB store\n";
}
