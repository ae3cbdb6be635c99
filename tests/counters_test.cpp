// Counters (<catalog/detail/engine/keys.hpp>): each list's counter is split in shards by entity id, `total`
// sums them, and a store written with key schema 1 (one counter key per list) is converted when
// a Store opens it.
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include <catalog/detail/engine/keys.hpp>  // the key schema, to read and rewrite counters
#include "support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <string>
#include <vector>

using namespace catalog;
namespace keys = catalog::engine::keys;
using test::parse;

namespace {

// The test options, with every line the store logs appended to `logged`.
StoreOptions logging_to(std::vector<std::pair<LogLevel, std::string>>& logged) {
  auto options = test::test_options();
  options.log = [&logged](LogLevel level, std::string_view message) {
    logged.emplace_back(level, std::string(message));
  };
  return options;
}

// Every key and value under `prefix`, through the store's backend.
std::map<std::string, std::string> under(storage::Backend& backend, const std::string& prefix) {
  auto txn = backend.begin(storage::Mode::read_only).value();
  auto cursor = txn->scan(storage::prefix_range(prefix), storage::Direction::forward).value();
  std::map<std::string, std::string> out;
  for (; cursor->valid(); (void)cursor->next()) out.emplace(cursor->key(), cursor->value());
  return out;
}

std::int64_t total(Store& s, const Principal& admin, Kind kind, Include include) {
  ListOptions o;
  o.limit = 0;
  o.include = include;
  return s.list_json(admin, kind, o).value().total;
}

// The entities of a list, walked page by page.
std::int64_t walked(Store& s, const Principal& admin, Kind kind, Include include) {
  ListOptions o;
  o.limit = 7;
  o.include = include;
  std::int64_t n = 0;
  for (;;) {
    auto page = s.list_json(admin, kind, o).value();
    n += static_cast<std::int64_t>(page.data.size());
    if (!page.after) return n;
    o.after = page.after;
  }
}

// Each shard key of the user lists holds the number of list entries whose id is in its shard.
void check_shards(storage::Backend& backend) {
  for (bool deleted : {false, true}) {
    std::array<std::int64_t, keys::counter_shards> counted{};
    for (const auto& [key, value] : under(backend, keys::list_prefix(Kind::user, deleted,
                                                                     keys::all_scope)))
      ++counted[keys::counter_shard(keys::id_from_bytes(key.substr(key.size() - 16)))];
    const auto prefix = keys::counter_prefix(Kind::user, deleted, keys::all_scope);
    const auto shards = under(backend, prefix);
    std::size_t used = 0;
    for (unsigned s = 0; s < keys::counter_shards; ++s) {
      INFO("deleted " << deleted << ", shard " << s);
      auto it = shards.find(keys::counter(Kind::user, deleted, keys::all_scope, s));
      if (counted[s] == 0) {
        CHECK(it == shards.end());  // a shard at zero has no key
      } else {
        REQUIRE(it != shards.end());
        CHECK(static_cast<std::int64_t>(keys::decode_u64(it->second)) == counted[s]);
        ++used;
      }
    }
    CHECK(shards.size() == used);  // no other key under the prefix
  }
}

}  // namespace

TEMPLATE_TEST_CASE("a total is the sum of its shards and equals its list", "[counters]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto admin = s.principal("admin").value();
  std::vector<Uuid> ids;
  for (int i = 0; i < 150; ++i) {
    auto name = "user" + std::to_string(1000 + i);
    auto made = s.create_json(admin, Kind::user,
                              parse(R"({"name":")" + name + R"(","email":")" + name +
                                    R"(@example.com"})"))
                    .value();
    ids.push_back(test::uuid_of(made));
  }
  DeleteOptions hard;
  hard.hard_delete = true;
  for (int i = 0; i < 40; ++i) s.remove_json(admin, Kind::user, ids[i]).value();
  for (int i = 0; i < 10; ++i) s.restore_json(admin, Kind::user, ids[i]).value();
  for (int i = 140; i < 150; ++i) s.remove_json(admin, Kind::user, ids[i], hard).value();

  // 151 users made (the admin too), 10 gone for good, 30 soft-deleted.
  CHECK(total(s, admin, Kind::user, Include::non_deleted) == 111);
  CHECK(total(s, admin, Kind::user, Include::deleted) == 30);
  CHECK(total(s, admin, Kind::user, Include::all) == 141);
  for (auto include : {Include::non_deleted, Include::deleted, Include::all})
    CHECK(walked(s, admin, Kind::user, include) == total(s, admin, Kind::user, include));
  check_shards(s.backend());
  // Ids spread over the shards: 111 live users touch most of the 64.
  CHECK(under(s.backend(), keys::counter_prefix(Kind::user, false, keys::all_scope)).size() > 40);
  CHECK(s.verify().value().empty());
}

TEST_CASE("a store of key schema 1 is converted when opened", "[counters]") {
  test::TempDir dir;
  std::map<std::string, std::string> before;  // the counter shards as written today
  std::int64_t live = 0, deleted = 0;
  {
    // A new store is set up, not converted: nothing is logged.
    std::vector<std::string> logged;
    auto options = test::test_options();
    options.log = [&](LogLevel, std::string_view message) { logged.emplace_back(message); };
    auto s = Store::open_lmdb(dir.path(), options).value();
    CHECK(logged.empty());
    auto admin = s.principal("admin").value();
    s.create_json(admin, Kind::search_service, parse(R"({"name":"es","serviceType":"E"})"))
        .value();
    for (int i = 0; i < 60; ++i) {
      auto name = "idx" + std::to_string(100 + i);
      auto made = s.create_json(admin, Kind::search_index,
                                parse(R"({"name":")" + name +
                                      R"(","service":"es","fields":[{"name":"f","dataType":"TEXT"}]})"))
                      .value();
      if (i % 3 == 0) s.remove_json(admin, Kind::search_index, test::uuid_of(made)).value();
    }
    live = total(s, admin, Kind::search_index, Include::non_deleted);
    deleted = total(s, admin, Kind::search_index, Include::deleted);
    before = under(s.backend(), "C");
  }
  REQUIRE(live == 40);
  REQUIRE(deleted == 20);

  // Rewrite the store as key schema 1 wrote it: one counter per list, the sum of its shards,
  // and no key schema record.
  {
    auto db = storage::LmdbBackend::open(dir.path()).value();
    auto txn = db->begin(storage::Mode::read_write).value();
    std::map<std::string, std::uint64_t> sums;
    for (const auto& [key, value] : before) {
      REQUIRE(key.size() == 20);
      sums[key.substr(0, 19)] += keys::decode_u64(value);
      REQUIRE(txn->erase(key).value());
    }
    for (const auto& [key, sum] : sums) txn->put(key, keys::encode_u64(sum)).value();
    REQUIRE(txn->erase(keys::meta("key_schema")).value());
    txn->commit().value();
    // Lists of search indexes: all, and the service's scope, each live and deleted.
    REQUIRE(sums.size() >= 4);
  }

  // Converted once, and said so: before and after, through the log sink.
  std::vector<std::pair<LogLevel, std::string>> logged;
  auto options = logging_to(logged);
  auto s = Store::open_lmdb(dir.path(), options).value();
  REQUIRE(logged.size() == 2);
  CHECK(logged[0] == std::pair(LogLevel::info, std::string("converting the store from key schema 1 to 2")));
  CHECK(logged[1] == std::pair(LogLevel::info, std::string("converted the store from key schema 1 to 2")));
  auto admin = s.principal("admin").value();
  CHECK(under(s.backend(), "C") == before);  // the same shards as a store written today
  CHECK(under(s.backend(), keys::meta("key_schema")).begin()->second ==
        keys::encode_u64(keys::key_schema));
  CHECK(total(s, admin, Kind::search_index, Include::non_deleted) == live);
  CHECK(total(s, admin, Kind::search_index, Include::deleted) == deleted);
  CHECK(s.verify().value().empty());
  // And it goes on counting.
  s.create_json(admin, Kind::search_index,
                parse(R"({"name":"later","service":"es","fields":[{"name":"f","dataType":"TEXT"}]})"))
      .value();
  CHECK(total(s, admin, Kind::search_index, Include::non_deleted) == live + 1);
}

TEST_CASE("a store of a newer key schema is refused", "[counters]") {
  test::TempDir dir;
  { Store::open_lmdb(dir.path(), test::test_options()).value(); }
  {
    auto db = storage::LmdbBackend::open(dir.path()).value();
    auto txn = db->begin(storage::Mode::read_write).value();
    txn->put(keys::meta("key_schema"), keys::encode_u64(keys::key_schema + 1)).value();
    txn->commit().value();
  }
  // Refused, and logged as an error (not as a conversion).
  std::vector<std::pair<LogLevel, std::string>> logged;
  auto options = logging_to(logged);
  auto refused = Store::open_lmdb(dir.path(), options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message().find("key schema 3") != std::string::npos);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].first == LogLevel::error);
  CHECK(logged[0].second == refused.error().message());
}

TEST_CASE("an LMDB environment another program wrote is not taken for a schema-1 store",
          "[counters]") {
  // No schema record reads as schema 1, which an open converts: a key whose tag no version of
  // the catalog writes refuses the conversion, and the open writes nothing into the other
  // program's data.
  test::TempDir dir;
  {
    auto db = storage::LmdbBackend::open(dir.path()).value();
    auto txn = db->begin(storage::Mode::read_write).value();
    for (int i = 0; i < 200; ++i)
      txn->put("Entity" + std::to_string(i), "value").value();  // E: a catalog tag, then others
    txn->put("config/\x01", "x").value();
    txn->commit().value();
  }
  auto dump_keys = [&] {
    auto db = storage::LmdbBackend::open(dir.path()).value();
    auto txn = db->begin(storage::Mode::read_only).value();
    std::vector<std::string> out;
    auto c = txn->scan(storage::Range{}, storage::Direction::forward).value();
    for (; c->valid(); (void)c->next()) out.emplace_back(c->key());
    return out;
  };
  const auto before = dump_keys();
  std::vector<std::pair<LogLevel, std::string>> logged;
  auto options = logging_to(logged);
  auto refused = Store::open_lmdb(dir.path(), options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message() ==
        "not a catalog store: it holds the key config/\\x01, which no version of the catalog "
        "writes (its keys were left as they are)");
  // Refused before a conversion is announced: one line, the refusal.
  REQUIRE(logged.size() == 1);
  CHECK(logged[0] == std::pair(LogLevel::error, refused.error().message()));
  CHECK(dump_keys() == before);
  // Read-only, the same refusal (not "a read-write open converts it").
  catalog::storage::LmdbOptions read_only;
  read_only.read_only = true;
  auto read = Store::open_lmdb(dir.path(), test::test_options(), read_only);
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().message() == refused.error().message());
}

TEST_CASE("a catalog's store that lost its schema record is corrupt, not schema 1 nor foreign",
          "[counters]") {
  // A damaged page can hide the record (and show a key of garbage): the counter shards, which
  // only schema 2 and later write, tell the store for a damaged catalog's. Opening it converts
  // nothing and writes nothing; catalog-admin reads "the store is corrupt" as exit 3.
  for (const bool garbage : {false, true}) {
    CAPTURE(garbage);
    test::TempDir dir;
    { Store::open_lmdb(dir.path(), test::test_options()).value(); }
    {
      auto db = storage::LmdbBackend::open(dir.path()).value();
      auto txn = db->begin(storage::Mode::read_write).value();
      txn->erase(keys::meta("key_schema")).value();
      if (garbage) txn->put("\x01garbage", "x").value();
      txn->commit().value();
    }
    auto dump = [&] {
      auto db = storage::LmdbBackend::open(dir.path()).value();
      auto txn = db->begin(storage::Mode::read_only).value();
      std::vector<std::pair<std::string, std::string>> out;
      auto c = txn->scan(storage::Range{}, storage::Direction::forward).value();
      for (; c->valid(); (void)c->next()) out.emplace_back(c->key(), c->value());
      return out;
    };
    const auto before = dump();
    std::vector<std::pair<LogLevel, std::string>> logged;
    auto refused = Store::open_lmdb(dir.path(), logging_to(logged));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == Errc::storage);
    CHECK(refused.error().message() ==
          "the store is corrupt: it holds the counter shards of key schema 2 and later but no key "
          "schema record" +
              std::string(garbage ? ", and the key \\x01garbage, which no version of the catalog "
                                    "writes"
                                  : ""));
    REQUIRE(logged.size() == 1);
    CHECK(logged[0] == std::pair(LogLevel::error, refused.error().message()));
    CHECK(dump() == before);
  }
}

namespace {

// What a damaged page can show: a whole-store scan that meets an empty key first, which no
// backend stores (check_key refuses one).
class EmptyKeyCursor final : public storage::Cursor {
 public:
  explicit EmptyKeyCursor(std::unique_ptr<storage::Cursor> inner) : inner_(std::move(inner)) {}
  bool valid() const noexcept override { return first_ || inner_->valid(); }
  std::string_view key() const noexcept override { return first_ ? "" : inner_->key(); }
  std::string_view value() const noexcept override { return first_ ? "x" : inner_->value(); }
  Result<void> next() override {
    if (!first_) return inner_->next();
    first_ = false;
    return {};
  }

 private:
  std::unique_ptr<storage::Cursor> inner_;
  bool first_ = true;
};

class EmptyKeyTransaction final : public storage::Transaction {
 public:
  explicit EmptyKeyTransaction(std::unique_ptr<storage::Transaction> inner)
      : inner_(std::move(inner)) {}
  Result<std::optional<std::string>> get(std::string_view key) override { return inner_->get(key); }
  Result<void> put(std::string_view key, std::string_view value) override {
    return inner_->put(key, value);
  }
  Result<bool> erase(std::string_view key) override { return inner_->erase(key); }
  Result<std::unique_ptr<storage::Cursor>> scan(const storage::Range& range,
                                                storage::Direction dir) override {
    auto c = inner_->scan(range, dir);
    if (!c || !range.begin.empty() || range.end) return c;
    return std::unique_ptr<storage::Cursor>(new EmptyKeyCursor(std::move(*c)));
  }
  Result<void> commit() override { return inner_->commit(); }

 private:
  std::unique_ptr<storage::Transaction> inner_;
};

class EmptyKeyBackend final : public storage::Backend {
 public:
  explicit EmptyKeyBackend(std::shared_ptr<storage::MemoryBackend> inner)
      : inner_(std::move(inner)) {}
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    auto t = inner_->begin(mode);
    if (!t) return t.error();
    return std::unique_ptr<storage::Transaction>(new EmptyKeyTransaction(std::move(*t)));
  }

 private:
  std::shared_ptr<storage::MemoryBackend> inner_;
};

}  // namespace

TEST_CASE("a store without its schema record that shows an empty key is corrupt", "[counters]") {
  auto memory = std::make_shared<storage::MemoryBackend>();
  {
    auto txn = memory->begin(storage::Mode::read_write).value();
    txn->put("Eentity", "x").value();  // a key of a catalog's tag: read as schema 1
    txn->commit().value();
  }
  std::vector<std::pair<LogLevel, std::string>> logged;
  auto refused = Store::open(std::make_unique<EmptyKeyBackend>(memory), logging_to(logged));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message() == "the store is corrupt: it holds an empty key");
  // Nothing converted or written.
  auto txn = memory->begin(storage::Mode::read_only).value();
  CHECK(txn->get(keys::meta("key_schema")).value() == std::nullopt);
  auto c = txn->scan(storage::Range{}, storage::Direction::forward).value();
  REQUIRE(c->valid());
  CHECK(c->key() == "Eentity");
  c->next().value();
  CHECK_FALSE(c->valid());
}
