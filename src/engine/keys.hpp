#ifndef CATALOG_SRC_ENGINE_KEYS_HPP
#define CATALOG_SRC_ENGINE_KEYS_HPP

// The key schema: every key the engine writes, in one place.
//
//   E id                                   -> entity record (JSON)
//   N kind fqn-key                         -> id (16 bytes); fqn-key bounded (prefix + SHA-256)
//   H id version(u32 BE)                   -> snapshot of that version (JSON text)
//   L kind state scope name 0x00 id        -> "" (list index; state 0 live, 1 deleted;
//                                             scope = 16 zero bytes for all, or a service id)
//   C kind state scope shard(u8)           -> count (i64 BE) of the list's entries whose id is in
//                                             that shard (counter_shard); a list's total is the
//                                             sum of its shards
//   R from rel to                          -> edge data (vote type, ...)
//   Q to rel from                          -> same data (the reverse index)
//   V offset(u64 BE)                       -> change event (JSON)
//   M name                                 -> metadata (last event offset, key schema)
//
// Names contain no control characters, so 0x00 after the name orders by name, then id.
//
// Counters are sharded so that independent writers of one collection (hosts sharing a
// PostgreSQL catalog) write different keys: an entity counts in the shard of its id, so a create,
// delete or restore changes one shard, and two of them meet on a key only when their ids share a
// shard (1 in counter_shards). Reading a total scans at most counter_shards keys. Key schema 1
// (stores written before shards) had one key per list, `C kind state scope`, the prefix of its
// shards today; Store::open converts such stores (upgrade.cpp) and records key schema 2.

#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace catalog::engine::keys {

/// Relationship kinds, stored as one byte (kind.hpp: kinds name their relationship fields).
using Rel = catalog::Relation;

inline constexpr Uuid all_scope{};  // 16 zero bytes: the collection as a whole

std::string id_bytes(const Uuid& id);
Uuid id_from_bytes(std::string_view bytes);  // REQUIRES: 16 bytes

std::string entity(const Uuid& id);
std::string name(Kind kind, std::string_view fqn);
std::string history_prefix(const Uuid& id);
std::string history(const Uuid& id, Version v);
std::string list_prefix(Kind kind, bool deleted, const Uuid& scope);
std::string list(Kind kind, bool deleted, const Uuid& scope, std::string_view name,
                 const Uuid& id);
/// The list-key suffix after list_prefix: name 0x00 id.
std::string list_position(std::string_view name, const Uuid& id);
/// The shards of each counter, and the shard an entity counts in (a hash of its id).
inline constexpr unsigned counter_shards = 64;
unsigned counter_shard(const Uuid& id);
/// The prefix of a list's counter shards (and the key of its counter in key schema 1).
std::string counter_prefix(Kind kind, bool deleted, const Uuid& scope);
std::string counter(Kind kind, bool deleted, const Uuid& scope, unsigned shard);
/// The key schema this library writes, recorded under meta("key_schema").
inline constexpr std::uint64_t key_schema = 2;
std::string edge(const Uuid& from, Rel rel, const Uuid& to);
std::string edge_prefix(const Uuid& from, Rel rel);
std::string edge_prefix(const Uuid& from);
std::string reverse_edge(const Uuid& to, Rel rel, const Uuid& from);
std::string reverse_edge_prefix(const Uuid& to, Rel rel);
std::string reverse_edge_prefix(const Uuid& to);
std::string event(std::uint64_t offset);
std::string event_prefix();
std::string meta(std::string_view name);

/// Stored bytes (a key, or edge data) for a message: printable ASCII as is, every other byte and
/// the backslash as \xNN.
std::string printable(std::string_view bytes);

std::string encode_u64(std::uint64_t v);
std::uint64_t decode_u64(std::string_view bytes);  // REQUIRES: 8 bytes

}  // namespace catalog::engine::keys

#endif  // CATALOG_SRC_ENGINE_KEYS_HPP
