#ifndef CATALOG_VERSION_HPP
#define CATALOG_VERSION_HPP

// The one version type: an entity version held as integer tenths (0.1 is 1, 1.3 is 13).
// Never floating-point arithmetic; written as a plain decimal with one digit after the point.

#include <catalog/error.hpp>

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace catalog {

/// An entity version. A plain value; thread-safe as any int.
class Version {
 public:
  constexpr Version() = default;
  /// The version `tenths / 10`, e.g. from_tenths(13) is 1.3.
  static constexpr Version from_tenths(std::uint32_t tenths) noexcept { return Version(tenths); }
  /// The first version of every entity: 0.1.
  static constexpr Version initial() noexcept { return Version(1); }

  /// Parses the docs/SEMANTICS.md §3 grammar `(0|[1-9][0-9]*)\.[0-9]`, not `0.0`.
  /// Errors: bad_request (invalid_version) for anything else (`1`, `1e1`, `0.15`, `-1`, `abc`).
  static Result<Version> parse(std::string_view text);

  constexpr std::uint32_t tenths() const noexcept { return tenths_; }
  /// +0.1 (a minor change).
  constexpr Version next_minor() const noexcept { return Version(tenths_ + 1); }
  /// +1.0 (a major change: 0.3 becomes 1.3).
  constexpr Version next_major() const noexcept { return Version(tenths_ + 10); }

  /// "0.1", "1.3".
  std::string to_string() const;

  friend constexpr auto operator<=>(Version, Version) noexcept = default;

  /// Writes "0.1" (for logs and test output).
  template <class Ostream>
  friend auto operator<<(Ostream& os, Version v) -> decltype(os << std::string_view()) {
    return os << std::string_view(v.to_string());
  }

 private:
  constexpr explicit Version(std::uint32_t t) noexcept : tenths_(t) {}
  std::uint32_t tenths_ = 1;
};

}  // namespace catalog

#endif  // CATALOG_VERSION_HPP
