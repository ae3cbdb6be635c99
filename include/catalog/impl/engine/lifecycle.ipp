#ifndef CATALOG_IMPL_ENGINE_LIFECYCLE_IPP
#define CATALOG_IMPL_ENGINE_LIFECYCLE_IPP

// Delete (docs/SEMANTICS.md §6), restore (docs/SEMANTICS.md §7) and history (docs/SEMANTICS.md §3).
// Trees are walked with cursors and a stack as deep as the tree, never as wide: a recursive delete
// of 100,000 terms holds a batch, not the tree.

#include <catalog/detail/engine/engine.hpp>

#include <algorithm>
#include <set>

#include <catalog/json.hpp>

namespace catalog::engine {

namespace json = boost::json;

namespace {

constexpr std::size_t batch = 256;

std::string kind_text(Kind k) { return std::string(type_name(k)); }

/// The first child (containment edge) of `parent` after `after` (or the first one), if any.
Result<std::optional<Uuid>> next_child(Tx& tx, const Uuid& parent,
                                       const std::optional<Uuid>& after) {
  auto prefix = keys::edge_prefix(parent, Rel::contains);
  storage::Range range = storage::prefix_range(prefix);
  if (after) range.begin = keys::edge(parent, Rel::contains, *after) + '\0';
  auto cursor = tx.raw().scan(range, storage::Direction::forward);
  if (!cursor) return cursor.error();
  if (!(*cursor)->valid()) return std::optional<Uuid>();
  auto edge = keys::decode_edge((*cursor)->key());
  if (!edge) return fail(Errc::storage, "corrupt edge key " + keys::printable((*cursor)->key()));
  return std::optional<Uuid>(edge->to);
}

/// Erases every key of `range`, a batch at a time (no cursor lives across an erase).
template <class OnKey>
Result<void> erase_range(Tx& tx, const storage::Range& range, OnKey&& on_key) {
  while (true) {
    std::vector<std::string> found;
    {
      auto cursor = tx.raw().scan(range, storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid() && found.size() < batch;) {
        found.emplace_back(c->key());
        if (auto n = c->next(); !n) return n.error();
      }
    }
    if (found.empty()) return {};
    for (const auto& key : found) {
      if (auto r = on_key(key); !r) return r.error();
      if (auto e = tx.raw().erase(key); !e) return e.error();
    }
  }
}

ChangeDescription deleted_change(bool from, bool to) {
  ChangeDescription change;
  change.fields_updated.push_back(
      FieldChange{std::string(wire::deleted()), json::value(from), json::value(to)});
  return change;
}

Result<void> soft_delete_one(Tx& tx, const Principal& who, Record& r, std::uint64_t op) {
  r.base().deleted = true;
  r.deleted_by = op;
  if (auto w = write_version(tx, who, r, false, deleted_change(false, true),
                             EventType::entity_soft_deleted, false, AnswerForm::none);
      !w)
    return w.error();
  return {};
}

Result<void> restore_one(Tx& tx, const Principal& who, Record& r) {
  r.base().deleted = false;
  r.deleted_by = 0;
  if (auto w = write_version(tx, who, r, true, deleted_change(true, false),
                             EventType::entity_restored, false, AnswerForm::none);
      !w)
    return w.error();
  return {};
}

/// Removes every trace of `r`: record, name, list entries and counters, history, and every
/// edge to or from it (both directions). Appends the entityDeleted event unless `quiet`.
Result<void> hard_delete_one(Tx& tx, const Principal& who, const Record& r, bool event) {
  if (event)
    if (auto e = tx.append_event(event_text(EventType::entity_deleted, r, r.version(), who, tx.env().now_ms));
        !e)
      return e.error();
  if (auto i = tx.index(r, false); !i) return i.error();
  if (auto n = tx.erase_name(r); !n) return n.error();
  if (auto e = tx.erase(r); !e) return e.error();
  auto none = [](const std::string&) -> Result<void> { return {}; };
  if (auto h = erase_range(tx, storage::prefix_range(keys::history_prefix(r.id)), none); !h)
    return h.error();
  // Forward edges r -> x: erase the reverse key x <- r too; and the same for reverse edges.
  auto drop_reverse = [&](const std::string& key) -> Result<void> {
    auto edge = keys::decode_edge(key);
    if (!edge) return fail(Errc::storage, "corrupt edge key " + keys::printable(key));
    tx.touch_edge(r.id, edge->rel, edge->to);
    auto e = tx.raw().erase(keys::reverse_edge(edge->to, edge->rel, r.id));
    if (!e) return e.error();
    return {};
  };
  if (auto f = erase_range(tx, storage::prefix_range(keys::edge_prefix(r.id)), drop_reverse); !f)
    return f.error();
  auto drop_forward = [&](const std::string& key) -> Result<void> {
    auto edge = keys::decode_reverse_edge(key);
    if (!edge) return fail(Errc::storage, "corrupt edge key " + keys::printable(key));
    tx.touch_edge(edge->from, edge->rel, r.id);
    auto e = tx.raw().erase(keys::edge(edge->from, edge->rel, r.id));
    if (!e) return e.error();
    return {};
  };
  return erase_range(tx, storage::prefix_range(keys::reverse_edge_prefix(r.id)), drop_forward);
}

Result<Record> must_find(Tx& tx, const Uuid& id) {
  auto r = tx.find(id);
  if (!r) return r.error();
  if (!*r) return fail(Errc::storage, "dangling containment edge to " + to_string(id));
  return std::move(**r);
}

/// Walk below `root` over children for which `enter(child)` says to descend; `leave(id)` is
/// called for each entered child once the walk is done below it (a post-order), before its
/// parent's next child is looked for. The stack holds one position per level, each level's
/// next scan starting after the last child it went into, so children `leave` erased are not
/// stepped over again. A child already on the stack (a containment cycle a store may hold from
/// before docs/SEMANTICS.md §9 refused them, or from its bytes) is not entered again, so the walk
/// ends whatever is stored.
struct NoLeave {
  Result<void> operator()(const Uuid&) const { return {}; }
};
template <class Enter, class Leave = NoLeave>
Result<void> walk(Tx& tx, const Uuid& root, Enter&& enter, Leave&& leave = {}) {
  struct Level {
    Uuid id;
    std::optional<Uuid> last;
  };
  std::vector<Level> stack{{root, std::nullopt}};
  std::set<Uuid> on_stack{root};
  while (!stack.empty()) {
    auto& top = stack.back();
    auto child = next_child(tx, top.id, top.last);
    if (!child) return child.error();
    if (!*child) {
      const Uuid done = top.id;
      on_stack.erase(done);
      stack.pop_back();
      if (!stack.empty())
        if (auto l = leave(done); !l) return l.error();
      continue;
    }
    top.last = **child;
    if (on_stack.contains(**child)) continue;
    auto descend = enter(**child);
    if (!descend) return descend.error();
    if (*descend) {
      stack.push_back({**child, std::nullopt});
      on_stack.insert(**child);
    }
  }
  return {};
}

}  // namespace

std::string major_values(Kind kind, const json::object& doc) {
  std::string out;
  for (auto name : info(kind).major_fields) {
    if (const auto* v = doc.if_contains(name)) out += catalog::json::serialize(*v);
    out += '\n';
  }
  return out;
}

// Writes a new version of `r` (already changed in memory): +0.1, stamps, change description,
/// indexes moved from `was_deleted` state, snapshot, event.
Result<Answer> write_version(Tx& tx, const Principal& who, Record& r, bool was_deleted,
                             ChangeDescription change, EventType event_type, bool major,
                             AnswerForm form, const RenderFrom& from) {
  auto previous = r.version();
  auto next = major ? previous.next_major() : previous.next_minor();
  // Index entries live under the deletion state; move them when it changes.
  if (was_deleted != r.deleted()) {
    auto old = r;
    old.base().deleted = was_deleted;
    if (auto i = tx.index(old, false); !i) return i.error();
    if (auto i = tx.index(r, true); !i) return i.error();
  }
  auto& base = r.base();
  base.version = next;
  base.updated_at = tx.env().now_ms;
  base.updated_by = who.name;
  for (auto stamp : {wire::version(), wire::updated_at(), wire::updated_by()}) r.keep(stamp);
  change.previous_version = previous;
  base.change_description = std::move(change);
  r.keep(wire::change_description());
  if (auto p = tx.put(r); !p) return p.error();
  auto event = event_text(event_type, r, previous, who, tx.env().now_ms);  // before r is answered
  auto answer = snapshot_answer(tx, r, form, from);
  if (!answer) return answer.error();
  if (auto e = tx.append_event(std::move(event)); !e) return e.error();
  return answer;
}

namespace {

/// Whether `id` has a child that is not soft-deleted (docs/SEMANTICS.md §6: a non-recursive delete
/// needs none).
Result<bool> has_live_child(Tx& tx, const Uuid& id) {
  bool live_child = false;
  auto check = walk(tx, id, [&](const Uuid& child) -> Result<bool> {
    auto c = must_find(tx, child);
    if (!c) return c.error();
    live_child = live_child || !c->deleted();
    return false;  // direct children only
  });
  if (!check) return check.error();
  return live_child;
}

/// Soft delete (docs/SEMANTICS.md §6): `r` and its live descendants, all under one event offset;
/// the entity as it is now.
Result<Answer> soft_remove(Tx& tx, const Principal& who, Kind kind, Record& r, bool recursive,
                           AnswerForm form) {
  if (r.deleted()) return answer(tx, r, form);  // nothing changes
  if (!recursive) {
    auto live = has_live_child(tx, r.id);
    if (!live) return live.error();
    if (*live) return fail(Errc::not_empty, kind_text(kind) + " is not empty");
  }
  auto op_id = tx.next_event_offset();
  if (!op_id) return op_id.error();
  if (auto d = soft_delete_one(tx, who, r, *op_id); !d) return d.error();
  // Descendants deleted on their own before stay as they are (and so do theirs).
  auto d = walk(tx, r.id, [&](const Uuid& id) -> Result<bool> {
    auto c = must_find(tx, id);
    if (!c) return c.error();
    if (c->deleted()) return false;
    if (auto s = soft_delete_one(tx, who, *c, *op_id); !s) return s.error();
    return true;
  });
  if (!d) return d.error();
  return answer(tx, r, form);
}

/// Hard delete (docs/SEMANTICS.md §6): `r` and, when recursive, its whole tree, leaf by leaf.
Result<void> hard_remove(Tx& tx, const Principal& who, Kind kind, const Record& r, bool recursive) {
  auto first = next_child(tx, r.id, std::nullopt);
  if (!first) return first.error();
  if (*first && !recursive) return fail(Errc::not_empty, kind_text(kind) + " is not empty");
  // The named entity's event comes first (docs/SEMANTICS.md §13); then the tree goes leaf by leaf,
  // depth first: an entity goes when the walk is done below it. Only the way down is held, and
  // each level scans on after the children already gone: a backend that keeps a transaction's
  // erased keys until the commit (the memory backend's overlay) would otherwise step over every
  // one of them again, and a tree of n terms would take n squared steps.
  if (auto e = tx.append_event(event_text(EventType::entity_deleted, r, r.version(), who, tx.env().now_ms));
      !e)
    return e.error();
  auto removed = walk(
      tx, r.id, [](const Uuid&) -> Result<bool> { return true; },
      [&](const Uuid& id) -> Result<void> {
        auto leaf = must_find(tx, id);
        if (!leaf) return leaf.error();
        return hard_delete_one(tx, who, *leaf, true);
      });
  if (!removed) return removed.error();
  return hard_delete_one(tx, who, r, false);
}

}  // namespace

Result<std::optional<Answer>> remove(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                                     const DeleteOptions& options, AnswerForm form) {
  auto r = tx.load(kind, key, Include::all);
  if (!r) return r.error();
  if (options.expected_version && *options.expected_version != r->version())
    return fail(Errc::version_mismatch, kind_text(kind) + " " + std::string(r->fqn()) +
                                            " is at version " + r->version().to_string() +
                                            ", not " + options.expected_version->to_string());
  RecordResource resource(tx, kind, &*r);
  Operation op = Operation::delete_;
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();
  if (!options.hard_delete) {
    auto out = soft_remove(tx, who, kind, *r, options.recursive, form);
    if (!out) return out.error();
    return std::optional<Answer>(std::move(*out));
  }
  if (auto h = hard_remove(tx, who, kind, *r, options.recursive); !h) return h.error();
  return std::optional<Answer>();
}

Result<Answer> restore(Tx& tx, const Principal& who, Kind kind, const Uuid& id, AnswerForm form) {
  auto r = tx.load(kind, EntityKey::by_id(id), Include::all);
  if (!r) return r.error();
  RecordResource resource(tx, kind, &*r);
  Operation op = Operation::edit_all;
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();
  if (r->deleted()) {
    auto refused = [&](const Record& c) {
      return fail(Errc::container_deleted, "Can't restore " + kind_text(kind) + " " +
                                               std::string(r->fqn()) + ": restore " +
                                               kind_text(c.kind) + " " + std::string(c.fqn()) +
                                               " first");
    };
    // What this restore brings back: `r`, and the descendants the same delete took. Found
    // first only for a kind whose entities may have several containers (teams), so that none
    // of them comes back under a container that delete took and this restore does not bring
    // back; a stored containment cycle's other members are among them.
    std::set<Uuid> returning{r->id};
    const bool many_containers = has_container_edges(kind);
    if (many_containers && r->deleted_by != 0) {
      auto w = walk(tx, r->id, [&](const Uuid& child) -> Result<bool> {
        if (returning.contains(child)) return false;
        auto c = must_find(tx, child);
        if (!c) return c.error();
        if (!c->deleted() || c->deleted_by != r->deleted_by) return false;
        returning.insert(child);
        return true;
      });
      if (!w) return w.error();
      for (const auto& id : returning) {
        if (id == r->id) continue;
        auto parents = tx.edges(id, Rel::contains, true);
        if (!parents) return parents.error();
        for (const auto& p : *parents) {
          if (returning.contains(p.other)) continue;
          auto c = must_find(tx, p.other);
          if (!c) return c.error();
          if (c->deleted() && c->deleted_by == r->deleted_by) return refused(*c);
        }
      }
    }
    // The containers of `r` itself (docs/SEMANTICS.md §7): service, glossary, parent term or
    // domain; and the entities a relation field names by containment edges to it (every parent
    // team of a team). One that this restore brings back (a cycle) is no obstacle.
    std::vector<Uuid> containers;
    for (const auto& c : {r->container, r->glossary})
      if (c) containers.push_back(*c);
    if (many_containers) {
      auto parents = tx.edges(r->id, Rel::contains, true);
      if (!parents) return parents.error();
      for (const auto& p : *parents) containers.push_back(p.other);
    }
    for (const auto& container : containers) {
      if (returning.contains(container)) continue;
      auto c = must_find(tx, container);
      if (!c) return c.error();
      if (c->deleted()) return refused(*c);
    }
    auto op_id = r->deleted_by;
    if (auto s = restore_one(tx, who, *r); !s) return s.error();
    // Bring back exactly what the same delete took: descendants marked with its operation.
    auto w = walk(tx, r->id, [&](const Uuid& child) -> Result<bool> {
      auto c = must_find(tx, child);
      if (!c) return c.error();
      if (!c->deleted() || op_id == 0 || c->deleted_by != op_id) return false;
      if (auto s = restore_one(tx, who, *c); !s) return s.error();
      return true;
    });
    if (!w) return w.error();
  }
  return answer(tx, *r, form);
}


Result<History> history(Tx& tx, Kind kind, const Uuid& id) {
  auto r = tx.load(kind, EntityKey::by_id(id), Include::all);
  if (!r) return r.error();
  History h;
  h.entity_type = type_name(kind);
  auto current = render(tx, *r, FieldSet::everything());
  if (!current) return current.error();
  h.versions.push_back(catalog::json::serialize(*current));
  auto current_key = keys::history(r->id, r->version());
  auto cursor = tx.raw().scan(storage::prefix_range(keys::history_prefix(r->id)),
                              storage::Direction::reverse);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid();) {
    if (c->key() != current_key) h.versions.emplace_back(c->value());
    if (auto n = c->next(); !n) return n.error();
  }
  return h;
}

Result<json::object> version(Tx& tx, Kind kind, const Uuid& id, std::string_view text) {
  auto v = Version::parse(text);
  if (!v && v.error().code() != Errc::not_found) return v.error();  // not a version: 400
  auto r = tx.load(kind, EntityKey::by_id(id), Include::all);
  if (!r) return r.error();
  if (!v)  // well formed, and past any version a catalog can write
    return fail(Errc::not_found, kind_text(kind) + " instance for " + to_string(id) +
                                     " and version " + std::string(text) + " not found");
  if (*v == r->version()) return render(tx, *r, FieldSet::everything());
  auto snapshot = tx.raw().get(keys::history(r->id, *v));
  if (!snapshot) return snapshot.error();
  if (!*snapshot || *v > r->version())
    return fail(Errc::not_found, kind_text(kind) + " instance for " + to_string(id) +
                                     " and version " + v->to_string() + " not found");
  return decode_snapshot(**snapshot);
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_LIFECYCLE_IPP
