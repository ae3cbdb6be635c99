// The Store facade: opens transactions, retries on a full LMDB map, and calls the engine.

#include "engine.hpp"

#include <catalog/fqn.hpp>
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include <chrono>

namespace catalog {

namespace json = boost::json;

struct Store::Impl {
  std::unique_ptr<storage::Backend> backend;
  StoreOptions options;

  std::int64_t now() const {
    if (options.clock) return options.clock();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// Runs `fn` in one write transaction and commits. A full map aborts the transaction; the
  /// backend grows it and the whole operation runs again, so nothing is lost.
  template <class F>
  auto write(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    for (int attempt = 0;; ++attempt) {
      auto txn = backend->begin(storage::Mode::read_write);
      if (!txn) return txn.error();
      engine::Env env{options, now()};
      engine::Tx tx(**txn, env);
      auto result = fn(tx);
      if (!result) {
        if (result.error().code() == Errc::storage_full && attempt < 40) continue;
        return result;
      }
      auto committed = (*txn)->commit();
      if (!committed) {
        if (committed.error().code() == Errc::storage_full && attempt < 40) continue;
        return committed.error();
      }
      return result;
    }
  }

  /// Runs `fn` in one read transaction.
  template <class F>
  auto read(F&& fn) -> decltype(fn(std::declval<engine::Tx&>())) {
    auto txn = backend->begin(storage::Mode::read_only);
    if (!txn) return txn.error();
    engine::Env env{options, now()};
    engine::Tx tx(**txn, env);
    return fn(tx);
  }
};

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
