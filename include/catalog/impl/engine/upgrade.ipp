#ifndef CATALOG_IMPL_ENGINE_UPGRADE_IPP
#define CATALOG_IMPL_ENGINE_UPGRADE_IPP

// Key schema upgrades, run by Store::open. Schema 1 kept one counter key per list (`C kind state
// scope`); schema 2 splits each into shards by entity id (keys.hpp). A schema-1 store is
// converted in one write transaction: every old counter is replaced by the shards its list's
// entries fall in (counted from the list, which is what a counter must equal), and the schema is
// recorded. New stores just record the schema.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/search/index.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace catalog::engine {

namespace {

const std::string key_schema_key = keys::meta("key_schema");

}  // namespace

Result<std::uint64_t> stored_key_schema(Tx& tx) {
  auto v = tx.raw().get(key_schema_key);
  if (!v) return v.error();
  if (!*v) return std::uint64_t{1};
  if ((*v)->size() != 8) return fail(Errc::storage, "corrupt key schema record");
  return keys::decode_u64(**v);
}

Error newer_key_schema(std::uint64_t schema) {
  return Error(Errc::storage, "the store was written with key schema " + std::to_string(schema) +
                                  "; this library knows up to " +
                                  std::to_string(keys::key_schema));
}

Result<void> check_catalog_keys(Tx& tx) {
  // The key schema's own tags (keys.hpp), then the search index's.
  constexpr std::string_view schema_tags = "CEHLMNQRV";
  std::optional<std::string> foreign;  // the first key no version of the catalog writes
  // A counter shard: key schema 2 and later write those, and record the schema with the first.
  bool sharded = false;
  // Another host may have converted the store since the caller read no record: then it is
  // recorded in this transaction's snapshot, and is a catalog's.
  auto recorded = tx.raw().get(key_schema_key);
  if (!recorded) return recorded.error();
  if (*recorded) return {};
  auto cursor = tx.raw().scan(storage::Range{}, storage::Direction::forward);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid() && !(foreign && sharded);) {
    // No backend stores an empty key (LMDB refuses one): what reads as one is a damaged page.
    if (c->key().empty()) return fail(Errc::storage, "the store is corrupt: it holds an empty key");
    const char tag = c->key().front();
    if (schema_tags.find(tag) == std::string_view::npos &&
        search_index::families.find(tag) == std::string_view::npos) {
      if (!foreign) foreign = keys::printable(c->key().substr(0, 64));
    } else if (auto counter = keys::decode_counter(c->key()); counter && counter->shard) {
      sharded = true;
    }
    if (auto n = c->next(); !n) return n.error();
  }
  // Shards without the record: a catalog's store that lost the record (a damaged page), not
  // one of schema 1, nor another program's.
  if (sharded) {
    std::string also;
    if (foreign) also = ", and the key " + *foreign + ", which no version of the catalog writes";
    return fail(Errc::storage,
                "the store is corrupt: it holds the counter shards of key schema 2 and later but "
                "no key schema record" +
                    also);
  }
  if (foreign)
    return fail(Errc::storage, "not a catalog store: it holds the key " + *foreign +
                                   ", which no version of the catalog writes (its keys were "
                                   "left as they are)");
  return {};
}

Result<bool> upgrade_key_schema(Tx& tx) {
  auto schema = stored_key_schema(tx);
  if (!schema) return schema.error();
  if (*schema == keys::key_schema) return false;  // another host upgraded it meanwhile
  if (*schema > keys::key_schema) return newer_key_schema(*schema);
  auto& txn = tx.raw();
  // The schema-1 counters: few (one per kind, state and scope), so they are collected first.
  std::vector<keys::CounterKey> old_counters;
  {
    auto cursor = txn.scan(storage::prefix_range("C"), storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid();) {
      // A schema-1 counter is the bare prefix of today's shards: it has no shard byte.
      if (auto counter = keys::decode_counter(c->key()); counter && !counter->shard)
        old_counters.push_back(*counter);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  for (const auto& old : old_counters) {
    std::array<std::int64_t, keys::counter_shards> shards{};
    const auto list = keys::list_prefix(old.kind, old.deleted, old.scope);
    auto cursor = txn.scan(storage::prefix_range(list), storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid();) {
      if (auto entry = keys::decode_list(c->key())) ++shards[keys::counter_shard(entry->id)];
      if (auto n = c->next(); !n) return n.error();
    }
    cursor->reset();
    if (auto e = txn.erase(keys::counter_prefix(old.kind, old.deleted, old.scope)); !e)
      return e.error();
    for (unsigned s = 0; s < keys::counter_shards; ++s) {
      if (shards[s] == 0) continue;
      auto key = keys::counter(old.kind, old.deleted, old.scope, s);
      if (auto p = txn.put(key, keys::encode_u64(static_cast<std::uint64_t>(shards[s]))); !p)
        return p.error();
    }
  }
  if (auto p = txn.put(key_schema_key, keys::encode_u64(keys::key_schema)); !p) return p.error();
  return true;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_UPGRADE_IPP
