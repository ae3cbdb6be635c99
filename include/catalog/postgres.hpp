#ifndef CATALOG_POSTGRES_HPP
#define CATALOG_POSTGRES_HPP

// A Store in a PostgreSQL database: the PostgreSQL target's own entry point. It lives in
// catalog::postgres (libpq), not in the core library, so that a host that does not link libpq
// declares nothing it cannot call. Link catalog::postgres to use it.

#include <catalog/detail/export.hpp>
#include <catalog/storage/postgres_backend.hpp>
#include <catalog/store.hpp>

#include <string>

namespace catalog {

/// Opens (or creates) a store in a PostgreSQL database, shared with every host that opens the
/// same database and schema (storage::PostgresBackend): `conninfo` is libpq's (keywords or a
/// postgresql:// URI). Errors: storage (cannot connect, not allowed, a newer table layout),
/// invalid_value (a schema name that is empty or longer than PostgreSQL keeps); those of admin
/// creation.
CATALOG_DECL Result<Store> open_postgres(const std::string& conninfo, StoreOptions options = {},
                                         storage::PostgresOptions postgres = {});

}  // namespace catalog

#endif  // CATALOG_POSTGRES_HPP
