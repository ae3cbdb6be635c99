// Shared pieces of the libFuzzer targets: a fixed clock and HS256 secret, token signing, the
// abort that turns a broken property into a libFuzzer crash, and a small catalog to fuzz.
//
// A target that writes keeps its catalog only while inputs leave it as it was (WorldCache), so
// every input meets the same catalog: a crash input reproduces alone, and memory does not
// accumulate across millions of executions.
#ifndef CATALOG_FUZZ_SUPPORT_HPP
#define CATALOG_FUZZ_SUPPORT_HPP

#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <boost/json/value.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace fuzz {

namespace bj = boost::json;

/// 2026-01-01T00:00:00Z: every store and every token of the fuzzers lives at this instant.
inline constexpr std::int64_t now_seconds = 1767225600;
/// The HS256 secret of every store the fuzzers open (and of fuzz_jwt's first key).
inline constexpr std::string_view hs256_secret = "fuzz-hs256-secret-of-at-least-32-bytes";

/// A broken property: print what and the detail (cut short), then abort so libFuzzer saves the
/// input as a crash artifact.
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  constexpr std::size_t max_detail = 2000;
  if (detail.size() > max_detail) detail = detail.substr(0, max_detail);
  std::fprintf(stderr, "\n*** fuzz property failed: %.*s\n%.*s\n", int(what.size()), what.data(),
               int(detail.size()), detail.data());
  std::abort();
}

/// The value of a Result the fuzz setup cannot do without; aborts with the error otherwise.
template <class R>
auto must(R&& result, std::string_view what) {
  if (!result) fail(what, result.error().message());
  return std::move(*result);
}

inline std::string b64(std::string_view bytes) {
  return catalog::detail::base64url_encode(bytes, catalog::detail::Padding::none);
}

/// The signing input `b64(header).b64(payload)` with an HS256 signature by `secret` appended.
inline std::string sign_hs256(std::string_view header, std::string_view payload,
                              std::string_view secret = hs256_secret) {
  std::string input = b64(header) + "." + b64(payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), secret.data(), int(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_size);
  return input + "." + b64(std::string_view(reinterpret_cast<const char*>(mac), mac_size));
}

/// A valid HS256 token for `user` (claim `sub`), issued now, expiring in an hour.
inline std::string token_for(std::string_view user) {
  return sign_hs256(R"({"alg":"HS256","typ":"JWT"})",
                    R"({"sub":")" + std::string(user) + R"(","iat":)" +
                        std::to_string(now_seconds) + R"(,"exp":)" +
                        std::to_string(now_seconds + 3600) + "}");
}

/// Store options: admin `admin`, tokens by `hs256_secret`, and a clock that starts at
/// `now_seconds` and advances 1 ms per reading (so versions' timestamps differ, and runs repeat).
inline catalog::StoreOptions store_options() {
  catalog::StoreOptions o;
  o.admins = {"admin"};
  auto t = std::make_shared<std::int64_t>(now_seconds * 1000);
  o.clock = [t] { return (*t)++; };  // the fuzzers call the store from one thread
  o.jwt.hs256_keys = {{std::string(hs256_secret), std::nullopt}};
  return o;
}

/// A small catalog in memory: the admin `admin`, the user `bob` (no rights beyond the default
/// policy), the service `mlflow` and the ML model `mlflow.churn` owned by the admin, with an
/// extension. `full` adds one of every other kind (for fuzz_rest).
struct World {
  catalog::Store store;
  catalog::Principal admin;
  catalog::Principal bob;
  std::string model_id;
  std::string service_id;

  static World make(bool full = false) {
    auto store = must(catalog::Store::in_memory(store_options()), "open the store");
    auto admin = must(store.principal("admin"), "admin principal");
    auto create = [&](catalog::Kind kind, const std::string& body) {
      auto value = must(catalog::json::parse(body), "setup body");
      auto created = must(store.create_json(admin, kind, value), "create " + body);
      return std::string(created.at("id").as_string());
    };
    create(catalog::Kind::user, R"({"name":"bob","email":"bob@example.com"})");
    auto bob = must(store.principal("bob"), "bob principal");
    auto admin_ref = R"({"id":")" + catalog::to_string(admin.id) + R"(","type":"user"})";
    auto service_id =
        create(catalog::Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
    auto model_id = create(catalog::Kind::mlmodel,
                           R"({"name":"churn","service":"mlflow","algorithm":"xgboost",)"
                           R"("description":"Who leaves","owners":[)" +
                               admin_ref +
                               R"(],"mlFeatures":[{"name":"tenure","dataType":"numerical"}],)"
                               R"("tags":[{"tagFQN":"PII.Sensitive"}],)"
                               R"("extension":{"team":"growth","c":{}}})");
    if (full) {
      create(catalog::Kind::team, R"({"name":"data","teamType":"Group"})");
      create(catalog::Kind::policy, R"({"name":"readers","rules":[{"name":"r","effect":"allow",)"
                                    R"("resources":["all"],"operations":["ViewAll"]}]})");
      create(catalog::Kind::glossary, R"({"name":"Business","description":"Business terms"})");
      create(catalog::Kind::glossary_term,
             R"({"glossary":"Business","name":"Revenue","description":"Money in"})");
      create(catalog::Kind::glossary_term, R"({"glossary":"Business","parent":"Business.Revenue",)"
                                           R"("name":"v1.0","description":"a dotted term"})");
      create(catalog::Kind::domain,
             R"({"name":"Sales","domainType":"Aggregate","description":"Selling"})");
      create(catalog::Kind::search_service,
             R"({"name":"elasticsearch","serviceType":"ElasticSearch"})");
      create(catalog::Kind::search_index, R"({"name":"customers","service":"elasticsearch",)"
                                          R"("fields":[{"name":"id","dataType":"KEYWORD"}]})");
    }
    return World{std::move(store), std::move(admin), std::move(bob), std::move(model_id),
                 std::move(service_id)};
  }
};

/// The number of change events so far: every committed change appends at least one
/// (docs/SEMANTICS.md §13), so an input that leaves it unchanged has changed nothing.
inline std::int64_t event_count(const World& world) {
  return must(world.store.events(world.admin, 0, 0), "count the events").total;
}

/// Store::verify() finds nothing wrong.
inline void verify_clean(const World& world) {
  auto problems = must(world.store.verify(), "verify");
  if (problems.empty()) return;
  std::string text;
  for (const auto& p : problems) text += p.key + ": " + p.message + "\n";
  fail("Store::verify() reports problems", text);
}

/// One World kept across inputs, built again after an input changed it.
class WorldCache {
 public:
  explicit WorldCache(bool full) : full_(full) {}
  World& get() {
    if (!world_) {
      world_ = std::make_unique<World>(World::make(full_));
      verify_clean(*world_);
      events_ = event_count(*world_);
    }
    return *world_;
  }
  /// Whether the catalog changed since it was built.
  bool changed() const { return world_ && event_count(*world_) != events_; }
  /// The next get() builds the catalog again.
  void reset() { world_.reset(); }

 private:
  bool full_;
  std::unique_ptr<World> world_;
  std::int64_t events_ = 0;
};

}  // namespace fuzz

#endif  // CATALOG_FUZZ_SUPPORT_HPP
