// The storage contract (storage_contract.hpp) on memory and LMDB, then what only one of them
// does: the memory backend's copy-on-commit, and LMDB's map growth, durability modes, sharing and
// persistence of environments, and other processes. PostgreSQL runs the same contract in
// postgres/postgres_storage_test.cpp.
#include "storage_support.hpp"

using namespace storage_test;

namespace {

using test::TempDir;

std::unique_ptr<LmdbBackend> open_lmdb(const std::filesystem::path& dir, LmdbOptions options = {}) {
  return must(LmdbBackend::open(dir, options));
}

// The backends the contract runs on.
struct OnMemory {
  static constexpr bool concurrent_writers = false;
  std::unique_ptr<Backend> db = std::make_unique<MemoryBackend>();
};

struct OnLmdb {
  static constexpr bool concurrent_writers = false;
  TempDir dir;  // declared first: removed after the backend closes
  std::unique_ptr<Backend> db = open_lmdb(dir.path());
};

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

#define CATALOG_CONTRACT_BACKENDS OnMemory, OnLmdb
#include "storage_contract.hpp"

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
  CHECK(db->grows_when_full());

  auto txn = begin(*db, Mode::read_write);
  must(txn->put("small", "2"));
  auto full = txn->put("huge", pattern(2 << 20, 3));
  REQUIRE_FALSE(full.has_value());
  CHECK(full.error().code() == Errc::storage_full);
  CHECK(full.error().message() ==
        "LMDB map is full at 1048576 bytes, its maximum size (LmdbOptions::max_map_size 1048576)");
  CHECK_FALSE(db->grows_when_full());  // nothing to grow: that write would fail again
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
  CHECK(db->grows_when_full());
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

TEST_CASE("lmdb: the views of a reader last until it ends, a writer's do not", "[storage][lmdb]") {
  TempDir dir;
  auto db = open_lmdb(dir.path());
  CHECK(begin(*db, Mode::read_only)->views_last());
  CHECK_FALSE(begin(*db, Mode::read_write)->views_last());
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

TEST_CASE("lmdb: another process adopts a map grown here, read-write or read-only",
          "[storage][lmdb]") {
  TempDir dir;
  LmdbOptions options;
  options.map_size = 1 << 20;
  auto db = open_lmdb(dir.path(), options);
  LmdbOptions child_options = options;
  child_options.read_only = GENERATE(false, true);
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
    auto other = LmdbBackend::open(dir.path(), child_options);
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
