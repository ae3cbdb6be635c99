// catalog::open_postgres (<catalog/postgres.hpp>): a Store over a PostgresBackend.

#include <catalog/postgres.hpp>

namespace catalog {

Result<Store> open_postgres(const std::string& conninfo, StoreOptions options,
                            storage::PostgresOptions postgres) {
  auto backend = storage::PostgresBackend::open(conninfo, std::move(postgres));
  if (!backend) return backend.error();
  return Store::open(std::move(*backend), std::move(options));
}

}  // namespace catalog
