// catalog::admin on PostgreSQL: a store moves from LMDB to PostgreSQL and back by
// export and import, key for key and byte for byte; an import refused after its writes went to
// the server leaves the schema empty; verify, stats, events and backup (key by key into LMDB)
// work on PostgreSQL.
#include <catalog/admin.hpp>
#include <catalog/postgres.hpp>

#include "../admin_support.hpp"
#include "pg_support.hpp"

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

using namespace catalog;
using test::admin::export_text;
using test::admin::import_text;
using test::admin::joined;
using test::admin::lines_of;
using test::admin::workload;

TEST_CASE("a store moves LMDB to PostgreSQL to LMDB: the same keys, the same export",
          "[admin][postgres]") {
  test::TempDir dir;
  auto source = Store::open_lmdb(dir.path() / "source", test::test_options()).value();
  workload(source, 40);
  admin::ExportInfo info;
  const auto text = export_text(source, &info);

  test::pg::Schema schema;
  auto pg = open_postgres(test::pg::conninfo(), {}, schema.options()).value();
  auto imported = import_text(pg, text);
  INFO((imported ? "" : imported.error().message()));
  REQUIRE(imported.has_value());
  CHECK(*imported == info.counts);
  CHECK(test::dump(pg) == test::dump(source));
  CHECK(export_text(pg) == text);
  CHECK(admin::verify(pg).value().empty());

  auto back = Store::open_lmdb(dir.path() / "back").value();
  REQUIRE(import_text(back, export_text(pg)).has_value());
  CHECK(test::dump(back) == test::dump(source));

  auto stats = admin::stats(pg).value();
  auto lmdb_stats = admin::stats(source).value();
  CHECK(!stats.lmdb);
  CHECK(stats.keys == lmdb_stats.keys);
  CHECK(stats.bytes == lmdb_stats.bytes);
  CHECK(stats.live == lmdb_stats.live);
  CHECK(stats.deleted == lmdb_stats.deleted);
  CHECK(stats.events == info.counts.events);

  std::uint64_t events = 0;
  CHECK(admin::events(pg, 0, [&](std::uint64_t offset, std::string_view) {
          return ++events == offset;
        }).value() == info.counts.events);
  CHECK(events == info.counts.events);

  auto copied = admin::backup(pg, dir.path() / "copy");
  REQUIRE(copied.has_value());
  CHECK(!copied->lmdb_copy);
  {
    auto copy = Store::open_lmdb(dir.path() / "copy").value();
    CHECK(test::dump(copy) == test::dump(source));
  }

  auto again = import_text(pg, text);
  REQUIRE(!again);
  CHECK(again.error().code() == Errc::already_exists);
}

TEST_CASE("an import refused after its writes went to the server leaves PostgreSQL empty",
          "[admin][postgres]") {
  auto source = Store::in_memory(test::test_options()).value();
  workload(source, 40);
  const auto text = export_text(source);
  auto lines = lines_of(text);

  test::pg::Schema schema;
  auto options = schema.options();
  options.write_buffer_bytes = 4096;  // writes go to the server long before the end
  auto pg = open_postgres(test::pg::conninfo(), {}, options).value();
  const auto empty = test::dump(pg);

  SECTION("truncated") {
    lines.pop_back();
    auto refused = import_text(pg, joined(lines));
    REQUIRE(!refused);
    CHECK(refused.error().message().find("truncated") != std::string::npos);
  }
  SECTION("a bad line near the end") {
    lines[lines.size() - 3] = "not json";
    auto refused = import_text(pg, joined(lines));
    REQUIRE(!refused);
    CHECK(refused.error().message().find("line " + std::to_string(lines.size() - 2) +
                                         ": not JSON") != std::string::npos);
  }
  CHECK(test::dump(pg) == empty);
  REQUIRE(import_text(pg, text).has_value());  // and then the whole of it goes in
  CHECK(export_text(pg) == text);
}
