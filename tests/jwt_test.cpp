// JWT verification (docs/SEMANTICS.md §11): the RFC 7515/7519 examples, one test per attack family
// of shared/vectors/jwt-rfc-examples.md, the options, and a seeded fuzz test. Tokens are built
// here and signed with OpenSSL directly, so the verifier is checked against an independent
// signer.
#include <catalog/auth/jwt.hpp>

#include <catch2/catch.hpp>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/encoder.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using catalog::Errc;
using catalog::ErrorKind;
using catalog::auth::Hs256Key;
using catalog::auth::JwtOptions;
using catalog::auth::JwtVerifier;
using catalog::auth::Rs256Key;

// ---------------------------------------------------------------------------------------------
// An independent base64url codec (the test does not trust the library's to build its inputs).

constexpr std::string_view url_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string b64url(std::string_view bytes) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += url_alphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += url_alphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

// Lenient: ignores the unused trailing bits, the way a careless verifier would.
std::string b64url_decode_lenient(std::string_view text) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    auto at = url_alphabet.find(c);
    if (at == std::string_view::npos) throw std::invalid_argument("not base64url");
    acc = (acc << 6) | std::uint32_t(at);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xff);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// OpenSSL helpers for the test's own signer.

struct PkeyFree {
  void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

std::string read_bio(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, std::size_t(size));
}

std::string hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int size = 0;
  static const unsigned char empty = 0;
  const void* key_data = key.empty() ? static_cast<const void*>(&empty) : key.data();
  if (!HMAC(md, key_data, int(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
            data.size(), mac.data(), &size)) {
    throw std::runtime_error("HMAC failed");
  }
  return std::string(reinterpret_cast<const char*>(mac.data()), size);
}

std::string rsa_sign(EVP_PKEY* key, std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx ||
      EVP_DigestSignInit_ex(ctx.get(), nullptr, "SHA256", nullptr, nullptr, key, nullptr) != 1) {
    throw std::runtime_error("DigestSignInit failed");
  }
  std::size_t size = 0;
  auto in = reinterpret_cast<const unsigned char*>(data.data());
  if (EVP_DigestSign(ctx.get(), nullptr, &size, in, data.size()) != 1) {
    throw std::runtime_error("DigestSign size failed");
  }
  std::string sig(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &size, in,
                     data.size()) != 1) {
    throw std::runtime_error("DigestSign failed");
  }
  sig.resize(size);
  return sig;
}

std::string spki_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (PEM_write_bio_PUBKEY(bio.get(), key) != 1) throw std::runtime_error("PEM_write failed");
  return read_bio(bio.get());
}

std::string pkcs1_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  std::unique_ptr<OSSL_ENCODER_CTX, decltype(&OSSL_ENCODER_CTX_free)> ectx(
      OSSL_ENCODER_CTX_new_for_pkey(key, OSSL_KEYMGMT_SELECT_PUBLIC_KEY, "PEM", "type-specific",
                                    nullptr),
      OSSL_ENCODER_CTX_free);
  if (!ectx || OSSL_ENCODER_to_bio(ectx.get(), bio.get()) != 1) {
    throw std::runtime_error("OSSL_ENCODER failed");
  }
  return read_bio(bio.get());
}

std::string private_pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw std::runtime_error("PEM_write_bio_PrivateKey failed");
  }
  return read_bio(bio.get());
}

// The test's RSA-2048 key pair, generated once per run.
struct RsaFixture {
  PkeyPtr key;
  std::string spki;
  std::string pkcs1;
};

const RsaFixture& rsa() {
  static const RsaFixture fixture = [] {
    RsaFixture f;
    f.key.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048}));
    if (!f.key) throw std::runtime_error("RSA keygen failed");
    f.spki = spki_pem(f.key.get());
    f.pkcs1 = pkcs1_pem(f.key.get());
    return f;
  }();
  return fixture;
}

// An RSA public key from its JWK members n and e (base64url big-endian integers).
PkeyPtr rsa_from_jwk(std::string_view n_b64, std::string_view e_b64) {
  std::string n = b64url_decode_lenient(n_b64);
  std::string e = b64url_decode_lenient(e_b64);
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn_n(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), int(n.size()), nullptr), BN_free);
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn_e(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), int(e.size()), nullptr), BN_free);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> bld(OSSL_PARAM_BLD_new(),
                                                                      OSSL_PARAM_BLD_free);
  if (!bn_n || !bn_e || !bld ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    throw std::runtime_error("OSSL_PARAM_BLD failed");
  }
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(bld.get()),
                                                                 OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    throw std::runtime_error("EVP_PKEY_fromdata failed");
  }
  return PkeyPtr(key);
}

// ---------------------------------------------------------------------------------------------
// Tokens and verifiers.

const std::string secret = "0123456789abcdef0123456789abcdef-test";  // 37 bytes
const std::string other_secret = "another secret of more than thirty-two bytes";
constexpr std::int64_t now = 1700000000;
constexpr std::int64_t later = now + 3600;

const std::string hs_header = R"({"alg":"HS256","typ":"JWT"})";
const std::string rs_header = R"({"alg":"RS256","typ":"JWT"})";

// A claims set valid at `now`, for alice, with `extra` members appended.
std::string claims(std::string_view extra = "") {
  return R"({"sub":"alice","exp":)" + std::to_string(later) + std::string(extra) + "}";
}

// Joins already-encoded segments and signs their bytes as received.
std::string sign_hs_encoded(const std::string& header_b64, const std::string& payload_b64,
                            std::string_view key = secret, const EVP_MD* md = EVP_sha256()) {
  std::string input = header_b64 + "." + payload_b64;
  return input + "." + b64url(hmac(md, key, input));
}

std::string hs_token(std::string_view header, std::string_view payload,
                     std::string_view key = secret) {
  return sign_hs_encoded(b64url(header), b64url(payload), key);
}

std::string rs_token(std::string_view header, std::string_view payload,
                     EVP_PKEY* key = rsa().key.get()) {
  std::string input = b64url(header) + "." + b64url(payload);
  return input + "." + b64url(rsa_sign(key, input));
}

JwtVerifier make(JwtOptions options) {
  auto v = JwtVerifier::create(std::move(options));
  REQUIRE(v.has_value());
  return *v;
}

JwtOptions hs_options() {
  JwtOptions o;
  o.hs256_keys.push_back({secret, std::nullopt});
  return o;
}

JwtOptions rs_options() {
  JwtOptions o;
  o.rs256_keys.push_back({rsa().spki, std::nullopt});
  return o;
}

JwtOptions both_options() {
  JwtOptions o = hs_options();
  o.rs256_keys.push_back({rsa().spki, std::nullopt});
  return o;
}

void require_refused(const JwtVerifier& v, std::string_view token, std::int64_t at,
                     std::string_view fragment = "") {
  INFO("token: " << token);
  auto r = v.verify(token, at);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::unauthenticated);
  CHECK(r.error().kind() == ErrorKind::unauthorized);
  if (!fragment.empty()) CHECK_THAT(r.error().message(), Catch::Contains(std::string(fragment)));
}

void require_accepted(const JwtVerifier& v, std::string_view token, std::int64_t at,
                      std::string_view user = "alice") {
  INFO("token: " << token);
  auto r = v.verify(token, at);
  if (!r) FAIL("refused: " << r.error().message());
  CHECK(*r == user);
}

void require_invalid_option(JwtOptions options, std::string_view fragment) {
  auto v = JwtVerifier::create(std::move(options));
  REQUIRE_FALSE(v.has_value());
  CHECK(v.error().code() == Errc::invalid_value);
  CHECK(v.error().kind() == ErrorKind::bad_request);
  CHECK_THAT(v.error().message(), Catch::Contains(std::string(fragment)));
}

// ---------------------------------------------------------------------------------------------
// RFC examples.

// clang-format off: the RFC values are split at fixed widths.
const std::string rfc_a1_key_jwk =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
const std::string rfc_a1_token =
    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVl"
    "fQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const std::string rfc_a2_n =
    "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-"
    "4qPCJrcS2mJPMEzP1Pt0Bm4d4Q"
    "lL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-"
    "bSf63kpaSHSXndS5z5rexMdbBY"
    "UsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-"
    "DWNm"
    "oudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";
const std::string rfc_a2_token =
    "eyJhbGciOiJSUzI1NiJ9."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVl"
    "fQ."
    "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5ju"
    "jGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_"
    "nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Q"
    "e7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-"
    "eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI"
    "8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";
const std::string rfc_6_1_unsecured =
    "eyJhbGciOiJub25lIn0."
    "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVl"
    "fQ.";
// clang-format on
constexpr std::int64_t rfc_exp = 1300819380;

}  // namespace

TEST_CASE("RFC 7515 A.1: the HS256 example verifies before exp and expires at exp + leeway") {
  JwtOptions o;
  o.hs256_keys.push_back({b64url_decode_lenient(rfc_a1_key_jwk), std::nullopt});
  o.principal_claims = {"iss"};
  auto v = make(o);
  REQUIRE(b64url_decode_lenient(rfc_a1_key_jwk).size() == 64);

  require_accepted(v, rfc_a1_token, rfc_exp - 3600, "joe");
  require_accepted(v, rfc_a1_token, rfc_exp + 60 - 1, "joe");  // inside the leeway
  require_refused(v, rfc_a1_token, rfc_exp + 60, "token expired");
  require_refused(v, rfc_a1_token, std::time(nullptr), "token expired");

  SECTION("without leeway it expires at exp itself (RFC 7519 4.1.4)") {
    o.leeway_seconds = 0;
    auto strict = make(o);
    require_accepted(strict, rfc_a1_token, rfc_exp - 1, "joe");
    require_refused(strict, rfc_a1_token, rfc_exp, "token expired");
  }
  SECTION("the example has no principal claim of the default list") {
    o.principal_claims = JwtOptions{}.principal_claims;
    require_refused(make(o), rfc_a1_token, rfc_exp - 1, "no principal");
  }
}

TEST_CASE("RFC 7515 A.2: the RS256 example verifies with its key as SPKI and as PKCS#1 PEM") {
  auto key = rsa_from_jwk(rfc_a2_n, "AQAB");
  std::string spki = spki_pem(key.get());
  std::string pkcs1 = pkcs1_pem(key.get());
  REQUIRE_THAT(spki, Catch::StartsWith("-----BEGIN PUBLIC KEY-----"));
  REQUIRE_THAT(pkcs1, Catch::StartsWith("-----BEGIN RSA PUBLIC KEY-----"));

  for (const auto& pem : {spki, pkcs1}) {
    JwtOptions o;
    o.rs256_keys.push_back({pem, std::nullopt});
    o.principal_claims = {"iss"};
    auto v = make(o);
    require_accepted(v, rfc_a2_token, rfc_exp - 1, "joe");
    require_refused(v, rfc_a2_token, rfc_exp + 60, "token expired");
    require_refused(v, rfc_a2_token, std::time(nullptr), "token expired");
    // The same token with one bit of the signature changed.
    std::string tampered = rfc_a2_token;
    tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
    require_refused(v, tampered, rfc_exp - 1, "signature invalid");
  }
}

TEST_CASE("RFC 7519 6.1: the unsecured example is refused") {
  JwtOptions o = both_options();
  o.principal_claims = {"iss"};
  require_refused(make(o), rfc_6_1_unsecured, rfc_exp - 1, "token algorithm none is not accepted");
}

TEST_CASE("a token made by the test's own signer verifies (controls)") {
  auto v = make(both_options());
  require_accepted(v, hs_token(hs_header, claims()), now);
  require_accepted(v, rs_token(rs_header, claims()), now);
  require_accepted(v, hs_token(R"({"alg":"HS256"})", claims()), now);
  require_accepted(make(rs_options()), rs_token(R"({"alg":"RS256"})", claims()), now);
  JwtOptions pkcs1;
  pkcs1.rs256_keys.push_back({rsa().pkcs1, std::nullopt});
  require_accepted(make(pkcs1), rs_token(rs_header, claims()), now);
}

TEST_CASE("family alg none: every spelling, with or without a signature, is refused") {
  auto v = make(both_options());
  for (std::string alg : {"none", "None", "NONE", "nOnE"}) {
    std::string header = R"({"alg":")" + alg + R"(","typ":"JWT"})";
    std::string unsigned_part = b64url(header) + "." + b64url(claims());
    require_refused(v, unsigned_part + ".", now, "none is not accepted");
    require_refused(v, hs_token(header, claims()), now, "none is not accepted");
  }
  // Two segments: no third at all.
  require_refused(v, b64url(R"({"alg":"none"})") + "." + b64url(claims()), now, "3 segments");
}

TEST_CASE("family alg confusion: HS256 signed with the RSA public key PEM is refused") {
  const std::string& spki = rsa().spki;
  REQUIRE(spki.back() == '\n');
  std::string spki_nonl = spki.substr(0, spki.size() - 1);
  std::vector<std::string> forged;
  for (const auto& pem : {spki, spki_nonl, rsa().pkcs1}) {
    forged.push_back(hs_token(hs_header, claims(), pem));
  }

  SECTION("verifier configured with the RS256 key only") {
    auto v = make(rs_options());
    for (const auto& t : forged) require_refused(v, t, now, "HS256 has no configured key");
    JwtOptions pkcs1;
    pkcs1.rs256_keys.push_back({rsa().pkcs1, std::nullopt});
    for (const auto& t : forged) require_refused(make(pkcs1), t, now);
  }
  SECTION("verifier configured with an HS256 secret and the RS256 key") {
    auto v = make(both_options());
    for (const auto& t : forged) require_refused(v, t, now, "token signature invalid");
  }
  SECTION("the token names the RSA key by kid") {
    JwtOptions o;
    o.hs256_keys.push_back({secret, std::string("hs")});
    o.rs256_keys.push_back({rsa().spki, std::string("rsa")});
    auto v = make(o);
    std::string header = R"({"alg":"HS256","kid":"rsa"})";
    for (const auto& pem : {spki, spki_nonl, rsa().pkcs1}) {
      require_refused(v, hs_token(header, claims(), pem), now, "not an HS256 key");
    }
  }
  SECTION("a PEM text is refused as an HS256 secret") {
    JwtOptions o;
    o.hs256_keys.push_back({rsa().spki, std::nullopt});
    require_invalid_option(o, "PEM");
  }
}

TEST_CASE("family algorithm not pinned: other, missing or empty alg is refused") {
  auto v = make(both_options());
  std::string p64 = b64url(claims());
  // HS512 with the configured secret: a valid MAC, but not the pinned algorithm.
  require_refused(v, sign_hs_encoded(b64url(R"({"alg":"HS512"})"), p64, secret, EVP_sha512()), now,
                  "not accepted");
  require_refused(v, hs_token(R"({"typ":"JWT"})", claims()), now, "algorithm missing");
  require_refused(v, hs_token(R"({"alg":""})", claims()), now, "not accepted");
  require_refused(v, hs_token(R"({"alg":"hs256"})", claims()), now, "not accepted");
  require_refused(v, hs_token(R"({"alg":null})", claims()), now, "must be a string");
  require_refused(v, hs_token(R"({"alg":["HS256"]})", claims()), now, "must be a string");
  require_refused(v, hs_token(R"({"alg":"HS256 "})", claims()), now, "not accepted");
  // Each key only verifies its own algorithm.
  require_refused(make(hs_options()), rs_token(rs_header, claims()), now,
                  "RS256 has no configured key");
  require_refused(make(rs_options()), hs_token(hs_header, claims()), now,
                  "HS256 has no configured key");
  // An RS256 header over an HMAC made with the shared secret.
  require_refused(v, hs_token(rs_header, claims()), now, "signature invalid");
}

TEST_CASE("family expiry and time claims") {
  auto v = make(hs_options());
  auto with = [](std::string_view payload) { return hs_token(hs_header, payload); };

  SECTION("exp") {
    std::string t = with(claims());
    require_accepted(v, t, later + 59);
    require_refused(v, t, later + 60, "token expired");
    require_refused(v, with(R"({"sub":"alice"})"), now, "no exp");
    require_refused(v, with(R"({"sub":"alice","exp":"1700003600"})"), now, "exp must be a number");
    require_refused(v, with(R"({"sub":"alice","exp":null})"), now, "exp must be a number");
    require_refused(v, with(R"({"sub":"alice","exp":true})"), now, "exp must be a number");
    require_refused(v, with(R"({"sub":"alice","exp":[1700003600]})"), now, "must be a number");
    // Fractional, huge and negative NumericDates, without overflow.
    require_accepted(v, with(R"({"sub":"alice","exp":1700000000.5})"), now - 60);
    require_accepted(v, with(R"({"sub":"alice","exp":1699999940.5})"), now);
    require_refused(v, with(R"({"sub":"alice","exp":1699999939.5})"), now, "expired");
    require_accepted(v, with(R"({"sub":"alice","exp":9223372036854775807})"), now);
    require_accepted(v, with(R"({"sub":"alice","exp":18446744073709551615})"), now);
    require_accepted(v, with(R"({"sub":"alice","exp":1e300})"), now);
    require_refused(v, with(R"({"sub":"alice","exp":-1e300})"), now, "expired");
    require_refused(v, with(R"({"sub":"alice","exp":-9223372036854775808})"), now, "expired");
    require_accepted(v, with(claims()), std::numeric_limits<std::int64_t>::min());
    require_refused(v, with(claims()), std::numeric_limits<std::int64_t>::max(), "expired");
  }
  SECTION("missing exp with allow_no_exp") {
    JwtOptions o = hs_options();
    o.allow_no_exp = true;
    auto lax = make(o);
    require_accepted(lax, with(R"({"sub":"alice"})"), now);
    require_refused(lax, with(R"({"sub":"alice","exp":null})"), now, "exp must be a number");
  }
  SECTION("nbf") {
    require_accepted(v, with(claims(R"(,"nbf":1700000000)")), now);  // nbf == now
    require_accepted(v, with(claims(R"(,"nbf":1700000060)")), now);  // inside the leeway
    require_refused(v, with(claims(R"(,"nbf":1700000061)")), now, "not yet valid");
    require_refused(v, with(claims(R"(,"nbf":1800000000)")), now, "not yet valid");
    require_refused(v, with(claims(R"(,"nbf":"1600000000")")), now, "nbf must be a number");
    require_refused(v, with(claims(R"(,"nbf":null)")), now, "nbf must be a number");
    require_accepted(v, with(claims(R"(,"nbf":-9223372036854775808)")), now);
    require_accepted(v, with(claims(R"(,"nbf":-1e300)")), now);
  }
  SECTION("iat") {
    require_accepted(v, with(claims(R"(,"iat":1700000000)")), now);
    require_accepted(v, with(claims(R"(,"iat":1700000060)")), now);  // inside the leeway
    require_refused(v, with(claims(R"(,"iat":1700000061)")), now, "issued in the future");
    require_refused(v, with(claims(R"(,"iat":1900000000)")), now, "issued in the future");
    require_refused(v, with(claims(R"(,"iat":"1700000000")")), now, "iat must be a number");
    require_refused(v, with(claims(R"(,"iat":1e300)")), now, "issued in the future");
    require_accepted(v, with(claims(R"(,"iat":-1e300)")), now);
    require_accepted(v, with(R"({"sub":"alice","exp":9223372036854775807,"iat":1})"),
                     std::numeric_limits<std::int64_t>::max() - 1);
  }
  SECTION("custom leeway") {
    JwtOptions o = hs_options();
    o.leeway_seconds = 0;
    auto strict = make(o);
    require_refused(strict, with(claims()), later, "expired");
    require_refused(strict, with(claims(R"(,"nbf":1700000001)")), now, "not yet valid");
    require_refused(strict, with(claims(R"(,"iat":1700000001)")), now, "issued in the future");
    require_accepted(strict, with(claims(R"(,"nbf":1700000000,"iat":1700000000)")), now);
  }
}

TEST_CASE("a token seen again: only its times are checked again, against the new now") {
  // The verifier remembers tokens that verified; every time claim must still be checked on each
  // use, in the same order and with the same words as the first time.
  auto v = make(hs_options());
  const std::string t =
      hs_token(hs_header, claims(R"(,"nbf":1700000000,"iat":1700000000)"));  // exp: later
  require_accepted(v, t, now);
  require_accepted(v, t, now);                                    // remembered
  require_refused(v, t, later + 60, "token expired");             // exp, from the memory
  require_refused(v, t, now - 61, "token not yet valid");         // nbf, clock set back
  require_accepted(v, t, now - 60);                               // inside the leeway
  require_accepted(v, t, later + 59);

  SECTION("a token that was refused is not remembered as accepted") {
    const std::string early = hs_token(hs_header, claims(R"(,"nbf":1700001000)"));
    require_refused(v, early, now, "not yet valid");
    require_accepted(v, early, now + 1000);
  }
  SECTION("other bytes are another token: a changed signature is checked") {
    std::string tampered = t;
    tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
    require_refused(v, tampered, now, "signature");
    require_accepted(v, t, now);
  }
  SECTION("past its capacity the memory starts again, and every token still verifies") {
    for (int i = 0; i < 1100; ++i)
      require_accepted(v, hs_token(hs_header, claims(",\"jti\":" + std::to_string(i))), now);
    require_accepted(v, t, now);
    require_refused(v, t, later + 60, "token expired");
  }
  SECTION("a token larger than the memory takes is verified in full every time") {
    const std::string big = hs_token(hs_header, claims(R"(,"pad":")" + std::string(3000, 'x') + "\""));
    require_accepted(v, big, now);
    require_accepted(v, big, now);
    require_refused(v, big, later + 60, "token expired");
  }
  SECTION("copies share what was verified, and their options") {
    JwtOptions o = hs_options();
    o.leeway_seconds = 0;
    auto strict = make(o);
    require_accepted(strict, t, now);
    auto copy = strict;
    require_refused(copy, t, later, "token expired");  // the strict leeway, not the default
    require_accepted(v, t, later);                     // another verifier: its own leeway
  }
}

TEST_CASE("family iss and aud") {
  JwtOptions o = hs_options();
  o.issuer = "https://idp.example";
  o.audience = "catalog";
  auto v = make(o);
  auto with = [](std::string_view extra) { return hs_token(hs_header, claims(extra)); };
  std::string iss = R"(,"iss":"https://idp.example")";

  require_accepted(v, with(iss + R"(,"aud":"catalog")"), now);
  require_accepted(v, with(iss + R"(,"aud":["other","catalog"])"), now);  // aud_array_contains
  require_refused(v, with(R"(,"iss":"https://evil.example","aud":"catalog")"), now,
                  "token issuer mismatch");
  require_refused(v, with(R"(,"iss":"https://idp.example/","aud":"catalog")"), now,
                  "issuer mismatch");
  require_refused(v, with(R"(,"iss":5,"aud":"catalog")"), now, "issuer mismatch");
  require_refused(v, with(R"(,"aud":"catalog")"), now, "issuer missing");
  require_refused(v, with(iss + R"(,"aud":"other")"), now, "audience mismatch");
  require_refused(v, with(iss + R"(,"aud":"Catalog")"), now, "audience mismatch");
  require_refused(v, with(iss), now, "audience missing");
  require_refused(v, with(iss + R"(,"aud":["other","again"])"), now, "audience mismatch");
  require_refused(v, with(iss + R"(,"aud":[])"), now, "audience mismatch");
  require_refused(v, with(iss + R"(,"aud":["catalog",5])"), now, "array of strings");
  require_refused(v, with(iss + R"(,"aud":5)"), now, "array of strings");
  require_refused(v, with(iss + R"(,"aud":{"catalog":true})"), now, "array of strings");

  // Not configured: not checked.
  require_accepted(make(hs_options()), with(R"(,"iss":"anyone","aud":5)"), now);
}

TEST_CASE("family signature stripping and tampering") {
  auto v = make(both_options());
  std::string t = hs_token(hs_header, claims());
  std::string unsigned_part = t.substr(0, t.rfind('.'));

  require_refused(v, unsigned_part + ".", now, "signature missing");  // sig_stripped
  {
    std::string tampered = t;  // sig_tampered
    char& c = tampered[tampered.size() - 10];
    c = c == 'A' ? 'B' : 'A';
    require_refused(v, tampered, now, "signature invalid");
  }
  {
    // payload_tampered: alice's signature on a claims set naming admin.
    std::string admin = R"({"sub":"admin","exp":)" + std::to_string(later) + "}";
    std::string forged = b64url(hs_header) + "." + b64url(admin) + t.substr(t.rfind('.'));
    require_refused(v, forged, now, "signature invalid");
  }
  require_refused(v, hs_token(hs_header, claims(), other_secret), now, "signature invalid");
  require_refused(v, hs_token(hs_header, claims(), ""), now, "signature invalid");  // empty key
  {
    // header_whitespace_reencoded: same JSON meaning, other bytes: the MAC covers the bytes.
    std::string spaced = b64url(R"({"alg": "HS256", "typ": "JWT"})");
    require_refused(v, spaced + t.substr(t.find('.')), now, "signature invalid");
  }
  // Truncated or extended MACs.
  require_refused(v, t.substr(0, t.size() - 2), now);
  require_refused(v, t + "AAAA", now, "signature invalid");

  SECTION("RS256") {
    std::string r = rs_token(rs_header, claims());
    std::string tampered = r;
    char& c = tampered[tampered.size() - 20];
    c = c == 'A' ? 'B' : 'A';
    require_refused(v, tampered, now, "signature invalid");
    require_refused(v, r.substr(0, r.size() - 4), now);
    require_refused(v, r.substr(0, r.rfind('.') + 1), now, "signature missing");
    // sig_other_key: signed by our key, verified against the RFC key.
    auto rfc_key = rsa_from_jwk(rfc_a2_n, "AQAB");
    JwtOptions o;
    o.rs256_keys.push_back({spki_pem(rfc_key.get()), std::nullopt});
    require_refused(make(o), r, now, "signature invalid");
  }
}

TEST_CASE("family base64url strictness") {
  auto v = make(both_options());

  SECTION("noncanonical trailing bits of the signature decode to the same bytes, and are refused") {
    for (std::string t : {hs_token(hs_header, claims()), rs_token(rs_header, claims())}) {
      std::string sig = t.substr(t.rfind('.') + 1);
      std::string odd = sig;
      auto last = url_alphabet.find(odd.back());
      odd.back() = url_alphabet[last | 1];  // an unused trailing bit set (2 or 4 unused bits)
      REQUIRE(odd != sig);
      REQUIRE(b64url_decode_lenient(odd) == b64url_decode_lenient(sig));
      std::string forged = t.substr(0, t.rfind('.') + 1) + odd;
      require_accepted(v, t, now);
      require_refused(v, forged, now, "signature is not valid base64url");
    }
  }
  SECTION("noncanonical trailing bits in a signed header or payload") {
    std::string h64 = b64url(hs_header);  // 27 bytes: 36 characters, no unused bits
    std::string p = claims(R"(,"x":"1")");
    std::string p64 = b64url(p);
    REQUIRE(p.size() % 3 != 0);
    p64.back() = url_alphabet[url_alphabet.find(p64.back()) | 1];
    require_refused(v, sign_hs_encoded(h64, p64), now, "payload is not valid base64url");
    std::string h2 = R"({"alg":"HS256"})" + std::string(" ");  // 16 bytes: 4 unused bits
    std::string h2_64 = b64url(h2);
    h2_64.back() = url_alphabet[url_alphabet.find(h2_64.back()) | 1];
    require_refused(v, sign_hs_encoded(h2_64, b64url(claims())), now,
                    "header is not valid base64url");
  }
  SECTION("padding, even with a MAC over the padded bytes") {
    std::string t = hs_token(hs_header, claims());
    REQUIRE(t.size() - t.rfind('.') - 1 == 43);
    require_refused(v, t + "=", now, "signature is not valid base64url");  // sig_with_padding
    // 15 bytes plus a space: 16 bytes, 22 characters, padded to 24.
    std::string h = R"({"alg":"HS256"})" + std::string(" ");
    std::string padded = b64url(h) + "==";
    require_refused(v, sign_hs_encoded(padded, b64url(claims())), now,
                    "header is not valid base64url");
    std::string p = claims(R"(,"x":"1")");
    std::string p64 = b64url(p);
    while (p64.size() % 4 != 0) p64 += '=';
    require_refused(v, sign_hs_encoded(b64url(hs_header), p64), now,
                    "payload is not valid base64url");
  }
  SECTION("the standard alphabet, even with a MAC over those bytes") {
    // ASCII text reaches '-' (111110) only through '~' (0x7e) as the last byte of a group of
    // three: among three '~' one is.
    std::string p64 = b64url(claims(R"(,"m":"~~~")"));
    REQUIRE(p64.find_first_of("-_") != std::string::npos);
    std::string std64 = p64;
    for (char& c : std64) c = c == '-' ? '+' : c == '_' ? '/' : c;
    require_accepted(v, sign_hs_encoded(b64url(hs_header), p64), now);
    require_refused(v, sign_hs_encoded(b64url(hs_header), std64), now,
                    "payload is not valid base64url");
    // A signature in the standard alphabet.
    for (int i = 0;; ++i) {
      std::string t = hs_token(hs_header, claims(R"(,"n":)" + std::to_string(i)));
      std::string sig = t.substr(t.rfind('.') + 1);
      if (sig.find_first_of("-_") == std::string::npos) continue;
      for (char& c : sig) c = c == '-' ? '+' : c == '_' ? '/' : c;
      require_refused(v, t.substr(0, t.rfind('.') + 1) + sig, now,
                      "signature is not valid base64url");
      break;
    }
  }
  SECTION("whitespace and a Bearer prefix") {
    std::string t = hs_token(hs_header, claims());
    require_refused(v, " " + t, now, "header is not valid base64url");
    require_refused(v, t + " ", now, "signature is not valid base64url");
    require_refused(v, t + "\n", now, "signature is not valid base64url");
    require_refused(v, "\t" + t + "\r\n", now);
    std::string inner = t;
    inner.insert(inner.find('.') + 5, " ");
    require_refused(v, inner, now, "signature invalid");  // the MAC is checked first
    require_refused(v, "Bearer " + t, now, "header is not valid base64url");
  }
}

TEST_CASE("family structure") {
  auto v = make(both_options());
  std::string t = hs_token(hs_header, claims());
  auto signed_payload = [](std::string_view payload) { return hs_token(hs_header, payload); };

  require_refused(v, "", now, "token is empty");
  require_refused(v, ".", now, "3 segments");
  require_refused(v, "..", now, "header is not valid");
  require_refused(v, "...", now, "3 segments");
  require_refused(v, "abc", now, "3 segments");
  require_refused(v, t + ".", now, "3 segments");  // trailing_dot
  require_refused(v, "." + t, now, "3 segments");
  require_refused(v, t + "." + t.substr(t.rfind('.') + 1) + ".x", now, "3 segments");
  // five_segments_jwe_shape
  require_refused(v, b64url(R"({"alg":"RSA1_5","enc":"A128CBC-HS256"})") + ".a.b.c.d", now,
                  "3 segments");

  require_refused(v, signed_payload("[1,2]"), now, "payload is not a JSON object");
  require_refused(v, signed_payload(R"("alice")"), now, "payload is not a JSON object");
  require_refused(v, signed_payload("1700003600"), now, "payload is not a JSON object");
  require_refused(v, signed_payload("null"), now, "payload is not a JSON object");
  require_refused(v, signed_payload("not json"), now, "payload is not valid JSON");
  require_refused(v, signed_payload(""), now, "payload is not valid JSON");
  require_refused(v, signed_payload(claims() + "x"), now, "payload is not valid JSON");
  require_refused(v, signed_payload(claims() + "{}"), now, "payload is not valid JSON");
  require_refused(v, signed_payload("\xEF\xBB\xBF" + claims()), now, "payload is not valid JSON");
  require_refused(v,
                  signed_payload(R"({"sub":"al)"
                                 "\xff"
                                 R"(ice","exp":1700003600})"),
                  now, "payload is not valid JSON");
  require_refused(v,
                  signed_payload(R"({"sub":"al)"
                                 "\xc0\xaf"
                                 R"(ice","exp":1700003600})"),
                  now, "payload is not valid JSON");
  require_refused(v, signed_payload(R"({"sub":"\ud800","exp":1700003600})"), now,
                  "payload is not valid JSON");
  require_accepted(v, signed_payload(claims() + " \r\n\t"), now);  // JSON whitespace is fine

  require_refused(v, hs_token(R"(["HS256"])", claims()), now, "header is not a JSON object");
  require_refused(v, hs_token(R"("HS256")", claims()), now, "header is not a JSON object");
  require_refused(v, hs_token("HS256", claims()), now, "header is not valid JSON");
  require_refused(v, hs_token(hs_header + "x", claims()), now, "header is not valid JSON");
  require_refused(v, hs_token("\xEF\xBB\xBF" + hs_header, claims()), now,
                  "header is not valid JSON");
  require_refused(v,
                  hs_token(R"({"alg":"HS256","typ":"J)"
                           "\xff"
                           R"("})",
                           claims()),
                  now, "header is not valid JSON");

  SECTION("nesting depth is limited, never a stack overflow") {
    JwtOptions o = hs_options();
    o.max_token_size = 1 << 22;
    auto big = make(o);
    auto nested = [](int depth) {
      return claims(R"(,"x":)" + std::string(std::size_t(depth), '[') +
                    std::string(std::size_t(depth), ']'));
    };
    require_accepted(big, signed_payload(nested(20)), now);
    require_refused(big, signed_payload(nested(100)), now, "payload is not valid JSON");
    require_refused(big, signed_payload(nested(1000000)), now, "payload is not valid JSON");
    require_refused(big,
                    hs_token("{\"alg\":\"HS256\",\"x\":" + std::string(100000, '[') +
                                 std::string(100000, ']') + "}",
                             claims()),
                    now, "header is not valid JSON");
  }
}

TEST_CASE("family header key injection: jwk, jku, x5u, x5c are never followed") {
  auto v = make(both_options());
  // An attacker's own key embedded in the header, and the token signed with it.
  std::string attacker = "attacker secret of at least 32 bytes!!";
  std::string jwk_header =
      R"({"alg":"HS256","jwk":{"kty":"oct","k":")" + b64url(attacker) + R"("}})";
  require_refused(v, hs_token(jwk_header, claims(), attacker), now, "jwk is not accepted");
  // Even signed with the configured key, a token asking for a foreign key is refused.
  require_refused(v, hs_token(jwk_header, claims()), now, "jwk is not accepted");
  require_refused(
      v, hs_token(R"({"alg":"HS256","jku":"https://attacker.example/jwks.json"})", claims()), now,
      "jku is not accepted");
  require_refused(
      v, hs_token(R"({"alg":"HS256","x5u":"https://attacker.example/cert.pem"})", claims()), now,
      "x5u is not accepted");
  require_refused(v, hs_token(R"({"alg":"HS256","x5c":["MIIB"]})", claims()), now,
                  "x5c is not accepted");
  require_refused(v, rs_token(R"({"alg":"RS256","jku":"http://169.254.169.254/"})", claims()), now,
                  "jku is not accepted");
}

TEST_CASE("family kid: selects among configured keys only") {
  JwtOptions o;
  o.hs256_keys.push_back({secret, std::string("hs1")});
  o.hs256_keys.push_back({other_secret, std::string("hs2")});
  o.rs256_keys.push_back({rsa().spki, std::string("rs1")});
  auto v = make(o);
  auto header = [](std::string_view alg, std::string_view kid) {
    return R"({"alg":")" + std::string(alg) + R"(","kid":)" + std::string(kid) + "}";
  };

  require_accepted(v, hs_token(header("HS256", R"("hs1")"), claims()), now);
  require_accepted(v, hs_token(header("HS256", R"("hs2")"), claims(), other_secret), now);
  require_accepted(v, rs_token(header("RS256", R"("rs1")"), claims()), now);
  // Without kid every key of the token's algorithm is tried.
  require_accepted(v, hs_token(hs_header, claims(), other_secret), now);
  require_accepted(v, rs_token(rs_header, claims()), now);
  // The kid pins the key: the other configured secret does not verify.
  require_refused(v, hs_token(header("HS256", R"("hs2")"), claims()), now, "signature invalid");
  require_refused(v, hs_token(header("HS256", R"("hs3")"), claims()), now, "is unknown");
  require_refused(v, hs_token(header("HS256", R"("HS1")"), claims()), now, "is unknown");
  require_refused(v, hs_token(header("HS256", R"("")"), claims()), now, "is unknown");
  require_refused(v, hs_token(header("HS256", "1"), claims()), now, "key id must be a string");
  require_refused(v, hs_token(header("HS256", "null"), claims()), now, "key id must be a string");
  // kid_path_traversal_empty_key: a MAC with the empty key (the contents of /dev/null).
  require_refused(v, hs_token(header("HS256", R"("../../../../../../dev/null")"), claims(), ""),
                  now, "is unknown");
  // kid_sql_injection, signed with a configured secret.
  require_refused(v, hs_token(header("HS256", R"("x' UNION SELECT 'key' --")"), claims()), now,
                  "is unknown");
  // A kid naming a key of the other algorithm.
  require_refused(v, hs_token(header("HS256", R"("rs1")"), claims(), rsa().spki), now,
                  "not an HS256 key");
  require_refused(v, rs_token(header("RS256", R"("hs1")"), claims()), now, "not an RS256 key");

  SECTION("a token with kid does not select keys configured without one") {
    auto plain = make(hs_options());
    require_refused(plain, hs_token(header("HS256", R"("hs1")"), claims()), now, "is unknown");
  }
}

TEST_CASE("family duplicate members: the parser differential is refused") {
  auto v = make(both_options());
  std::string dup_sub = R"({"sub":"alice","sub":"admin","exp":)" + std::to_string(later) + "}";
  require_refused(v, hs_token(hs_header, dup_sub), now, "token has duplicate member");
  require_refused(v, hs_token(hs_header, dup_sub), now, "\"sub\"");
  require_refused(v, hs_token(R"({"alg":"none","alg":"HS256"})", claims()), now,
                  "token has duplicate member");
  require_refused(v, hs_token(R"({"alg":"HS256","alg":"none"})", claims()), now,
                  "token has duplicate member");
  require_refused(v, hs_token(R"({"alg":"HS256","alg":"HS256"})", claims()), now,
                  "token has duplicate member");
  std::string nested = claims(R"(,"x":{"a":1,"a":2})");
  require_refused(v, hs_token(hs_header, nested), now, "token has duplicate member");
}

TEST_CASE("family crit: no extension is understood") {
  auto v = make(both_options());
  require_refused(v, hs_token(R"({"alg":"HS256","crit":["exp"],"exp":1})", claims()), now,
                  "crit is not supported");
  require_refused(v, hs_token(R"({"alg":"HS256","crit":["b64"],"b64":false})", claims()), now,
                  "crit is not supported");
  require_refused(v, hs_token(R"({"alg":"HS256","crit":[]})", claims()), now,
                  "crit is not supported");
}

TEST_CASE("policy: typ, iat far in the future, oversized tokens") {
  auto v = make(both_options());
  SECTION("typ") {
    require_accepted(v, hs_token(R"({"alg":"HS256","typ":"jwt"})", claims()), now);
    require_accepted(v, hs_token(R"({"typ":"Jwt","alg":"HS256"})", claims()), now);
    require_refused(v, hs_token(R"({"alg":"HS256","typ":"at+jwt"})", claims()), now, "is not JWT");
    require_refused(v, hs_token(R"({"alg":"HS256","typ":"JOSE"})", claims()), now, "is not JWT");
    require_refused(v, hs_token(R"({"alg":"HS256","typ":""})", claims()), now, "is not JWT");
    require_refused(v, hs_token(R"({"alg":"HS256","typ":1})", claims()), now,
                    "type must be a string");
  }
  SECTION("iat far in the future") {
    require_refused(v, hs_token(hs_header, claims(R"(,"iat":4102444800)")), now,
                    "issued in the future");
  }
  SECTION("oversized") {
    // Grow a filler claim until the token is exactly at the limit, then one step over it.
    std::string at_limit;
    for (std::size_t n = 5900;; ++n) {
      std::string t = hs_token(hs_header, claims(R"(,"filler":")" + std::string(n, 'x') + "\""));
      if (t.size() > 8192) break;
      at_limit = t;
    }
    REQUIRE(at_limit.size() >= 8190);
    require_accepted(v, at_limit, now);
    std::string over =
        hs_token(hs_header, claims(R"(,"filler":")" + std::string(8200, 'x') + "\""));
    require_refused(v, over, now, "token is too large");
    require_refused(v, std::string(70000, 'A'), now, "token is too large");
    require_refused(v,
                    hs_token(hs_header, claims(R"(,"filler":")" + std::string(70000, 'x') + "\"")),
                    now, "token is too large");
    JwtOptions o = both_options();
    o.max_token_size = at_limit.size() - 1;
    require_refused(make(o), at_limit, now, "token is too large");
  }
}

TEST_CASE("principal: the first present non-empty string claim of the list") {
  auto v = make(hs_options());
  auto token = [](std::string_view members) {
    return hs_token(hs_header, "{" + std::string(members) + R"(,"exp":1700003600})");
  };
  require_accepted(v, token(R"("email":"alice@example.com","sub":"u-1")"), now, "alice");
  require_accepted(v, token(R"("preferred_username":"bob","sub":"u-1")"), now, "bob");
  require_accepted(v, token(R"("sub":"u-1")"), now, "u-1");
  require_accepted(v, token(R"("email":"carol","sub":"u-1")"), now, "carol");
  require_accepted(v, token(R"("email":"dave@a@b","sub":"u-1")"), now, "dave");
  require_accepted(v, token(R"("email":"","preferred_username":"bob")"), now, "bob");
  require_accepted(v, token(R"("email":5,"preferred_username":"bob")"), now, "bob");
  require_accepted(v, token(R"("email":null,"sub":"u-1")"), now, "u-1");
  require_refused(v, token(R"("email":"@example.com","sub":"u-1")"), now, "no user name");
  require_refused(v, token(R"("name":"Alice")"), now, "no principal claim");
  require_refused(v, token(R"("sub":"")"), now, "no principal claim");
  require_refused(v, token(R"("sub":["alice"])"), now, "no principal claim");

  JwtOptions o = hs_options();
  o.principal_claims = {"upn", "email"};
  auto custom = make(o);
  require_accepted(custom, token(R"("upn":"erin@corp","email":"x@y")"), now, "erin@corp");
  require_accepted(custom, token(R"("email":"x@y")"), now, "x");
}

TEST_CASE("create: options are validated") {
  SECTION("HS256 secrets of at least 32 bytes") {
    JwtOptions o;
    o.hs256_keys.push_back({std::string(31, 'k'), std::nullopt});
    require_invalid_option(o, "shorter than 32 bytes");
    o.hs256_keys[0].secret = std::string(32, 'k');
    CHECK(JwtVerifier::create(o).has_value());
    o.hs256_keys.push_back({"", std::string("empty")});
    require_invalid_option(o, "HS256 key 1");
  }
  SECTION("RS256 keys must be RSA public keys in PEM") {
    auto with_pem = [](std::string pem) {
      JwtOptions o;
      o.rs256_keys.push_back({std::move(pem), std::nullopt});
      return o;
    };
    require_invalid_option(with_pem("not a pem"), "not a PEM RSA public key");
    require_invalid_option(with_pem(""), "not a PEM RSA public key");
    require_invalid_option(
        with_pem("-----BEGIN PUBLIC KEY-----\nZ2FyYmFnZQ==\n-----END PUBLIC KEY-----\n"),
        "not a PEM RSA public key");
    require_invalid_option(
        with_pem("-----BEGIN RSA PUBLIC KEY-----\nZ2FyYmFnZQ==\n-----END RSA PUBLIC KEY-----\n"),
        "not a PEM RSA public key");
    std::string truncated = rsa().spki.substr(0, rsa().spki.size() / 2);
    require_invalid_option(with_pem(truncated), "not a PEM RSA public key");
    require_invalid_option(with_pem(private_pem(rsa().key.get())), "not a PEM RSA public key");
    // The PKCS#1 body under the SPKI label, and the reverse.
    std::string swapped = rsa().pkcs1;
    const std::string from = "RSA PUBLIC KEY";
    for (auto at = swapped.find(from); at != std::string::npos; at = swapped.find(from)) {
      swapped.replace(at, from.size(), "PUBLIC KEY");
    }
    require_invalid_option(with_pem(swapped), "not a PEM RSA public key");

    PkeyPtr ec(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    REQUIRE(ec);
    require_invalid_option(with_pem(spki_pem(ec.get())), "not an RSA key");
    PkeyPtr small(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{1024}));
    REQUIRE(small);
    require_invalid_option(with_pem(spki_pem(small.get())), "fewer than 2048 bits");

    CHECK(JwtVerifier::create(with_pem(rsa().spki)).has_value());
    CHECK(JwtVerifier::create(with_pem(rsa().pkcs1)).has_value());
    CHECK(JwtVerifier::create(with_pem("leading text\n" + rsa().spki)).has_value());
  }
  SECTION("leeway and principal claims") {
    JwtOptions o = hs_options();
    o.leeway_seconds = -1;
    require_invalid_option(o, "leeway");
    o.leeway_seconds = 0;
    o.principal_claims.clear();
    require_invalid_option(o, "principal claim");
  }
  SECTION("no key: every token is refused") {
    auto v = make(JwtOptions{});
    require_refused(v, hs_token(hs_header, claims()), now, "no key is configured");
    require_refused(v, rs_token(rs_header, claims()), now, "no key is configured");
    require_refused(v, rfc_6_1_unsecured, now);
    require_refused(v, "", now);
  }
}

TEST_CASE("verifier copies share keys and verify concurrently") {
  std::optional<JwtVerifier> copy;
  std::string hs = hs_token(hs_header, claims());
  std::string rs = rs_token(rs_header, claims());
  {
    auto original = make(both_options());
    copy = original;
  }
  require_accepted(*copy, hs, now);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 100; ++n) {
        auto good = copy->verify((n + i) % 2 ? hs : rs, now);
        auto bad = copy->verify(hs.substr(0, hs.size() - 1) + "A", now);
        if (!good || *good != "alice" || bad) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("fuzz: random and mutated tokens only ever fail with unauthenticated") {
  std::mt19937 rng(0x5eed2024u);
  auto v = make(both_options());
  auto uniform = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  const std::string chars =
      std::string(url_alphabet) + ".=+/ \t\n\"{}[]:,\\" + std::string(1, '\0') + "\x7f\x80\xff";

  std::vector<std::string> originals = {
      hs_token(hs_header, claims()),
      rs_token(rs_header, claims()),
      hs_token(R"({"alg":"HS256","kid":"k"})", claims()),  // kid unknown: refused as is
      hs_token(hs_header, claims(R"(,"iss":"i","aud":["a","b"],"nbf":1,"iat":2)")),
      rs_token(rs_header, R"({"email":"alice@example.com","exp":1700003600.5})"),
  };

  std::size_t accepted = 0;
  std::size_t refused = 0;
  // `valid` lists the tokens that may verify: the originals (a splice of segments can rebuild
  // another original), or the token itself when it was signed by the test.
  auto check = [&](const std::string& token, const std::vector<std::string>& valid) {
    catalog::Result<std::string> r = catalog::fail(Errc::internal, "not run");
    REQUIRE_NOTHROW(r = v.verify(token, now));
    if (r) {
      ++accepted;
      INFO("accepted mutation: " << token);
      REQUIRE(std::find(valid.begin(), valid.end(), token) != valid.end());
    } else {
      ++refused;
      INFO("token: " << token << " message: " << r.error().message());
      REQUIRE(r.error().code() == Errc::unauthenticated);
    }
  };

  // Mutations of valid tokens: flip, insert, delete, duplicate, cut, move dots.
  for (int round = 0; round < 3000; ++round) {
    const std::string& original = originals[uniform(0, originals.size() - 1)];
    std::string t = original;
    std::size_t edits = uniform(1, 4);
    for (std::size_t e = 0; e < edits; ++e) {
      std::size_t at = t.empty() ? 0 : uniform(0, t.size() - 1);
      switch (uniform(0, 6)) {
      case 0:  // flip one character
        if (!t.empty()) t[at] = chars[uniform(0, chars.size() - 1)];
        break;
      case 1:  // flip one bit
        if (!t.empty()) t[at] = char(t[at] ^ (1 << uniform(0, 7)));
        break;
      case 2:  // insert
        t.insert(t.begin() + std::ptrdiff_t(std::min(at, t.size())),
                 chars[uniform(0, chars.size() - 1)]);
        break;
      case 3:  // delete a run
        if (!t.empty()) t.erase(at, uniform(1, 8));
        break;
      case 4:  // duplicate a run
        if (!t.empty()) t.insert(at, t.substr(at, uniform(1, 16)));
        break;
      case 5:  // cut
        t.resize(at);
        break;
      case 6:  // splice a segment of another token
      {
        const std::string& other = originals[uniform(0, originals.size() - 1)];
        std::size_t seg = uniform(0, 2);
        auto segment = [](const std::string& s, std::size_t i) {
          std::size_t b = 0;
          for (std::size_t k = 0; k < i && b != std::string::npos; ++k) {
            b = s.find('.', b);
            if (b != std::string::npos) ++b;
          }
          if (b == std::string::npos) return std::pair<std::size_t, std::size_t>{s.size(), 0};
          std::size_t end = s.find('.', b);
          return std::pair<std::size_t, std::size_t>{
              b, (end == std::string::npos ? s.size() : end) - b};
        };
        auto [ob, ol] = segment(other, seg);
        auto [tb, tl] = segment(t, seg);
        if (tb <= t.size()) t.replace(tb, tl, other.substr(std::min(ob, other.size()), ol));
        break;
      }
      }
    }
    check(t, originals);
  }

  // Random tokens: random segment counts of random base64url, and random bytes.
  for (int round = 0; round < 1500; ++round) {
    std::string t;
    if (round % 3 == 0) {
      std::size_t n = uniform(0, 300);
      for (std::size_t i = 0; i < n; ++i) t += char(uniform(0, 255));
    } else {
      std::size_t segments = uniform(0, 6);
      for (std::size_t s = 0; s < segments; ++s) {
        if (s) t += '.';
        std::size_t n = uniform(0, 80);
        for (std::size_t i = 0; i < n; ++i) t += url_alphabet[uniform(0, 63)];
      }
    }
    check(t, {});
  }

  // Correctly signed tokens over random header and claim combinations: whatever they hold,
  // the outcome is a principal or unauthenticated.
  const std::vector<std::string> header_members = {
      R"("alg":"HS256")", R"("alg":"RS256")", R"("alg":"none")", R"("alg":5)",
      R"("typ":"JWT")",   R"("typ":"x")",     R"("kid":"k")",    R"("kid":{})",
      R"("crit":["a"])",  R"("jwk":{})",      R"("cty":"JWT")",  R"("alg":"HS256")"};
  const std::vector<std::string> claim_members = {
      R"("sub":"alice")", R"("sub":"")",         R"("sub":1)",          R"("email":"a@b")",
      R"("email":"@b")",  R"("exp":1700003600)", R"("exp":"x")",        R"("exp":1e400)",
      R"("exp":-0.0)",    R"("nbf":1e-400)",     R"("iat":1700000000)", R"("iat":null)",
      R"("aud":[1,2])",   R"("iss":{})",         R"("x":[[[[]]]])",     R"("sub":"\u0000")"};
  for (int round = 0; round < 1500; ++round) {
    auto object = [&](const std::vector<std::string>& members) {
      std::string s = "{";
      std::size_t n = uniform(0, 5);
      for (std::size_t i = 0; i < n; ++i) {
        if (i) s += ',';
        s += members[uniform(0, members.size() - 1)];
      }
      return s + "}";
    };
    std::string header = object(header_members);
    std::string payload = object(claim_members);
    std::string t = uniform(0, 1) ? hs_token(header, payload) : rs_token(header, payload);
    check(t, {t});
  }
  CHECK(refused > 0);
  CHECK(accepted > 0);
}
