#ifndef CATALOG_SRC_REST_REQUEST_HPP
#define CATALOG_SRC_REST_REQUEST_HPP

// What a request says on its own, read strictly: the bearer token, the body (I-JSON within the
// size limit), the PATCH media type, If-Match, and the small bodies of restore, follow and
// vote. Internal to catalog_rest.

#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/store.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace catalog::rest::detail {

/// The token of the one `Authorization: Bearer <token>` header: scheme in any case, one or more
/// spaces, `[A-Za-z0-9_.-]+`, optional trailing spaces or tabs.
/// Errors: unauthorized (unauthenticated): missing, repeated or malformed header.
Result<std::string_view> bearer_token(const Request& request);

/// Errors: bad_request (invalid_request) when the body is longer than the limit.
Result<void> check_body_size(const Request& request, const ApiOptions& options);

/// The body as one I-JSON value (depth 64, no duplicate members).
/// Errors: bad_request (invalid_json, duplicate_member, too_deep).
Result<boost::json::value> parse_body(const Request& request);

/// The patch format its Content-Type names: merge-patch+json, json-patch+json, json or none
/// (decided by the body). Parameters are ignored; names compare case-insensitively.
/// Errors: bad_request (invalid_request): any other media type, or several Content-Type headers.
Result<PatchFormat> patch_format(const Request& request);

/// What `If-Match` asks for: `version` is nullopt for `*` or no header. A version of S3's
/// grammar past the largest a catalog writes (`"99999999999.9"`) is well formed and matches no
/// entity: `version` is then one no entity has, and `past_largest` the version as sent, for the
/// 409's message (Version cannot hold it).
struct IfMatch {
  std::optional<Version> version;
  std::string past_largest;
};

/// The `If-Match` header. Errors: bad_request (invalid_request): anything but `"<version>"` or
/// `*`, once (weak tags, lists, bad versions).
Result<IfMatch> if_match(const Request& request);

/// `result`, with the version a 409 names written as sent when `expected` is past the largest.
template <class T>
Result<T> naming_sent_version(Result<T> result, const IfMatch& expected) {
  if (result || expected.past_largest.empty() || result.error().code() != Errc::version_mismatch)
    return result;
  std::string message = result.error().message();
  auto at = message.rfind(", not ");
  if (at != std::string::npos) message = message.substr(0, at) + ", not " + expected.past_largest;
  return Error(Errc::version_mismatch, std::move(message));
}

/// Restore body `{"id": "<uuid>"}` exactly. Errors: bad_request (invalid_request, invalid_uuid).
Result<Uuid> restore_body(const boost::json::value& body);

/// Follow body: a JSON string holding a user UUID. Errors: bad_request (invalid_request,
/// invalid_uuid).
Result<Uuid> follow_body(const boost::json::value& body);

/// Vote body `{"updatedVoteType": "votedUp" | "votedDown" | "unVoted"}` exactly.
/// Errors: bad_request (invalid_request).
Result<VoteType> vote_body(const boost::json::value& body);

}  // namespace catalog::rest::detail

#endif  // CATALOG_SRC_REST_REQUEST_HPP
