#ifndef CATALOG_IMPL_ADMIN_ADMIN_IPP
#define CATALOG_IMPL_ADMIN_ADMIN_IPP

// catalog::admin: verify with progress, backup, stats and the change-event log. Export and
// import are in dump.ipp.

#include <catalog/detail/admin/common.hpp>
#include <catalog/detail/store/in_transaction.hpp>

#include <catalog/detail/engine/verify.hpp>

#include <catalog/json.hpp>
#include <catalog/storage/lmdb_backend.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <thread>
#include <utility>

namespace catalog::admin {

namespace fs = std::filesystem;
namespace keys = engine::keys;

Result<std::vector<IntegrityProblem>> verify(Store& store, const ProgressFn& progress) {
  // The estimate counts keys: LMDB knows how many it holds; other backends do not say. Reading
  // the figures walks LMDB's free list, which the check of the keys never reads but the next
  // write does: a damaged free list is an error here (the store is corrupt), not a clean check.
  std::uint64_t total = 0;
  auto map = store.backend().map_stats();
  if (!map) return map.error();
  if (*map) total = (*map)->entries;
  // A read-only transaction can still conflict with writers on PostgreSQL, or lose its session
  // to a server restart: run it again.
  if (catalog::detail::in_transaction) return catalog::detail::nested_transaction();
  for (int attempt = 1;; ++attempt) {
    catalog::detail::InTransaction inside;  // the progress callback runs in the transaction
    auto txn = store.backend().begin(storage::Mode::read_only);
    if (!txn) return txn.error();
    const engine::Env env{detail::plain_options(), 0};
    engine::Tx tx(**txn, env);
    detail::Reporter reporter(progress, "verify");
    reporter.progress().total = total;
    auto problems = engine::check_integrity(tx, [&](std::uint64_t keys, std::uint64_t entities) {
      reporter.progress().done = keys;
      reporter.progress().entities = entities;
      reporter.report();
    });
    if (!problems &&
        (problems.error().code() == Errc::storage_conflict ||
         problems.error().code() == Errc::storage_unavailable) &&
        attempt < 3)
      continue;
    if (problems) reporter.finish();
    return problems;
  }
}

// ---- backup ----

namespace {

// Copies every key of `source`, as one read transaction sees them, into a new LMDB environment
// in `dest`, in one write transaction (committed with a flush). Returns the bytes it takes.
Result<std::uint64_t> copy_keys(storage::Backend& source, const fs::path& dest) {
  auto target = storage::LmdbBackend::open(dest);
  if (!target) return target.error();
  auto from = source.begin(storage::Mode::read_only);
  if (!from) return from.error();
  for (int attempt = 1;; ++attempt) {
    Result<void> copied = [&]() -> Result<void> {
      auto to = (*target)->begin(storage::Mode::read_write);
      if (!to) return to.error();
      auto cursor = (*from)->scan(storage::Range{}, storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid();) {
        if (auto p = (*to)->put(c->key(), c->value()); !p) return p.error();
        if (auto n = c->next(); !n) return n.error();
      }
      return (*to)->commit();
    }();
    // A full map ended the write transaction; the next one grows it. The read transaction
    // still sees the same snapshot, so the copy starts over from it.
    if (copied) break;
    if (copied.error().code() != Errc::storage_full || attempt == 40 ||
        !(*target)->grows_when_full())
      return copied.error();
  }
  auto stats = (*target)->stats();
  if (!stats) return stats.error();
  return static_cast<std::uint64_t>((stats->pages_in_use - stats->free_pages) * stats->page_size);
}

}  // namespace

Result<BackupInfo> backup(Store& store, const fs::path& dest) {
  std::error_code ec;
  bool made = false;
  if (fs::exists(dest, ec)) {
    if (!fs::is_directory(dest, ec))
      return fail(Errc::invalid_value, dest.string() + " exists and is not a directory");
    if (!fs::is_empty(dest, ec))
      return fail(Errc::invalid_value, dest.string() +
                                           " is not empty: a backup goes into a new or empty "
                                           "directory, so that it never overwrites a store");
  } else {
    fs::create_directories(dest, ec);
    if (ec) return fail(Errc::storage, "cannot create " + dest.string() + ": " + ec.message());
    made = true;
    // A copy holds all the store holds: its owner's alone, whatever the store's own modes.
    fs::permissions(dest, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (ec) return fail(Errc::storage, "cannot restrict " + dest.string() + ": " + ec.message());
  }
  // A failed backup leaves nothing that could be mistaken for one.
  auto discard = [&] {
    std::error_code ignored;
    if (made) {
      fs::remove_all(dest, ignored);
    } else {
      fs::remove(dest / "data.mdb", ignored);
      fs::remove(dest / "lock.mdb", ignored);
    }
  };
  BackupInfo info;
  auto native = store.backend().copy_to(dest);
  if (!native) {
    discard();
    return native.error();
  }
  if (*native) {
    info.lmdb_copy = true;
    info.bytes = fs::file_size(dest / "data.mdb", ec);
  } else {
    auto bytes = copy_keys(store.backend(), dest);
    if (!bytes) {
      discard();
      return bytes.error();
    }
    info.bytes = *bytes;
  }
  for (const char* file : {"data.mdb", "lock.mdb", "map.lock"}) {
    if (!fs::exists(dest / file, ec)) continue;
    fs::permissions(dest / file, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace, ec);
    if (ec) {
      discard();
      return fail(Errc::storage, "cannot restrict " + (dest / file).string() + ": " + ec.message());
    }
  }
  return info;
}

// ---- stats ----

namespace {

std::string_view family_name(char tag) {
  switch (tag) {
  case 'C': return "counters";
  case 'E': return "entities";
  case 'H': return "history";
  case 'L': return "list entries";
  case 'M': return "metadata";
  case 'N': return "names";
  case 'Q': return "reverse edges";
  case 'R': return "edges";
  case 'V': return "events";
  // The search index's families (docs/SEARCH_INDEX.md, "Key families").
  case 'F': return "search facets";
  case 'G': return "search field lengths";
  case 'J': return "search name words";
  case 'K': return "search names";
  case 'T': return "old search terms";  // index versions 2 to 5
  case 'X': return "search postings";
  case 'Y': return "search documents";
  default: return "unknown";
  }
}

}  // namespace

Result<StoreStats> stats(Store& store) {
  StoreStats out;
  auto map = store.backend().map_stats();
  if (!map) return map.error();
  out.lmdb = *map;
  if (catalog::detail::in_transaction) return catalog::detail::nested_transaction();
  catalog::detail::InTransaction inside;
  auto txn = store.backend().begin(storage::Mode::read_only);
  if (!txn) return txn.error();
  const engine::Env env{detail::plain_options(), 0};
  engine::Tx tx(**txn, env);
  for (Kind kind : all_kinds) {
    KindCount k{kind, 0, 0};
    for (bool deleted : {false, true}) {
      auto n = tx.count(kind, deleted, keys::all_scope);
      if (!n) return n.error();
      (deleted ? k.deleted : k.live) = *n;
    }
    out.live += k.live;
    out.deleted += k.deleted;
    out.kinds.push_back(k);
  }
  std::array<KeyFamily, 256> families{};
  std::array<std::uint64_t, std::size(detail::relation_names)> relations{};
  auto cursor = (*txn)->scan(storage::Range{}, storage::Direction::forward);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid();) {
    const auto key = c->key();
    auto& f = families[static_cast<unsigned char>(key[0])];
    ++f.keys;
    f.bytes += key.size() + c->value().size();
    if (auto edge = keys::decode_edge(key))
      for (std::size_t i = 0; i < relations.size(); ++i)
        if (detail::relation_names[i].rel == edge->rel) ++relations[i];
    if (auto n = c->next(); !n) return n.error();
  }
  for (std::size_t tag = 0; tag < families.size(); ++tag) {
    auto f = families[tag];
    if (f.keys == 0) continue;
    f.tag = static_cast<char>(tag);
    f.name = family_name(f.tag);
    out.keys += f.keys;
    out.bytes += f.bytes;
    out.families.push_back(f);
  }
  out.snapshots = families['H'].keys;
  out.edges = families['R'].keys;
  out.events = families['V'].keys;
  for (std::size_t i = 0; i < relations.size(); ++i)
    if (relations[i]) out.relations.push_back({detail::relation_names[i].name, relations[i]});
  return out;
}

// ---- events ----

Result<std::uint64_t> events(Store& store, std::uint64_t after, const EventSink& sink) {
  // Short read transactions (on LMDB a long one keeps writers from reusing pages), and the sink
  // is called outside them: it may be a slow pipe.
  constexpr std::size_t batch = 1024;
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (;;) {
    if (after == std::numeric_limits<std::uint64_t>::max()) return after;
    found.clear();
    {
      if (catalog::detail::in_transaction) return catalog::detail::nested_transaction();
      catalog::detail::InTransaction inside;  // not while the sink runs, below
      auto txn = store.backend().begin(storage::Mode::read_only);
      if (!txn) return txn.error();
      auto range = storage::prefix_range(keys::event_prefix());
      range.begin = keys::event(after + 1);
      auto cursor = (*txn)->scan(range, storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid() && found.size() < batch;) {
        const auto offset = keys::decode_event(c->key());
        auto event = engine::parse_stored(c->value());
        if (!offset || !event || !event->is_object())
          return fail(Errc::storage, "corrupt change event " +
                                         std::to_string(offset.value_or(0)) +
                                         ": not a JSON object");
        found.emplace_back(*offset, catalog::json::serialize(*event));
        if (auto n = c->next(); !n) return n.error();
      }
    }
    for (const auto& [offset, text] : found) {
      after = offset;
      if (!sink(offset, text)) return after;
    }
    if (found.size() < batch) return after;
  }
}

Result<std::uint64_t> follow_events(Store& store, std::uint64_t after, const EventSink& sink,
                                    const FollowOptions& options) {
  bool sink_stopped = false;
  const EventSink passing = [&](std::uint64_t offset, std::string_view event) {
    after = offset;  // a look that fails later goes on from here
    sink_stopped = !sink(offset, event);
    return !sink_stopped;
  };
  auto stop = [&] { return options.stop && options.stop(); };
  for (;;) {
    auto last = events(store, after, passing);
    if (!last && (!options.retry || !options.retry(last.error())))
      return last.error();
    if (last) after = *last;
    if (sink_stopped || stop()) return after;
    const auto until = std::chrono::steady_clock::now() + options.poll;
    for (auto now = std::chrono::steady_clock::now(); now < until;
         now = std::chrono::steady_clock::now()) {
      if (stop()) return after;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(10), until - now));
    }
  }
}

}  // namespace catalog::admin

#endif  // CATALOG_IMPL_ADMIN_ADMIN_IPP
