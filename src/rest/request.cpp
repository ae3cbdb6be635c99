// Strict readers for the parts of a request the REST layer decides on its own (docs/SEMANTICS.md
// §14 step 3).

#include "request.hpp"

#include "http.hpp"

#include <catalog/json.hpp>

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace catalog::rest::detail {

namespace bj = boost::json;

namespace {

bool token_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

Error invalid_request(std::string message) {
  return Error(Errc::invalid_request, std::move(message));
}

}  // namespace

Result<std::string_view> bearer_token(const Request& request) {
  auto values = header_values(request, "Authorization");
  if (values.empty()) return fail(Errc::unauthenticated, "Missing Authorization header");
  if (values.size() > 1) return fail(Errc::unauthenticated, "More than one Authorization header");
  std::string_view v = values.front();
  auto refused = [] {
    return fail(Errc::unauthenticated, "Authorization header is not 'Bearer <token>'");
  };
  constexpr std::string_view scheme = "Bearer";
  if (v.size() <= scheme.size() || !iequals(v.substr(0, scheme.size()), scheme)) return refused();
  v.remove_prefix(scheme.size());
  if (v.front() != ' ') return refused();
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.empty()) return refused();
  for (char c : v)
    if (!token_char(c)) return refused();
  return v;
}

Result<void> check_body_size(const Request& request, const ApiOptions& options) {
  if (request.body.size() > options.max_body_bytes)
    return invalid_request("Request body is larger than " + std::to_string(options.max_body_bytes) +
                           " bytes");
  return {};
}

Result<bj::value> parse_body(const Request& request) {
  if (request.body.empty()) return fail(Errc::invalid_json, "Request body is missing");
  return catalog::json::parse(request.body);
}

Result<PatchFormat> patch_format(const Request& request) {
  auto values = header_values(request, "Content-Type");
  if (values.empty()) return PatchFormat::detect;
  if (values.size() > 1) return invalid_request("More than one Content-Type header");
  std::string_view type = values.front();
  type = trim_ows(type.substr(0, type.find(';')));
  if (iequals(type, "application/merge-patch+json")) return PatchFormat::merge;
  if (iequals(type, "application/json-patch+json")) return PatchFormat::json_patch;
  if (iequals(type, "application/json")) return PatchFormat::detect;
  return invalid_request("Unsupported patch media type " + std::string(type.substr(0, 100)) +
                         ": expected application/merge-patch+json, application/json-patch+json "
                         "or application/json");
}

Result<IfMatch> if_match(const Request& request) {
  auto values = header_values(request, "If-Match");
  if (values.empty()) return IfMatch{};
  if (values.size() > 1) return invalid_request("More than one If-Match header");
  std::string_view v = trim_ows(values.front());
  if (v == "*") return IfMatch{};
  auto bad = [&] {
    return invalid_request("Invalid If-Match " + std::string(v.substr(0, 100)) +
                           ": expected \"<version>\" or *");
  };
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return bad();
  std::string_view text = v.substr(1, v.size() - 2);
  auto version = Version::parse(text);
  if (version) return IfMatch{*version, {}};
  if (version.error().kind() != ErrorKind::not_found) return bad();
  // Past the largest version a catalog writes (Version::parse): no entity has the largest
  // Version can hold either, so the store answers 409 where it would for any other version.
  return IfMatch{Version::from_tenths(std::numeric_limits<std::uint32_t>::max()),
                 std::string(text.substr(0, 100))};
}

Result<Uuid> restore_body(const bj::value& body) {
  const auto* o = body.if_object();
  if (!o || o->size() != 1 || !o->contains("id") || !o->at("id").is_string())
    return invalid_request("Restore body must be {\"id\": \"<uuid>\"}");
  const auto& id = o->at("id").get_string();
  return parse_uuid(std::string_view(id.data(), id.size()));
}

Result<Uuid> follow_body(const bj::value& body) {
  if (!body.is_string())
    return invalid_request("Follow body must be a JSON string holding the user id");
  const auto& id = body.get_string();
  return parse_uuid(std::string_view(id.data(), id.size()));
}

Result<VoteType> vote_body(const bj::value& body) {
  const auto* o = body.if_object();
  auto bad = [] {
    return invalid_request(
        "Vote body must be {\"updatedVoteType\": \"votedUp\" | \"votedDown\" | \"unVoted\"}");
  };
  if (!o || o->size() != 1 || !o->contains("updatedVoteType")) return bad();
  const auto* s = o->at("updatedVoteType").if_string();
  if (!s) return bad();
  if (*s == "votedUp") return VoteType::voted_up;
  if (*s == "votedDown") return VoteType::voted_down;
  if (*s == "unVoted") return VoteType::un_voted;
  return bad();
}

}  // namespace catalog::rest::detail
