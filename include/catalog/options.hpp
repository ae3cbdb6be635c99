#ifndef CATALOG_OPTIONS_HPP
#define CATALOG_OPTIONS_HPP

// What a caller passes to the catalog's operations: which entity (EntityKey), which deletion
// states (Include), the options of each operation, and the options of a Store. Below both the
// Store facade (store.hpp) and the engine, which share these types; hosts get them through
// <catalog/store.hpp>.

#include <catalog/auth/jwt.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/principal.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace catalog {

/// Addresses one entity: by id or by fully qualified name (any quoting; made canonical).
class EntityKey {
 public:
  /// The entity with id `id` (implicit, so a Uuid converts).
  EntityKey(const Uuid& id) : key_(id) {}  // NOLINT: implicit by design
  /// The entity with id `id`.
  static EntityKey by_id(const Uuid& id) { return EntityKey(id); }
  /// The entity with FQN `fqn`, as given; the operation makes it canonical and refuses an invalid
  /// one (bad_request, invalid_fqn).
  static EntityKey by_fqn(std::string fqn) { return EntityKey(std::move(fqn), 0); }
  /// Whether the key is an id (else an FQN).
  bool is_id() const noexcept { return std::holds_alternative<Uuid>(key_); }
  /// The id. REQUIRES: is_id().
  const Uuid& id() const { return std::get<Uuid>(key_); }
  /// The FQN as given. REQUIRES: !is_id().
  const std::string& fqn() const { return std::get<std::string>(key_); }
  /// The id or FQN as text, for messages.
  std::string text() const { return is_id() ? to_string(id()) : fqn(); }

 private:
  EntityKey(std::string fqn, int) : key_(std::move(fqn)) {}
  std::variant<Uuid, std::string> key_;
};

/// Which deletion states an operation sees (docs/SEMANTICS.md §8, §10).
enum class Include {
  non_deleted,  ///< live entities only (REST `non-deleted`); the default
  deleted,      ///< soft-deleted entities only
  all           ///< both
};

/// Read parameters (docs/SEMANTICS.md §10).
struct GetOptions {
  /// Extra fields to fill (docs/SEMANTICS.md §2), or "*" for all of them; an unknown one is
  /// bad_request (invalid_field). Default: none.
  std::vector<std::string> fields{};
  Include include = Include::non_deleted;  ///< which deletion states are found; Default: live
};

/// List parameters (docs/SEMANTICS.md §8).
struct ListOptions {
  /// Entities per page, 0 to 1,000,000 (0: only `total`); else bad_request (invalid_parameter).
  /// Default: 10.
  std::int64_t limit = 10;
  /// A page's `before` cursor: lists the entities before it. Not with `after`. Default: none.
  std::optional<std::string> before{};
  /// A page's `after` cursor: lists the entities after it. Not with `before`. Default: none.
  std::optional<std::string> after{};
  std::vector<std::string> fields{};       ///< extra fields or "*", as GetOptions; Default: none
  Include include = Include::non_deleted;  ///< Default: live entities only
  /// ML models and search indexes: the FQN of their service, whose assets alone are listed (an
  /// unknown one: an empty page). Other kinds: bad_request. Default: none (all).
  std::optional<std::string> service{};
};

/// Delete parameters (docs/SEMANTICS.md §6).
struct DeleteOptions {
  /// Erase the entity, its history and its edges instead of marking it deleted.
  /// Default: soft delete.
  bool hard_delete = false;
  /// Delete the descendants too, in the same mode. Default: refuse an entity with children
  /// (bad_request, not_empty).
  bool recursive = false;
  /// The version the entity must be at, else conflict (version_mismatch). Default: none (no check).
  std::optional<Version> expected_version{};
};

/// Which patch format a body is (docs/SEMANTICS.md §9).
enum class PatchFormat {
  detect,      ///< object: merge patch; array: JSON Patch; else bad_request (invalid_patch)
  merge,       ///< RFC 7396 JSON Merge Patch: an object
  json_patch,  ///< RFC 6902 JSON Patch: an array of operations
};

/// Patch parameters (docs/SEMANTICS.md §9).
struct PatchOptions {
  PatchFormat format = PatchFormat::detect;  ///< Default: decided by the body
  /// The version the entity must be at, else conflict (version_mismatch). Default: none (no check).
  std::optional<Version> expected_version{};
};

/// Makes a JSON Patch from an entity's current document (all fields); a typed edit
/// (Store::update) is applied as the patch it makes. Errors: its own.
using PatchMaker = std::function<Result<boost::json::value>(const boost::json::object& current)>;

/// How much a log line matters.
enum class LogLevel {
  debug,    ///< detail that only a diagnosis needs
  info,     ///< what the store is doing (a conversion, building the search index)
  warning,  ///< something a host may want to look at
  error     ///< something failed
};

/// Receives what a store says beside its answers (StoreOptions::log). Called on the thread that
/// does the work, possibly under the store's locks, and so from several threads at once when
/// several do work: it must return soon, must write each line whole (one write of the line, or
/// under a lock of its own), and must not call the Store (such a call is refused; see Store).
/// An exception it throws is dropped. A message is one line: it may quote what a request sent
/// (an unknown member's name, in a slow operation's error), and any control character in it
/// (a line break, a tab, an escape; the C1 controls, U+2028 and U+2029 too) and any byte that is
/// not UTF-8 comes as `\xHH`.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// Options of a Store: values, and the functions it calls (clock, log, authorization).
struct StoreOptions {
  /// Admin principals: created (email `<name>@example.com`), restored if soft-deleted, or made
  /// admin on every open
  /// (docs/SEMANTICS.md §11). Default: none.
  std::vector<std::string> admins{};
  /// Base URL for `href` (`<base>/v1/<collection>/<id>`); UTF-8, or the open fails
  /// (invalid_value). Default: no href.
  std::optional<std::string> base_url{};
  /// Epoch milliseconds; injectable for tests. Default: the system clock.
  std::function<std::int64_t()> clock{};
  /// Decides every operation of a non-admin. Default: a policy::PolicyAuthorizer with
  /// `default_policy` (docs/SEMANTICS.md §12).
  std::shared_ptr<const Authorizer> authorizer{};
  /// The default organization policy's rules, checked as a policy's are when the store opens
  /// (a rule that does not read fails the open: policy_rule). Default: policy::default_rules().
  std::optional<std::vector<PolicyRule>> default_policy{};
  /// Token verification for `authenticate`. Default: no keys (every token is refused).
  auth::JwtOptions jwt{};
  /// Replaces JWT verification entirely when set. Default: JWT with `jwt`.
  std::shared_ptr<const Authenticator> authenticator{};
  /// The largest entity document (serialized bytes) a create or patch may produce; larger is
  /// bad_request (docs/SEMANTICS.md §15). Default: 8 MiB, the REST body limit.
  std::size_t max_document_bytes = std::size_t{8} << 20;
  /// Whether writes keep the search index (docs/SEMANTICS.md §16). Default: on. Off exists only
  /// to measure what the index costs a write: a store written with it off searches stale until
  /// `Store::reindex` runs.
  bool search_index = true;
  /// Where the store says what it does on its own, beside operations: converting a store
  /// written with an older key schema and building the search index of a store that has none
  /// or one of another analyzer (info, docs/COMPATIBILITY.md); growing a full LMDB map (info);
  /// running a transaction again after a conflict with concurrent writers (debug) and giving up
  /// (warning); running one again after the database server ended its session (warning);
  /// operations slower than `slow_operation` (warning); a store opened read-only
  /// without a built search index (warning); a configured admin principal found soft-deleted and
  /// restored (warning); a refused open (error). Default: nothing is logged.
  LogSink log{};
  /// An operation that takes at least this long, retries included, is logged as a warning and
  /// counted (StoreCounters::slow_operations). Default: zero, no operation is slow.
  std::chrono::milliseconds slow_operation{0};
};

}  // namespace catalog

#endif  // CATALOG_OPTIONS_HPP
