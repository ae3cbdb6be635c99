#ifndef CATALOG_PRINCIPAL_HPP
#define CATALOG_PRINCIPAL_HPP

// Who calls an operation, and the authorization interface every operation goes through.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace catalog {

struct PolicyRule;  // entities.hpp

/// The caller of an operation: a known, non-deleted user. From `Store::authenticate(token)` or
/// `Store::principal(user_name)`. A plain value: what the user was when it was made. Operations
/// take it as given (its `is_admin` included) and do not read the user again, so a host that
/// keeps one across requests sees a user's later demotion or deletion only once it asks again
/// (the REST surface authenticates every request).
struct Principal {
  Uuid id{};              ///< the user's id
  std::string name{};     ///< the user's `name`
  bool is_admin = false;  ///< `isAdmin`: may do everything (docs/SEMANTICS.md §12)

  /// Writes the user name (for logs and test output).
  template <class Ostream>
  friend auto operator<<(Ostream& os, const Principal& p) -> decltype(os << std::string_view()) {
    return os << std::string_view(p.name);
  }
};

/// The operations policies speak of (docs/SEMANTICS.md §12).
enum class Operation {
  create,             ///< Create: create an entity
  delete_,            ///< Delete: soft or hard delete (docs/SEMANTICS.md §6)
  view_basic,         ///< ViewBasic: read base fields, list, be a search hit
  view_all,           ///< ViewAll: read extra fields too; covers ViewBasic
  edit_all,           ///< EditAll: other fields, restore (docs/SEMANTICS.md §7); covers Edit*
  edit_description,   ///< EditDescription: change `description`
  edit_display_name,  ///< EditDisplayName: change `displayName`
  edit_owners,        ///< EditOwners: change `owners`
  edit_tags,          ///< EditTags: change `tags`
  edit_reviewers,     ///< EditReviewers: change `reviewers` or `experts`
  edit_users,         ///< EditUsers: change a team's `users`
  edit_policy,        ///< EditPolicy: change a team's `policies`
  follow,             ///< Follow: follow or unfollow as oneself (docs/SEMANTICS.md §4)
  edit_followers,     ///< EditFollowers: add or remove another user as a follower
  edit_votes,         ///< EditVotes: vote (docs/SEMANTICS.md §5)
};

/// "Create", "Delete", "ViewBasic", ... as policies and messages name them.
CATALOG_DECL std::string_view operation_name(Operation op) noexcept;

/// A field whose change needs an operation of its own (docs/SEMANTICS.md §9), whatever the kind.
struct FieldOperation {
  std::string_view field;  ///< the field's wire name
  Operation operation;     ///< what changing it needs
};

/// The fields a patch may change under a narrower operation than EditAll.
inline constexpr FieldOperation edit_operations[] = {
    {"description", Operation::edit_description},
    {"displayName", Operation::edit_display_name},
    {"owners", Operation::edit_owners},
    {"tags", Operation::edit_tags},
    {"experts", Operation::edit_reviewers},
    {"reviewers", Operation::edit_reviewers},
    {"users", Operation::edit_users},
    {"policies", Operation::edit_policy},
};

/// The operation a patch that changes `field` needs: its entry in `edit_operations`, else
/// EditAll.
constexpr Operation edit_operation(std::string_view field) noexcept {
  for (const auto& f : edit_operations)
    if (f.field == field) return f.operation;
  return Operation::edit_all;
}

/// An owner of an entity, own or inherited from the nearest container that has some.
struct OwnerRef {
  Uuid id{};               ///< the owner's id
  Kind kind = Kind::user;  ///< user or team
};

/// The entity an operation acts on, as the authorizer sees it. Owners are computed only when
/// asked. Valid only during the `authorize` call.
class CATALOG_DECL Resource {
 public:
  /// Destroys the resource.
  virtual ~Resource() = default;
  /// The kind of the entity (of a list or a create: the kind listed or created).
  virtual Kind kind() const noexcept = 0;
  /// The owners (own, else inherited, docs/SEMANTICS.md §12). Errors: storage.
  virtual Result<std::vector<OwnerRef>> owners() const = 0;
  /// The teams `user` belongs to, with their ancestors. Errors: storage.
  virtual Result<std::vector<Uuid>> teams_of(const Uuid& user) const = 0;
  /// The rules of the enabled, live policies of `teams`, typed (entities.hpp). A stored policy
  /// that does not decode is an error, never skipped: skipping it would drop its deny rules.
  /// Errors: storage.
  virtual Result<std::vector<PolicyRule>> policies_of(std::span<const Uuid> teams) const = 0;
};

/// Decides whether a principal may perform operations on a resource. Called once per operation,
/// inside its transaction, after the entity is read: what it needs of the store it reads through
/// `what` (a call to the Store from here is refused). Implementations must be thread-safe.
class CATALOG_DECL Authorizer {
 public:
  /// Destroys the authorizer.
  virtual ~Authorizer() = default;
  /// Errors: forbidden, naming the refused operation; storage.
  virtual Result<void> authorize(const Principal& who, std::span<const Operation> operations,
                                 const Resource& what) const = 0;
};

/// Turns a bearer token into a user name. Called by `Store::authenticate`; the store then
/// requires a live user of that name. Implementations must be thread-safe.
class CATALOG_DECL Authenticator {
 public:
  /// Destroys the authenticator.
  virtual ~Authenticator() = default;
  /// The user name the token proves, checked at `now` (epoch seconds).
  /// Errors: unauthorized (unauthenticated) saying what failed.
  virtual Result<std::string> authenticate(std::string_view token, std::int64_t now) const = 0;
};

/// Allows everything: for hosts that decide elsewhere, and for tests.
class CATALOG_DECL AllowAllAuthorizer final : public Authorizer {
 public:
  Result<void> authorize(const Principal&, std::span<const Operation>,
                         const Resource&) const override {
    return {};
  }
};

}  // namespace catalog

#endif  // CATALOG_PRINCIPAL_HPP
