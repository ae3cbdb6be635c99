// rest::Api::handle on a small in-memory catalog (one entity of every kind, fuzz::World).
// Input: the method on the first line, the target on the second, then `Name: value` header lines
// up to an empty line, then the body (raw bytes, up to the body limit). In the target, header
// values and body, {model}, {service}, {admin} and {bob} become those entities' ids and
// {admin-token}, {bob-token} valid tokens; without an Authorization header the admin's token is
// sent, so every route is reached past the 401.
// Properties: nothing crashes; no 500; every status is one docs/REST.md lists; every body is JSON
// (none for 204); after a request that changed the catalog, the lists and the event feed still
// answer 200 and Store::verify() is clean.
#include "fuzz_support.hpp"

#include <catalog/json.hpp>
#include <catalog/rest/api.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

void replace_all(std::string& s, std::string_view from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

std::string_view next_line(std::string_view& text) {
  auto newline = text.find('\n');
  auto line = text.substr(0, newline);
  text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
  return line;
}

void check(const catalog::rest::Response& r, std::string_view what) {
  static constexpr int statuses[] = {200, 201, 204, 400, 401, 403, 404, 405, 409};
  if (std::find(std::begin(statuses), std::end(statuses), r.status) == std::end(statuses))
    fuzz::fail(std::string(what) + ": status " + std::to_string(r.status), r.body);
  if (r.status == 204) {
    if (!r.body.empty()) fuzz::fail(std::string(what) + ": a 204 with a body", r.body);
    return;
  }
  if (!catalog::json::parse(r.body, {catalog::json::max_parse_depth}))
    fuzz::fail(std::string(what) + ": the body is not JSON", r.body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static fuzz::WorldCache cache(true);
  static const std::string admin_token = fuzz::token_for("admin");
  static const std::string bob_token = fuzz::token_for("bob");
  auto& world = cache.get();
  const std::pair<std::string_view, std::string> placeholders[] = {
      {"{model}", world.model_id},
      {"{service}", world.service_id},
      {"{admin}", catalog::to_string(world.admin.id)},
      {"{bob}", catalog::to_string(world.bob.id)},
      {"{admin-token}", admin_token},
      {"{bob-token}", bob_token},
  };
  auto substituted = [&](std::string_view part) {
    std::string s(part);
    if (s.find('{') != std::string::npos)
      for (const auto& [from, to] : placeholders) replace_all(s, from, to);
    return s;
  };

  catalog::rest::Request request;
  request.method = std::string(next_line(text));
  request.target = substituted(next_line(text));
  bool authorization = false;
  while (!text.empty()) {
    auto line = next_line(text);
    if (line.empty()) break;
    auto colon = line.find(':');
    auto name = line.substr(0, colon);
    auto value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    authorization = authorization || iequals(name, "authorization");
    request.headers.emplace_back(std::string(name), substituted(value));
  }
  if (!authorization) request.headers.emplace_back("Authorization", "Bearer " + admin_token);
  request.body = substituted(text);

  catalog::rest::Api api(world.store);
  check(api.handle(request), "the request");

  // The store still answers for what the request may have touched. A request that changed
  // nothing left the catalog as it was built, which answers.
  if (!cache.changed()) return 0;
  auto admin =
      std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer " + admin_token}};
  for (const char* target : {"/v1/mlmodels?fields=*&include=all&limit=100", "/v1/events?limit=1000",
                             "/v1/glossaryTerms?include=all"}) {
    auto r = api.handle({"GET", target, admin, ""});
    if (r.status != 200)
      fuzz::fail(std::string("afterwards GET ") + target + " is not 200", r.body);
  }
  fuzz::verify_clean(world);
  cache.reset();
  return 0;
}
