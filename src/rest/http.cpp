// Response shapes and header helpers of the REST surface.

#include "http.hpp"

#include <catalog/detail/utf8.hpp>
#include <catalog/json.hpp>

#include <boost/json/string.hpp>

namespace catalog::rest::detail {

namespace bj = boost::json;

namespace {

char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

using catalog::detail::utf8_sequence;

// `s` with every byte that is not part of well-formed UTF-8 replaced by U+FFFD, so that a
// message quoting request bytes (a percent-decoded FQN, a header) is still valid JSON text.
std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    std::size_t n = utf8_sequence(s);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      s.remove_prefix(1);
    } else {
      out.append(s.substr(0, n));
      s.remove_prefix(n);
    }
  }
  return out;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

std::string_view trim_ows(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> header_values(const Request& request, std::string_view name) {
  std::vector<std::string_view> values;
  for (const auto& [n, v] : request.headers)
    if (iequals(n, name)) values.emplace_back(v);
  return values;
}

Response json_response(int status, const bj::value& body) {
  Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = catalog::json::serialize(body);
  return r;
}

Response entity_response(int status, bj::object entity) {
  bj::value body(std::move(entity));
  Response r = json_response(status, body);
  if (const auto* version = body.as_object().if_contains("version")) {
    // Built by appending: `"\"" + std::string` trips GCC 12's -Wrestrict false positive at -O3.
    std::string etag(1, '"');
    etag += catalog::json::serialize(*version);
    etag += '"';
    r.headers.emplace_back("ETag", std::move(etag));
  }
  return r;
}

namespace {

// The docs/SEMANTICS.md §14 error body.
Response error_body(int status, std::string_view type, std::string_view message) {
  bj::value body(bj::object_kind);
  auto& o = body.as_object();
  o["code"] = status;
  o["errorType"] = type;
  o["message"] = valid_utf8(message);
  return json_response(status, body);
}

}  // namespace

Response error_response(const Error& error) {
  Response r = error_body(http_status(error.kind()), type_name(error.kind()), error.message());
  // RFC 6750 section 3: a 401 names the scheme it wants.
  if (error.kind() == ErrorKind::unauthorized) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

Response method_not_allowed(std::string_view method, std::string_view allowed) {
  Response r = error_body(405, "METHOD_NOT_ALLOWED",
                          "Method " + std::string(method.substr(0, 32)) +
                              " not allowed; allowed: " + std::string(allowed));
  r.headers.emplace_back("Allow", std::string(allowed));
  return r;
}

Error bad_request(Errc code, std::string message) { return Error(code, std::move(message)); }

}  // namespace catalog::rest::detail
