#ifndef CATALOG_IMPL_ENGINE_VERIFY_IPP
#define CATALOG_IMPL_ENGINE_VERIFY_IPP

// The integrity check (like SQLite's `PRAGMA integrity_check`). It reads the
// whole store in one read transaction with one forward scan over every key; each key is checked
// by the function of its family (its tag byte, keys.hpp), and what a key refers to is checked by
// point lookups, never by loading a range. The state kept between keys is a few counters (the
// list prefix being counted, the entity whose history keys are being passed, the last event
// offset), so memory does not grow with the store; only the list of problems does, and it stops
// at `max_problems`.
//
// Each invariant is checked from both sides: an entity checks that its name, list entries and
// history exist; a name, list entry or history key checks that its entity exists and agrees.
// A missing key is reported under the key that should be there.

#include <catalog/detail/engine/verify.hpp>

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/validate.hpp>
#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/search/check.hpp>

#include <catalog/detail/json_mapping.hpp>
#include <catalog/fqn.hpp>
#include <catalog/json.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace catalog {

namespace engine {
namespace {

namespace json = boost::json;

// Like SQLite's integrity_check limit: a store broken everywhere gives a readable answer.
constexpr std::size_t max_problems = 1000;

using keys::id_size;
using keys::list_prefix_size;
constexpr std::string_view event_offset_meta = "event_offset";
constexpr std::string_view key_schema_meta = "key_schema";

std::string entity_text(const Record& r) {
  return std::string(type_name(r.kind)) + " " + std::string(r.fqn()) + " (" + to_string(r.id) + ")";
}

// Whether an edge of `rel` may go from an entity of kind `from` to one of kind `to`, as create
// and patch link them: a relationship field of either end names it (the kinds' traits), a
// container holds it, or it is a caller's vote.
bool edge_kinds_allowed(Rel rel, Kind from, Kind to) {
  if (rel == Rel::votes) return info(from).principal && info(to).has_votes;
  if (rel == Rel::contains && info(to).containers.contains(from)) return true;
  auto named = [&](Kind k, Kind other, bool reverse) {
    for (const auto& rf : info(k).relations)
      if (rf.rel == rel && rf.reverse == reverse && rf.others.contains(other)) return true;
    return false;
  };
  return named(from, to, false) || named(to, from, true);
}

// A record's JSON, parsed as engine::decode parses it (parse_stored).
std::optional<json::value> parse_record(std::string_view bytes, std::string& problem) {
  auto v = parse_stored(bytes);
  if (!v) {
    problem = "not JSON (" + v.error().message() + ")";
    return std::nullopt;
  }
  return std::move(*v);
}

// What engine::decode reads, checked before it is called: decode trusts what encode wrote and
// does not check the types of the members it reads. Returns why the record would not decode.
std::optional<std::string> record_shape_problem(const json::value& v) {
  const auto* o = v.if_object();
  if (!o) return std::string("not a JSON object");
  auto k = o->find("k");
  if (k == o->end() || !k->value().is_string()) return std::string("no kind (\"k\")");
  if (!kind_from_type(k->value().get_string())) return std::string("unknown kind");
  for (const char* member : {"c", "g"})
    if (auto it = o->find(member); it != o->end())
      if (!it->value().is_string() || !parse_uuid(it->value().get_string()))
        return "\"" + std::string(member) + "\" is not an id";
  if (auto d = o->find("d"); d != o->end()) {
    const auto& n = d->value();
    if (!n.is_uint64() && !(n.is_int64() && n.get_int64() >= 0))
      return std::string("\"d\" is not an event offset");
  }
  auto doc = o->find(envelope::document);
  if (doc == o->end() || !doc->value().is_object()) return std::string("no document (\"doc\")");
  const auto& d = doc->value().get_object();
  auto id = d.find(wire::id());
  if (id == d.end() || !id->value().is_string() || !parse_uuid(id->value().get_string()))
    return std::string("the document has no valid id");
  return std::nullopt;
}

// The record at `bytes` as engine::decode reads it, or why it cannot be read.
struct Decoded {
  std::optional<Record> record;
  std::string problem;
};

Decoded decode_record(std::string_view bytes) {
  Decoded out;
  auto v = parse_record(bytes, out.problem);
  if (!v) return out;
  if (auto shape = record_shape_problem(*v)) {
    out.problem = *shape;
    return out;
  }
  auto r = decode(bytes);
  if (!r) {
    out.problem = r.error().message();
    return out;
  }
  out.record = std::move(*r);
  return out;
}

// What other keys are checked against (kind, containers, name, FQN, version, deletion), read
// with one parse: check_entity decodes each record fully once; the keys that refer to it only
// need this. Nullopt when the record would not decode (reported under its own key).
std::optional<Record> summarize(std::string_view bytes) {
  std::string ignored;
  auto v = parse_record(bytes, ignored);
  if (!v || record_shape_problem(*v)) return std::nullopt;
  const auto& o = v->get_object();
  Record r(*kind_from_type(o.at("k").get_string()));
  if (auto c = o.find("c"); c != o.end()) r.container = *parse_uuid(c->value().get_string());
  if (auto g = o.find("g"); g != o.end()) r.glossary = *parse_uuid(g->value().get_string());
  if (auto d = o.find("d"); d != o.end()) r.deleted_by = d->value().to_number<std::uint64_t>();
  const auto& doc = o.at(envelope::document).get_object();
  r.id = *parse_uuid(doc.at(wire::id()).get_string());
  auto& base = r.base();
  bool whole = true;
  auto read = [&](std::string_view member, auto& field) {
    auto it = doc.find(member);
    whole = whole && it != doc.end() && detail::from_json(it->value(), field, detail::quiet_path);
  };
  read(wire::name(), base.name);
  read(wire::fqn(), base.fully_qualified_name);
  read(wire::version(), base.version);
  read(wire::deleted(), base.deleted);
  if (!whole) return std::nullopt;
  return r;
}

// Whether `v` is the unsigned integer `n` (parsed text gives an int64 where it can).
bool holds(const json::value& v, std::uint64_t n) {
  if (v.is_uint64()) return v.get_uint64() == n;
  if (v.is_int64()) return v.get_int64() >= 0 && static_cast<std::uint64_t>(v.get_int64()) == n;
  return false;
}

std::optional<Version> version_member(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  Version v;
  if (it == o.end() || !detail::from_json(it->value(), v, name)) return std::nullopt;
  return v;
}

class Verifier {
 public:
  Verifier(Tx& tx, const IntegrityProgress& progress)
      : tx_(tx),
        txn_(tx.raw()),
        progress_(progress),
        search_(tx, [this](std::string_view key, std::string message) {
          problem(key, std::move(message));
        }) {}

  Result<std::vector<IntegrityProblem>> run() {
    // An index that is not built, or being built (a reindex under way, in another process, or
    // left by one interrupted, with a store opened read-only), is one problem, not one per
    // document it lacks: its keys are checked only when it is complete.
    auto indexed = search_index::current(tx_);
    if (!indexed) return indexed.error();
    index_checked_ = *indexed;
    auto cursor = txn_.scan(storage::Range{}, storage::Direction::forward);
    if (!cursor) return cursor.error();
    std::uint64_t keys = 0, entities = 0;
    std::string previous;
    for (auto& c = *cursor; c->valid() && !full();) {
      // A damaged B-tree can lead a scan back to keys it passed (and round for ever).
      if (keys > 0 && c->key() <= previous)
        return fail(Errc::storage, "the store is corrupt: key " + keys::printable(c->key()) +
                                       " comes after key " + keys::printable(previous) +
                                       " in a forward scan");
      previous.assign(c->key());
      if (c->key().starts_with('E')) ++entities;
      if (auto r = visit(c->key(), c->value()); !r) return r.error();
      if (++keys % progress_every == 0 && progress_) progress_(keys, entities);
      if (auto n = c->next(); !n) return n.error();
    }
    if (progress_) progress_(keys, entities);
    if (!full()) {
      if (auto r = end_list_prefix(); !r) return r.error();
      if (auto r = end_events(); !r) return r.error();
      if (auto r = check_key_schema(); !r) return r.error();
      if (index_checked_) {
        if (auto r = search_.finish(); !r) return r.error();
      } else if (!index_named_ && !index_rebuilding_) {
        problem(keys::meta(search_index::analyzer_meta),
                "missing: the search index (a read-write open builds it)");
      }
    }
    if (full())
      problems_.push_back({"", "stopped after " + std::to_string(max_problems) + " problems"});
    return std::move(problems_);
  }

 private:
  // Keys between two calls of `progress_`.
  static constexpr std::uint64_t progress_every = 4096;

  Tx& tx_;
  // Whether the search index is complete and of this version, so its keys are checked.
  bool index_checked_ = true;
  // Whether the store names the version of its index (M search_analyzer), and whether a reindex
  // is under way (M search_reindex): either is the one problem of an index not checked.
  bool index_named_ = false;
  bool index_rebuilding_ = false;
  storage::Transaction& txn_;
  const IntegrityProgress& progress_;
  std::vector<IntegrityProblem> problems_;
  // The search index's keys (search_index::Checker).
  search_index::Checker search_;

  // The list prefix (L kind state scope) being passed, its counter's prefix (C kind state scope)
  // and its entries so far, per counter shard.
  std::string list_prefix_;
  std::string list_counter_prefix_;
  std::array<std::int64_t, keys::counter_shards> list_counts_{};
  // Teams whose ancestry holds no cycle (true), or that are on the walk of acyclic_ancestry.
  std::map<Uuid, bool> acyclic_;
  // The entity whose history keys are being passed, and whether its record exists.
  std::optional<Uuid> history_of_;
  bool history_owner_exists_ = false;
  // The owner whose `owns` edges are being passed, and whether its kind's rule lets it own.
  std::optional<Uuid> owner_checked_;
  bool owner_may_own_ = true;
  // The last event offset seen (offsets are dense from 1).
  std::uint64_t last_event_ = 0;

  bool full() const { return problems_.size() >= max_problems; }

  void problem(std::string_view key, std::string message) {
    if (!full()) problems_.push_back({keys::printable(key), std::move(message)});
  }

  Result<void> visit(std::string_view key, std::string_view value) {
    if (key.empty()) {
      problem(key, "empty key");
      return {};
    }
    if (key[0] != 'L')
      if (auto r = end_list_prefix(); !r) return r.error();
    switch (key[0]) {
    case 'C': return check_counter(key, value);
    case 'E': return check_entity(key, value);
    case 'H': return check_history_key(key, value);
    case 'L': return check_list_entry(key, value);
    case 'M': return check_meta(key, value);
    case 'N': return check_name(key, value);
    case 'Q': return check_reverse_edge(key, value);
    case 'R': return check_edge(key, value);
    case 'V': return check_event(key, value);
    case 'F':
    case 'G':
    case 'J':
    case 'K':
    case 'T':
    case 'X':
    case 'Y': return index_checked_ ? search_.key(key, value) : Result<void>{};
    default: problem(key, "unknown key family (no tag of the key schema)"); return {};
    }
  }

  Result<bool> exists(std::string_view key) {
    auto v = txn_.get(key);
    if (!v) return v.error();
    return v->has_value();
  }

  // The entity `id` as a referring key sees it: absent, or present with its summary (none when
  // the record does not decode: that is reported under its own key).
  struct Found {
    Uuid id{};
    bool present = false;
    std::optional<Record> record;
  };
  // The last entities found, by the last byte of their (random) id: edges keep pointing to the
  // same users, teams and services, and a bounded cache spares most of their lookups.
  std::array<std::optional<Found>, 256> recent_;

  Result<Found> find(const Uuid& id) {
    auto& slot = recent_[id.data[15]];
    if (slot && slot->id == id) return *slot;
    auto bytes = txn_.get(keys::entity(id));
    if (!bytes) return bytes.error();
    Found found{id, bytes->has_value(), std::nullopt};
    if (found.present) found.record = summarize(**bytes);
    slot = found;
    return found;
  }

  // ---- C kind state scope shard -> count ----

  Result<void> check_counter(std::string_view key, std::string_view value) {
    if (key.size() == list_prefix_size) {
      problem(key, "counter of key schema 1 (one per list); opening the store converts them");
      return {};
    }
    const auto counter = keys::decode_counter(key);
    if (!counter || !counter->shard) {
      problem(key, "malformed counter key");
      return {};
    }
    const auto count = keys::decode_count(value);
    if (!count) {
      problem(key, "counter value is not 8 bytes");
      return {};
    }
    const auto n = *count;
    // The engine erases a counter that reaches zero (Tx::add_count), so a stored one is > 0.
    if (n <= 0) problem(key, "counter is " + std::to_string(n) + "; a stored counter is positive");
    // The shards of a list with entries are compared with them when the entries have been
    // passed (end_list_prefix); a counter of a list with no entries at all is found here.
    const auto prefix = keys::list_prefix(counter->kind, counter->deleted, counter->scope);
    auto cursor = txn_.scan(storage::prefix_range(prefix), storage::Direction::forward);
    if (!cursor) return cursor.error();
    if (!(*cursor)->valid())
      problem(key, "counter is " + std::to_string(n) + " but its list has no entries");
    return {};
  }

  // ---- E id -> record ----

  Result<void> check_entity(std::string_view key, std::string_view value) {
    const auto key_id = keys::decode_entity(key);
    if (!key_id) {
      problem(key, "malformed entity key");
      return {};
    }
    auto decoded = decode_record(value);
    if (!decoded.record) {
      problem(key, "entity record does not decode: " + decoded.problem);
      return {};
    }
    const Record& r = *decoded.record;
    if (r.id != *key_id) {
      problem(key, "entity record holds id " + to_string(r.id) + ", not the id of its key");
      return {};
    }
    if (r.deleted() != (r.deleted_by != 0))
      problem(key, r.deleted() ? "soft-deleted entity without the operation that deleted it"
                               : "live entity marked as deleted by an operation");
    if (auto p = check_deleted_by(key, r); !p) return p.error();
    // The value rules every write keeps (docs/SEMANTICS.md §2), as import checks them.
    if (auto v = check_entity_values(r); !v) problem(key, entity_text(r) + ": " + v.error().message());
    if (auto v = check_stored_tags(r); !v) problem(key, entity_text(r) + ": " + v.error().message());
    if (r.fqn().size() > fqn::max_fqn_bytes)
      problem(key, "FQN of " + entity_text(r) + " is longer than " +
                       std::to_string(fqn::max_fqn_bytes) + " bytes");
    if (auto p = check_entity_name(key, r); !p) return p.error();
    if (auto p = check_entity_lists(r); !p) return p.error();
    if (auto p = check_entity_container(key, r); !p) return p.error();
    if (auto p = check_entity_ancestry(key, r); !p) return p.error();
    if (index_checked_)
      if (auto p = search_.entity(r); !p) return p.error();
    return check_entity_history(r);
  }

  // docs/SEMANTICS.md §6 and §7: a soft-deleted entity's deletedBy is the entitySoftDeleted
  // event of the delete that took it, which named it or an ancestor it was taken with (a
  // restore of that ancestor brings back what the event took). Checked where it is local: an
  // entity the event does not name has a parent the same event took, so each entity taken by a
  // recursive delete leads up to the one it named. An offset with no event is reported with the
  // events (past the last one).
  Result<void> check_deleted_by(std::string_view key, const Record& r) {
    if (r.deleted_by == 0) return {};
    auto stored = txn_.get(keys::event(r.deleted_by));
    if (!stored) return stored.error();
    if (!*stored) return {};
    const std::string by = "deleted by event " + std::to_string(r.deleted_by);
    auto v = parse_stored(**stored);
    const auto* e = v ? v->if_object() : nullptr;
    const auto* type = e ? e->if_contains(wire::event_type()) : nullptr;
    const auto* named = e ? e->if_contains(wire::entity_id()) : nullptr;
    if (!type || !named || !named->is_string()) return {};  // reported with the events
    if (!type->is_string() || type->get_string() != "entitySoftDeleted") {
      problem(key, entity_text(r) + " is " + by + ", which is not a soft delete");
      return {};
    }
    auto id = parse_uuid(named->get_string());
    if (!id || *id == r.id) return {};
    auto parents = tx_.edges(r.id, Rel::contains, true);
    if (!parents) return parents.error();
    for (const auto& p : *parents) {
      auto parent = tx_.find(p.other);
      if (!parent) return parent.error();
      if (*parent && (*parent)->deleted_by == r.deleted_by) return {};
    }
    problem(key, entity_text(r) + " is " + by + ", the delete of " + to_string(*id) +
                     ", which took none of its parents");
    return {};
  }

  // docs/SEMANTICS.md §9: a team keeps the team type rules with its parents and children, and is
  // never its own ancestor.
  Result<void> check_entity_ancestry(std::string_view key, const Record& r) {
    const auto* team = std::get_if<Team>(&r.value);
    if (!team) return {};
    auto records = [&](bool reverse) -> Result<std::vector<Record>> {
      auto edges = tx_.edges(r.id, Rel::contains, reverse);
      if (!edges) return edges.error();
      std::vector<Record> out;
      for (const auto& e : *edges) {
        auto other = tx_.find(e.other);
        if (!other) return other.error();
        if (*other) out.push_back(std::move(**other));  // a missing one: reported by its edge
      }
      return out;
    };
    auto parents = records(true);
    if (!parents) return parents.error();
    auto children = records(false);
    if (!children) return children.error();
    if (auto rules = check_team_rules(team->team_type, *parents, *children); !rules)
      problem(key, entity_text(r) + ": " + rules.error().message());
    auto acyclic = acyclic_ancestry(r.id);
    if (!acyclic) return acyclic.error();
    if (*acyclic) return {};
    // A cycle above it: whether it is on one, and which, from its parents.
    std::vector<Uuid> ids;
    for (const auto& p : *parents) ids.push_back(p.id);
    auto cycle = team_cycle(tx_, r.id, ids);
    if (!cycle) return cycle.error();
    if (*cycle) problem(key, entity_text(r) + " is its own ancestor: " + **cycle);
    return {};
  }

  // Whether no cycle is reachable upward from `team` (through the parents of each team): a walk
  // up its ancestry that remembers each team whose ancestry it finished, so the whole check
  // reads each team's parents about once, however deep the hierarchy (team_cycle, which walks
  // a team's descendants, is left for the teams above a cycle).
  Result<bool> acyclic_ancestry(const Uuid& team) {
    if (auto known = acyclic_.find(team); known != acyclic_.end()) return known->second;
    struct Open {
      Uuid id;
      std::vector<Uuid> parents;
      std::size_t next = 0;
    };
    std::vector<Open> path;  // the teams being walked, each a parent of the one before
    const auto open = [&](const Uuid& id) -> Result<void> {
      auto edges = tx_.edges(id, Rel::contains, true);
      if (!edges) return edges.error();
      Open o{id, {}, 0};
      for (const auto& e : *edges) o.parents.push_back(e.other);
      acyclic_.emplace(id, false);  // on the path: reaching it again closes a cycle
      path.push_back(std::move(o));
      return {};
    };
    if (auto o = open(team); !o) return o.error();
    while (!path.empty()) {
      auto& top = path.back();
      if (top.next == top.parents.size()) {
        acyclic_[top.id] = true;
        path.pop_back();
        continue;
      }
      const Uuid parent = top.parents[top.next++];
      auto known = acyclic_.find(parent);
      if (known == acyclic_.end()) {
        if (auto o = open(parent); !o) return o.error();
      } else if (!known->second) {
        // A cycle: the teams still on the path are not known either way.
        for (const auto& o : path) acyclic_.erase(o.id);
        return false;
      }
    }
    return true;
  }

  Result<void> check_entity_name(std::string_view key, const Record& r) {
    auto name_key = keys::name(r.kind, r.fqn());
    auto id = txn_.get(name_key);
    if (!id) return id.error();
    if (!*id)
      problem(name_key, "missing: name entry of " + entity_text(r));
    else if (**id != keys::id_bytes(r.id))
      problem(name_key, "name entry of " + entity_text(r) + " points to another id");
    // The FQN is the container's FQN and the quoted name (fqn::append), checked where the
    // container is; a top-level entity's FQN is its quoted name.
    if (!r.container && r.fqn() != fqn::append("", r.name()))
      problem(key, "FQN " + std::string(r.fqn()) + " is not the quoted name of " + entity_text(r));
    return {};
  }

  Result<void> check_entity_lists(const Record& r) {
    std::vector<Uuid> scopes{keys::all_scope};
    if (service_kind(r.kind)) {
      if (!r.container) {
        problem(keys::entity(r.id),
                "entity of " + std::string(type_name(r.kind)) + " has no service (its list scope)");
      } else {
        scopes.push_back(*r.container);
      }
    }
    for (const auto& scope : scopes) {
      for (bool deleted : {false, true}) {
        auto key = keys::list(r.kind, deleted, scope, r.name(), r.id);
        auto present = exists(key);
        if (!present) return present.error();
        bool wanted = deleted == r.deleted();
        if (*present && !wanted)
          problem(key, "list entry for the other deletion state of " + entity_text(r));
        if (!*present && wanted) problem(key, "missing: list entry of " + entity_text(r));
      }
    }
    return {};
  }

  Result<void> check_entity_container(std::string_view key, const Record& r) {
    const auto placement = info(r.kind).placement;
    const bool needs_container = placement == Placement::in_container;
    const bool may_have_container = placement != Placement::top_level;
    if (!r.container) {
      if (needs_container) problem(key, "no container for " + entity_text(r));
      return {};
    }
    if (!may_have_container) {
      problem(key, entity_text(r) + " has a container; its kind has none");
      return {};
    }
    auto c = find(*r.container);
    if (!c) return c.error();
    if (!c->present) {
      problem(key,
              "container " + to_string(*r.container) + " of " + entity_text(r) + " does not exist");
      return {};
    }
    auto edge_key = keys::edge(*r.container, Rel::contains, r.id);
    auto edge = exists(edge_key);
    if (!edge) return edge.error();
    if (!*edge) problem(edge_key, "missing: containment edge to " + entity_text(r));
    if (!c->record) return {};  // reported under its own key
    const Record& container = *c->record;
    // docs/SEMANTICS.md §6, §7: a soft delete takes what a container holds with it, and a
    // restore brings nothing back under a deleted container.
    if (container.deleted() && !r.deleted())
      problem(key, "live " + entity_text(r) + " is in soft-deleted " + entity_text(container));
    if (!edge_kinds_allowed(Rel::contains, container.kind, r.kind))
      problem(key,
              entity_text(r) + " is in " + entity_text(container) + ", which cannot contain it");
    if (r.fqn() != fqn::append(container.fqn(), r.name()))
      problem(key, "FQN " + std::string(r.fqn()) + " does not extend its container's FQN " +
                       std::string(container.fqn()));
    if (info(r.kind).in_glossary) {
      auto glossary_of_container = info(container.kind).glossary_root
                                       ? std::optional<Uuid>(container.id)
                                       : container.glossary;
      if (!r.glossary || r.glossary != glossary_of_container)
        problem(key, "glossary of " + entity_text(r) + " is not its container's glossary");
    }
    return {};
  }

  // ---- H id version -> snapshot ----

  // The snapshots of `r` in version order, read with a cursor of their own: a chain from 0.1
  // where each snapshot's changeDescription.previousVersion is the snapshot before it (every
  // version write_version makes is recorded), ending at the entity's current version.
  Result<void> check_entity_history(const Record& r) {
    const auto prefix = keys::history_prefix(r.id);
    auto cursor = txn_.scan(storage::prefix_range(prefix), storage::Direction::forward);
    if (!cursor) return cursor.error();
    std::optional<Version> last;
    std::optional<std::string> last_major;  // major_values of the snapshot `last`, if it decoded
    const Version current = r.version();
    for (auto& c = *cursor; c->valid() && !full();) {
      if (auto p = check_snapshot(r, c->key(), c->value(), last, last_major); !p) return p.error();
      if (auto n = c->next(); !n) return n.error();
    }
    if (!last || *last < current)
      problem(keys::history(r.id, current), "missing: snapshot of the current version " +
                                                current.to_string() + " of " + entity_text(r));
    return {};
  }

  Result<void> check_snapshot(const Record& r, std::string_view key, std::string_view value,
                              std::optional<Version>& last,
                              std::optional<std::string>& last_major) {
    const auto history_key = keys::decode_history(key);
    if (!history_key) {
      problem(key, "malformed history key");
      return {};
    }
    const auto v = history_key->version;
    auto snapshot = decode_snapshot(value);
    if (!snapshot) {
      problem(key, "snapshot does not decode as a JSON object");
      last = v;
      last_major.reset();
      return {};
    }
    auto major = major_values(r.kind, *snapshot);
    auto id = snapshot->find(wire::id());
    if (id == snapshot->end() || !id->value().is_string() ||
        id->value().get_string() != to_string(r.id))
      problem(key, "snapshot is not of entity " + to_string(r.id));
    if (version_member(*snapshot, wire::version()) != v)
      problem(key, "snapshot's version is not " + v.to_string() + ", the version of its key");
    if (v > r.version())
      problem(key, "snapshot of version " + v.to_string() + ", newer than the entity's " +
                       r.version().to_string());
    std::optional<Version> previous;
    if (auto cd = snapshot->find(wire::change_description());
        cd != snapshot->end() && cd->value().is_object())
      previous = version_member(cd->value().get_object(), wire::previous_version());
    if (v == Version::initial()) {
      if (previous) problem(key, "first version with a previousVersion");
    } else if (!previous) {
      problem(key, "snapshot of version " + v.to_string() + " without a previousVersion");
    } else if (previous->tenths() + 1 != v.tenths() && previous->tenths() + 10 != v.tenths()) {
      problem(key, "version " + v.to_string() + " does not follow its previousVersion " +
                       previous->to_string() + " (+0.1 or +1.0)");
    } else if (!last || *previous > *last) {
      problem(keys::history(r.id, *previous), "missing: snapshot of version " +
                                                  previous->to_string() + " of " + entity_text(r) +
                                                  ", the version before " + v.to_string());
    } else if (*previous != *last) {
      problem(key, "previousVersion is " + previous->to_string() +
                       " but the snapshot before it is of version " + last->to_string());
    } else if (last_major && (major != *last_major) != (v.tenths() == last->tenths() + 10)) {
      // docs/SEMANTICS.md §3: 1.0 exactly when a major field changed.
      problem(key, major != *last_major
                       ? "version " + v.to_string() + " changes a major field of version " +
                             last->to_string() + " but is not 1.0 after it"
                       : "version " + v.to_string() + " is 1.0 after version " +
                             last->to_string() + " but changes no major field");
    }
    last = v;
    last_major = std::move(major);
    return {};
  }

  // History keys are checked with their entity; here only that the entity exists (once per id,
  // the keys of one id being adjacent), and that an orphan's snapshots decode.
  Result<void> check_history_key(std::string_view key, std::string_view value) {
    const auto history_key = keys::decode_history(key);
    if (!history_key) {
      problem(key, "malformed history key");
      return {};
    }
    const auto id = history_key->id;
    if (history_of_ != id) {
      history_of_ = id;
      auto present = exists(keys::entity(id));
      if (!present) return present.error();
      history_owner_exists_ = *present;
    }
    if (!history_owner_exists_) {
      problem(key, "snapshot of a missing entity " + to_string(id));
      if (!decode_snapshot(value)) problem(key, "snapshot does not decode as a JSON object");
    }
    return {};
  }

  // ---- L kind state scope name 0x00 id -> "" ----

  Result<void> check_list_entry(std::string_view key, std::string_view value) {
    const auto entry = keys::decode_list(key);
    if (!entry) {
      problem(key, "malformed list key");
      return {};
    }
    auto prefix = keys::list_prefix(entry->kind, entry->deleted, entry->scope);
    if (prefix != list_prefix_) {
      if (auto e = end_list_prefix(); !e) return e.error();
      list_prefix_ = std::move(prefix);
      list_counter_prefix_ = keys::counter_prefix(entry->kind, entry->deleted, entry->scope);
    }
    ++list_counts_[keys::counter_shard(entry->id)];
    if (!value.empty()) problem(key, "list entry has a value; entries are empty");
    const auto kind = entry->kind;
    const bool deleted = entry->deleted;
    const auto scope = entry->scope;
    const auto name = entry->name;
    const auto id = entry->id;
    auto found = find(id);
    if (!found) return found.error();
    if (!found->present) {
      problem(key, "list entry of a missing entity " + to_string(id));
      return {};
    }
    if (!found->record) return {};  // reported under its own key
    const Record& r = *found->record;
    if (r.kind != kind)
      problem(key,
              "list entry of kind " + std::string(type_name(kind)) + " for " + entity_text(r));
    else if (r.deleted() != deleted)
      problem(key, std::string("list entry of the ") + (deleted ? "deleted" : "live") +
                       " state for " + entity_text(r));
    else if (r.name() != name)
      problem(key, "list entry under another name for " + entity_text(r));
    else if (scope != keys::all_scope && scope != r.scope())
      problem(key, "list entry in the scope of " + to_string(scope) + " for " + entity_text(r));
    return {};
  }

  // The entries of the list prefix just passed match its counter, shard by shard: each shard
  // counts the entries whose id falls in it (keys::counter_shard), and a shard with none has no
  // key. At most counter_shards keys are read.
  Result<void> end_list_prefix() {
    if (list_prefix_.empty()) return {};
    std::array<std::int64_t, keys::counter_shards> stored{};
    std::array<bool, keys::counter_shards> present{};
    const auto& counter_prefix = list_counter_prefix_;
    auto cursor = txn_.scan(storage::prefix_range(counter_prefix), storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid();) {
      // Other keys under the prefix are reported as malformed by check_counter.
      const auto counter = keys::decode_counter(c->key());
      const auto count = keys::decode_count(c->value());
      if (counter && counter->shard && count) {
        present[*counter->shard] = true;
        stored[*counter->shard] = *count;
      }
      if (auto n = c->next(); !n) return n.error();
    }
    for (unsigned shard = 0; shard < keys::counter_shards; ++shard) {
      const auto counted = list_counts_[shard];
      const auto key = counter_prefix + static_cast<char>(shard);
      if (!present[shard] && counted != 0)
        problem(key, "missing: counter of the " + std::to_string(counted) +
                         " entries of its list in shard " + std::to_string(shard));
      else if (present[shard] && stored[shard] != counted)
        problem(key, "counter is " + std::to_string(stored[shard]) + " but its list has " +
                         std::to_string(counted) + " entries in shard " + std::to_string(shard));
    }
    list_prefix_.clear();
    list_counts_.fill(0);
    return {};
  }

  // ---- M name -> metadata ----

  Result<void> check_meta(std::string_view key, std::string_view value) {
    const auto name = keys::decode_meta(key).value_or(std::string_view());
    if (name == event_offset_meta) {
      if (value.size() != 8) problem(key, "last event offset is not 8 bytes");
    } else if (name == key_schema_meta) {
      if (value.size() != 8 || keys::decode_u64(value) != keys::key_schema)
        problem(key, "key schema is not " + std::to_string(keys::key_schema) +
                         ", the one this library writes");
    } else if (name == search_index::analyzer_meta) {
      index_named_ = true;
      if (value.size() != 8 || keys::decode_u64(value) != search_index::index_version)
        problem(key, "search index of another version; a read-write open rebuilds it");
    } else if (name == search_index::reindex_meta) {
      index_rebuilding_ = true;
      problem(key, "a reindex under way, or interrupted; a read-write open finishes it");
    } else {
      problem(key, "unknown metadata key");
    }
    return {};
  }

  // Store::open records the key schema (upgrade.ipp), so every opened store has it.
  Result<void> check_key_schema() {
    const auto key = keys::meta(key_schema_meta);
    auto present = exists(key);
    if (!present) return present.error();
    if (!*present) problem(key, "missing: the key schema record");
    return {};
  }

  // ---- N kind fqn-key -> id ----

  Result<void> check_name(std::string_view key, std::string_view value) {
    const auto name_key = keys::decode_name(key);
    if (!name_key) {
      problem(key, "malformed name key");
      return {};
    }
    const auto kind = name_key->kind;
    if (value.size() != id_size) {
      problem(key, "name entry does not hold an id");
      return {};
    }
    const auto id = keys::id_from_bytes(value);
    auto found = find(id);
    if (!found) return found.error();
    if (!found->present) {
      problem(key, "name entry points to a missing entity " + to_string(id));
      return {};
    }
    if (!found->record) return {};  // reported under its own key
    const Record& r = *found->record;
    if (r.kind != kind)
      problem(key, "name entry of kind " + std::string(type_name(kind)) + " points to " +
                       entity_text(r));
    else if (keys::name(r.kind, r.fqn()) != key)
      problem(key, "name entry points to " + entity_text(r) + ", which has another FQN");
    return {};
  }

  // ---- R from rel to -> data, Q to rel from -> data ----

  Result<void> check_edge(std::string_view key, std::string_view value) {
    const auto edge = keys::decode_edge(key);
    if (!edge) {
      problem(key, "malformed edge key");
      return {};
    }
    const auto [from, rel, to] = *edge;
    if (rel == Rel::votes ? (value != "u" && value != "d") : !value.empty())
      problem(key, "edge data " + keys::printable(value) + " is not what its relation stores");
    auto reverse_key = keys::reverse_edge(to, rel, from);
    auto reverse = txn_.get(reverse_key);
    if (!reverse) return reverse.error();
    if (!*reverse)
      problem(reverse_key, "missing: reverse edge of " + keys::printable(key));
    else if (**reverse != value)
      problem(reverse_key, "reverse edge holds other data than its edge " + keys::printable(key));
    // Hard delete removes every edge of an entity in both directions; soft delete keeps them.
    auto a = find(from);
    if (!a) return a.error();
    auto b = find(to);
    if (!b) return b.error();
    if (!a->present) problem(key, "edge from a missing entity " + to_string(from));
    if (!b->present) problem(key, "edge to a missing entity " + to_string(to));
    if (!a->record || !b->record) return {};
    if (!edge_kinds_allowed(rel, a->record->kind, b->record->kind)) {
      problem(key, "edge of this relation cannot go from " + entity_text(*a->record) + " to " +
                       entity_text(*b->record));
      return {};
    }
    // An entity with one container (all but teams) is contained by that one alone.
    if (rel == Rel::contains && !has_container_edges(b->record->kind) &&
        b->record->container != from)
      problem(key, "containment edge from " + entity_text(*a->record) + " to " +
                       entity_text(*b->record) + ", which is not its container");
    // docs/SEMANTICS.md §9: only an owner its kind's rule allows owns (Group teams).
    if (rel == Rel::owns)
      if (const auto* rule = info(a->record->kind).owner_rule) {
        // The edges of one owner are consecutive keys: its record is read once for all.
        if (owner_checked_ != from) {
          auto owner = tx_.find(from);
          if (!owner) return owner.error();
          auto value = *owner ? (*owner)->member(rule->field) : std::nullopt;
          owner_checked_ = from;
          owner_may_own_ = !*owner || (value && value->is_string() && value->get_string() == rule->value);
        }
        if (!owner_may_own_)
          problem(key, entity_text(*a->record) + " owns " + entity_text(*b->record) + ", but " +
                           std::string(rule->refusal));
      }
    return {};
  }

  // The forward edge checks the data and the ends; the reverse one only that its twin exists.
  Result<void> check_reverse_edge(std::string_view key, std::string_view) {
    const auto edge = keys::decode_reverse_edge(key);
    if (!edge) {
      problem(key, "malformed reverse edge key");
      return {};
    }
    const auto [from, rel, to] = *edge;
    auto forward_key = keys::edge(from, rel, to);
    auto forward = exists(forward_key);
    if (!forward) return forward.error();
    if (!*forward) problem(forward_key, "missing: edge of reverse edge " + keys::printable(key));
    return {};
  }

  // ---- V offset -> event ----

  Result<void> check_event(std::string_view key, std::string_view value) {
    const auto event_offset = keys::decode_event(key);
    if (!event_offset) {
      problem(key, "malformed event key");
      return {};
    }
    const auto offset = *event_offset;
    if (offset != last_event_ + 1)
      problem(keys::event(last_event_ + 1),
              offset == 0
                  ? std::string("missing: event 1 (an event has offset 0)")
                  : "missing: event " + std::to_string(last_event_ + 1) + " (offsets jump from " +
                        std::to_string(last_event_) + " to " + std::to_string(offset) + ")");
    last_event_ = offset;
    // As engine::events reads them (decode_event, which would replace the offset member).
    auto v = parse_stored(value);
    if (!v || !v->is_object()) {
      problem(key, "event does not decode as a JSON object");
      return {};
    }
    const auto& e = v->get_object();
    auto stored = e.find(wire::offset());
    if (stored == e.end() || !stored->value().is_number() || !holds(stored->value(), offset))
      problem(key, "event does not hold its offset " + std::to_string(offset));
    auto type = e.find(wire::event_type());
    if (type == e.end() || !type->value().is_string()) problem(key, "event has no eventType");
    return {};
  }

  // The last event is the one the metadata names (the next append takes the offset after it).
  Result<void> end_events() {
    const auto meta_key = keys::meta(event_offset_meta);
    auto stored = txn_.get(meta_key);
    if (!stored) return stored.error();
    if (!*stored) {
      if (last_event_ != 0)
        problem(meta_key,
                "missing: last event offset (events go up to " + std::to_string(last_event_) + ")");
      return {};
    }
    if ((*stored)->size() != 8) return {};  // reported by check_meta
    const auto recorded = keys::decode_u64(**stored);
    if (recorded > last_event_)
      problem(keys::event(last_event_ + 1), "missing: event " + std::to_string(last_event_ + 1) +
                                                " (the last event offset is " +
                                                std::to_string(recorded) + ")");
    else if (recorded < last_event_)
      problem(meta_key, "last event offset is " + std::to_string(recorded) +
                            " but events go up to " + std::to_string(last_event_));
    return {};
  }
};

}  // namespace

Result<std::vector<IntegrityProblem>> check_integrity(Tx& tx, const IntegrityProgress& progress) {
  return Verifier(tx, progress).run();
}

}  // namespace engine

}  // namespace catalog

#endif  // CATALOG_IMPL_ENGINE_VERIFY_IPP
