#ifndef CATALOG_ERROR_HPP
#define CATALOG_ERROR_HPP

// The one error type of the catalog: a precise code, grouped into coarse kinds (the classes of
// failure of docs/SEMANTICS.md §14), and a message naming the kind and id, FQN or field involved.
// How a kind is answered over HTTP is the REST surface's business (catalog::rest).

#include <catalog/detail/export.hpp>

#include <boost/system/result.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace catalog {

/// The coarse class of a failure (the REST surface answers each with one status).
enum class ErrorKind {
  bad_request,   ///< the request alone is wrong, or breaks a rule of the stored state
  unauthorized,  ///< no valid principal
  forbidden,     ///< the policies refuse the operation
  not_found,     ///< the entity (or version, user) does not exist
  conflict,      ///< an entity with the FQN exists, or the expected version differs
  internal,      ///< storage failures only
};

/// The precise reason. `kind()` maps each one to its ErrorKind in one switch.
enum class Errc {
  // bad_request
  invalid_json,       ///< not JSON, not I-JSON, trailing garbage
  duplicate_member,   ///< a JSON object names a member twice
  too_deep,           ///< JSON nesting deeper than the limit
  too_large,          ///< a document (or what a patch builds) larger than the limit
  invalid_request,    ///< a request shape problem (unknown/missing member, wrong type)
  invalid_value,      ///< a value outside its enumeration or shape
  invalid_name,       ///< entity name rules (docs/SEMANTICS.md §2)
  invalid_fqn,        ///< FQN syntax (unbalanced quotes, empty part, too long)
  invalid_uuid,       ///< not 8-4-4-4-12 hex
  invalid_version,    ///< version text outside the docs/SEMANTICS.md §3 grammar
  invalid_field,      ///< unknown `fields` element
  invalid_parameter,  ///< limit, include, both cursors, bad cursor, query values
  invalid_patch,      ///< a patch body that is neither format, or an operation that fails
  read_only_field,    ///< a patch changes a read-only field
  not_empty,          ///< non-recursive delete of a non-empty entity
  container_deleted,  ///< restore below a soft-deleted container
  team_rule,          ///< team type rules (docs/SEMANTICS.md §9)
  policy_rule,        ///< policy grammar (docs/SEMANTICS.md §12)
  key_too_long,       ///< storage key over the backend limit
  // unauthorized
  unauthenticated,  ///< missing or invalid token, unknown principal
  // forbidden
  forbidden,  ///< the caller may not perform the operation (docs/SEMANTICS.md §12)
  // not_found
  not_found,  ///< entity, version, user or route missing
  // conflict
  already_exists,    ///< duplicate FQN
  version_mismatch,  ///< expected version differs
  // internal
  storage_full,      ///< map full: retried by the store, surfaced only if growth fails
  storage_conflict,  ///< concurrent writers could not be serialized (a serialization failure
                     ///< or deadlock): retried by the store, surfaced when retries run out
  storage,           ///< any other backend failure
  internal,          ///< a failure that is no verdict on the input (a default Error too)
};

/// The ErrorKind of a code (the table of docs/SEMANTICS.md §14).
constexpr ErrorKind kind_of(Errc c) noexcept {
  switch (c) {
    case Errc::unauthenticated: return ErrorKind::unauthorized;
    case Errc::forbidden: return ErrorKind::forbidden;
    case Errc::not_found: return ErrorKind::not_found;
    case Errc::already_exists:
    case Errc::version_mismatch: return ErrorKind::conflict;
    case Errc::storage_full:
    case Errc::storage_conflict:
    case Errc::storage:
    case Errc::internal: return ErrorKind::internal;
    default: return ErrorKind::bad_request;
  }
}

/// The name of a kind, as messages and logs show it: BAD_REQUEST, UNAUTHORIZED, ...
constexpr std::string_view type_name(ErrorKind k) noexcept {
  switch (k) {
    case ErrorKind::bad_request: return "BAD_REQUEST";
    case ErrorKind::unauthorized: return "UNAUTHORIZED";
    case ErrorKind::forbidden: return "FORBIDDEN";
    case ErrorKind::not_found: return "NOT_FOUND";
    case ErrorKind::conflict: return "CONFLICT";
    case ErrorKind::internal: return "INTERNAL_ERROR";
  }
  return "INTERNAL_ERROR";
}

/// A failure: precise code plus a message for people. Cheap to copy.
class Error {
 public:
  /// An internal error with no message (boost::system::result needs a default).
  Error() = default;
  /// A failure with `code` and a `message` for people.
  Error(Errc code, std::string message) : code_(code), message_(std::move(message)) {}

  /// The precise reason.
  Errc code() const noexcept { return code_; }
  /// The coarse class of the reason: kind_of(code()).
  ErrorKind kind() const noexcept { return kind_of(code_); }
  /// The message for people, naming what is concerned (kind and id or FQN, field, member).
  const std::string& message() const noexcept { return message_; }

  /// Writes "KIND: message" (for logs and test output).
  template <class Ostream>
  friend auto operator<<(Ostream& os, const Error& e) -> decltype(os << std::string_view()) {
    return os << type_name(e.kind()) << ": " << std::string_view(e.message_);
  }

  /// Equal when both code and message are.
  friend bool operator==(const Error& a, const Error& b) noexcept {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  Errc code_ = Errc::internal;
  std::string message_;
};

/// Thrown only by `Result::value()` on an error, for callers that prefer exceptions.
class CATALOG_DECL Exception : public std::runtime_error {
 public:
  /// Carries `e`; `what()` is its message.
  explicit Exception(Error e) : std::runtime_error(e.message()), error_(std::move(e)) {}
  /// The error `value()` found.
  const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

/// What boost::system::result calls when `value()` finds an error: throws Exception.
[[noreturn]] inline void throw_exception_from_error(const Error& e, const boost::source_location&) {
  throw Exception(e);
}

/// What every fallible operation returns: a `T`, or an Error (docs/SEMANTICS.md §14). `value()`
/// throws Exception on an error.
template <class T>
using Result = boost::system::result<T, Error>;

/// Shorthand for returning a failure: `return fail(Errc::not_found, "...")`.
inline Error fail(Errc code, std::string message) { return Error(code, std::move(message)); }

}  // namespace catalog

#endif  // CATALOG_ERROR_HPP
