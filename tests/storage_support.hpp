// Helpers of the storage tests: results, transactions, scans, and the fixture every contract test
// runs in (`Contract<On>`, where `On` holds the backend in `db`). Included by storage_test.cpp
// (memory and LMDB) and by postgres/postgres_storage_test.cpp.
#ifndef CATALOG_TESTS_STORAGE_SUPPORT_HPP
#define CATALOG_TESTS_STORAGE_SUPPORT_HPP

#include <catalog/storage/backend.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/storage/memory_backend.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using namespace std::string_literals;
using catalog::Errc;
using catalog::Result;
using catalog::storage::Backend;
using catalog::storage::Cursor;
using catalog::storage::Direction;
using catalog::storage::Durability;
using catalog::storage::LmdbBackend;
using catalog::storage::LmdbOptions;
using catalog::storage::MemoryBackend;
using catalog::storage::Mode;
using catalog::storage::prefix_range;
using catalog::storage::Range;
using catalog::storage::Transaction;

namespace storage_test {

// `prefix` followed by `n` in decimal. (Not `"k" + std::to_string(n)`: GCC 12 at -O3 warns
// -Wrestrict on that pattern, a known false positive.)
inline std::string numbered(std::string prefix, long long n) {
  prefix += std::to_string(n);
  return prefix;
}

using Entries = std::vector<std::pair<std::string, std::string>>;

// The value of a successful result; fails the test with the error's message otherwise.
template <class T>
T must(Result<T> result) {
  if (!result) {
    FAIL("unexpected error: " << result.error().message());
  }
  if constexpr (!std::is_void_v<T>) {
    return std::move(*result);
  }
}

template <class T>
Errc error_of(const Result<T>& result) {
  REQUIRE_FALSE(result.has_value());
  return result.error().code();
}

inline std::unique_ptr<Transaction> begin(Backend& db, Mode mode) { return must(db.begin(mode)); }

inline void write(Backend& db, const Entries& entries) {
  auto txn = begin(db, Mode::read_write);
  for (const auto& [key, value] : entries) {
    must(txn->put(key, value));
  }
  must(txn->commit());
}

inline std::optional<std::string> read(Backend& db, std::string_view key) {
  return must(begin(db, Mode::read_only)->get(key));
}

inline Entries collect(Transaction& txn, const Range& range, Direction dir) {
  Entries out;
  auto cursor = must(txn.scan(range, dir));
  for (; cursor->valid(); must(cursor->next())) {
    out.emplace_back(cursor->key(), cursor->value());
  }
  return out;
}

inline std::vector<std::string> keys_in(Transaction& txn, const Range& range, Direction dir) {
  std::vector<std::string> keys;
  for (auto& entry : collect(txn, range, dir)) {
    keys.push_back(std::move(entry.first));
  }
  return keys;
}

inline const Range everything{"", std::nullopt};

template <class On>
struct Contract : On {
  Backend& backend() { return *this->db; }
};

// Runs `body` in one write transaction and commits, starting over while the map is full or the
// transaction conflicted with another writer, as the store does. Counts the retries in `retries`.
template <class Body>
Result<void> write_with_retry(Backend& db, Body body, int& retries) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    auto txn = db.begin(Mode::read_write);
    if (!txn) {
      return txn.error();
    }
    Result<void> done = body(**txn);
    if (done) {
      done = (*txn)->commit();
    }
    if (done || (done.error().code() != Errc::storage_full &&
                 done.error().code() != Errc::storage_conflict)) {
      return done;
    }
    ++retries;
  }
  return catalog::fail(Errc::storage_full, "still failing after 64 attempts");
}

inline std::string pattern(std::size_t size, unsigned seed) {
  std::string s(size, '\0');
  unsigned x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return s;
}

}  // namespace storage_test

#endif  // CATALOG_TESTS_STORAGE_SUPPORT_HPP
