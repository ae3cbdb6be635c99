// A program built against catalog::rest (or pkg-config's catalog-rest): the REST surface over a
// store in memory answers a request with no bearer token 401, and a request for an unknown path
// with a token it cannot verify 401 too (authentication comes first, docs/REST.md).
#include <catalog/rest/api.hpp>

#include <iostream>

int main() {
  auto store = catalog::Store::in_memory();
  if (!store) {
    std::cerr << "Store::in_memory: " << store.error() << '\n';
    return 1;
  }
  catalog::rest::Api api(*store);
  catalog::rest::Request request;
  request.method = "GET";
  request.target = "/v1/glossaries";
  auto response = api.handle(request);
  if (response.status != 401 || response.body.find("UNAUTHORIZED") == std::string::npos) {
    std::cerr << "GET /v1/glossaries without a token: " << response.status << ' '
              << response.body << '\n';
    return 1;
  }
  std::cout << "catalog rest consumer: ok\n";
  return 0;
}
