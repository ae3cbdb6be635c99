// The storage contract (storage_contract.hpp) on PostgreSQL, twice: as configured by default
// (writers take turns), and with writers running concurrently and a write buffer so small that
// every put and erase goes to the server at once (so cursors must fetch again after each write).
// Then what only PostgreSQL does: the schema and its version row, conflicts between concurrent
// writers, round trips, batches, lost connections, processes.
#include "../storage_support.hpp"
#include "pg_sessions.hpp"

#include <catalog/storage/postgres_backend.hpp>

#include <libpq-fe.h>

#include <chrono>
#include <thread>

using namespace storage_test;
using catalog::storage::PostgresBackend;
using catalog::storage::PostgresOptions;

namespace {

std::unique_ptr<PostgresBackend> open_pg(const PostgresOptions& options,
                                         const std::string& conninfo = test::pg::conninfo()) {
  return must(PostgresBackend::open(conninfo, options));
}

struct OnPostgres {
  static constexpr bool concurrent_writers = true;
  test::pg::Schema schema;  // declared first: dropped after the backend closes
  std::unique_ptr<Backend> db = open_pg(schema.options());
};

// Writers running concurrently (not taking turns), every write sent to the server at once.
struct OnPostgresTinyBuffer {
  static constexpr bool concurrent_writers = true;
  test::pg::Schema schema;
  std::unique_ptr<Backend> db = open_pg([&] {
    auto o = schema.options();
    o.write_buffer_bytes = 0;
    o.concurrent_writers = true;
    return o;
  }());
};

// Options of a catalog whose writers run concurrently (the tests that interleave two write
// transactions on one thread need that: taking turns, the second would wait for the first).
PostgresOptions concurrent(const test::pg::Schema& schema) {
  auto o = schema.options();
  o.concurrent_writers = true;
  return o;
}

// Runs SQL on a connection of its own; returns the first column of the first row, if any.
std::optional<std::string> sql(const std::string& text,
                               const std::string& conninfo = test::pg::conninfo()) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(conn) == CONNECTION_OK);
  PGresult* r = PQexec(conn, text.c_str());
  const auto status = PQresultStatus(r);
  INFO(text << ": " << PQresultErrorMessage(r));
  CHECK((status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK));
  std::optional<std::string> first;
  if (status == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
    first = PQgetvalue(r, 0, 0);
  PQclear(r);
  PQfinish(conn);
  return first;
}

std::uint64_t trips(PostgresBackend& db) { return db.stats().round_trips; }

}  // namespace

#define CATALOG_CONTRACT_BACKENDS OnPostgres, OnPostgresTinyBuffer
#include "../storage_contract.hpp"

TEST_CASE("postgres: open creates the schema, the table and its version row", "[postgres]") {
  test::pg::Schema schema;
  {
    auto db = open_pg(schema.options());
    write(*db, {{"a", "1"}});
  }
  const std::string table = "\"" + schema.name() + "\".entries";
  CHECK(sql("SELECT version FROM \"" + schema.name() + "\".schema_version") == "1");
  CHECK(sql("SELECT count(*) FROM \"" + schema.name() + "\".schema_version") == "1");
  CHECK(sql("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '" + table +
            "'::regclass AND attname = 'k'") == "bytea");
  CHECK(sql("SELECT count(*) FROM pg_index WHERE indrelid = '" + table +
            "'::regclass AND indisprimary") == "1");
  CHECK(sql("SELECT encode(v, 'escape') FROM " + table + " WHERE k = 'a'::bytea") == "1");

  // Opened again, concurrently from several threads: nothing is made twice, nothing is lost.
  std::vector<std::thread> openers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    openers.emplace_back([&] {
      if (!PostgresBackend::open(test::pg::conninfo(), schema.options())) ++failures;
    });
  for (auto& t : openers) t.join();
  CHECK(failures == 0);
  CHECK(sql("SELECT count(*) FROM \"" + schema.name() + "\".schema_version") == "1");
  CHECK(read(*open_pg(schema.options()), "a") == "1"s);
}

TEST_CASE("postgres: new schemas opened at once from several threads", "[postgres]") {
  test::pg::Schema schema;
  std::vector<std::thread> openers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    openers.emplace_back([&] {
      if (!PostgresBackend::open(test::pg::conninfo(), schema.options())) ++failures;
    });
  for (auto& t : openers) t.join();
  CHECK(failures == 0);
  CHECK(sql("SELECT count(*) FROM \"" + schema.name() + "\".schema_version") == "1");
}

TEST_CASE("postgres: open refuses a table layout it does not know", "[postgres]") {
  test::pg::Schema schema;
  open_pg(schema.options());
  sql("UPDATE \"" + schema.name() + "\".schema_version SET version = 2");
  auto refused = PostgresBackend::open(test::pg::conninfo(), schema.options());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message().find("layout version 2") != std::string::npos);
}

TEST_CASE("postgres: open fails cleanly", "[postgres]") {
  auto nowhere = PostgresBackend::open("host=/nonexistent-catalog-dir port=5432 user=postgres");
  REQUIRE_FALSE(nowhere.has_value());
  CHECK(nowhere.error().code() == Errc::storage);
  CHECK(nowhere.error().message().find("cannot connect") != std::string::npos);
  PostgresOptions unnamed;
  unnamed.schema = "";
  CHECK(error_of(PostgresBackend::open(test::pg::conninfo(), unnamed)) == Errc::invalid_value);
}

TEST_CASE("postgres: a schema name PostgreSQL would cut is refused", "[postgres][hardening]") {
  // Two names that differ only after byte 63 would otherwise open the same catalog.
  auto head = test::pg::fresh_schema_name("long");
  REQUIRE(head.size() <= PostgresBackend::max_schema_bytes);
  head.resize(PostgresBackend::max_schema_bytes, 's');
  PostgresOptions longer;
  longer.schema = head + "_a";
  auto refused = PostgresBackend::open(test::pg::conninfo(), longer);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == Errc::invalid_value);
  CHECK(refused.error().message().find("first 63") != std::string::npos);
  // 63 bytes exactly are kept whole.
  test::pg::Schema exact(head);
  auto db = open_pg(exact.options());
  write(*db, {{"k", "v"}});
  CHECK(read(*db, "k") == "v"s);
}

TEST_CASE("postgres: schema names are identifiers, quoted", "[postgres]") {
  // A name that would be SQL if it were pasted unquoted.
  test::pg::Schema schema(test::pg::fresh_schema_name("Odd\"; DROP TABLE x; --"));
  auto db = open_pg(schema.options());
  write(*db, {{"k", "v"}});
  CHECK(read(*db, "k") == "v"s);
}

TEST_CASE("postgres: catalogs in two schemas are apart", "[postgres]") {
  test::pg::Schema first, second;
  auto a = open_pg(first.options());
  auto b = open_pg(second.options());
  write(*a, {{"k", "a"}});
  write(*b, {{"k", "b"}, {"only-b", "1"}});
  CHECK(read(*a, "k") == "a"s);
  CHECK(read(*b, "k") == "b"s);
  CHECK_FALSE(read(*a, "only-b"));
}

TEST_CASE("postgres: writers that cannot be serialized: the later one fails and changes nothing",
          "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(concurrent(schema));
  write(*db, {{"x", "0"}, {"a", "0"}, {"b", "0"}});

  SECTION("both update what both read") {
    auto t1 = begin(*db, Mode::read_write);
    auto t2 = begin(*db, Mode::read_write);
    CHECK(must(t1->get("x")) == "0"s);
    CHECK(must(t2->get("x")) == "0"s);
    must(t1->put("x", "1"));
    must(t2->put("x", "2"));
    must(t1->commit());
    CHECK(error_of(t2->commit()) == Errc::storage_conflict);
    // Dead, with the same error, from every call.
    CHECK(error_of(t2->get("x")) == Errc::storage_conflict);
    CHECK(error_of(t2->put("y", "1")) == Errc::storage_conflict);
    t2.reset();
    CHECK(read(*db, "x") == "1"s);
  }
  SECTION("write skew: each writes what the other read") {
    auto t1 = begin(*db, Mode::read_write);
    auto t2 = begin(*db, Mode::read_write);
    CHECK(must(t1->get("a")) == "0"s);
    CHECK(must(t2->get("b")) == "0"s);
    must(t1->put("b", "1"));
    must(t2->put("a", "1"));
    must(t1->commit());
    CHECK(error_of(t2->commit()) == Errc::storage_conflict);
    t2.reset();
    CHECK(read(*db, "a") == "0"s);
    CHECK(read(*db, "b") == "1"s);
  }
  SECTION("a scan's range counts as read: an insert into it by another conflicts") {
    auto t1 = begin(*db, Mode::read_write);
    auto t2 = begin(*db, Mode::read_write);
    CHECK(keys_in(*t1, prefix_range("p"), Direction::forward).empty());
    CHECK(keys_in(*t2, prefix_range("p"), Direction::forward).empty());
    must(t1->put("p1", "t1"));
    must(t2->put("p2", "t2"));
    must(t1->commit());
    CHECK(error_of(t2->commit()) == Errc::storage_conflict);
    t2.reset();
    CHECK(keys_in(*begin(*db, Mode::read_only), prefix_range("p"), Direction::forward) ==
          std::vector<std::string>{"p1"});
  }
}

TEST_CASE("postgres: writers on keys far apart do not conflict", "[postgres]") {
  // The server tracks reads per index page, not per key: two transactions conflict when each
  // writes into a page the other read. Keys far apart in a table of many pages are independent.
  test::pg::Schema schema;
  auto db = open_pg(concurrent(schema));
  Entries filler;
  for (int i = 0; i < 20000; ++i) filler.emplace_back(numbered("m", 100000 + i), "x");
  write(*db, filler);
  sql("ANALYZE \"" + schema.name() + "\".entries");
  int conflicts = 0;
  for (int round = 0; round < 10; ++round) {
    auto t1 = begin(*db, Mode::read_write);
    auto t2 = begin(*db, Mode::read_write);
    const auto low = numbered("a", round);
    const auto high = numbered("z", round);
    CHECK_FALSE(must(t1->get(low)));
    CHECK_FALSE(must(t2->get(high)));
    must(t1->put(low, "1"));
    must(t2->put(high, "2"));
    must(t1->commit());
    auto second = t2->commit();
    if (!second) {
      CHECK(second.error().code() == Errc::storage_conflict);
      ++conflicts;
    }
  }
  CHECK(conflicts == 0);
}

TEST_CASE("postgres: round trips per call", "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"a", "1"}, {"b", "2"}, {"c", "3"}});
  auto t0 = trips(*db);

  SECTION("a read transaction: begin waits for its snapshot; its commit is not waited for") {
    auto txn = begin(*db, Mode::read_only);
    CHECK(trips(*db) - t0 == 1);
    CHECK(must(txn->get("a")) == "1"s);
    CHECK(trips(*db) - t0 == 2);
    CHECK(must(txn->get("a")) == "1"s);  // remembered
    CHECK_FALSE(must(txn->get("zz")));
    CHECK_FALSE(must(txn->get("zz")));  // so is absence
    CHECK(trips(*db) - t0 == 3);
    CHECK(keys_in(*txn, everything, Direction::forward).size() == 3);
    CHECK(trips(*db) - t0 == 4);
    // A small range fetched whole is kept: scanned again, it costs nothing.
    CHECK(keys_in(*txn, everything, Direction::forward).size() == 3);
    CHECK(trips(*db) - t0 == 4);
    must(txn->commit());
    CHECK(trips(*db) - t0 == 4);
  }
  SECTION("a write transaction: begin goes with the first statement, writes with the commit") {
    auto txn = begin(*db, Mode::read_write);
    CHECK(trips(*db) - t0 == 0);
    CHECK(must(txn->get("a")) == "1"s);
    CHECK(trips(*db) - t0 == 1);
    for (int i = 0; i < 20; ++i) must(txn->put(numbered("new", i), "v"));
    CHECK(must(txn->erase("a")));        // read before: known
    CHECK(must(txn->erase("new3")));     // written before: known
    CHECK_FALSE(must(txn->erase("a")));  // erased before: known
    CHECK(must(txn->get("new7")) == "v"s);
    CHECK(trips(*db) - t0 == 1);
    CHECK(must(txn->erase("b")));  // never seen: the server is asked
    CHECK(trips(*db) - t0 == 2);
    {
      // Erasing what a scan stands on needs no question either.
      auto cursor = must(txn->scan(prefix_range("c"), Direction::forward));
      CHECK(trips(*db) - t0 == 3);
      REQUIRE(cursor->valid());
      CHECK(must(txn->erase(cursor->key())));
      must(cursor->next());
      CHECK_FALSE(cursor->valid());
    }
    CHECK(trips(*db) - t0 == 3);
    // The kept range shows the writes since: "c" erased, and a new key in it.
    must(txn->put("c2", "new"));
    CHECK(keys_in(*txn, prefix_range("c"), Direction::forward) == std::vector<std::string>{"c2"});
    CHECK(trips(*db) - t0 == 3);
    must(txn->commit());
    CHECK(trips(*db) - t0 == 4);
    CHECK(keys_in(*begin(*db, Mode::read_only), everything, Direction::forward).size() == 20);
  }
  SECTION("a write transaction that only writes: one round trip") {
    auto txn = begin(*db, Mode::read_write);
    must(txn->put("d", "4"));
    must(txn->put("e", "5"));
    must(txn->commit());
    CHECK(trips(*db) - t0 == 1);
  }
  SECTION("a rollback is not waited for") {
    {
      auto txn = begin(*db, Mode::read_write);
      CHECK(must(txn->get("a")) == "1"s);
      must(txn->put("a", "lost"));
    }
    CHECK(trips(*db) - t0 == 1);
    CHECK(read(*db, "a") == "1"s);
  }
}

TEST_CASE("postgres: a scan fetches its range in growing, bounded batches", "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  Entries entries;
  for (int i = 0; i < 3000; ++i) entries.emplace_back(numbered("k", 10000 + i), "v");
  write(*db, entries);
  const auto dir = GENERATE(Direction::forward, Direction::reverse);
  auto txn = begin(*db, Mode::read_only);
  const auto t0 = trips(*db);
  auto cursor = must(txn->scan(prefix_range("k"), dir));
  CHECK(trips(*db) - t0 == 1);  // the first 128 rows, not all 3000
  int seen = 0;
  for (; cursor->valid(); must(cursor->next())) ++seen;
  CHECK(seen == 3000);
  // 128 + 256 + 512 + 1024 + 1024 + 56 rows.
  CHECK(trips(*db) - t0 == 6);

  SECTION("large rows make batches smaller") {
    auto big_db = open_pg(schema.options());
    Entries big;
    for (int i = 0; i < 6; ++i) big.emplace_back(numbered("big", i), pattern(3 << 20, i));
    for (const auto& e : big) write(*big_db, {e});
    auto reader = begin(*big_db, Mode::read_only);
    const auto b0 = trips(*big_db);
    auto c = must(reader->scan(prefix_range("big"), Direction::forward));
    int n = 0;
    for (; c->valid(); must(c->next())) {
      CHECK(c->value() == pattern(3 << 20, n));
      ++n;
    }
    CHECK(n == 6);
    // One batch of 128 rows (all 6), then none: 8 MiB over rows of 3 MiB leaves 2 per batch,
    // but there was nothing more to fetch.
    CHECK(trips(*big_db) - b0 == 1);
  }
}

TEST_CASE("postgres: writes past the buffer go to the server early and stay the transaction's",
          "[postgres]") {
  test::pg::Schema schema;
  auto options = schema.options();
  options.write_buffer_bytes = 1000;
  auto db = open_pg(options);
  write(*db, {{"keep", "1"}});
  const auto t0 = trips(*db);
  {
    auto txn = begin(*db, Mode::read_write);
    for (int i = 0; i < 100; ++i) must(txn->put(numbered("w", 1000 + i), std::string(100, 'v')));
    CHECK(trips(*db) - t0 >= 9);  // sent about every 1000 bytes
    CHECK(keys_in(*txn, prefix_range("w"), Direction::forward).size() == 100);
    CHECK(must(txn->get("w1050")) == std::string(100, 'v'));
    // Another transaction does not see them.
    CHECK_FALSE(read(*db, "w1050"));
  }  // rolled back
  CHECK(keys_in(*begin(*db, Mode::read_only), everything, Direction::forward) ==
        std::vector<std::string>{"keep"});
}

TEST_CASE("postgres: a connection the server ended is storage_unavailable before the commit, "
          "storage at it, and is not reused",
          "[postgres]") {
  test::pg::Schema schema;
  const std::string app = test::pg::fresh_schema_name("lost");
  const std::string conninfo = test::pg::conninfo() + " application_name=" + app;
  auto db = open_pg(schema.options(), conninfo);
  // Ends this test's sessions only (other tests share the cluster), the idle ones in the pool
  // too. Terminating is asynchronous: waits until those sessions are gone (their sockets closed).
  const auto end_sessions = [&] { test::pg::end_sessions(app); };
  write(*db, {{"a", "1"}});
  auto txn = begin(*db, Mode::read_write);
  CHECK(must(txn->get("a")) == "1"s);
  end_sessions();
  auto lost = txn->get("b");
  REQUIRE_FALSE(lost.has_value());
  // Nothing of the transaction was written: the Store runs such an operation again.
  CHECK(lost.error().code() == Errc::storage_unavailable);
  CHECK(error_of(txn->commit()) == Errc::storage_unavailable);
  txn.reset();
  // A session the server ended before the commit: seen before the COMMIT is sent, so the
  // transaction is known to have written nothing.
  auto committing = begin(*db, Mode::read_write);
  CHECK(must(committing->get("a")) == "1"s);
  must(committing->put("a", "unknown"));
  end_sessions();
  auto unknown = committing->commit();
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code() == Errc::storage_unavailable);
  CHECK(unknown.error().message().find("connection lost before the commit") != std::string::npos);
  committing.reset();
  CHECK(read(*db, "a") == "1"s);
  // The next transactions get connections that work.
  for (int i = 0; i < 3; ++i) CHECK(read(*db, "a") == "1"s);
  write(*db, {{"a", "2"}});
  CHECK(read(*db, "a") == "2"s);
}

TEST_CASE("postgres: max_connections holds a host to that many sessions; the next waits",
          "[postgres]") {
  test::pg::Schema schema;
  const std::string app = test::pg::fresh_schema_name("cap");
  auto options = schema.options();
  options.max_connections = 2;
  options.connection_wait = std::chrono::milliseconds(200);
  auto db = open_pg(options, test::pg::conninfo() + " application_name=" + app);
  write(*db, {{"a", "1"}});
  auto first = begin(*db, Mode::read_only);
  auto second = begin(*db, Mode::read_write);
  CHECK(must(second->get("a")) == "1"s);
  must(second->put("a", "2"));

  // Both in use: a third waits its 200 ms and fails, having sent nothing.
  auto third = db->begin(Mode::read_only);
  REQUIRE_FALSE(third.has_value());
  CHECK(third.error().code() == Errc::storage);
  CHECK(third.error().message().find("all 2 connections of this host") != std::string::npos);
  CHECK(db->stats().waits == 1);
  CHECK(db->stats().connections == 2);

  // A waiter is handed the connection the moment a transaction ends.
  auto patient_options = options;
  patient_options.connection_wait = std::chrono::minutes(10);
  auto patient_db = open_pg(patient_options, test::pg::conninfo() + " application_name=" + app);
  auto held = begin(*patient_db, Mode::read_only);
  auto held_too = begin(*patient_db, Mode::read_only);
  std::optional<std::string> seen;
  std::jthread waiter([&] {  // no Catch2 assertions off the main thread
    if (auto txn = patient_db->begin(Mode::read_only))
      if (auto value = (*txn)->get("a"); value && *value) seen = **value;
  });
  for (int i = 0; i < 6000 && patient_db->stats().waits == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto waited = patient_db->stats().waits;
  must(second->commit());  // another backend: frees nothing of this one's
  held.reset();
  waiter.join();
  CHECK(waited == 1);
  CHECK(seen == "2"s);
  CHECK(patient_db->stats().connections == 2);

  // Sessions the server ended are closed and replaced within the limit.
  held_too.reset();
  first.reset();
  second.reset();
  test::pg::end_sessions(app);
  auto again = begin(*db, Mode::read_write);
  CHECK(must(again->get("a")) == "2"s);
  auto again_too = begin(*db, Mode::read_only);
  CHECK(must(again_too->get("a")) == "2"s);
  CHECK(error_of(db->begin(Mode::read_only)) == Errc::storage);
  must(again->put("a", "3"));
  must(again->commit());
  again.reset();
  CHECK(read(*db, "a") == "3"s);
}

TEST_CASE("postgres: a server that refuses new sessions for a while is asked again",
          "[postgres]") {
  // A restart or a failover, played by a role that may not log in for a while: the pooled
  // sessions are gone, and new ones are refused until it may again.
  test::pg::Schema schema;
  write(*open_pg(schema.options()), {{"a", "1"}});
  const test::pg::Role temp("back", "LOGIN");
  REQUIRE(temp.made());
  const std::string& role = temp.name();
  sql("GRANT USAGE ON SCHEMA \"" + schema.name() + "\" TO \"" + role + "\"");
  sql("GRANT SELECT ON ALL TABLES IN SCHEMA \"" + schema.name() + "\" TO \"" + role + "\"");
  const std::string as_role = test::pg::conninfo() + " user=" + role + " application_name=" + role;
  const auto open_with = [&](std::chrono::milliseconds reconnect_wait) {
    auto options = schema.options();
    options.reconnect_wait = reconnect_wait;
    auto db = open_pg(options, as_role);
    CHECK(read(*db, "a") == "1"s);  // leaves a session in its pool
    return db;
  };
  auto patient = open_with(std::chrono::minutes(10));
  auto brief = open_with(std::chrono::milliseconds(200));
  auto at_once = open_with(std::chrono::milliseconds(0));
  REQUIRE(temp.may_log_in(false));
  test::pg::end_sessions(role);

  auto refused = at_once->begin(Mode::read_only);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message().find("cannot connect") != std::string::npos);
  CHECK(refused.error().message().find("tried again") == std::string::npos);
  CHECK(at_once->stats().connect_retries == 0);

  auto gave_up = brief->begin(Mode::read_only);
  REQUIRE_FALSE(gave_up.has_value());
  CHECK(gave_up.error().code() == Errc::storage);
  CHECK(gave_up.error().message().find("tried again for 200 ms") != std::string::npos);
  CHECK(brief->stats().connect_retries >= 1);

  std::optional<std::string> seen;
  std::jthread reader([&] {  // no Catch2 assertions off the main thread
    if (auto txn = patient->begin(Mode::read_only))
      if (auto value = (*txn)->get("a"); value && *value) seen = **value;
  });
  for (int i = 0; i < 6000 && patient->stats().connect_retries < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto retried = patient->stats().connect_retries;
  CHECK(temp.may_log_in(true));
  reader.join();
  CHECK(retried >= 2);
  CHECK(seen == "1"s);
  CHECK(read(*brief, "a") == "1"s);
}

TEST_CASE("postgres: sessions open where the server's statistics may not be read",
          "[postgres]") {
  // A session learns the server's run from its shared statistics, for the commit check (see
  // PostgresStats::commits_checked). An installation that keeps them from PUBLIC still opens
  // sessions and writes, without that check. In a database of its own: the grant is per
  // database.
  const test::pg::Role temp("nostats", "LOGIN");
  REQUIRE(temp.made());
  struct Database {
    std::string name = test::pg::fresh_schema_name("nostats");
    bool made = test::pg::run("CREATE DATABASE \"" + name + "\"");
    ~Database() { test::pg::run("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)"); }
  } database;
  REQUIRE(database.made);
  const std::string in_database = test::pg::conninfo() + " dbname=" + database.name;
  REQUIRE(test::pg::run("REVOKE SELECT ON pg_catalog.pg_stat_bgwriter FROM PUBLIC; GRANT CREATE "
                        "ON DATABASE \"" + database.name + "\" TO \"" + temp.name() + "\"",
                        in_database));
  const std::string as_role = in_database + " user=" + temp.name();
  REQUIRE_FALSE(test::pg::run("SELECT stats_reset FROM pg_stat_bgwriter", as_role));
  auto db = PostgresBackend::open(as_role);
  REQUIRE(db.has_value());
  write(**db, {{"a", "1"}});
  CHECK(read(**db, "a") == "1"s);
  CHECK((*db)->stats().connections >= 1);
}

TEST_CASE("postgres: a transaction may outlive its backend", "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"a", "1"}});
  auto reader = begin(*db, Mode::read_only);
  auto writer = begin(*db, Mode::read_write);
  db.reset();
  must(writer->put("b", "2"));
  must(writer->commit());
  CHECK(keys_in(*reader, everything, Direction::forward) == std::vector<std::string>{"a"});
  CHECK(read(*open_pg(schema.options()), "b") == "2"s);
}

TEST_CASE("postgres: another process shares the catalog", "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"parent", "1"}});
  auto held = begin(*db, Mode::read_only);  // a pooled connection stays the parent's
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child opens its own backend and leaves with _exit, never touching the parent's.
    int code = 0;
    auto other = PostgresBackend::open(test::pg::conninfo(), schema.options());
    if (!other) code = 1;
    if (code == 0) {
      auto txn = (*other)->begin(Mode::read_write);
      auto seen = txn ? (*txn)->get("parent") : Result<std::optional<std::string>>(txn.error());
      if (!seen || !*seen || **seen != "1") code = 2;
      if (code == 0 && (!(*txn)->put("child", "2") || !(*txn)->commit())) code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(must(held->get("parent")) == "1"s);
  CHECK_FALSE(must(held->get("child")));  // the snapshot is older
  held.reset();
  CHECK(read(*db, "child") == "2"s);
}

TEST_CASE("postgres: a forked child's use of its parent's catalog is an error, not shared sessions",
          "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"parent", "1"}});  // leaves a session in the pool
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 0;
    for (auto mode : {Mode::read_only, Mode::read_write}) {
      auto txn = db->begin(mode);
      if (txn || txn.error().code() != Errc::storage ||
          txn.error().message().find("opened by the parent of this process") == std::string::npos)
        code = 1;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The parent's sessions were not touched.
  CHECK(read(*db, "parent") == "1"s);
  write(*db, {{"parent", "2"}});
  CHECK(read(*db, "parent") == "2"s);
}

TEST_CASE("postgres: a role that may only read and write opens a catalog that exists",
          "[postgres]") {
  test::pg::Schema schema;
  write(*open_pg(schema.options()), {{"a", "1"}});
  const test::pg::Role temp("rw", "LOGIN");
  REQUIRE(temp.made());
  const std::string& role = temp.name();
  const std::string quoted = "\"" + schema.name() + "\"";
  sql("GRANT USAGE ON SCHEMA " + quoted + " TO \"" + role + "\"");
  sql("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + quoted + " TO \"" + role +
      "\"");
  const std::string as_role = test::pg::conninfo() + " user=" + role;
  for (bool concurrent_writers : {false, true}) {
    CAPTURE(concurrent_writers);
    auto options = schema.options();
    options.concurrent_writers = concurrent_writers;
    auto db = PostgresBackend::open(as_role, options);
    REQUIRE(db.has_value());
    CHECK(read(**db, "a") == "1"s);
    write(**db, {{"b", concurrent_writers ? "concurrent" : "turns"}});
    CHECK(read(**db, "b") == (concurrent_writers ? "concurrent"s : "turns"s));
  }
  // A catalog that is not there is still one it cannot make.
  test::pg::Schema missing;
  auto refused = PostgresBackend::open(as_role, missing.options());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage);
  CHECK(refused.error().message().find("cannot create the catalog's table") != std::string::npos);
}

TEST_CASE("postgres: a writer left idle in its transaction gives up the writers' turn",
          "[postgres]") {
  test::pg::Schema schema;
  auto options = schema.options();  // writers take turns
  options.idle_in_transaction_timeout = std::chrono::milliseconds(300);
  auto db = open_pg(options);
  write(*db, {{"a", "1"}});
  auto reader = begin(*db, Mode::read_only);
  auto frozen = begin(*db, Mode::read_write);
  CHECK(must(frozen->get("a")) == "1"s);  // sent with the lock of the writers' turn
  must(frozen->put("a", "frozen"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // A reader holds no turn, and is let wait (an export writing to a slow pipe).
  CHECK(must(reader->get("a")) == "1"s);
  reader.reset();
  // Another host's writer gets the turn. Its own lock_timeout turns a turn still held into an
  // error, not a wait without end.
  auto other = open_pg(options, test::pg::conninfo() + " options='-c lock_timeout=5000'");
  write(*other, {{"a", "other"}});
  // The idle one's session was ended: its commit wrote nothing, and says it may run again.
  CHECK(error_of(frozen->commit()) == Errc::storage_unavailable);
  frozen.reset();
  CHECK(read(*db, "a") == "other"s);
}

TEST_CASE("postgres: a writer waits for the writers' turn no longer than the idle limit",
          "[postgres]") {
  // A frozen host's sessions that were waiting for the turn would otherwise take it one after
  // the other once it is free, and sit idle in it for the idle limit each; a waiter that gives
  // up by itself never takes it.
  test::pg::Schema schema;
  auto holder_db = open_pg(schema.options());  // 60 s: holds the turn through this test
  write(*holder_db, {{"a", "1"}});
  auto holder = begin(*holder_db, Mode::read_write);
  CHECK(must(holder->get("a")) == "1"s);  // sent with the lock of the writers' turn
  must(holder->put("a", "holder"));

  auto options = schema.options();
  options.idle_in_transaction_timeout = std::chrono::milliseconds(300);
  auto waiter_db = open_pg(options);
  auto waiter = begin(*waiter_db, Mode::read_write);
  const auto waited = waiter->get("a");
  REQUIRE_FALSE(waited.has_value());
  CHECK(waited.error().code() == Errc::storage);
  CHECK(waited.error().message().find("waited longer than lock_timeout for a lock") !=
        std::string::npos);
  waiter.reset();
  // It left the holder as it was, and wrote nothing.
  must(holder->commit());
  holder.reset();
  CHECK(read(*waiter_db, "a") == "holder"s);
  // A turn that is free is taken at once, and readers never wait.
  write(*waiter_db, {{"a", "waiter"}});
  CHECK(read(*holder_db, "a") == "waiter"s);
}

TEST_CASE("postgres: after conflicts in a row a thread's next write transaction runs alone",
          "[postgres]") {
  test::pg::Schema schema;
  auto options = concurrent(schema);
  options.exclusive_after_conflicts = 2;
  auto db = open_pg(options);
  write(*db, {{"x", "0"}});
  const std::string table = "\"" + schema.name() + "\".entries";
  // Two conflicts: each time another session changes x after this transaction read it.
  for (int i = 1; i <= 2; ++i) {
    auto txn = begin(*db, Mode::read_write);
    CHECK(must(txn->get("x")) == numbered("", i - 1));
    sql("UPDATE " + table + " SET v = '" + std::to_string(i) + "'::bytea WHERE k = 'x'::bytea");
    must(txn->put("x", "mine"));
    CHECK(error_of(txn->commit()) == Errc::storage_conflict);
  }
  CHECK(db->stats().conflicts == 2);
  CHECK(db->stats().exclusive == 0);

  // The third runs alone: another host's concurrent writer waits for it (on the writers' turn
  // lock, before its snapshot), a reader does not.
  auto alone = begin(*db, Mode::read_write);
  CHECK(db->stats().exclusive == 1);
  CHECK(must(alone->get("x")) == "2"s);
  auto other_host = open_pg(concurrent(schema));
  std::thread other([&] { write(*other_host, {{"x", "other"}}); });
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    waiting = sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                  "query LIKE 'LOCK TABLE \"" +
                  schema.name() + "\".writer_turn IN ROW EXCLUSIVE MODE%'") == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(waiting);
  CHECK(read(*db, "x") == "2"s);  // readers go on
  must(alone->put("x", "alone"));
  must(alone->commit());
  other.join();
  CHECK(read(*db, "x") == "other"s);  // it waited, then went after

  // Its success ended the streak: the next one is not run alone.
  write(*db, {{"y", "1"}});
  CHECK(db->stats().exclusive == 1);
}

TEST_CASE("postgres: by default writers take turns: the next waits, then sees the first's writes",
          "[postgres]") {
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"x", "0"}});
  const auto alone0 = db->stats().exclusive;
  auto first = begin(*db, Mode::read_write);
  CHECK(must(first->get("x")) == "0"s);
  // A second writer, on another thread: it waits for the first to end, then reads what it wrote
  // and writes after it; neither conflicts (the lost update of the conflict test cannot happen).
  std::optional<std::string> seen;
  std::thread second([&] {
    auto txn = begin(*db, Mode::read_write);
    seen = must(txn->get("x"));
    must(txn->put("x", *seen + "+second"));
    must(txn->commit());
  });
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting; ++i) {
    waiting = sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                  "query LIKE 'LOCK TABLE \"" +
                  schema.name() + "\"%'") == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(waiting);
  CHECK(read(*db, "x") == "0"s);  // readers go on
  must(first->put("x", "first"));
  must(first->commit());
  second.join();
  CHECK(seen == "first"s);
  CHECK(read(*db, "x") == "first+second"s);
  CHECK(db->stats().conflicts == 0);
  CHECK(db->stats().exclusive - alone0 == 2);
}

TEST_CASE("postgres: taking turns, transactions run at REPEATABLE READ: the server tracks none "
          "of their reads; concurrent writers run at SERIALIZABLE",
          "[postgres]") {
  test::pg::Schema schema;
  // The server's read tracking of SERIALIZABLE (SIRead locks) on this catalog's table and index.
  auto tracked = [&] {
    return std::stoi(sql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                         "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE l.mode = "
                         "'SIReadLock' AND n.nspname = '" +
                         schema.name() + "'")
                         .value());
  };
  {
    auto db = open_pg(schema.options());
    write(*db, {{"x", "0"}});
    auto reader = begin(*db, Mode::read_only);
    CHECK(must(reader->get("x")) == "0"s);
    auto writer = begin(*db, Mode::read_write);
    CHECK(must(writer->get("x")) == "0"s);
    CHECK(tracked() == 0);
    must(writer->put("x", "1"));
    must(writer->commit());
    must(reader->commit());
    CHECK(db->stats().conflicts == 0);
  }
  auto db = open_pg(concurrent(schema));
  auto writer = begin(*db, Mode::read_write);
  CHECK(must(writer->get("x")) == "1"s);
  CHECK(tracked() > 0);
  must(writer->commit());
}

TEST_CASE("postgres: a writer's turn does not lock out autovacuum", "[postgres]") {
  // Writers take turns on a lock of their own (writer_turn), not on the entries table: an
  // EXCLUSIVE lock there refuses autovacuum's SHARE UPDATE EXCLUSIVE, so under a steady stream of
  // writes the table was never vacuumed (the server logged "skipping vacuum ... lock not
  // available" for as long as writes went on).
  test::pg::Schema schema;
  auto db = open_pg(schema.options());
  write(*db, {{"x", "0"}});
  for (bool together : {false, true}) {
    INFO((together ? "concurrent writers" : "writers taking turns"));
    auto writer = together ? open_pg(concurrent(schema)) : open_pg(schema.options());
    auto txn = begin(*writer, Mode::read_write);
    CHECK(must(txn->get("x")) == "0"s);  // BEGIN and the writer's lock have reached the server
    // (This schema's lock only: tests running beside this one have writer_turn tables too.)
    CHECK(sql("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
              "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '" +
              schema.name() + "' AND c.relname = 'writer_turn' AND l.granted AND l.mode = '" +
              std::string(together ? "RowExclusiveLock" : "ExclusiveLock") + "'") == "1");
    // What autovacuum takes on the table, refused at once (NOWAIT) if anything held it off.
    CHECK(sql("BEGIN; LOCK TABLE \"" + schema.name() +
              "\".entries IN SHARE UPDATE EXCLUSIVE MODE NOWAIT; COMMIT") == std::nullopt);
    must(txn->commit());
  }
}
