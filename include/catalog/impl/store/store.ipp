#ifndef CATALOG_IMPL_STORE_STORE_IPP
#define CATALOG_IMPL_STORE_STORE_IPP

// The Store facade: opens transactions (retrying on a full LMDB map and on conflicts between
// concurrent writers), upgrades old stores on open, and calls the engine.

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/store/in_transaction.hpp>
#include <catalog/detail/store/store_impl.hpp>
#include <catalog/detail/utf8.hpp>

#include <catalog/fqn.hpp>
#include <catalog/policy.hpp>
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace catalog {

namespace bj = boost::json;

namespace {
/// The default Authenticator: JWT verification with the store's options (docs/SEMANTICS.md §11).
class JwtAuthenticator final : public Authenticator {
 public:
  explicit JwtAuthenticator(auth::JwtVerifier v) : verifier_(std::move(v)) {}
  Result<std::string> authenticate(std::string_view token, std::int64_t now) const override {
    return verifier_.verify(token, now);
  }

 private:
  auth::JwtVerifier verifier_;
};
}  // namespace

void Store::Impl::finished(StoreOperation op, std::chrono::steady_clock::time_point start,
                           const Error* error) {
  if (!error)
    counting.succeeded(op);
  else
    counting.failed(op, error->kind());
  if (options.slow_operation.count() <= 0) return;
  auto took = std::chrono::steady_clock::now() - start;
  // Compared in whole milliseconds, the option's own unit: any threshold, up to
  // milliseconds::max(), converts without overflow.
  if (std::chrono::floor<std::chrono::milliseconds>(took) < options.slow_operation) return;
  counting.slow_operation();
  log(LogLevel::warning,
      "slow operation: " + std::string(store_operation_name(op)) + " took " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) +
          " ms" + (error ? " and failed: " + error->message() : ""));
}

std::optional<Error> Store::Impl::run(std::optional<StoreOperation> op, storage::Mode mode,
                                      void* context, Attempt attempt) {
  const auto start = std::chrono::steady_clock::now();
  Attempts attempts(*this);
  const auto count = [&](const Error* e) {
    if (op) finished(*op, start, e);
  };
  // The error that ends the operation, counted as its outcome.
  const auto give_up = [&](const Error& e) -> std::optional<Error> {
    Error last = attempts.final(e);
    count(&last);
    return last;
  };
  if (detail::in_transaction) {
    Error nested = detail::nested_transaction();
    count(&nested);
    return nested;
  }
  for (;;) {
    // One attempt, in a scope of its own: its transaction ends (rolled back, unless it committed)
    // before what follows is decided, paused for or logged, so that neither a pause before the
    // next attempt nor a slow log sink holds the writers' lock or a database session's locks.
    std::optional<Error> failed;
    std::uint64_t first_event = 1, last_event = 0;
    {
      detail::InTransaction inside;
      auto txn = backend->begin(mode);
      if (!txn) {
        failed = std::move(txn).error();
      } else {
        engine::Env env{options, now()};
        engine::Tx tx(**txn, env);
        const bool indexed = mode == storage::Mode::read_write && options.search_index;
        if (indexed) tx.keep_records_for(&engine::search_index::update);
        if (const Error* error = attempt(context, tx)) {
          failed = *error;
        } else if (indexed) {
          if (auto s = engine::search_index::update(tx); !s) failed = std::move(s).error();
        }
        if (!failed && mode == storage::Mode::read_write) {
          const auto commit_start = std::chrono::steady_clock::now();
          if (auto committed = (*txn)->commit(); !committed) {
            failed = std::move(committed).error();
          } else {
            counting.commit(std::chrono::steady_clock::now() - commit_start);
            first_event = tx.first_event();
            last_event = tx.last_event();
          }
        }
      }
    }
    if (failed) {
      if (attempts.again(*failed)) continue;
      return give_up(*failed);
    }
    notify(first_event, last_event);  // committed: listeners may use the store
    count(nullptr);
    return std::nullopt;
  }
}

void Store::Impl::listener_threw(std::uint64_t offset, std::exception_ptr thrown) noexcept {
  try {
    std::string what;
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception& x) {
      what = std::string(": ") + x.what();
    } catch (...) {
    }
    log(LogLevel::error,
        "a change listener threw at event " + std::to_string(offset) + what);
  } catch (...) {  // no memory for the message: the commit stands all the same
  }
}

void Store::Impl::notify(std::uint64_t first, std::uint64_t last) {
  if (first > last) return;
  std::vector<std::shared_ptr<const std::function<void(const ChangeEvent&)>>> copy;
  {
    std::lock_guard lock(listeners_mutex);
    for (const auto& [id, l] : listeners) copy.push_back(l);
  }
  if (copy.empty()) return;
  constexpr std::uint64_t batch = 256;
  // The commit stands; a listener cannot be told of what cannot be read. That is logged (error),
  // with the offsets a listener can read again through Store::events.
  const auto untold = [&](std::uint64_t from, const Error& e) {
    log(LogLevel::error, "the change listeners were not told of events " + std::to_string(from) +
                             " to " + std::to_string(last) + ": reading them failed: " +
                             e.message());
  };
  for (auto from = first; from <= last; from += batch) {
    auto txn = backend->begin(storage::Mode::read_only);
    if (!txn) return untold(from, txn.error());
    auto to = std::min(last, from + batch - 1);
    auto cursor = (*txn)->scan({engine::keys::event(from), engine::keys::event(to + 1)},
                               storage::Direction::forward);
    if (!cursor) return untold(from, cursor.error());
    std::vector<ChangeEvent> events;
    for (auto& c = *cursor; c->valid();) {
      // An event that does not decode is not told (verify reports it); the commit stands.
      if (auto offset = engine::keys::decode_event(c->key()))
        if (auto stored = engine::decode_event(*offset, c->value()))
          if (auto event = typed_event(*stored)) events.push_back(std::move(*event));
      if (!c->next()) break;
    }
    cursor->reset();
    txn->reset();
    for (const auto& e : events)
      for (const auto& l : copy) {
        // The commit stands whatever a listener does: one that throws is logged, and the other
        // listeners and the operation's answer are what they would have been.
        try {
          (*l)(e);
        } catch (...) {
          listener_threw(e.offset, std::current_exception());
        }
      }
  }
}

bool Store::Impl::Attempts::again(const Error& e) {
  if (e.code() == Errc::storage_full) {
    // A backend that cannot make room (an LMDB map at its maximum size) would fail again.
    if (!impl_.backend->grows_when_full() || ++full_ >= 40) return false;
    impl_.counting.map_full_retry();
    if (impl_.options.log) {
      std::string size;
      if (auto stats = impl_.backend->map_stats(); stats && *stats)
        size = " (" + std::to_string((*stats)->map_size) + " bytes)";
      impl_.log(LogLevel::info,
                "the storage map is full" + size + ": it grows and the operation runs again");
    }
    return true;
  }
  if (e.code() == Errc::storage_unavailable) {
    // Nothing was written; the next transaction waits for the server to take a session
    // (PostgresOptions::reconnect_wait), so no pause here.
    if (++unavailable_ >= unavailable_attempts) return false;
    impl_.counting.unavailable_retry();
    impl_.log(LogLevel::warning, "the database server ended a transaction's session before it "
                                 "committed (attempt " +
                                     std::to_string(unavailable_) + " of " +
                                     std::to_string(unavailable_attempts) + "): it runs again");
    return true;
  }
  if (e.code() != Errc::storage_conflict) return false;
  if (++conflicts_ >= conflict_attempts) {
    impl_.counting.conflict_given_up();
    impl_.log(LogLevel::warning, "an operation gave up after " + std::to_string(conflicts_) +
                                     " attempts in conflict with concurrent writers");
    return false;
  }
  impl_.counting.conflict_retry();
  impl_.log(LogLevel::debug, "a transaction conflicted with concurrent writers (attempt " +
                                 std::to_string(conflicts_) + " of " +
                                 std::to_string(conflict_attempts) + "): it runs again");
  // Exponential backoff with full jitter: writers that collided pick different moments to try
  // again, and a crowd spreads out over at most 20 ms.
  thread_local std::minstd_rand rng(std::random_device{}());
  const auto cap_us = std::min<std::int64_t>(std::int64_t{250} << (conflicts_ - 1), 20'000);
  std::uniform_int_distribution<std::int64_t> pause(0, cap_us);
  std::this_thread::sleep_for(std::chrono::microseconds(pause(rng)));
  return true;
}

Error Store::Impl::Attempts::final(Error e) const {
  if (e.code() == Errc::storage_unavailable && unavailable_ >= unavailable_attempts)
    return Error(Errc::storage_unavailable,
                 "gave up after " + std::to_string(unavailable_) +
                     " attempts, each ended by the database server before it committed; nothing "
                     "was changed (" +
                     e.message() + ")");
  if (e.code() != Errc::storage_conflict || conflicts_ < conflict_attempts) return e;
  return Error(Errc::storage_conflict,
               "gave up after " + std::to_string(conflicts_) +
                   " attempts, each in conflict with concurrent writers; nothing was changed (" +
                   e.message() + ")");
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(std::unique_ptr<storage::Backend> backend, StoreOptions options) {
  if (!backend) return fail(Errc::internal, "Store::open needs a backend");
  auto impl = std::make_unique<Impl>();
  impl->backend = std::move(backend);
  impl->options = std::move(options);
  auto& o = impl->options;
  // Options are checked before anything is read or written (errors: invalid_value, or the
  // default policy's own policy_rule): a base URL goes into every stored answer's href, and a
  // default policy's rule that cannot be read would never match, a deny rule that never denies.
  if (o.base_url && !detail::valid_utf8(*o.base_url))
    return fail(Errc::invalid_value, "StoreOptions::base_url is not UTF-8");
  if (o.default_policy)
    if (auto rules = policy::validate_rules(*o.default_policy); !rules) {
      Error e = rules.error();
      return Error(e.code(), "StoreOptions::default_policy: " + e.message());
    }
  if (!o.authorizer)
    o.authorizer = std::make_shared<policy::PolicyAuthorizer>(
        o.default_policy ? *o.default_policy : policy::default_rules());
  if (!o.authenticator) {
    auto verifier = auth::JwtVerifier::create(o.jwt);
    if (!verifier) return verifier.error();
    o.authenticator = std::make_shared<JwtAuthenticator>(std::move(*verifier));
  }
  // The work of opening is one maintain operation.
  auto prepared = impl->counted(StoreOperation::maintain, [&] { return impl->prepare(); });
  if (!prepared) return prepared.error();
  return Store(std::move(impl));
}

Result<void> Store::Impl::prepare() {
  // A store written with an older key schema is converted once, by the first host to open it.
  auto schema = read_step([](engine::Tx& tx) { return engine::stored_key_schema(tx); });
  if (!schema) return schema.error();
  // A store without a key is new: it is set up, not converted, and that is not logged.
  auto fresh = read_step([](engine::Tx& tx) -> Result<bool> {
    auto first = tx.raw().scan(storage::Range{}, storage::Direction::forward);
    if (!first) return first.error();
    return !(*first)->valid();
  });
  if (!fresh) return fresh.error();
  auto log = [&](LogLevel level, const std::string& message) {
    if (!*fresh) this->log(level, message);
  };
  // A store opened read-only (LmdbOptions::read_only) is read as it is: opening it writes
  // nothing. An empty one has nothing to set up for reading; an older key schema cannot be read
  // without its conversion; a search index it lacks makes searches fail (searchable), not open.
  const bool read_only = backend->read_only();
  if (read_only && *fresh) return {};
  if (*schema > engine::keys::key_schema) {
    auto newer = engine::newer_key_schema(*schema);
    log(LogLevel::error, newer.message());
    return newer;
  }
  // A store of schema 1 is converted, unless its keys say it is not a catalog's at all.
  if (*schema < engine::keys::key_schema && !*fresh) {
    auto ours = read_step([](engine::Tx& tx) { return engine::check_catalog_keys(tx); });
    if (!ours) {
      log(LogLevel::error, ours.error().message());
      return ours.error();
    }
  }
  if (read_only && *schema < engine::keys::key_schema) {
    auto refused = fail(Errc::storage, "the store was written with key schema " +
                                           std::to_string(*schema) +
                                           ", which this library converts to " +
                                           std::to_string(engine::keys::key_schema) +
                                           " when it opens the store read-write; it is open "
                                           "read-only");
    log(LogLevel::error, refused.message());
    return refused;
  }
  if (*schema != engine::keys::key_schema) {
    const bool older = *schema < engine::keys::key_schema;
    const auto versions =
        std::to_string(*schema) + " to " + std::to_string(engine::keys::key_schema);
    if (older) log(LogLevel::info, "converting the store from key schema " + versions);
    auto upgraded = write_step([](engine::Tx& tx) { return engine::upgrade_key_schema(tx); });
    if (!upgraded) {
      log(LogLevel::error, (older ? "converting the store from key schema " + versions + " failed: "
                                  : std::string()) +
                               upgraded.error().message());
      return upgraded.error();
    }
    log(LogLevel::info, *upgraded ? "converted the store from key schema " + versions
                                  : "another host converted the store from key schema " + versions);
  }
  // A store indexed by another analyzer or layout, or by none (written before search), or whose
  // reindex was interrupted, is indexed now, in batches (docs/SEARCH_INDEX.md).
  if (options.search_index) {
    auto current = read_step([](engine::Tx& tx) { return engine::search_index::current(tx); });
    if (!current) return current.error();
    if (!*current && read_only) {
      log(LogLevel::warning,
          "the store has no search index of version " +
              std::to_string(engine::search_index::index_version) +
              " (none, another version, or one half built), and it is open read-only: searches "
              "fail until a read-write open builds it");
    } else if (!*current) {
      log(LogLevel::info, "building the search index (version " +
                              std::to_string(engine::search_index::index_version) +
                              "): the store has none, one of another version, or one half built");
      auto r = reindex(0, false);
      if (!r) {
        log(LogLevel::error, "building the search index failed: " + r.error().message());
        return r.error();
      }
      log(LogLevel::info, "built the search index: " + std::to_string(*r) + " entities");
    }
  }
  for (const auto& admin : options.admins) {
    // Read first: an admin that is already one needs no write, so a store on a full disk (or
    // read-only media) still opens for reading with the same options.
    auto current = read_step([&](engine::Tx& tx) -> Result<bool> {
      if (!fqn::validate_name(admin)) return false;  // ensure_admin says why
      auto user = tx.find(Kind::user, fqn::quote(admin));
      if (!user) return user.error();
      return *user && !(*user)->deleted() && (*user)->as<User>().is_admin;
    });
    if (!current) return current.error();
    if (*current) continue;
    auto restored = write_step([&](engine::Tx& tx) { return engine::ensure_admin(tx, admin); });
    if (!restored) return restored.error();
    if (*restored)
      log(LogLevel::warning, "restored the soft-deleted user " + admin +
                                 ": it is a configured admin principal");
  }
  return {};
}

Result<void> Store::Impl::searchable(engine::Tx& tx) const {
  if (!backend->read_only()) return {};
  auto current = engine::search_index::current(tx);
  if (!current) return current.error();
  if (*current) return {};
  return fail(Errc::storage, "the store has no search index of version " +
                                 std::to_string(engine::search_index::index_version) +
                                 " and is open read-only; a read-write open builds it");
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

StoreCounters Store::counters() const noexcept { return impl_->counting.snapshot(); }

Result<Principal> Store::principal(std::string_view user_name) const {
  return impl_->read(StoreOperation::authenticate, [&](engine::Tx& tx) -> Result<Principal> {
    auto refused =
        fail(Errc::unauthenticated, "Unknown principal " + std::string(user_name.substr(0, 200)));
    if (!fqn::validate_name(user_name)) return refused;
    auto user = tx.find(Kind::user, fqn::quote(user_name));
    if (!user) return user.error();
    if (!*user || (*user)->deleted()) return refused;
    return Principal{(*user)->id, std::string((*user)->name()), (*user)->as<User>().is_admin};
  });
}

Result<Principal> Store::authenticate(std::string_view token) const {
  auto name = impl_->options.authenticator->authenticate(token, impl_->now() / 1000);
  if (!name) return impl_->failed(StoreOperation::authenticate, name.error());
  return principal(*name);
}

Result<bj::object> Store::create_json(const Principal& who, Kind kind, const bj::value& body) {
  if (auto bad = impl_->unknown_kind(StoreOperation::create, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::create, [&](engine::Tx& tx) {
    return engine::create(tx, who, kind, body, engine::AnswerForm::json);
  }));
}

Result<AnyEntity> Store::create_entity(const Principal& who, Kind kind, const bj::value& body) {
  return answer_entity(impl_->write(StoreOperation::create, [&](engine::Tx& tx) {
    return engine::create(tx, who, kind, body, engine::AnswerForm::entity);
  }));
}

namespace {

// docs/SEMANTICS.md §14 for a read of one entity: fields checked alone, then load, authorize and
// `render` it.
template <class T, class Render>
Result<T> read_entity(Store::Impl& impl, const Principal& who, Kind kind, const EntityKey& key,
                      const GetOptions& options, Render render) {
  auto fields = engine::parse_fields(kind, options.fields);
  if (!fields) return impl.failed(StoreOperation::get, fields.error());
  // An `include` that is none of Include's values (an integer cast to it) is refused, as list
  // refuses it.
  if (options.include != Include::non_deleted && options.include != Include::deleted &&
      options.include != Include::all)
    return impl.failed(StoreOperation::get,
                       Error(Errc::invalid_parameter, "Invalid parameter include"));
  return impl.read(StoreOperation::get, [&](engine::Tx& tx) -> Result<T> {
    auto r = tx.load(kind, key, options.include);
    if (!r) return r.error();
    engine::RecordResource resource(tx, kind, &*r);
    Operation op =
        fields->all || !fields->names.empty() ? Operation::view_all : Operation::view_basic;
    if (auto a = engine::authorize(tx, who, {&op, 1}, resource); !a) return a.error();
    const engine::Record* one = &*r;  // PostgreSQL: what rendering reads, in two round trips
    if (auto p = engine::prefetch_rendering(tx, {&one, 1}, *fields); !p) return p.error();
    return render(tx, std::move(*r), *fields);
  });
}

}  // namespace

Result<bj::object> Store::get_json(const Principal& who, Kind kind, const EntityKey& key,
                                   const GetOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::get, kind)) return *bad;
  return read_entity<bj::object>(*impl_, who, kind, key, options, [](auto&&... a) {
    return engine::render(std::forward<decltype(a)>(a)...);
  });
}

Result<AnyEntity> Store::get_entity(const Principal& who, Kind kind, const EntityKey& key,
                                    const GetOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::get, kind)) return *bad;
  return read_entity<AnyEntity>(*impl_, who, kind, key, options, [](auto&&... a) {
    return engine::render_entity(std::forward<decltype(a)>(a)...);
  });
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_IPP
