// A store opened read-only (LmdbOptions::read_only): the backend refuses every write and creates
// nothing, Store::open writes nothing (it refuses a store it would have to convert, and leaves
// searches failing while the search index is not built), and verify counts an index that is not
// built as one problem. The file data.mdb is compared byte for byte before and after.
#include "support.hpp"

#include <catalog/storage/lmdb_backend.hpp>

#include <catalog/detail/engine/keys.hpp>  // to write a store as key schema 1 did

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using catalog::Errc;
using catalog::Kind;
using catalog::storage::LmdbBackend;
using catalog::storage::LmdbOptions;
using catalog::storage::Mode;
using test::TempDir;

LmdbOptions read_only() {
  LmdbOptions o;
  o.read_only = true;
  return o;
}

std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in);
  std::string bytes(std::filesystem::file_size(file), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(in.gcount() == static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

void put(catalog::storage::Backend& db, const std::string& key, const std::string& value) {
  auto txn = db.begin(Mode::read_write).value();
  REQUIRE(txn->put(key, value).has_value());
  REQUIRE(txn->commit().has_value());
}

std::optional<std::string> get(catalog::storage::Backend& db, const std::string& key) {
  auto txn = db.begin(Mode::read_only).value();
  return txn->get(key).value();
}

void erase(catalog::storage::Backend& db, const std::string& key) {
  auto txn = db.begin(Mode::read_write).value();
  REQUIRE(txn->erase(key).has_value());
  REQUIRE(txn->commit().has_value());
}

// A store with a glossary "plants" and its term "fern", written read-write and closed.
void write_store(const std::filesystem::path& dir) {
  auto store = catalog::Store::open_lmdb(dir, test::test_options()).value();
  auto admin = store.principal("admin").value();
  REQUIRE(store.create_json(admin, Kind::glossary, test::json::parse(R"({"name":"plants",
          "description":"Green things"})").as_object()));
  REQUIRE(store.create_json(admin, Kind::glossary_term, test::json::parse(R"({"name":"fern",
          "glossary":"plants","description":"A plant without flowers"})").as_object()));
}

std::vector<std::string> search_names(catalog::Store& store, const catalog::Principal& who,
                                      std::string q) {
  catalog::SearchRequest r;
  r.q = std::move(q);
  auto found = store.search(who, r);
  REQUIRE(found.has_value());
  std::vector<std::string> out;
  for (const auto& h : found->hits)
    out.push_back(std::visit([](const auto& e) { return e.name; }, h.entity));
  return out;
}

}  // namespace

TEST_CASE("lmdb read-only: the backend reads, refuses every write and creates nothing",
          "[storage][lmdb][read_only]") {
  TempDir dir;
  const auto missing = dir.path() / "missing";
  auto none = LmdbBackend::open(missing, read_only());
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().code() == Errc::storage);
  CHECK(none.error().message().find("no LMDB store in") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(missing));

  const auto path = dir.path() / "store";
  put(*LmdbBackend::open(path).value(), "k", "v");
  const auto before = file_bytes(path / "data.mdb");
  {
    auto ro = LmdbBackend::open(path, read_only()).value();
    CHECK(ro->read_only());
    CHECK_FALSE(ro->grows_when_full());
    CHECK(get(*ro, "k") == "v");
    auto write = ro->begin(Mode::read_write);
    REQUIRE_FALSE(write.has_value());
    CHECK(write.error().code() == Errc::storage);
    CHECK(write.error().message().find("open read-only") != std::string::npos);
    auto grown = ro->grow();
    REQUIRE_FALSE(grown.has_value());
    CHECK(grown.error().code() == Errc::storage);
    ro->make_room(std::size_t{1} << 30);  // a hint it cannot take: nothing happens
    CHECK(ro->map_size() == std::size_t{64} << 20);
    // Its environment is read-only: this process cannot open the directory read-write now.
    auto rw = LmdbBackend::open(path);
    REQUIRE_FALSE(rw.has_value());
    CHECK(rw.error().code() == Errc::storage);
    CHECK(rw.error().message().find("open read-only in this process") != std::string::npos);
  }
  CHECK(file_bytes(path / "data.mdb") == before);
  CHECK(std::filesystem::file_size(path / "data.mdb") == std::size_t{64} << 20);

  // Open read-write already: the read-only handle shares the environment, sees its writes, and
  // still refuses its own.
  auto rw = LmdbBackend::open(path).value();
  auto ro = LmdbBackend::open(path, read_only()).value();
  CHECK_FALSE(rw->read_only());
  CHECK(ro->read_only());
  put(*rw, "k", "w");
  CHECK(get(*ro, "k") == "w");
  auto write = ro->begin(Mode::read_write);
  REQUIRE_FALSE(write.has_value());
  CHECK(write.error().code() == Errc::storage);
}

TEST_CASE("a store opened read-only answers reads, refuses writes, and opening it writes nothing",
          "[store][read_only]") {
  TempDir dir;
  write_store(dir.path());
  const auto before = file_bytes(dir.path() / "data.mdb");
  {
    // With the admin configured, as it is already: opening reads that it is, and writes nothing.
    auto store = catalog::Store::open_lmdb(dir.path(), test::test_options(), read_only()).value();
    CHECK(store.backend().read_only());
    auto admin = store.principal("admin").value();
    auto term = store.get_json(admin, Kind::glossary_term, catalog::EntityKey::by_fqn("plants.fern"));
    REQUIRE(term.has_value());
    CHECK(term->at("description") == "A plant without flowers");
    CHECK(store.list_json(admin, Kind::glossary).value().total == 1);
    CHECK(search_names(store, admin, "flowers") == std::vector<std::string>{"fern"});
    CHECK(store.verify().value().empty());

    auto made = store.create_json(admin, Kind::glossary,
                                  test::json::parse(R"({"name":"rocks"})").as_object());
    REQUIRE_FALSE(made.has_value());
    CHECK(made.error().code() == Errc::storage);
    auto patched = store.patch_json(admin, Kind::glossary_term, catalog::EntityKey::by_fqn("plants.fern"),
                                    test::json::parse(R"({"description":"changed"})"));
    REQUIRE_FALSE(patched.has_value());
    CHECK(patched.error().code() == Errc::storage);
    CHECK(store.reindex(admin).error().code() == Errc::storage);
    // An admin it would have to make is a write: refused, and the open with it.
    auto more = test::test_options();
    more.admins.push_back("root");
    auto refused = catalog::Store::open_lmdb(dir.path(), more, read_only());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code() == Errc::storage);
  }
  CHECK(file_bytes(dir.path() / "data.mdb") == before);
}

TEST_CASE("read-only: a store whose search index is not built opens, its searches fail, and "
          "verify names it once",
          "[store][read_only][search]") {
  TempDir dir;
  write_store(dir.path());
  {
    // A reindex left half done (catalog-admin reindex killed, or under way in another process).
    auto db = LmdbBackend::open(dir.path()).value();
    put(*db, "Msearch_reindex", "");
  }
  const auto before = file_bytes(dir.path() / "data.mdb");
  {
    auto options = test::test_options();
    std::vector<std::pair<catalog::LogLevel, std::string>> logged;
    options.log = [&](catalog::LogLevel level, std::string_view message) {
      logged.emplace_back(level, std::string(message));
    };
    auto store = catalog::Store::open_lmdb(dir.path(), options, read_only()).value();
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].first == catalog::LogLevel::warning);
    CHECK(logged[0].second.find("open read-only: searches fail") != std::string::npos);
    auto admin = store.principal("admin").value();
    catalog::SearchRequest r;
    r.q = "flowers";
    auto found = store.search(admin, r);
    REQUIRE_FALSE(found.has_value());
    CHECK(found.error().code() == Errc::storage);
    CHECK(found.error().message().find("a read-write open builds it") != std::string::npos);
    CHECK(store.search_json(admin, r).error().code() == Errc::storage);
    CHECK(store.suggest(admin, "fe").error().code() == Errc::storage);
    CHECK(store.suggest_json(admin, "fe").error().code() == Errc::storage);
    catalog::AggregateRequest a;
    a.field = "entityType";
    CHECK(store.aggregate(admin, a).error().code() == Errc::storage);
    // Reads that do not search are answered.
    CHECK(store.list_json(admin, Kind::glossary_term).value().total == 1);
    // One problem: the reindex under way, not one per document the index lacks.
    auto problems = store.verify().value();
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "Msearch_reindex");
    CHECK(problems[0].message.find("a read-write open finishes it") != std::string::npos);
  }
  CHECK(file_bytes(dir.path() / "data.mdb") == before);
  {
    auto options = test::test_options();
    // A read-write open finishes the reindex; then the read-only one searches.
    REQUIRE(catalog::Store::open_lmdb(dir.path(), options).has_value());
    auto store = catalog::Store::open_lmdb(dir.path(), options, read_only()).value();
    auto admin = store.principal("admin").value();
    CHECK(search_names(store, admin, "flowers") == std::vector<std::string>{"fern"});
    CHECK(store.verify().value().empty());
  }
  {
    // An index never built (the analyzer's version missing): verify says it is missing.
    auto db = LmdbBackend::open(dir.path()).value();
    erase(*db, "Msearch_analyzer");
  }
  {
    auto store = catalog::Store::open_lmdb(dir.path(), test::test_options(), read_only()).value();
    auto problems = store.verify().value();
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "Msearch_analyzer");
    CHECK(problems[0].message == "missing: the search index (a read-write open builds it)");
  }
  {
    // Its first build interrupted: the build under way is the one problem.
    auto db = LmdbBackend::open(dir.path()).value();
    put(*db, "Msearch_reindex", "");
  }
  auto store = catalog::Store::open_lmdb(dir.path(), test::test_options(), read_only()).value();
  auto problems = store.verify().value();
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == "Msearch_reindex");
}

TEST_CASE("read-only: a store of another key schema is refused, and says what to do",
          "[store][read_only]") {
  TempDir dir;
  write_store(dir.path());
  {
    // Rewritten as key schema 1 wrote it, which an open converts: one counter per list, the sum
    // of its shards, and no key schema record.
    namespace keys = catalog::engine::keys;
    auto db = LmdbBackend::open(dir.path()).value();
    auto txn = db->begin(Mode::read_write).value();
    std::map<std::string, std::uint64_t> sums;
    std::vector<std::string> shards;
    auto c = txn->scan(catalog::storage::prefix_range("C"), catalog::storage::Direction::forward)
                 .value();
    for (; c->valid(); c->next().value()) {
      REQUIRE(keys::decode_counter(c->key())->shard);
      sums[std::string(c->key().substr(0, c->key().size() - 1))] += keys::decode_u64(c->value());
      shards.emplace_back(c->key());
    }
    c.reset();
    REQUIRE_FALSE(shards.empty());
    for (const auto& key : shards) REQUIRE(txn->erase(key).value());
    for (const auto& [key, sum] : sums) txn->put(key, keys::encode_u64(sum)).value();
    REQUIRE(txn->erase(keys::meta("key_schema")).value());
    txn->commit().value();
  }
  const auto before = file_bytes(dir.path() / "data.mdb");
  // The refusal is logged, as every refused open is.
  std::vector<std::pair<catalog::LogLevel, std::string>> logged;
  auto logging = test::test_options();
  logging.log = [&logged](catalog::LogLevel level, std::string_view message) {
    logged.emplace_back(level, std::string(message));
  };
  auto older = catalog::Store::open_lmdb(dir.path(), logging, read_only());
  REQUIRE_FALSE(older.has_value());
  CHECK(older.error().code() == Errc::storage);
  CHECK(older.error().message() ==
        "the store was written with key schema 1, which this library converts to 2 when it "
        "opens the store read-write; it is open read-only");
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].first == catalog::LogLevel::error);
  CHECK(logged[0].second == older.error().message());
  CHECK(file_bytes(dir.path() / "data.mdb") == before);
  {
    auto db = LmdbBackend::open(dir.path()).value();
    put(*db, "Mkey_schema", std::string("\0\0\0\0\0\0\0\x63", 8));  // 99, big-endian
  }
  auto newer = catalog::Store::open_lmdb(dir.path(), test::test_options(), read_only());
  REQUIRE_FALSE(newer.has_value());
  CHECK(newer.error().code() == Errc::storage);
  CHECK(newer.error().message() ==
        "the store was written with key schema 99; this library knows up to 2");
}

TEST_CASE("read-only: an empty LMDB environment opens as an empty store, untouched",
          "[store][read_only]") {
  TempDir dir;
  { (void)LmdbBackend::open(dir.path()).value(); }
  const auto before = file_bytes(dir.path() / "data.mdb");
  catalog::StoreOptions options;  // no admins: there is no user to find
  auto store = catalog::Store::open_lmdb(dir.path(), options, read_only()).value();
  catalog::Principal tool{catalog::Uuid{}, "tool", true};
  CHECK(store.list_json(tool, Kind::user).value().total == 0);
  CHECK(file_bytes(dir.path() / "data.mdb") == before);
}
