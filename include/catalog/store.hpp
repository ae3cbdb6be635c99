#ifndef CATALOG_STORE_HPP
#define CATALOG_STORE_HPP

// catalog::Store: the facade. Typed operations over every entity kind, each taking the caller's
// Principal and returning Result<T>; and the same operations on JSON documents, which the REST
// surface uses. Does not include <lmdb.h>, OpenSSL or the whole of Boost.JSON. The types the
// operations take and answer (options.hpp, results.hpp) are shared with the engine below it.

#include <catalog/detail/export.hpp>
#include <catalog/auth/jwt.hpp>
#include <catalog/counters.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/options.hpp>
#include <catalog/principal.hpp>
#include <catalog/results.hpp>
#include <catalog/search.hpp>
#include <catalog/storage/backend.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

/// The embeddable metadata catalog: the Store facade, the entity structs it takes and answers
/// (entities.hpp), and the rest of the public API. What every operation does: docs/SEMANTICS.md.
namespace catalog {

/// The catalog. Move-only. Thread-safe: operations may run concurrently from several threads;
/// each is one storage transaction (writers are serialized by the backend).
///
/// The functions a host gives the store (an `update` edit, a PatchMaker, the clock, an
/// Authorizer) run inside that transaction. A Store operation called from one of them, on any
/// Store, is refused with an `internal` error instead of waiting for the transaction it is
/// called from. An exception one of them throws leaves the operation through the caller, with
/// its transaction rolled back and the store unchanged. The log sink runs inside a transaction
/// or after it; a Store operation called from it is refused alike, and its exceptions are
/// dropped. Listeners (`subscribe`) run after the commit instead.
class CATALOG_DECL Store {
 public:
  /// Opens (or creates) an LMDB store in `dir`; with `lmdb.read_only`, opens an existing one
  /// and writes nothing (LmdbOptions::read_only). Errors: storage; those of admin creation.
  static Result<Store> open_lmdb(const std::filesystem::path& dir, StoreOptions options = {},
                                 storage::LmdbOptions lmdb = {});
  // A store in PostgreSQL: catalog::open_postgres, <catalog/postgres.hpp> (catalog::postgres).
  /// A store in memory, for tests and hosts that want no files. Errors: as the constructor.
  static Result<Store> in_memory(StoreOptions options = {});
  /// A store over any backend. Errors: storage; admin creation (bad admin names).
  static Result<Store> open(std::unique_ptr<storage::Backend> backend, StoreOptions options = {});

  /// Takes over the store of the Store moved from, which may then only be destroyed or assigned
  /// to.
  Store(Store&&) noexcept;
  /// Closes this store and takes over that of the Store moved from, which may then only be
  /// destroyed or assigned to.
  Store& operator=(Store&&) noexcept;
  /// Closes the store and its backend. No operation may still be running on it.
  ~Store();

  /// The principal of a known, non-deleted user. Errors: unauthorized (unauthenticated).
  Result<Principal> principal(std::string_view user_name) const;

  /// Verifies a JWT (docs/SEMANTICS.md §11) and returns the principal of its live user.
  /// Errors: unauthorized (unauthenticated) naming what failed.
  Result<Principal> authenticate(std::string_view token) const;

  // ---- typed operations ----

  /// Creates an entity from its create request (docs/REST.md shapes) at version 0.1.
  /// Errors: bad_request (shape, names, enums, team rules), not_found (container or reference
  /// missing or soft-deleted), forbidden, conflict (already_exists, also against soft-deleted).
  template <class E>
  Result<E> create(const Principal& who, const typename E::create_type& request);

  /// Reads an entity with the fields asked for. Errors: bad_request (invalid_field, bad FQN),
  /// not_found (missing, or not matching `include`), forbidden.
  template <class E>
  Result<E> get(const Principal& who, const EntityKey& key, const GetOptions& options = {});

  /// One page of entities (docs/SEMANTICS.md §8). Errors: bad_request (limit, cursors, fields),
  /// forbidden.
  template <class E>
  Result<Page<E>> list(const Principal& who, const ListOptions& options = {});

  /// get<E> for a kind chosen at run time: the struct of `kind` in an AnyEntity. Errors: as get.
  Result<AnyEntity> get_entity(const Principal& who, Kind kind, const EntityKey& key,
                               const GetOptions& options = {});
  /// list<E> for a kind chosen at run time, each entity in an AnyEntity. Errors: as list.
  Result<Page<AnyEntity>> list_entities(const Principal& who, Kind kind,
                                        const ListOptions& options = {});

  /// Applies a merge patch or JSON Patch (docs/SEMANTICS.md §9). Errors: bad_request (patch,
  /// read-only field, invalid result), not_found (missing or soft-deleted entity, missing
  /// reference), conflict (expected version), forbidden.
  template <class E>
  Result<E> patch(const Principal& who, const EntityKey& key, const boost::json::value& patch,
                  const PatchOptions& options = {});

  /// Changes an entity in C++: calls `edit(E&)` on the entity (all fields) inside one write
  /// transaction and applies what the edit changed as the equivalent JSON Patch (docs/SEMANTICS.md
  /// §9): the same change description, version step, authorization, events and refusals (a changed
  /// read-only field is bad_request read_only_field). No other writer comes between the read and
  /// the write, so concurrent edits never lose one another. An edit that changes nothing writes
  /// nothing. `edit` must not call back into this Store, and runs again when the backend has the
  /// operation retried (a storage conflict, or a database session that ended before the
  /// commit), so it should only change the entity. Errors: as `patch`.
  template <class E, class Edit>
  Result<E> update(const Principal& who, const EntityKey& key, Edit&& edit,
                   const PatchOptions& options = {});

  /// Soft or hard delete (docs/SEMANTICS.md §6). Returns the soft-deleted entity, or nothing after
  /// a hard delete. Errors: bad_request (not_empty), not_found, conflict (expected version),
  /// forbidden.
  template <class E>
  Result<std::optional<E>> remove(const Principal& who, const EntityKey& key,
                                  const DeleteOptions& options = {});

  /// Restores a soft-deleted entity and what the same delete took (docs/SEMANTICS.md §7).
  /// Errors: bad_request (container_deleted), not_found, forbidden.
  template <class E>
  Result<E> restore(const Principal& who, const Uuid& id);

  /// Version history (docs/SEMANTICS.md §3): every version decoded, the current one first, then
  /// older ones newest first. Errors: not_found; storage (a version that does not decode).
  template <class E>
  Result<EntityHistory<E>> history(const Principal& who, const Uuid& id);

  /// The entity as it stood at `version` (docs/SEMANTICS.md §3). Errors: bad_request
  /// (invalid_version), not_found.
  template <class E>
  Result<E> version(const Principal& who, const Uuid& id, std::string_view version);

  /// Adds `user` to the followers (docs/SEMANTICS.md §4). Errors: not_found (entity or user),
  /// forbidden.
  template <class E>
  Result<E> follow(const Principal& who, const Uuid& id, const Uuid& user);

  /// Removes `user` from the followers (docs/SEMANTICS.md §4). Errors: not_found, forbidden.
  template <class E>
  Result<E> unfollow(const Principal& who, const Uuid& id, const Uuid& user);

  /// Sets the caller's vote (docs/SEMANTICS.md §5). Errors: not_found, forbidden.
  template <class E>
  Result<E> vote(const Principal& who, const Uuid& id, VoteType vote);

  /// Change events after offset `after` (docs/SEMANTICS.md §13), oldest first. Admins only. Errors:
  /// bad_request (limit), forbidden; storage (a stored event that does not decode).
  Result<EventPage> events(const Principal& who, std::uint64_t after = 0,
                           std::int64_t limit = 10) const;

  /// Calls `listener` after each commit with the events it appended, in order (never for a
  /// failed or no-op operation). Returns an id for `unsubscribe`. Thread-safe; listeners run on
  /// the committing thread, so commits on two threads may call one listener at the same time,
  /// and the later commit's events may come first (`ChangeEvent::offset` orders them).
  /// The listener given is the one called (its state lasts from call to call). The commit stands
  /// whatever a listener does: an exception it throws is logged (error) and does not reach the
  /// operation's caller, and the other listeners are still called. A listener must not write to
  /// this Store. The events are read back after the commit; when that read fails (an LMDB reader
  /// table full, a database session lost), the listeners are not told of them and the store logs
  /// it (error) with their offsets: a listener that must see every event reads what it missed
  /// with `events`, from the last offset it saw.
  std::uint64_t subscribe(std::function<void(const ChangeEvent&)> listener);
  /// Removes the listener `subscribe` returned `id` for; a commit under way on another thread may
  /// still call it once. An unknown id changes nothing.
  void unsubscribe(std::uint64_t id);

  // ---- the same on JSON documents ----

  /// create<E> on a JSON create body. Returns the entity with all fields.
  Result<boost::json::object> create_json(const Principal& who, Kind kind,
                                          const boost::json::value& body);
  /// get<E> as JSON.
  Result<boost::json::object> get_json(const Principal& who, Kind kind, const EntityKey& key,
                                       const GetOptions& options = {});

  /// A page as `{data, paging: {before?, after?, total}}` pieces (results.hpp).
  using JsonPage = catalog::JsonPage;
  /// list<E> as JSON: each entity as get_json renders it. Errors: as list.
  Result<JsonPage> list_json(const Principal& who, Kind kind, const ListOptions& options = {});
  /// patch<E> on JSON. Returns the entity with all fields. Errors: as patch.
  Result<boost::json::object> patch_json(const Principal& who, Kind kind, const EntityKey& key,
                                         const boost::json::value& patch,
                                         const PatchOptions& options = {});
  /// What update_json takes: makes a JSON Patch from the entity's document (options.hpp).
  using PatchMaker = catalog::PatchMaker;
  /// A JSON Patch made from the entity's current document (all fields) by `make`, applied in
  /// the same transaction (what `update<E>` uses). Errors: as patch_json, and `make`'s own.
  Result<boost::json::object> update_json(const Principal& who, Kind kind, const EntityKey& key,
                                          const PatchMaker& make, const PatchOptions& options = {});
  /// nullopt after a hard delete.
  Result<std::optional<boost::json::object>> remove_json(const Principal& who, Kind kind,
                                                         const EntityKey& key,
                                                         const DeleteOptions& options = {});
  /// restore<E> as JSON: the entity with all fields. Errors: as restore.
  Result<boost::json::object> restore_json(const Principal& who, Kind kind, const Uuid& id);
  /// history<E> with each version as JSON text (History). Errors: as history.
  Result<History> history_json(const Principal& who, Kind kind, const Uuid& id);
  /// events() with each event as the JSON object stored (what GET /v1/events answers).
  Result<JsonEventPage> events_json(const Principal& who, std::uint64_t after = 0,
                                    std::int64_t limit = 10) const;
  /// version<E> as JSON. Errors: as version.
  Result<boost::json::object> version_json(const Principal& who, Kind kind, const Uuid& id,
                                           std::string_view version);
  /// follow<E> as JSON: the entity with all fields. Errors: as follow.
  Result<boost::json::object> follow_json(const Principal& who, Kind kind, const Uuid& id,
                                          const Uuid& user);
  /// unfollow<E> as JSON: the entity with all fields. Errors: as unfollow.
  Result<boost::json::object> unfollow_json(const Principal& who, Kind kind, const Uuid& id,
                                            const Uuid& user);
  /// vote<E> as JSON: the entity with all fields. Errors: as vote.
  Result<boost::json::object> vote_json(const Principal& who, Kind kind, const Uuid& id,
                                        VoteType vote);

  // ---- search (docs/SEMANTICS.md §16) ----

  /// The entities that match a query, ranked, with facets; never stale (the index is written by
  /// the transaction of every write), but while a reindex runs (`reindex`, or the build of a
  /// missing index when a store opens) it holds only the entities rebuilt so far; a store open
  /// read-only refuses searches instead while its index is not built (storage). Errors:
  /// bad_request (invalid_parameter: limits, index, sort, filter, search_after), storage.
  Result<SearchResult> search(const Principal& who, const SearchRequest& request);
  /// search() over the index of one kind (request.index is replaced by it), with typed hits.
  template <class E>
  Result<SearchPage<E>> search(const Principal& who, SearchRequest request);
  /// Typeahead: up to `size` (at most 100) live entities whose name or displayName starts with
  /// `q`, then those with a word of it that does; an exact name first. Errors: bad_request.
  Result<std::vector<Suggestion>> suggest(const Principal& who, std::string_view q,
                                          std::string_view index = "all", std::int64_t size = 10);
  /// One facet's buckets over a query's matches. Errors: bad_request.
  Result<Facet> aggregate(const Principal& who, const AggregateRequest& request);
  /// search() as the REST surface answers it (GET /v1/search/query):
  /// `{took, hits: {total, max_score, hits}, aggregations}`. Errors: as search.
  Result<boost::json::object> search_json(const Principal& who, const SearchRequest& request);
  /// suggest() as the REST surface answers it (GET /v1/search/suggest):
  /// `{suggest: {"metadata-suggest": [...]}}`. Errors: as suggest.
  Result<boost::json::object> suggest_json(const Principal& who, std::string_view q,
                                           std::string_view index = "all",
                                           std::int64_t size = 10);
  /// aggregate() as the REST surface answers it (GET /v1/search/aggregate):
  /// `{aggregations: {<field>: {buckets}}}`. Errors: as aggregate.
  Result<boost::json::object> aggregate_json(const Principal& who,
                                             const AggregateRequest& request);
  /// Builds the search index again from the entities, in transactions of `batch` entities
  /// (resumable: an interrupted reindex goes on at the next). 0, the default: 16,000 on memory
  /// and LMDB, 4,000 on PostgreSQL (docs/SEARCH_INDEX.md, "How a write keeps it"). It clears
  /// the index first, in its own transactions: until it ends, searches (of every thread and
  /// process) find only the entities it has rebuilt, from none upwards. Returns the entities
  /// indexed. Admins only. Errors: forbidden, storage.
  Result<std::uint64_t> reindex(const Principal& who, std::size_t batch = 0);

  /// The integrity check (like SQLite's `PRAGMA integrity_check`): reads the whole store in one
  /// read transaction and checks every invariant of the key schema (names, list indexes and
  /// counters, both directions of every edge, history from 0.1 to the current version, dense
  /// event offsets, every stored value decodes). Returns the problems found, empty when clean.
  /// Memory does not grow with the store. Errors: storage (the read itself failed).
  Result<std::vector<IntegrityProblem>> verify() const;

  /// What this Store has counted since it was opened: operations by kind and outcome, retries,
  /// conflicts, slow operations and commit times (<catalog/counters.hpp>). Each counter is read
  /// on its own, so a snapshot taken while others work may be a moment apart between counters.
  StoreCounters counters() const noexcept;

  /// The backend, for hosts that inspect bytes (tests). Never null.
  storage::Backend& backend() noexcept;

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  // The typed writes' answers: the struct of `kind`, rendered with the JSON snapshot a write
  // stores (create, patch, update) or without JSON (the others).
  Result<AnyEntity> create_entity(const Principal& who, Kind kind, const boost::json::value& body);
  Result<AnyEntity> patch_entity(const Principal& who, Kind kind, const EntityKey& key,
                                 const boost::json::value& patch, const PatchOptions& options);
  Result<AnyEntity> update_entity(const Principal& who, Kind kind, const EntityKey& key,
                                  const PatchMaker& make, const PatchOptions& options);
  Result<std::optional<AnyEntity>> remove_entity(const Principal& who, Kind kind,
                                                 const EntityKey& key,
                                                 const DeleteOptions& options);
  Result<AnyEntity> restore_entity(const Principal& who, Kind kind, const Uuid& id);
  // follow<E>, unfollow<E> and vote<E> as the struct of `kind`, rendered without JSON.
  Result<AnyEntity> follow_entity(const Principal& who, Kind kind, const Uuid& id,
                                  const Uuid& user);
  Result<AnyEntity> unfollow_entity(const Principal& who, Kind kind, const Uuid& id,
                                    const Uuid& user);
  Result<AnyEntity> vote_entity(const Principal& who, Kind kind, const Uuid& id, VoteType vote);
  // list<E> and list_entities: each entity of the page goes straight into the answer's data.
  Result<detail::PageCursors> list_to_sink(const Principal& who, Kind kind,
                                           const ListOptions& options, detail::EntitySink sink);
  template <class T>
  Result<Page<T>> list_into(const Principal& who, Kind kind, const ListOptions& options);
  template <class E>
  static Result<E> entity_of(Result<AnyEntity> got);
  template <class E>
  static Result<std::optional<E>> entity_of(Result<std::optional<AnyEntity>> got);
  std::unique_ptr<Impl> impl_;
};

}  // namespace catalog

#include <catalog/impl/store.hpp>

#endif  // CATALOG_STORE_HPP
