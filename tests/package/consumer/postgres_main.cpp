// A program built against catalog::postgres (or pkg-config's catalog-postgres): open_postgres on
// a server that is not there answers an error of kind internal (a storage failure), no crash.
#include <catalog/postgres.hpp>

#include <iostream>

int main() {
  auto store = catalog::open_postgres("host=/nonexistent-catalog-consumer connect_timeout=2");
  if (store) {
    std::cerr << "open_postgres succeeded with no server\n";
    return 1;
  }
  if (store.error().kind() != catalog::ErrorKind::internal) {
    std::cerr << "open_postgres without a server: " << store.error() << '\n';
    return 1;
  }
  std::cout << "catalog postgres consumer: ok (" << store.error().message() << ")\n";
  return 0;
}
