#ifndef CATALOG_IMPL_ENGINE_TX_IPP
#define CATALOG_IMPL_ENGINE_TX_IPP

// Tx: the catalog's reads and writes over one storage transaction (rendering: render.ipp).

#include <catalog/detail/engine/engine.hpp>

#include <catalog/fqn.hpp>
#include <catalog/json.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstring>

namespace catalog::engine {

namespace json = boost::json;

// ---- Record ----

std::string encode(const Record& r) {
  // Written member by member, as serializing the object {k, c?, g?, d?, doc} writes it, without
  // building that object or any member's JSON: type names, ids and member names need no
  // escapes, and the document's members are written from the struct (write_text).
  std::string out;
  out.reserve(512);
  out += R"({"k":")";
  out += type_name(r.kind);
  out += '"';
  auto id = [&](const char* member, const std::optional<Uuid>& v) {
    if (!v) return;
    out += member;
    out += to_string(*v);
    out += '"';
  };
  id(R"(,"c":")", r.container);
  id(R"(,"g":")", r.glossary);
  if (r.deleted_by) {
    out += R"(,"d":)";
    out += std::to_string(r.deleted_by);
  }
  out += R"(,"doc":{)";
  r.write_stored(out);
  out += "}}";
  return out;
}

bool decode_text(std::string_view bytes, Record& out) {
  detail::TextReader in(bytes);
  std::string_view type;
  if (!in.eat(R"({"k":)") || !in.plain_string(type)) return false;
  auto kind = kind_from_type(type);
  if (!kind) return false;
  std::optional<Uuid> container, glossary;
  std::uint64_t deleted_by = 0;
  auto id = [&](std::string_view member, std::optional<Uuid>& v) {
    if (!in.eat(member)) return true;
    return detail::read_text(in, v.emplace());
  };
  if (!id(R"(,"c":)", container) || !id(R"(,"g":)", glossary)) return false;
  if (in.eat(R"(,"d":)") && !detail::read_text(in, deleted_by)) return false;
  if (!in.eat(R"(,"doc":)")) return false;
  if (!record_from_text(*kind, in, out) || !in.eat('}') || !in.at_end()) return false;
  out.container = container;
  out.glossary = glossary;
  out.deleted_by = deleted_by;
  return true;
}

std::optional<Record> decode_text(std::string_view bytes) {
  std::optional<Record> r(std::in_place);
  if (!decode_text(bytes, *r)) r.reset();
  return r;
}

Result<void> decode(std::string_view bytes, Record& out) {
  // Records the engine wrote are read straight into their struct; anything else (a document
  // kept in another form, or one that does not decode) goes through the DOM, which reads every
  // form and words the error.
  if (decode_text(bytes, out)) return {};
  auto r = decode_document(bytes);
  if (!r) return r.error();
  out = std::move(*r);
  return {};
}

Result<Record> decode(std::string_view bytes) {
  Record r;
  if (auto d = decode(bytes, r); !d) return d.error();
  return r;
}

Result<Record> decode_document(std::string_view bytes) {
  auto corrupt = [] { return fail(Errc::storage, "corrupt entity record"); };
  // The parsed document lives only until it is read into the struct: one buffer holds it.
  unsigned char buffer[4096];
  json::monotonic_resource scratch(buffer, sizeof buffer);
  auto v = parse_stored(bytes, &scratch);
  if (!v || !v->is_object()) return corrupt();
  auto& o = v->get_object();
  auto k = o.find("k");
  if (k == o.end() || !k->value().is_string()) return corrupt();
  auto kind = kind_from_type(k->value().get_string());
  if (!kind) return corrupt();
  auto doc = o.find("doc");
  if (doc == o.end() || !doc->value().is_object()) return corrupt();
  auto r = record_from_document(*kind, doc->value().get_object());
  if (!r) return r.error();
  auto id_of = [](const json::value& v) -> std::optional<Uuid> {
    if (!v.is_string()) return std::nullopt;
    auto id = parse_uuid(v.get_string());
    if (!id) return std::nullopt;
    return *id;
  };
  if (auto c = o.find("c"); c != o.end()) {
    r->container = id_of(c->value());
    if (!r->container) return corrupt();
  }
  if (auto g = o.find("g"); g != o.end()) {
    r->glossary = id_of(g->value());
    if (!r->glossary) return corrupt();
  }
  if (auto d = o.find("d"); d != o.end()) {
    const auto& n = d->value();
    if (n.is_uint64())
      r->deleted_by = n.get_uint64();
    else if (n.is_int64() && n.get_int64() >= 0)
      r->deleted_by = static_cast<std::uint64_t>(n.get_int64());
    else
      return corrupt();
  }
  return r;
}

// ---- fields ----

Result<FieldSet> parse_fields(Kind kind, const std::vector<std::string>& fields) {
  FieldSet set;
  const auto& extras = info(kind).extra_fields;
  for (const auto& f : fields) {
    if (f == "*") {
      set.all = true;
      continue;
    }
    if (std::find(extras.begin(), extras.end(), f) == extras.end())
      return fail(Errc::invalid_field, "Invalid field name " + f);
    set.names.insert(f);
  }
  return set;
}

// ---- Tx: records ----

Result<std::optional<Record>> Tx::find(const Uuid& id) {
  auto bytes = txn_.get_view(keys::entity(id));
  if (!bytes) return bytes.error();
  // Decoded in place, in the result returned: a record is a large struct, and each move of it
  // cost a list page time.
  Result<std::optional<Record>> found(boost::system::in_place_value);
  if (!*bytes) return found;
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

Result<void> Tx::put(const Record& r) { return txn_.put(keys::entity(r.id), encode(r)); }

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
  if (auto p = txn_.put(keys::edge(from, rel, to), data); !p) return p.error();
  return txn_.put(keys::reverse_edge(to, rel, from), data);
}

Result<bool> Tx::unlink(const Uuid& from, Rel rel, const Uuid& to) {
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
  text += R"(,"offset":)";
  detail::write_text(text, offset);
  text += '}';
  if (auto p = txn_.put(keys::event(offset), text); !p) return p.error();
  if (first_event_ > last_event_) first_event_ = offset;
  last_event_ = offset;
  return offset;
}

// Written as text, not built as a JSON object and serialized: the object and its strings were
// most of what an event cost, and an event is a fifth of a follow (BENCHMARKS.md section 1).
EventText event_text(std::string_view type, const Record& r, std::optional<Version> previous,
                     const Principal& who, std::int64_t now, std::string_view change) {
  using catalog::json::serialize_string_to;
  EventText event;
  auto& out = event.text;
  out.reserve(320);
  out += R"({"id":)";
  detail::write_text(out, random_uuid());
  out += R"(,"eventType":)";
  serialize_string_to(out, type);
  out += R"(,"entityType":)";
  serialize_string_to(out, type_name(r.kind));
  out += R"(,"entityId":)";
  detail::write_text(out, r.id);
  out += R"(,"entityFullyQualifiedName":)";
  serialize_string_to(out, r.fqn());
  out += R"(,"previousVersion":)";
  detail::write_text(out, previous.value_or(r.version()));
  out += R"(,"currentVersion":)";
  detail::write_text(out, r.version());
  out += R"(,"userName":)";
  serialize_string_to(out, who.name);
  out += R"(,"timestamp":)";
  detail::write_text(out, now);
  const auto before_change = out.size();
  out += R"(,"changeDescription":)";
  if (!change.empty())
    out += change;
  else if (type == "entityCreated" || !r.write_member("changeDescription", out))
    out.resize(before_change);
  return event;
}

// ---- rendering: render.ipp ----

// ---- authorization view ----

Result<std::vector<OwnerRef>> RecordResource::owners() const {
  if (!own_.empty()) return own_;
  std::optional<Record> current;
  if (record_) current = *record_;
  while (current) {
    auto edges = tx_.edges(current->id, Rel::owns, true);
    if (!edges) return edges.error();
    if (!edges->empty()) {
      std::vector<OwnerRef> out;
      for (const auto& e : *edges) {
        auto o = tx_.find(e.other);
        if (!o) return o.error();
        if (*o) out.push_back(OwnerRef{e.other, (*o)->kind});
      }
      return out;
    }
    auto next = current->container ? current->container : current->glossary;
    if (!next || *next == current->id) break;
    auto c = tx_.find(*next);
    if (!c) return c.error();
    current = std::move(*c);
  }
  return std::vector<OwnerRef>{};
}

Result<std::vector<Uuid>> RecordResource::teams_of(const Uuid& user) const {
  std::vector<Uuid> out;
  auto direct = tx_.edges(user, Rel::member, true);
  if (!direct) return direct.error();
  std::vector<Uuid> stack;
  for (const auto& e : *direct) stack.push_back(e.other);
  while (!stack.empty()) {
    auto t = stack.back();
    stack.pop_back();
    if (std::find(out.begin(), out.end(), t) != out.end()) continue;
    out.push_back(t);
    auto parents = tx_.edges(t, Rel::contains, true);
    if (!parents) return parents.error();
    for (const auto& p : *parents) stack.push_back(p.other);
  }
  return out;
}

Result<std::vector<PolicyRule>> RecordResource::policies_of(std::span<const Uuid> teams) const {
  std::vector<PolicyRule> out;
  std::vector<Uuid> seen;
  for (const auto& t : teams) {
    auto ps = tx_.edges(t, Rel::policy, false);
    if (!ps) return ps.error();
    for (const auto& p : *ps) {
      if (std::find(seen.begin(), seen.end(), p.other) != seen.end()) continue;
      seen.push_back(p.other);
      auto rec = tx_.find(p.other);
      if (!rec) return rec.error();
      if (!*rec || (*rec)->deleted()) continue;
      // A stored policy that does not decode failed the read above (fail closed) instead of
      // being skipped with its deny rules.
      const auto* policy = std::get_if<Policy>(&(*rec)->value);
      if (!policy)
        return fail(Errc::storage,
                    "stored policy " + std::string((*rec)->fqn()) + " is not a policy");
      if (!policy->enabled) continue;
      out.insert(out.end(), policy->rules.begin(), policy->rules.end());
    }
  }
  return out;
}

std::string RecordResource::target() const {
  if (!target_.empty()) return target_;
  std::string out(type_name(kind_));
  if (record_ && record_->kind == kind_) {
    out += ' ';
    out += record_->fqn();
  }
  return out;
}

Result<void> authorize(Tx& tx, const Principal& who, std::span<const Operation> ops,
                       const RecordResource& what) {
  if (who.is_admin) return {};
  const auto& a = tx.env().options.authorizer;
  if (!a) return {};
  auto decision = a->authorize(who, ops, what);
  if (!decision && decision.error().kind() == ErrorKind::forbidden)
    return fail(Errc::forbidden, decision.error().message() + " on " + what.target());
  return decision;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_TX_IPP
