// The storage contract (backend.hpp), one test case per promise, run on every backend: the file
// that includes this defines the fixtures of its backends (each holding `db`) and names them in
// CATALOG_CONTRACT_BACKENDS first. No include guard: one inclusion per test program.
#ifndef CATALOG_CONTRACT_BACKENDS
#error "define CATALOG_CONTRACT_BACKENDS (the fixtures to run the contract on) first"
#endif

#include "storage_support.hpp"

namespace storage_test {

/// "k0000" to "k9999": keys that sort as their numbers.
inline std::string numbered_key(int i) {
  char k[8];
  std::snprintf(k, sizeof k, "k%04d", i);
  return std::string(k);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a transaction sees its own writes", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "get_view reads what get reads", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  const std::string big(100'000, 'x');
  write(db, {{"a", "1"}, {"big", big}, {"gone", "g"}});
  auto view = [](Transaction& txn, std::string_view key) -> std::optional<std::string> {
    auto v = must(txn.get_view(key));
    if (!v) return std::nullopt;
    return std::string(*v);
  };
  SECTION("in a read-only transaction") {
    auto txn = begin(db, Mode::read_only);
    CHECK(view(*txn, "a") == "1"s);
    CHECK(view(*txn, "big") == big);
    CHECK_FALSE(view(*txn, "missing"));
  }
  SECTION("in a writer, its own writes included") {
    auto txn = begin(db, Mode::read_write);
    must(txn->put("a", "one"));
    must(txn->put("new", ""));
    CHECK(must(txn->erase("gone")));
    CHECK(view(*txn, "a") == "one"s);
    CHECK(view(*txn, "new") == ""s);
    CHECK_FALSE(view(*txn, "gone"));
    CHECK(view(*txn, "big") == big);
    must(txn->commit());
    CHECK(error_of(txn->get_view("a")) == Errc::storage);
  }
  SECTION("a refused key is an error, as for get") {
    auto txn = begin(db, Mode::read_only);
    CHECK(error_of(txn->get_view(std::string(600, 'k'))) == error_of(txn->get(std::string(600, 'k'))));
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "get_each reads what get reads, key by key, in order",
                          "[storage]", CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  // 2,500 keys k0000..k2499 (every third one absent), so that a batched backend needs several
  // batches; and one large value.
  std::vector<std::pair<std::string, std::string>> stored;
  for (int i = 0; i < 2500; ++i)
    if (i % 3 != 0) stored.emplace_back(numbered_key(i), "v" + std::to_string(i));
  const std::string big(100'000, 'x');
  stored.emplace_back("big", big);
  write(db, stored);

  // What get_each visits, as (index, value) pairs; and what get answers for the same keys.
  using Seen = std::vector<std::pair<std::size_t, std::optional<std::string>>>;
  auto each = [](Transaction& txn, const std::vector<std::string>& keys) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    Seen seen;
    must(txn.get_each(views, [&](std::size_t i, std::optional<std::string_view> v) {
      seen.emplace_back(i, v ? std::optional<std::string>(*v) : std::nullopt);
    }));
    return seen;
  };
  auto gets = [](Transaction& txn, const std::vector<std::string>& keys) {
    Seen seen;
    for (std::size_t i = 0; i < keys.size(); ++i) seen.emplace_back(i, must(txn.get(keys[i])));
    return seen;
  };
  std::vector<std::string> keys;
  for (int i = 0; i < 2600; ++i) keys.push_back(numbered_key(i));  // k2500.. were never written
  keys.push_back("big");

  SECTION("ascending keys, in a read-only transaction") {
    auto txn = begin(db, Mode::read_only);
    auto seen = each(*txn, keys);
    CHECK(seen == gets(*txn, keys));
    REQUIRE(seen.size() == keys.size());
    CHECK(seen[1].second == "v1"s);
    CHECK_FALSE(seen[3].second);
    CHECK(seen.back().second == big);
  }
  SECTION("keys in any order, repeated, after gets of some of them") {
    std::vector<std::string> mixed = {"k0002", "k0001", "k0002", "missing", "big", "k0000"};
    for (int i = 2599; i >= 0; i -= 7) mixed.push_back(numbered_key(i));
    auto txn = begin(db, Mode::read_only);
    auto expected = gets(*txn, mixed);  // PostgreSQL now knows these keys
    CHECK(each(*txn, mixed) == expected);
  }
  SECTION("ascending keys near each other and far apart, absent ones between") {
    // What a search's candidates ask: runs of neighbours, gaps of 1 to 40 keys, absent keys
    // just after present ones.
    std::vector<std::string> ascending;
    for (int i = 0, gap = 1; i < 2600; i += gap, gap = gap % 40 + 1) {
      ascending.push_back(numbered_key(i));
      if (gap % 5 == 0) ascending.push_back(numbered_key(i) + "x");  // between two keys
    }
    auto txn = begin(db, Mode::read_only);
    auto seen = each(*txn, ascending);
    CHECK(seen == gets(*txn, ascending));
    REQUIRE(seen.size() == ascending.size());
    CHECK(seen[1].second == "v1"s);
  }
  SECTION("keys repeated and unordered within one batch, none read before") {
    // A batched backend asks the server for all of them at once: each key's value goes to
    // every place that asked it.
    std::vector<std::string> mixed = {"k0005", "missing", "k0005", "big", "k0001", "k0005"};
    for (int i = 900; i >= 0; i -= 3) mixed.push_back(numbered_key(i));
    for (int i = 0; i < 900; i += 5) mixed.push_back(numbered_key(i));
    auto reader = begin(db, Mode::read_only);
    auto seen = each(*reader, mixed);
    auto other = begin(db, Mode::read_only);
    CHECK(seen == gets(*other, mixed));
    REQUIRE(seen.size() == mixed.size());
    CHECK(seen[0].second == "v5"s);
    CHECK_FALSE(seen[1].second);
    CHECK(seen[2].second == "v5"s);
    CHECK(seen[3].second == big);
    CHECK(seen[5].second == "v5"s);
  }
  SECTION("in a writer, its own writes included") {
    auto txn = begin(db, Mode::read_write);
    must(txn->put("k0001", "one"));
    must(txn->put("k0003", "three"));  // absent before
    CHECK(must(txn->erase("k0002")));
    must(txn->put("k2550", ""));
    for (int i = 1000; i < 1100; ++i) must(txn->put(numbered_key(i), "rewritten"));
    auto seen = each(*txn, keys);
    CHECK(seen == gets(*txn, keys));
    CHECK(seen[1].second == "one"s);
    CHECK_FALSE(seen[2].second);
    CHECK(seen[3].second == "three"s);
    CHECK(seen[1050].second == "rewritten"s);
    CHECK(seen[2550].second == ""s);
    must(txn->commit());
    CHECK(error_of(txn->get_each(std::vector<std::string_view>{"k0001"},
                                 [](std::size_t, std::optional<std::string_view>) {})) ==
          Errc::storage);
  }
  SECTION("no keys: no visit") {
    auto txn = begin(db, Mode::read_only);
    CHECK(each(*txn, {}).empty());
  }
  SECTION("a refused key is an error, as for get, and the transaction reads on") {
    auto txn = begin(db, Mode::read_only);
    const std::string long_key(600, 'k');
    std::vector<std::string_view> bad = {"k0001", long_key};
    auto failed = txn->get_each(bad, [](std::size_t, std::optional<std::string_view>) {});
    CHECK(error_of(failed) == error_of(txn->get(long_key)));
    std::vector<std::string_view> empty_key = {""};
    CHECK(error_of(txn->get_each(empty_key, [](std::size_t, std::optional<std::string_view>) {})) ==
          Errc::invalid_value);
    CHECK(must(txn->get("k0001")) == "v1"s);
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract,
                          "views that last stay valid and unchanged until the transaction ends",
                          "[storage]", CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  std::map<std::string, std::string> stored;
  for (int i = 0; i < 2500; ++i) stored[numbered_key(i)] = "v" + std::to_string(i) + std::string(i % 200, 'p');
  stored["big"] = std::string(100'000, 'x');
  write(db, Entries(stored.begin(), stored.end()));
  auto txn = begin(db, Mode::read_only);
  if (!txn->views_last()) return;  // the backend promises nothing beyond each call
  // Views kept from get_each and get_view, then more reads of every kind in between.
  std::vector<std::string> keys;
  for (const auto& kv : stored) keys.push_back(kv.first);
  std::vector<std::string_view> asked(keys.begin(), keys.end());
  std::vector<std::pair<std::string, std::string_view>> kept;
  must(txn->get_each(asked, [&](std::size_t i, std::optional<std::string_view> v) {
    REQUIRE(v);
    kept.emplace_back(keys[i], *v);
  }));
  for (const auto& k : {"k0007"s, "big"s, "k2499"s}) kept.emplace_back(k, *must(txn->get_view(k)));
  std::vector<std::pair<std::string_view, std::string_view>> scanned;  // keys and values
  {
    auto cursor = must(txn->scan(everything, Direction::forward));
    for (; cursor->valid(); must(cursor->next())) scanned.emplace_back(cursor->key(), cursor->value());
  }
  CHECK(collect(*txn, everything, Direction::reverse).size() == stored.size());
  std::reverse(asked.begin(), asked.end());
  must(txn->get_each(asked, [](std::size_t, std::optional<std::string_view>) {}));
  for (int i = 0; i < 2500; i += 3) CHECK(must(txn->get(numbered_key(i))) == stored[numbered_key(i)]);
  REQUIRE(kept.size() == stored.size() + 3);
  for (const auto& [k, v] : kept) CHECK(v == stored[k]);
  REQUIRE(scanned.size() == stored.size());
  auto it = stored.begin();
  for (const auto& [k, v] : scanned) {
    CHECK(k == it->first);
    CHECK(v == it->second);
    ++it;
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "prefetch changes no answer", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  // A range longer than one batch of a batched backend (k0000..k0299), a short one (s0..s9),
  // and keys around them.
  Entries stored;
  for (int i = 0; i < 300; ++i) stored.emplace_back(numbered_key(i), "v" + std::to_string(i));
  for (int i = 0; i < 10; ++i) stored.emplace_back("s" + std::to_string(i), "short");
  stored.emplace_back("t", "alone");
  write(db, stored);
  const std::vector<Range> ranges = {{"k", std::string("l")},
                                     {"s", std::string("t")},
                                     {"k0100", std::string("k0105")},
                                     {"u", std::string("v")},           // empty
                                     {"s5", std::string("s5")},         // no key can be in it
                                     {"k0290", std::nullopt}};          // no end: left out
  const std::vector<std::string> keys = {"t",     "k0007", "missing", "k0007",
                                         "s3",    "k0299", "s2",      "zzz"};
  // What a transaction reads, after `writes` (none in a read-only one): gets, get_each and
  // scans both ways of every range, then the same again after more writes.
  auto reads = [&](Transaction& txn) {
    std::vector<std::string> out;
    auto note = [&](const std::optional<std::string>& v) { out.push_back(v ? "=" + *v : "-"); };
    for (const auto& k : keys) note(must(txn.get(k)));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    must(txn.get_each(views, [&](std::size_t, std::optional<std::string_view> v) {
      note(v ? std::optional<std::string>(*v) : std::nullopt);
    }));
    for (const auto& r : ranges)
      for (auto dir : {Direction::forward, Direction::reverse})
        for (const auto& [k, v] : collect(txn, r, dir)) out.push_back(k + "=" + v);
    return out;
  };
  auto run = [&](Mode mode, bool prefetch) {
    auto txn = begin(db, mode);
    const bool writer = mode == Mode::read_write;
    if (writer) {  // pending writes inside the ranges and at the keys, before the hint
      must(txn->put("k0007", "mine"));
      must(txn->erase("k0150"));
      must(txn->put("s35", "new"));
      must(txn->erase("t"));
    }
    std::vector<std::string_view> views(keys.begin(), keys.end());
    if (prefetch) must(txn->prefetch(views, ranges));
    auto seen = reads(*txn);
    if (writer) {  // and after it
      must(txn->put("k0101", "later"));
      must(txn->erase("s3"));
      must(txn->put("missing", "found"));
      must(txn->put("k0200x", "between"));
    }
    for (auto& r : reads(*txn)) seen.push_back(std::move(r));
    return seen;
  };
  for (auto mode : {Mode::read_only, Mode::read_write}) {
    INFO((mode == Mode::read_write ? "writer" : "reader"));
    const auto plain = run(mode, false);
    CHECK(run(mode, true) == plain);
    CHECK(plain.size() > 600);
  }
  SECTION("a refused key is an error, as for get") {
    auto txn = begin(db, Mode::read_only);
    const std::string long_key(600, 'k');
    std::vector<std::string_view> bad = {"k0001", long_key};
    CHECK(error_of(txn->prefetch(bad, {})) == error_of(txn->get(long_key)));
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a transaction ended without commit rolls back", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "a failed write kills the transaction", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "writes in a read-only transaction fail", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}});
  auto txn = begin(db, Mode::read_only);
  CHECK(error_of(txn->put("b", "2")) == Errc::storage);
  CHECK(error_of(txn->get("a")) == Errc::storage);
  CHECK_FALSE(read(db, "b"));
}

TEMPLATE_TEST_CASE_METHOD(Contract, "a committed transaction refuses further calls", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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
                          CATALOG_CONTRACT_BACKENDS) {
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
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "scan edge cases", "[storage]", CATALOG_CONTRACT_BACKENDS) {
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
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "cursors die with their transaction", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "erase reports whether the key existed", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  write(db, {{"a", "1"}});
  auto txn = begin(db, Mode::read_write);
  CHECK(must(txn->erase("a")));
  CHECK_FALSE(must(txn->erase("a")));
  CHECK_FALSE(must(txn->erase("never")));
  must(txn->commit());
  CHECK_FALSE(read(db, "a"));
}

TEMPLATE_TEST_CASE_METHOD(Contract, "erase_range removes the first keys of a range, to a limit",
                          "[storage]", CATALOG_CONTRACT_BACKENDS) {
  Backend& db = this->backend();
  const std::set<std::string> keys{"\x00"s, "a", "a\x00"s, "a\xff", "a\xff\xff",
                                   "ab",    "b", "\x7f",   "\xff",  "\xff\xff"};
  Entries all;
  for (const auto& key : keys) {
    all.emplace_back(key, std::string(100, 'v'));
  }
  write(db, all);
  const std::vector<std::string> bounds{"",   "\x00"s, "a",    "a\xff",
                                        "ab", "c",     "\xff", "\xff\xff\xff"};
  std::vector<std::optional<std::string>> ends(bounds.begin(), bounds.end());
  ends.push_back(std::nullopt);
  for (const auto& low : bounds) {
    for (const auto& high : ends) {
      for (const std::uint64_t limit : {0u, 1u, 2u, 100u}) {
        INFO("range [" << low.size() << " bytes, " << (high ? high->size() : 0)
                       << " bytes), at most " << limit);
        std::vector<std::string> left;
        std::uint64_t expected = 0;
        for (const auto& key : keys) {
          if (key >= low && (!high || key < *high) && expected < limit) {
            ++expected;
          } else {
            left.push_back(key);
          }
        }
        auto txn = begin(db, Mode::read_write);  // rolled back: every case starts from `all`
        CHECK(must(txn->erase_range(Range{low, high}, limit)) == expected);
        CHECK(keys_in(*txn, everything, Direction::forward) == left);
      }
    }
  }

  SECTION("committed, and a scan open across it goes on after the keys removed") {
    auto txn = begin(db, Mode::read_write);
    auto cursor = must(txn->scan(everything, Direction::forward));
    REQUIRE(cursor->valid());
    must(cursor->next());
    CHECK(cursor->key() == "a");
    CHECK(must(txn->erase_range(Range{"a\x00"s, "b"s}, 100)) == 4);
    std::vector<std::string> rest;
    for (must(cursor->next()); cursor->valid(); must(cursor->next())) {
      rest.emplace_back(cursor->key());
    }
    CHECK(rest == std::vector<std::string>{"b", "\x7f", "\xff", "\xff\xff"});
    must(txn->commit());
    CHECK_FALSE(read(db, "ab"));
    CHECK(read(db, "a"));
    CHECK(read(db, "b"));
  }
  SECTION("all of them, in many steps") {
    auto txn = begin(db, Mode::read_write);
    std::uint64_t steps = 0;
    while (must(txn->erase_range(everything, 3)) == 3) {
      ++steps;
    }
    CHECK(steps == 3);
    must(txn->commit());
    auto reader = begin(db, Mode::read_only);
    CHECK(keys_in(*reader, everything, Direction::forward).empty());
  }
  SECTION("not in a read-only transaction") {
    auto txn = begin(db, Mode::read_only);
    CHECK(error_of(txn->erase_range(everything, 100)) == Errc::storage);
    CHECK(read(db, "a"));
  }
}

TEMPLATE_TEST_CASE_METHOD(Contract, "keys are limited to 511 bytes", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "large and empty values round trip", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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
                          "[storage]", CATALOG_CONTRACT_BACKENDS) {
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

TEMPLATE_TEST_CASE_METHOD(Contract, "writers on several threads lose no update", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
  // Each writer reads the counter and writes it plus one. A backend with one writer at a time
  // makes them take turns; one with concurrent writers fails those it cannot serialize with
  // storage_conflict, and the writer runs its transaction again, as the store does.
  Backend& db = this->backend();
  write(db, {{"counter", "0"}});
  std::atomic<int> failures{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        for (;;) {
          auto txn = db.begin(Mode::read_write);
          if (!txn) {
            ++failures;
            return;
          }
          auto value = (*txn)->get("counter");
          Result<void> done = value ? Result<void>() : Result<void>(value.error());
          if (done && !*value) done = catalog::fail(Errc::storage, "counter missing");
          if (done) done = (*txn)->put("counter", std::to_string(std::stoi(**value) + 1));
          if (done) done = (*txn)->commit();
          if (done) break;
          if (done.error().code() != Errc::storage_conflict) {
            ++failures;
            break;
          }
          ++conflicts;
        }
      }
    });
  }
  for (auto& writer : writers) {
    writer.join();
  }
  CHECK(failures == 0);
  CHECK(read(db, "counter") == "100"s);
  if (!TestType::concurrent_writers) CHECK(conflicts == 0);
}

TEMPLATE_TEST_CASE_METHOD(Contract, "random transactions agree with a model", "[storage]",
                          CATALOG_CONTRACT_BACKENDS) {
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
      switch (below(7)) {
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
      case 6: {
        // The first `limit` keys of a range, ascending.
        const Range range = random_range();
        const std::uint64_t limit = below(3) == 0 ? 100 : below(4);
        std::uint64_t expected = 0;
        for (const auto& [key, value] : slice(model, range, Direction::forward)) {
          if (expected == limit) {
            break;
          }
          model.erase(key);
          ++expected;
        }
        CHECK(must(txn->erase_range(range, limit)) == expected);
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

}  // namespace storage_test
