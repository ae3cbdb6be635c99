#ifndef CATALOG_ERROR_HPP
#define CATALOG_ERROR_HPP

// The one error type of the catalog: a precise code, grouped into coarse kinds (the classes of
// failure of docs/SEMANTICS.md §14), and a message naming the kind and id, FQN or field involved.
// How a kind is answered over HTTP is the REST surface's business (catalog::rest).

#include <catalog/detail/export.hpp>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
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
  storage_unavailable,  ///< the backend's server ended the transaction's session before it
                        ///< committed (a restart, a failover): nothing was written; retried by
                        ///< the store, surfaced when retries run out
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
    case Errc::storage_unavailable:
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
  /// An internal error with no message (what `Result::error()` gives for a success).
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

namespace detail {
/// What `Result::error()` gives for a success.
inline const Error& no_error() noexcept {
  static const Error none;
  return none;
}
}  // namespace detail

namespace detail {
/// Whether the first of `A` is std::in_place_t (Result's in-place constructor takes it).
template <class... A>
inline constexpr bool starts_with_in_place = false;
template <class F, class... A>
inline constexpr bool starts_with_in_place<F, A...> =
    std::is_same_v<std::remove_cvref_t<F>, std::in_place_t>;
}  // namespace detail

/// What every fallible operation returns: a `T`, or an Error (docs/SEMANTICS.md §14).
///
/// A `T` or an `Error` converts to it implicitly (`return entity;`, `return fail(...);`), and
/// `return {};` gives a default `T`. Test it as a bool or with `has_value()`; `*r` and `r->`
/// reach the value of a success; `value()` gives it too, and throws Exception on an error;
/// `error()` gives the error (a default Error for a success). The interface is the one of
/// `boost::system::result<T, Error>`, in one class per `T` (a variant costs six), because every
/// translation unit of the library and its hosts makes hundreds of them.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference_v<T> && !std::is_same_v<std::remove_cv_t<T>, Error>);

 public:
  using value_type = T;      ///< what a success holds
  using error_type = Error;  ///< what a failure holds

  /// A success holding a default `T`.
  Result() noexcept(std::is_nothrow_default_constructible_v<T>)
    requires std::is_default_constructible_v<T>
      : ok_(true) {
    ::new (static_cast<void*>(std::addressof(value_))) T();
  }
  /// A success holding `a` converted to `T`.
  template <class A = T>
    requires(std::is_convertible_v<A, T> && !std::is_same_v<std::remove_cvref_t<A>, Result> &&
             !std::is_constructible_v<Error, A>)
  Result(A&& a) noexcept(std::is_nothrow_constructible_v<T, A>) : ok_(true) {
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<A>(a));
  }
  /// A success holding the `T` made from `a...` (a conversion that is not implicit).
  template <class... A>
    requires(sizeof...(A) >= 1 && std::is_constructible_v<T, A...> &&
             !detail::starts_with_in_place<A...> &&
             !(sizeof...(A) == 1 && (std::is_convertible_v<A, T> && ...)) &&
             !((std::is_same_v<std::remove_cvref_t<A>, Result> || ...)) &&
             !std::is_constructible_v<Error, A...>)
  explicit Result(A&&... a) : ok_(true) {
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<A>(a)...);
  }
  /// A success holding the `T` made in place from `a...`.
  template <class... A>
    requires std::is_constructible_v<T, A...>
  explicit Result(std::in_place_t, A&&... a) : ok_(true) {
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<A>(a)...);
  }
  /// A failure.
  Result(Error e) noexcept : ok_(false) {
    ::new (static_cast<void*>(std::addressof(error_))) Error(std::move(e));
  }
  /// The value or the error of a result whose value converts to `T`.
  template <class U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<const U&, T>)
  Result(const Result<U>& other) : ok_(other.has_value()) {
    if (ok_)
      ::new (static_cast<void*>(std::addressof(value_))) T(*other);
    else
      ::new (static_cast<void*>(std::addressof(error_))) Error(other.error());
  }
  /// The value or the error of a result whose value converts to `T`, moved.
  template <class U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<U &&, T>)
  Result(Result<U>&& other) : ok_(other.has_value()) {
    if (ok_)
      ::new (static_cast<void*>(std::addressof(value_))) T(std::move(*other));
    else
      ::new (static_cast<void*>(std::addressof(error_))) Error(std::move(other).error());
  }

  /// Copies, moves and assignments take the value or the error.
  Result(const Result& other)
    requires std::is_copy_constructible_v<T>
      : ok_(other.ok_) {
    construct_from(other);
  }
  /// \copydoc Result(const Result&)
  Result(Result&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
    requires std::is_move_constructible_v<T>
      : ok_(other.ok_) {
    construct_from(std::move(other));
  }
  /// \copydoc Result(const Result&)
  Result& operator=(const Result& other)
    requires std::is_copy_constructible_v<T>
  {
    if (this != &other) *this = Result(other);
    return *this;
  }
  /// \copydoc Result(const Result&)
  Result& operator=(Result&& other) noexcept
    requires std::is_move_constructible_v<T>
  {
    static_assert(std::is_nothrow_move_constructible_v<T>,
                  "assigning a Result needs a T that moves without throwing");
    if (this != &other) {
      destroy();
      ok_ = other.ok_;
      construct_from(std::move(other));
    }
    return *this;
  }
  ~Result() { destroy(); }

  /// Whether it holds a value.
  bool has_value() const noexcept { return ok_; }
  /// Whether it holds an error.
  bool has_error() const noexcept { return !ok_; }
  /// has_value().
  explicit operator bool() const noexcept { return ok_; }

  /// The value; throws Exception on an error.
  T& value() & {
    check();
    return value_;
  }
  /// \copydoc value()
  const T& value() const& {
    check();
    return value_;
  }
  /// The value, moved out (a temporary's value outlives it); throws Exception on an error.
  T value() && {
    check();
    return std::move(value_);
  }
  /// Not for a const temporary: its value would not outlive it, and cannot be moved out.
  void value() const&& = delete;
  /// The value of a success (undefined on an error).
  T& operator*() & noexcept { return value_; }
  /// \copydoc operator*()
  const T& operator*() const& noexcept { return value_; }
  /// The value of a success, moved out (undefined on an error).
  T operator*() && noexcept(std::is_nothrow_move_constructible_v<T>) { return std::move(value_); }
  /// Not for a const temporary, as value().
  void operator*() const&& = delete;
  /// The value's members, of a success (undefined on an error).
  T* operator->() noexcept { return std::addressof(value_); }
  /// \copydoc operator->()
  const T* operator->() const noexcept { return std::addressof(value_); }

  /// The error of a failure; a default Error for a success.
  const Error& error() const& noexcept { return ok_ ? detail::no_error() : error_; }
  /// \copydoc error()
  Error error() && { return ok_ ? Error() : std::move(error_); }

  /// Equal when both hold equal values or equal errors.
  friend bool operator==(const Result& a, const Result& b)
    requires requires(const T& x) { x == x; }
  {
    if (a.ok_ != b.ok_) return false;
    return a.ok_ ? a.value_ == b.value_ : a.error_ == b.error_;
  }

 private:
  void check() const;
  template <class R>
  void construct_from(R&& other) {
    if (ok_)
      ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<R>(other).value_);
    else
      ::new (static_cast<void*>(std::addressof(error_))) Error(std::forward<R>(other).error_);
  }
  void destroy() noexcept {
    if (ok_)
      value_.~T();
    else
      error_.~Error();
  }

  union {
    T value_;
    Error error_;
  };
  bool ok_;
};

/// A success with nothing to give, or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  using value_type = void;   ///< nothing
  using error_type = Error;  ///< what a failure holds

  /// A success.
  Result() noexcept = default;
  /// A failure.
  Result(Error e) noexcept : error_(std::move(e)), ok_(false) {}

  /// Whether it is a success.
  bool has_value() const noexcept { return ok_; }
  /// Whether it holds an error.
  bool has_error() const noexcept { return !ok_; }
  /// has_value().
  explicit operator bool() const noexcept { return ok_; }
  /// Throws Exception on an error.
  void value() const;
  /// Nothing (for generic code).
  void operator*() const noexcept {}
  /// The error of a failure; a default Error for a success.
  const Error& error() const& noexcept { return error_; }
  /// \copydoc error()
  Error error() && { return std::move(error_); }

  /// Equal when both succeeded or both hold equal errors.
  friend bool operator==(const Result& a, const Result& b) noexcept {
    return a.ok_ == b.ok_ && a.error_ == b.error_;
  }

 private:
  Error error_;
  bool ok_ = true;
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

template <class T>
void Result<T>::check() const {
  if (!ok_) throw Exception(error_);
}
inline void Result<void>::value() const {
  if (!ok_) throw Exception(error_);
}

/// Shorthand for returning a failure: `return fail(Errc::not_found, "...")`.
inline Error fail(Errc code, std::string message) { return Error(code, std::move(message)); }

}  // namespace catalog

#endif  // CATALOG_ERROR_HPP
