// catalog-bench on PostgreSQL, and the writers measurement. Included by catalog-bench.cpp after
// its helpers (open_store, the counting backend, timing and reporting), which it uses: it is a
// part of that program kept apart, not a header of the library.
//
// 1 (PostgreSQL). Each catalog operation is timed alone; right after it, a raw libpq client
//    replays the same statements in one transaction on a connection of its own: BEGIN with its
//    first read, each read the operation made (a get, or a scan's first batch of up to 128 rows,
//    against the catalog's own table, so the same rows are read; a repeated one only once, as a
//    program keeping what it read would), then the writes as the backend sends them (each key's
//    last write; several puts, or erases, as one statement of arrays) and COMMIT in one pipeline
//    (into a table of its own, so the catalog is not changed). The ratio is catalog / raw: what
//    the catalog adds to the database work it cannot avoid.
// 7. Writers: 1, 2 and 4 processes, each its own Store on the same catalog, each alternating a
//    create in one collection (a search index in one service) with following (then unfollowing)
//    one entity; throughput, and the retry rate (transactions that conflicted per operation).
//    On PostgreSQL twice: writers taking turns (the default, judged against the targets) and
//    running concurrently.

#ifndef CATALOG_EXAMPLES_BENCH_POSTGRES_HPP
#define CATALOG_EXAMPLES_BENCH_POSTGRES_HPP

#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/detail/storage/pg_array.hpp>
#include <catalog/storage/postgres_backend.hpp>

#include <libpq-fe.h>
#endif

#include <sys/wait.h>

#include <map>
#include <set>
#include <tuple>

namespace {

#ifdef CATALOG_EXAMPLES_POSTGRES

// ---------------------------------------------------------------------------------------------
// The raw libpq baseline

class RawPg {
 public:
  // Reads from `read_schema`'s table (the catalog's), writes into `write_schema`'s (made here).
  RawPg(const std::string& conninfo, const std::string& read_schema,
        const std::string& write_schema, bool sync) {
    conn_ = PQconnectdb(conninfo.c_str());
    if (PQstatus(conn_) != CONNECTION_OK)
      throw BenchFailure("raw libpq: cannot connect: " + std::string(PQerrorMessage(conn_)));
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    const std::string read = "\"" + read_schema + "\".entries";
    const std::string write = "\"" + write_schema + "\".entries";
    exec("CREATE SCHEMA IF NOT EXISTS \"" + write_schema + "\"");
    exec("CREATE TABLE IF NOT EXISTS " + write +
         " (k bytea PRIMARY KEY, v bytea NOT NULL) WITH (fillfactor = 80)");
    if (!sync) exec("SET synchronous_commit = off");
    prepare("g", "SELECT v FROM " + read + " WHERE k = $1", 1);
    prepare("f", "SELECT k, v FROM " + read + " WHERE k >= $1 AND k < $2 ORDER BY k LIMIT 128", 2);
    prepare("fa", "SELECT k, v FROM " + read + " WHERE k >= $1 ORDER BY k LIMIT 128", 1);
    prepare("r", "SELECT k, v FROM " + read + " WHERE k >= $1 AND k < $2 ORDER BY k DESC LIMIT 128",
            2);
    prepare("ra", "SELECT k, v FROM " + read + " WHERE k >= $1 ORDER BY k DESC LIMIT 128", 1);
    prepare("p",
            "INSERT INTO " + write +
                " (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
            2);
    prepare("d", "DELETE FROM " + write + " WHERE k = $1", 1);
    // As the backend sends many writes: one statement of arrays for the puts, one for the erases.
    prepare("pm",
            "INSERT INTO " + write +
                " (k, v) SELECT * FROM unnest($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v",
            2, bytea_array_oid);
    prepare("dm", "DELETE FROM " + write + " WHERE k = ANY($1)", 1, bytea_array_oid);
    if (!PQenterPipelineMode(conn_)) throw BenchFailure("raw libpq: cannot enter pipeline mode");
  }
  ~RawPg() { PQfinish(conn_); }
  RawPg(const RawPg&) = delete;
  RawPg& operator=(const RawPg&) = delete;

  // One transaction replaying `calls`; returns the seconds it took and counts its round trips.
  double run(const std::vector<StorageCall>& calls) {
    auto t0 = Clock::now();
    bool begun = false;
    std::set<std::string> got;
    std::set<std::tuple<std::string, std::optional<std::string>, bool>> scanned;
    auto begin = [&] {
      if (!begun) send_text("BEGIN ISOLATION LEVEL SERIALIZABLE");
      begun = true;
    };
    for (const auto& c : calls) {
      if (c.kind == StorageCall::get) {
        if (!got.insert(c.key).second) continue;
        begin();
        send("g", {c.key});
        sync();
      } else if (c.kind == StorageCall::scan) {
        if (!scanned.insert({c.key, c.end, c.reverse}).second) continue;
        begin();
        if (c.end)
          send(c.reverse ? "r" : "f", {c.key, *c.end});
        else
          send(c.reverse ? "ra" : "fa", {c.key});
        sync();
      }
    }
    begin();
    // What the backend sends: each key's last write, one statement for one put (or erase), one
    // of arrays for several.
    std::map<std::string_view, std::optional<std::string_view>> last;
    for (const auto& c : calls) {
      if (c.kind == StorageCall::put) last[c.key] = std::string_view(c.value);
      if (c.kind == StorageCall::erase) last[c.key] = std::nullopt;
    }
    std::vector<std::string_view> put_keys, put_values, erase_keys;
    for (const auto& [key, value] : last) {
      if (value) {
        put_keys.push_back(key);
        put_values.push_back(*value);
      } else {
        erase_keys.push_back(key);
      }
    }
    if (put_keys.size() == 1) send("p", {put_keys[0], put_values[0]});
    if (put_keys.size() > 1) send("pm", {bytea_array(put_keys), bytea_array(put_values)});
    if (erase_keys.size() == 1) send("d", {erase_keys[0]});
    if (erase_keys.size() > 1) send("dm", {bytea_array(erase_keys)});
    send_text("COMMIT");
    sync();
    return seconds_since(t0);
  }

  std::uint64_t round_trips = 0;

 private:
  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    const std::string message = PQresultErrorMessage(r);
    PQclear(r);
    if (!ok) throw BenchFailure("raw libpq: " + sql + ": " + message);
  }
  static constexpr unsigned bytea_oid = catalog::storage::detail::bytea_oid;
  static constexpr unsigned bytea_array_oid = catalog::storage::detail::bytea_array_oid;
  static std::string bytea_array(const std::vector<std::string_view>& items) {
    return catalog::storage::detail::bytea_array(items);
  }

  void prepare(const char* name, const std::string& sql, int params, unsigned type = bytea_oid) {
    std::vector<unsigned> types(static_cast<std::size_t>(params), type);
    PGresult* r = PQprepare(conn_, name, sql.c_str(), params, types.data());
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) throw BenchFailure("raw libpq: cannot prepare " + sql);
  }
  void send(const char* name, std::initializer_list<std::string_view> params) {
    const char* values[2];
    int lengths[2], formats[2] = {1, 1};
    int n = 0;
    for (auto p : params) {
      values[n] = p.data();
      lengths[n] = static_cast<int>(p.size());
      ++n;
    }
    if (!PQsendQueryPrepared(conn_, name, n, values, lengths, formats, 1))
      throw BenchFailure("raw libpq: cannot send");
    ++queued_;
  }
  void send_text(const char* sql) {
    if (!PQsendQueryParams(conn_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0))
      throw BenchFailure("raw libpq: cannot send");
    ++queued_;
  }
  // Sends a sync and reads every result up to it: one round trip.
  void sync() {
    if (!PQpipelineSync(conn_)) throw BenchFailure("raw libpq: cannot sync");
    ++round_trips;
    for (;;) {
      PGresult* r = PQgetResult(conn_);
      if (!r) continue;
      const auto status = PQresultStatus(r);
      PQclear(r);
      if (status == PGRES_PIPELINE_SYNC) break;
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw BenchFailure("raw libpq: a statement failed: " + std::string(PQerrorMessage(conn_)));
    }
    queued_ = 0;
  }

  PGconn* conn_ = nullptr;
  int queued_ = 0;
};

void durable_ops_postgres(const fs::path& root, const Scale& sc) {
  heading("1. Single operations vs raw libpq running the same statements (PostgreSQL)");
  std::cout
      << "  Each catalog op is timed alone; right after it, a raw libpq client replays its\n"
         "  statements in one transaction: BEGIN with the first read, each distinct get or\n"
         "  scan (first batch) on the catalog's table as its own round trip, then every put\n"
         "  and erase with COMMIT in one pipeline (into a table of its own). Ratio = catalog\n"
         "  / raw. `sync`: synchronous_commit on; `no_sync`: off.\n";
  for (auto mode : {storage::Durability::sync, storage::Durability::no_sync}) {
    const bool sync = mode == storage::Durability::sync;
    const std::string mode_name = sync ? "sync" : "no_sync";
    mode_now = mode_name;
    auto dir = root / ("ops-" + mode_name);
    auto o = open_store(dir, mode);
    auto& store = *o.store;
    const auto raw_schema = schema_of(root / ("raw-" + mode_name));
    if (postgres_target->made.insert(raw_schema).second) (void)need_drop(raw_schema);
    RawPg raw(postgres_target->conninfo, schema_of(dir), raw_schema, sync);
    CreateUser u;
    u.name = "follower";
    u.email = "follower@example.com";
    auto user = need(store.create<User>(o.admin, u), "creating a user");
    CreateGlossary g;
    g.name = "Ops";
    g.description = "Terms made by the single-operation benchmark";
    need(store.create<Glossary>(o.admin, g), "creating a glossary");

    struct Samples {
      std::vector<double> catalog, raw, trips, raw_trips, gets, scans, puts;
    };
    Samples create, patch, follow;
    auto* pg = dynamic_cast<storage::PostgresBackend*>(o.io->inner());
    auto measure = [&](Samples& s, bool keep, auto&& op) {
      o.io->calls.clear();
      o.io->record = true;
      o.io->record_calls = true;
      auto before = o.io->stats;
      const auto trips0 = pg->stats().round_trips;
      auto t0 = Clock::now();
      op();
      double t = seconds_since(t0);
      o.io->record = false;
      const auto trips = pg->stats().round_trips - trips0;
      auto after = o.io->stats;
      const auto raw_trips0 = raw.round_trips;
      double r = raw.run(o.io->calls);
      if (!keep) return;
      s.catalog.push_back(t);
      s.raw.push_back(r);
      s.trips.push_back(static_cast<double>(trips));
      s.raw_trips.push_back(static_cast<double>(raw.round_trips - raw_trips0));
      s.gets.push_back(static_cast<double>(after.gets - before.gets));
      s.scans.push_back(static_cast<double>(after.scans - before.scans));
      s.puts.push_back(static_cast<double>(after.puts - before.puts));
    };
    const int warmup = 5;
    for (int i = 0; i < sc.durable_ops + warmup; ++i) {
      const bool keep = i >= warmup;
      GlossaryTerm term;
      measure(create, keep, [&] {
        CreateGlossaryTerm req;
        req.glossary = "Ops";
        req.name = numbered("term-", i);
        req.description = "A term of the single-operation benchmark, number " + std::to_string(i);
        term = need(store.create<GlossaryTerm>(o.admin, req), "creating a term");
      });
      measure(patch, keep, [&] {
        boost::json::object p{{"description", "Patched description " + std::to_string(i)}};
        need(store.patch<GlossaryTerm>(o.admin, term.id, p), "patching a term");
      });
      measure(follow, keep, [&] {
        need(store.follow<GlossaryTerm>(o.admin, term.id, user.id), "following a term");
      });
    }
    for (auto [name, s] : {std::pair<const char*, Samples*>{"create glossary term", &create},
                           {"patch description", &patch},
                           {"follow", &follow}}) {
      const double cm = median(s->catalog), rm = median(s->raw);
      const std::string label = std::string(name) + " (" + mode_name + ")";
      const auto op =
          line(label, static_cast<std::int64_t>(s->catalog.size()),
               cm * static_cast<double>(s->catalog.size()), cm,
               "p90 " + human(quantile(s->catalog, 0.9)) + " | " + fixed(median(s->trips), 0) +
                   " round trips for " + fixed(median(s->gets), 0) + " gets, " +
                   fixed(median(s->scans), 0) + " scans, " + fixed(median(s->puts), 0) + " puts");
      as_median();
      compared_with(op, "raw libpq: the same statements", rm);
      line("  raw libpq: the same statements", static_cast<std::int64_t>(s->raw.size()),
           rm * static_cast<double>(s->raw.size()), rm,
           "p90 " + human(quantile(s->raw, 0.9)) + " | " + fixed(median(s->raw_trips), 0) +
               " round trips | ratio median " + fixed(cm / rm) + "x, p90 " +
               fixed(quantile(s->catalog, 0.9) / quantile(s->raw, 0.9)) + "x");
      as_median();
      figures.back().name = label + " raw libpq: the same statements";
      if (sync)
        verdict(cm / rm <= 1.5, std::string("durable ") + name +
                                    " within 1.5x of raw libpq running the same statements "
                                    "(median " +
                                    fixed(cm / rm) + "x)");
    }
  }
}

#endif  // CATALOG_EXAMPLES_POSTGRES

// ---------------------------------------------------------------------------------------------
// 7. Writers

// What one writer process did, written to the parent through a pipe as one line.
struct WriterResult {
  std::int64_t ops = 0, failures = 0;
  double seconds = 0;
  std::uint64_t conflicts = 0, exclusive = 0;
};

// One writer: its own Store, `ops` operations alternating a create in collection "svc" and a
// follow or unfollow of the search index "hot" by its own user. Runs in a child process.
WriterResult run_writer(const fs::path& dir, int w, int ops, int go_fd) {
  WriterResult res;
  auto o = open_store(dir, storage::Durability::sync);
  auto& store = *o.store;
  auto me = need(store.principal(numbered("writer-", w)), "getting the writer");
  auto hot = need(store.get_json(o.admin, Kind::search_index, EntityKey::by_fqn("svc.hot")),
                  "reading the hot index");
  const auto hot_id = parse_uuid(std::string(hot.at("id").as_string())).value();
  char go = 0;
  if (::read(go_fd, &go, 1) != 1) throw BenchFailure("writer: no start signal");
  auto t0 = Clock::now();
  bool following = false;
  for (int i = 0; i < ops; ++i) {
    bool ok = false;
    if (i % 2 == 0) {
      CreateSearchIndex req;
      req.name = "w" + std::to_string(w) + "-" + std::to_string(i);
      req.service = "svc";
      req.fields.resize(1);
      req.fields[0].name = "id";
      req.fields[0].data_type = "KEYWORD";
      ok = store.create_json(o.admin, Kind::search_index, to_json(req)).has_value();
    } else {
      following = !following;
      ok = following ? store.follow_json(me, Kind::search_index, hot_id, me.id).has_value()
                     : store.unfollow_json(me, Kind::search_index, hot_id, me.id).has_value();
    }
    ++res.ops;
    if (!ok) ++res.failures;
  }
  res.seconds = seconds_since(t0);
#ifdef CATALOG_EXAMPLES_POSTGRES
  if (auto* pg = dynamic_cast<storage::PostgresBackend*>(o.io->inner())) {
    res.conflicts = pg->stats().conflicts;
    res.exclusive = pg->stats().exclusive;
  }
#endif
  return res;
}

void writers_once(const fs::path& root, int ops, const std::string& suffix, bool judge);

void writers(const fs::path& root, const Scale& sc) {
  heading("7. Writers: processes creating in one collection and following one entity");
  std::cout << "  Each writer is a process with its own Store on the same catalog (durable\n"
               "  commits), alternating a create in one collection with a follow or unfollow of\n"
               "  one entity by its own user. Retry rate = transactions that conflicted with\n"
               "  another writer (and ran again) per operation.\n";
  const int ops = sc.full ? 400 : 40;
  // On PostgreSQL, with writers taking turns (the default) and running concurrently.
  std::vector<bool> modes{false};
  if (postgres_target) modes.push_back(true);
  for (bool concurrent : modes) {
    if (postgres_target) {
      postgres_target->concurrent_writers = concurrent;
      std::cout << (concurrent ? "  PostgreSQL, concurrent writers (conflicts retried):\n"
                               : "  PostgreSQL, writers taking turns (the default):\n");
    }
    writers_once(root, ops, concurrent ? "-concurrent" : "", !concurrent);
  }
  if (postgres_target) postgres_target->concurrent_writers = false;
}

void writers_once(const fs::path& root, int ops, const std::string& suffix, bool judge) {
  // On PostgreSQL the mode says how writers meet too: taking turns, or concurrently.
  mode_now = !postgres_target ? "sync" : suffix.empty() ? "sync_turns" : "sync_concurrent";
  std::vector<std::pair<int, double>> throughput;
  for (int n : {1, 2, 4}) {
    auto dir = root / ("writers-" + std::to_string(n) + suffix);
    {
      auto o = open_store(dir, storage::Durability::no_sync);
      CreateService s;
      s.name = "svc";
      s.service_type = "ElasticSearch";
      need(o.store->create<SearchService>(o.admin, s), "creating the service");
      CreateSearchIndex hot;
      hot.name = "hot";
      hot.service = "svc";
      need(o.store->create<SearchIndex>(o.admin, hot), "creating the hot index");
      for (int w = 0; w < n; ++w) {
        CreateUser u;
        u.name = numbered("writer-", w);
        u.email = u.name + "@example.com";
        need(o.store->create<User>(o.admin, u), "creating a writer's user");
      }
    }
    int go[2], results[2];
    if (::pipe(go) != 0 || ::pipe(results) != 0) throw BenchFailure("pipe");
    std::vector<pid_t> pids;
    for (int w = 0; w < n; ++w) {
      const pid_t pid = ::fork();
      if (pid < 0) throw BenchFailure("fork");
      if (pid == 0) {
        ::close(go[1]);
        ::close(results[0]);
        int code = 0;
        try {
          auto r = run_writer(dir, w, ops, go[0]);
          const std::string line = std::to_string(r.ops) + " " + std::to_string(r.failures) + " " +
                                   fixed(r.seconds, 6) + " " + std::to_string(r.conflicts) + " " +
                                   std::to_string(r.exclusive) + "\n";
          if (::write(results[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            code = 2;
        } catch (const std::exception& e) {
          std::cerr << "writer " << w << ": " << e.what() << '\n';
          code = 1;
        }
        ::_exit(code);
      }
      pids.push_back(pid);
    }
    ::close(go[0]);
    ::close(results[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every writer opened
    auto t0 = Clock::now();
    const std::string start(static_cast<std::size_t>(n), 'g');
    if (::write(go[1], start.data(), start.size()) != static_cast<ssize_t>(start.size()))
      throw BenchFailure("cannot start the writers");
    std::string out;
    char buf[256];
    for (ssize_t got; (got = ::read(results[0], buf, sizeof buf)) > 0;)
      out.append(buf, static_cast<std::size_t>(got));
    const double wall = seconds_since(t0);
    ::close(go[1]);
    ::close(results[0]);
    for (pid_t pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw BenchFailure("a writer failed");
    }
    WriterResult sum;
    std::istringstream in(out);
    for (WriterResult r; in >> r.ops >> r.failures >> r.seconds >> r.conflicts >> r.exclusive;) {
      sum.ops += r.ops;
      sum.failures += r.failures;
      sum.conflicts += r.conflicts;
      sum.exclusive += r.exclusive;
    }
    if (sum.failures != 0)
      throw BenchFailure(std::to_string(sum.failures) + " writer operations failed");
    const double per_s = static_cast<double>(sum.ops) / wall;
    throughput.emplace_back(n, per_s);
    line(std::to_string(n) + " writer process" + (n > 1 ? "es" : ""), sum.ops, wall,
         wall / static_cast<double>(sum.ops),
         fixed(per_s, 0) + " ops/s | retries " + std::to_string(sum.conflicts) + " (" +
             fixed(100.0 * static_cast<double>(sum.conflicts) / static_cast<double>(sum.ops), 1) +
             "% of operations), ran alone " + std::to_string(sum.exclusive));
    figures.back().values = {
        {"processes", n},
        {"ops_per_s", per_s},
        {"retries", static_cast<double>(sum.conflicts)},
        {"retry_rate", static_cast<double>(sum.conflicts) / static_cast<double>(sum.ops)},
        {"ran_alone", static_cast<double>(sum.exclusive)}};
    if (n == 4 && judge) {
      const double gain = per_s / throughput.front().second;
      verdict(gain >= 1.5, "4 writers at least 1.5x the throughput of 1 (" + fixed(gain) + "x)");
      const double rate = static_cast<double>(sum.conflicts) / static_cast<double>(sum.ops);
      verdict(rate < 0.05,
              "retries under 5% of operations with 4 writers (" + fixed(100.0 * rate, 1) + "%)");
    }
  }
}

}  // namespace

#endif  // CATALOG_EXAMPLES_BENCH_POSTGRES_HPP
