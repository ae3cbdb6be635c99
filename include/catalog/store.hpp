#ifndef CATALOG_STORE_HPP
#define CATALOG_STORE_HPP

// catalog::Store: the facade. Typed operations over every entity kind, each taking the caller's
// Principal and returning Result<T>; and the same operations on JSON documents, which the REST
// surface uses. Does not include <lmdb.h>, OpenSSL or the whole of Boost.JSON.

#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/principal.hpp>
#include <catalog/storage/backend.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

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
  std::vector<std::string> fields;       // extra fields (S2) or "*"; Default: none
  Include include = Include::non_deleted;  // Default: live entities only
};

/// Options of a Store. Plain data.
struct StoreOptions {
  /// Admin principals: created (email <name>@example.com) or made admin on every open (S11).
  /// Default: none.
  std::vector<std::string> admins;
  /// Base URL for `href` (`<base>/v1/<collection>/<id>`). Default: no href.
  std::optional<std::string> base_url;
  /// Epoch milliseconds; injectable for tests. Default: the system clock.
  std::function<std::int64_t()> clock;
  /// Decides every operation. Default: allow all (the authorization issue replaces it).
  std::shared_ptr<const Authorizer> authorizer;
};

/// The catalog. Move-only. Thread-safe: operations may run concurrently from several threads;
/// each is one storage transaction (writers are serialized by the backend).
class Store {
 public:
  /// Opens (or creates) an LMDB store in `dir`. Errors: storage; those of admin creation.
  static Result<Store> open_lmdb(const std::filesystem::path& dir, StoreOptions options = {},
                                 storage::LmdbOptions lmdb = {});
  /// A store in memory, for tests and hosts that want no files. Errors: as the constructor.
  static Result<Store> in_memory(StoreOptions options = {});
  /// A store over any backend. Errors: storage; admin creation (bad admin names).
  static Result<Store> open(std::unique_ptr<storage::Backend> backend, StoreOptions options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  /// The principal of a known, non-deleted user. Errors: unauthorized (unauthenticated).
  Result<Principal> principal(std::string_view user_name) const;

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

  // ---- the same on JSON documents ----

  /// create<E> on a JSON create body. Returns the entity with all fields.
  Result<boost::json::object> create_json(const Principal& who, Kind kind,
                                          const boost::json::value& body);
  /// get<E> as JSON.
  Result<boost::json::object> get_json(const Principal& who, Kind kind, const EntityKey& key,
                                       const GetOptions& options = {});

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
