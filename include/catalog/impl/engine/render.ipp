#ifndef CATALOG_IMPL_ENGINE_RENDER_IPP
#define CATALOG_IMPL_ENGINE_RENDER_IPP

// Rendering: an entity as the API returns it, its own fields with its containers and the
// relationships, votes and counts asked for. One walk serves every answer: JSON (render, for the
// *_json surface and REST), the entity's struct (render_entity, for typed reads), and the
// history snapshot of a new version as text, alone (SnapshotOut) or with the struct of a typed
// caller's answer (TextStructOut), each through its own output.

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/references.hpp>

#include <catalog/json.hpp>

#include <algorithm>
#include <type_traits>

namespace catalog::engine {

namespace json = boost::json;

json::object reference(const Record& r) {
  json::object o;
  o[wire::id()] = to_string(r.id);
  o[wire::reference_type()] = type_name(r.kind);
  o[wire::name()] = r.name();
  o[wire::fqn()] = r.fqn();
  if (auto d = r.member(wire::display_name())) o[wire::display_name()] = std::move(*d);  // null if stored so
  o[wire::deleted()] = r.deleted();
  return o;
}

EntityReference entity_reference(const Record& r) {
  const auto& b = r.base();
  EntityReference ref;
  ref.id = r.id;
  ref.type = type_name(r.kind);
  ref.name = b.name;
  ref.fully_qualified_name = b.fully_qualified_name;
  ref.display_name = b.display_name;  // a stored null reads as absent, as from_json reads it
  ref.deleted = b.deleted;
  return ref;
}

// references(): references.ipp, which reads the reference fields without decoding records.

namespace {

bool is_extra(Kind k, std::string_view field) {
  const auto& extras = info(k).extra_fields;
  return std::find(extras.begin(), extras.end(), field) != extras.end();
}

// The voters of `id`, up and down.
Result<std::pair<std::vector<Edge>, std::vector<Edge>>> voters(Tx& tx, const Uuid& id) {
  auto edges = tx.edges(id, Rel::votes, true);
  if (!edges) return edges.error();
  std::pair<std::vector<Edge>, std::vector<Edge>> out;
  for (auto& e : *edges) (e.data == "u" ? out.first : out.second).push_back(std::move(e));
  return out;
}

// A counted extra field: the edges of its relation from `root`, or, when deep, from every entity
// reached along them (the terms of a glossary).
Result<std::int64_t> count_edges(Tx& tx, const Uuid& root, const CountField& count) {
  std::int64_t n = 0;
  std::vector<Uuid> stack{root};
  while (!stack.empty()) {
    auto id = stack.back();
    stack.pop_back();
    auto edges = tx.edges(id, count.rel, false);
    if (!edges) return edges.error();
    n += static_cast<std::int64_t>(edges->size());
    if (count.deep)
      for (const auto& e : *edges) stack.push_back(e.other);
  }
  return n;
}

// The entity's href, shown right after `deleted`, when the store has a base URL.
std::optional<std::string> href_of(Tx& tx, const Record& r) {
  const auto& base = tx.env().options.base_url;
  if (!base) return std::nullopt;
  return *base + "/v1/" + std::string(info(r.kind).collection) + "/" + to_string(r.id);
}

// Own fields in stored order; changeDescription goes last (render adds it).
void render_own(Tx& tx, const Record& r, const FieldSet& fields, json::object& out) {
  const auto href = href_of(tx, r);
  r.for_each_stored([&](std::string_view name, json::value v) {
    if (name == wire::change_description()) return;
    if (is_extra(r.kind, name) && !fields.has(name)) return;
    out.emplace(name, std::move(v));
    if (name == wire::deleted() && href) out[wire::href()] = *href;
  });
}

// The JSON answer: members appended to `out`, copied from `previous` (a rendering of the same
// entity, with the same fields) where it has them.
class JsonOut {
 public:
  JsonOut(json::object& out, const json::object* previous) : out_(out), previous_(previous) {}

  bool reuse(std::string_view field) {
    if (!previous_) return false;
    auto it = previous_->find(field);
    if (it == previous_->end()) return false;
    out_[field] = it->value();
    return true;
  }
  Result<void> container(std::string_view field, std::string_view copied,
                         const ContainerCache::Entry& e) {
    out_[field] = e.reference;
    if (e.value) out_[copied] = *e.value;
    return {};
  }
  static Result<json::array> references_of(Tx& tx, const std::vector<Edge>& edges) {
    return references(tx, edges);
  }
  Result<void> relation(std::string_view field, json::array refs) {
    out_[field] = std::move(refs);
    return {};
  }
  Result<void> votes(json::array up, json::array down) {
    json::object votes;
    votes[wire::up_votes()] = static_cast<std::int64_t>(up.size());
    votes[wire::down_votes()] = static_cast<std::int64_t>(down.size());
    votes[wire::up_voters()] = std::move(up);
    votes[wire::down_voters()] = std::move(down);
    out_[wire::votes()] = std::move(votes);
    return {};
  }
  Result<void> count(std::string_view field, std::int64_t n) {
    out_[field] = n;
    return {};
  }

 private:
  json::object& out_;
  const json::object* previous_;
};

// The entity's struct: members set in place, typed, with no JSON in between (but for the member
// a kind copies from its container, which the record holds as JSON).
class StructOut {
 public:
  explicit StructOut(Record& r) : r_(r) {}

  bool reuse(std::string_view) { return false; }  // typed reads have no earlier rendering
  Result<void> container(std::string_view field, std::string_view copied,
                         const ContainerCache::Entry& e) {
    if (auto s = assign(field, e.typed); !s) return s;
    if (e.value)
      if (auto s = r_.set_member(copied, &*e.value); !s) return refused(copied, s.error());
    return {};
  }
  static Result<std::vector<EntityReference>> references_of(Tx& tx,
                                                            const std::vector<Edge>& edges) {
    return typed_references(tx, edges);
  }
  Result<void> relation(std::string_view field, std::vector<EntityReference> refs) {
    return assign(field, std::move(refs));
  }
  Result<void> votes(std::vector<EntityReference> up, std::vector<EntityReference> down) {
    Votes votes;
    votes.up_votes = static_cast<std::int64_t>(up.size());
    votes.down_votes = static_cast<std::int64_t>(down.size());
    votes.up_voters = std::move(up);
    votes.down_voters = std::move(down);
    return assign(wire::votes(), std::move(votes));
  }
  Result<void> count(std::string_view field, std::int64_t n) { return assign(field, n); }

 private:
  // Sets member `field`, of type T or std::optional<T>, to `v`.
  template <class T>
  Result<void> assign(std::string_view field, T&& v) {
    using V = std::remove_cvref_t<T>;
    if (auto pos = r_.position(field)) {
      const auto& member = r_.fields()[*pos];
      void* address = member.in(r_.object());
      if (member.ops == &detail::field_ops<V>) {
        *static_cast<V*>(address) = std::forward<T>(v);
        return {};
      }
      if (member.ops == &detail::field_ops<std::optional<V>>) {
        *static_cast<std::optional<V>*>(address) = std::forward<T>(v);
        return {};
      }
    }
    return refused(field, Error(Errc::internal, "no member of that type"));
  }
  Result<void> refused(std::string_view field, const Error& why) {
    return fail(Errc::storage, "rendering " + std::string(r_.fqn()) + ": member " +
                                   std::string(field) + ": " + why.message());
  }

  Record& r_;
};

// The reference to container `id` as member `field`, and the member `copied` its kind takes
// from the container (a search index's serviceType), if the container has it.
template <class Out>
Result<void> render_container(Tx& tx, const Uuid& id, std::string_view field,
                              std::string_view copied, const RenderFrom& from, Out& out) {
  if (out.reuse(field)) {
    if (!copied.empty()) out.reuse(copied);
    return {};
  }
  if (from.containers)
    for (const auto& e : from.containers->entries)
      if (e.id == id && e.copied == copied) return out.container(field, copied, e);
  auto show = [&](ContainerCache::Entry e) {
    auto shown = out.container(field, copied, e);
    if (from.containers) from.containers->entries.push_back(std::move(e));
    return shown;
  };
  if (copied.empty()) {
    // Only the reference is shown: read from the stored text, as followers are, rather than by
    // decoding the whole record; the full decode is the fallback when the scan gives up.
    auto bytes = tx.raw().get_view(keys::entity(id));
    if (!bytes) return bytes.error();
    if (!*bytes) return {};
    StoredReference s;
    if (scan_reference(**bytes, s))
      return show(ContainerCache::Entry{id, copied, s.to_json(), s.typed(), std::nullopt});
  }
  auto c = tx.find(id);
  if (!c) return c.error();
  if (!*c) return {};
  ContainerCache::Entry e{id, copied, reference(**c), entity_reference(**c), std::nullopt};
  if (!copied.empty()) e.value = (*c)->member(copied);
  return show(std::move(e));
}

// Containers, always shown; a term right under its glossary shows it once, as `glossary`.
template <class Out>
Result<void> render_containers(Tx& tx, const Record& r, const RenderFrom& from, Out& out) {
  const auto& kind = info(r.kind);
  if (kind.in_glossary && r.glossary)
    if (auto c = render_container(tx, *r.glossary, wire::glossary(), {}, from, out); !c) return c;
  if (!kind.container_field.empty() && r.container &&
      !(kind.in_glossary && r.container == r.glossary))
    if (auto c = render_container(tx, *r.container, kind.container_field, kind.container_type, from,
                                  out);
        !c)
      return c;
  return {};
}

// Relationship fields, votes and counts that `fields` asks for.
template <class Out>
Result<void> render_relations(Tx& tx, const Record& r, const FieldSet& fields, Out& out) {
  const auto& kind = info(r.kind);
  for (const auto& rf : relation_fields(r.kind)) {
    if (is_extra(r.kind, rf.field) && !fields.has(rf.field)) continue;
    if (out.reuse(rf.field)) continue;
    auto edges = tx.edges(r.id, rf.rel, rf.reverse);
    if (!edges) return edges.error();
    auto refs = out.references_of(tx, *edges);
    if (!refs) return refs.error();
    if (auto s = out.relation(rf.field, std::move(*refs)); !s) return s;
  }
  if (kind.has_votes && fields.has(wire::votes()) && !out.reuse(wire::votes())) {
    auto v = voters(tx, r.id);
    if (!v) return v.error();
    auto up = out.references_of(tx, v->first);
    if (!up) return up.error();
    auto down = out.references_of(tx, v->second);
    if (!down) return down.error();
    if (auto s = out.votes(std::move(*up), std::move(*down)); !s) return s;
  }
  for (const auto& count : kind.counts) {
    if (!fields.has(count.field) || out.reuse(count.field)) continue;
    auto n = count_edges(tx, r.id, count);
    if (!n) return n.error();
    if (auto s = out.count(count.field, *n); !s) return s;
  }
  return {};
}

// The snapshot's text, written member by member as serializing render()'s object writes it,
// without building that object: members are appended in the order render() appends them, and
// render() never replaces one (containers, relationships and votes are rendered-only members,
// which records never store).
class TextOut {
 public:
  TextOut(std::string& out, const json::object* previous) : out_(out), previous_(previous) {}

  // The value `field` has in the earlier rendering, if there is one.
  const json::value* previous(std::string_view field) const {
    if (!previous_) return nullptr;
    auto it = previous_->find(field);
    return it == previous_->end() ? nullptr : &it->value();
  }
  // Stored members as render_own and json_change take them: all but the change description
  // (`change` false, with the href after `deleted`), or the change description alone.
  void stored(const Record& r, const std::optional<std::string>& href, bool change) {
    r.visit_stored([&](const detail::Field& field, const detail::TextOps& text,
                       const void* address, const json::value* as_written) {
      const std::string_view name = field.name;
      if ((name == wire::change_description()) != change) return;
      key(name);
      if (as_written)
        catalog::json::serialize_to(out_, *as_written);
      else
        text.write(out_, address);  // an empty optional: null
      if (name == wire::deleted() && href) {
        key(wire::href());
        catalog::json::serialize_string_to(out_, *href);
      }
    });
  }
  void member(std::string_view name, const json::value& v) {
    key(name);
    catalog::json::serialize_to(out_, v);
  }
  void member(std::string_view name, const json::object& o) {
    key(name);
    catalog::json::serialize_to(out_, o);
  }
  void votes(json::array up, json::array down) {
    key(wire::votes());
    out_ += '{';
    wire::key(out_, wire::up_votes(), true);
    out_ += std::to_string(up.size());
    wire::key(out_, wire::down_votes());
    out_ += std::to_string(down.size());
    wire::key(out_, wire::up_voters());
    catalog::json::serialize_to(out_, json::value(std::move(up)));
    wire::key(out_, wire::down_voters());
    catalog::json::serialize_to(out_, json::value(std::move(down)));
    out_ += '}';
  }

 private:
  void key(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    catalog::json::serialize_string_to(out_, name);
    out_ += ':';
  }

  std::string& out_;
  const json::object* previous_;
  bool first_ = true;
};

// A snapshot's text alone: TextOut as the output of render_containers and render_relations.
class SnapshotOut {
 public:
  explicit SnapshotOut(TextOut& text) : text_(text) {}

  bool reuse(std::string_view field) {
    const auto* v = text_.previous(field);
    if (!v) return false;
    text_.member(field, *v);
    return true;
  }
  Result<void> container(std::string_view field, std::string_view copied,
                         const ContainerCache::Entry& e) {
    text_.member(field, e.reference);
    if (e.value) text_.member(copied, *e.value);
    return {};
  }
  static Result<json::array> references_of(Tx& tx, const std::vector<Edge>& edges) {
    return references(tx, edges);
  }
  Result<void> relation(std::string_view field, json::array refs) {
    text_.member(field, json::value(std::move(refs)));
    return {};
  }
  Result<void> votes(json::array up, json::array down) {
    text_.votes(std::move(up), std::move(down));
    return {};
  }
  Result<void> count(std::string_view field, std::int64_t n) {
    text_.member(field, json::value(n));
    return {};
  }

 private:
  TextOut& text_;
};

// The snapshot's text and the entity's struct in one walk.
class TextStructOut {
 public:
  TextStructOut(TextOut& text, Record& typed) : text_(text), struct_(typed), typed_(typed) {}

  bool reuse(std::string_view field) {
    const auto* v = text_.previous(field);
    // The struct reads the earlier rendering's member first: should it not, the member is
    // rendered again, text and struct alike, and so written once.
    if (!v || !typed_.set_member(field, v)) return false;
    text_.member(field, *v);
    return true;
  }
  Result<void> container(std::string_view field, std::string_view copied,
                         const ContainerCache::Entry& e) {
    text_.member(field, e.reference);
    if (e.value) text_.member(copied, *e.value);
    return struct_.container(field, copied, e);
  }
  static Result<std::pair<json::array, std::vector<EntityReference>>>
  references_of(Tx& tx, const std::vector<Edge>& edges) {
    return both_references(tx, edges);
  }
  Result<void> relation(std::string_view field,
                        std::pair<json::array, std::vector<EntityReference>> refs) {
    text_.member(field, json::value(std::move(refs.first)));
    return struct_.relation(field, std::move(refs.second));
  }
  Result<void> votes(std::pair<json::array, std::vector<EntityReference>> up,
                     std::pair<json::array, std::vector<EntityReference>> down) {
    text_.votes(std::move(up.first), std::move(down.first));
    return struct_.votes(std::move(up.second), std::move(down.second));
  }
  Result<void> count(std::string_view field, std::int64_t n) {
    text_.member(field, json::value(n));
    return struct_.count(field, n);
  }

 private:
  TextOut& text_;
  StructOut struct_;
  Record& typed_;
};

}  // namespace

namespace {

// The JSON answer's own fields, up to its containers and relationships.
json::object json_own(Tx& tx, const Record& r, const FieldSet& fields) {
  json::object out;
  out.reserve(r.stored.size() + 8);
  render_own(tx, r, fields, out);
  return out;
}

// The JSON answer's last member: the change description as stored (one imported as written
// keeps its bytes).
void json_change(const Record& r, json::object& out) {
  if (auto cd = r.member(wire::change_description()))
    out[wire::change_description()] = std::move(*cd);
}

// The struct answer's own fields, up to its containers and relationships: extras not asked for
// read as absent (their struct defaults), and the href.
Result<void> struct_own(Tx& tx, Record& r, const FieldSet& fields) {
  for (auto extra : info(r.kind).extra_fields)
    if (!fields.has(extra) && r.stores(extra))
      if (auto s = r.set_member(extra, nullptr); !s) return s.error();
  if (auto href = href_of(tx, r)) r.base().href = std::move(*href);
  return {};
}

}  // namespace

Result<json::object> render(Tx& tx, const Record& r, const FieldSet& fields,
                            const RenderFrom& from) {
  auto out = json_own(tx, r, fields);
  JsonOut json_out(out, from.previous);
  if (auto c = render_containers(tx, r, from, json_out); !c) return c.error();
  if (auto c = render_relations(tx, r, fields, json_out); !c) return c.error();
  json_change(r, out);
  return out;
}

Result<void> render_in(Tx& tx, Record& r, const FieldSet& fields, const RenderFrom& from) {
  if (auto s = struct_own(tx, r, fields); !s) return s;
  StructOut out(r);
  if (auto c = render_containers(tx, r, from, out); !c) return c;
  return render_relations(tx, r, fields, out);
}

Result<AnyEntity> render_entity(Tx& tx, Record r, const FieldSet& fields, const RenderFrom& from) {
  if (auto s = render_in(tx, r, fields, from); !s) return s.error();
  return std::move(r.value);
}

Result<void> prefetch_records(Tx& tx, std::span<const Uuid> ids) {
  if (!tx.raw().reads_ahead()) return {};
  std::vector<std::string> keys;
  keys.reserve(ids.size());
  for (const auto& id : ids) keys.push_back(keys::entity(id));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  return tx.raw().prefetch(views, {});
}

Result<void> prefetch_rendering(Tx& tx, std::span<const Record* const> records,
                                const FieldSet& fields) {
  // First the containers' records and the edges render_relations reads, then the records the
  // relationships and votes name (their references): two round trips on PostgreSQL for the
  // whole page.
  if (!tx.raw().reads_ahead()) return {};
  struct Edges {
    Uuid id;
    Rel rel;
    bool reverse;
    bool referenced;  // the records at their other ends are read too
  };
  std::vector<Edges> lists;
  std::vector<std::string> keys;
  for (const Record* r : records) {
    const auto& kind = info(r->kind);
    if (kind.in_glossary && r->glossary) keys.push_back(keys::entity(*r->glossary));
    if (!kind.container_field.empty() && r->container) keys.push_back(keys::entity(*r->container));
    for (const auto& rf : relation_fields(r->kind))
      if (!is_extra(r->kind, rf.field) || fields.has(rf.field))
        lists.push_back({r->id, rf.rel, rf.reverse, true});
    if (kind.has_votes && fields.has(wire::votes())) lists.push_back({r->id, Rel::votes, true, true});
    for (const auto& count : kind.counts)
      if (fields.has(count.field)) lists.push_back({r->id, count.rel, false, false});
  }
  std::vector<storage::Range> ranges;
  for (const auto& l : lists)
    ranges.push_back(storage::prefix_range(l.reverse ? keys::reverse_edge_prefix(l.id, l.rel)
                                                     : keys::edge_prefix(l.id, l.rel)));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  if (auto p = tx.raw().prefetch(views, ranges); !p) return p;
  // The references of short lists only: those the first round trip fetched whole. A long one (an
  // entity's followers) is read by its rendering in batches of its own, and reading it here too
  // would read it twice.
  constexpr std::size_t short_list = 100;
  std::vector<Uuid> referenced;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (!lists[i].referenced) continue;
    auto cursor = tx.raw().scan(ranges[i], storage::Direction::forward);
    if (!cursor) return cursor.error();
    const std::size_t before = referenced.size();
    for (auto& c = *cursor; c->valid();) {
      if (referenced.size() - before == short_list) {
        referenced.resize(before);
        break;
      }
      auto e = lists[i].reverse ? keys::decode_reverse_edge(c->key()) : keys::decode_edge(c->key());
      if (!e) return fail(Errc::storage, "corrupt edge key " + keys::printable(c->key()));
      referenced.push_back(lists[i].reverse ? e->from : e->to);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  return prefetch_records(tx, referenced);
}

namespace {

// A history snapshot's text: the same bytes as serializing render()'s object with every field,
// written without building it. With `typed`, the rendered members are set in `r`'s struct in the
// same walk, each container and relationship read once for both.
Result<std::string> snapshot_text(Tx& tx, Record& r, const RenderFrom& from, bool typed) {
  const auto& fields = FieldSet::everything();
  std::string out;
  out.reserve(1024);
  out += '{';
  TextOut text(out, from.previous);
  text.stored(r, href_of(tx, r), false);  // before the struct's rendered members are set in `r`
  if (typed) {
    if (auto s = struct_own(tx, r, fields); !s) return s.error();
    TextStructOut both(text, r);
    if (auto c = render_containers(tx, r, from, both); !c) return c.error();
    if (auto c = render_relations(tx, r, fields, both); !c) return c.error();
  } else {
    SnapshotOut snapshot_out(text);
    if (auto c = render_containers(tx, r, from, snapshot_out); !c) return c.error();
    if (auto c = render_relations(tx, r, fields, snapshot_out); !c) return c.error();
  }
  text.stored(r, std::nullopt, true);
  out += '}';
  return out;
}

}  // namespace

Result<Answer> answer(Tx& tx, Record& r, AnswerForm form, const RenderFrom& from) {
  Answer out{r.kind, std::nullopt, std::nullopt};
  if (form == AnswerForm::entity) {
    if (auto s = render_in(tx, r, FieldSet::everything(), from); !s) return s.error();
    out.entity = std::move(r.value);
  } else if (form == AnswerForm::json) {
    auto rendered = render(tx, r, FieldSet::everything(), from);
    if (!rendered) return rendered.error();
    out.json = std::move(*rendered);
  }
  return out;
}

Result<Answer> snapshot_answer(Tx& tx, Record& r, AnswerForm form, const RenderFrom& from) {
  if (form == AnswerForm::json) {
    auto out = answer(tx, r, form, from);
    if (!out) return out.error();
    if (auto s = tx.put_snapshot(r, *out->json); !s) return s.error();
    return out;
  }
  const bool typed = form == AnswerForm::entity;
  auto text = snapshot_text(tx, r, from, typed);
  if (!text) return text.error();
  if (auto s = tx.put_snapshot(r, *text); !s) return s.error();
  Answer out{r.kind, std::nullopt, std::nullopt};
  if (typed) out.entity = std::move(r.value);
  return out;
}

Result<json::object> answer_json(Answer a) {
  if (!a.json) return fail(Errc::internal, "an answer asked for as JSON, made in another form");
  return std::move(*a.json);
}

Result<AnyEntity> answer_entity(Answer a) {
  if (!a.entity)
    return fail(Errc::internal, "an answer asked for as a struct, made in another form");
  return std::move(*a.entity);
}

// ---- the `fields` parameter ----

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

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_RENDER_IPP
