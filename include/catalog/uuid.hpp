#ifndef CATALOG_UUID_HPP
#define CATALOG_UUID_HPP

// Entity ids: UUIDs written lowercase 8-4-4-4-12; read strictly (docs/SEMANTICS.md §2).

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <boost/uuid/uuid.hpp>

#include <string>
#include <string_view>

namespace catalog {

/// An entity id: 16 bytes (Boost.UUID), written and read as docs/SEMANTICS.md §2 says.
using Uuid = boost::uuids::uuid;

/// Parses exactly 8-4-4-4-12 hex digits, either case, any version.
/// Errors: bad_request (invalid_uuid): braces, missing hyphens, other lengths or characters.
CATALOG_DECL Result<Uuid> parse_uuid(std::string_view text);

/// Lowercase canonical form.
CATALOG_DECL std::string to_string(const Uuid& id);

/// The same 36 characters into `out`, without allocating (for hot paths).
CATALOG_DECL void format_uuid(const Uuid& id, char (&out)[36]) noexcept;

/// A random (version 4) UUID from the kernel's CSPRNG. Thread-safe. Throws std::system_error
/// only when the system has no random source at all.
CATALOG_DECL Uuid random_uuid();

}  // namespace catalog

#endif  // CATALOG_UUID_HPP
