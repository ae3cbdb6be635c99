#ifndef CATALOG_ADMIN_HPP
#define CATALOG_ADMIN_HPP

// catalog::admin: the maintenance tools of a store as functions a host can call, the ones
// embedded databases ship beside themselves (SQLite's integrity_check, .backup and .dump; LMDB's
// mdb_copy, mdb_dump, mdb_load and mdb_stat): the integrity check, a consistent backup, a logical
// export and import in a documented JSON-lines format (docs/EXPORT_FORMAT.md), statistics, and
// the change-event log. The program catalog-admin is a command line over these functions.
//
// Thread safety: each function runs its own transactions on the Store (which is thread-safe), so
// hosts may call them while other threads and processes use the store; what each one sees is
// said below. A ProgressFn or EventSink is called on the calling thread.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/store.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// The maintenance tools of a store, which the catalog-admin program runs: integrity check, backup,
/// export and import, statistics, and the change-event log.
namespace catalog::admin {

/// How far a long operation has got. `done` and `total` count the unit the operation estimates
/// its end by (export: entities and events written; import: bytes read, then keys checked;
/// verify: keys checked), so the time left is about `seconds * (total - done) / done`.
struct Progress {
  std::string_view phase{};    ///< "export", "import", "check" (import's integrity check), "verify"
  std::uint64_t entities = 0;  ///< entities done so far
  std::uint64_t done = 0;      ///< work done, in the unit of `total`
  std::uint64_t total = 0;     ///< the work expected; 0 when it is not known
  double seconds = 0;          ///< since the operation began
  bool finished = false;       ///< the last call of this phase
};

/// Told of progress every few thousand entities or keys, and once at the end of each phase.
/// Runs inside the function's transaction: a Store operation called from it is refused
/// (`internal`), as from the Store's own callbacks (Store). So is an admin function called from
/// inside a Store operation's callback.
using ProgressFn = std::function<void(const Progress&)>;

// ---- verify ----

/// Store::verify with progress: every invariant of the key schema, in one read transaction
/// (the store as it was when it began), after the backend's own figures (on LMDB, a walk of its
/// free list, which a write reads). Returns the problems, empty when the store is clean.
/// Memory does not grow with the store. Errors: storage (on LMDB "the store is corrupt: ..."
/// for a damaged free list).
CATALOG_DECL Result<std::vector<IntegrityProblem>> verify(Store& store, const ProgressFn& progress = {});

// ---- backup ----

/// What a backup wrote.
struct BackupInfo {
  std::uint64_t bytes = 0;  ///< size of the data in the backup's data.mdb
  bool lmdb_copy = false;   ///< true: LMDB's own compacting copy; false: copied key by key
};

/// Writes a consistent copy of `store` into a new LMDB environment in directory `dest`, which
/// must not exist or be empty. An LMDB store is copied by LMDB itself (mdb_env_copy2 with
/// MDB_CP_COMPACT: free pages left out); any other backend key by key from one read
/// transaction into one write transaction. Either way the copy is the store as one read
/// transaction saw it, while other threads and processes go on writing, and it is flushed to
/// disk. `dest` then opens with Store::open_lmdb. The copy is its owner's alone: `dest`, when
/// made here, has mode 0700, and the files written in it 0600 (LMDB's copy is made so from the
/// start). On failure, what was written in `dest` is removed. Errors: invalid_value (`dest` not empty or not a directory), storage.
CATALOG_DECL Result<BackupInfo> backup(Store& store, const std::filesystem::path& dest);

// ---- export and import ----

/// The version of the export format this library writes (the first line of every export) and
/// the newest it reads.
inline constexpr int export_format_version = 1;

/// What an export holds, or an import read: the counts of its end line.
struct DumpCounts {
  std::uint64_t entities = 0;   ///< entities, soft-deleted ones included
  std::uint64_t snapshots = 0;  ///< versions in the histories
  std::uint64_t edges = 0;      ///< followers, votes, owners, containment, ...
  std::uint64_t events = 0;     ///< change events
  /// Equal when every count is.
  friend bool operator==(const DumpCounts&, const DumpCounts&) = default;
};

/// What export_store wrote.
struct ExportInfo {
  DumpCounts counts;               ///< what the end line counts
  std::uint64_t bytes = 0;         ///< written to the stream
  std::uint64_t skipped_keys = 0;  ///< snapshots and edges of missing entities (verify names them)
};

/// Writes the whole store to `out` in the export format (docs/EXPORT_FORMAT.md): the format
/// line, then each entity in id order with its version history and the edges into it (its
/// followers, voters, owners, container, ...), then the change events with their offsets, then
/// an end line with the counts. One read transaction: a consistent snapshot while others write.
/// Deterministic: the same store gives the same bytes. Time linear in the store, memory
/// bounded by its largest record. Snapshots and edges of entities that do not exist (a store
/// verify finds broken) are left out and counted in `skipped_keys`.
/// Errors: storage (a read failed, a record does not decode, or `out` failed: what was written
/// is incomplete).
CATALOG_DECL Result<ExportInfo> export_store(Store& store, std::ostream& out, const ProgressFn& progress = {});

/// Options of import_store. Plain data.
struct ImportOptions {
  /// Told of progress. Default: nothing.
  ProgressFn progress{};
  /// The size of the input in bytes when known (a file): for the estimate of the time left,
  /// and an LMDB map grown to fit before the import starts. Default: 0, unknown.
  std::uint64_t input_bytes = 0;
  /// Runs the integrity check (verify) on the imported data before committing, so that input
  /// that would make an inconsistent store is refused. Default: true.
  bool check = true;
  /// The longest line accepted. Default: 256 MiB (documents are at most 8 MiB by default).
  std::size_t max_line_bytes = std::size_t{256} << 20;
};

/// Reads an export from `in` into `store`, which must be empty (holding nothing but what
/// opening a store writes), of any backend. Every record is written as the engine writes it
/// and the indexes (names, list entries, counters, reverse edges, the last event offset) are
/// rebuilt, so exporting the result gives the same bytes as the input (when the input is an
/// export). One write transaction: on any failure nothing is committed and the store stays
/// empty. Memory is bounded by the longest line (LMDB writes in its map, PostgreSQL sends
/// writes to the server as they pass its buffer). If an LMDB map fills, the map grows and the
/// import starts again from the position `in` had, if `in` can seek back; otherwise it fails
/// with storage_full (import from a file, or pass `input_bytes`).
/// Errors: invalid_request ("line N: ..." for a line that is not JSON, not of the format, out
/// of order, referring to what is not there, or missing at the end of a truncated input; or
/// data that does not verify), invalid_value (a format version newer than
/// export_format_version), already_exists (the store is not empty), storage_full, storage,
/// storage_conflict (another host wrote to a shared store meanwhile), storage_unavailable (the
/// server ended the session: nothing was written).
CATALOG_DECL Result<DumpCounts> import_store(Store& store, std::istream& in, const ImportOptions& options = {});

// ---- stats ----

/// Entities of one kind, from the list counters.
struct KindCount {
  Kind kind = Kind::user;    ///< the kind counted
  std::int64_t live = 0;     ///< live entities
  std::int64_t deleted = 0;  ///< soft-deleted
};

/// Keys and bytes (keys and values) of one family of the key schema.
struct KeyFamily {
  char tag = 0;             ///< the key's first byte
  std::string_view name{};  ///< "entities", "names", "history", ...
  std::uint64_t keys = 0;   ///< keys of the family
  std::uint64_t bytes = 0;  ///< their keys' and values' bytes
};

/// Edges of one relation.
struct RelationCount {
  std::string_view relation{};  ///< "follows", "votes", ... as in the export format
  std::uint64_t edges = 0;      ///< edges of the relation
};

/// What `stats` reports.
struct StoreStats {
  std::vector<KindCount> kinds;  ///< every kind, in the order of all_kinds
  std::int64_t live = 0;         ///< live entities over every kind
  std::int64_t deleted = 0;      ///< soft-deleted entities over every kind
  std::uint64_t snapshots = 0;   ///< versions in the histories
  std::uint64_t edges = 0;       ///< edges over every relation
  std::vector<RelationCount> relations;    ///< edges per relation, those with any
  std::uint64_t events = 0;                ///< the last event offset (offsets are dense from 1)
  std::uint64_t keys = 0;                  ///< every key of the store
  std::uint64_t bytes = 0;                 ///< keys and values: the bytes the data takes
  std::vector<KeyFamily> families;         ///< per family, those with any key
  std::optional<storage::LmdbStats> lmdb;  ///< an LMDB store's environment; absent for others
};

/// Counts what the store holds, in one read transaction: entities per kind from the counters,
/// the rest in one scan of every key (time linear in the store, memory constant), and for LMDB
/// the figures of its map (storage::Backend::map_stats). Errors: storage.
CATALOG_DECL Result<StoreStats> stats(Store& store);

// ---- change events ----

/// Receives one change event: its offset and its JSON text (one line, as stored: the `offset`
/// member included). Returns false to stop.
using EventSink = std::function<bool(std::uint64_t offset, std::string_view event)>;

/// Calls `sink` with each event after offset `after`, in order, reading them in batches of
/// short read transactions (the sink is not called inside one). Returns the offset of the last
/// event passed to the sink, or `after` when there was none. Errors: storage (also a stored
/// event that is not a JSON object).
CATALOG_DECL Result<std::uint64_t> events(Store& store, std::uint64_t after, const EventSink& sink);

/// Options of follow_events. Plain data.
struct FollowOptions {
  /// The pause between two looks for new events. Default: 200 ms.
  std::chrono::milliseconds poll{200};
  /// Asked between looks and during the pause (every 10 ms); true ends the follow. Default:
  /// never (the follow ends only when the sink returns false or a read fails).
  std::function<bool()> stop{};
  /// Asked when a look for new events fails (a PostgreSQL server restarting, say): true waits
  /// `poll` and looks again from the last event passed, so none is passed twice or skipped;
  /// false ends the follow with the error. Default: none, which ends it.
  std::function<bool(const Error&)> retry{};
};

/// Like `tail -f`: passes the events after `after` to `sink`, then keeps looking for new ones
/// committed by any thread or process, until `options.stop` says so or the sink returns false.
/// Returns the offset of the last event passed. Errors: as `events`, those `options.retry`
/// does not take.
CATALOG_DECL Result<std::uint64_t> follow_events(Store& store, std::uint64_t after, const EventSink& sink,
                                    const FollowOptions& options = {});

}  // namespace catalog::admin

#endif  // CATALOG_ADMIN_HPP
