// JwtVerifier::verify on any token, with two HS256 secrets (one without kid, one with kid "h2")
// and one RS256 key (generated at start, no kid); once with the default options and once with
// an issuer and an audience required.
// Input: one control byte, then the rest. Control mod 4: 0, the rest is the token; 1, 2, 3, the
// rest is `header` '\n' `payload` (raw bytes, base64url-encoded here) signed here with the first
// HS256 secret, the RS256 key, or the second HS256 secret, so mutations reach every check behind
// the signature (header members, claims, times, principal claims).
// Properties: nothing crashes; a refusal is unauthorized; an accepted token names a principal.
#include "fuzz_support.hpp"

#include <catalog/auth/jwt.hpp>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view second_secret = "fuzz-second-hs256-secret-with-kid-h2!!";

struct Keys {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> rsa{nullptr, EVP_PKEY_free};
  std::vector<catalog::auth::JwtVerifier> verifiers;
};

const Keys& keys() {
  static const Keys k = [] {
    Keys made;
    made.rsa.reset(EVP_RSA_gen(2048));
    if (!made.rsa) fuzz::fail("RSA key generation failed");
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!bio || PEM_write_bio_PUBKEY(bio.get(), made.rsa.get()) != 1)
      fuzz::fail("writing the RSA public key failed");
    char* pem = nullptr;
    long pem_size = BIO_get_mem_data(bio.get(), &pem);
    catalog::auth::JwtOptions options;
    options.hs256_keys = {{std::string(fuzz::hs256_secret), std::nullopt},
                          {std::string(second_secret), "h2"}};
    options.rs256_keys = {{std::string(pem, std::size_t(pem_size)), std::nullopt}};
    made.verifiers.push_back(fuzz::must(catalog::auth::JwtVerifier::create(options), "verifier"));
    options.issuer = "https://idp.test";
    options.audience = "catalog";
    made.verifiers.push_back(
        fuzz::must(catalog::auth::JwtVerifier::create(options), "strict verifier"));
    return made;
  }();
  return k;
}

std::string sign_rs256(std::string_view header, std::string_view payload) {
  std::string input = fuzz::b64(header) + "." + fuzz::b64(payload);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::size_t sig_size = 0;
  if (!ctx ||
      EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, keys().rsa.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sig_size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    fuzz::fail("RS256 signing failed");
  std::string sig(sig_size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    fuzz::fail("RS256 signing failed");
  sig.resize(sig_size);
  return input + "." + fuzz::b64(sig);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned mode = data[0] % 4;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string token;
  if (mode == 0) {
    token = rest;
  } else {
    auto newline = rest.find('\n');
    auto header = rest.substr(0, newline);
    auto payload =
        newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    token = mode == 1   ? fuzz::sign_hs256(header, payload)
            : mode == 2 ? sign_rs256(header, payload)
                        : fuzz::sign_hs256(header, payload, second_secret);
  }
  for (const auto& verifier : keys().verifiers) {
    auto name = verifier.verify(token, fuzz::now_seconds);
    if (!name && name.error().kind() != catalog::ErrorKind::unauthorized)
      fuzz::fail("a token was refused with another kind than unauthorized", name.error().message());
    if (name && name->empty()) fuzz::fail("an accepted token names no principal", token);
  }
  return 0;
}
