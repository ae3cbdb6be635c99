#ifndef CATALOG_STORE_HPP
#define CATALOG_STORE_HPP

// catalog::Store: the facade. Typed operations over every entity kind, each taking the caller's
// Principal and returning Result<T>; and the same operations on JSON documents, which the REST
// surface uses. Does not include <lmdb.h>, OpenSSL or the whole of Boost.JSON.

#include <catalog/auth/jwt.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/principal.hpp>
#include <catalog/storage/backend.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/storage/postgres_backend.hpp>
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

namespace catalog {

/// Addresses one entity: by id or by fully qualified name (any quoting; made canonical).
class EntityKey {
 public:
  EntityKey(const Uuid& id) : key_(id) {}  // NOLINT: implicit by design
  static EntityKey by_id(const Uuid& id) { return EntityKey(id); }
  static EntityKey by_fqn(std::string fqn) { return EntityKey(std::move(fqn), 0); }
  bool is_id() const noexcept { return std::holds_alternative<Uuid>(key_); }
  const Uuid& id() const { return std::get<Uuid>(key_); }
  const std::string& fqn() const { return std::get<std::string>(key_); }
  /// The id or FQN as text, for messages.
  std::string text() const { return is_id() ? to_string(id()) : fqn(); }

 private:
  EntityKey(std::string fqn, int) : key_(std::move(fqn)) {}
  std::variant<Uuid, std::string> key_;
};

/// Which deletion states an operation sees (S8, S10).
enum class Include { non_deleted, deleted, all };

struct GetOptions {
  std::vector<std::string> fields{};       // extra fields (S2) or "*"; Default: none
  Include include = Include::non_deleted;  // Default: live entities only
};

/// List parameters (S8).
struct ListOptions {
  std::int64_t limit = 10;                // 0 to 1,000,000; Default: 10
  std::optional<std::string> before{};      // cursor; Default: none
  std::optional<std::string> after{};       // cursor; Default: none
  std::vector<std::string> fields{};        // extra fields or "*"; Default: none
  Include include = Include::non_deleted;  // Default: live entities only
  std::optional<std::string> service{};     // ML models and search indexes: the service FQN
};

/// One page of a list. `total` counts the whole filtered collection.
template <class E>
struct Page {
  std::vector<E> data{};
  std::optional<std::string> before{};
  std::optional<std::string> after{};
  std::int64_t total = 0;
};

/// Delete parameters (S6).
struct DeleteOptions {
  bool hard_delete = false;  // Default: soft delete
  bool recursive = false;    // Default: refuse a non-empty entity
  std::optional<Version> expected_version{};  // Default: none (no check)
};

/// Which patch format a body is (S9).
enum class PatchFormat {
  detect,      // object: merge patch; array: JSON Patch
  merge,       // RFC 7396
  json_patch,  // RFC 6902
};

struct PatchOptions {
  PatchFormat format = PatchFormat::detect;  // Default: decided by the body
  std::optional<Version> expected_version{};    // Default: none (no check)
};

/// Version history (S3): the current entity first, then older versions newest first, each the
/// entity serialized as JSON text.
struct History {
  std::string entity_type{};
  std::vector<std::string> versions{};
};

/// A page of change events (S13).
struct EventPage {
  std::vector<boost::json::object> data{};
  std::optional<std::uint64_t> after{};
  std::int64_t total = 0;
};

/// Options of a Store. Plain data.
struct StoreOptions {
  /// Admin principals: created (email <name>@example.com) or made admin on every open (S11).
  /// Default: none.
  std::vector<std::string> admins{};
  /// Base URL for `href` (`<base>/v1/<collection>/<id>`). Default: no href.
  std::optional<std::string> base_url{};
  /// Epoch milliseconds; injectable for tests. Default: the system clock.
  std::function<std::int64_t()> clock{};
  /// Decides every operation of a non-admin. Default: a policy::PolicyAuthorizer with
  /// `default_policy` (S12).
  std::shared_ptr<const Authorizer> authorizer{};
  /// The default organization policy's rules. Default: policy::default_rules().
  std::optional<std::vector<PolicyRule>> default_policy{};
  /// Token verification for `authenticate`. Default: no keys (every token is refused).
  auth::JwtOptions jwt{};
  /// Replaces JWT verification entirely when set. Default: JWT with `jwt`.
  std::shared_ptr<const Authenticator> authenticator{};
  /// The largest entity document (serialized bytes) a create or patch may produce; larger is
  /// bad_request (S15). Default: 8 MiB, the REST body limit.
  std::size_t max_document_bytes = std::size_t{8} << 20;
};

/// One problem `Store::verify` found: the storage key concerned (printable: non-ASCII bytes as
/// \xNN) and what is wrong with it.
struct IntegrityProblem {
  std::string key{};
  std::string message{};
};

/// The catalog. Move-only. Thread-safe: operations may run concurrently from several threads;
/// each is one storage transaction (writers are serialized by the backend).
class Store {
 public:
  /// Opens (or creates) an LMDB store in `dir`. Errors: storage; those of admin creation.
  static Result<Store> open_lmdb(const std::filesystem::path& dir, StoreOptions options = {},
                                 storage::LmdbOptions lmdb = {});
  /// Opens (or creates) a store in a PostgreSQL database, shared with every host that opens the
  /// same database and schema (storage::PostgresBackend). Defined in catalog::postgres: link it.
  /// Errors: storage; those of admin creation.
  static Result<Store> open_postgres(const std::string& conninfo, StoreOptions options = {},
                                     storage::PostgresOptions postgres = {});
  /// A store in memory, for tests and hosts that want no files. Errors: as the constructor.
  static Result<Store> in_memory(StoreOptions options = {});
  /// A store over any backend. Errors: storage; admin creation (bad admin names).
  static Result<Store> open(std::unique_ptr<storage::Backend> backend, StoreOptions options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  /// The principal of a known, non-deleted user. Errors: unauthorized (unauthenticated).
  Result<Principal> principal(std::string_view user_name) const;

  /// Verifies a JWT (S11) and returns the principal of its live user.
  /// Errors: unauthorized (unauthenticated) naming what failed.
  Result<Principal> authenticate(std::string_view token) const;

  // ---- typed operations ----

  /// Creates an entity from its create request (REST.md shapes) at version 0.1.
  /// Errors: bad_request (shape, names, enums, team rules), not_found (container or reference
  /// missing or soft-deleted), forbidden, conflict (already_exists, also against soft-deleted).
  template <class E>
  Result<E> create(const Principal& who, const typename E::create_type& request);

  /// Reads an entity with the fields asked for. Errors: bad_request (invalid_field, bad FQN),
  /// not_found (missing, or not matching `include`), forbidden.
  template <class E>
  Result<E> get(const Principal& who, const EntityKey& key, const GetOptions& options = {});

  /// One page of entities (S8). Errors: bad_request (limit, cursors, fields), forbidden.
  template <class E>
  Result<Page<E>> list(const Principal& who, const ListOptions& options = {});

  /// Applies a merge patch or JSON Patch (S9). Errors: bad_request (patch, read-only field,
  /// invalid result), not_found (missing or soft-deleted entity, missing reference), conflict
  /// (expected version), forbidden.
  template <class E>
  Result<E> patch(const Principal& who, const EntityKey& key, const boost::json::value& patch,
                  const PatchOptions& options = {});

  /// Changes an entity in C++: calls `edit(E&)` on the entity (all fields) inside one write
  /// transaction and applies what the edit changed as the equivalent JSON Patch (S9): the same
  /// change description, version step, authorization, events and refusals (a changed read-only
  /// field is bad_request read_only_field). No other writer comes between the read and the
  /// write, so concurrent edits never lose one another. An edit that changes nothing writes
  /// nothing. `edit` must not call back into this Store, and runs again when the backend has the
  /// operation retried (a storage conflict), so it should only change the entity. Errors: as
  /// `patch`.
  template <class E, class Edit>
  Result<E> update(const Principal& who, const EntityKey& key, Edit&& edit,
                   const PatchOptions& options = {});

  /// Soft or hard delete (S6). Returns the soft-deleted entity, or nothing after a hard delete.
  /// Errors: bad_request (not_empty), not_found, conflict (expected version), forbidden.
  template <class E>
  Result<std::optional<E>> remove(const Principal& who, const EntityKey& key,
                                  const DeleteOptions& options = {});

  /// Restores a soft-deleted entity and what the same delete took (S7).
  /// Errors: bad_request (container_deleted), not_found, forbidden.
  template <class E>
  Result<E> restore(const Principal& who, const Uuid& id);

  /// Version history (S3). Errors: not_found.
  template <class E>
  Result<History> history(const Principal& who, const Uuid& id);

  /// The entity as it stood at `version` (S3). Errors: bad_request (invalid_version), not_found.
  template <class E>
  Result<E> version(const Principal& who, const Uuid& id, std::string_view version);

  /// Adds `user` to the followers (S4). Errors: not_found (entity or user), forbidden.
  template <class E>
  Result<E> follow(const Principal& who, const Uuid& id, const Uuid& user);

  /// Removes `user` from the followers (S4). Errors: not_found, forbidden.
  template <class E>
  Result<E> unfollow(const Principal& who, const Uuid& id, const Uuid& user);

  /// Sets the caller's vote (S5). Errors: not_found, forbidden.
  template <class E>
  Result<E> vote(const Principal& who, const Uuid& id, VoteType vote);

  /// Change events after offset `after` (S13). Admins only. Errors: bad_request (limit),
  /// forbidden.
  Result<EventPage> events(const Principal& who, std::uint64_t after = 0,
                           std::int64_t limit = 10) const;

  /// Calls `listener` after each commit with the events it appended (never for a failed or
  /// no-op operation). Returns an id for `unsubscribe`. Thread-safe; listeners run on the
  /// committing thread and must not call back into a write of this Store.
  std::uint64_t subscribe(std::function<void(const boost::json::object&)> listener);
  void unsubscribe(std::uint64_t id);

  // ---- the same on JSON documents ----

  /// create<E> on a JSON create body. Returns the entity with all fields.
  Result<boost::json::object> create_json(const Principal& who, Kind kind,
                                          const boost::json::value& body);
  /// get<E> as JSON.
  Result<boost::json::object> get_json(const Principal& who, Kind kind, const EntityKey& key,
                                       const GetOptions& options = {});

  /// A page as `{data, paging: {before?, after?, total}}` pieces.
  struct JsonPage {
    boost::json::array data;
    std::optional<std::string> before;
    std::optional<std::string> after;
    std::int64_t total = 0;
  };
  Result<JsonPage> list_json(const Principal& who, Kind kind, const ListOptions& options = {});
  Result<boost::json::object> patch_json(const Principal& who, Kind kind, const EntityKey& key,
                                         const boost::json::value& patch,
                                         const PatchOptions& options = {});
  /// A JSON Patch made from the entity's current document (all fields) by `make`, applied in
  /// the same transaction (what `update<E>` uses). Errors: as patch_json, and `make`'s own.
  using PatchMaker = std::function<Result<boost::json::value>(const boost::json::object& current)>;
  Result<boost::json::object> update_json(const Principal& who, Kind kind, const EntityKey& key,
                                          const PatchMaker& make,
                                          const PatchOptions& options = {});
  /// nullopt after a hard delete.
  Result<std::optional<boost::json::object>> remove_json(const Principal& who, Kind kind,
                                                         const EntityKey& key,
                                                         const DeleteOptions& options = {});
  Result<boost::json::object> restore_json(const Principal& who, Kind kind, const Uuid& id);
  Result<History> history_json(const Principal& who, Kind kind, const Uuid& id);
  Result<boost::json::object> version_json(const Principal& who, Kind kind, const Uuid& id,
                                           std::string_view version);
  Result<boost::json::object> follow_json(const Principal& who, Kind kind, const Uuid& id,
                                          const Uuid& user);
  Result<boost::json::object> unfollow_json(const Principal& who, Kind kind, const Uuid& id,
                                            const Uuid& user);
  Result<boost::json::object> vote_json(const Principal& who, Kind kind, const Uuid& id,
                                        VoteType vote);

  /// The integrity check (like SQLite's `PRAGMA integrity_check`): reads the whole store in one
  /// read transaction and checks every invariant of the key schema (names, list indexes and
  /// counters, both directions of every edge, history from 0.1 to the current version, dense
  /// event offsets, every stored value decodes). Returns the problems found, empty when clean.
  /// Memory does not grow with the store. Errors: storage (the read itself failed).
  Result<std::vector<IntegrityProblem>> verify() const;

  /// The backend, for hosts that inspect bytes (tests). Never null.
  storage::Backend& backend() noexcept;

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace catalog

#include <catalog/impl/store.hpp>

#endif  // CATALOG_STORE_HPP
