#ifndef CATALOG_VERSION_HPP
#define CATALOG_VERSION_HPP

// Two versions: the library's (CATALOG_VERSION_*, library_version()), and the one version type
// of entities, held as integer tenths (0.1 is 1, 1.3 is 13), never floating-point arithmetic,
// written as a plain decimal with one digit after the point.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

/// The version of the headers in use, as semantic versioning reads it (docs/COMPATIBILITY.md
/// says what each part promises): its major part. CMakeLists.txt reads the project version from
/// these three lines.
#define CATALOG_VERSION_MAJOR 0
/// The minor part of the version of the headers in use.
#define CATALOG_VERSION_MINOR 1
/// The patch part of the version of the headers in use.
#define CATALOG_VERSION_PATCH 0
/// The three parts in one number, major * 10000 + minor * 100 + patch (0.1.0 is 100), for
/// `#if CATALOG_VERSION >= 100`.
#define CATALOG_VERSION \
  (CATALOG_VERSION_MAJOR * 10000 + CATALOG_VERSION_MINOR * 100 + CATALOG_VERSION_PATCH)

namespace catalog {

/// A library version: major, minor, patch.
struct LibraryVersion {
  int major = 0;  ///< Changes when the API or the ABI breaks (docs/COMPATIBILITY.md).
  int minor = 0;  ///< Changes when declarations are added.
  int patch = 0;  ///< Changes for bug fixes, which change no declaration.
  /// Orders versions by major, then minor, then patch.
  friend constexpr auto operator<=>(const LibraryVersion&, const LibraryVersion&) = default;
};

/// The version of the compiled library the program links, which a host can compare with
/// CATALOG_VERSION_* of the headers it was compiled with.
CATALOG_DECL LibraryVersion library_version() noexcept;
/// "0.1.0".
CATALOG_DECL std::string library_version_string();

/// An entity version. A plain value; thread-safe as any int.
class CATALOG_DECL Version {
 public:
  /// Version 0.1, as initial().
  constexpr Version() = default;
  /// The version `tenths / 10`, e.g. from_tenths(13) is 1.3.
  static constexpr Version from_tenths(std::uint32_t tenths) noexcept { return Version(tenths); }
  /// The first version of every entity: 0.1.
  static constexpr Version initial() noexcept { return Version(1); }

  /// Parses a version from text. The grammar is docs/SEMANTICS.md §3's,
  /// `(0|[1-9][0-9]*)\.[0-9]`, not `0.0`.
  /// Errors: bad_request (invalid_version) for anything else (`1`, `1e1`, `0.15`, `-1`, `abc`);
  /// not_found for a version of that grammar past the largest one a catalog can write
  /// (429496728.9), which no entity ever had.
  static Result<Version> parse(std::string_view text);

  /// The version in tenths: 13 for 1.3.
  constexpr std::uint32_t tenths() const noexcept { return tenths_; }
  /// +0.1 (a minor change).
  constexpr Version next_minor() const noexcept { return Version(tenths_ + 1); }
  /// +1.0 (a major change: 0.3 becomes 1.3).
  constexpr Version next_major() const noexcept { return Version(tenths_ + 10); }

  /// "0.1", "1.3".
  std::string to_string() const;

  /// Orders versions as numbers: 0.9 < 1.0 < 1.3.
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
