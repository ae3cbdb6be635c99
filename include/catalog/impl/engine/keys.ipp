#ifndef CATALOG_IMPL_ENGINE_KEYS_IPP
#define CATALOG_IMPL_ENGINE_KEYS_IPP

#include <catalog/detail/engine/keys.hpp>

#include <openssl/evp.h>

#include <cstring>
#include <iterator>
#include <utility>

namespace catalog::engine::keys {

namespace {
// FQNs up to this many bytes are stored as they are; longer ones as this prefix plus the
// SHA-256 of the whole FQN, which keeps name keys under LMDB's 511-byte limit. The full FQN is
// always checked against the entity on read.
constexpr std::size_t fqn_inline_bytes = 400;

std::string sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

// One tag byte then `rest`. (Not `"E" + rest`: GCC 12 at -O3 warns -Wrestrict on that
// pattern, a known false positive.)
std::string tagged(char tag, std::string_view rest) {
  std::string key(1, tag);
  key += rest;
  return key;
}

char kind_byte(Kind k) { return static_cast<char>('a' + static_cast<int>(k)); }
}  // namespace

std::string printable(std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (char ch : bytes) {
    auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += ch;
    } else {
      out += "\\x";
      out += hex[b >> 4];
      out += hex[b & 0xf];
    }
  }
  return out;
}

std::string encode_u64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xFF);
    v >>= 8;
  }
  return out;
}

std::uint64_t decode_u64(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < bytes.size(); ++i)
    v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

std::string id_bytes(const Uuid& id) {
  return std::string(reinterpret_cast<const char*>(id.data), 16);
}

namespace {
// Appends the id's 16 bytes: a key is built in one string, not from a temporary per part.
void append_id(std::string& key, const Uuid& id) {
  key.append(reinterpret_cast<const char*>(id.data), 16);
}
// `tag id`, with room for `more` bytes after it.
std::string tagged_id(char tag, const Uuid& id, std::size_t more = 0) {
  std::string key;
  key.reserve(17 + more);
  key += tag;
  append_id(key, id);
  return key;
}
}  // namespace

Uuid id_from_bytes(std::string_view bytes) {
  Uuid id{};
  std::memcpy(id.data, bytes.data(), 16);
  return id;
}

std::string entity(const Uuid& id) { return tagged_id(entity_tag, id); }

std::string name(Kind kind, std::string_view fqn) {
  std::string key = "N";
  key += kind_byte(kind);
  if (fqn.size() <= fqn_inline_bytes) {
    key += fqn;
  } else {
    key += fqn.substr(0, fqn_inline_bytes);
    key += '\xff';  // long keys sort after every inline key with the same prefix
    key += sha256(fqn);
  }
  return key;
}

std::string history_prefix(const Uuid& id) { return tagged_id('H', id); }

std::string history(const Uuid& id, Version v) {
  auto key = tagged_id('H', id, 4);
  key += encode_u64(v.tenths()).substr(4);
  return key;
}

std::string list_prefix(Kind kind, bool deleted, const Uuid& scope) {
  std::string key = "L";
  key += kind_byte(kind);
  key += deleted ? '1' : '0';
  append_id(key, scope);
  return key;
}

std::string list_position(std::string_view name, const Uuid& id) {
  std::string key;
  key.reserve(name.size() + 17);
  key += name;
  key += '\0';
  append_id(key, id);
  return key;
}

std::string list(Kind kind, bool deleted, const Uuid& scope, std::string_view name,
                 const Uuid& id) {
  return list_prefix(kind, deleted, scope) + list_position(name, id);
}

unsigned counter_shard(const Uuid& id) {
  // FNV-1a over the id: ids are random, but a host may bring its own.
  std::uint32_t h = 2166136261u;
  for (auto b : id.data) h = (h ^ b) * 16777619u;
  return h % counter_shards;
}

std::string counter_prefix(Kind kind, bool deleted, const Uuid& scope) {
  std::string key = "C";
  key += kind_byte(kind);
  key += deleted ? '1' : '0';
  append_id(key, scope);
  return key;
}

std::string counter(Kind kind, bool deleted, const Uuid& scope, unsigned shard) {
  auto key = counter_prefix(kind, deleted, scope);
  key += static_cast<char>(shard);
  return key;
}

namespace {
// `tag a rel b`, or `tag a rel` without b.
std::string edge_key(char tag, const Uuid& a, Rel rel, const Uuid* b) {
  auto key = tagged_id(tag, a, 17);
  key += static_cast<char>(rel);
  if (b) append_id(key, *b);
  return key;
}
}  // namespace

std::string edge_prefix(const Uuid& from) { return tagged_id('R', from); }
std::string edge_prefix(const Uuid& from, Rel rel) { return edge_key('R', from, rel, nullptr); }
std::string edge(const Uuid& from, Rel rel, const Uuid& to) {
  return edge_key('R', from, rel, &to);
}
std::string reverse_edge_prefix(const Uuid& to) { return tagged_id('Q', to); }
std::string reverse_edge_prefix(const Uuid& to, Rel rel) {
  return edge_key('Q', to, rel, nullptr);
}
std::string reverse_edge(const Uuid& to, Rel rel, const Uuid& from) {
  return edge_key('Q', to, rel, &from);
}

std::string event_prefix() { return "V"; }
std::string event(std::uint64_t offset) { return tagged('V', encode_u64(offset)); }
std::string meta(std::string_view name) { return tagged('M', name); }

// ---- the search index ----

unsigned search_shard(const Uuid& id) { return counter_shard(id) % search_shards; }

std::string_view cut_search_text(std::string_view text) {
  if (text.size() <= search_text_bytes) return text;
  std::size_t n = search_text_bytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

namespace {
// `tag text`, the text cut by cut_search_text, with room for `more` bytes after it.
std::string text_prefix(char tag, std::string_view text, std::size_t more = 0) {
  text = cut_search_text(text);
  std::string key;
  key.reserve(1 + text.size() + more);
  key += tag;
  key += text;
  return key;
}
// `tag text 0x00 id`.
std::string text_id(char tag, std::string_view text, const Uuid& id) {
  auto key = text_prefix(tag, text, 17);
  key += '\0';
  append_id(key, id);
  return key;
}
}  // namespace

std::string posting(std::string_view word, const Uuid& id) { return text_id('X', word, id); }
std::string posting_prefix(std::string_view word) {
  auto key = text_prefix('X', word, 1);
  key += '\0';
  return key;
}
std::string field_stats(unsigned field, unsigned shard) {
  std::string key(1, 'G');
  key += static_cast<char>(field);
  key += static_cast<char>(shard);
  return key;
}
std::string search_doc(const Uuid& id) { return tagged_id('Y', id); }
std::string name_entry(std::string_view folded_name, const Uuid& id) {
  return text_id('K', folded_name, id);
}
std::string name_entry_prefix(std::string_view folded_prefix) {
  return text_prefix('K', folded_prefix);
}
std::string name_word(std::string_view word, const Uuid& id) { return text_id('J', word, id); }
std::string name_word_prefix(std::string_view word_prefix) {
  return text_prefix('J', word_prefix);
}

std::string facet(std::string_view entry, const Uuid& id) { return text_id('F', entry, id); }
std::string facet_prefix(std::string_view entry) {
  auto key = text_prefix('F', entry, 1);
  key += '\0';
  return key;
}

std::optional<TextIdKey> decode_text_id(char tag, std::string_view key) {
  if (key.size() < 2 + id_size || key[0] != tag || key[key.size() - id_size - 1] != '\0')
    return std::nullopt;
  auto text = key.substr(1, key.size() - id_size - 2);
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  return TextIdKey{text, id_from_bytes(key.substr(key.size() - id_size))};
}

std::optional<FieldStatsKey> decode_field_stats(std::string_view key) {
  if (key.size() != 3 || key[0] != 'G') return std::nullopt;
  const auto shard = static_cast<unsigned char>(key[2]);
  if (shard >= search_shards) return std::nullopt;
  return FieldStatsKey{static_cast<unsigned char>(key[1]), shard};
}

std::optional<Uuid> decode_search_doc(std::string_view key) {
  if (key.size() != 1 + id_size || key[0] != 'Y') return std::nullopt;
  return id_from_bytes(key.substr(1));
}

// ---- decoding ----

namespace {
bool tagged_as(std::string_view key, char tag, std::size_t size) {
  return key.size() == size && key[0] == tag;
}
std::optional<bool> state_from_byte(char b) {
  if (b != '0' && b != '1') return std::nullopt;
  return b == '1';
}
}  // namespace

std::optional<Kind> kind_from_byte(char b) {
  const int i = b - 'a';
  if (i < 0 || i >= static_cast<int>(std::size(all_kinds))) return std::nullopt;
  return all_kinds[i];
}

bool is_relation(char b) {
  switch (static_cast<Rel>(b)) {
  case Rel::owns:
  case Rel::follows:
  case Rel::votes:
  case Rel::reviews:
  case Rel::expert:
  case Rel::contains:
  case Rel::member:
  case Rel::policy:
  case Rel::domain:
  case Rel::related: return true;
  }
  return false;
}

std::optional<Uuid> decode_entity(std::string_view key) {
  if (!tagged_as(key, entity_tag, 1 + id_size)) return std::nullopt;
  return id_from_bytes(key.substr(1));
}

std::optional<NameKey> decode_name(std::string_view key) {
  if (key.size() < 3 || key[0] != 'N') return std::nullopt;
  auto kind = kind_from_byte(key[1]);
  if (!kind) return std::nullopt;
  return NameKey{*kind, key.substr(2)};
}

std::optional<HistoryKey> decode_history(std::string_view key) {
  if (!tagged_as(key, 'H', 1 + id_size + 4)) return std::nullopt;
  std::uint32_t tenths = 0;
  for (char c : key.substr(1 + id_size)) tenths = (tenths << 8) | static_cast<unsigned char>(c);
  return HistoryKey{id_from_bytes(key.substr(1, id_size)), Version::from_tenths(tenths)};
}

std::optional<ListPositionKey> decode_list_position(std::string_view suffix) {
  if (suffix.size() < 1 + 1 + id_size || suffix[suffix.size() - id_size - 1] != '\0')
    return std::nullopt;
  return ListPositionKey{suffix.substr(0, suffix.size() - id_size - 1),
                         id_from_bytes(suffix.substr(suffix.size() - id_size))};
}

std::optional<ListKey> decode_list(std::string_view key) {
  if (key.size() < list_prefix_size || key[0] != 'L') return std::nullopt;
  auto kind = kind_from_byte(key[1]);
  auto deleted = state_from_byte(key[2]);
  auto position = decode_list_position(key.substr(list_prefix_size));
  if (!kind || !deleted || !position) return std::nullopt;
  return ListKey{*kind, *deleted, id_from_bytes(key.substr(3, id_size)), position->name,
                 position->id};
}

std::optional<CounterKey> decode_counter(std::string_view key) {
  if (key.size() != list_prefix_size && key.size() != list_prefix_size + 1) return std::nullopt;
  if (key[0] != 'C') return std::nullopt;
  auto kind = kind_from_byte(key[1]);
  auto deleted = state_from_byte(key[2]);
  if (!kind || !deleted) return std::nullopt;
  CounterKey counter{*kind, *deleted, id_from_bytes(key.substr(3, id_size)), std::nullopt};
  if (key.size() == list_prefix_size + 1) {
    counter.shard = static_cast<unsigned char>(key.back());
    if (*counter.shard >= counter_shards) return std::nullopt;
  }
  return counter;
}

namespace {
// `tag a rel b`, as the ids in key order.
std::optional<EdgeKey> decode_edge_bytes(std::string_view key, char tag) {
  if (!tagged_as(key, tag, 1 + id_size + 1 + id_size) || !is_relation(key[1 + id_size]))
    return std::nullopt;
  return EdgeKey{id_from_bytes(key.substr(1, id_size)), static_cast<Rel>(key[1 + id_size]),
                 id_from_bytes(key.substr(2 + id_size))};
}
}  // namespace

std::optional<EdgeKey> decode_edge(std::string_view key) { return decode_edge_bytes(key, 'R'); }

std::optional<EdgeKey> decode_reverse_edge(std::string_view key) {
  auto e = decode_edge_bytes(key, 'Q');
  if (e) std::swap(e->from, e->to);
  return e;
}

std::optional<std::uint64_t> decode_event(std::string_view key) {
  if (!tagged_as(key, 'V', 1 + 8)) return std::nullopt;
  return decode_u64(key.substr(1));
}

std::optional<std::string_view> decode_meta(std::string_view key) {
  if (key.empty() || key[0] != 'M') return std::nullopt;
  return key.substr(1);
}

std::optional<std::int64_t> decode_count(std::string_view value) {
  if (value.size() != 8) return std::nullopt;
  return static_cast<std::int64_t>(decode_u64(value));
}

}  // namespace catalog::engine::keys

#endif  // CATALOG_IMPL_ENGINE_KEYS_IPP
