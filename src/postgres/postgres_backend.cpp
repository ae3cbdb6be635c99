#include <catalog/storage/postgres_backend.hpp>

#include <catalog/detail/storage/pg_array.hpp>
#include <catalog/detail/storage/transaction_state.hpp>

#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// How it works. Every transaction holds one connection of a pool, in libpq's pipeline mode:
// statements are queued and a "round" sends a sync and reads every result up to it, one round
// trip however many statements it carried. The server's snapshot is the transaction's view of the
// store; over it the transaction keeps
//   - `pending`: its puts and erases not yet sent (a value, or nullopt for an erase), which every
//     get and scan merges, and which go to the server with the commit (or earlier, when large);
//   - `known`: what it read from the server (a value, or nullopt for absent), so a second get of
//     a key, or an erase of a key it read, costs nothing.
// A cursor merges a batch of rows fetched from the server with `pending`, like the memory
// backend's overlay; it re-reads `pending` at every step, so writes in between are seen, and it
// fetches its next batch from the key it is on, so a batch stays valid until `pending` is sent
// (the server then holds those writes, and the cursor refetches).
//
// Isolation: writers taking turns (the default) run, and readers beside them read, at
// REPEATABLE READ, which is serializable when writers run one at a time (begin_sql says why).
// Beside concurrent writers everything runs at SERIALIZABLE: the server tracks what each
// transaction read (predicate locks) and fails one whose reads and writes cannot be ordered with
// the others' (SQLSTATE 40001). That failure, and being part of a deadlock (40P01), become
// Errc::storage_conflict and end the transaction. A write transaction that runs alone (writers
// taking turns, the default, or after conflicts in a row) sends LOCK TABLE
// <schema>.writer_turn IN EXCLUSIVE MODE after BEGIN, and a concurrent writer
// locks it IN ROW EXCLUSIVE MODE, so that one alone waits for every concurrent writer and they
// for it. LOCK takes no snapshot, so its snapshot, taken by the next statement, sees every writer
// before it, and none runs beside it. The lock is on a table of its own, never on `entries`:
// readers go on, and autovacuum (SHARE UPDATE EXCLUSIVE on `entries`, which EXCLUSIVE there would
// refuse it) keeps vacuuming under a steady stream of writes. The write statements are prepared
// with a connection's first writes.

namespace catalog::storage {

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;
// A batch of scanned rows, which a transaction may keep for later scans of the same range.
using SharedResult = std::shared_ptr<const PGresult>;

// The statements every connection prepares, by name. `$1` etc. are bytea (or arrays of bytea),
// sent and received in binary; limits are int4, sent as text. A continued forward scan passes the
// key it is on with a 0x00 appended (the smallest key after it), so `>=` serves both the first
// batch and the next. Many pending puts or erases go as arrays in one statement each: the server
// then plans and executes one statement, not one per key.
struct Statement {
  const char* name;
  const char* sql;  // "%s" is the table
  int params;
  bool limit_last;  // the last parameter is an integer
  bool writes;      // prepared by the first transaction that sends writes (see prepare)
  bool arrays;      // the parameters are arrays of bytea
};

enum StatementId {
  s_get,
  s_get_many,
  s_exists,
  s_put,
  s_erase,
  s_put_many,
  s_erase_many,
  s_fwd,
  s_fwd_to,
  s_rev,
  s_rev_from,
  s_xact_id,
  s_count
};

constexpr Statement statements[s_count] = {
    {"g", "SELECT v FROM %s WHERE k = $1", 1, false, false, false},
    {"gm", "SELECT k, v FROM %s WHERE k = ANY($1)", 1, false, false, true},
    {"x", "SELECT 1 FROM %s WHERE k = $1", 1, false, false, false},
    {"p", "INSERT INTO %s (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v", 2,
     false, true, false},
    {"d", "DELETE FROM %s WHERE k = $1", 1, false, true, false},
    {"pm",
     "INSERT INTO %s (k, v) SELECT * FROM unnest($1, $2) ON CONFLICT (k) DO UPDATE SET v = "
     "EXCLUDED.v",
     2, false, true, true},
    {"dm", "DELETE FROM %s WHERE k = ANY($1)", 1, false, true, true},
    {"f", "SELECT k, v FROM %s WHERE k >= $1 ORDER BY k LIMIT $2", 2, true, false, false},
    {"ft", "SELECT k, v FROM %s WHERE k >= $1 AND k < $2 ORDER BY k LIMIT $3", 3, true, false,
     false},
    {"r", "SELECT k, v FROM %s WHERE k >= $1 ORDER BY k DESC LIMIT $2", 2, true, false, false},
    {"rf", "SELECT k, v FROM %s WHERE k >= $1 AND k < $2 ORDER BY k DESC LIMIT $3", 3, true, false,
     false},
    {"xid", "SELECT pg_current_xact_id()::text, pg_backend_pid()::text", 0, false, false, false},
};

using detail::bytea_array;
using detail::bytea_array_oid;
using detail::bytea_oid;
constexpr unsigned int4_oid = 23;

// Scan batches: the first is small enough for the scans the engine makes most (an entity's
// edges, a counter's shards, a list page), later ones grow, and none holds more than about
// `batch_bytes` of rows once rows were seen to be large.
constexpr int first_batch = 128;
constexpr int max_batch = 1024;
constexpr std::size_t batch_bytes = std::size_t{8} << 20;

// Ranges remembered per transaction: each fetched whole in one batch (or, when a prefetch asked
// for it, its first batch, which may not be whole), the batch taking at most this much
// memory (PQresultMemorySize: a result costs kilobytes even for one small row), and all of them
// at most this much and this many (the oldest are forgotten first). A recursive delete scans
// hundreds of thousands of small ranges in one transaction.
constexpr std::size_t range_limit_bytes = std::size_t{64} << 10;
constexpr std::size_t ranges_limit_bytes = std::size_t{4} << 20;
constexpr std::size_t ranges_limit_entries = 1024;

// Keys get_each asks the server in one round trip, at most.
constexpr std::size_t get_batch = 1024;

// Gets remembered per transaction, at most (the oldest are forgotten first).
constexpr std::size_t known_limit_entries = 4096;
constexpr std::size_t known_limit_bytes = std::size_t{8} << 20;

// What a transaction remembers of what it read: a map bounded in entries and bytes that forgets
// its oldest entries first, so that what the current step of an operation read stays when the
// whole operation reads far more than the bound.
template <class Key, class Value>
class Remembered {
 public:
  Remembered(std::size_t max_entries, std::size_t max_bytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  template <class K>
  const Value* find(const K& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second.first;
  }

  // Keeps `value` (replacing what `key` had), then forgets the oldest entries past the bounds.
  void insert(Key key, Value value, std::size_t bytes) {
    if (bytes > max_bytes_) return;
    auto [it, fresh] = map_.try_emplace(std::move(key), std::move(value), bytes);
    if (fresh) {
      order_.push_back(it);
    } else {
      bytes_ -= it->second.second;
      it->second = {std::move(value), bytes};
    }
    bytes_ += bytes;
    while (map_.size() > max_entries_ || bytes_ > max_bytes_) {
      bytes_ -= order_.front()->second.second;
      map_.erase(order_.front());
      order_.pop_front();
    }
  }

  void clear() noexcept {
    map_.clear();
    order_.clear();
    bytes_ = 0;
  }

 private:
  using Map = std::map<Key, std::pair<Value, std::size_t>, std::less<>>;
  Map map_;
  std::deque<typename Map::iterator> order_;  // oldest first (map iterators stay valid)
  std::size_t bytes_ = 0;
  std::size_t max_entries_, max_bytes_;
};
// Pending writes sent early past this many, whatever their size.
constexpr std::size_t pending_limit_entries = 10000;

Error storage_error(std::string message) { return Error(Errc::storage, std::move(message)); }

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The error of a failed result: a conflict for the two SQLSTATEs that ask for a retry.
Error result_error(const PGresult* r, PGconn* conn) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(conn));
  if (message.empty()) message = trimmed(PQerrorMessage(conn));
  if (state && (std::strcmp(state, "40001") == 0 || std::strcmp(state, "40P01") == 0))
    return Error(Errc::storage_conflict, "PostgreSQL: " + message);
  if (state && std::strcmp(state, "55P03") == 0)  // lock_not_available: lock_timeout
    return storage_error(
        "PostgreSQL: waited longer than lock_timeout for a lock another transaction holds (for "
        "a write, usually the writers' turn, held by another host's write or by one that stopped "
        "in the middle of it; PostgresOptions::idle_in_transaction_timeout sets the wait for "
        "writes); nothing was changed (" +
        message + ")");
  return storage_error("PostgreSQL: " + message);
}

void ignore_notice(void*, const char*) {}

std::string quote_identifier(PGconn* conn, std::string_view name) {
  char* quoted = PQescapeIdentifier(conn, name.data(), name.size());
  if (!quoted) return {};
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

// A connection opened with conninfo, notices silenced (CREATE ... IF NOT EXISTS talks).
Result<PGconn*> connect(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (!conn) return storage_error("PostgreSQL: out of memory opening a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    auto e = storage_error("PostgreSQL: cannot connect: " + trimmed(PQerrorMessage(conn)));
    PQfinish(conn);
    return e;
  }
  PQsetNoticeProcessor(conn, ignore_notice, nullptr);
  return conn;
}

// Runs `sql` (one or more statements) outside pipeline mode; the last result must be `want`.
Result<PgResult> exec(PGconn* conn, const std::string& sql, ExecStatusType want) {
  PgResult r(PQexec(conn, sql.c_str()));
  if (!r || PQresultStatus(r.get()) != want) return result_error(r.get(), conn);
  return r;
}

// One pooled connection in pipeline mode. `unread` holds, for each round sent without waiting
// for its results (rollbacks, read-only commits), how many statements it carried; the next round
// reads those results first.
struct Connection {
  detail::PgShared* owner = nullptr;  // counts it among its connections, until it is destroyed
  PGconn* pg = nullptr;
  int queued = 0;                 // statements queued since the last sync
  std::vector<int> unread;        // rounds not read yet, oldest first
  bool broken = false;            // the protocol state is unknown: never reuse
  bool server_refused = false;    // the last round's error came from the server, not the socket
  bool admin_shutdown = false;    // ... and was the server ending the session (57P01)
  bool ended_mid_round = false;   // ... before the round's last statement answered
  bool reused = false;            // taken from the pool (the server may have ended it meanwhile)
  std::string incarnation;        // the server's run it was opened in (see open_connection)
  bool writes_prepared = false;   // the write statements are prepared on the server
  bool preparing_writes = false;  // ... or queued in the round being sent

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();
};

}  // namespace

namespace detail {

struct PgShared {
  std::string conninfo;
  PostgresOptions options;
  std::string table;  // "schema".entries, quoted
  pid_t pid = ::getpid();
  std::atomic<std::uint64_t> round_trips{0};
  std::atomic<std::uint64_t> connections{0};
  std::atomic<std::uint64_t> conflicts{0};
  std::atomic<std::uint64_t> exclusive{0};
  std::string lock_sql;       // LOCK TABLE <schema>.writer_turn IN EXCLUSIVE MODE: runs alone
  std::string share_sql;      // ... IN ROW EXCLUSIVE MODE: a concurrent writer
  std::string idle_sql;       // SET LOCAL idle_in_transaction_session_timeout, or empty
  std::string lock_wait_sql;  // SET LOCAL lock_timeout, to the same, or empty

  std::atomic<std::uint64_t> waits{0};
  std::atomic<std::uint64_t> connect_retries{0};
  std::atomic<std::uint64_t> commits_checked{0};

  std::mutex mutex;               // guards `idle` and `open`
  std::condition_variable freed;  // a connection went idle or closed
  std::vector<std::unique_ptr<Connection>> idle;
  std::size_t open = 0;  // connections that exist: idle, in a transaction, or being opened

  PgShared() = default;
  PgShared(const PgShared&) = delete;
  PgShared& operator=(const PgShared&) = delete;
  ~PgShared() {
    // Connections inherited through fork() are the parent's: closing them here would end the
    // parent's sessions, so they are left alone.
    if (pid != ::getpid())
      for (auto& c : idle) c->pg = nullptr;
    // Nothing waits for a connection any more: the idle ones close without counting (a forked
    // child's copy of `mutex` may be held by a thread of its parent that is not in the child).
    for (auto& c : idle) c->owner = nullptr;
  }

  // A connection: an idle one, else a new one within max_connections (waiting for one to come
  // free if need be). Idle ones are handed out as they come, not to waiters in turn.
  Result<std::unique_ptr<Connection>> acquire();
  void release(std::unique_ptr<Connection> conn) noexcept;
  // A connection that closed gives back its place among `open`.
  void closed() noexcept;
  // A new connection in place of `stale`, which gives it its place among `open`.
  Result<std::unique_ptr<Connection>> replace(std::unique_ptr<Connection> stale);
  // A wait of the options: negative is zero, a century is forever (and keeps a deadline from
  // overflowing).
  static std::chrono::milliseconds bounded(std::chrono::milliseconds wait) {
    return std::clamp<std::chrono::milliseconds>(wait, std::chrono::milliseconds{0},
                                                 std::chrono::hours{24 * 365 * 100});
  }

 private:
  Result<std::unique_ptr<Connection>> open_connection();
  // Connects `c` and sets its session up; `session_lost` says whether a failure was the server
  // going away (or not answering the connect), which open_connection tries again.
  Result<void> set_up(Connection& c, bool& session_lost);
};

}  // namespace detail

namespace {

using detail::PgShared;

Connection::~Connection() {
  if (pg) PQfinish(pg);
  if (owner) owner->closed();
}

// Queues one prepared statement. `params` are the bytea parameters; `limit`, if any, the integer
// one after them.
bool queue(Connection& c, StatementId id, std::initializer_list<std::string_view> params,
           std::optional<int> limit = std::nullopt) {
  static const char empty = 0;
  const char* values[4];
  int lengths[4];
  int formats[4];
  int n = 0;
  for (auto p : params) {
    values[n] = p.empty() ? &empty : p.data();
    lengths[n] = static_cast<int>(p.size());
    formats[n] = 1;
    ++n;
  }
  std::string limit_text;
  if (limit) {
    limit_text = std::to_string(*limit);
    values[n] = limit_text.c_str();
    lengths[n] = 0;
    formats[n] = 0;
    ++n;
  }
  if (!PQsendQueryPrepared(c.pg, statements[id].name, n, values, lengths, formats, 1)) return false;
  ++c.queued;
  return true;
}

// Queues `sql` with its parameters, if any, as text.
bool queue_text(Connection& c, const char* sql, std::initializer_list<const char*> params = {}) {
  if (!PQsendQueryParams(c.pg, sql, static_cast<int>(params.size()), nullptr, params.begin(),
                         nullptr, nullptr, 0))
    return false;
  ++c.queued;
  return true;
}

// Reads the results of one sync: one result per statement queued before it, or the first error
// among them (statements after an error are skipped by the server). Leaves `c.broken` set when
// the connection cannot be trusted any more, and the round's error flags (server_refused,
// admin_shutdown, ended_mid_round) saying what this round's answer was.
Result<std::vector<PgResult>> read_round(Connection& c, int statements_in_round) {
  c.server_refused = false;
  c.admin_shutdown = false;
  c.ended_mid_round = false;
  std::vector<PgResult> results;
  results.reserve(static_cast<std::size_t>(statements_in_round));
  std::optional<Error> first_error;
  int nulls = 0;
  for (;;) {
    PgResult r(PQgetResult(c.pg));
    if (!r) {
      // The end of one statement's results. Two in a row with nothing between means libpq has
      // nothing more to give: the connection is gone.
      if (++nulls > 1 || PQstatus(c.pg) != CONNECTION_OK) {
        c.broken = true;
        return first_error
                   ? *first_error
                   : storage_error("PostgreSQL: connection lost: " + trimmed(PQerrorMessage(c.pg)));
      }
      continue;
    }
    nulls = 0;
    switch (PQresultStatus(r.get())) {
    case PGRES_PIPELINE_SYNC:
      if (first_error) return *first_error;
      if (static_cast<int>(results.size()) != statements_in_round) {
        c.broken = true;
        return storage_error("PostgreSQL: a round returned " + std::to_string(results.size()) +
                             " results for " + std::to_string(statements_in_round) + " statements");
      }
      return results;
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK: results.push_back(std::move(r)); break;
    case PGRES_PIPELINE_ABORTED: break;  // skipped after the error already kept
    default:
      if (!first_error) {
        first_error = result_error(r.get(), c.pg);
        const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
        c.admin_shutdown = state && std::strcmp(state, "57P01") == 0;
        c.ended_mid_round =
            c.admin_shutdown && static_cast<int>(results.size()) < statements_in_round;
      }
      // The server's errors carry an SQLSTATE; those libpq makes of a broken socket do not.
      if (PQresultErrorField(r.get(), PG_DIAG_SQLSTATE)) c.server_refused = true;
      if (PQstatus(c.pg) != CONNECTION_OK) {
        c.broken = true;
        return *first_error;
      }
      break;
    }
  }
}

// Sends a sync for the statements queued and, unless `wait` is false, reads their results: one
// round trip. Results of earlier rounds not waited for are read (and dropped) first.
Result<std::vector<PgResult>> round(Connection& c, std::atomic<std::uint64_t>& counter,
                                    bool wait = true) {
  if (c.broken) return storage_error("PostgreSQL: connection lost");
  // A round that fails before reading (or is not waited for) said nothing from the server.
  c.server_refused = false;
  c.admin_shutdown = false;
  c.ended_mid_round = false;
  const int n = c.queued;
  c.queued = 0;
  if (!PQpipelineSync(c.pg)) {
    c.broken = true;
    return storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c.pg)));
  }
  if (!wait) {
    c.unread.push_back(n);
    return std::vector<PgResult>{};
  }
  counter.fetch_add(1, std::memory_order_relaxed);
  for (int earlier : c.unread) {
    // Those rounds ended a transaction (ROLLBACK, or COMMIT of a read-only one): a failure
    // there leaves the session outside any transaction all the same, so it is dropped; a lost
    // connection is not.
    (void)read_round(c, earlier);
    if (c.broken) {
      c.unread.clear();
      return storage_error("PostgreSQL: connection lost: " + trimmed(PQerrorMessage(c.pg)));
    }
  }
  c.unread.clear();
  auto results = read_round(c, n);
  if (c.preparing_writes) {
    // Whether the preparations ran is known only if the whole round did: after a failure the
    // connection is not reused, rather than guess.
    c.preparing_writes = false;
    if (results)
      c.writes_prepared = true;
    else
      c.broken = true;
  }
  return results;
}

// Queues the preparation of the statements of one kind: the reads when a connection opens,
// the writes with the first writes sent on it. Preparing an INSERT or DELETE takes the table's
// write lock (ROW EXCLUSIVE), which a transaction run alone holds off: readers, and new
// connections, must not wait for that.
bool queue_prepares(Connection& c, const std::string& table, bool writes) {
  for (const auto& st : statements) {
    if (st.writes != writes) continue;
    char sql[256];
    std::snprintf(sql, sizeof sql, st.sql, table.c_str());
    const unsigned type = st.arrays ? bytea_array_oid : bytea_oid;
    unsigned types[3] = {type, type, type};
    if (st.limit_last) types[st.params - 1] = int4_oid;
    if (!PQsendPrepare(c.pg, st.name, sql, st.params, types)) return false;
    ++c.queued;
  }
  return true;
}

// Whether the server ended the session (restart, idle timeout, pg_terminate_backend): its
// socket is then readable, its last words (a FATAL error) and then end of file. Reads what is
// there, without waiting.
bool ended_by_server(Connection& c) {
  for (int reads = 0; reads < 8; ++reads) {
    pollfd fd{PQsocket(c.pg), POLLIN, 0};
    if (::poll(&fd, 1, 0) <= 0) return false;
    if (!PQconsumeInput(c.pg) || PQstatus(c.pg) != CONNECTION_OK) return true;
  }
  return false;
}

// ---- the pool ----

}  // namespace

namespace detail {

// Called with a place among `open` taken for it, which the connection's destructor gives back
// (also when opening fails). A server that does not take the connection (restarting, failing
// over, full) is asked again, with pauses growing from 20 ms to 1 s, for up to
// options.reconnect_wait.
Result<std::unique_ptr<Connection>> PgShared::open_connection() {
  // A connect that fails, and a session that goes away while it is set up (the server crashed or
  // restarts just then: "server closed the connection unexpectedly"), are tried again until
  // reconnect_wait has passed, as the server may be back by then. A setup the server refuses
  // with the session up is its verdict, and is answered at once.
  const auto wait = bounded(options.reconnect_wait);
  const auto give_up = std::chrono::steady_clock::now() + wait;
  for (std::chrono::milliseconds pause{20};;
       pause = std::min(pause * 2, std::chrono::milliseconds{1000})) {
    std::unique_ptr<Connection> c;
    try {
      c = std::make_unique<Connection>();
    } catch (...) {
      closed();
      throw;
    }
    c->owner = this;
    bool session_lost = false;
    auto opened = set_up(*c, session_lost);
    if (opened) return c;
    if (!session_lost) return opened.error();  // `c` leaves the connections as it goes
    const auto now = std::chrono::steady_clock::now();
    if (now >= give_up)
      return wait.count() == 0 ? opened.error()
                               : storage_error(opened.error().message() + " (tried again for " +
                                               std::to_string(wait.count()) + " ms)");
    c->owner = nullptr;  // the next try takes its place among the connections
    c.reset();
    connect_retries.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, give_up - now));
  }
}

Result<void> PgShared::set_up(Connection& connection, bool& session_lost) {
  Connection* c = &connection;
  auto pg = connect(conninfo);
  if (!pg) {
    session_lost = true;
    return pg.error();
  }
  c->pg = *pg;
  connections.fetch_add(1, std::memory_order_relaxed);
  // From here a failure whose session is down is one the server's going away caused.
  auto failed = [&](Error e) -> Result<void> {
    session_lost = PQstatus(c->pg) != CONNECTION_OK;
    return e;
  };
  if (!PQenterPipelineMode(c->pg))
    return failed(storage_error("PostgreSQL: cannot enter pipeline mode: " +
                                trimmed(PQerrorMessage(c->pg))));
  // The reads are prepared once per connection, all in one round trip.
  if (!queue_prepares(*c, table, false))
    return failed(storage_error("PostgreSQL: cannot prepare: " + trimmed(PQerrorMessage(c->pg))));
  // Generic plans always: every statement has one sensible plan (the primary key's index, in
  // key order), while the default lets the server plan a statement anew at each execution when
  // its statistics make the generic plan look costlier, as they do for scans with small limits on
  // a large table, and a replanned scan grows with the table. Planned once, a list page stays
  // O(limit + log n), as the cost model promises, on a table of any size.
  if (!queue_text(*c, "SET plan_cache_mode = force_generic_plan"))
    return failed(storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c->pg))));
  if (!options.synchronous_commit && !queue_text(*c, "SET synchronous_commit = off"))
    return failed(storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c->pg))));
  const int setup = c->queued;
  c->queued = 0;
  if (!PQpipelineSync(c->pg)) {
    c->broken = true;
    return failed(storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c->pg))));
  }
  // The server's run the session belongs to (see committed_after_all): when the postmaster
  // started, and when its shared statistics were last reset, which crash recovery does
  // (PostgreSQL 15 and later), as seconds since 1970. In a sync group of its own, in the same
  // round trip: where the statistics may not be read, the session opens all the same, without
  // it.
  if (!queue_text(*c, "SELECT extract(epoch FROM pg_postmaster_start_time())::text || ' ' || "
                      "coalesce(extract(epoch FROM (SELECT stats_reset FROM pg_stat_bgwriter))"
                      "::text, '')"))
    return failed(storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c->pg))));
  c->queued = 0;
  if (!PQpipelineSync(c->pg)) {
    c->broken = true;
    return failed(storage_error("PostgreSQL: cannot send: " + trimmed(PQerrorMessage(c->pg))));
  }
  round_trips.fetch_add(1, std::memory_order_relaxed);
  if (auto done = read_round(*c, setup); !done) return failed(done.error());
  if (auto run = read_round(*c, 1)) {
    const PGresult* r = run->front().get();
    if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) c->incarnation = PQgetvalue(r, 0, 0);
  } else if (c->broken) {
    return failed(run.error());
  }
  return {};
}

Result<std::unique_ptr<Connection>> PgShared::acquire() {
  // The pool's sessions belong to the process that opened the backend: a forked child that sent
  // on them would interleave its messages with its parent's.
  if (pid != ::getpid())
    return storage_error(
        "PostgreSQL: this catalog was opened by the parent of this process (fork); a child must "
        "open its own");
  const std::size_t cap = options.max_connections;
  const auto wait = bounded(options.connection_wait);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  bool waited = false;
  for (;;) {
    std::unique_ptr<Connection> c;
    {
      std::unique_lock lock(mutex);
      for (;;) {
        if (!idle.empty()) {
          c = std::move(idle.back());
          idle.pop_back();
          break;
        }
        if (cap == 0 || open < cap) {
          ++open;  // given back by the connection's destructor, or below
          break;
        }
        if (!waited) {
          waited = true;
          waits.fetch_add(1, std::memory_order_relaxed);
        }
        if (freed.wait_until(lock, deadline) == std::cv_status::timeout && idle.empty() &&
            open >= cap)
          return storage_error(
              "PostgreSQL: all " + std::to_string(cap) +
              " connections of this host (PostgresOptions::max_connections) stayed in use for " +
              std::to_string(wait.count()) + " ms; nothing was changed");
      }
    }
    if (!c) return open_connection();
    if (ended_by_server(*c)) continue;
    c->reused = true;
    return c;
  }
}

void PgShared::release(std::unique_ptr<Connection> conn) noexcept {
  if (!conn || conn->broken || PQstatus(conn->pg) != CONNECTION_OK) return;
  {
    std::lock_guard lock(mutex);
    if (idle.size() >= options.max_idle_connections) return;  // closed after the lock is let go
    idle.push_back(std::move(conn));
  }
  freed.notify_one();
}

Result<std::unique_ptr<Connection>> PgShared::replace(std::unique_ptr<Connection> stale) {
  stale->owner = nullptr;
  stale.reset();
  return open_connection();
}

void PgShared::closed() noexcept {
  {
    std::lock_guard lock(mutex);
    --open;
  }
  freed.notify_one();
}

}  // namespace detail

namespace {

// ---- transactions and cursors ----

// A transaction's writes not yet sent: the value, or nullopt for an erase.
using Pending = std::map<std::string, std::optional<std::string>, std::less<>>;

class PgTransaction;

class PgCursor final : public Cursor {
 public:
  PgCursor(PgTransaction* txn, const Range& range, Direction dir)
      : txn_(txn), range_(range), dir_(dir) {
    // Reverse scans start below the range's end; forward ones at its begin (`at_` unset).
    if (dir_ == Direction::reverse) at_ = range_.end;
  }
  ~PgCursor() override;
  PgCursor(const PgCursor&) = delete;
  PgCursor& operator=(const PgCursor&) = delete;

  bool valid() const noexcept override { return txn_ != nullptr && on_entry_; }
  std::string_view key() const noexcept override { return *at_; }
  std::string_view value() const noexcept override { return value_; }

  Result<void> next() override {
    if (txn_ == nullptr) return fail(Errc::storage, "cursor used after its transaction ended");
    if (!on_entry_) return fail(Errc::storage, "next() on a cursor past the end of its range");
    return settle();
  }

  // Positions on the first entry. Errors: as next().
  Result<void> open() {
    if (range_.end && range_.begin >= *range_.end) {
      more_ = false;  // an empty range: nothing to fetch
      return {};
    }
    return settle();
  }

  // The puts and erases in `pending` (already merged into what this cursor shows) went to the
  // server: the batch no longer tells the server's rows apart from them, so fetch anew from
  // where the cursor is.
  void server_changed() noexcept {
    batch_.reset();
    rows_ = idx_ = 0;
    more_ = true;
  }

  // True if the cursor stands on `key`: it exists as the transaction sees it (unless a write
  // since then, which `pending` knows, says otherwise).
  bool on(std::string_view key) const noexcept { return valid() && *at_ == key; }

  void save_position() noexcept {}  // the key is kept in `at_` always
  void close() noexcept {
    txn_ = nullptr;
    on_entry_ = false;
    batch_.reset();
    rows_ = idx_ = 0;
  }

 private:
  bool forward() const noexcept { return dir_ == Direction::forward; }

  std::string_view row_key(int i) const {
    return {PQgetvalue(batch_.get(), i, 0),
            static_cast<std::size_t>(PQgetlength(batch_.get(), i, 0))};
  }
  std::string_view row_value(int i) const {
    return {PQgetvalue(batch_.get(), i, 1),
            static_cast<std::size_t>(PQgetlength(batch_.get(), i, 1))};
  }

  // Whether `key` lies beyond the position in the scan's direction (or there is no position
  // yet: everything the server returns is in range).
  bool ahead(std::string_view key) const {
    if (!at_) return true;
    return forward() ? key > *at_ : key < *at_;
  }

  // The next server row ahead of the position, fetching a batch if needed; nullopt when none.
  Result<std::optional<int>> server_next();
  Result<void> fetch();
  // Moves to the next visible entry ahead of the position, or off the range.
  Result<void> settle();

  PgTransaction* txn_;  // null once the transaction ended
  Range range_;
  Direction dir_;
  // The position: the key of the current entry (or, passing an erased one, of that one).
  // Unset before the first entry of a forward scan; a reverse scan starts at the range's end.
  std::optional<std::string> at_;
  std::string_view value_;
  bool on_entry_ = false;
  // The last batch from the server and the first row of it not yet passed.
  SharedResult batch_;
  int rows_ = 0;
  int idx_ = 0;
  bool more_ = true;  // the server may hold rows ahead of the batch
  int limit_ = first_batch;
};

// The conflicts in a row of this thread's write transactions, and the backend they were on.
struct ConflictStreak {
  const PgShared* backend = nullptr;
  unsigned conflicts = 0;
};
thread_local ConflictStreak streak;

class PgTransaction final : public Transaction,
                            public detail::TransactionState<PgTransaction, PgCursor> {
 public:
  PgTransaction(std::shared_ptr<PgShared> shared, Mode mode)
      : TransactionState(mode), shared_(std::move(shared)) {
    const auto& o = shared_->options;
    const unsigned after = o.exclusive_after_conflicts;
    exclusive_ = mode_ == Mode::read_write &&
                 (!o.concurrent_writers ||
                  (after > 0 && streak.backend == shared_.get() && streak.conflicts >= after));
    if (exclusive_) shared_->exclusive.fetch_add(1, std::memory_order_relaxed);
  }
  ~PgTransaction() override { end(); }
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;

  Result<void> start() {
    auto c = shared_->acquire();
    if (!c) return c.error();
    conn_ = std::move(*c);
    if (mode_ == Mode::read_write) return {};  // BEGIN goes with the first statement
    // A read transaction's snapshot is the store as of begin: a statement takes it now.
    auto done = exchange([](Connection& c) { return queue_text(c, "SELECT 1"); });
    if (!done) return done.error();
    return {};
  }

  // One round trip: BEGIN first if the transaction has not begun on the server, then what
  // `statements` queues. The first round of a transaction, on a pooled connection the server
  // turned out to have closed, runs again on a new connection: nothing of it ran. (Not one that
  // commits: the commit may have happened before the connection broke.) Errors: those of the
  // round; the caller ends the transaction.
  template <class Queue>
  Result<std::vector<PgResult>> exchange(Queue&& statements, bool commits = false) {
    for (;;) {
      const bool first = !begun_;
      // A transaction run alone locks out other writers before its first query takes the
      // snapshot (LOCK takes none), so it sees every write that can ever meet it; a concurrent
      // writer takes the shared form of the same lock, so it never runs beside one run alone.
      // A writer's session is ended by the server when it waits too long for its host inside
      // the transaction, and a writer waits no longer than that for a lock, the turn included
      // (PostgresOptions::idle_in_transaction_timeout): a frozen host must not keep the other
      // hosts' writers waiting, neither with the turn it holds nor with the turns its waiting
      // sessions would take, one after the other, once it has stopped reading their answers.
      // Readers hold no turn and are let be. A writer learns its transaction's id and its
      // session's, by which a new session can ask whether it committed when the answer to its
      // COMMIT is lost (committed_after_all).
      const bool writes = mode_ == Mode::read_write;
      const bool idle_limit = writes && !shared_->idle_sql.empty();
      const bool ok =
          (!first || (queue_text(*conn_, begin_sql(writes, shared_->options.concurrent_writers)) &&
                      (!idle_limit || (queue_text(*conn_, shared_->idle_sql.c_str()) &&
                                       queue_text(*conn_, shared_->lock_wait_sql.c_str()))) &&
                      (!writes || (queue_text(*conn_, exclusive_ ? shared_->lock_sql.c_str()
                                                                 : shared_->share_sql.c_str()) &&
                                   queue(*conn_, s_xact_id, {}))))) &&
          statements(*conn_);
      if (!ok) {
        conn_->broken = true;  // half queued: the session cannot be trusted
        // A COMMIT that failed to send may still sit whole in libpq's buffer, which closing
        // the session flushes while it is up: only a session that is down surely took it.
        if (!commits || PQstatus(conn_->pg) != CONNECTION_OK) return ended(lost_error());
        return lost_error();
      }
      sent_ = true;
      auto results = round(*conn_, shared_->round_trips);
      if (results) {
        begun_ = true;
        if (first) {  // BEGIN's result, and a writer's SETs', LOCK's and its ids
          const std::ptrdiff_t setup = 1 + (writes ? 2 : 0) + (idle_limit ? 2 : 0);
          if (writes) {
            const PGresult* ids = (*results)[static_cast<std::size_t>(setup - 1)].get();
            if (PQntuples(ids) == 1 && !PQgetisnull(ids, 0, 0) && !PQgetisnull(ids, 0, 1))
              ids_ = Ids{{PQgetvalue(ids, 0, 0), static_cast<std::size_t>(PQgetlength(ids, 0, 0))},
                         {PQgetvalue(ids, 0, 1), static_cast<std::size_t>(PQgetlength(ids, 0, 1))},
                         conn_->incarnation};
          }
          results->erase(results->begin(), results->begin() + setup);
        }
        return results;
      }
      if (results.error().code() == Errc::storage_conflict) note_conflict();
      if (!first || commits || !conn_->broken || !conn_->reused) {
        // A session that ended before the transaction's COMMIT was sent took all of the
        // transaction with it: the Store may run the operation again. (A session kept from
        // reuse for another reason, a conflict while preparing writes, still exists.)
        const bool gone =
            conn_->broken && (PQstatus(conn_->pg) != CONNECTION_OK || !conn_->server_refused);
        if (gone && !commits) return ended(results.error());
        return results.error();
      }
      auto fresh = shared_->replace(std::move(conn_));
      if (!fresh) return fresh.error();
      conn_ = std::move(*fresh);
    }
  }

  Result<std::optional<std::string>> get(std::string_view key) override {
    if (auto ok = alive(); !ok) return ok.error();
    if (auto checked = check_key(key); !checked) return checked.error();
    if (auto it = pending_.find(key); it != pending_.end()) return it->second;
    if (const auto* known = known_.find(key)) return *known;
    auto results = exchange([&](Connection& c) { return queue(c, s_get, {key}); });
    if (!results) return die(results.error());
    const PGresult* r = results->back().get();
    std::optional<std::string> value;
    if (PQntuples(r) > 0)
      value.emplace(PQgetvalue(r, 0, 0), static_cast<std::size_t>(PQgetlength(r, 0, 0)));
    remember(key, value);
    return value;
  }

  // Keys neither pending nor known are asked in batches of `get_batch`, one statement and one
  // round trip each: the server then starts one scan of its index for the batch, not one
  // statement per key. What they read is not remembered: an entity's followers would push out
  // every other key.
  Result<void> get_each(std::span<const std::string_view> keys, const Visit& visit) override {
    if (auto ok = alive(); !ok) return ok.error();
    // Per key of a batch: the pending or known value that answers it, or null when asked.
    std::vector<const std::optional<std::string>*> held;
    std::vector<std::size_t> asked;  // indexes of the keys the server is asked
    std::vector<std::string_view> asked_keys;
    std::vector<std::string_view> found;  // per key of the batch: its value when the server has it
    std::vector<bool> has;
    for (std::size_t at = 0; at < keys.size(); at += get_batch) {
      const std::size_t end = std::min(keys.size(), at + get_batch);
      held.clear();
      asked.clear();
      for (std::size_t i = at; i < end; ++i) {
        if (auto checked = check_key(keys[i]); !checked) return checked.error();
        const std::optional<std::string>* h = nullptr;
        if (auto it = pending_.find(keys[i]); it != pending_.end())
          h = &it->second;
        else
          h = known_.find(keys[i]);
        held.push_back(h);
        if (!h) asked.push_back(i);
      }
      found.assign(end - at, {});
      has.assign(end - at, false);
      PgResult rows;
      if (asked.size() == 1) {
        auto results = exchange([&](Connection& c) { return queue(c, s_get, {keys[asked[0]]}); });
        if (!results) return die(results.error());
        rows = std::move(results->front());
        if (PQntuples(rows.get()) > 0) {
          found[asked[0] - at] = {PQgetvalue(rows.get(), 0, 0),
                                  static_cast<std::size_t>(PQgetlength(rows.get(), 0, 0))};
          has[asked[0] - at] = true;
        }
      } else if (!asked.empty()) {
        // The rows come in the server's order, each key once: matched to the keys asked by a
        // binary search over them in key order (a key asked twice gets the row twice).
        std::sort(asked.begin(), asked.end(),
                  [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
        asked_keys.clear();
        for (auto i : asked) asked_keys.push_back(keys[i]);
        auto results = exchange(
            [&](Connection& c) { return queue(c, s_get_many, {bytea_array(asked_keys)}); });
        if (!results) return die(results.error());
        rows = std::move(results->front());
        const PGresult* r = rows.get();
        for (int row = 0, n = PQntuples(r); row < n; ++row) {
          const std::string_view key(PQgetvalue(r, row, 0),
                                     static_cast<std::size_t>(PQgetlength(r, row, 0)));
          const std::string_view value(PQgetvalue(r, row, 1),
                                       static_cast<std::size_t>(PQgetlength(r, row, 1)));
          for (auto k = std::lower_bound(asked_keys.begin(), asked_keys.end(), key);
               k != asked_keys.end() && *k == key; ++k) {
            const std::size_t i = asked[static_cast<std::size_t>(k - asked_keys.begin())];
            found[i - at] = value;
            has[i - at] = true;
          }
        }
      }
      for (std::size_t i = at; i < end; ++i) {
        std::optional<std::string_view> value;
        if (const auto* h = held[i - at]) {
          if (*h) value.emplace(**h);
        } else if (has[i - at]) {
          value.emplace(found[i - at]);
        }
        visit(i, value);
      }
    }
    return {};
  }

  bool reads_ahead() const noexcept override { return true; }

  // One round trip for the keys neither pending nor known (remembered, found or not) and the
  // first batch of each range not kept (kept for the first scan of it, whole or not).
  Result<void> prefetch(std::span<const std::string_view> keys,
                        std::span<const Range> ranges) override {
    if (auto ok = alive(); !ok) return ok.error();
    std::vector<std::string_view> asked;
    for (auto key : keys) {
      if (auto checked = check_key(key); !checked) return checked.error();
      if (!pending_.contains(key) && !known_.find(key)) asked.push_back(key);
    }
    std::sort(asked.begin(), asked.end());
    asked.erase(std::unique(asked.begin(), asked.end()), asked.end());
    if (asked.size() > get_batch) asked.resize(get_batch);
    std::vector<const Range*> wanted;
    for (const auto& r : ranges)
      if (r.end && r.begin < *r.end && !range(r, Direction::forward)) wanted.push_back(&r);
    if (asked.empty() && wanted.empty()) return {};
    auto results = exchange([&](Connection& c) {
      if (asked.size() == 1 && !queue(c, s_get, {asked[0]})) return false;
      if (asked.size() > 1 && !queue(c, s_get_many, {bytea_array(asked)})) return false;
      for (const auto* r : wanted)
        if (!queue(c, s_fwd_to, {r->begin, *r->end}, first_batch)) return false;
      return true;
    });
    if (!results) return die(results.error());
    std::size_t next = 0;
    if (!asked.empty()) {
      const PGresult* r = (*results)[next++].get();
      std::vector<bool> found(asked.size(), false);
      const bool single = asked.size() == 1;
      for (int row = 0, n = PQntuples(r); row < n; ++row) {
        const int v = single ? 0 : 1;
        const std::string_view key =
            single ? asked[0]
                   : std::string_view(PQgetvalue(r, row, 0),
                                      static_cast<std::size_t>(PQgetlength(r, row, 0)));
        auto at = std::lower_bound(asked.begin(), asked.end(), key);
        if (at == asked.end() || *at != key) continue;
        found[static_cast<std::size_t>(at - asked.begin())] = true;
        remember(key, std::string(PQgetvalue(r, row, v),
                                  static_cast<std::size_t>(PQgetlength(r, row, v))));
      }
      for (std::size_t i = 0; i < asked.size(); ++i)
        if (!found[i]) remember(asked[i], std::nullopt);
    }
    for (const auto* r : wanted)
      keep_range(*r, Direction::forward,
                 SharedResult((*results)[next++].release(), ResultDeleter()));
    return {};
  }

  Result<void> put(std::string_view key, std::string_view value) override {
    if (auto ok = prepare_write(key); !ok) return ok.error();
    auto it = pending_.lower_bound(key);
    if (it != pending_.end() && it->first == key) {
      pending_bytes_ -= it->second ? it->second->size() : 0;
      it->second.emplace(value);
    } else {
      pending_.emplace_hint(it, std::string(key), std::string(value));
      pending_bytes_ += key.size();
    }
    pending_bytes_ += value.size();
    return send_if_large();
  }

  Result<bool> erase(std::string_view key) override {
    if (auto ok = prepare_write(key); !ok) return ok.error();
    auto existed = exists(key);
    if (!existed) return existed.error();
    auto it = pending_.lower_bound(key);
    if (it != pending_.end() && it->first == key) {
      pending_bytes_ -= it->second ? it->second->size() : 0;
      it->second.reset();
    } else {
      pending_.emplace_hint(it, std::string(key), std::nullopt);
      pending_bytes_ += key.size();
    }
    if (auto sent = send_if_large(); !sent) return sent.error();
    return *existed;
  }

  Result<std::unique_ptr<Cursor>> scan(const Range& range, Direction dir) override {
    if (auto ok = alive(); !ok) return ok.error();
    auto cursor = std::make_unique<PgCursor>(this, range, dir);
    track(cursor.get());
    if (auto opened = cursor->open(); !opened) return opened.error();
    return std::unique_ptr<Cursor>(std::move(cursor));
  }

  Result<void> commit() override {
    if (auto ok = alive(); !ok) return ok.error();
    close_cursors();
    if (mode_ == Mode::read_only) {
      // A read-only transaction cannot fail to commit: send it, and let the connection's next
      // round read the answer.
      if (!queue_text(*conn_, "COMMIT")) return die(lost_error());
      if (auto sent = round(*conn_, shared_->round_trips, false); !sent) return die(sent.error());
      release();
      committed();
      return {};
    }
    // A session the server has ended already took the transaction with it: nothing is sent,
    // and the Store may run the operation again.
    if (ended_by_server(*conn_)) {
      conn_->broken = true;
      return die(ended(storage_error("PostgreSQL: connection lost before the commit: " +
                                     trimmed(PQerrorMessage(conn_->pg)))));
    }
    auto results =
        exchange([&](Connection& c) { return queue_pending(c) && queue_text(c, "COMMIT"); }, true);
    if (!results) {
      // The answer is lost when the connection broke with no word from the server (whose errors
      // mean it rolled back), or when the server ended the session (57P01), which may come
      // after the COMMIT's own answer.
      const bool lost = conn_ && conn_->broken &&
                        (conn_->admin_shutdown ||
                         (!conn_->server_refused && results.error().code() == Errc::storage));
      if (!lost) return die(results.error());
      // Ended after every statement of the round answered, the COMMIT included (the server
      // holds the ending off while it commits, and acts on it at the next message): it
      // committed.
      if (conn_->admin_shutdown && !conn_->ended_mid_round) return succeeded();
      const bool ended_first = conn_->ended_mid_round && PQstatus(conn_->pg) != CONNECTION_OK;
      // A new session asks the server how the transaction ended: rolled back, the Store may run
      // the operation again; committed, it succeeded.
      if (auto outcome = committed_after_all()) {
        if (*outcome) return succeeded();
        return die(ended(results.error()));
      }
      // The server ends a session (a fast shutdown, pg_terminate_backend) only where the
      // session may stop, never while it commits: ended before the COMMIT answered, the
      // transaction was rolled back.
      if (ended_first) return die(ended(results.error()));
      // Not known: say so, since running the operation again might then do it twice.
      return die(storage_error(results.error().message() +
                               " while committing: whether the transaction committed is not "
                               "known"));
    }
    release();
    return succeeded();
  }

  // For cursors.
  const Pending& pending() const noexcept { return pending_; }

  // A range this transaction already fetched, if it kept it (see ranges_): whole, or its first
  // `first_batch` rows.
  SharedResult range(const Range& range, Direction dir) const {
    const auto* kept = ranges_.find(RangeKey{range.begin, range.end, dir == Direction::reverse});
    return kept ? *kept : nullptr;
  }
  void keep_range(const Range& range, Direction dir, SharedResult rows) {
    const std::size_t bytes = PQresultMemorySize(rows.get());
    if (bytes > range_limit_bytes) return;
    ranges_.insert(RangeKey{range.begin, range.end, dir == Direction::reverse}, std::move(rows),
                   bytes);
  }
  Error fail_cursor(Error e) { return die(std::move(e)); }

 private:
  friend class detail::TransactionState<PgTransaction, PgCursor>;

  static Error lost_error() { return storage_error("PostgreSQL: cannot send a statement"); }

  Result<void> succeeded() {
    if (streak.backend == shared_.get()) streak.conflicts = 0;
    pending_.clear();
    committed();
    return {};
  }

  // How this transaction ended, when the answer to its COMMIT round was lost: asked on a new
  // session (pg_xact_status of its id, which the server keeps), found as the connection is
  // replaced (within reconnect_wait), in the same run of the server (after a crash or a
  // failover it may hand out again ids whose transactions never reached its disk). A
  // transaction still in progress is one whose session the server has not yet found cut off:
  // in its COMMIT (running deferred triggers) or waiting for a COMMIT that never came, holding
  // the writers' turn. That session is ended (pg_terminate_backend, found by its process and
  // transaction ids): this rolls the transaction back, unless it has begun to write its commit,
  // which the server then finishes first. Not where commits wait for synchronous standbys
  // (synchronous_standby_names, unless this backend turned synchronous_commit off): a session
  // ended while it waits for one commits without its confirmation. The outcome is asked again
  // until reconnect_wait has passed since the answer was lost. true: committed; false: rolled
  // back; nullopt: not known (no ids, no session, another run of the server, no answer, or
  // still in progress).
  std::optional<bool> committed_after_all() {
    if (!ids_ || ids_->incarnation.empty() || !conn_) return std::nullopt;
    const auto give_up =
        std::chrono::steady_clock::now() + PgShared::bounded(shared_->options.reconnect_wait);
    auto fresh = shared_->replace(std::move(conn_));
    if (!fresh) return std::nullopt;
    std::unique_ptr<Connection> c = std::move(*fresh);
    if (c->incarnation != ids_->incarnation) {
      shared_->release(std::move(c));
      return std::nullopt;
    }
    shared_->commits_checked.fetch_add(1, std::memory_order_relaxed);
    // The 32 bits of the id that pg_stat_activity shows (backend_xid), without its epoch.
    const std::string xid32 =
        std::to_string(std::strtoull(ids_->xid.c_str(), nullptr, 10) & std::uint64_t{0xffffffff});
    bool ending = false;
    for (std::chrono::milliseconds pause{5};;
         pause = std::min(pause * 2, std::chrono::milliseconds{200})) {
      if (!queue_text(*c, "SELECT pg_xact_status($1::xid8)", {ids_->xid.c_str()}))
        return std::nullopt;
      auto asked = round(*c, shared_->round_trips);
      if (!asked) return std::nullopt;
      const PGresult* r = asked->front().get();
      if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) return std::nullopt;
      const std::string_view status = PQgetvalue(r, 0, 0);
      if (status == "committed" || status == "aborted") {
        shared_->release(std::move(c));
        return status == "committed";
      }
      if (!ending) {
        ending = true;
        if (!queue_text(*c,
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE pid = $1::int AND backend_xid = $2::xid "
                        "AND ($3::bool OR current_setting('synchronous_standby_names') = '')",
                        {ids_->pid.c_str(), xid32.c_str(),
                         shared_->options.synchronous_commit ? "false" : "true"}) ||
            !round(*c, shared_->round_trips))
          return std::nullopt;
        continue;  // asked again at once: the session may be gone already
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= give_up) {
        shared_->release(std::move(c));
        return std::nullopt;
      }
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(pause, give_up - now));
    }
  }

  // `e`, of a session that ended before the transaction committed (nothing of it was written).
  static Error ended(const Error& e) { return Error(Errc::storage_unavailable, e.message()); }

  // The isolation level. Writers taking turns: every write transaction holds writer_turn
  // EXCLUSIVE from before its snapshot to after its commit is visible (the server makes a
  // commit visible before it releases the committer's locks), so the writers' history is serial
  // and each snapshot, a writer's or a reader's, holds a prefix of it. REPEATABLE READ is then
  // serializable by construction, and the server's SERIALIZABLE bookkeeping could only add
  // failures: it marks a committer done for its conflict checks after releasing its locks, so a
  // next writer can look concurrent with it, and it summarizes old transactions under memory
  // pressure, both of which fail transactions that do not conflict. Writers running
  // concurrently need SERIALIZABLE, and so do readers beside them.
  static const char* begin_sql(bool writes, bool concurrent_writers) {
    if (!concurrent_writers)
      return writes ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ WRITE"
                    : "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
    return writes ? "BEGIN ISOLATION LEVEL SERIALIZABLE, READ WRITE"
                  : "BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY";
  }

  void note_conflict() noexcept {
    shared_->conflicts.fetch_add(1, std::memory_order_relaxed);
    if (mode_ != Mode::read_write) return;
    if (streak.backend != shared_.get()) streak = {shared_.get(), 0};
    ++streak.conflicts;
  }

  void remember(std::string_view key, const std::optional<std::string>& value) {
    // With what a map node costs beside the bytes.
    const std::size_t size = key.size() + (value ? value->size() : 0) + 96;
    known_.insert(std::string(key), value, size);
  }

  // Whether `key` exists as the transaction sees it, asking the server only when neither the
  // pending writes, the gets so far, nor an open cursor standing on it can tell.
  Result<bool> exists(std::string_view key) {
    if (auto it = pending_.find(key); it != pending_.end()) return it->second.has_value();
    if (const auto* known = known_.find(key)) return known->has_value();
    for (const PgCursor* c : cursors())
      if (c->on(key)) return true;
    auto results = exchange([&](Connection& c) { return queue(c, s_exists, {key}); });
    if (!results) return die(results.error());
    return PQntuples(results->back().get()) > 0;
  }

  // Queues every pending write (order does not matter: each key is there once), after the
  // preparation of the write statements if this connection never sent writes.
  bool queue_pending(Connection& c) {
    if (!pending_.empty() && !c.writes_prepared && !c.preparing_writes) {
      if (!queue_prepares(c, shared_->table, true)) return false;
      c.preparing_writes = true;
    }
    std::vector<std::string_view> put_keys, put_values, erase_keys;
    for (const auto& [key, value] : pending_) {
      if (value) {
        put_keys.push_back(key);
        put_values.push_back(*value);
      } else {
        erase_keys.push_back(key);
      }
    }
    if (put_keys.size() == 1) {
      if (!queue(c, s_put, {put_keys[0], put_values[0]})) return false;
    } else if (!put_keys.empty()) {
      if (!queue(c, s_put_many, {bytea_array(put_keys), bytea_array(put_values)})) return false;
    }
    if (erase_keys.size() == 1) {
      if (!queue(c, s_erase, {erase_keys[0]})) return false;
    } else if (!erase_keys.empty()) {
      if (!queue(c, s_erase_many, {bytea_array(erase_keys)})) return false;
    }
    return true;
  }

  // Sends the pending writes now if they grew past the limits: one round trip, after which the
  // server holds them (the transaction's view is unchanged) and cursors fetch anew.
  Result<void> send_if_large() {
    if (pending_bytes_ <= shared_->options.write_buffer_bytes &&
        pending_.size() <= pending_limit_entries)
      return {};
    auto results = exchange([&](Connection& c) { return queue_pending(c); });
    if (!results) return die(results.error());
    for (auto& [key, value] : pending_) remember(key, value);
    pending_.clear();
    pending_bytes_ = 0;
    ranges_.clear();  // the server's rows changed
    for (PgCursor* c : cursors()) c->server_changed();
    return {};
  }

  // Gives the connection back, its transaction ended (or ending: a rollback is sent and not
  // waited for).
  void release() noexcept { shared_->release(std::move(conn_)); }

  // Ends the transaction without committing. Idempotent.
  void end() noexcept {
    close_cursors();
    pending_.clear();
    known_.clear();
    ranges_.clear();
    if (!conn_) return;
    if (!sent_) {
      release();  // nothing was sent
    } else if (!conn_->broken && queue_text(*conn_, "ROLLBACK")) {
      (void)round(*conn_, shared_->round_trips, false);
      release();
    }
    conn_.reset();
  }

  std::shared_ptr<PgShared> shared_;
  std::unique_ptr<Connection> conn_;  // null once ended
  bool exclusive_ = false;            // runs alone (taking turns, or after conflicts)
  bool begun_ = false;                // BEGIN was sent and succeeded
  bool sent_ = false;                 // something was sent: end with a rollback
  // A writer's transaction id (xid8), its session's process id and the server's run, once its
  // first round answered.
  struct Ids {
    std::string xid;
    std::string pid;
    std::string incarnation;
  };
  std::optional<Ids> ids_;
  Pending pending_;
  std::size_t pending_bytes_ = 0;
  Remembered<std::string, std::optional<std::string>> known_{known_limit_entries,
                                                             known_limit_bytes};
  // Small ranges fetched whole, by begin, end and direction: the snapshot does not change, and
  // cursors merge the pending writes over them, so a range scanned again (the engine renders an
  // entity's edges more than once in one operation) costs no round trip. Forgotten when pending
  // writes go to the server, which changes its rows.
  using RangeKey = std::tuple<std::string, std::optional<std::string>, bool>;
  Remembered<RangeKey, SharedResult> ranges_{ranges_limit_entries, ranges_limit_bytes};
};

PgCursor::~PgCursor() {
  if (txn_ != nullptr) txn_->forget(this);
}

Result<void> PgCursor::fetch() {
  // Forward: from the range's begin, then from just after the position; reverse: from below
  // the position (the range's end first), down to the range's begin.
  // The first batch of a range this transaction already fetched comes from memory: the whole
  // range, or its first `first_batch` rows when a prefetch fetched it (more may follow them).
  const bool first = forward() ? !at_ : at_ == range_.end;
  if (first && !batch_) {
    if (auto kept = txn_->range(range_, dir_)) {
      batch_ = std::move(kept);
      rows_ = PQntuples(batch_.get());
      idx_ = 0;
      more_ = rows_ >= first_batch;
      if (more_) limit_ = std::min(limit_ * 2, max_batch);
      return {};
    }
  }
  std::string from;
  if (forward()) {
    if (at_) {
      from = *at_;
      from += '\0';
    } else {
      from = range_.begin;
    }
  }
  auto results = txn_->exchange([&](Connection& c) {
    if (forward())
      return range_.end ? queue(c, s_fwd_to, {from, *range_.end}, limit_)
                        : queue(c, s_fwd, {from}, limit_);
    return at_ ? queue(c, s_rev_from, {range_.begin, *at_}, limit_)
               : queue(c, s_rev, {range_.begin}, limit_);
  });
  if (!results) return txn_->fail_cursor(results.error());
  batch_ = SharedResult(results->back().release(), ResultDeleter());
  rows_ = PQntuples(batch_.get());
  idx_ = 0;
  more_ = rows_ == limit_;
  // The next batch: twice as many rows, but not so many that rows as large as the largest seen
  // here would pass batch_bytes.
  std::size_t largest = 1;
  for (int i = 0; i < rows_; ++i)
    largest = std::max(largest, static_cast<std::size_t>(PQgetlength(batch_.get(), i, 0)) +
                                    static_cast<std::size_t>(PQgetlength(batch_.get(), i, 1)));
  if (first && !more_) txn_->keep_range(range_, dir_, batch_);
  const auto by_bytes = static_cast<int>(std::min<std::size_t>(batch_bytes / largest, max_batch));
  limit_ = std::max(1, std::min({limit_ * 2, max_batch, by_bytes}));
  return {};
}

Result<std::optional<int>> PgCursor::server_next() {
  for (;;) {
    while (idx_ < rows_ && !ahead(row_key(idx_))) ++idx_;
    if (idx_ < rows_) return std::optional<int>(idx_);
    if (!more_) return std::optional<int>();
    if (auto f = fetch(); !f) return f.error();
  }
}

Result<void> PgCursor::settle() {
  const Pending& pending = txn_->pending();
  for (;;) {
    auto server = server_next();
    if (!server) {
      on_entry_ = false;
      return server.error();
    }
    // The pending write ahead of the position, inside the range.
    const Pending::value_type* mine = nullptr;
    if (forward()) {
      auto it = at_ ? pending.upper_bound(*at_) : pending.lower_bound(range_.begin);
      if (it != pending.end() && (!range_.end || it->first < *range_.end)) mine = &*it;
    } else {
      auto it = at_ ? pending.lower_bound(*at_) : pending.end();
      if (it != pending.begin() && (--it)->first >= range_.begin) mine = &*it;
    }
    if (!*server && mine == nullptr) {
      on_entry_ = false;
      return {};
    }
    // A pending write wins over the server's row of the same key.
    bool take_mine = mine != nullptr;
    if (*server && mine != nullptr) {
      const auto row = row_key(**server);
      take_mine = forward() ? mine->first <= row : mine->first >= row;
    }
    if (take_mine) {
      at_ = mine->first;
      if (!mine->second) continue;  // erased: pass it (and the server's row it hides)
      value_ = *mine->second;
    } else {
      at_ = std::string(row_key(**server));
      value_ = row_value(**server);
    }
    on_entry_ = true;
    return {};
  }
}

}  // namespace

// ---- the backend ----

PostgresBackend::PostgresBackend(std::shared_ptr<detail::PgShared> shared)
    : shared_(std::move(shared)) {}

PostgresBackend::~PostgresBackend() = default;

Result<std::unique_ptr<PostgresBackend>> PostgresBackend::open(const std::string& conninfo,
                                                               PostgresOptions options) {
  if (options.schema.empty()) return fail(Errc::invalid_value, "PostgreSQL schema name is empty");
  // PostgreSQL cuts identifiers to NAMEDATALEN - 1 = 63 bytes without a word, so two longer
  // names that share those bytes would open one catalog.
  if (options.schema.size() > max_schema_bytes)
    return fail(Errc::invalid_value, "PostgreSQL schema name " + options.schema.substr(0, 80) +
                                         "... is " + std::to_string(options.schema.size()) +
                                         " bytes: PostgreSQL keeps only the first " +
                                         std::to_string(max_schema_bytes) +
                                         " of a name, so give at most that many");
  auto pg = connect(conninfo);
  if (!pg) return pg.error();
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(*pg, PQfinish);
  const std::string schema = quote_identifier(conn.get(), options.schema);
  if (schema.empty())
    return storage_error("PostgreSQL: invalid schema name: " + trimmed(PQerrorMessage(conn.get())));
  const std::string table = schema + ".entries";
  const std::string versions = schema + ".schema_version";
  const std::string turn = schema + ".writer_turn";
  // Two hosts opening a new catalog at once: the advisory lock (held to the commit) makes the
  // second wait and then find everything made. `bytea` compares as memcmp does. Rows are
  // rewritten often (records, counters), so pages keep room for updates in place.
  const std::string setup = "BEGIN;"
                            "SELECT pg_advisory_xact_lock(7305386020944416768);"
                            "CREATE SCHEMA IF NOT EXISTS " +
                            schema +
                            ";"
                            "CREATE TABLE IF NOT EXISTS " +
                            table +
                            " (k bytea PRIMARY KEY, v bytea NOT NULL) WITH (fillfactor = 80);"
                            "CREATE TABLE IF NOT EXISTS " +
                            versions +
                            " (version integer NOT NULL);"
                            // Holds no rows: write transactions lock it to take turns.
                            "CREATE TABLE IF NOT EXISTS " +
                            turn +
                            " ();"
                            "INSERT INTO " +
                            versions + " SELECT " + std::to_string(schema_version) +
                            " WHERE NOT EXISTS (SELECT 1 FROM " + versions +
                            ");"
                            "COMMIT";
  // What exists is not made again: CREATE ... IF NOT EXISTS checks the CREATE privilege first, so
  // a role that may only read and write could not open a catalog that is there.
  const char* names[] = {table.c_str(), versions.c_str(), turn.c_str()};
  PgResult there(PQexecParams(conn.get(),
                              "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL "
                              "AND to_regclass($3) IS NOT NULL",
                              3, nullptr, names, nullptr, nullptr, 0));
  const bool exists = there && PQresultStatus(there.get()) == PGRES_TUPLES_OK &&
                      PQntuples(there.get()) == 1 &&
                      std::strcmp(PQgetvalue(there.get(), 0, 0), "t") == 0;
  if (!exists)
    if (auto made = exec(conn.get(), setup, PGRES_COMMAND_OK); !made) {
      (void)exec(conn.get(), "ROLLBACK", PGRES_COMMAND_OK);
      return storage_error("cannot create the catalog's table in schema " + options.schema + ": " +
                           made.error().message());
    }
  auto version = exec(conn.get(), "SELECT max(version) FROM " + versions, PGRES_TUPLES_OK);
  if (!version) return version.error();
  const int found = PQntuples(version->get()) == 1 && !PQgetisnull(version->get(), 0, 0)
                        ? std::atoi(PQgetvalue(version->get(), 0, 0))
                        : 0;
  if (found != schema_version)
    return storage_error("the catalog in schema " + options.schema + " has table layout version " +
                         std::to_string(found) + "; this library reads version " +
                         std::to_string(schema_version));

  auto shared = std::make_shared<detail::PgShared>();
  shared->conninfo = conninfo;
  shared->table = table;
  shared->lock_sql = "LOCK TABLE " + turn + " IN EXCLUSIVE MODE";
  shared->share_sql = "LOCK TABLE " + turn + " IN ROW EXCLUSIVE MODE";
  // SET, not SELECT set_config(): a SELECT would take the transaction's snapshot before LOCK.
  if (const auto idle_ms = options.idle_in_transaction_timeout.count(); idle_ms > 0) {
    shared->idle_sql = "SET LOCAL idle_in_transaction_session_timeout = " + std::to_string(idle_ms);
    shared->lock_wait_sql = "SET LOCAL lock_timeout = " + std::to_string(idle_ms);
  }
  shared->options = std::move(options);
  return std::unique_ptr<PostgresBackend>(new PostgresBackend(std::move(shared)));
}

Result<void> PostgresBackend::drop_schema(const std::string& conninfo, std::string_view schema) {
  auto pg = connect(conninfo);
  if (!pg) return pg.error();
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(*pg, PQfinish);
  const std::string quoted = quote_identifier(conn.get(), schema);
  if (quoted.empty()) return storage_error("PostgreSQL: invalid schema name");
  auto dropped = exec(conn.get(), "DROP SCHEMA IF EXISTS " + quoted + " CASCADE", PGRES_COMMAND_OK);
  if (!dropped) return dropped.error();
  return {};
}

Result<std::unique_ptr<Transaction>> PostgresBackend::begin(Mode mode) {
  auto txn = std::make_unique<PgTransaction>(shared_, mode);
  if (auto started = txn->start(); !started) return started.error();
  return std::unique_ptr<Transaction>(std::move(txn));
}

PostgresStats PostgresBackend::stats() const noexcept {
  PostgresStats s{shared_->round_trips.load(std::memory_order_relaxed),
                  shared_->connections.load(std::memory_order_relaxed),
                  shared_->conflicts.load(std::memory_order_relaxed),
                  shared_->exclusive.load(std::memory_order_relaxed),
                  shared_->waits.load(std::memory_order_relaxed),
                  shared_->connect_retries.load(std::memory_order_relaxed),
                  shared_->commits_checked.load(std::memory_order_relaxed)};
  std::lock_guard lock(shared_->mutex);
  s.open_connections = shared_->open;
  s.idle_connections = shared_->idle.size();
  return s;
}

}  // namespace catalog::storage
