#ifndef CATALOG_STORAGE_POSTGRES_BACKEND_HPP
#define CATALOG_STORAGE_POSTGRES_BACKEND_HPP

// The PostgreSQL storage backend: one catalog shared by hosts on many machines. Built into its
// own library, catalog::postgres (libpq); this header does not include <libpq-fe.h>.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/storage/backend.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace catalog::storage {

/// Options of PostgresBackend::open.
struct PostgresOptions {
  /// The schema holding the catalog's table, created (with the table) on first open. Hosts that
  /// share a catalog name the same schema; one database may hold several catalogs.
  /// Default: "catalog".
  std::string schema = "catalog";
  /// Whether a commit waits for the server to flush its WAL (`synchronous_commit`). Off, a crash
  /// of the server may lose the last commits, never consistency (like Durability::no_sync).
  /// Default: true.
  bool synchronous_commit = true;
  /// Idle connections kept open for the next transactions; more are closed when they end.
  /// Default: 16.
  std::size_t max_idle_connections = 16;
  /// The most connections the backend holds at once, idle ones included: each running
  /// transaction holds one. A transaction that would open one more waits until another ends,
  /// for at most `connection_wait`, and then fails (storage, nothing changed). Hosts of many
  /// threads set it so that together they stay under the server's `max_connections` instead of
  /// failing with its "too many clients". Connections are handed out as they come free, not to
  /// the waiters in turn. With a limit, a thread must not hold two transactions of the backend
  /// at once: the second may wait for the first. 0: no limit. Default: 0.
  std::size_t max_connections = 0;
  /// How long a transaction waits for a connection when `max_connections` are in use. Zero fails
  /// at once. Default: 30 s.
  std::chrono::milliseconds connection_wait{30000};
  /// How long a transaction that needs a new connection asks again when the server does not
  /// take it (restarting, failing over, out of connections), pausing 20 ms, then twice as long
  /// each time up to 1 s, before it fails (storage, nothing changed). Open itself does not ask
  /// again: a server it cannot reach there is more likely a wrong conninfo than a restart. Every
  /// refusal is asked again (libpq does not tell a restart from, say, a password changed
  /// meanwhile). A transaction in flight when the server goes away fails (the Store runs it
  /// again when nothing of it was written). It also bounds how long a write whose COMMIT lost its
  /// answer looks for a session and asks how it ended (see PostgresBackend; each connection
  /// attempt and question may take longer). Zero: fail at once. Default: 10 s.
  std::chrono::milliseconds reconnect_wait{10000};
  /// A write transaction keeps its puts and erases and sends them with its commit; when they
  /// hold more bytes than this, they are sent at once (the transaction still sees them).
  /// Default: 4 MiB.
  std::size_t write_buffer_bytes = std::size_t{4} << 20;
  /// How write transactions of all hosts meet. false: they take turns, as on LMDB: each locks
  /// out other writers before its snapshot (`LOCK TABLE <schema>.writer_turn IN EXCLUSIVE MODE`, a
  /// table of its own, sent with its first statement; readers and autovacuum go on), so no two
  /// conflict and none is retried. true:
  /// they run concurrently and the server fails those it cannot serialize (storage_conflict; the
  /// Store runs them again). Default: false, which is faster for the catalog as it is: every
  /// operation appends to one event log (docs/SEMANTICS.md §13: dense offsets, one counter key), so
  /// any two concurrent writers conflict, and the server tracks reads by index page, so in a small
  /// catalog even independent ones do.
  bool concurrent_writers = false;
  /// With concurrent_writers: a thread whose write transactions failed with storage_conflict
  /// this many times in a row runs its next one alone (as when writers take turns), so that one
  /// cannot conflict and a retried operation ends after a bounded number of attempts however
  /// busy the catalog is. 0: never. Default: 2.
  unsigned exclusive_after_conflicts = 2;
  /// How long the server lets a write transaction of this backend wait for its next statement
  /// (`idle_in_transaction_session_timeout`, set for each write transaction) before it ends the
  /// session and rolls the transaction back. A host that froze or lost its network in the middle
  /// of a write then gives up the writers' turn, which every other host's writers wait for,
  /// instead of holding it until the server notices the connection is gone (hours, by TCP's
  /// defaults). The transaction's next statement fails (storage). It is also the longest a write
  /// transaction waits for a lock (`lock_timeout`), the writers' turn included: a frozen host's
  /// writers that were waiting for the turn give up by themselves instead of taking it, one
  /// after the other, and holding it this long each; and a healthy host's write that waited
  /// this long behind another (a long import) fails (storage, nothing changed) instead of
  /// waiting on. Read transactions keep the server's settings (an export may wait on a slow
  /// reader of its output). An import is one write transaction that reads its input between
  /// its writes: feed it a file, not a pipe that may stall longer, or set zero. Zero: the
  /// server's own settings for writes too. Default: 60 s.
  std::chrono::milliseconds idle_in_transaction_timeout{60000};
};

/// What a backend has sent: requests waited for (each carries any number of statements) and
/// connections opened. Counted since open, over every transaction; but the last two members,
/// which say how things stand now.
struct PostgresStats {
  std::uint64_t round_trips = 0;  ///< requests sent and waited for
  std::uint64_t connections = 0;  ///< connections opened
  std::uint64_t conflicts = 0;    ///< transactions failed with storage_conflict
  /// Write transactions run alone (taking turns, or after conflicts).
  std::uint64_t exclusive = 0;
  /// Transactions that waited for a connection, all `max_connections` being in use.
  std::uint64_t waits = 0;
  /// Connection attempts the server refused that were tried again
  /// (PostgresOptions::reconnect_wait).
  std::uint64_t connect_retries = 0;
  /// Write transactions whose COMMIT round lost its answer and whose outcome a new session, in
  /// the same run of the server, asked for.
  std::uint64_t commits_checked = 0;
  /// Connections open now: in a transaction, idle in the pool, or being opened.
  std::uint64_t open_connections = 0;
  /// Of those, the ones idle in the pool.
  std::uint64_t idle_connections = 0;
};

namespace detail {
struct PgShared;
}  // namespace detail

/// A Backend over one table of a PostgreSQL database: `<schema>.entries (k bytea primary key,
/// v bytea)`, whose `bytea` order is memcmp order, beside `<schema>.schema_version`.
///
/// Transactions: each runs on its own connection (from a pool); read-only ones are READ ONLY and
/// take their snapshot in `begin`. Write transactions of every host take turns (by default) or
/// run concurrently (PostgresOptions::concurrent_writers). Taking turns, every transaction runs
/// at REPEATABLE READ, which is serializable when writers run one at a time; beside concurrent
/// writers, at SERIALIZABLE. Hosts of one catalog should agree on concurrent_writers: a host
/// taking turns reads at REPEATABLE READ, which beside another host's concurrent writers could
/// see a state no order of theirs produces. A transaction the server cannot serialize with the
/// others (SQLSTATE 40001) or that is part of a deadlock (40P01) fails at its next call with
/// Errc::storage_conflict and is dead: run it again from the start (the Store does). Taking
/// turns, write transactions never conflict.
///
/// Round trips: statements are prepared once per connection and sent in pipelines. A write
/// transaction's begin goes with its first statement; its puts and erases stay in the
/// transaction (which sees them) and go with the commit, all in one round trip (earlier when
/// they pass `write_buffer_bytes`), many puts as one statement of arrays and many erases as
/// another. Gets are cached for the transaction. A scan fetches its range in batches (128 rows
/// first, up to 1024, fewer when rows are large), never all of it. An erase asks the server
/// whether the key exists unless the transaction already knows (as it does for the key an open
/// cursor stands on: erase_range erases that way). Read-only commits and rollbacks are not
/// waited for. `stats()` counts the round trips.
///
/// Errors beyond the contract: a statement that fails on the server (conflict, lost connection)
/// ends the transaction, even a get or a scan. A session found ended (the server restarting or
/// failing over, `pg_terminate_backend`, the idle limit) before the transaction's COMMIT is
/// sent is Errc::storage_unavailable: nothing of the transaction was written, and the Store
/// runs the operation again.
///
/// A write transaction learns its id (`pg_current_xact_id()`) and its session's with its first
/// round. When the answer to its COMMIT round is lost (the connection broke with no word from
/// the server, or the server ended the session, 57P01, before the COMMIT answered), a new
/// session (found within `reconnect_wait`) asks the server how the transaction ended
/// (`pg_xact_status`), if the server has not restarted, crashed or failed over since the
/// session of the transaction opened. (After a crash or a failover the server may hand out
/// again ids whose transactions never reached its disk. A crash is seen by the reset of the
/// server's shared statistics, on PostgreSQL 15 and later; a reset by hand,
/// `pg_stat_reset_shared`, counts as one.) If the server still counts the transaction in
/// progress, its old session, cut off from its client, is ended (`pg_terminate_backend`): that
/// rolls the transaction back, unless it has begun to write its commit, which the server
/// finishes first. Not where commits wait for synchronous standbys (`synchronous_standby_names`,
/// unless `synchronous_commit` is off): a session ended while it waits for a standby commits
/// without the standby's confirmation. The server is then asked again until `reconnect_wait`
/// has passed since the answer was lost. Committed, the commit succeeds. Rolled back, it is
/// Errc::storage_unavailable, and the Store runs the operation again. Not known (the COMMIT went
/// with the first round, no session within `reconnect_wait`, another run of the server, no
/// answer, or still in progress then), it is Errc::storage saying "whether the transaction
/// committed is not known"; but a session the server ended with its reason before the COMMIT
/// answered is Errc::storage_unavailable even then: the server ends a session only where it may
/// stop, never while it commits. A session the server ended after the COMMIT answered committed.
/// Any other failure of the server or of the connection is Errc::storage. Every write
/// transaction thus takes a transaction id, even one that writes nothing.
///
/// Thread safety and processes: as Backend. A thread must not begin a write transaction while it
/// holds another of the same catalog (one run alone would wait for the other). A child created by
/// fork() must not use its parent's backends or transactions (their connections are the
/// parent's: a transaction it begins is a storage error); it may open its own. Transactions
/// may outlive the backend.
///
/// Open creates the schema and its tables when they are missing (which needs the CREATE
/// privilege); a role that only reads and writes (USAGE on the schema; SELECT, INSERT, UPDATE and
/// DELETE on its tables) opens a catalog that exists.
class CATALOG_DECL PostgresBackend final : public Backend {
 public:
  /// The version of the table layout this library writes; open refuses a newer one.
  static constexpr int schema_version = 1;
  /// The longest schema name: PostgreSQL's identifiers keep 63 bytes (NAMEDATALEN - 1).
  static constexpr std::size_t max_schema_bytes = 63;

  /// Connects with `conninfo` (libpq keywords or a postgresql:// URI), creates the schema, the
  /// table and the schema-version row if missing (concurrent first opens are serialized), and
  /// checks the version. Errors: storage (cannot connect, not allowed, a newer layout),
  /// invalid_value (an empty schema name, or one longer than max_schema_bytes).
  [[nodiscard]] static Result<std::unique_ptr<PostgresBackend>> open(const std::string& conninfo,
                                                                     PostgresOptions options = {});

  /// Drops `schema` and everything in it, if it exists: for tests and benchmarks that made a
  /// catalog of their own. Errors: storage.
  [[nodiscard]] static Result<void> drop_schema(const std::string& conninfo,
                                                std::string_view schema);

  /// Destroys the backend; open transactions may outlive it.
  ~PostgresBackend() override;
  /// Not copyable: open the database again for another backend.
  PostgresBackend(const PostgresBackend&) = delete;
  /// Not assignable.
  PostgresBackend& operator=(const PostgresBackend&) = delete;

  /// Begins a transaction on a pooled (or new) connection. A read-only one waits for its
  /// snapshot. Errors: storage (cannot connect).
  [[nodiscard]] Result<std::unique_ptr<Transaction>> begin(Mode mode) override;

  /// Round trips and connections so far. Errors: none.
  [[nodiscard]] PostgresStats stats() const noexcept;

 private:
  explicit PostgresBackend(std::shared_ptr<detail::PgShared> shared);

  std::shared_ptr<detail::PgShared> shared_;
};

}  // namespace catalog::storage

#endif  // CATALOG_STORAGE_POSTGRES_BACKEND_HPP
