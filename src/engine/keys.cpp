#include "keys.hpp"

#include <openssl/evp.h>

#include <cstring>

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

Uuid id_from_bytes(std::string_view bytes) {
  Uuid id{};
  std::memcpy(id.data, bytes.data(), 16);
  return id;
}

std::string entity(const Uuid& id) { return tagged('E', id_bytes(id)); }

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

std::string history_prefix(const Uuid& id) { return tagged('H', id_bytes(id)); }

std::string history(const Uuid& id, Version v) {
  return history_prefix(id) + encode_u64(v.tenths()).substr(4);
}

std::string list_prefix(Kind kind, bool deleted, const Uuid& scope) {
  std::string key = "L";
  key += kind_byte(kind);
  key += deleted ? '1' : '0';
  key += id_bytes(scope);
  return key;
}

std::string list_position(std::string_view name, const Uuid& id) {
  std::string key(name);
  key += '\0';
  key += id_bytes(id);
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
  key += id_bytes(scope);
  return key;
}

std::string counter(Kind kind, bool deleted, const Uuid& scope, unsigned shard) {
  auto key = counter_prefix(kind, deleted, scope);
  key += static_cast<char>(shard);
  return key;
}

std::string edge_prefix(const Uuid& from) { return tagged('R', id_bytes(from)); }
std::string edge_prefix(const Uuid& from, Rel rel) {
  return edge_prefix(from) + static_cast<char>(rel);
}
std::string edge(const Uuid& from, Rel rel, const Uuid& to) {
  return edge_prefix(from, rel) + id_bytes(to);
}
std::string reverse_edge_prefix(const Uuid& to) { return tagged('Q', id_bytes(to)); }
std::string reverse_edge_prefix(const Uuid& to, Rel rel) {
  return reverse_edge_prefix(to) + static_cast<char>(rel);
}
std::string reverse_edge(const Uuid& to, Rel rel, const Uuid& from) {
  return reverse_edge_prefix(to, rel) + id_bytes(from);
}

std::string event_prefix() { return "V"; }
std::string event(std::uint64_t offset) { return tagged('V', encode_u64(offset)); }
std::string meta(std::string_view name) { return tagged('M', name); }

}  // namespace catalog::engine::keys
