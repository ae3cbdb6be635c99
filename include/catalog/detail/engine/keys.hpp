#ifndef CATALOG_DETAIL_ENGINE_KEYS_HPP
#define CATALOG_DETAIL_ENGINE_KEYS_HPP

// The key schema: every key the engine writes, in one place, each family's encoder with its
// decoder (decode_*: nothing else takes a stored key apart by offsets).
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
//   M name                                 -> metadata (last event offset, key schema,
//                                             search analyzer)
//
// The search index (docs/SEARCH_INDEX.md), derived from the above and written by the same
// transactions:
//
//   X word 0x00 id                         -> posting: (field, count) pairs of `word` in id's
//                                             document (search_index.hpp)
//   G field(u8) shard(u8)                  -> documents with the field and their total length
//   Y id                                   -> the entity's search document: what ranks, filters
//                                             and facets read (search_index.hpp)
//   (T id held a document's terms up to index version 5; a reindex clears them)
//   K folded-name 0x00 id                  -> "" (exact names and typeahead by name)
//   J word 0x00 id                         -> "" (typeahead by a word of a name)
//   F field(u8) value 0x00 id              -> "" (filters by a facet value: owners, tags,
//                                             domains, service, glossary, status)
//
// Names contain no control characters, so 0x00 after the name orders by name, then id.
//
// Counters are sharded so that independent writers of one collection (hosts sharing a
// PostgreSQL catalog) write different keys: an entity counts in the shard of its id, so a create,
// delete or restore changes one shard, and two of them meet on a key only when their ids share a
// shard (1 in counter_shards). Reading a total scans at most counter_shards keys. Key schema 1
// (stores written before shards) had one key per list, `C kind state scope`, the prefix of its
// shards today; Store::open converts such stores (upgrade.ipp) and records key schema 2.

#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::engine::keys {

/// Relationship kinds, stored as one byte (kind.hpp: kinds name their relationship fields).
using Rel = catalog::Relation;

inline constexpr Uuid all_scope{};  // 16 zero bytes: the collection as a whole

std::string id_bytes(const Uuid& id);
Uuid id_from_bytes(std::string_view bytes);  // REQUIRES: 16 bytes

/// The tag byte of entity keys.
inline constexpr char entity_tag = 'E';
std::string entity(const Uuid& id);
/// The entity keys of many ids, as entity() spells each, in one buffer (one allocation, not one
/// a key): `keys[i]` is entity(id_of(i)) for i < count, a view into `bytes`.
struct EntityKeys {
  std::string bytes;
  std::vector<std::string_view> keys;
};
template <class IdOf>
EntityKeys entities(std::size_t count, IdOf id_of);
std::string name(Kind kind, std::string_view fqn);
std::string history_prefix(const Uuid& id);
std::string history(const Uuid& id, Version v);
std::string list_prefix(Kind kind, bool deleted, const Uuid& scope);
std::string list(Kind kind, bool deleted, const Uuid& scope, std::string_view name, const Uuid& id);
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

// ---- the search index ----

/// Shards of the search statistics (G): a write changes the shard of its entity's id.
inline constexpr unsigned search_shards = 16;
unsigned search_shard(const Uuid& id);
/// Words and names are cut to this many bytes in keys (words are at most 64 already).
inline constexpr std::size_t search_text_bytes = 400;
/// `text` cut as keys cut it: at search_text_bytes, between UTF-8 characters.
std::string_view cut_search_text(std::string_view text);
std::string posting(std::string_view word, const Uuid& id);
std::string posting_prefix(std::string_view word);
std::string field_stats(unsigned field, unsigned shard);
std::string search_doc(const Uuid& id);
std::string name_entry(std::string_view folded_name, const Uuid& id);
std::string name_entry_prefix(std::string_view folded_prefix);
std::string name_word(std::string_view word, const Uuid& id);
std::string name_word_prefix(std::string_view word_prefix);
/// `F entry 0x00 id`, the entry a search_index::facet_entry.
std::string facet(std::string_view entry, const Uuid& id);
/// The keys of every id with `entry`.
std::string facet_prefix(std::string_view entry);

/// `X word 0x00 id`, `K name 0x00 id`, `J word 0x00 id`, `F entry 0x00 id`: the text and the id.
struct TextIdKey {
  std::string_view text;
  Uuid id;
};
std::optional<TextIdKey> decode_text_id(char tag, std::string_view key);
/// `G field shard`.
struct FieldStatsKey {
  unsigned field;
  unsigned shard;
};
std::optional<FieldStatsKey> decode_field_stats(std::string_view key);
/// `Y id`.
std::optional<Uuid> decode_search_doc(std::string_view key);

/// Stored bytes (a key, or edge data) for a message: printable ASCII as is, every other byte and
/// the backslash as \xNN.
std::string printable(std::string_view bytes);

std::string encode_u64(std::uint64_t v);
std::uint64_t decode_u64(std::string_view bytes);  // REQUIRES: 8 bytes

// ---- decoding: each family's fields read back from its bytes, the inverse of its encoder ----
//
// Each decoder returns nullopt for bytes that are not a well-formed key of its family (another
// tag, a wrong length, an unknown kind, state or relation byte). Views point into the key.

inline constexpr std::size_t id_size = 16;

/// The kind a key stores as one byte (the encoders' kind byte).
std::optional<Kind> kind_from_byte(char b);
/// Whether `b` is the byte of one of Rel's relations.
bool is_relation(char b);

/// `E id`.
std::optional<Uuid> decode_entity(std::string_view key);

/// `N kind fqn-key`: fqn_key is the FQN, or for a long one its prefix, 0xff and its SHA-256.
struct NameKey {
  Kind kind;
  std::string_view fqn_key;
};
std::optional<NameKey> decode_name(std::string_view key);

/// `H id version`.
struct HistoryKey {
  Uuid id;
  Version version;
};
std::optional<HistoryKey> decode_history(std::string_view key);

/// What list_position encodes (name 0x00 id): the suffix of a list key after its list_prefix.
struct ListPositionKey {
  std::string_view name;
  Uuid id;
};
std::optional<ListPositionKey> decode_list_position(std::string_view suffix);

/// `L kind state scope name 0x00 id`.
struct ListKey {
  Kind kind;
  bool deleted;
  Uuid scope;
  std::string_view name;
  Uuid id;
};
std::optional<ListKey> decode_list(std::string_view key);
/// The fixed part of list and counter keys: tag, kind, state, scope.
inline constexpr std::size_t list_prefix_size = 1 + 1 + 1 + id_size;

/// `C kind state scope shard`; key schema 1's unsharded counter (the prefix alone) has no shard.
struct CounterKey {
  Kind kind;
  bool deleted;
  Uuid scope;
  std::optional<unsigned> shard;
};
std::optional<CounterKey> decode_counter(std::string_view key);

/// An edge, from -> to, as `R from rel to` stores it and `Q to rel from` mirrors it.
struct EdgeKey {
  Uuid from;
  Rel rel;
  Uuid to;
};
std::optional<EdgeKey> decode_edge(std::string_view key);
std::optional<EdgeKey> decode_reverse_edge(std::string_view key);

/// `V offset`.
std::optional<std::uint64_t> decode_event(std::string_view key);

/// `M name`.
std::optional<std::string_view> decode_meta(std::string_view key);

/// A counter shard's value: its count (i64, stored as its two's complement u64); nullopt unless
/// 8 bytes.
std::optional<std::int64_t> decode_count(std::string_view value);

template <class IdOf>
EntityKeys entities(std::size_t count, IdOf id_of) {
  constexpr std::size_t size = 1 + sizeof(Uuid::data);
  EntityKeys out;
  out.bytes.resize(count * size);
  out.keys.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    char* key = out.bytes.data() + i * size;
    const Uuid& id = id_of(i);
    key[0] = entity_tag;
    std::memcpy(key + 1, id.data, sizeof id.data);
    out.keys.emplace_back(key, size);
  }
  return out;
}

}  // namespace catalog::engine::keys

#endif  // CATALOG_DETAIL_ENGINE_KEYS_HPP
