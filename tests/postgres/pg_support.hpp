// The PostgreSQL cluster of the tests (started by the ctest fixture, tests/postgres/cluster.sh)
// and fresh schemas in it.
//
// Where the cluster is: CATALOG_PG_CONNINFO (libpq keywords), else the state file the fixture
// wrote, named by CATALOG_PG_STATE. The test programs' main (test_main.cpp) skips (exit 77) with
// the fixture's reason when the server binaries are absent, and fails when the cluster should be
// there but is not.
#ifndef CATALOG_TESTS_POSTGRES_PG_SUPPORT_HPP
#define CATALOG_TESTS_POSTGRES_PG_SUPPORT_HPP

#include <catalog/storage/postgres_backend.hpp>
#include <catalog/store.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace test::pg {

struct Cluster {
  std::optional<std::string> conninfo;  // set when the cluster is there
  std::string reason;                   // why not, otherwise
  bool skip = false;                    // the binaries are absent: skip rather than fail
};

inline Cluster find_cluster() {
  Cluster c;
  if (const char* conninfo = std::getenv("CATALOG_PG_CONNINFO"); conninfo && *conninfo) {
    c.conninfo = conninfo;
    return c;
  }
  const char* state = std::getenv("CATALOG_PG_STATE");
  if (!state || !*state) {
    c.reason = "neither CATALOG_PG_CONNINFO nor CATALOG_PG_STATE is set (ctest sets the latter: "
               "run through ctest, which starts the cluster)";
    return c;
  }
  std::ifstream in(state);
  if (!in) {
    c.reason = std::string("no cluster state in ") + state + " (did the fixture run?)";
    return c;
  }
  std::string line, status;
  while (std::getline(in, line)) {
    if (line.rfind("status=", 0) == 0) status = line.substr(7);
    if (line.rfind("conninfo=", 0) == 0) c.conninfo = line.substr(9);
    if (line.rfind("reason=", 0) == 0) c.reason = line.substr(7);
  }
  if (status == "absent") {
    c.skip = true;
    c.conninfo.reset();
  } else if (status != "ready" || !c.conninfo) {
    c.conninfo.reset();
    c.reason = std::string("unreadable cluster state in ") + state;
  }
  return c;
}

/// The conninfo of the cluster. REQUIRES: main checked that it is there.
inline const std::string& conninfo() {
  static const std::string value = [] {
    auto c = find_cluster();
    if (!c.conninfo) throw std::runtime_error("no PostgreSQL cluster: " + c.reason);
    return *c.conninfo;
  }();
  return value;
}

/// A schema name no other test (or test program) uses.
inline std::string fresh_schema_name(std::string_view prefix = "t") {
  static std::atomic<int> counter{0};
  return std::string(prefix) + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

/// A schema made for one test, dropped (with the catalog in it) when the test ends.
class Schema {
 public:
  explicit Schema(std::string name = fresh_schema_name()) : name_(std::move(name)) {}
  ~Schema() { (void)catalog::storage::PostgresBackend::drop_schema(conninfo(), name_); }
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;

  const std::string& name() const { return name_; }
  catalog::storage::PostgresOptions options() const {
    catalog::storage::PostgresOptions o;
    o.schema = name_;
    return o;
  }

 private:
  std::string name_;
};

}  // namespace test::pg

#endif  // CATALOG_TESTS_POSTGRES_PG_SUPPORT_HPP
