// The Store facade: opens transactions, retries on a full LMDB map, and calls the engine.

#include "store_impl.hpp"

#include <catalog/fqn.hpp>
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include <chrono>

namespace catalog {

namespace json = boost::json;

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(std::unique_ptr<storage::Backend> backend, StoreOptions options) {
  if (!backend) return fail(Errc::internal, "Store::open needs a backend");
  auto impl = std::make_unique<Impl>();
  impl->backend = std::move(backend);
  impl->options = std::move(options);
  for (const auto& admin : impl->options.admins) {
    auto made = impl->write([&](engine::Tx& tx) -> Result<bool> {
      if (auto r = engine::ensure_admin(tx, admin); !r) return r.error();
      return true;
    });
    if (!made) return made.error();
  }
  return Store(std::move(impl));
}

Result<Store> Store::in_memory(StoreOptions options) {
  return open(std::make_unique<storage::MemoryBackend>(), std::move(options));
}

Result<Store> Store::open_lmdb(const std::filesystem::path& dir, StoreOptions options,
                               storage::LmdbOptions lmdb) {
  auto backend = storage::LmdbBackend::open(dir, lmdb);
  if (!backend) return backend.error();
  return open(std::move(*backend), std::move(options));
}

storage::Backend& Store::backend() noexcept { return *impl_->backend; }

Result<Principal> Store::principal(std::string_view user_name) const {
  return impl_->read([&](engine::Tx& tx) -> Result<Principal> {
    auto refused = fail(Errc::unauthenticated,
                        "Unknown principal " + std::string(user_name.substr(0, 200)));
    if (!fqn::validate_name(user_name)) return refused;
    auto user = tx.find(Kind::user, fqn::quote(user_name));
    if (!user) return user.error();
    if (!*user || (*user)->deleted()) return refused;
    return Principal{(*user)->id, std::string((*user)->name()),
                     (*user)->doc.at("isAdmin").as_bool()};
  });
}

Result<json::object> Store::create_json(const Principal& who, Kind kind, const json::value& body) {
  return impl_->write(
      [&](engine::Tx& tx) { return engine::create(tx, who, kind, body); });
}

Result<json::object> Store::get_json(const Principal& who, Kind kind, const EntityKey& key,
                                     const GetOptions& options) {
  auto fields = engine::parse_fields(kind, options.fields);
  if (!fields) return fields.error();
  return impl_->read([&](engine::Tx& tx) -> Result<json::object> {
    auto r = tx.load(kind, key, options.include);
    if (!r) return r.error();
    engine::RecordResource resource(tx, kind, &*r);
    Operation op = fields->all || !fields->names.empty() ? Operation::view_all
                                                         : Operation::view_basic;
    if (auto a = engine::authorize(tx, who, {&op, 1}, resource); !a) return a.error();
    return engine::render(tx, *r, *fields);
  });
}

}  // namespace catalog
