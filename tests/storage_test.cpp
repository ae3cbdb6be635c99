// The storage contract, run against every backend, then the LMDB-only behaviour: map growth,
// durability modes, sharing and persistence of environments, and other processes.
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

namespace {

// `prefix` followed by `n` in decimal. (Not `"k" + std::to_string(n)`: GCC 12 at -O3 warns
// -Wrestrict on that pattern, a known false positive.)
std::string numbered(std::string prefix, long long n) {
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

std::unique_ptr<Transaction> begin(Backend& db, Mode mode) { return must(db.begin(mode)); }

void write(Backend& db, const Entries& entries) {
  auto txn = begin(db, Mode::read_write);
  for (const auto& [key, value] : entries) {
    must(txn->put(key, value));
  }
  must(txn->commit());
}

std::optional<std::string> read(Backend& db, std::string_view key) {
  return must(begin(db, Mode::read_only)->get(key));
}

Entries collect(Transaction& txn, const Range& range, Direction dir) {
  Entries out;
  auto cursor = must(txn.scan(range, dir));
  for (; cursor->valid(); must(cursor->next())) {
    out.emplace_back(cursor->key(), cursor->value());
  }
  return out;
}

std::vector<std::string> keys_in(Transaction& txn, const Range& range, Direction dir) {
  std::vector<std::string> keys;
  for (auto& entry : collect(txn, range, dir)) {
    keys.push_back(std::move(entry.first));
  }
  return keys;
}

const Range everything{"", std::nullopt};

using test::TempDir;

std::unique_ptr<LmdbBackend> open_lmdb(const std::filesystem::path& dir, LmdbOptions options = {}) {
  return must(LmdbBackend::open(dir, options));
}

// The backends the contract runs on.
struct OnMemory {
  std::unique_ptr<Backend> db = std::make_unique<MemoryBackend>();
};

struct OnLmdb {
  TempDir dir;  // declared first: removed after the backend closes
  std::unique_ptr<Backend> db = open_lmdb(dir.path());
};

template <class On>
struct Contract : On {
  Backend& backend() { return *this->db; }
};

// Runs `body` in one write transaction and commits, starting over while the map is full, as the
// store does. Counts the retries in `retries`.
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
    if (done || done.error().code() != Errc::storage_full) {
      return done;
    }
    ++retries;
  }
  return catalog::fail(Errc::storage_full, "still full after 64 attempts");
}

std::string pattern(std::size_t size, unsigned seed) {
  std::string s(size, '\0');
  unsigned x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return s;
}

}  // namespace

TEST_CASE("prefix_range bounds every key with the prefix", "[storage]") {
  CHECK(prefix_range("").begin == "");
  CHECK_FALSE(prefix_range("").end);
  CHECK(prefix_range("a").end == "b"s);
  CHECK(prefix_range("a\xff").begin == "a\xff"s);
  CHECK(prefix_range("a\xff").end == "b"s);
  CHECK(prefix_range("ab\xff\xff").end == "ac"s);
  CHECK(prefix_range("a\x00"s).end == "a\x01"s);
  CHECK(prefix_range("\xfe\xff").end == "\xff"s);
  CHECK_FALSE(prefix_range("\xff").end);
  CHECK_FALSE(prefix_range("\xff\xff").end);
}

TEST_CASE("check_key refuses empty and oversized keys", "[storage]") {
  CHECK(catalog::storage::check_key("k").has_value());
  CHECK(catalog::storage::check_key(std::string(511, 'k')).has_value());
  CHECK(error_of(catalog::storage::check_key("")) == Errc::invalid_value);
  CHECK(error_of(catalog::storage::check_key(std::string(512, 'k'))) == Errc::key_too_long);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a transaction sees its own writes", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}, {"c", "3"}});

  auto txn = begin(db, Mode::read_write);
  must(txn->put("b", "2"));
  must(txn->put("c", "three"));
  CHECK(must(txn->erase("a")));
  CHECK(must(txn->get("b")) == "2"s);
  CHECK(must(txn->get("c")) == "three"s);
  CHECK_FALSE(must(txn->get("a")));
  CHECK(collect(*txn, everything, Direction::forward) == Entries{{"b", "2"}, {"c", "three"}});
  CHECK(collect(*txn, everything, Direction::reverse) == Entries{{"c", "three"}, {"b", "2"}});
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a transaction ended without commit rolls back", "[storage]",
                          OnMemory, OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"kept", "1"}});
  {
    auto txn = begin(db, Mode::read_write);
    must(txn->put("lost", "2"));
    CHECK(must(txn->erase("kept")));
  }
  CHECK(read(db, "kept") == "1"s);
  CHECK_FALSE(read(db, "lost"));

  SECTION("a read-only commit just ends the transaction") {
    auto txn = begin(db, Mode::read_only);
    CHECK(must(txn->get("kept")) == "1"s);
    must(txn->commit());
    CHECK(error_of(txn->get("kept")) == Errc::storage);
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a failed write kills the transaction", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}});
  auto txn = begin(db, Mode::read_write);
  must(txn->put("b", "2"));

  Errc expected{};
  SECTION("key too long") {
    expected = Errc::key_too_long;
    CHECK(error_of(txn->put(std::string(512, 'k'), "v")) == expected);
  }
  SECTION("empty key") {
    expected = Errc::invalid_value;
    CHECK(error_of(txn->erase("")) == expected);
  }
  CHECK(error_of(txn->get("a")) == expected);
  CHECK(error_of(txn->put("c", "3")) == expected);
  CHECK(error_of(txn->erase("a")) == expected);
  CHECK(error_of(txn->scan(everything, Direction::forward)) == expected);
  CHECK(error_of(txn->commit()) == expected);
  txn.reset();

  auto after = begin(db, Mode::read_only);
  CHECK(collect(*after, everything, Direction::forward) == Entries{{"a", "1"}});
}

TEMPLATE_TEST_CASE_METHOD(Contract, "writes in a read-only transaction fail", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}});
  auto txn = begin(db, Mode::read_only);
  CHECK(error_of(txn->put("b", "2")) == Errc::storage);
  CHECK(error_of(txn->get("a")) == Errc::storage);
  CHECK_FALSE(read(db, "b"));
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a committed transaction refuses further calls", "[storage]",
                          OnMemory, OnLmdb) {
  Backend& db = this->backend();
  auto txn = begin(db, Mode::read_write);
  must(txn->put("a", "1"));
  must(txn->commit());
  CHECK(error_of(txn->put("b", "2")) == Errc::storage);
  CHECK(error_of(txn->commit()) == Errc::storage);
  txn.reset();
  CHECK(read(db, "a") == "1"s);
  CHECK_FALSE(read(db, "b"));
}

TEMPLATE_TEST_CASE_METHOD(Contract, "readers see a snapshot while a writer works", "[storage]",
                          OnMemory, OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "old"}, {"b", "old"}});

  auto before = begin(db, Mode::read_only);
  auto writer = begin(db, Mode::read_write);
  must(writer->put("a", "new"));
  must(writer->put("c", "new"));
  CHECK(must(writer->erase("b")));

  // A reader begun while the writer is open is not blocked and sees only committed data.
  auto during = begin(db, Mode::read_only);
  CHECK(must(during->get("a")) == "old"s);
  must(writer->commit());

  const Entries old_state{{"a", "old"}, {"b", "old"}};
  CHECK(must(before->get("a")) == "old"s);
  CHECK_FALSE(must(before->get("c")));
  CHECK(collect(*before, everything, Direction::forward) == old_state);
  CHECK(collect(*during, everything, Direction::forward) == old_state);

  auto after = begin(db, Mode::read_only);
  CHECK(collect(*after, everything, Direction::forward) == Entries{{"a", "new"}, {"c", "new"}});
}

TEMPLATE_TEST_CASE_METHOD(Contract, "scans cover exactly their half-open range", "[storage]",
                          OnMemory, OnLmdb) {
  Backend& db = this->backend();
  const std::set<std::string> keys{
      "\x00"s,    "\x00\x00"s,   "\x00\xff"s,           "a",    "a\x00"s, "a\xff", "a\xff\xff",
      "ab",       "b",           std::string(511, 'm'), "\x7f", "\x80",   "\xff",  "\xff\x00"s,
      "\xff\xff", "\xff\xff\xff"};
  Entries all;
  for (const auto& key : keys) {
    all.emplace_back(key, "v" + key);
  }
  write(db, all);

  const std::vector<std::string> bounds{"",
                                        "\x00"s,
                                        "\x00\x00\x00"s,
                                        "a",
                                        "a\xff",
                                        "a\xff\xff\xff",
                                        "b",
                                        "c",
                                        std::string(511, 'm'),
                                        std::string(600, 'm'),  // longer than any key
                                        "\x7f\xff",
                                        "\xff",
                                        "\xff\xff",
                                        "\xff\xff\xff\xff"};
  std::vector<std::optional<std::string>> ends(bounds.begin(), bounds.end());
  ends.push_back(std::nullopt);

  auto txn = begin(db, Mode::read_only);
  for (const auto& low : bounds) {
    for (const auto& high : ends) {
      std::vector<std::string> expected;
      for (const auto& key : keys) {
        if (key >= low && (!high || key < *high)) {
          expected.push_back(key);
        }
      }
      const Range range{low, high};
      INFO("range [" << low.size() << " bytes, " << (high ? high->size() : 0) << " bytes)");
      CHECK(keys_in(*txn, range, Direction::forward) == expected);
      std::reverse(expected.begin(), expected.end());
      CHECK(keys_in(*txn, range, Direction::reverse) == expected);
    }
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "scan edge cases", "[storage]", OnMemory, OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"\x00"s, "zero"},
             {"a", "1"},
             {"a\xff", "2"},
             {"a\xff\x01", "3"},
             {"b", "4"},
             {"\xff\xff", "5"},
             {"\xff\xff\xff", "6"}});
  auto txn = begin(db, Mode::read_only);
  using Keys = std::vector<std::string>;
  for (auto dir : {Direction::forward, Direction::reverse}) {
    CHECK(keys_in(*txn, {"a", "a"s}, dir).empty());
    CHECK(keys_in(*txn, {"b", "a"s}, dir).empty());
    CHECK(keys_in(*txn, {"", ""s}, dir).empty());
    CHECK(keys_in(*txn, {"c", "\xff"s}, dir).empty());
  }
  CHECK(keys_in(*txn, everything, Direction::forward) ==
        Keys{"\x00"s, "a", "a\xff", "a\xff\x01", "b", "\xff\xff", "\xff\xff\xff"});
  CHECK(keys_in(*txn, everything, Direction::reverse) ==
        Keys{"\xff\xff\xff", "\xff\xff", "b", "a\xff\x01", "a\xff", "a", "\x00"s});
  CHECK(keys_in(*txn, prefix_range("\xff\xff"), Direction::forward) ==
        Keys{"\xff\xff", "\xff\xff\xff"});
  CHECK(keys_in(*txn, prefix_range("\xff\xff"), Direction::reverse) ==
        Keys{"\xff\xff\xff", "\xff\xff"});
  CHECK(keys_in(*txn, prefix_range("a\xff"), Direction::forward) == Keys{"a\xff", "a\xff\x01"});
  CHECK(keys_in(*txn, prefix_range("a\xff"), Direction::reverse) == Keys{"a\xff\x01", "a\xff"});
  CHECK(keys_in(*txn, {"", "a"s}, Direction::reverse) == Keys{"\x00"s});
  CHECK(keys_in(*txn, {"\x00"s, "\x00\x00"s}, Direction::forward) == Keys{"\x00"s});

  SECTION("an empty store") {
    auto fresh = begin(db, Mode::read_write);
    for (const auto& key : keys_in(*fresh, everything, Direction::forward)) {
      must(fresh->erase(key));
    }
    CHECK(keys_in(*fresh, everything, Direction::forward).empty());
    CHECK(keys_in(*fresh, everything, Direction::reverse).empty());
    CHECK(keys_in(*fresh, {"a", "z"s}, Direction::reverse).empty());
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a scan continues after its transaction writes", "[storage]",
                          OnMemory, OnLmdb) {
  Backend& db = this->backend();
  Entries entries;
  for (char c = 'a'; c <= 'j'; ++c) {
    entries.emplace_back(std::string(1, c), std::string(300, c));
  }
  write(db, entries);
  auto txn = begin(db, Mode::read_write);
  const auto dir = GENERATE(Direction::forward, Direction::reverse);

  SECTION("erasing every visited entry") {
    std::string visited;
    auto cursor = must(txn->scan({"b", "i"s}, dir));
    for (; cursor->valid(); must(cursor->next())) {
      visited += cursor->key();
      CHECK(must(txn->erase(cursor->key())));
    }
    CHECK(visited == (dir == Direction::forward ? "bcdefgh" : "hgfedcb"));
    CHECK(keys_in(*txn, everything, Direction::forward) == std::vector<std::string>{"a", "i", "j"});
  }
  SECTION("erasing the last entry of the store") {
    auto cursor = must(txn->scan(prefix_range(dir == Direction::forward ? "j" : "a"), dir));
    REQUIRE(cursor->valid());
    CHECK(must(txn->erase(cursor->key())));
    must(cursor->next());
    CHECK_FALSE(cursor->valid());
  }
  SECTION("inserting ahead of the cursor") {
    std::string visited;
    auto cursor = must(txn->scan(everything, dir));
    for (; cursor->valid(); must(cursor->next())) {
      visited += cursor->key().substr(0, 1);
      if (cursor->key() == "e") {
        must(txn->put("c2", "new"));
        must(txn->put("g2", "new"));
        must(txn->put("e", "changed"));
      }
    }
    CHECK(visited == (dir == Direction::forward ? "abcdefgghij" : "jihgfedccba"));
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "cursors die with their transaction", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}, {"b", "2"}});
  const auto mode = GENERATE(Mode::read_only, Mode::read_write);
  auto txn = begin(db, mode);
  auto first = must(txn->scan(everything, Direction::forward));
  auto second = must(txn->scan(everything, Direction::reverse));
  auto closed_early = must(txn->scan(everything, Direction::forward));
  closed_early.reset();
  REQUIRE(first->valid());
  CHECK(first->key() == "a");
  CHECK(first->value() == "1");
  CHECK(second->key() == "b");

  SECTION("by commit") { must(txn->commit()); }
  SECTION("by destruction") { txn.reset(); }
  CHECK_FALSE(first->valid());
  CHECK_FALSE(second->valid());
  CHECK(error_of(first->next()) == Errc::storage);
  first.reset();
  txn.reset();
  second.reset();
}

TEMPLATE_TEST_CASE_METHOD(Contract, "erase reports whether the key existed", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}});
  auto txn = begin(db, Mode::read_write);
  CHECK(must(txn->erase("a")));
  CHECK_FALSE(must(txn->erase("a")));
  CHECK_FALSE(must(txn->erase("never")));
  must(txn->commit());
  CHECK_FALSE(read(db, "a"));
}

TEMPLATE_TEST_CASE_METHOD(Contract, "keys are limited to 511 bytes", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  const std::string longest(511, '\xee');
  const std::string too_long(512, '\xee');
  write(db, {{longest, "fits"}});
  CHECK(read(db, longest) == "fits"s);

  auto txn = begin(db, Mode::read_only);
  CHECK(error_of(txn->get(too_long)) == Errc::key_too_long);
  CHECK(error_of(txn->get("")) == Errc::invalid_value);
  CHECK(must(txn->get(longest)) == "fits"s);  // a failed get does not kill a transaction
  txn.reset();

  auto writer = begin(db, Mode::read_write);
  CHECK(error_of(writer->put(too_long, "no")) == Errc::key_too_long);
  writer.reset();
  CHECK(collect(*begin(db, Mode::read_only), everything, Direction::forward) ==
        Entries{{longest, "fits"}});
}

TEMPLATE_TEST_CASE_METHOD(Contract, "large and empty values round trip", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  const std::string big = pattern(5 << 20, 1);
  const std::string bigger = pattern(7 << 20, 2);
  write(db, {{"big", big}, {"empty", ""}, {"bigger", bigger}});
  auto txn = begin(db, Mode::read_only);
  CHECK(must(txn->get("big")) == big);
  CHECK(must(txn->get("bigger")) == bigger);
  CHECK(must(txn->get("empty")) == ""s);
  auto cursor = must(txn->scan(everything, Direction::forward));
  REQUIRE(cursor->valid());
  CHECK(cursor->value() == big);
  txn.reset();
  cursor.reset();

  write(db, {{"big", "small now"}});
  CHECK(read(db, "big") == "small now"s);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "readers on several threads see consistent snapshots",
                          "[storage]", OnMemory, OnLmdb) {
  Backend& db = this->backend();
  Entries entries;
  for (int i = 0; i < 100; ++i) {
    entries.emplace_back(numbered("k", 1000 + i), "0");
  }
  write(db, entries);

  // The writer sets every key to the same new value in each transaction, so a reader that
  // saw two different values would have seen a torn state.
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (int round = 1; round <= 30; ++round) {
      auto txn = db.begin(Mode::read_write);
      bool ok = txn.has_value();
      for (int i = 0; ok && i < 100; ++i) {
        ok = (*txn)->put(numbered("k", 1000 + i), std::to_string(round)).has_value();
      }
      if (!ok || !(*txn)->commit()) {
        ++failures;
      }
    }
    stop = true;
  });
  std::vector<std::thread> readers;
  std::atomic<int> reads{0};
  for (int t = 0; t < 6; ++t) {
    readers.emplace_back([&] {
      do {
        auto txn = db.begin(Mode::read_only);
        if (!txn) {
          ++failures;
          return;
        }
        auto cursor = (*txn)->scan(prefix_range("k"), Direction::forward);
        if (!cursor) {
          ++failures;
          return;
        }
        std::set<std::string> values;
        int count = 0;
        for (; (*cursor)->valid(); (void)(*cursor)->next()) {
          values.emplace((*cursor)->value());
          ++count;
        }
        auto one = (*txn)->get("k1050");
        if (count != 100 || values.size() != 1 || !one || *one != *values.begin()) {
          ++failures;
        }
        ++reads;
      } while (!stop);
    });
  }
  writer.join();
  for (auto& reader : readers) {
    reader.join();
  }
  CHECK(failures == 0);
  CHECK(reads >= 6);
  CHECK(read(db, "k1099") == "30"s);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "writers on several threads take turns", "[storage]", OnMemory,
                          OnLmdb) {
  Backend& db = this->backend();
  write(db, {{"counter", "0"}});
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto txn = db.begin(Mode::read_write);
        if (!txn) {
          ++failures;
          return;
        }
        auto value = (*txn)->get("counter");
        if (!value || !*value || !(*txn)->put("counter", std::to_string(std::stoi(**value) + 1)) ||
            !(*txn)->commit()) {
          ++failures;
        }
      }
    });
  }
  for (auto& writer : writers) {
    writer.join();
  }
  CHECK(failures == 0);
  CHECK(read(db, "counter") == "100"s);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "random transactions agree with a model", "[storage]", OnMemory,
                          OnLmdb) {
  // Random puts, erases, gets and scans (some erasing or rewriting what they visit) in write
  // transactions that commit or roll back, checked against a std::map. Few distinct keys, so
  // writes keep hitting keys that exist, were erased, or were written earlier in the transaction.
  Backend& db = this->backend();
  using Model = std::map<std::string, std::string>;
  std::mt19937 rng(GENERATE(1u, 2u, 3u));
  auto below = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
  auto random_key = [&] {
    static const char alphabet[] = {'a', 'b', '\x00', '\xff'};
    std::string key(1 + below(3), 'a');
    for (auto& c : key) {
      c = alphabet[below(4)];
    }
    return key;
  };
  auto slice = [](const Model& model, const Range& range, Direction dir) {
    Entries out;
    for (const auto& [key, value] : model) {
      if (key >= range.begin && (!range.end || key < *range.end)) {
        out.emplace_back(key, value);
      }
    }
    if (dir == Direction::reverse) {
      std::reverse(out.begin(), out.end());
    }
    return out;
  };
  auto random_range = [&] {
    Range range{below(4) == 0 ? std::string() : random_key(), std::nullopt};
    if (below(3) != 0) {
      range.end = random_key();
    }
    return range;
  };

  Model committed;
  for (int round = 0; round < 40; ++round) {
    INFO("round " << round);
    // Sometimes a reader holds the current state across the commit, sometimes none does.
    std::unique_ptr<Transaction> reader;
    if (below(2) == 0) {
      reader = begin(db, Mode::read_only);
    }
    auto txn = begin(db, Mode::read_write);
    const Model before = committed;
    Model model = committed;
    for (int op = 0; op < 30; ++op) {
      const auto dir = below(2) == 0 ? Direction::forward : Direction::reverse;
      switch (below(6)) {
      case 0:
      case 1: {
        const std::string key = random_key();
        const std::string value = std::to_string(below(1000));
        must(txn->put(key, value));
        model[key] = value;
        break;
      }
      case 2: {
        const std::string key = random_key();
        CHECK(must(txn->erase(key)) == (model.erase(key) == 1));
        break;
      }
      case 3: {
        const std::string key = random_key();
        const auto it = model.find(key);
        CHECK(must(txn->get(key)) ==
              (it == model.end() ? std::nullopt : std::optional<std::string>(it->second)));
        break;
      }
      case 4: {
        const Range range = random_range();
        CHECK(collect(*txn, range, dir) == slice(model, range, dir));
        break;
      }
      case 5: {
        // Erasing or rewriting the visited entry leaves the rest of the scan as it was.
        const Range range = random_range();
        const Entries expected = slice(model, range, dir);
        Entries visited;
        auto cursor = must(txn->scan(range, dir));
        for (; cursor->valid(); must(cursor->next())) {
          visited.emplace_back(cursor->key(), cursor->value());
          const std::string key(cursor->key());
          if (below(2) == 0) {
            CHECK(must(txn->erase(key)));
            model.erase(key);
          } else if (below(2) == 0) {
            must(txn->put(key, "rewritten"));
            model[key] = "rewritten";
          }
        }
        CHECK(visited == expected);
        break;
      }
      }
    }
    CHECK(collect(*txn, everything, Direction::forward) ==
          slice(model, everything, Direction::forward));
    if (below(3) != 0) {
      must(txn->commit());
      committed = std::move(model);
    } else {
      txn.reset();
    }
    if (reader) {
      CHECK(collect(*reader, everything, Direction::reverse) ==
            slice(before, everything, Direction::reverse));
    }
    reader.reset();
    auto after = begin(db, Mode::read_only);
    CHECK(collect(*after, everything, Direction::forward) ==
          slice(committed, everything, Direction::forward));
  }
}

// Memory only. A write transaction keeps its changes apart until commit, which changes the map in
// place when no reader holds it and otherwise copies it. Where an entry's value lives tells the
// two apart: in place, an entry the commit did not touch keeps its value's bytes where they were.

namespace {

// A value too long for the small-string buffer, so its bytes live in their own allocation.
std::string long_value(char c) { return std::string(64, c); }

// Where the value stored at `key` lives, as a read transaction begun now sees it.
std::uintptr_t value_address(Backend& db, std::string_view key) {
  auto txn = begin(db, Mode::read_only);
  auto cursor = must(txn->scan(prefix_range(key), Direction::forward));
  REQUIRE(cursor->valid());
  REQUIRE(cursor->key() == key);
  return reinterpret_cast<std::uintptr_t>(cursor->value().data());
}

}  // namespace

TEST_CASE("memory: with no reader open, a commit changes the map in place", "[storage][memory]") {
  MemoryBackend db;
  write(db, {{"a", long_value('a')}, {"b", long_value('b')}, {"c", long_value('c')}});
  const auto before = value_address(db, "a");

  auto txn = begin(db, Mode::read_write);
  must(txn->put("b", long_value('B')));
  must(txn->put("bb", long_value('N')));
  CHECK(must(txn->erase("c")));
  must(txn->commit());

  CHECK(value_address(db, "a") == before);
  auto after = begin(db, Mode::read_only);
  CHECK(collect(*after, everything, Direction::forward) ==
        Entries{{"a", long_value('a')}, {"b", long_value('B')}, {"bb", long_value('N')}});
}

TEST_CASE("memory: a reader open at commit keeps its snapshot", "[storage][memory]") {
  MemoryBackend db;
  write(db, {{"a", long_value('a')}, {"b", long_value('b')}, {"c", long_value('c')}});
  const Entries old_state{{"a", long_value('a')}, {"b", long_value('b')}, {"c", long_value('c')}};

  auto reader = begin(db, Mode::read_only);
  auto cursor = must(reader->scan(everything, Direction::forward));
  REQUIRE(cursor->valid());
  const std::string_view held_key = cursor->key();
  const std::string_view held_value = cursor->value();

  // Two commits while the reader is open: each copies the map rather than change it under the
  // reader, and the second copies the first's result, not the reader's snapshot.
  write(db, {{"a", long_value('A')}, {"d", long_value('d')}});
  auto txn = begin(db, Mode::read_write);
  CHECK(must(txn->erase("b")));
  must(txn->commit());

  // The reader's views, cursor and reads are all as before.
  CHECK(held_key == "a");
  CHECK(held_value == long_value('a'));
  must(cursor->next());
  REQUIRE(cursor->valid());
  CHECK(cursor->key() == "b");
  CHECK(cursor->value() == long_value('b'));
  CHECK(must(reader->get("a")) == long_value('a'));
  CHECK_FALSE(must(reader->get("d")));
  CHECK(collect(*reader, everything, Direction::reverse) ==
        Entries(old_state.rbegin(), old_state.rend()));

  const Entries new_state{{"a", long_value('A')}, {"c", long_value('c')}, {"d", long_value('d')}};
  // The store moved on to a copy: even the entry no commit touched lives elsewhere now.
  auto reader_c = must(reader->scan(prefix_range("c"), Direction::forward));
  REQUIRE(reader_c->valid());
  CHECK(value_address(db, "c") != reinterpret_cast<std::uintptr_t>(reader_c->value().data()));
  reader_c.reset();
  CHECK(collect(*begin(db, Mode::read_only), everything, Direction::forward) == new_state);

  // Once the reader is gone, commits are in place again.
  cursor.reset();
  reader.reset();
  const auto before = value_address(db, "c");
  write(db, {{"e", long_value('e')}});
  CHECK(value_address(db, "c") == before);
  auto after = begin(db, Mode::read_only);
  CHECK(must(after->get("e")) == long_value('e'));
  CHECK(must(after->get("a")) == long_value('A'));
}

TEST_CASE("memory: a write transaction that changes nothing copies nothing", "[storage][memory]") {
  MemoryBackend db;
  write(db, {{"a", long_value('a')}, {"b", long_value('b')}});

  // A reader stays open, so a commit with changes would have to copy the map.
  auto reader = begin(db, Mode::read_only);
  auto cursor = must(reader->scan(everything, Direction::forward));
  REQUIRE(cursor->valid());
  const auto held = reinterpret_cast<std::uintptr_t>(cursor->value().data());

  auto txn = begin(db, Mode::read_write);
  CHECK(must(txn->get("a")) == long_value('a'));
  CHECK(keys_in(*txn, everything, Direction::reverse) == std::vector<std::string>{"b", "a"});
  CHECK_FALSE(must(txn->erase("missing")));
  must(txn->put("new", "x"));
  CHECK(must(txn->erase("new")));  // written then erased: nothing left to publish
  must(txn->commit());

  CHECK(value_address(db, "a") == held);
  CHECK(collect(*begin(db, Mode::read_only), everything, Direction::forward) ==
        Entries{{"a", long_value('a')}, {"b", long_value('b')}});
}

TEST_CASE("memory: a transaction may outlive its backend", "[storage][memory]") {
  auto db = std::make_unique<MemoryBackend>();
  write(*db, {{"a", "1"}});
  auto reader = begin(*db, Mode::read_only);
  auto writer = begin(*db, Mode::read_write);
  db.reset();
  must(writer->put("b", "2"));
  CHECK(keys_in(*writer, everything, Direction::forward) == std::vector<std::string>{"a", "b"});
  must(writer->commit());
  CHECK(keys_in(*reader, everything, Direction::forward) == std::vector<std::string>{"a"});
}

// LMDB only.

TEST_CASE("lmdb: the map grows on demand and nothing is lost", "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  const std::size_t value_size = 256 << 10;
  const int count = 32;  // 8 MiB in all
  int retries = 0;
  {
    auto db = open_lmdb(dir.path(), options);
    CHECK(db->map_size() == std::size_t{1} << 20);
    for (int i = 0; i < count; ++i) {
      auto done = write_with_retry(
          *db,
          [&](Transaction& txn) {
            return txn.put(numbered("v", 100 + i), pattern(value_size, i));
          },
          retries);
      REQUIRE(done.has_value());
    }
    CHECK(retries >= 3);  // 1 MiB doubled at least three times to hold 8 MiB
    CHECK(db->map_size() >= std::size_t{8} << 20);
    CHECK(db->map_size() <= std::size_t{32} << 20);
  }

  // Reopened with the small initial size: the data is all there, and writing needs no retry.
  auto db = open_lmdb(dir.path(), options);
  CHECK(db->map_size() > std::size_t{8} << 20);
  auto txn = begin(*db, Mode::read_only);
  int seen = 0;
  for (const auto& [key, value] : collect(*txn, prefix_range("v"), Direction::forward)) {
    CHECK(value == pattern(value_size, std::stoi(key.substr(1)) - 100));
    ++seen;
  }
  CHECK(seen == count);
  txn.reset();
  retries = 0;
  REQUIRE(
      write_with_retry(
          *db, [&](Transaction& txn) { return txn.put("after", pattern(value_size, 99)); }, retries)
          .has_value());
  CHECK(retries == 0);
}

TEST_CASE("lmdb: the map grows while other threads read", "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  auto db = open_lmdb(dir.path(), options);
  write(*db, {{"marker", "m"}});

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        auto txn = db->begin(Mode::read_only);
        auto marker = txn ? (*txn)->get("marker") : Result<std::optional<std::string>>(txn.error());
        if (!marker || *marker != "m"s) {
          ++failures;
        }
      }
    });
  }
  int retries = 0;
  for (int i = 0; i < 16; ++i) {
    auto done = write_with_retry(
        *db,
        [&](Transaction& txn) { return txn.put(numbered("v", i), pattern(256 << 10, i)); },
        retries);
    CHECK(done.has_value());
  }
  stop = true;
  for (auto& reader : readers) {
    reader.join();
  }
  CHECK(failures == 0);
  CHECK(retries >= 2);
  CHECK(read(*db, "v15") == pattern(256 << 10, 15));
}

TEST_CASE("lmdb: a full map at its maximum size fails with storage_full", "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  options.max_map_size = 1 << 20;
  auto db = open_lmdb(dir.path(), options);
  write(*db, {{"kept", "1"}});

  auto txn = begin(*db, Mode::read_write);
  must(txn->put("small", "2"));
  CHECK(error_of(txn->put("huge", pattern(2 << 20, 3))) == Errc::storage_full);
  CHECK(error_of(txn->get("kept")) == Errc::storage_full);
  CHECK(error_of(txn->put("other", "x")) == Errc::storage_full);
  CHECK(error_of(txn->commit()) == Errc::storage_full);
  txn.reset();

  // The next writer cannot grow past the maximum but still begins, and small writes still fit.
  auto again = begin(*db, Mode::read_write);
  CHECK(error_of(again->put("huge", pattern(2 << 20, 3))) == Errc::storage_full);
  again.reset();
  CHECK(error_of(db->grow()) == Errc::storage_full);
  write(*db, {{"small", "2"}});
  auto check = begin(*db, Mode::read_only);
  CHECK(collect(*check, everything, Direction::forward) == Entries{{"kept", "1"}, {"small", "2"}});
}

TEST_CASE("lmdb: grow doubles the map up to the maximum", "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  options.max_map_size = 3 << 20;
  auto db = open_lmdb(dir.path(), options);
  must(db->grow());
  CHECK(db->map_size() == std::size_t{2} << 20);
  must(db->grow());
  CHECK(db->map_size() == std::size_t{3} << 20);
  CHECK(error_of(db->grow()) == Errc::storage_full);
  write(*db, {{"a", pattern(2 << 20, 4)}});
  CHECK(read(*db, "a") == pattern(2 << 20, 4));
}

TEST_CASE("lmdb: every durability mode opens, writes and persists", "[storage][lmdb]") {
  const auto durability = GENERATE(Durability::sync, Durability::no_meta_sync, Durability::no_sync);
  TempDir dir;
  LmdbOptions options;
  options.durability = durability;
  {
    auto db = open_lmdb(dir.path(), options);
    write(*db, {{"a", "1"}});
    write(*db, {{"b", "2"}});
  }
  auto db = open_lmdb(dir.path(), options);
  CHECK(collect(*begin(*db, Mode::read_only), everything, Direction::forward) ==
        Entries{{"a", "1"}, {"b", "2"}});
}

TEST_CASE("lmdb: data persists across close and reopen", "[storage][lmdb]") {
  TempDir dir;
  {
    auto db = open_lmdb(dir.path());
    write(*db, {{"a", "1"}, {"b", "2"}});
    auto uncommitted = begin(*db, Mode::read_write);
    must(uncommitted->put("c", "3"));
  }
  CHECK(std::filesystem::exists(dir.path() / "data.mdb"));
  {
    auto db = open_lmdb(dir.path());
    CHECK(collect(*begin(*db, Mode::read_only), everything, Direction::forward) ==
          Entries{{"a", "1"}, {"b", "2"}});
    write(*db, {{"c", "3"}});
  }
  auto db = open_lmdb(dir.path());
  CHECK(read(*db, "c") == "3"s);
}

TEST_CASE("lmdb: one directory opened twice shares one environment", "[storage][lmdb]") {
  TempDir dir;
  auto first = open_lmdb(dir.path());
  auto second = open_lmdb(dir.path() / "sub" / "..");  // another spelling of the same directory
  write(*first, {{"a", "1"}});
  CHECK(read(*second, "a") == "1"s);

  // One environment: growth through one is seen by the other, and a reader of one keeps its
  // snapshot while the other writes.
  must(first->grow());
  CHECK(second->map_size() == first->map_size());
  auto reader = begin(*second, Mode::read_only);
  write(*first, {{"a", "2"}});
  CHECK(must(reader->get("a")) == "1"s);
  reader.reset();

  first.reset();
  write(*second, {{"b", "3"}});
  CHECK(read(*second, "a") == "2"s);
  CHECK(read(*second, "b") == "3"s);
}

TEST_CASE("lmdb: a transaction may outlive its backend", "[storage][lmdb]") {
  TempDir dir;
  auto db = open_lmdb(dir.path());
  write(*db, {{"a", "1"}});
  auto txn = begin(*db, Mode::read_write);
  db.reset();
  must(txn->put("b", "2"));
  must(txn->commit());
  txn.reset();
  db = open_lmdb(dir.path());
  CHECK(read(*db, "b") == "2"s);
}

TEST_CASE("lmdb: open refuses a path that is not a directory", "[storage][lmdb]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const auto file = dir.path() / "file";
  std::ofstream(file) << "not a directory";
  CHECK(error_of(LmdbBackend::open(file)) == Errc::storage);
}

namespace {

// Runs `child` in a forked process and returns its exit status (0 on success). The child
// reports through its status only and leaves with _exit, so nothing of the test runner runs
// twice.
template <class Child>
int in_child_process(Child child) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 99;
    try {
      code = child();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

char wait_byte(int fd) {
  char c = 0;
  return ::read(fd, &c, 1) == 1 ? c : '\0';
}

bool send_byte(int fd, char c) { return ::write(fd, &c, 1) == 1; }

}  // namespace

TEST_CASE("lmdb: another process reads while this one holds a write transaction",
          "[storage][lmdb]") {
  TempDir dir;
  auto db = open_lmdb(dir.path());
  write(*db, {{"k", "committed"}});
  auto writer = begin(*db, Mode::read_write);
  must(writer->put("k", "uncommitted"));
  must(writer->put("new", "x"));

  const int status = in_child_process([&] {
    auto other = LmdbBackend::open(dir.path());
    if (!other) {
      return 1;
    }
    auto txn = (*other)->begin(Mode::read_only);
    if (!txn) {
      return 2;
    }
    auto k = (*txn)->get("k");
    auto fresh = (*txn)->get("new");
    if (!k || *k != "committed"s) {
      return 3;
    }
    if (!fresh || *fresh) {
      return 4;
    }
    return 0;
  });
  CHECK(status == 0);
  must(writer->commit());
  CHECK(read(*db, "k") == "uncommitted"s);
}

TEST_CASE("lmdb: another process adopts a map grown here", "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  auto db = open_lmdb(dir.path(), options);
  write(*db, {{"small", "1"}});

  int to_child[2];
  int to_parent[2];
  REQUIRE(::pipe(to_child) == 0);
  REQUIRE(::pipe(to_parent) == 0);
  const std::string big = pattern(4 << 20, 5);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child maps 1 MiB, then reads data written after the parent grew the map.
    int code = 0;
    auto other = LmdbBackend::open(dir.path(), options);
    if (!other) {
      code = 1;
    }
    if (!send_byte(to_parent[1], 'r')) {
      code = 8;
    }
    if (code == 0 && wait_byte(to_child[0]) != 'g') {
      code = 2;
    }
    if (code == 0) {
      auto txn = (*other)->begin(Mode::read_only);
      auto value = txn ? (*txn)->get("big") : Result<std::optional<std::string>>(txn.error());
      code = !txn ? 3 : !value ? 4 : !*value ? 5 : **value != big ? 6 : 0;
      if (code == 0 && (*other)->map_size() < (std::size_t{4} << 20)) {
        code = 7;
      }
    }
    ::_exit(code);
  }
  REQUIRE(wait_byte(to_parent[0]) == 'r');
  int retries = 0;
  REQUIRE(write_with_retry(
              *db, [&](Transaction& txn) { return txn.put("big", big); }, retries)
              .has_value());
  CHECK(retries > 0);
  REQUIRE(send_byte(to_child[1], 'g'));
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) {
    ::close(fd);
  }
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
