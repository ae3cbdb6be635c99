#ifndef CATALOG_AUTH_JWT_HPP
#define CATALOG_AUTH_JWT_HPP

// JSON Web Token verification (docs/SEMANTICS.md §11): HS256 and RS256 compact tokens, checked
// strictly, against keys the host configures, yielding the principal's user name.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// Bearer token verification (docs/SEMANTICS.md §11): JSON Web Tokens.
namespace catalog::auth {

/// An HMAC-SHA-256 secret. The secret is raw bytes, at least 32 of them (RFC 7518 3.2), and
/// never a PEM text (a public key is not a secret). The key only verifies `alg` "HS256".
struct Hs256Key {
  std::string secret;  ///< the secret's raw bytes
  /// The id a token's `kid` selects the key by. Default: none (selected only by tokens
  /// without `kid`).
  std::optional<std::string> kid;
};

/// An RSA public key in PEM: SPKI ("PUBLIC KEY") or PKCS#1 ("RSA PUBLIC KEY"), at least 2048
/// bits (RFC 7518 3.3). The key only verifies `alg` "RS256" (PKCS#1 v1.5, SHA-256).
struct Rs256Key {
  std::string public_key_pem;  ///< the key as PEM text
  /// The id a token's `kid` selects the key by. Default: none (selected only by tokens
  /// without `kid`).
  std::optional<std::string> kid;
};

/// What a JwtVerifier accepts. Plain data; copied into the verifier by `create`.
struct JwtOptions {
  /// The HS256 secrets. Default: none (with no key at all every token is refused).
  std::vector<Hs256Key> hs256_keys;
  std::vector<Rs256Key> rs256_keys;     ///< the RS256 public keys; Default: none
  std::optional<std::string> issuer;    ///< Default: not checked; else `iss` must equal it
  std::optional<std::string> audience;  ///< Default: not checked; else `aud` must contain it
  bool allow_no_exp = false;            ///< accept tokens without `exp`; Default: `exp` required
  std::int64_t leeway_seconds = 60;     ///< slack in seconds for exp, nbf and iat; Default: 60
  /// The claims naming the principal, tried in order; the first one present as a non-empty
  /// string wins. For "email" the user name is the part before the '@'.
  std::vector<std::string> principal_claims = {"email", "preferred_username", "sub"};
  std::size_t max_token_size = 8192;  ///< bytes; Default: 8 KiB; longer tokens are refused unread
};

/// Verifies compact JWS tokens (header.payload.signature) and extracts the principal.
///
/// Rules (docs/SEMANTICS.md §11): exactly three segments of strict base64url without padding;
/// header and payload are I-JSON objects (no duplicate members, depth at most 64); `alg` is exactly
/// "HS256" or "RS256" and must match the key that verifies it (keys are pinned to their algorithm;
/// "none" is never accepted); `kid`, when present, selects among configured keys only; `jku`,
/// `jwk`, `x5u`, `x5c` and `crit` are refused; `typ`, when present, is "JWT" in any case. The
/// signature covers the received bytes. Claims `exp`, `nbf`, `iat` are numbers checked against
/// the caller's clock with the configured leeway; `iss` and `aud` are checked when configured.
///
/// Thread safety: the keys and options are immutable after `create`; `verify` may run
/// concurrently from any threads. It remembers (under a lock, up to 1,024 tokens of at most 2 KiB)
/// the tokens that verified, so a token seen again costs a lookup and the check of its times
/// against the new `now`: what else it checks depends only on the token's bytes and the keys.
/// Lifetimes: copies share the parsed keys (reference counted); a copy outlives the options
/// and the verifier it was made from.
class CATALOG_DECL JwtVerifier {
 public:
  /// Validates `options` and loads the keys.
  /// Errors (bad_request, invalid_value): an HS256 secret shorter than 32 bytes or holding a
  /// PEM text; a PEM that is not an RSA public key of at least 2048 bits; a negative leeway;
  /// an empty principal claim list.
  [[nodiscard]] static Result<JwtVerifier> create(JwtOptions options);

  /// Verifies `token` at time `now` (seconds since the epoch) and returns the principal's user
  /// name (for the claim "email": the part before the '@').
  /// Errors (unauthorized, unauthenticated): any failed check; the message says which one
  /// ("token expired", "token signature invalid", "token issuer mismatch", ...).
  [[nodiscard]] Result<std::string> verify(std::string_view token, std::int64_t now) const;

 private:
  struct Impl;
  explicit JwtVerifier(std::shared_ptr<const Impl> impl) noexcept;

  std::shared_ptr<const Impl> impl_;
};

}  // namespace catalog::auth

#endif  // CATALOG_AUTH_JWT_HPP
