#ifndef CATALOG_IMPL_AUTH_JWT_IPP
#define CATALOG_IMPL_AUTH_JWT_IPP

#include <catalog/auth/jwt.hpp>

#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>

#include <boost/json/value.hpp>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <array>
#include <climits>
#include <mutex>
#include <unordered_map>
#include <cmath>
#include <limits>
#include <utility>

namespace catalog::auth {

// Named, not anonymous: JwtVerifier::Impl holds keys, and a header (this file is one, included
// by <catalog/src.hpp>) must not give a member a type of internal linkage.
namespace jwt_detail {
struct PkeyFree {
  void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
}  // namespace jwt_detail
using jwt_detail::PkeyPtr;

namespace {

struct BioFree {
  void operator()(BIO* p) const noexcept { BIO_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const noexcept { EVP_MD_CTX_free(p); }
};
struct DecoderCtxFree {
  void operator()(OSSL_DECODER_CTX* p) const noexcept { OSSL_DECODER_CTX_free(p); }
};

enum class Alg { hs256, rs256 };

constexpr std::size_t hs256_min_secret = 32;
constexpr std::size_t hs256_mac_size = 32;
constexpr int rs256_min_bits = 2048;
constexpr std::size_t max_pem_size = 1 << 20;

Error unauthenticated(std::string message) {
  return Error(Errc::unauthenticated, std::move(message));
}

Error invalid_option(std::string message) { return Error(Errc::invalid_value, std::move(message)); }

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Token text ends up in messages that reach clients and logs: echo a value only when it is
// short printable ASCII, else describe it.
std::string quoted(std::string_view s) {
  if (s.size() > 32) return "(long value)";
  for (char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return "(unprintable value)";
  }
  std::string out(1, '"');  // appended, not `"\"" + ...`: GCC 12 -Wrestrict false positive
  out += s;
  out += '"';
  return out;
}

// The PEM label of the first block: "PUBLIC KEY", "RSA PUBLIC KEY", ... or empty.
std::string_view first_pem_label(std::string_view pem) {
  constexpr std::string_view begin = "-----BEGIN ";
  auto at = pem.find(begin);
  if (at == std::string_view::npos) return {};
  auto rest = pem.substr(at + begin.size());
  auto end = rest.find("-----");
  if (end == std::string_view::npos) return {};
  return rest.substr(0, end);
}

int refuse_passphrase(char*, int, int, void*) { return 0; }

Result<PkeyPtr> load_rsa_public_key(std::string_view pem, std::size_t index) {
  std::string what = "RS256 key " + std::to_string(index);
  if (pem.size() > max_pem_size) return invalid_option(what + " is too large");
  auto label = first_pem_label(pem);
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return invalid_option(what + ": out of memory");
  PkeyPtr key;
  if (label == "PUBLIC KEY") {
    key.reset(PEM_read_bio_PUBKEY(bio.get(), nullptr, refuse_passphrase, nullptr));
  } else if (label == "RSA PUBLIC KEY") {
    EVP_PKEY* out = nullptr;
    std::unique_ptr<OSSL_DECODER_CTX, DecoderCtxFree> dctx(OSSL_DECODER_CTX_new_for_pkey(
        &out, "PEM", "type-specific", "RSA", OSSL_KEYMGMT_SELECT_PUBLIC_KEY, nullptr, nullptr));
    bool decoded = dctx && OSSL_DECODER_from_bio(dctx.get(), bio.get()) == 1;
    key.reset(out);  // owned whatever happened; only a success counts
    if (!decoded) key.reset();
  }
  ERR_clear_error();
  if (!key) {
    return invalid_option(what + " is not a PEM RSA public key (\"PUBLIC KEY\" or "
                                 "\"RSA PUBLIC KEY\")");
  }
  // Only plain RSA: an RSA-PSS key cannot verify PKCS#1 v1.5 signatures anyway.
  if (EVP_PKEY_is_a(key.get(), "RSA") != 1) return invalid_option(what + " is not an RSA key");
  if (EVP_PKEY_get_bits(key.get()) < rs256_min_bits) {
    return invalid_option(what + " has fewer than 2048 bits");
  }
  return key;
}

// A NumericDate claim reduced to whole seconds, saturated to the int64 range. Rounding goes the
// way that keeps the comparison exact for integer `now` (ceil for exp and nbf, floor for iat).
enum class Round { up, down };

std::optional<std::int64_t> numeric_date(const boost::json::value& v, Round round) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  if (auto p = v.if_int64()) return *p;
  if (auto p = v.if_uint64()) return *p > std::uint64_t(max) ? max : std::int64_t(*p);
  if (auto p = v.if_double()) {
    double d = *p;
    if (std::isnan(d)) return std::nullopt;
    d = round == Round::up ? std::ceil(d) : std::floor(d);
    // 2^63 is exactly representable; every double below it converts without overflow.
    if (d >= 9223372036854775808.0) return max;
    if (d < -9223372036854775808.0) return min;
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

// a + b and a - b for b >= 0, saturated instead of overflowing.
std::int64_t plus(std::int64_t a, std::int64_t b) noexcept {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}
std::int64_t minus(std::int64_t a, std::int64_t b) noexcept {
  return a < std::numeric_limits<std::int64_t>::min() + b ? std::numeric_limits<std::int64_t>::min()
                                                          : a - b;
}

Result<boost::json::object> parse_segment(std::string_view segment, std::string_view part) {
  auto bytes = detail::base64url_decode(segment, detail::Padding::none);
  if (!bytes) return unauthenticated("token " + std::string(part) + " is not valid base64url");
  auto parsed = json::parse(*bytes, json::ParseOptions{64});
  if (!parsed) {
    const Error& e = parsed.error();
    if (e.code() == Errc::duplicate_member) return unauthenticated("token has " + e.message());
    return unauthenticated("token " + std::string(part) + " is not valid JSON: " + e.message());
  }
  auto* object = parsed->if_object();
  if (!object) return unauthenticated("token " + std::string(part) + " is not a JSON object");
  return std::move(*object);
}

}  // namespace

struct JwtVerifier::Impl {
  struct HmacKey {
    std::string secret;
    std::optional<std::string> kid;
  };
  struct RsaKey {
    PkeyPtr key;
    std::optional<std::string> kid;
  };

  std::vector<HmacKey> hs256;
  std::vector<RsaKey> rs256;
  std::optional<std::string> issuer;
  std::optional<std::string> audience;
  bool allow_no_exp = false;
  std::int64_t leeway = 60;
  std::vector<std::string> principal_claims;
  std::size_t max_token_size = 8192;

  // The time claims of a token, as numbers (absent: nullopt).
  struct Times {
    std::optional<std::int64_t> exp, nbf, iat;
  };
  // Tokens that verified, with their principal and time claims. Everything verify checks but
  // the time is a function of the token's bytes and of this verifier's keys and options, which
  // never change: a token seen again needs only its times checked against the new `now`.
  // Bounded: tokens up to `cached_token_size` bytes, `cache_capacity` of them, all dropped when
  // full (a host's working set of tokens refills it at once; a flood of new ones keeps it small).
  struct Verified {
    std::string name;
    Times times;
  };
  static constexpr std::size_t cache_capacity = 1024;
  static constexpr std::size_t cached_token_size = 2048;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, Verified> cache;

  Result<void> check_header(const boost::json::object& header, Alg& alg,
                            std::optional<std::string_view>& kid) const;
  bool hs256_verifies(const std::string& secret, std::string_view input,
                      std::string_view mac) const;
  bool rs256_verifies(EVP_PKEY* key, std::string_view input, std::string_view sig) const;
  Result<void> check_signature(Alg alg, std::optional<std::string_view> kid, std::string_view input,
                               std::string_view sig) const;
  Result<Times> time_claims(const boost::json::object& claims) const;
  Result<void> check_times(const Times& times, std::int64_t now) const;
  Result<void> check_identity(const boost::json::object& claims) const;
  Result<std::string> principal(const boost::json::object& claims) const;
};

JwtVerifier::JwtVerifier(std::shared_ptr<const Impl> impl) noexcept : impl_(std::move(impl)) {}

Result<JwtVerifier> JwtVerifier::create(JwtOptions options) {
  auto impl = std::make_shared<Impl>();
  for (std::size_t i = 0; i < options.hs256_keys.size(); ++i) {
    auto& key = options.hs256_keys[i];
    std::string what = "HS256 key " + std::to_string(i);
    if (key.secret.size() < hs256_min_secret) {
      return invalid_option(what + " is shorter than 32 bytes");
    }
    if (key.secret.find("-----BEGIN") != std::string::npos) {
      return invalid_option(what + " is a PEM text, not a secret");
    }
    if (key.secret.size() > std::size_t(INT_MAX)) return invalid_option(what + " is too large");
    impl->hs256.push_back({std::move(key.secret), std::move(key.kid)});
  }
  for (std::size_t i = 0; i < options.rs256_keys.size(); ++i) {
    auto& key = options.rs256_keys[i];
    auto loaded = load_rsa_public_key(key.public_key_pem, i);
    if (!loaded) return loaded.error();
    impl->rs256.push_back({std::move(*loaded), std::move(key.kid)});
  }
  if (options.leeway_seconds < 0) return invalid_option("JWT leeway must not be negative");
  if (options.principal_claims.empty()) {
    return invalid_option("JWT principal claim list must not be empty");
  }
  impl->issuer = std::move(options.issuer);
  impl->audience = std::move(options.audience);
  impl->allow_no_exp = options.allow_no_exp;
  impl->leeway = options.leeway_seconds;
  impl->principal_claims = std::move(options.principal_claims);
  impl->max_token_size = options.max_token_size;
  return JwtVerifier(std::move(impl));
}

Result<void> JwtVerifier::Impl::check_header(const boost::json::object& header, Alg& alg,
                                             std::optional<std::string_view>& kid) const {
  auto* alg_value = header.if_contains("alg");
  if (!alg_value) return unauthenticated("token algorithm missing");
  auto* alg_name = alg_value->if_string();
  if (!alg_name) return unauthenticated("token algorithm must be a string");
  if (iequals(*alg_name, "none")) return unauthenticated("token algorithm none is not accepted");
  if (*alg_name == "HS256") {
    alg = Alg::hs256;
  } else if (*alg_name == "RS256") {
    alg = Alg::rs256;
  } else {
    return unauthenticated("token algorithm " + quoted(*alg_name) + " is not accepted");
  }
  // Keys carried or pointed to by the token are attacker-controlled: never trusted, and a
  // token that asks for them is refused rather than silently verified with another key.
  for (std::string_view name : {"jwk", "jku", "x5u", "x5c"}) {
    if (header.contains(name)) {
      return unauthenticated("token header " + std::string(name) + " is not accepted");
    }
  }
  if (header.contains("crit")) return unauthenticated("token header crit is not supported");
  if (auto* typ = header.if_contains("typ")) {
    auto* s = typ->if_string();
    if (!s) return unauthenticated("token type must be a string");
    if (!iequals(*s, "JWT")) return unauthenticated("token type " + quoted(*s) + " is not JWT");
  }
  if (auto* k = header.if_contains("kid")) {
    auto* s = k->if_string();
    if (!s) return unauthenticated("token key id must be a string");
    kid = std::string_view(*s);
  }
  return {};
}

bool JwtVerifier::Impl::hs256_verifies(const std::string& secret, std::string_view input,
                                       std::string_view mac) const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> expected{};
  unsigned int size = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(input.data()), input.size(), expected.data(),
            &size)) {
    ERR_clear_error();
    return false;
  }
  return size == hs256_mac_size && mac.size() == hs256_mac_size &&
         CRYPTO_memcmp(expected.data(), mac.data(), hs256_mac_size) == 0;
}

bool JwtVerifier::Impl::rs256_verifies(EVP_PKEY* key, std::string_view input,
                                       std::string_view sig) const {
  if (sig.size() != static_cast<std::size_t>(EVP_PKEY_get_size(key))) return false;
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;  // owned by ctx
  bool ok =
      ctx &&
      EVP_DigestVerifyInit_ex(ctx.get(), &pctx, "SHA256", nullptr, nullptr, key, nullptr) == 1 &&
      EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1 &&
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  // A failed verification leaves entries on this thread's error queue; drop them.
  if (!ok) ERR_clear_error();
  return ok;
}

Result<void> JwtVerifier::Impl::check_signature(Alg alg, std::optional<std::string_view> kid,
                                                std::string_view input,
                                                std::string_view sig) const {
  // With a kid only the keys of that kid are candidates; each is pinned to its algorithm, so
  // a kid naming a key of the other algorithm refuses the token.
  bool kid_known = false;
  bool tried = false;
  bool verified = false;
  auto selected = [&](const std::optional<std::string>& key_kid) {
    if (!kid) return true;
    if (!key_kid || *key_kid != *kid) return false;
    kid_known = true;
    return true;
  };
  for (const auto& key : hs256) {
    if (!selected(key.kid) || alg != Alg::hs256) continue;
    tried = true;
    if (hs256_verifies(key.secret, input, sig)) verified = true;
  }
  for (const auto& key : rs256) {
    if (!selected(key.kid) || alg != Alg::rs256) continue;
    tried = true;
    if (!verified && rs256_verifies(key.key.get(), input, sig)) verified = true;
  }
  if (kid && !kid_known) return unauthenticated("token key id " + quoted(*kid) + " is unknown");
  if (!tried) {
    std::string name = alg == Alg::hs256 ? "HS256" : "RS256";
    if (kid) return unauthenticated("token key id " + quoted(*kid) + " is not an " + name + " key");
    return unauthenticated("token algorithm " + name + " has no configured key");
  }
  if (!verified) return unauthenticated("token signature invalid");
  return {};
}

Result<JwtVerifier::Impl::Times> JwtVerifier::Impl::time_claims(
    const boost::json::object& claims) const {
  auto date = [&](std::string_view name, Round round) -> Result<std::optional<std::int64_t>> {
    auto* v = claims.if_contains(name);
    if (!v) return std::optional<std::int64_t>();
    auto d = numeric_date(*v, round);
    if (!d) return unauthenticated("token " + std::string(name) + " must be a number");
    return d;
  };
  auto exp = date("exp", Round::up);
  if (!exp) return exp.error();
  auto nbf = date("nbf", Round::up);
  if (!nbf) return nbf.error();
  auto iat = date("iat", Round::down);
  if (!iat) return iat.error();
  return Times{*exp, *nbf, *iat};
}

Result<void> JwtVerifier::Impl::check_times(const Times& times, std::int64_t now) const {
  if (!times.exp) {
    if (!allow_no_exp) return unauthenticated("token has no exp");
  } else if (now >= plus(*times.exp, leeway)) {
    return unauthenticated("token expired");
  }
  if (times.nbf && now < minus(*times.nbf, leeway)) return unauthenticated("token not yet valid");
  if (times.iat && *times.iat > plus(now, leeway))
    return unauthenticated("token issued in the future");
  return {};
}

Result<void> JwtVerifier::Impl::check_identity(const boost::json::object& claims) const {
  if (issuer) {
    auto* iss = claims.if_contains("iss");
    if (!iss) return unauthenticated("token issuer missing");
    auto* s = iss->if_string();
    if (!s || *s != *issuer) return unauthenticated("token issuer mismatch");
  }
  if (audience) {
    auto* aud = claims.if_contains("aud");
    if (!aud) return unauthenticated("token audience missing");
    bool found = false;
    if (auto* s = aud->if_string()) {
      found = *s == *audience;
    } else if (auto* a = aud->if_array()) {
      for (const auto& element : *a) {
        auto* e = element.if_string();
        if (!e) return unauthenticated("token audience must be a string or an array of strings");
        if (*e == *audience) found = true;
      }
    } else {
      return unauthenticated("token audience must be a string or an array of strings");
    }
    if (!found) return unauthenticated("token audience mismatch");
  }
  return {};
}

Result<std::string> JwtVerifier::Impl::principal(const boost::json::object& claims) const {
  for (const auto& name : principal_claims) {
    auto* v = claims.if_contains(name);
    if (!v) continue;
    auto* s = v->if_string();
    if (!s || s->empty()) continue;
    std::string_view value(*s);
    if (name == "email") {
      auto user = value.substr(0, value.find('@'));
      if (user.empty()) return unauthenticated("token email has no user name");
      return std::string(user);
    }
    return std::string(value);
  }
  return unauthenticated("token has no principal claim");
}

Result<std::string> JwtVerifier::verify(std::string_view token, std::int64_t now) const {
  const Impl& impl = *impl_;
  if (token.size() > impl.max_token_size) return unauthenticated("token is too large");
  if (impl.hs256.empty() && impl.rs256.empty()) {
    return unauthenticated("token refused: no key is configured");
  }
  if (token.empty()) return unauthenticated("token is empty");
  if (token.size() <= Impl::cached_token_size) {
    std::lock_guard lock(impl.cache_mutex);
    if (auto it = impl.cache.find(std::string(token)); it != impl.cache.end()) {
      if (auto checked = impl.check_times(it->second.times, now); !checked) return checked.error();
      return it->second.name;
    }
  }

  auto first = token.find('.');
  auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return unauthenticated("token must have 3 segments");
  }
  auto header_text = token.substr(0, first);
  auto payload_text = token.substr(first + 1, second - first - 1);
  auto signature_text = token.substr(second + 1);
  auto signing_input = token.substr(0, second);

  auto header = parse_segment(header_text, "header");
  if (!header) return header.error();
  Alg alg{};
  std::optional<std::string_view> kid;
  if (auto checked = impl.check_header(*header, alg, kid); !checked) return checked.error();

  if (signature_text.empty()) return unauthenticated("token signature missing");
  auto signature = detail::base64url_decode(signature_text, detail::Padding::none);
  if (!signature) return unauthenticated("token signature is not valid base64url");
  if (auto checked = impl.check_signature(alg, kid, signing_input, *signature); !checked) {
    return checked.error();
  }

  // Only an authentic payload is parsed.
  auto claims = parse_segment(payload_text, "payload");
  if (!claims) return claims.error();
  auto times = impl.time_claims(*claims);
  if (!times) return times.error();
  if (auto checked = impl.check_times(*times, now); !checked) return checked.error();
  if (auto checked = impl.check_identity(*claims); !checked) return checked.error();
  auto name = impl.principal(*claims);
  if (!name || token.size() > Impl::cached_token_size) return name;
  std::lock_guard lock(impl.cache_mutex);
  if (impl.cache.size() >= Impl::cache_capacity) impl.cache.clear();
  impl.cache.insert_or_assign(std::string(token), Impl::Verified{*name, *times});
  return name;
}

}  // namespace catalog::auth

#endif  // CATALOG_IMPL_AUTH_JWT_IPP
