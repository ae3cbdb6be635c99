// The Catch2 main, compiled once for every test program.
//
// With catalog::postgres built (CATALOG_TEST_MAIN_POSTGRES), a run that names the tests'
// PostgreSQL cluster (CATALOG_PG_STATE or CATALOG_PG_CONNINFO, which ctest sets for the tests
// of tests/postgres) first looks for it: without it the program skips (exit 77, ctest's
// SKIP_RETURN_CODE) when the fixture found no server binaries, and fails when the cluster should
// be there but is not. Any other run is a plain Catch2 run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#ifdef CATALOG_TEST_MAIN_POSTGRES
#include "postgres/pg_support.hpp"

#include <cstdlib>
#include <iostream>
#endif

int main(int argc, char** argv) {
#ifdef CATALOG_TEST_MAIN_POSTGRES
  const auto named = [](const char* var) {
    const char* value = std::getenv(var);
    return value && *value;
  };
  if (named("CATALOG_PG_STATE") || named("CATALOG_PG_CONNINFO")) {
    const auto cluster = test::pg::find_cluster();
    if (!cluster.conninfo) {
      if (cluster.skip) {
        std::cout << "SKIPPED: " << cluster.reason << '\n';
        return 77;
      }
      std::cerr << "no PostgreSQL cluster: " << cluster.reason << '\n';
      return 1;
    }
  }
#endif
  return Catch::Session().run(argc, argv);
}
