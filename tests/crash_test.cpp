// Crash safety (docs/SEMANTICS.md §15): "after a crash at any instant the store holds each
// operation entirely or not at all, and every index, counter and relationship agrees with the
// entities".
//
// Each trial: a child process opens an LMDB store (durability sync, a small initial map, so it
// grows) and runs seeded random operations: creates of every kind (bursts of glossary terms
// too), merge and JSON patches, follows, unfollows, votes, recursive soft deletes and restores
// (of trees of up to ~2,000 terms), hard deletes. It writes each operation to a pipe before it
// starts and again once acknowledged. The parent SIGKILLs it at a seeded random moment (at a
// chosen operation, during the first large tree operation after a chosen one, or right after
// start). A second child then reopens the store and checks it against a model replayed from the
// log: every acknowledged operation is there (each entity's existence, version, deletion,
// description, followers and voters), the operation in flight is wholly there or wholly absent,
// list totals agree with list walks, and Store::verify() finds nothing (the search index
// included: every entity's search document, postings and typeahead keys are those its record
// and edges make, written by the same transactions). The large trees come
// from a template store built once per run (by the same creates, without syncing, so the run
// stays short) and copied for each trial.
//
// Environment (the defaults take about three and a half minutes in the Debug build on 2 cores;
// raise them for longer runs):
//   CATALOG_CRASH_TRIALS  how many trials (default 100), e.g. CATALOG_CRASH_TRIALS=1000
//   CATALOG_CRASH_SEED    the seed of the first trial (default 1); trial i uses seed + i
//   CATALOG_CRASH_JOBS    trials in progress at once (default 3: children wait on fsync)
// A failure names its trial's seed: CATALOG_CRASH_SEED=<seed> CATALOG_CRASH_TRIALS=1 repeats the
// same operations and kill point (the kill lands in real time, so the instant varies a little).
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include "child_process.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

using namespace catalog;
namespace bj = boost::json;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
using test::env_number;
using test::Proc;
using test::pump;
using test::reap;
using test::Rng;
using test::say;
using test::spawn;
using test::typed;

constexpr int max_ops = 60;                     // operations of one trial's child
constexpr std::size_t big_op = 50;              // entities touched by a "large" operation
constexpr std::size_t initial_map = 256 << 10;  // LmdbOptions::map_size of every trial

// ---- the model: what the store must hold after a sequence of operations ----

struct Key {
  Kind kind{};
  std::string fqn;
  friend auto operator<=>(const Key&, const Key&) = default;
};

std::string show(const Key& k) { return std::string(type_name(k.kind)) + " " + k.fqn; }

struct Entity {
  std::optional<Key> parent;  // the container (docs/SEMANTICS.md §1): deleted and restored with it
  std::optional<Uuid> id;     // known once created or looked up
  std::uint32_t version = 1;  // tenths
  bool deleted = false;
  std::uint64_t deleted_by = 0;  // the operation whose soft delete took it
  std::string description;
  std::set<std::string> followers, up, down;  // user names
  std::set<Key> children;
};

using Model = std::map<Key, Entity>;

enum class OpType { create, patch, follow, unfollow, vote, soft_delete, restore, hard_delete };

struct Op {
  OpType type{};
  Key target;
  std::optional<Key> parent;  // create: the container
  std::string text;           // create, patch: the description; follow, unfollow, vote: the user
  int arg = 0;                // vote: the VoteType; patch: 1 for JSON Patch; delete: 1 recursive
};

// One line, no spaces inside fields (names and texts are generated without them).
std::string encode(const Op& op) {
  std::ostringstream out;
  out << static_cast<int>(op.type) << ' ' << static_cast<int>(op.target.kind) << ' '
      << op.target.fqn << ' ' << (op.parent ? static_cast<int>(op.parent->kind) : -1) << ' '
      << (op.parent ? op.parent->fqn : "-") << ' ' << (op.text.empty() ? "-" : op.text) << ' '
      << op.arg;
  return out.str();
}

std::optional<Op> decode(std::istream& in) {
  int type = 0, kind = 0, parent_kind = 0;
  Op op;
  std::string parent;
  if (!(in >> type >> kind >> op.target.fqn >> parent_kind >> parent >> op.text >> op.arg))
    return std::nullopt;
  op.type = static_cast<OpType>(type);
  op.target.kind = static_cast<Kind>(kind);
  if (parent_kind >= 0) op.parent = Key{static_cast<Kind>(parent_kind), parent};
  if (op.text == "-") op.text.clear();
  return op;
}

void soft_delete_tree(Model& m, const Key& k, std::uint64_t tag) {
  auto& e = m.at(k);
  e.deleted = true;
  e.deleted_by = tag;
  ++e.version;
  // Descendants deleted on their own before stay as they are (docs/SEMANTICS.md §7).
  for (const auto& c : e.children)
    if (!m.at(c).deleted) soft_delete_tree(m, c, tag);
}

void restore_tree(Model& m, const Key& k, std::uint64_t tag) {
  auto& e = m.at(k);
  e.deleted = false;
  e.deleted_by = 0;
  ++e.version;
  for (const auto& c : e.children)
    if (const auto& child = m.at(c); child.deleted && child.deleted_by == tag)
      restore_tree(m, c, tag);
}

void erase_tree(Model& m, const Key& k) {
  const auto children = m.at(k).children;
  for (const auto& c : children) erase_tree(m, c);
  m.erase(k);
}

// Applies `op` as the catalog must (docs/SEMANTICS.md §3 to docs/SEMANTICS.md §7). `tag` names the operation, so that a restore
// brings back exactly what the delete with the same tag took. `id`: the id a create returned.
void apply(Model& m, const Op& op, std::uint64_t tag, std::optional<Uuid> id = std::nullopt) {
  if (op.type == OpType::create) {
    Entity e;
    e.parent = op.parent;
    e.id = id;
    e.description = op.text;
    m[op.target] = std::move(e);
    if (op.parent) m.at(*op.parent).children.insert(op.target);
    return;
  }
  auto& e = m.at(op.target);
  switch (op.type) {
  case OpType::create: break;
  case OpType::patch:
    if (e.description != op.text) {  // a patch that changes nothing makes no version
      e.description = op.text;
      ++e.version;
    }
    break;
  case OpType::follow: e.followers.insert(op.text); break;
  case OpType::unfollow: e.followers.erase(op.text); break;
  case OpType::vote:
    e.up.erase(op.text);
    e.down.erase(op.text);
    if (op.arg == static_cast<int>(VoteType::voted_up)) e.up.insert(op.text);
    if (op.arg == static_cast<int>(VoteType::voted_down)) e.down.insert(op.text);
    break;
  case OpType::soft_delete:
    if (!e.deleted) soft_delete_tree(m, op.target, tag);
    break;
  case OpType::restore:
    if (e.deleted) restore_tree(m, op.target, e.deleted_by);
    break;
  case OpType::hard_delete: {
    if (e.parent) m.at(*e.parent).children.erase(op.target);
    erase_tree(m, op.target);
    if (op.target.kind == Kind::user)  // the user's follows and votes go with it (docs/SEMANTICS.md §6)
      for (auto& [key, other] : m) {
        other.followers.erase(op.target.fqn);
        other.up.erase(op.target.fqn);
        other.down.erase(op.target.fqn);
      }
    break;
  }
  }
}

std::size_t live_tree_size(const Model& m, const Key& k) {
  std::size_t n = 1;
  for (const auto& c : m.at(k).children)
    if (!m.at(c).deleted) n += live_tree_size(m, c);
  return n;
}

std::size_t restored_tree_size(const Model& m, const Key& k, std::uint64_t tag) {
  std::size_t n = 1;
  for (const auto& c : m.at(k).children)
    if (const auto& child = m.at(c); child.deleted && child.deleted_by == tag)
      n += restored_tree_size(m, c, tag);
  return n;
}

std::size_t tree_size(const Model& m, const Key& k) {
  std::size_t n = 1;
  for (const auto& c : m.at(k).children) n += tree_size(m, c);
  return n;
}

// How many entities `op` writes: the parent's hint for how long it may take.
std::size_t op_size(const Model& m, const Op& op) {
  switch (op.type) {
  case OpType::soft_delete: return m.at(op.target).deleted ? 1 : live_tree_size(m, op.target);
  case OpType::restore:
    return m.at(op.target).deleted ? restored_tree_size(m, op.target, m.at(op.target).deleted_by)
                                   : 1;
  case OpType::hard_delete: return tree_size(m, op.target);
  default: return 1;
  }
}

std::string version_text(std::uint32_t tenths) {
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

std::string names(const std::set<std::string>& s) {
  std::string out = "[";
  for (const auto& n : s) out += (out.size() > 1 ? "," : "") + n;
  return out + "]";
}

// ---- the template: large trees, built once per run ----

std::vector<Op> template_ops() {
  std::vector<Op> ops;
  auto create = [&](Kind kind, const std::string& fqn, std::optional<Key> parent = {}) {
    ops.push_back({OpType::create, {kind, fqn}, std::move(parent), "about-" + fqn, 0});
  };
  for (int i = 0; i < 8; ++i) create(Kind::user, "u" + std::to_string(i));
  create(Kind::domain, "D0");
  for (int i = 0; i < 4; ++i)
    create(Kind::domain, "D0.s" + std::to_string(i), Key{Kind::domain, "D0"});
  create(Kind::domain, "D1");
  create(Kind::mlmodel_service, "ml");
  for (int i = 0; i < 5; ++i)
    create(Kind::mlmodel, "ml.m" + std::to_string(i), Key{Kind::mlmodel_service, "ml"});
  create(Kind::search_service, "es");
  for (int i = 0; i < 5; ++i)
    create(Kind::search_index, "es.i" + std::to_string(i), Key{Kind::search_service, "es"});
  // Glossaries of 2,024, 400 and 44 terms, three levels deep.
  auto tree = [&](const std::string& g, std::vector<int> fanout) {
    create(Kind::glossary, g);
    std::vector<Key> level{{Kind::glossary, g}};
    const char* prefixes[] = {"r", "c", "l"};
    for (std::size_t depth = 0; depth < fanout.size(); ++depth) {
      std::vector<Key> next;
      for (const auto& parent : level)
        for (int i = 0; i < fanout[depth]; ++i) {
          Key k{Kind::glossary_term, parent.fqn + "." + prefixes[depth] + std::to_string(i)};
          create(k.kind, k.fqn, parent);
          next.push_back(k);
        }
      level = std::move(next);
    }
  };
  tree("Big", {8, 12, 20});
  tree("Mid", {4, 9, 10});
  tree("Small", {4, 10});
  const Key watched[] = {{Kind::glossary, "Big"},  {Kind::glossary_term, "Big.r0"},
                         {Kind::mlmodel, "ml.m0"}, {Kind::search_index, "es.i0"},
                         {Kind::domain, "D0"},     {Kind::glossary_term, "Mid.r1.c2"}};
  for (int u = 0; u < 4; ++u)
    for (const auto& k : watched) {
      const auto user = "u" + std::to_string(u);
      ops.push_back({OpType::follow, k, {}, user, 0});
      if (info(k.kind).has_votes)
        ops.push_back({OpType::vote,
                       k,
                       {},
                       user,
                       static_cast<int>(u % 2 ? VoteType::voted_down : VoteType::voted_up)});
    }
  return ops;
}

Model template_model(const std::vector<Op>& ops) {
  Model m;
  m[{Kind::user, "admin"}] = Entity{};  // made by every open (StoreOptions::admins)
  for (std::size_t i = 0; i < ops.size(); ++i) apply(m, ops[i], i + 1);
  return m;
}

// ---- the random operations of a trial ----

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  Op next(const Model& m) {
    if (queue_.empty())
      for (int attempt = 0; attempt < 50 && queue_.empty(); ++attempt) choose(m);
    if (queue_.empty()) queue_.push_back(new_user());
    auto op = std::move(queue_.front());
    queue_.pop_front();
    return op;
  }

 private:
  std::string fresh(const char* prefix) { return prefix + std::to_string(names_++); }
  std::string text() { return "d" + std::to_string(rng_.below(1000000)); }

  Op new_user() { return {OpType::create, {Kind::user, fresh("v")}, {}, text(), 0}; }

  template <class Pred>
  std::vector<Key> select(const Model& m, Pred pred) {
    std::vector<Key> out;
    for (const auto& [k, e] : m)
      if (k.fqn != "admin" && pred(k, e)) out.push_back(k);
    return out;
  }

  void choose(const Model& m) {
    const auto roll = rng_.below(100);
    auto live = [](const Key&, const Entity& e) { return !e.deleted; };
    auto live_users =
        select(m, [](const Key& k, const Entity& e) { return k.kind == Kind::user && !e.deleted; });
    if (roll < 3) return burst(m);
    if (roll < 12) return create_one(m, live_users.size());
    if (roll < 35) {  // patch: a new description, now and then the same one (no new version)
      auto targets = select(m, live);
      if (targets.empty()) return;
      const auto& k = rng_.pick(targets);
      const auto& current = m.at(k).description;
      const bool same = rng_.percent(10) && !current.empty();
      queue_.push_back({OpType::patch, k, {}, same ? current : text(), rng_.percent(30) ? 1 : 0});
      return;
    }
    if (roll < 48 || (roll >= 54 && roll < 66)) {  // follow, vote: live entity, live user
      const bool vote = roll >= 54;
      auto targets = select(m, [&](const Key& k, const Entity& e) {
        return !e.deleted && (vote ? info(k.kind).has_votes : info(k.kind).has_followers);
      });
      if (targets.empty() || live_users.empty()) return;
      const auto& user = rng_.pick(live_users).fqn;
      if (vote)
        queue_.push_back(
            {OpType::vote, rng_.pick(targets), {}, user, static_cast<int>(rng_.below(3))});
      else
        queue_.push_back({OpType::follow, rng_.pick(targets), {}, user, 0});
      return;
    }
    if (roll < 54) {  // unfollow: also on soft-deleted entities and by soft-deleted users (docs/SEMANTICS.md §4)
      auto targets =
          select(m, [](const Key& k, const Entity&) { return info(k.kind).has_followers; });
      auto users = select(m, [](const Key& k, const Entity&) { return k.kind == Kind::user; });
      if (targets.empty() || users.empty()) return;
      const auto& k = rng_.pick(targets);
      const auto& followers = m.at(k).followers;
      std::string user = rng_.pick(users).fqn;
      if (!followers.empty() && rng_.percent(70)) {
        auto it = followers.begin();
        std::advance(it, static_cast<long>(rng_.below(followers.size())));
        user = *it;
      }
      queue_.push_back({OpType::unfollow, k, {}, user, 0});
      return;
    }
    if (roll < 80) {  // soft delete, often of a large tree
      auto targets = select(m, live);
      if (rng_.percent(40)) {
        auto big = select(m, [&](const Key& k, const Entity& e) {
          return !e.deleted && live_tree_size(m, k) >= big_op;
        });
        if (!big.empty()) targets = std::move(big);
      }
      if (targets.empty()) return;
      const auto& k = rng_.pick(targets);
      const bool has_live_child = live_tree_size(m, k) > 1;
      queue_.push_back(
          {OpType::soft_delete, k, {}, {}, has_live_child || rng_.percent(50) ? 1 : 0});
      return;
    }
    if (roll < 92) {  // restore what a delete took, when its container is live (docs/SEMANTICS.md §7)
      auto targets = select(m, [&](const Key&, const Entity& e) {
        return e.deleted && (!e.parent || !m.at(*e.parent).deleted);
      });
      if (rng_.percent(50)) {
        auto big = select(m, [&](const Key& k, const Entity& e) {
          return e.deleted && (!e.parent || !m.at(*e.parent).deleted) &&
                 restored_tree_size(m, k, e.deleted_by) >= big_op;
        });
        if (!big.empty()) targets = std::move(big);
      }
      if (targets.empty()) return;
      queue_.push_back({OpType::restore, rng_.pick(targets), {}, {}, 0});
      return;
    }
    // Hard delete of anything (live or soft-deleted), now and then of a large tree.
    const bool large = rng_.percent(10);
    auto targets = select(
        m, [&](const Key& k, const Entity&) { return (tree_size(m, k) >= big_op) == large; });
    if (targets.empty()) return;
    const auto& k = rng_.pick(targets);
    queue_.push_back(
        {OpType::hard_delete, k, {}, {}, m.at(k).children.empty() && rng_.percent(50) ? 0 : 1});
  }

  void create_one(const Model& m, std::size_t live_users) {
    auto containers = [&](std::initializer_list<Kind> kinds) {
      return select(m, [&](const Key& k, const Entity& e) {
        return !e.deleted && std::find(kinds.begin(), kinds.end(), k.kind) != kinds.end();
      });
    };
    auto under = [&](Kind kind, const Key& parent) {
      queue_.push_back({OpType::create, {kind, parent.fqn + "." + fresh("n")}, parent, text(), 0});
    };
    switch (rng_.below(7)) {
    case 0:
      if (live_users < 16) queue_.push_back(new_user());
      return;
    case 1: {
      auto parents = containers({Kind::domain});
      if (parents.empty() || rng_.percent(30))
        queue_.push_back({OpType::create, {Kind::domain, fresh("dom")}, {}, text(), 0});
      else
        under(Kind::domain, rng_.pick(parents));
      return;
    }
    case 2: {
      auto services = containers({Kind::mlmodel_service, Kind::search_service});
      if (services.empty() || rng_.percent(20)) {
        const auto kind = rng_.percent(50) ? Kind::mlmodel_service : Kind::search_service;
        queue_.push_back({OpType::create, {kind, fresh("S")}, {}, text(), 0});
      } else {
        const auto& s = rng_.pick(services);
        under(s.kind == Kind::mlmodel_service ? Kind::mlmodel : Kind::search_index, s);
      }
      return;
    }
    case 3: queue_.push_back({OpType::create, {Kind::glossary, fresh("g")}, {}, text(), 0}); return;
    default: {
      auto parents = containers({Kind::glossary, Kind::glossary_term});
      if (!parents.empty()) under(Kind::glossary_term, rng_.pick(parents));
      return;
    }
    }
  }

  // A new glossary, or a live glossary or term, and a random tree of terms under it.
  void burst(const Model& m) {
    std::vector<Key> pool;
    if (rng_.percent(60)) {
      Key g{Kind::glossary, fresh("g")};
      queue_.push_back({OpType::create, g, {}, text(), 0});
      pool.push_back(g);
    } else {
      auto parents = select(m, [](const Key& k, const Entity& e) {
        return !e.deleted && (k.kind == Kind::glossary || k.kind == Kind::glossary_term);
      });
      if (parents.empty()) return;
      pool.push_back(rng_.pick(parents));
    }
    const auto n = 10 + rng_.below(50);
    for (std::size_t i = 0; i < n; ++i) {
      const auto parent = rng_.pick(pool);
      Key t{Kind::glossary_term, parent.fqn + "." + fresh("t")};
      queue_.push_back({OpType::create, t, parent, text(), 0});
      pool.push_back(t);
    }
  }

  Rng rng_;
  std::deque<Op> queue_;
  int names_ = 0;
};

// ---- running operations on a store ----

struct Outcome {
  std::optional<Uuid> id;
  std::optional<std::uint32_t> version;
  std::optional<std::size_t> followers, up, down;
};

template <class E>
Result<Outcome> outcome(const Result<E>& r) {
  if (!r) return r.error();
  Outcome o{r->id, r->version.tenths(), {}, {}, {}};
  if constexpr (requires { r->followers; }) o.followers = r->followers.size();
  if constexpr (requires { r->votes; })
    if (r->votes) {
      o.up = r->votes->up_voters.size();
      o.down = r->votes->down_voters.size();
    }
  return o;
}

std::string last_part(const std::string& fqn) { return fqn.substr(fqn.rfind('.') + 1); }
std::string first_part(const std::string& fqn) { return fqn.substr(0, fqn.find('.')); }

Result<Outcome> create(Store& s, const Principal& admin, const Op& op) {
  const auto name = last_part(op.target.fqn);
  const auto parent = op.parent ? op.parent->fqn : std::string();
  switch (op.target.kind) {
  case Kind::user: {
    CreateUser c{name, name + "@example.com"};
    c.description = op.text;
    return outcome(s.create<User>(admin, c));
  }
  case Kind::mlmodel_service:
  case Kind::search_service: {
    CreateService c{name, op.target.kind == Kind::mlmodel_service ? "Mlflow" : "ElasticSearch"};
    c.description = op.text;
    return op.target.kind == Kind::mlmodel_service ? outcome(s.create<MlModelService>(admin, c))
                                                   : outcome(s.create<SearchService>(admin, c));
  }
  case Kind::mlmodel: {
    CreateMlModel c{name, parent, "xgboost"};
    c.description = op.text;
    return outcome(s.create<MlModel>(admin, c));
  }
  case Kind::search_index: {
    CreateSearchIndex c{name, parent};
    c.description = op.text;
    return outcome(s.create<SearchIndex>(admin, c));
  }
  case Kind::domain: {
    CreateDomain c{name, DomainType::aggregate, op.text};
    if (op.parent) c.parent = parent;
    return outcome(s.create<Domain>(admin, c));
  }
  case Kind::glossary: return outcome(s.create<Glossary>(admin, CreateGlossary{name, op.text}));
  case Kind::glossary_term: {
    CreateGlossaryTerm c{first_part(parent)};
    if (op.parent->kind == Kind::glossary_term) c.parent = parent;
    c.name = name;
    c.description = op.text;
    return outcome(s.create<GlossaryTerm>(admin, c));
  }
  default: return fail(Errc::internal, "the crash test creates no " + show(op.target));
  }
}

// The id of a model entity, looked up by FQN the first time (template entities).
Result<Uuid> id_of(Store& s, const Principal& admin, Model& m, const Key& k) {
  auto& e = m.at(k);
  if (e.id) return *e.id;
  auto got = s.get_json(admin, k.kind, EntityKey::by_fqn(k.fqn), {{}, Include::all});
  if (!got) return got.error();
  e.id = test::uuid_of(*got);
  return *e.id;
}

// Runs `op` on the store through the typed operations.
Result<Outcome> execute(Store& s, const Principal& admin, Model& m, const Op& op) {
  if (op.type == OpType::create) return create(s, admin, op);
  auto id = id_of(s, admin, m, op.target);
  if (!id) return id.error();
  std::optional<Uuid> user;
  if (op.type == OpType::follow || op.type == OpType::unfollow) {
    auto u = id_of(s, admin, m, {Kind::user, op.text});
    if (!u) return u.error();
    user = *u;
  }
  return typed(op.target.kind, [&]<class E>(std::type_identity<E>) -> Result<Outcome> {
    switch (op.type) {
    case OpType::create: break;
    case OpType::patch: {
      bj::value body = bj::object{{"description", op.text}};
      if (op.arg == 1) {  // the same as a JSON Patch
        bj::array ops;
        ops.emplace_back(
            bj::object{{"op", "replace"}, {"path", "/description"}, {"value", op.text}});
        body = std::move(ops);
      }
      return outcome(s.patch<E>(admin, *id, body));
    }
    case OpType::follow: return outcome(s.follow<E>(admin, *id, *user));
    case OpType::unfollow: return outcome(s.unfollow<E>(admin, *id, *user));
    case OpType::vote: {
      auto voter = s.principal(op.text);
      if (!voter) return voter.error();
      return outcome(s.vote<E>(*voter, *id, static_cast<VoteType>(op.arg)));
    }
    case OpType::soft_delete:
    case OpType::hard_delete: {
      DeleteOptions d;
      d.hard_delete = op.type == OpType::hard_delete;
      d.recursive = op.arg == 1;
      auto r = s.remove<E>(admin, *id, d);
      if (!r) return r.error();
      if (!*r) return Outcome{};
      return outcome(Result<E>(std::move(**r)));
    }
    case OpType::restore: return outcome(s.restore<E>(admin, *id));
    }
    return fail(Errc::internal, "unknown operation");
  });
}

// What the returned entity says against the model; empty when they agree.
std::string disagreement(const Model& m, const Op& op, const Outcome& o) {
  auto it = m.find(op.target);
  if (it == m.end()) return o.version ? "returned an entity the model has no more" : "";
  const auto& e = it->second;
  std::ostringstream out;
  if (o.version && *o.version != e.version)
    out << " version " << version_text(*o.version) << " (model " << version_text(e.version) << ")";
  if (o.followers && *o.followers != e.followers.size())
    out << " followers " << *o.followers << " (model " << e.followers.size() << ")";
  if (o.up && (*o.up != e.up.size() || *o.down != e.down.size()))
    out << " votes " << *o.up << "/" << *o.down << " (model " << e.up.size() << "/" << e.down.size()
        << ")";
  return out.str();
}

// ---- child processes and their pipes ----

StoreOptions store_options() {
  StoreOptions o;
  o.admins = {"admin"};
  o.clock = test::test_clock();
  return o;
}

storage::LmdbOptions lmdb_options(storage::Durability durability) {
  storage::LmdbOptions o;
  o.map_size = initial_map;  // LMDB maps at least what the file holds, and grows from there
  o.durability = durability;
  return o;
}

std::size_t map_size(Store& s) {
  auto* lmdb = dynamic_cast<storage::LmdbBackend*>(&s.backend());
  return lmdb ? lmdb->map_size() : 0;
}

// The template builder: runs the template's operations (the large trees) without syncing.
int build_template(const fs::path& dir, const std::vector<Op>& ops, int fd) {
  auto store = Store::open_lmdb(dir, store_options(), lmdb_options(storage::Durability::no_sync));
  if (!store) return say(fd, "X open: " + store.error().message()), 2;
  auto admin = store->principal("admin").value();
  Model m = template_model({});
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto done = execute(*store, admin, m, ops[i]);
    if (!done) return say(fd, "X template " + encode(ops[i]) + ": " + done.error().message()), 3;
    apply(m, ops[i], i + 1, done->id);
  }
  return 0;
}

// The trial's child. Lines: "O <map>" once open; "B <seq> <size> <op>" before each operation;
// "A <seq> <id|-> <map>" once acknowledged; "X <what>" on an unexpected result; "D" at the end.
int run_trial(const fs::path& dir, Model model, std::uint64_t seed, int fd) {
  auto store = Store::open_lmdb(dir, store_options(), lmdb_options(storage::Durability::sync));
  if (!store) return say(fd, "X open: " + store.error().message()), 2;
  say(fd, "O " + std::to_string(map_size(*store)));
  auto admin = store->principal("admin");
  if (!admin) return say(fd, "X admin: " + admin.error().message()), 2;
  Generator gen(seed);
  for (int seq = 1; seq <= max_ops; ++seq) {
    const auto op = gen.next(model);
    say(fd,
        "B " + std::to_string(seq) + " " + std::to_string(op_size(model, op)) + " " + encode(op));
    auto done = execute(*store, *admin, model, op);
    if (!done)
      return say(fd, "X operation " + std::to_string(seq) + " (" + encode(op) +
                         ") failed: " + done.error().message()),
             3;
    apply(model, op, (std::uint64_t{1} << 32) + static_cast<std::uint64_t>(seq), done->id);
    if (auto d = disagreement(model, op, *done); !d.empty())
      return say(fd, "X operation " + std::to_string(seq) + " (" + encode(op) + ") returned" + d),
             4;
    say(fd, "A " + std::to_string(seq) + " " + (done->id ? to_string(*done->id) : "-") + " " +
                std::to_string(map_size(*store)));
  }
  say(fd, "D");
  return 0;
}

// What a trial's child reported.
struct Log {
  std::vector<Op> ops;  // begun, in order (sequence numbers from 1)
  std::vector<std::size_t> sizes;
  std::vector<std::optional<Uuid>> ids;  // of the acknowledged ones
  std::size_t acked = 0;
  bool done = false;
  std::size_t open_map = 0, last_map = 0;
};

// ---- reading the store back ----

struct Seen {
  Uuid id;
  std::uint32_t version = 0;
  bool deleted = false;
  std::string description;
  std::set<std::string> followers, up, down;
};
using Observed = std::map<Key, Seen>;

std::set<std::string> ref_names(const bj::value* refs) {
  std::set<std::string> out;
  if (refs != nullptr && refs->is_array())
    for (const auto& r : refs->get_array()) out.emplace(r.at("name").as_string());
  return out;
}

constexpr Kind observed_kinds[] = {Kind::user,           Kind::domain,       Kind::mlmodel_service,
                                   Kind::search_service, Kind::mlmodel,      Kind::search_index,
                                   Kind::glossary,       Kind::glossary_term};

// Every entity of the kinds the test uses, by a list walk (include=all), with its followers and
// voters; list totals are checked against the walk on the way.
Observed observe(Store& s, const Principal& admin, std::vector<std::string>& problems) {
  Observed seen;
  for (auto kind : observed_kinds) {
    ListOptions o;
    o.limit = 1000;
    o.include = Include::all;
    if (info(kind).has_followers) o.fields.push_back("followers");
    if (info(kind).has_votes) o.fields.push_back("votes");
    std::int64_t walked = 0, deleted = 0, total = -1;
    while (true) {
      auto page = s.list_json(admin, kind, o);
      if (!page) {
        problems.push_back("list " + std::string(type_name(kind)) + ": " + page.error().message());
        return seen;
      }
      if (total < 0) total = page->total;
      for (const auto& v : page->data) {
        const auto& e = v.as_object();
        Seen x;
        x.id = test::uuid_of(e);
        x.version = Version::parse(test::version_of(e)).value().tenths();
        x.deleted = e.at("deleted").as_bool();
        if (auto d = e.if_contains("description")) x.description = d->as_string();
        x.followers = ref_names(e.if_contains("followers"));
        if (auto votes = e.if_contains("votes")) {
          x.up = ref_names(votes->as_object().if_contains("upVoters"));
          x.down = ref_names(votes->as_object().if_contains("downVoters"));
        }
        ++walked;
        deleted += x.deleted ? 1 : 0;
        Key k{kind, std::string(e.at("fullyQualifiedName").as_string())};
        if (!seen.emplace(k, std::move(x)).second) problems.push_back("listed twice: " + show(k));
      }
      if (!page->after) break;
      o.after = page->after;
    }
    auto count = [&](Include include) {
      ListOptions z;
      z.limit = 0;
      z.include = include;
      auto page = s.list_json(admin, kind, z);
      return page ? page->total : -1;
    };
    const auto name = std::string(type_name(kind));
    if (total != walked)
      problems.push_back(name + " list total " + std::to_string(total) + ", walk " +
                         std::to_string(walked));
    if (count(Include::deleted) != deleted || count(Include::non_deleted) != walked - deleted)
      problems.push_back(name + " totals (deleted " + std::to_string(count(Include::deleted)) +
                         ", live " + std::to_string(count(Include::non_deleted)) +
                         ") disagree with the walk (" + std::to_string(deleted) + ", " +
                         std::to_string(walked - deleted) + ")");
  }
  return seen;
}

// How the store differs from the model (at most `limit` lines).
std::vector<std::string> differences(const Model& m, const Observed& seen, std::size_t limit = 6) {
  std::vector<std::string> out;
  auto note = [&](std::string line) {
    if (out.size() < limit) out.push_back(std::move(line));
  };
  for (const auto& [k, e] : m) {
    auto it = seen.find(k);
    if (it == seen.end()) {
      note(show(k) + " is missing");
      continue;
    }
    const auto& x = it->second;
    std::string what;
    if (e.id && *e.id != x.id)
      what += " id " + to_string(x.id) + " (model " + to_string(*e.id) + ")";
    if (e.version != x.version)
      what += " version " + version_text(x.version) + " (model " + version_text(e.version) + ")";
    if (e.deleted != x.deleted)
      what += std::string(" deleted=") + (x.deleted ? "true" : "false") + " (model " +
              (e.deleted ? "true" : "false") + ")";
    if (e.description != x.description)
      what += " description " + x.description + " (model " + e.description + ")";
    if (e.followers != x.followers)
      what += " followers " + names(x.followers) + " (model " + names(e.followers) + ")";
    if (e.up != x.up || e.down != x.down)
      what += " votes " + names(x.up) + "/" + names(x.down) + " (model " + names(e.up) + "/" +
              names(e.down) + ")";
    if (!what.empty()) note(show(k) + ":" + what);
  }
  for (const auto& [k, x] : seen)
    if (!m.contains(k)) note(show(k) + " exists, the model has no such entity");
  return out;
}

// The checker's child. Lines: "F <problem>" for each problem; "R <none|before|after|both>"
// (which state the operation in flight left); "T <us> <us>" (time to read the store back, time
// verify() took); "V <problems>" from verify().
int check_trial(const fs::path& dir, const Model& start, const Log& log, int fd) {
  Model before = start;
  for (std::size_t i = 0; i < log.acked; ++i)
    apply(before, log.ops[i], (std::uint64_t{1} << 32) + i + 1, log.ids[i]);
  const bool in_flight = log.ops.size() > log.acked;
  Model after = before;
  if (in_flight) apply(after, log.ops[log.acked], (std::uint64_t{1} << 32) + log.acked + 1);

  auto store = Store::open_lmdb(dir, store_options(), lmdb_options(storage::Durability::sync));
  if (!store) return say(fd, "F reopen: " + store.error().message()), 2;
  auto admin = store->principal("admin");
  if (!admin) return say(fd, "F admin: " + admin.error().message()), 2;
  std::vector<std::string> problems;
  const auto observing = Clock::now();
  const auto seen = observe(*store, *admin, problems);
  const auto observed = Clock::now();
  for (const auto& p : problems) say(fd, "F " + p);
  const auto diff_before = differences(before, seen);
  const auto diff_after = in_flight ? differences(after, seen) : diff_before;
  if (!diff_before.empty() && !diff_after.empty()) {
    for (const auto& d : diff_before) say(fd, "F against the acknowledged operations: " + d);
    if (in_flight)
      for (const auto& d : diff_after)
        say(fd, "F against them and the one in flight (" + encode(log.ops[log.acked]) + "): " + d);
  }
  say(fd, std::string("R ") + (!in_flight                                  ? "none"
                               : diff_before.empty() && diff_after.empty() ? "both"
                               : diff_before.empty()                       ? "before"
                               : diff_after.empty()                        ? "after"
                                                                           : "neither"));
  const auto verifying = Clock::now();
  auto verified = store->verify();
  if (!verified) return say(fd, "F verify: " + verified.error().message()), 3;
  const auto micros = [](Clock::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  say(fd, "T " + micros(observed - observing) + " " + micros(Clock::now() - verifying));
  for (std::size_t i = 0; i < verified->size() && i < 20; ++i)
    say(fd, "F verify: " + (*verified)[i].key + ": " + (*verified)[i].message);
  say(fd, "V " + std::to_string(verified->size()));
  return 0;
}

// ---- the parent ----

struct KillPlan {
  enum class Mode { at_op, at_big_op, after_start } mode = Mode::at_op;
  int op = 0;  // at_op: that operation; at_big_op: the first large one from this one on (or
               // the 20th after it, if none is large)
};

struct Trial {
  std::uint64_t seed = 0;
  fs::path dir;
  Rng rng{0};  // the parent's choices: kill plan and delays
  KillPlan plan;
  Log log;
  bool killed = false;
};

struct Stats {
  std::size_t trials = 0, killed = 0, finished = 0, in_flight = 0, in_flight_big = 0;
  std::size_t applied = 0, absent = 0, no_op = 0, grown = 0, acked = 0, big_acked = 0;
  Clock::duration running{}, checking{}, observing{}, verifying{};
};

}  // namespace

TEST_CASE(
    "crash: a SIGKILL at any moment loses no acknowledged operation and leaves none half done",
    "[crash][lmdb]") {
  const auto trials = env_number("CATALOG_CRASH_TRIALS", 100);
  const auto first_seed = env_number("CATALOG_CRASH_SEED", 1);
  const auto jobs = std::max<std::uint64_t>(1, env_number("CATALOG_CRASH_JOBS", 3));
  const auto started = Clock::now();
  test::TempDir root;
  std::vector<int> parent_fds;

  // The template: built in a child, so that this process never opens an environment it would
  // hand down through fork().
  const auto ops = template_ops();
  const Model start = template_model(ops);
  const auto template_dir = root.path() / "template";
  {
    auto builder = spawn(parent_fds, [&](int fd) { return build_template(template_dir, ops, fd); });
    std::string said;
    for (bool open = true; open;)
      for (auto& line : pump(builder, open)) said += line + "\n";
    const int status = reap(builder, parent_fds);
    INFO(said);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }
  const auto built = Clock::now();

  struct Slot {
    enum class Phase { idle, running, checking } phase = Phase::idle;
    Trial trial;
    Proc proc;
    std::optional<Clock::time_point> kill_at;
    Clock::time_point since;  // the phase began
  };
  std::vector<Slot> slots(jobs);
  std::vector<std::string> failures;
  Stats stats;
  std::uint64_t next = 0;

  auto fail_trial = [&](const Trial& t, const std::string& what) {
    failures.push_back("seed " + std::to_string(t.seed) + ": " + what);
  };

  auto start_trial = [&](Slot& slot) {
    Trial t;
    t.seed = first_seed + next++;
    t.dir = root.path() / ("trial-" + std::to_string(t.seed));
    t.rng = Rng(t.seed * 0x9e3779b97f4a7c15ULL + 7);
    const auto mode = t.rng.below(100);
    if (mode < 10) {
      t.plan.mode = KillPlan::Mode::after_start;
    } else if (mode < 50) {
      t.plan.mode = KillPlan::Mode::at_big_op;
      t.plan.op = 1 + static_cast<int>(t.rng.below(max_ops / 3));
    } else {
      t.plan.mode = KillPlan::Mode::at_op;
      t.plan.op = 1 + static_cast<int>(t.rng.below(max_ops));
    }
    fs::create_directories(t.dir);
    fs::copy_file(template_dir / "data.mdb", t.dir / "data.mdb");
    slot.trial = std::move(t);
    auto& trial = slot.trial;
    slot.proc =
        spawn(parent_fds, [&](int fd) { return run_trial(trial.dir, start, trial.seed, fd); });
    slot.kill_at.reset();
    if (trial.plan.mode == KillPlan::Mode::after_start)
      slot.kill_at = Clock::now() + std::chrono::microseconds(trial.rng.below(40000));
    slot.phase = Slot::Phase::running;
    slot.since = Clock::now();
  };

  auto runner_line = [&](Slot& slot, const std::string& line) {
    auto& t = slot.trial;
    std::istringstream in(line);
    char tag = 0;
    in >> tag;
    if (tag == 'O') {
      in >> t.log.open_map;
    } else if (tag == 'B') {
      std::size_t seq = 0, size = 0;
      in >> seq >> size;
      auto op = decode(in);
      if (!op || seq != t.log.ops.size() + 1) return fail_trial(t, "garbled report: " + line);
      t.log.ops.push_back(*op);
      t.log.sizes.push_back(size);
      const int at = static_cast<int>(seq);
      const bool now = (t.plan.mode == KillPlan::Mode::at_op && at == t.plan.op) ||
                       (t.plan.mode == KillPlan::Mode::at_big_op && at >= t.plan.op &&
                        (size >= big_op || at == t.plan.op + 20));
      if (now && !slot.kill_at && !t.killed) {
        // Somewhere in the operation (the window allows 0.3 ms per entity it writes), or after.
        const auto span = 2000 + size * 300;
        slot.kill_at = Clock::now() + std::chrono::microseconds(t.rng.below(span));
      }
    } else if (tag == 'A') {
      std::size_t seq = 0;
      std::string id;
      in >> seq >> id >> t.log.last_map;
      if (seq != t.log.acked + 1 || seq > t.log.ops.size())
        return fail_trial(t, "garbled report: " + line);
      t.log.ids.push_back(id == "-" ? std::nullopt : std::optional<Uuid>(parse_uuid(id).value()));
      ++t.log.acked;
    } else if (tag == 'D') {
      t.log.done = true;
    } else {
      fail_trial(t, "child: " + line);
    }
  };

  auto runner_ended = [&](Slot& slot) {
    auto& t = slot.trial;
    const int status = reap(slot.proc, parent_fds);
    stats.running += Clock::now() - slot.since;
    slot.since = Clock::now();
    ++stats.trials;
    const bool by_kill = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && t.log.done;
    if (!(by_kill && t.killed) && !clean)
      fail_trial(t, "child ended with " + test::describe_status(status));
    if (by_kill) ++stats.killed;
    if (clean) ++stats.finished;
    stats.acked += t.log.acked;
    for (std::size_t i = 0; i < t.log.acked; ++i) stats.big_acked += t.log.sizes[i] >= big_op;
    if (t.log.open_map != 0 && t.log.last_map > t.log.open_map) ++stats.grown;
    if (t.log.ops.size() > t.log.acked) {
      ++stats.in_flight;
      if (t.log.sizes.back() >= big_op) ++stats.in_flight_big;
    }
    slot.proc = spawn(parent_fds, [&](int fd) { return check_trial(t.dir, start, t.log, fd); });
    slot.phase = Slot::Phase::checking;
  };

  auto checker_line = [&](Slot& slot, const std::string& line) {
    auto& t = slot.trial;
    if (line.rfind("F ", 0) == 0 || line.rfind("X ", 0) == 0) return fail_trial(t, line.substr(2));
    if (line.rfind("R ", 0) == 0) {
      const auto state = line.substr(2);
      stats.applied += state == "after";
      stats.absent += state == "before";
      stats.no_op += state == "both";
    }
    if (line.rfind("T ", 0) == 0) {
      std::istringstream in(line.substr(2));
      std::int64_t observe_us = 0, verify_us = 0;
      in >> observe_us >> verify_us;
      stats.observing += std::chrono::microseconds(observe_us);
      stats.verifying += std::chrono::microseconds(verify_us);
    }
  };

  auto checker_ended = [&](Slot& slot) {
    const int status = reap(slot.proc, parent_fds);
    stats.checking += Clock::now() - slot.since;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail_trial(slot.trial, "checker ended with " + test::describe_status(status));
    std::error_code ec;
    fs::remove_all(slot.trial.dir, ec);
    slot.phase = Slot::Phase::idle;
  };

  while (true) {
    for (auto& slot : slots)
      if (slot.phase == Slot::Phase::idle && next < trials) start_trial(slot);
    std::vector<pollfd> polled;
    std::vector<Slot*> owners;
    int timeout = 1000;
    const auto now = Clock::now();
    for (auto& slot : slots) {
      if (slot.phase == Slot::Phase::idle) continue;
      polled.push_back({slot.proc.fd, POLLIN, 0});
      owners.push_back(&slot);
      if (slot.kill_at) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*slot.kill_at - now);
        timeout = std::clamp<int>(static_cast<int>(wait.count()), 0, timeout);
      }
    }
    if (polled.empty()) break;
    const int ready = ::poll(polled.data(), polled.size(), timeout);
    REQUIRE((ready >= 0 || errno == EINTR));
    for (auto& slot : slots)
      if (slot.kill_at && Clock::now() >= *slot.kill_at) {
        ::kill(slot.proc.pid, SIGKILL);
        slot.trial.killed = true;
        slot.kill_at.reset();
      }
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if ((polled[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto& slot = *owners[i];
      bool open = true;
      const auto lines = pump(slot.proc, open);
      for (const auto& line : lines)
        slot.phase == Slot::Phase::running ? runner_line(slot, line) : checker_line(slot, line);
      if (open) continue;
      if (slot.phase == Slot::Phase::running) {
        slot.kill_at.reset();
        runner_ended(slot);
      } else {
        checker_ended(slot);
      }
    }
  }

  const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  std::cout << "crash test: " << stats.trials << " trials (seeds " << first_seed << " to "
            << first_seed + trials - 1 << ", " << jobs << " at once) in "
            << seconds(Clock::now() - started) << " s (template of " << start.size()
            << " entities built in " << seconds(built - started) << " s); " << stats.killed
            << " killed, " << stats.finished << " ran all " << max_ops << " operations; "
            << stats.acked << " operations acknowledged (" << stats.big_acked << " of " << big_op
            << "+ entities); killed with one in flight: " << stats.in_flight << " ("
            << stats.in_flight_big << " of " << big_op << "+ entities), found applied "
            << stats.applied << ", absent " << stats.absent << ", a no-op " << stats.no_op
            << "; the map grew in " << stats.grown << " trials; children ran "
            << seconds(stats.running) << " s, checkers " << seconds(stats.checking)
            << " s (reading back " << seconds(stats.observing) << " s, verify() "
            << seconds(stats.verifying) << " s)\n";
  for (std::size_t i = 0; i < failures.size() && i < 30; ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  CHECK(stats.trials == trials);
  // Over a run of any size the kills must have caught operations in flight and the map must
  // have grown, or the test is not testing what it says.
  if (trials >= 20) {
    CHECK(stats.in_flight_big > 0);
    CHECK(stats.grown > 0);
  }
}
