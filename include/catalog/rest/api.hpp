#ifndef CATALOG_REST_API_HPP
#define CATALOG_REST_API_HPP

// catalog::rest::Api: the seed's /v1 HTTP interface (docs/REST.md) as a pure function from a
// request to a response. No sockets: a host puts it behind any HTTP server, and tests call it
// directly.

#include <catalog/detail/export.hpp>
#include <catalog/store.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

/// The REST surface (docs/REST.md): a request in, a response out, no sockets.
namespace catalog::rest {

/// One HTTP request as a server received it. Plain data.
struct Request {
  std::string method;  ///< "GET", "POST", ... (case-sensitive, as HTTP methods are)
  std::string target;  ///< origin-form: path and query, percent-encoded as on the wire
  std::vector<std::pair<std::string, std::string>> headers;  ///< names compare case-insensitively
  std::string body;                                          ///< raw bytes
};

/// One HTTP response. Plain data. A 204 has no body and no Content-Type.
struct Response {
  int status = 200;  ///< the HTTP status code
  /// Names and values (Content-Type, ETag, Allow, WWW-Authenticate).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  ///< the JSON body; empty for a 204
};

/// The HTTP status that answers an error of kind `k` (docs/REST.md): 400, 401, 403, 404, 409,
/// 500. (405 is the REST surface's own: a known path with another method.)
constexpr int http_status(ErrorKind k) noexcept {
  switch (k) {
  case ErrorKind::bad_request: return 400;
  case ErrorKind::unauthorized: return 401;
  case ErrorKind::forbidden: return 403;
  case ErrorKind::not_found: return 404;
  case ErrorKind::conflict: return 409;
  case ErrorKind::internal: return 500;
  }
  return 500;
}

/// Options of an Api. Plain data.
struct ApiOptions {
  /// Largest request body accepted; a longer one is 400. Default: 8 MiB (docs/SEMANTICS.md §15).
  std::size_t max_body_bytes = std::size_t{8} << 20;
};

/// The REST surface over one Store (docs/REST.md, docs/SEMANTICS.md §14 for the order of checks).
///
/// Thread safety: `handle` may run concurrently from any number of threads (the Store is
/// thread-safe and the Api keeps no state of its own). Lifetimes: the Store must outlive the Api.
class CATALOG_DECL Api {
 public:
  /// The REST surface over `store`, which must outlive it.
  explicit Api(Store& store, ApiOptions options = {});

  /// Answers one request. Never throws: every failure is a response with a JSON error body
  /// `{"code", "errorType", "message"}`.
  /// Errors (as statuses): 401 UNAUTHORIZED (no valid bearer token, checked first); 404
  /// NOT_FOUND (unknown path); 405 METHOD_NOT_ALLOWED (known path, other method; with `Allow`);
  /// 400 BAD_REQUEST (target, path ids and FQNs, query parameters, body, media type, If-Match);
  /// then whatever the Store answers (400, 403, 404, 409); 500 INTERNAL_ERROR (storage failures,
  /// and as a last resort for anything unexpected).
  Response handle(const Request& request) const noexcept;

  /// The answer `handle` gives `request` for its credentials alone: the 401 when it carries no
  /// valid bearer token of a live user, else nullopt. Reads only the headers, so a host may call
  /// it as soon as they are in, before it reads a body: a client without a valid token then
  /// cannot make the host take in (and hold) a body up to the body limit. `handle` checks the
  /// token again. Never throws (an unexpected failure is a 500 response).
  std::optional<Response> refuse_unauthenticated(const Request& request) const noexcept;

  /// The caller of `request` as `handle` authenticates it (the `Authorization` header's bearer
  /// token, of a live user), for a host's own routes. Errors: unauthorized, with the message of
  /// the 401 `handle` gives; storage.
  Result<Principal> principal(const Request& request) const;

  /// The response `handle` gives for `error`: its status, the JSON error body, and
  /// `WWW-Authenticate: Bearer` on a 401. For a host's own routes.
  static Response error_response(const Error& error);

 private:
  Store* store_;
  ApiOptions options_;
};

}  // namespace catalog::rest

#endif  // CATALOG_REST_API_HPP
