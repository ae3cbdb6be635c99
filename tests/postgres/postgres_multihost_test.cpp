// Several hosts on one PostgreSQL catalog: processes, each with its own
// Store and several threads, patch, follow, vote on and create the same entities at once, with
// writers taking turns (the default) and again running concurrently. Each
// thread keeps what was acknowledged to it; after the processes end, the parent checks the
// catalog against those acknowledgements:
// - every patched entity's versions are contiguous (+0.1 for each acknowledged patch, each
//   acknowledged version exactly once, holding what that patch wrote);
// - of the concurrent creates of one name exactly one won, every other got 409;
// - followers and votes are what each user's last acknowledged operation left;
// - list totals equal full list walks and the acknowledged creates;
// - store.verify() finds nothing wrong.
//
// Environment (longer runs): CATALOG_MULTIHOST_PROCESSES (default 3), CATALOG_MULTIHOST_THREADS
// (default 3), CATALOG_MULTIHOST_OPS operations per thread (default 60), CATALOG_MULTIHOST_SEED
// (default 1).
#include <catalog/json.hpp>
#include <catalog/postgres.hpp>
#include <catalog/store.hpp>

#include "../support.hpp"
#include "pg_sessions.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace catalog;
namespace bj = boost::json;

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct Config {
  int processes = env_int("CATALOG_MULTIHOST_PROCESSES", 3);
  int threads = env_int("CATALOG_MULTIHOST_THREADS", 3);
  int ops = env_int("CATALOG_MULTIHOST_OPS", 60);
  unsigned seed = static_cast<unsigned>(env_int("CATALOG_MULTIHOST_SEED", 1));
  int race_names = 12;  // glossary terms "Race.r<k>" every thread tries to create
};

// The entities every thread patches, follows and votes on.
struct Hot {
  Kind kind;
  const char* fqn;
};
constexpr Hot hot[] = {{Kind::glossary, "Hot"},
                       {Kind::glossary_term, "Hot.t"},
                       {Kind::mlmodel, "ml.hot"},
                       {Kind::search_index, "es.hot"}};
constexpr int hot_count = static_cast<int>(std::size(hot));

std::string user_name(int p, int t) { return "u" + std::to_string(p) + "x" + std::to_string(t); }

StoreOptions options() {
  StoreOptions o;
  o.admins = {"admin"};
  return o;
}

// One acknowledged operation, as a line: tag, process, thread, then what it was.
//   P <hot> <version tenths> <value>   a patch (description set to value)
//   F <hot> <0|1>                      unfollow / follow by the thread's user
//   V <hot> <vote type>                a vote by the thread's user
//   C <k> <id>                         created Race.r<k>
//   L <k>                              409 for Race.r<k>
//   W <n>                              a list walk saw n terms, in order, none twice
//   X <message>                        anything unexpected
void run_thread(Store& s, const Config& c, int p, int t, std::vector<std::string>& out) {
  auto say = [&](std::string line) {
    out.push_back(std::to_string(p) + " " + std::to_string(t) + " " + std::move(line));
  };
  auto admin = s.principal("admin");
  auto me = s.principal(user_name(p, t));
  if (!admin || !me) return say("X principals: cannot read them");
  std::mt19937 rng(c.seed * 7919u + static_cast<unsigned>(p * 131 + t));
  auto below = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::vector<Uuid> ids;
  for (const auto& h : hot) {
    auto e = s.get_json(*admin, h.kind, EntityKey::by_fqn(h.fqn));
    if (!e) return say("X reading " + std::string(h.fqn) + ": " + e.error().message());
    ids.push_back(test::uuid_of(*e));
  }
  int next_race = below(c.race_names);
  for (int i = 0; i < c.ops; ++i) {
    const int roll = below(100);
    const int j = below(hot_count);
    const Kind kind = hot[j].kind;
    if (roll < 20) {
      // Race for a name: every thread tries every name, in a different order.
      const int k = next_race;
      next_race = (next_race + 1 + below(3)) % c.race_names;
      auto made = s.create_json(*admin, Kind::glossary_term,
                                test::parse(R"({"glossary":"Race","name":"r)" + std::to_string(k) +
                                            R"(","description":"raced"})"));
      if (made)
        say("C " + std::to_string(k) + " " + test::id_of(*made));
      else if (made.error().code() == Errc::already_exists &&
               made.error().kind() == ErrorKind::conflict)
        say("L " + std::to_string(k));
      else
        say("X create r" + std::to_string(k) + ": " + made.error().message());
    } else if (roll < 55) {
      const auto value =
          "p" + std::to_string(p) + "t" + std::to_string(t) + "i" + std::to_string(i);
      auto patched = s.patch_json(*admin, kind, ids[static_cast<std::size_t>(j)],
                                  bj::object{{"description", value}});
      if (!patched)
        say("X patch " + std::string(hot[j].fqn) + ": " + patched.error().message());
      else
        say("P " + std::to_string(j) + " " +
            std::to_string(Version::parse(test::version_of(*patched)).value().tenths()) + " " +
            value);
    } else if (roll < 80) {
      const bool follow = below(3) != 0;
      const auto& id = ids[static_cast<std::size_t>(j)];
      auto done =
          follow ? s.follow_json(*me, kind, id, me->id) : s.unfollow_json(*me, kind, id, me->id);
      if (!done)
        say("X follow " + std::string(hot[j].fqn) + ": " + done.error().message());
      else
        say("F " + std::to_string(j) + " " + (follow ? "1" : "0"));
    } else if (roll < 96) {
      const auto v = static_cast<VoteType>(below(3));
      auto done = s.vote_json(*me, kind, ids[static_cast<std::size_t>(j)], v);
      if (!done)
        say("X vote " + std::string(hot[j].fqn) + ": " + done.error().message());
      else
        say("V " + std::to_string(j) + " " + std::to_string(static_cast<int>(v)));
    } else {
      // A list walk while others write: in (name, id) order, nothing twice.
      ListOptions o;
      o.limit = 3;
      std::set<std::string> seen;
      std::string last;
      bool ordered = true;
      for (;;) {
        auto page = s.list_json(*admin, Kind::glossary_term, o);
        if (!page) {
          say("X list: " + page.error().message());
          break;
        }
        for (const auto& e : page->data) {
          const auto& o = e.as_object();
          const auto key = std::string(o.at("name").as_string()) + "/" + test::id_of(o);
          ordered = ordered && key > last && seen.insert(key).second;
          last = key;
        }
        if (!page->after) break;
        o.after = page->after;
      }
      if (!ordered) say("X a list walk repeated an entity or went out of order");
      say("W " + std::to_string(seen.size()));
    }
  }
}

// A host: its own Store on the catalog, `threads` threads. Writes what was acknowledged to
// `file`. Runs in a child process; returns its exit status.
int host(const std::string& schema, bool concurrent, const Config& c, int p,
         const std::string& file) {
  storage::PostgresOptions pg;
  pg.schema = schema;
  pg.concurrent_writers = concurrent;
  auto store = open_postgres(test::pg::conninfo(), options(), pg);
  std::vector<std::vector<std::string>> lines(static_cast<std::size_t>(c.threads));
  if (!store) {
    lines[0].push_back(std::to_string(p) + " 0 X open: " + store.error().message());
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < c.threads; ++t)
      threads.emplace_back(
          [&, t] { run_thread(*store, c, p, t, lines[static_cast<std::size_t>(t)]); });
    for (auto& th : threads) th.join();
  }
  std::ofstream out(file);
  for (const auto& per_thread : lines)
    for (const auto& line : per_thread) out << line << '\n';
  if (store) {
    const auto stats = dynamic_cast<storage::PostgresBackend&>(store->backend()).stats();
    out << p << " 0 S " << stats.conflicts << " " << stats.exclusive << '\n';
  }
  out.flush();
  return out ? 0 : 3;
}

}  // namespace

TEST_CASE("multi-host: processes x threads on one PostgreSQL catalog lose nothing and agree",
          "[postgres][multihost]") {
  const Config c;
  REQUIRE(c.processes >= 2);
  // Writers taking turns (the default), and running concurrently (conflicts retried).
  const bool concurrent = GENERATE(false, true);
  INFO((concurrent ? "concurrent writers" : "writers taking turns"));
  test::pg::Schema schema;
  test::TempDir dir;
  {
    // The catalog every host starts from: the users, the hot entities, the race's glossary.
    storage::PostgresOptions pg = schema.options();
    auto s = open_postgres(test::pg::conninfo(), options(), pg).value();
    auto admin = s.principal("admin").value();
    auto create = [&](Kind kind, const std::string& body) {
      s.create_json(admin, kind, test::parse(body)).value();
    };
    for (int p = 0; p < c.processes; ++p)
      for (int t = 0; t < c.threads; ++t)
        create(Kind::user, R"({"name":")" + user_name(p, t) + R"(","email":")" + user_name(p, t) +
                               R"(@example.com"})");
    create(Kind::mlmodel_service, R"({"name":"ml","serviceType":"Mlflow"})");
    create(Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
    create(Kind::glossary, R"({"name":"Hot","description":"h"})");
    create(Kind::glossary_term, R"({"glossary":"Hot","name":"t","description":"t"})");
    create(Kind::mlmodel, R"({"name":"hot","service":"ml","algorithm":"xgboost"})");
    create(Kind::search_index,
           R"({"name":"hot","service":"es","fields":[{"name":"f","dataType":"TEXT"}]})");
    create(Kind::glossary, R"({"name":"Race","description":"r"})");
  }

  // The hosts, each a process of its own (leaving with _exit: nothing of the test runner runs
  // twice, and the parent's connections are not touched).
  std::vector<pid_t> pids;
  for (int p = 0; p < c.processes; ++p) {
    const auto file = (dir.path() / ("host" + std::to_string(p))).string();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 99;
      try {
        code = host(schema.name(), concurrent, c, p, file);
      } catch (...) {
        code = 98;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }

  // What was acknowledged, per host and thread in order.
  struct Patch {
    std::uint32_t tenths;
    std::string value;
  };
  std::vector<std::vector<Patch>> patches(hot_count);
  std::vector<std::map<std::string, bool>> following(hot_count);  // user -> follows
  std::vector<std::map<std::string, int>> votes(hot_count);       // user -> VoteType
  std::map<int, std::vector<std::string>> winners;                // race name -> ids
  std::map<int, int> losers;
  std::int64_t conflicts = 0, exclusive = 0, acknowledged = 0;
  for (int p = 0; p < c.processes; ++p) {
    std::ifstream in(dir.path() / ("host" + std::to_string(p)));
    REQUIRE(in);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream l(line);
      int lp = 0, lt = 0;
      std::string tag;
      l >> lp >> lt >> tag;
      const auto user = user_name(lp, lt);
      if (tag == "X") FAIL_CHECK("host " << lp << " thread " << lt << ": " << line);
      if (tag != "S") ++acknowledged;
      if (tag == "P") {
        int j = 0;
        Patch patch;
        l >> j >> patch.tenths >> patch.value;
        patches[static_cast<std::size_t>(j)].push_back(patch);
      } else if (tag == "F") {
        int j = 0, f = 0;
        l >> j >> f;
        following[static_cast<std::size_t>(j)][user] = f == 1;
      } else if (tag == "V") {
        int j = 0, v = 0;
        l >> j >> v;
        votes[static_cast<std::size_t>(j)][user] = v;
      } else if (tag == "C") {
        int k = 0;
        std::string id;
        l >> k >> id;
        winners[k].push_back(id);
      } else if (tag == "L") {
        int k = 0;
        l >> k;
        ++losers[k];
      } else if (tag == "S") {
        std::int64_t a = 0, b = 0;
        l >> a >> b;
        conflicts += a;
        exclusive += b;
      }
    }
  }
  CHECK(acknowledged == static_cast<std::int64_t>(c.processes) * c.threads * c.ops);
  // For the report: how often hosts collided (the Store ran those operations again).
  WARN("multi-host, " << (concurrent ? "concurrent writers: " : "writers taking turns: ")
                      << acknowledged << " operations, " << conflicts
                      << " transactions conflicted, " << exclusive << " ran alone");
  if (!concurrent) CHECK(conflicts == 0);

  auto s = open_postgres(test::pg::conninfo(), options(), schema.options()).value();
  auto admin = s.principal("admin").value();
  for (int j = 0; j < hot_count; ++j) {
    const auto& h = hot[j];
    INFO(type_name(h.kind) << " " << h.fqn);
    auto entity = s.get_json(admin, h.kind, EntityKey::by_fqn(h.fqn), {{"*"}}).value();
    const auto id = test::uuid_of(entity);
    // Versions: each acknowledged patch made one, +0.1, and got that version alone.
    const auto& mine = patches[static_cast<std::size_t>(j)];
    const auto n = static_cast<std::uint32_t>(mine.size());
    CHECK(Version::parse(test::version_of(entity)).value().tenths() == 1 + n);
    std::map<std::uint32_t, std::string> by_version;
    for (const auto& patch : mine) by_version.emplace(patch.tenths, patch.value);
    CHECK(by_version.size() == n);
    if (n > 0) {
      CHECK(by_version.begin()->first == 2);
      CHECK(by_version.rbegin()->first == 1 + n);
    }
    // The history holds every version once, each with what its patch wrote.
    auto history = s.history_json(admin, h.kind, id).value();
    CHECK(history.versions.size() == 1 + n);
    for (const auto& text : history.versions) {
      auto v = bj::parse(text).as_object();
      const auto tenths =
          Version::parse(catalog::json::serialize(v.at("version"))).value().tenths();
      if (tenths == 1) continue;
      auto it = by_version.find(tenths);
      REQUIRE(it != by_version.end());
      CHECK(v.at("description").as_string() == it->second);
    }
    // Followers and votes: what each user's last acknowledged operation left.
    std::set<std::string> followers;
    for (const auto& f : entity.at("followers").as_array())
      followers.emplace(f.at("name").as_string());
    std::set<std::string> expected_followers;
    for (const auto& [user, on] : following[static_cast<std::size_t>(j)])
      if (on) expected_followers.insert(user);
    CHECK(followers == expected_followers);
    if (info(h.kind).has_votes) {
      std::set<std::string> up, down, expected_up, expected_down;
      const auto& v = entity.at("votes").as_object();
      for (const auto& u : v.at("upVoters").as_array()) up.emplace(u.at("name").as_string());
      for (const auto& u : v.at("downVoters").as_array()) down.emplace(u.at("name").as_string());
      for (const auto& [user, vote] : votes[static_cast<std::size_t>(j)]) {
        if (vote == static_cast<int>(VoteType::voted_up)) expected_up.insert(user);
        if (vote == static_cast<int>(VoteType::voted_down)) expected_down.insert(user);
      }
      CHECK(up == expected_up);
      CHECK(down == expected_down);
      CHECK(v.at("upVotes").to_number<std::int64_t>() == static_cast<std::int64_t>(up.size()));
      CHECK(v.at("downVotes").to_number<std::int64_t>() == static_cast<std::int64_t>(down.size()));
    }
  }

  // Races: exactly one create of each name won, and it is the one stored; the rest got 409.
  std::int64_t created = 0;
  for (const auto& [k, ids] : winners) {
    INFO("Race.r" << k);
    CHECK(ids.size() == 1);
    auto stored =
        s.get_json(admin, Kind::glossary_term, EntityKey::by_fqn("Race.r" + std::to_string(k)));
    REQUIRE(stored.has_value());
    CHECK(test::id_of(*stored) == ids.front());
    ++created;
  }
  for (const auto& [k, n] : losers) CHECK(winners.count(k) == 1);

  // Totals: the counters agree with full list walks and with what was acknowledged.
  auto walk = [&](Kind kind) {
    ListOptions o;
    o.limit = 5;
    std::int64_t n = 0;
    for (;;) {
      auto page = s.list_json(admin, kind, o).value();
      n += static_cast<std::int64_t>(page.data.size());
      if (!page.after) return std::pair{n, page.total};
      o.after = page.after;
    }
  };
  const auto [terms, terms_total] = walk(Kind::glossary_term);
  CHECK(terms == terms_total);
  CHECK(terms == 1 + created);
  const auto [users, users_total] = walk(Kind::user);
  CHECK(users == users_total);
  CHECK(users == 1 + c.processes * c.threads);
  CHECK(s.verify().value().empty());
}

TEST_CASE("a session the server ends in the middle of an operation: the operation runs again",
          "[postgres]") {
  // A restart or failover that ends the store's sessions while an operation is in flight,
  // played by pg_terminate_backend from a session of its own. The host's functions (the clock,
  // an update's PatchMaker) run inside the operation's transaction: each ends the sessions once,
  // at a point where the transaction has sent its first round and not its COMMIT.
  test::pg::Schema schema;
  const std::string app = test::pg::fresh_schema_name("ended");
  const auto end_sessions = [&] { test::pg::end_sessions(app); };
  bool end_at_clock = false;
  auto o = options();
  o.clock = [&] {
    if (end_at_clock) {
      end_at_clock = false;
      end_sessions();
    }
    return std::int64_t{1'700'000'000'000};
  };
  std::vector<std::string> warnings;
  o.log = [&](LogLevel level, std::string_view message) {
    if (level == LogLevel::warning) warnings.emplace_back(message);
  };
  auto s = open_postgres(test::pg::conninfo() + " application_name=" + app, o, schema.options())
               .value();
  auto admin = s.principal("admin").value();
  const auto id = test::uuid_of(
      s.create_json(admin, Kind::glossary, test::parse(R"({"name":"g","description":"one"})"))
          .value());

  // A read: its snapshot is taken when it begins, and its session ends before its first read.
  end_at_clock = true;
  auto got = s.get_json(admin, Kind::glossary, EntityKey::by_fqn("g"), {}).value();
  CHECK(got.at("description").as_string() == "one");
  CHECK(s.counters().unavailable_retries == 1);

  // A write: it has read the entity when its PatchMaker runs, and has written nothing.
  int made = 0;
  auto updated = s.update_json(admin, Kind::glossary, EntityKey::by_fqn("g"),
                               [&](const boost::json::object&) -> Result<boost::json::value> {
                                 if (made++ == 0) end_sessions();
                                 return test::parse(
                                     R"([{"op":"replace","path":"/description","value":"two"}])");
                               });
  REQUIRE(updated.has_value());
  CHECK(made == 2);
  CHECK(updated->at("description").as_string() == "two");
  CHECK(test::version_of(*updated) == "0.2");
  CHECK(s.counters().unavailable_retries == 2);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[1].find("ended a transaction's session before it committed (attempt 1 of 3)") !=
        std::string::npos);
  // One version, one change event for the update: the first attempt left nothing.
  CHECK(s.history_json(admin, Kind::glossary, id).value().versions.size() == 2);

  // A session that ends at every attempt: the operation gives up, nothing changed.
  auto refused = s.update_json(admin, Kind::glossary, EntityKey::by_fqn("g"),
                               [&](const boost::json::object&) -> Result<boost::json::value> {
                                 end_sessions();
                                 return test::parse(
                                     R"([{"op":"replace","path":"/description","value":"three"}])");
                               });
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == Errc::storage_unavailable);
  CHECK(refused.error().message().find("gave up after 3 attempts") != std::string::npos);
  CHECK(s.get_json(admin, Kind::glossary, EntityKey::by_fqn("g"), {})
            .value()
            .at("description")
            .as_string() == "two");
  CHECK(s.history_json(admin, Kind::glossary, id).value().versions.size() == 2);
}

namespace {

// Makes the COMMITs of write transactions wait, on the server, for the advisory lock `key`, until
// one of them commits: a deferred trigger on the catalog's table, which runs when the COMMIT
// does, takes the lock while a flag row is there and deletes the row (a rollback brings it back).
// The server is told not to look for its client meanwhile (client_connection_check_interval),
// so that it goes on whatever happens to the client. False if the server refused the setup.
bool make_commit_wait(const test::pg::Schema& schema, const std::string& key) {
  std::string sql = R"(
    CREATE TABLE @.slow_commit (x int);
    CREATE FUNCTION @.slow_commit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN
      IF EXISTS (SELECT 1 FROM @.slow_commit) THEN
        DELETE FROM @.slow_commit;
        PERFORM set_config('client_connection_check_interval', '0', true);
        PERFORM pg_advisory_xact_lock(#);
      END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON @.entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION @.slow_commit();
    INSERT INTO @.slow_commit VALUES (1);
    SELECT 'ok')";
  for (auto at = sql.find_first_of("@#"); at != std::string::npos; at = sql.find_first_of("@#", at))
    sql.replace(at, 1, sql[at] == '@' ? schema.name() : key);
  return test::pg::first_value(sql) == "ok";
}

// An advisory lock held by a session of the test's own until release().
class AdvisoryLock {
 public:
  explicit AdvisoryLock(std::string key)
      : key_(std::move(key)), conn_(PQconnectdb(test::pg::conninfo().c_str()), &PQfinish) {
    held_ = run("SELECT pg_advisory_lock(" + key_ + ")");
  }
  bool held() const { return held_; }
  int socket() const { return PQsocket(conn_.get()); }
  bool release() {
    return std::exchange(held_, false) && run("SELECT pg_advisory_unlock(" + key_ + ")");
  }

 private:
  bool run(const std::string& text) {
    PGresult* r = PQexec(conn_.get(), text.c_str());
    const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
  }
  std::string key_;
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
  bool held_ = false;
};

// The server pid of the session of `app` whose COMMIT waits for an advisory lock, once there is
// one (at most 10 s); "" if none came.
std::string committing_session(const std::string& app) {
  const std::string query = "SELECT pid FROM pg_stat_activity WHERE application_name = '" + app +
                            "' AND wait_event = 'advisory' AND query = 'COMMIT'";
  for (int i = 0; i < 1000; ++i) {
    if (auto pid = test::pg::first_value(query); !pid.empty()) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

// Waits (at most 10 s) until no session answers `where`; whether none does.
bool no_session(const std::string& where) {
  const std::string query = "SELECT count(*) FROM pg_stat_activity WHERE " + where;
  for (int i = 0; i < 1000; ++i) {
    if (test::pg::first_value(query) == "0") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A store holding one glossary, whose create of a second one ("h", on a thread of its own) has
// its COMMIT wait on the server for a lock the test holds (make_commit_wait): a session in the
// middle of its COMMIT, for the test to cut or end. The store logs in as a role of its own, no
// superuser (it may create schemas), which the test may keep from logging in for a while, and
// asks for a new session for up to `reconnect_wait`. Warnings the store logs are kept.
struct CommitInFlight {
  CommitInFlight(const std::string& name, std::chrono::milliseconds reconnect_wait)
      : app(test::pg::fresh_schema_name(name)),
        may_create(role.made() && test::pg::run("DO $$ BEGIN EXECUTE format('GRANT CREATE ON "
                                                "DATABASE %I TO %I', current_database(), '" +
                                                role.name() + "'); END $$")),
        store(open_store(reconnect_wait)),
        admin(store.principal("admin").value()) {
    (void)store
        .create_json(admin, Kind::glossary, test::parse(R"({"name":"g","description":"one"})"))
        .value();
    REQUIRE(make_commit_wait(schema, key));
    REQUIRE(lock.held());
    retries_before = store.counters().unavailable_retries;
    writer = std::thread([this] {
      created = store.create_json(admin, Kind::glossary,
                                  test::parse(R"({"name":"h","description":"two"})"));
    });
    pid = committing_session(app);
  }
  ~CommitInFlight() {
    (void)role.may_log_in(true);
    (void)lock.release();
    if (writer.joinable()) writer.join();
  }
  CommitInFlight(const CommitInFlight&) = delete;
  CommitInFlight& operator=(const CommitInFlight&) = delete;

  Store open_store(std::chrono::milliseconds reconnect_wait) {
    REQUIRE(may_create);
    auto o = schema.options();
    o.reconnect_wait = reconnect_wait;
    return open_postgres(test::pg::conninfo() + " user=" + role.name() + " application_name=" + app,
                         logging(), o)
        .value();
  }
  StoreOptions logging() {
    auto o = options();
    o.log = [this](LogLevel level, std::string_view message) {
      if (level == LogLevel::warning) warnings.emplace_back(message);
    };
    return o;
  }
  // Write transactions whose outcome the store asked a new session for.
  std::uint64_t commits_checked() {
    return dynamic_cast<storage::PostgresBackend&>(store.backend()).stats().commits_checked;
  }
  // The writer's create was rolled back on its first attempt (a new session asked), and
  // succeeded on its second.
  void ran_again() {
    REQUIRE(created.has_value());
    REQUIRE(created->has_value());
    CHECK(store.counters().unavailable_retries == retries_before + 1);
    REQUIRE_FALSE(warnings.empty());
    CHECK(warnings.back().find(
              "ended a transaction's session before it committed (attempt 1 of 3)") !=
          std::string::npos);
    CHECK(commits_checked() == 1);
  }
  // The writer's create failed as storage, whether it committed not known, and was not run
  // again; no session asked.
  void not_known() {
    REQUIRE(created.has_value());
    REQUIRE_FALSE(created->has_value());
    CHECK(created->error().code() == Errc::storage);
    CHECK(created->error().message().find("whether the transaction committed is not known") !=
          std::string::npos);
    CHECK(store.counters().unavailable_retries == retries_before);
    CHECK(commits_checked() == 0);
  }
  // The glossary "h" exists once, with one version, beside "g".
  void created_once() {
    auto h = store.get_json(admin, Kind::glossary, EntityKey::by_fqn("h"), {});
    REQUIRE(h.has_value());
    CHECK(store.history_json(admin, Kind::glossary, test::uuid_of(*h)).value().versions.size() ==
          1);
    CHECK(store.list_json(admin, Kind::glossary, {}).value().total == 2);
  }

  test::pg::Role role{"committer", "LOGIN"};  // dropped after the schema it owns
  test::pg::Schema schema;
  std::string app;
  bool may_create = false;  // the role was made and may create the store's schema
  std::vector<std::string> warnings;
  Store store;
  Principal admin;
  std::string key = std::to_string(::getpid());
  AdvisoryLock lock{key};
  std::uint64_t retries_before = 0;
  std::optional<Result<boost::json::object>> created;  // once the writer returned
  std::thread writer;
  std::string pid;  // the server's session in the middle of the COMMIT, "" if none came
};

}  // namespace

TEST_CASE("a session cut off while its COMMIT is under way: a new session learns it committed",
          "[postgres]") {
  // The connection breaks with no word from the server, as a failing network would, while the
  // COMMIT of one create waits for a lock the test holds. The server then finishes the COMMIT;
  // only then may the store's role log in again, so the new session the store opens to ask
  // finds the transaction committed. The operation succeeded, and is not run again.
  CommitInFlight c("commit", std::chrono::minutes(10));
  REQUIRE_FALSE(c.pid.empty());
  REQUIRE(c.role.may_log_in(false));
  CHECK(test::pg::cut_connections(c.lock.socket()) >= 1);
  CHECK(c.lock.release());
  CHECK(no_session("pid = " + c.pid));  // its COMMIT done, the session ends
  CHECK(c.role.may_log_in(true));
  c.writer.join();
  REQUIRE(c.created.has_value());
  REQUIRE(c.created->has_value());
  CHECK(c.store.counters().unavailable_retries == c.retries_before);
  CHECK(c.warnings.empty());
  CHECK(c.commits_checked() == 1);
  c.created_once();
}

TEST_CASE("a session cut off while its COMMIT waits: it is ended, and the operation runs again",
          "[postgres]") {
  // The same cut, but the lock stays held: the new session finds the transaction still in
  // progress, ends the session cut off from it (which rolls it back), and the Store runs the
  // operation again. The lock is released only once that session is gone, so it cannot commit.
  CommitInFlight c("cutwait", std::chrono::minutes(10));
  REQUIRE_FALSE(c.pid.empty());
  CHECK(test::pg::cut_connections(c.lock.socket()) >= 1);
  const bool ended = no_session("pid = " + c.pid);
  CHECK(c.lock.release());
  c.writer.join();
  REQUIRE(ended);
  c.ran_again();
  CHECK(test::uuid_of(**c.created) ==
        test::uuid_of(c.store.get_json(c.admin, Kind::glossary, EntityKey::by_fqn("h"), {}).value()));
  c.created_once();
}

TEST_CASE("a session cut off while its COMMIT is under way, and no session to ask: not known",
          "[postgres]") {
  // The store's role may not log in for longer than reconnect_wait: whether the transaction
  // committed cannot be asked, and running the operation again could do it twice, so the
  // store says so and does not.
  CommitInFlight c("unknown", std::chrono::milliseconds(300));
  REQUIRE_FALSE(c.pid.empty());
  REQUIRE(c.role.may_log_in(false));
  CHECK(test::pg::cut_connections(c.lock.socket()) >= 1);
  c.writer.join();
  c.not_known();

  // Its session goes on: once the lock is released the create commits, once.
  CHECK(c.lock.release());
  CHECK(no_session("pid = " + c.pid));
  CHECK(c.role.may_log_in(true));
  c.created_once();
}

TEST_CASE("a session cut off while its COMMIT is under way, then the server's statistics reset: "
          "not known",
          "[postgres]") {
  // An id is unique within one run of the server: after a crash (whose recovery resets the
  // shared statistics) the server may hand out again ids whose transactions never reached its
  // disk, and its answer could be about another transaction. The store learns the run with each
  // session and does not ask another; a reset of the statistics plays the crash here.
  CommitInFlight c("rerun", std::chrono::minutes(10));
  REQUIRE_FALSE(c.pid.empty());
  REQUIRE(c.role.may_log_in(false));
  CHECK(test::pg::cut_connections(c.lock.socket()) >= 1);
  CHECK(c.lock.release());
  CHECK(no_session("pid = " + c.pid));
  CHECK(test::pg::run("SELECT pg_stat_reset_shared('bgwriter')"));
  CHECK(c.role.may_log_in(true));
  c.writer.join();
  c.not_known();
  c.created_once();  // it did commit
}

TEST_CASE("a session the server ends while its COMMIT runs: the operation runs again",
          "[postgres]") {
  // A fast shutdown or pg_terminate_backend ends a session only where it may stop, never while
  // it commits, and says so (admin_shutdown). A COMMIT still running its deferred triggers is
  // rolled back, as a new session learns, and the Store runs the operation again.
  CommitInFlight c("terminated", std::chrono::minutes(10));
  // The lock is released only once the ended session is gone, so that it cannot commit first.
  const bool ended = !c.pid.empty() &&
                     test::pg::first_value("SELECT pg_terminate_backend(" + c.pid + ")") == "t" &&
                     no_session("pid = " + c.pid);
  const bool released = c.lock.release();
  c.writer.join();
  REQUIRE(ended);
  CHECK(released);
  c.ran_again();
  c.created_once();
}

TEST_CASE("a session the server ends while its COMMIT runs, and no session to ask: run again",
          "[postgres]") {
  // With no session to ask, the server's word stands: it ended the session before the COMMIT
  // answered, so the transaction was rolled back and the operation runs again. Here its next
  // attempt cannot log in either, and fails as such (storage, not "not known").
  // (The store's one session, which the create took from its pool, is the one ended: the next
  // attempt needs a new one.)
  CommitInFlight c("unasked", std::chrono::milliseconds(300));
  REQUIRE_FALSE(c.pid.empty());
  REQUIRE(c.role.may_log_in(false));
  const bool ended = test::pg::first_value("SELECT pg_terminate_backend(" + c.pid + ")") == "t" &&
                     no_session("pid = " + c.pid);
  c.writer.join();
  CHECK(c.lock.release());
  REQUIRE(ended);
  REQUIRE(c.created.has_value());
  REQUIRE_FALSE(c.created->has_value());
  CHECK(c.created->error().code() == Errc::storage);
  CHECK(c.created->error().message().find("tried again for 300 ms") != std::string::npos);
  CHECK(c.store.counters().unavailable_retries == c.retries_before + 1);
  CHECK(c.commits_checked() == 0);

  // Nothing of it was written.
  CHECK(c.role.may_log_in(true));
  CHECK(c.store.get_json(c.admin, Kind::glossary, EntityKey::by_fqn("h"), {}).error().code() ==
        Errc::not_found);
  CHECK(c.store.list_json(c.admin, Kind::glossary, {}).value().total == 1);
}
