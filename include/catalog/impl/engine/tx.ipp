#ifndef CATALOG_IMPL_ENGINE_TX_IPP
#define CATALOG_IMPL_ENGINE_TX_IPP

// Tx: the catalog's reads and writes over one storage transaction: records, names, list entries
// and counters, edges, history and events. The record codec is values.ipp, rendering render.ipp,
// the authorization view authorization.ipp.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/fqn.hpp>
#include <catalog/json.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstring>

namespace catalog::engine {

namespace json = boost::json;

// ---- Tx: records ----

Result<std::optional<Record>> Tx::find(const Uuid& id) {
  std::size_t bytes = 0;
  return find(id, bytes);
}

Result<std::optional<Record>> Tx::find(const Uuid& id, std::size_t& size) {
  auto bytes = txn_.get_view(keys::entity(id));
  if (!bytes) return bytes.error();
  // Decoded in place, in the result returned: a record is a large struct, and is never moved
  // between decoding and the caller.
  Result<std::optional<Record>> found(std::in_place);
  if (!*bytes) return found;
  size += (*bytes)->size();
  if (auto d = decode(**bytes, found->emplace()); !d) return d.error();
  return found;
}

Result<std::optional<Record>> Tx::find(Kind kind, std::string_view canonical_fqn) {
  auto id = txn_.get(keys::name(kind, canonical_fqn));
  if (!id) return id.error();
  if (!*id || (*id)->size() != 16) return std::optional<Record>();
  auto r = find(keys::id_from_bytes(**id));
  if (!r) return r.error();
  // Long FQNs share a bounded key: the stored entity's FQN must be the one asked for.
  if (*r && ((*r)->kind != kind || (*r)->fqn() != canonical_fqn)) return std::optional<Record>();
  return r;
}

Result<Record> Tx::load(Kind kind, const EntityKey& key, Include include) {
  // The record goes from where find decoded it into the result: one move of its struct.
  auto wanted = [&](const std::optional<Record>& r) {
    return r && r->kind == kind &&
           (include == Include::all || (include == Include::deleted) == r->deleted());
  };
  auto not_found = [&](std::string_view shown) {
    return fail(Errc::not_found, std::string(type_name(kind)) + " instance for " +
                                     std::string(shown) + " not found");
  };
  if (key.is_id()) {
    auto r = find(key.id());
    if (!r) return r.error();
    if (wanted(*r)) return std::move(**r);
    return not_found(to_string(key.id()));
  }
  auto canonical = fqn::canonical(key.fqn());
  if (!canonical) return canonical.error();
  auto r = find(kind, *canonical);
  if (!r) return r.error();
  if (wanted(*r)) return std::move(**r);
  return not_found(*canonical);
}

Result<Record> Tx::live_by_fqn(Kind kind, std::string_view text) {
  return load(kind, EntityKey::by_fqn(std::string(text)), Include::non_deleted);
}

Result<Record> Tx::live_by_id(Kind kind, const Uuid& id) {
  return load(kind, EntityKey::by_id(id), Include::non_deleted);
}

Result<void> Tx::keep_before(const Uuid& id) {
  if (!update_ || before_.count(id)) return {};
  if (before_bytes_ >= keep_limit) {
    // The index brought up to date with what was written so far (it reads this transaction's
    // records as they now are): what was kept is no longer needed, and a record written again
    // keeps its bytes of now, which the index now holds.
    if (auto u = update_(*this); !u) return u;
    before_.clear();
    before_bytes_ = 0;
  }
  auto stored = txn_.get(keys::entity(id));
  if (!stored) return stored.error();
  before_bytes_ += (*stored ? (*stored)->size() : 0) + 96;  // and a map node
  before_.emplace(id, std::move(*stored));
  return {};
}

Result<void> Tx::put(const Record& r) {
  if (auto k = keep_before(r.id); !k) return k;
  touch(r.id);
  return txn_.put(keys::entity(r.id), encode(r));
}

Result<void> Tx::erase(const Record& r) {
  if (auto k = keep_before(r.id); !k) return k;
  touch(r.id);
  auto e = txn_.erase(keys::entity(r.id));
  if (!e) return e.error();
  return {};
}

// ---- Tx: indexes ----

Result<void> Tx::put_name(const Record& r) {
  return txn_.put(keys::name(r.kind, r.fqn()), keys::id_bytes(r.id));
}

Result<void> Tx::erase_name(const Record& r) {
  auto e = txn_.erase(keys::name(r.kind, r.fqn()));
  if (!e) return e.error();
  return {};
}

Result<void> Tx::add_count(Kind kind, bool deleted, const Uuid& scope, const Uuid& id,
                           std::int64_t delta) {
  // Only the entity's shard is read and written (keys.hpp: why counters are sharded).
  auto key = keys::counter(kind, deleted, scope, keys::counter_shard(id));
  auto v = txn_.get(key);
  if (!v) return v.error();
  std::optional<std::int64_t> stored = std::int64_t{0};
  if (*v) stored = keys::decode_count(**v);
  if (!stored) return fail(Errc::storage, "corrupt counter " + keys::printable(key));
  std::int64_t next = *stored + delta;
  if (next == 0) {
    auto e = txn_.erase(key);
    if (!e) return e.error();
    return {};
  }
  return txn_.put(key, keys::encode_u64(static_cast<std::uint64_t>(next)));
}

Result<std::int64_t> Tx::count(Kind kind, bool deleted, const Uuid& scope) {
  // The sum of the shards, at most keys::counter_shards keys (a key-schema-1 counter, the bare
  // prefix, is counted too: it sorts first).
  auto cursor = txn_.scan(storage::prefix_range(keys::counter_prefix(kind, deleted, scope)),
                          storage::Direction::forward);
  if (!cursor) return cursor.error();
  std::int64_t total = 0;
  for (auto& c = *cursor; c->valid();) {
    auto n = keys::decode_count(c->value());
    if (!n) return fail(Errc::storage, "corrupt counter " + keys::printable(c->key()));
    total += *n;
    if (auto n = c->next(); !n) return n.error();
  }
  return total;
}

Result<void> Tx::index(const Record& r, bool add) {
  bool del = r.deleted();
  std::vector<Uuid> scopes{keys::all_scope};
  if (auto s = r.scope()) scopes.push_back(*s);
  for (const auto& scope : scopes) {
    auto key = keys::list(r.kind, del, scope, r.name(), r.id);
    if (add) {
      if (auto p = txn_.put(key, ""); !p) return p.error();
    } else {
      if (auto e = txn_.erase(key); !e) return e.error();
    }
    if (auto c = add_count(r.kind, del, scope, r.id, add ? 1 : -1); !c) return c.error();
  }
  return {};
}

// ---- Tx: edges ----

Result<void> Tx::link(const Uuid& from, Rel rel, const Uuid& to, std::string_view data) {
  touch_edge(from, rel, to);
  if (auto p = txn_.put(keys::edge(from, rel, to), data); !p) return p.error();
  return txn_.put(keys::reverse_edge(to, rel, from), data);
}

Result<bool> Tx::unlink(const Uuid& from, Rel rel, const Uuid& to) {
  touch_edge(from, rel, to);
  auto a = txn_.erase(keys::edge(from, rel, to));
  if (!a) return a.error();
  auto b = txn_.erase(keys::reverse_edge(to, rel, from));
  if (!b) return b.error();
  return *a;
}

Result<std::optional<std::string>> Tx::edge(const Uuid& from, Rel rel, const Uuid& to) {
  return txn_.get(keys::edge(from, rel, to));
}

Result<std::vector<Edge>> Tx::edges(const Uuid& id, Rel rel, bool reverse) {
  auto prefix = reverse ? keys::reverse_edge_prefix(id, rel) : keys::edge_prefix(id, rel);
  auto cursor = txn_.scan(storage::prefix_range(prefix), storage::Direction::forward);
  if (!cursor) return cursor.error();
  std::vector<Edge> out;
  for (auto& c = *cursor; c->valid();) {
    auto e = reverse ? keys::decode_reverse_edge(c->key()) : keys::decode_edge(c->key());
    if (!e) return fail(Errc::storage, "corrupt edge key " + keys::printable(c->key()));
    out.push_back(Edge{reverse ? e->from : e->to, std::string(c->value())});
    if (auto n = c->next(); !n) return n.error();
  }
  return out;
}

// ---- Tx: history and events ----

Result<void> Tx::put_snapshot(const Record& r, const json::object& rendered) {
  return put_snapshot(r, catalog::json::serialize(rendered));
}

Result<void> Tx::put_snapshot(const Record& r, std::string_view serialized) {
  return txn_.put(keys::history(r.id, r.version()), serialized);
}

Result<std::uint64_t> Tx::next_event_offset() {
  auto last = txn_.get(keys::meta("event_offset"));
  if (!last) return last.error();
  return (*last ? keys::decode_u64(**last) : 0) + 1;
}

Result<std::uint64_t> Tx::append_event(EventText event) {
  auto& text = event.text;
  auto key = keys::meta("event_offset");
  auto last = txn_.get(key);
  if (!last) return last.error();
  std::uint64_t offset = (*last ? keys::decode_u64(**last) : 0) + 1;
  if (auto p = txn_.put(key, keys::encode_u64(offset)); !p) return p.error();
  wire::key(text, wire::offset());
  detail::write_text(text, offset);
  text += '}';
  if (auto p = txn_.put(keys::event(offset), text); !p) return p.error();
  if (first_event_ > last_event_) first_event_ = offset;
  last_event_ = offset;
  return offset;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_TX_IPP
