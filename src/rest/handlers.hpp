#ifndef CATALOG_SRC_REST_HANDLERS_HPP
#define CATALOG_SRC_REST_HANDLERS_HPP

// One handler per route of docs/REST.md. Each checks what the request alone decides
// (docs/SEMANTICS.md §14 step 3: path values, query parameters, headers, body), then makes one
// Store call and shapes its answer. Internal to catalog_rest.

#include "query.hpp"
#include "routing.hpp"

#include <catalog/principal.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/store.hpp>

namespace catalog::rest::detail {

/// Everything a handler needs: the request, its authenticated caller, its matched route (the
/// method already allowed) and its decoded query.
struct Context {
  Store& store;
  const ApiOptions& options;
  const Request& request;
  const Principal& who;
  const Route& route;
  const Query& query;
};

/// Runs the route's handler for the request's method. Errors: the request's 400s, then the
/// Store's failures, as they are (the caller turns them into error responses).
Result<Response> dispatch(const Context& context);

}  // namespace catalog::rest::detail

#endif  // CATALOG_SRC_REST_HANDLERS_HPP
