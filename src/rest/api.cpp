// Api::handle: the order of checks of docs/SEMANTICS.md S14. Authentication first (whatever the
// request asks), then the path and the method, then the route's own checks and its Store call.

#include <catalog/rest/api.hpp>

#include "handlers.hpp"
#include "http.hpp"
#include "query.hpp"
#include "request.hpp"
#include "routing.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace catalog::rest {

namespace {

// A target quoted in a message, cut short.
std::string shown(std::string_view target) {
  constexpr std::size_t max = 200;
  return target.size() <= max ? std::string(target) : std::string(target.substr(0, max)) + "...";
}

// 1. 401: a valid bearer token of a live user.
Result<Principal> authenticated(Store& store, const Request& request) {
  auto token = detail::bearer_token(request);
  if (!token) return token.error();
  return store.authenticate(*token);
}

Response handle_request(Store& store, const ApiOptions& options, const Request& request) {
  using namespace detail;

  auto who = authenticated(store, request);
  if (!who) return error_response(who.error());

  // The target must be origin-form (absolute path, optional query); Boost.URL decides.
  auto target = boost::urls::parse_origin_form(request.target);
  if (!target)
    return error_response(
        Error(Errc::invalid_request, "Invalid request target " + shown(request.target)));

  // 2. 404 unknown path, 405 known path with another method.
  std::vector<std::string> segments;
  for (auto segment : target->segments()) segments.push_back(std::move(segment));
  auto route = match_route(segments);
  if (!route)
    return error_response(Error(Errc::not_found, "Unknown path " + shown(target->encoded_path())));
  if (!method_allowed(route->kind, request.method))
    return method_not_allowed(request.method, allowed_methods(route->kind));

  // 3. and on: what the request decides alone, then the Store.
  if (auto size = check_body_size(request, options); !size) return error_response(size.error());
  std::vector<std::pair<std::string, std::optional<std::string>>> params;
  // Decoded without turning '+' into a space: a plus is a plus (docs/REST.md).
  for (auto param : target->params(boost::urls::encoding_opts(false, false, false)))
    params.emplace_back(std::move(param.key),
                        param.has_value ? std::optional<std::string>(std::move(param.value))
                                        : std::nullopt);
  Query query(std::move(params));
  Context context{store, options, request, *who, *route, query};
  auto response = dispatch(context);
  if (!response) return error_response(response.error());
  return std::move(*response);
}

}  // namespace

Api::Api(Store& store, ApiOptions options) : store_(&store), options_(options) {}

namespace {

// The last resort of every answer: a 500 in the error shape, or a bare 500 when even that cannot
// be made (out of memory: it needs no allocation).
Response internal_error(const std::exception* e) noexcept {
  try {
    return detail::error_response(Error(
        Errc::internal, e ? std::string("Internal error: ") + e->what() : "Internal error"));
  } catch (...) {
  }
  Response bare;
  bare.status = 500;
  return bare;
}

}  // namespace

Response Api::handle(const Request& request) const noexcept {
  try {
    return handle_request(*store_, options_, request);
  } catch (const std::exception& e) {
    return internal_error(&e);
  } catch (...) {
    return internal_error(nullptr);
  }
}

Result<Principal> Api::principal(const Request& request) const {
  return authenticated(*store_, request);
}

Response Api::error_response(const Error& error) { return detail::error_response(error); }

std::optional<Response> Api::refuse_unauthenticated(const Request& request) const noexcept {
  try {
    auto who = authenticated(*store_, request);
    if (who) return std::nullopt;
    return detail::error_response(who.error());
  } catch (const std::exception& e) {
    return internal_error(&e);
  } catch (...) {
    return internal_error(nullptr);
  }
}

}  // namespace catalog::rest
