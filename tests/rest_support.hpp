#ifndef CATALOG_TESTS_REST_SUPPORT_HPP
#define CATALOG_TESTS_REST_SUPPORT_HPP

// What the tests of the REST surface share: HS256 tokens signed here with OpenSSL, checks of
// error answers, and a fixture with an in-memory store behind rest::Api.

#include "support.hpp"

#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/store.hpp>

#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rest_test {

namespace bj = boost::json;
using catalog::rest::Api;
using catalog::rest::ApiOptions;
using catalog::rest::Request;
using catalog::rest::Response;

inline constexpr std::string_view secret = "rest-test-secret-of-at-least-32-bytes!";
inline constexpr std::int64_t now_seconds = 1767225600;  // 2026-01-01T00:00:00Z

inline std::string b64(std::string_view bytes) {
  return catalog::detail::base64url_encode(bytes, catalog::detail::Padding::none);
}

// An HS256 JWT whose payload is `claims` (JSON text), signed with `key`.
inline std::string sign(std::string_view claims, std::string_view key = secret) {
  std::string input = b64(R"({"alg":"HS256","typ":"JWT"})") + "." + b64(claims);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_size);
  return input + "." + b64(std::string_view(reinterpret_cast<const char*>(mac), mac_size));
}

// A valid token for user `name` (claim `sub`), expiring in an hour.
inline std::string token_for(std::string_view name) {
  return sign(R"({"sub":")" + std::string(name) + R"(","iat":)" + std::to_string(now_seconds) +
              R"(,"exp":)" + std::to_string(now_seconds + 3600) + "}");
}

using Headers = std::vector<std::pair<std::string, std::string>>;

inline std::optional<std::string> header(const Response& r, std::string_view name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return std::nullopt;
}

inline bj::value body_of(const Response& r) {
  // An answer may nest an entity's values a few levels below the body limit (a change
  // description holds old and new values), so read it with room to spare.
  auto v = catalog::json::parse(r.body, {2 * catalog::json::max_document_depth});
  INFO(r.body);
  REQUIRE(v);
  return *v;
}

inline std::string str(const bj::value& v, std::string_view key) {
  return std::string(v.as_object().at(key).as_string());
}

// Checks an error answer: status, the docs/SEMANTICS.md §14 body, the JSON content type.
inline void require_error(const Response& r, int status, std::string_view type,
                   std::string_view message_part = {}) {
  INFO(r.status << " " << r.body);
  REQUIRE(r.status == status);
  REQUIRE(header(r, "Content-Type") == "application/json");
  auto b = body_of(r);
  REQUIRE(b.as_object().size() == 3);
  REQUIRE(b.at("code").as_int64() == status);
  REQUIRE(str(b, "errorType") == type);
  REQUIRE(b.at("message").is_string());
  if (!message_part.empty()) REQUIRE(str(b, "message").find(message_part) != std::string::npos);
}

struct Fixture {
  catalog::Store store = open_store();
  Api api{store};
  std::string admin = token_for("admin");

  static catalog::Store open_store() {
    auto options = test::test_options();
    options.jwt.hs256_keys = {{std::string(secret), {}}};
    options.clock = [] { return now_seconds * 1000; };
    return catalog::Store::in_memory(std::move(options)).value();
  }

  Response call(std::string method, std::string target, std::string body = {}, Headers headers = {},
                std::optional<std::string> token = {}) const {
    Request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.headers = std::move(headers);
    r.headers.emplace_back("Authorization", "Bearer " + token.value_or(admin));
    r.body = std::move(body);
    return api.handle(r);
  }

  // A successful call returning JSON; fails the test otherwise.
  bj::value ok(std::string method, std::string target, std::string body = {}, int status = 200,
               Headers headers = {}) const {
    auto r = call(std::move(method), std::move(target), std::move(body), std::move(headers));
    INFO(r.body);
    REQUIRE(r.status == status);
    REQUIRE(header(r, "Content-Type") == "application/json");
    return body_of(r);
  }

  std::string create(std::string_view collection, std::string body) const {
    auto e = ok("POST", "/v1/" + std::string(collection), std::move(body), 201);
    return str(e, "id");
  }
};

// ---- patch bodies an attacker sends ----

// A JSON Patch that nests /extension about 61 levels deeper per triple: add a 60-deep object at
// /extension/n, move /extension/c to its bottom, move /extension/n back to /extension/c. Every
// body is shallow (depth under 64); the document it builds is not.
inline std::string deepening_patch(int triples) {
  std::string deep = "{}", path = "/extension/n";
  for (int i = 0; i < 59; ++i) {
    deep = R"({"c":)" + deep + "}";
    path += "/c";
  }
  path += "/c";
  std::string out = R"([{"op":"add","path":"/extension","value":{"c":{}}})";
  for (int i = 0; i < triples; ++i)
    out += R"(,{"op":"add","path":"/extension/n","value":)" + deep +
           R"(},{"op":"move","from":"/extension/c","path":")" + path +
           R"("},{"op":"move","from":"/extension/n","path":"/extension/c"})";
  return out + "]";
}

// A JSON Patch that doubles the document per operation: `copies` times copy "" to
// /extension/x<i>.
inline std::string doubling_patch(int copies) {
  std::string out = R"([{"op":"add","path":"/extension","value":{}})";
  for (int i = 0; i < copies; ++i)
    out += R"(,{"op":"copy","from":"","path":"/extension/x)" + std::to_string(i) + R"("})";
  return out + "]";
}

}  // namespace rest_test

#endif  // CATALOG_TESTS_REST_SUPPORT_HPP
