// Store::open_postgres lives in catalog::postgres, so that the core library keeps no network
// code: a host that calls it links catalog::postgres.

#include <catalog/storage/postgres_backend.hpp>
#include <catalog/store.hpp>

namespace catalog {

Result<Store> Store::open_postgres(const std::string& conninfo, StoreOptions options,
                                   storage::PostgresOptions postgres) {
  auto backend = storage::PostgresBackend::open(conninfo, std::move(postgres));
  if (!backend) return backend.error();
  return open(std::move(*backend), std::move(options));
}

}  // namespace catalog
