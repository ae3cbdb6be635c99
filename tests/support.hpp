// Shared test fixtures: a Store over each backend with an injected clock, temp directories,
// and a small catalog to build on.
#ifndef CATALOG_TESTS_SUPPORT_HPP
#define CATALOG_TESTS_SUPPORT_HPP

#include <catalog/json.hpp>
#include <catalog/store.hpp>

#ifdef CATALOG_TEST_ON_POSTGRES
#include <catalog/postgres.hpp>

#include "postgres/pg_support.hpp"
#endif

#include <boost/json.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace test {

namespace json = boost::json;

/// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("catalog-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A deterministic clock: starts at 2026-01-01T00:00:00Z and advances 1 ms per reading.
inline std::function<std::int64_t()> test_clock() {
  auto t = std::make_shared<std::atomic<std::int64_t>>(1767225600000);
  return [t] { return t->fetch_add(1); };
}

inline catalog::StoreOptions test_options() {
  catalog::StoreOptions o;
  o.admins = {"admin"};
  o.clock = test_clock();
  return o;
}

struct MemoryFixture {
  static constexpr const char* name = "memory";
  catalog::Store store = catalog::Store::in_memory(test_options()).value();
  catalog::Store reopen() { return std::move(store); }
};

struct LmdbFixture {
  static constexpr const char* name = "lmdb";
  TempDir dir;
  catalog::Store store = catalog::Store::open_lmdb(dir.path(), test_options()).value();
};

#ifdef CATALOG_TEST_ON_POSTGRES
/// A store in a fresh schema of the test cluster (postgres/pg_support.hpp), dropped at the end.
struct PostgresFixture {
  static constexpr const char* name = "postgres";
  pg::Schema schema;  // declared first: dropped after the store closes
  catalog::Store store =
      catalog::open_postgres(pg::conninfo(), test_options(), schema.options()).value();
};
#endif

/// The fixtures the Store suites run on: memory and LMDB, and PostgreSQL in the suites that
/// tests/CMakeLists.txt compiles with CATALOG_TEST_ON_POSTGRES (their PostgreSQL cases run as
/// ctest <suite>_postgres_test, against the cluster; the others as <suite>_test).
#ifdef CATALOG_TEST_ON_POSTGRES
#define CATALOG_STORE_FIXTURES test::MemoryFixture, test::LmdbFixture, test::PostgresFixture
#else
#define CATALOG_STORE_FIXTURES test::MemoryFixture, test::LmdbFixture
#endif

/// The id of an entity document, as text and as a Uuid; its version as the wire writes it.
inline std::string id_of(const json::object& o) { return std::string(o.at("id").as_string()); }
inline catalog::Uuid uuid_of(const json::object& o) {
  return catalog::parse_uuid(id_of(o)).value();
}
inline std::string version_of(const json::object& o) {
  return catalog::json::serialize(o.at("version"));
}

inline json::value parse(std::string_view text) { return catalog::json::parse(text).value(); }

/// Every key and value of the backend, to compare a store before and after a refused operation.
inline std::string dump(catalog::Store& store) {
  auto txn = store.backend().begin(catalog::storage::Mode::read_only).value();
  auto cursor = txn->scan(catalog::storage::Range{}, catalog::storage::Direction::forward).value();
  std::string out;
  while (cursor->valid()) {
    out += std::to_string(cursor->key().size()) + ":" + std::string(cursor->key()) + "=" +
           std::to_string(cursor->value().size()) + ":" + std::string(cursor->value()) + "\n";
    (void)cursor->next();
  }
  return out;
}

/// An authorizer that records every call (operations, resource kind, resource owners) and
/// refuses one operation when told to. Thread-safe.
class RecordingAuthorizer final : public catalog::Authorizer {
 public:
  struct Call {
    std::vector<catalog::Operation> ops;
    catalog::Kind kind;
    std::size_t owners;
  };
  void deny(std::optional<catalog::Operation> op) {
    std::lock_guard lock(mutex_);
    deny_ = op;
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  catalog::Result<void> authorize(const catalog::Principal&,
                                  std::span<const catalog::Operation> ops,
                                  const catalog::Resource& what) const override {
    auto owners = what.owners();
    std::lock_guard lock(mutex_);
    calls_.push_back({{ops.begin(), ops.end()}, what.kind(), owners ? owners->size() : 0});
    for (auto op : ops)
      if (deny_ && op == *deny_)
        return catalog::fail(catalog::Errc::forbidden,
                             "Principal may not " + std::string(catalog::operation_name(op)));
    return {};
  }

 private:
  mutable std::mutex mutex_;
  mutable std::vector<Call> calls_;
  std::optional<catalog::Operation> deny_;
};

}  // namespace test

#endif
