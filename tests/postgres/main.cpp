// The Catch2 main of the test programs that need the PostgreSQL cluster: without it they skip
// (exit 77, ctest's SKIP_RETURN_CODE) when the fixture found no server binaries, and fail when
// the cluster should be there but is not.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "pg_support.hpp"

#include <iostream>

int main(int argc, char** argv) {
  const auto cluster = test::pg::find_cluster();
  if (!cluster.conninfo) {
    if (cluster.skip) {
      std::cout << "SKIPPED: " << cluster.reason << '\n';
      return 77;
    }
    std::cerr << "no PostgreSQL cluster: " << cluster.reason << '\n';
    return 1;
  }
  return Catch::Session().run(argc, argv);
}
