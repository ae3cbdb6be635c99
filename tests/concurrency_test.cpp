// Many writers on one LMDB store (docs/SEMANTICS.md §9 "no update is ever lost", docs/SEMANTICS.md §15 "several
// processes can open one store at once"): several processes, each with several threads,
// patch, follow, vote on and create the same entities at once, and report every acknowledged
// operation to the parent through a pipe. Afterwards, in the parent:
// - each patched entity's history has every version from 0.1 to the current one exactly once,
//   one per acknowledged patch that changed something, each holding what that patch wrote;
// - of the concurrent creates of one name exactly one won; every other got already_exists;
// - followers and votes are exactly what each user's last acknowledged operation left;
// - list walks made while others write never repeat an entity or leave (name, id) order;
// - list totals equal full list walks (and the expected counts); verify() finds nothing, the
//   search index included (what racing writers left in it agrees with every entity).
// The map starts small, so it grows while several processes use it.
//
// Environment (longer runs; the defaults keep the test well under a minute on 2 cores):
//   CATALOG_CONCURRENCY_OPS        operations per thread (default 400)
//   CATALOG_CONCURRENCY_PROCESSES  processes (default 4)
//   CATALOG_CONCURRENCY_THREADS    threads per process (default 3)
//   CATALOG_CONCURRENCY_SEED       seed of the random choices (default 1)
// e.g. CATALOG_CONCURRENCY_OPS=1000 CATALOG_CONCURRENCY_PROCESSES=6 ./concurrency_test
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include "child_process.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace catalog;
namespace bj = boost::json;
namespace fs = std::filesystem;
using test::Proc;
using test::Rng;
using test::say;

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  int processes = 4;
  int threads = 3;
  int ops = 400;
  std::uint64_t seed = 1;
  int race_names = 20;  // names of each raced kind every thread tries to create
};

constexpr std::size_t initial_map = 256 << 10;  // LmdbOptions::map_size: grows during the run

// The entities every thread patches, follows and votes on.
struct Hot {
  Kind kind;
  const char* fqn;
};
constexpr Hot hot[] = {{Kind::glossary, "Hot"},
                       {Kind::glossary_term, "Hot.t"},
                       {Kind::mlmodel, "ml.hot"},
                       {Kind::search_index, "es.hot"},
                       {Kind::domain, "HotD"}};
constexpr int hot_count = static_cast<int>(std::size(hot));

// The names every thread tries to create: glossary terms, ML models and glossaries.
struct Name {
  Kind kind;
  std::string fqn;
};
std::vector<Name> race_names(int n) {
  std::vector<Name> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({Kind::glossary_term, "Race.c" + std::to_string(i)});
    out.push_back({Kind::mlmodel, "ml.c" + std::to_string(i)});
    out.push_back({Kind::glossary, "rg" + std::to_string(i)});
  }
  return out;
}

std::string user_name(int p, int t) { return "w" + std::to_string(p) + "x" + std::to_string(t); }

StoreOptions store_options() {
  StoreOptions o;
  o.admins = {"admin"};
  o.clock = test::test_clock();
  return o;
}

storage::LmdbOptions lmdb_options() {
  storage::LmdbOptions o;
  o.map_size = initial_map;
  return o;  // Durability::sync, the default
}

std::size_t map_size(Store& s) {
  auto* lmdb = dynamic_cast<storage::LmdbBackend*>(&s.backend());
  return lmdb ? lmdb->map_size() : 0;
}

// The store every process starts from: the users (one per thread), the hot entities and the
// containers of the raced names.
int setup(const fs::path& dir, const Config& c, int fd) {
  auto store = Store::open_lmdb(dir, store_options(), lmdb_options());
  if (!store) return say(fd, "X open: " + store.error().message()), 2;
  auto admin = store->principal("admin").value();
  std::vector<Result<Uuid>> made;
  auto keep = [&](auto r) { made.push_back(r ? Result<Uuid>(r->id) : Result<Uuid>(r.error())); };
  for (int p = 0; p < c.processes; ++p)
    for (int t = 0; t < c.threads; ++t) {
      const auto name = user_name(p, t);
      keep(store->create<User>(admin, CreateUser{name, name + "@example.com"}));
    }
  keep(store->create<MlModelService>(admin, CreateService{"ml", "Mlflow"}));
  keep(store->create<SearchService>(admin, CreateService{"es", "ElasticSearch"}));
  keep(store->create<Glossary>(admin, CreateGlossary{"Hot", "h"}));
  keep(store->create<GlossaryTerm>(admin, CreateGlossaryTerm{"Hot", {}, "t", "t"}));
  keep(store->create<MlModel>(admin, CreateMlModel{"hot", "ml", "xgboost"}));
  keep(store->create<SearchIndex>(admin, CreateSearchIndex{"hot", "es"}));
  keep(store->create<Domain>(admin, CreateDomain{"HotD", DomainType::aggregate, "d"}));
  keep(store->create<Glossary>(admin, CreateGlossary{"Race", "r"}));
  for (const auto& r : made)
    if (!r) return say(fd, "X setup: " + r.error().message()), 3;
  say(fd, "M " + std::to_string(map_size(*store)));
  return 0;
}

Result<Uuid> create(Store& s, const Principal& admin, const Name& n) {
  const auto name = n.fqn.substr(n.fqn.find('.') + 1);
  auto id = [](auto r) -> Result<Uuid> {
    if (!r) return r.error();
    return r->id;
  };
  switch (n.kind) {
  case Kind::glossary_term:
    return id(s.create<GlossaryTerm>(admin, CreateGlossaryTerm{"Race", {}, name, "raced"}));
  case Kind::mlmodel: return id(s.create<MlModel>(admin, CreateMlModel{name, "ml", "xgboost"}));
  default: return id(s.create<Glossary>(admin, CreateGlossary{n.fqn, "raced"}));
  }
}

// One thread's operations. Every line starts with "<p> <t>": the parent keeps each thread's
// lines in order (one writer per thread, and a pipe keeps the order of what one writer wrote).
void run_thread(Store& s, const Principal& admin, const Config& c, int p, int t, std::latch& go,
                int fd) {
  const auto who = std::to_string(p) + " " + std::to_string(t) + " ";
  Rng rng(c.seed * 1000003 + static_cast<std::uint64_t>(p * 1009 + t));
  auto me = s.principal(user_name(p, t));
  std::vector<Uuid> ids;
  for (const auto& h : hot) {
    auto got = s.get_json(admin, h.kind, EntityKey::by_fqn(h.fqn));
    if (!got) return go.wait(), say(fd, "X " + who + "lookup: " + got.error().message());
    ids.push_back(test::uuid_of(*got));
  }
  if (!me) return go.wait(), say(fd, "X " + who + "principal: " + me.error().message());
  auto names = race_names(c.race_names);
  rng.shuffle(names);
  std::size_t next_name = 0;
  go.wait();
  for (int i = 0; i < c.ops; ++i) {
    const auto roll = rng.below(100);
    const int j = static_cast<int>(rng.below(hot_count));
    const auto& h = hot[j];
    const auto step = who + std::to_string(i) + " ";
    if (roll < 15 && next_name < names.size()) {
      const auto& n = names[next_name++];
      auto made = create(s, admin, n);
      const auto where = std::to_string(static_cast<int>(n.kind)) + " " + n.fqn;
      if (made)
        say(fd, "C " + step + where + " " + to_string(*made));
      else if (made.error().code() == Errc::already_exists &&
               made.error().kind() == ErrorKind::conflict)
        say(fd, "L " + step + where);
      else
        say(fd, "X " + step + "create " + n.fqn + ": " + made.error().message());
      continue;
    }
    if (roll < 55) {
      // A unique value, so every such patch changes something; one in ten changes nothing.
      const auto value =
          "p" + std::to_string(p) + "t" + std::to_string(t) + "i" + std::to_string(i);
      const auto shape = rng.below(10);
      const std::string field = shape < 6 ? "description" : "displayName";
      bj::value body = bj::object{{field, value}};
      if (shape == 5 || shape == 8) {  // the same as a JSON Patch
        bj::array ops;
        ops.emplace_back(bj::object{{"op", "add"}, {"path", "/" + field}, {"value", value}});
        body = std::move(ops);
      } else if (shape == 9) {  // changes nothing: no new version (docs/SEMANTICS.md §3)
        bj::array ops;
        ops.emplace_back(bj::object{{"op", "test"}, {"path", "/name"}, {"value", "t"}});
        body = h.kind == Kind::glossary_term ? bj::value(std::move(ops)) : bj::value(bj::object{});
      }
      auto patched = test::typed(h.kind, [&]<class E>(std::type_identity<E>) -> Result<Version> {
        auto r = s.patch<E>(admin, ids[static_cast<std::size_t>(j)], body);
        if (!r) return r.error();
        return r->version;
      });
      if (!patched)
        say(fd, "X " + step + "patch " + h.fqn + ": " + patched.error().message());
      else if (shape == 9)
        say(fd, "N " + step + std::to_string(j) + " " + std::to_string(patched->tenths()));
      else
        say(fd, "P " + step + std::to_string(j) + " " + std::to_string(patched->tenths()) + " " +
                    field + " " + value);
      continue;
    }
    if (roll < 95) {
      const bool vote = roll >= 80 && info(h.kind).has_votes;
      const auto v = static_cast<VoteType>(rng.below(3));
      const bool follow = rng.percent(70);
      auto done = test::typed(h.kind, [&]<class E>(std::type_identity<E>) -> Result<void> {
        const auto& id = ids[static_cast<std::size_t>(j)];
        auto r = vote     ? s.vote<E>(*me, id, v)
                 : follow ? s.follow<E>(*me, id, me->id)
                          : s.unfollow<E>(*me, id, me->id);
        if (!r) return r.error();
        return {};
      });
      if (!done)
        say(fd, "X " + step + (vote ? "vote " : "follow ") + h.fqn + ": " + done.error().message());
      else if (vote)
        say(fd, "V " + step + std::to_string(j) + " " + std::to_string(static_cast<int>(v)));
      else
        say(fd, "F " + step + std::to_string(j) + " " + (follow ? "1" : "0"));
      continue;
    }
    // A list walk while others write: no entity twice, in (name, id) order (docs/SEMANTICS.md §8).
    ListOptions o;
    o.limit = 4;
    std::set<std::string> seen;
    std::string last;
    bool ordered = true;
    while (true) {
      auto page = s.list<GlossaryTerm>(admin, o);
      if (!page) {
        say(fd, "X " + step + "list: " + page.error().message());
        break;
      }
      for (const auto& e : page->data) {
        const auto key = e.name + "/" + to_string(e.id);
        ordered = ordered && key > last && seen.insert(key).second;
        last = key;
      }
      if (!page->after) break;
      o.after = page->after;
    }
    if (!ordered) say(fd, "X " + step + "a list walk repeated an entity or went out of order");
    say(fd, "W " + step + std::to_string(seen.size()));
  }
}

int worker(const fs::path& dir, const Config& c, int p, int go_fd, int fd) {
  auto store = Store::open_lmdb(dir, store_options(), lmdb_options());
  if (!store) return say(fd, "X " + std::to_string(p) + " open: " + store.error().message()), 2;
  auto admin = store->principal("admin");
  if (!admin) return say(fd, "X admin: " + admin.error().message()), 2;
  say(fd, "M " + std::to_string(map_size(*store)));
  std::latch go(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < c.threads; ++t)
    threads.emplace_back([&, t] {
      try {
        run_thread(*store, *admin, c, p, t, go, fd);
      } catch (const std::exception& e) {
        say(fd, std::string("X exception: ") + e.what());
      }
    });
  say(fd, "R");  // ready; the parent answers when every process is
  char byte = 0;
  const bool started = ::read(go_fd, &byte, 1) == 1;
  go.count_down();
  for (auto& thread : threads) thread.join();
  say(fd, "M " + std::to_string(map_size(*store)));
  return started ? 0 : 4;
}

// What the threads reported, per thread in order.
struct Report {
  char tag = 0;
  int p = 0, t = 0, i = 0;
  std::string rest;
};

}  // namespace

TEST_CASE("concurrency: processes x threads on one LMDB store lose no update and agree",
          "[concurrency][lmdb]") {
  Config c;
  c.processes = static_cast<int>(test::env_number("CATALOG_CONCURRENCY_PROCESSES", 4));
  c.threads = static_cast<int>(test::env_number("CATALOG_CONCURRENCY_THREADS", 3));
  c.ops = static_cast<int>(test::env_number("CATALOG_CONCURRENCY_OPS", 400));
  c.seed = test::env_number("CATALOG_CONCURRENCY_SEED", 1);
  REQUIRE(c.processes >= 1);
  REQUIRE(c.threads >= 1);
  const auto started = Clock::now();
  test::TempDir dir;
  std::vector<int> parent_fds;
  std::size_t setup_map = 0;

  // Everything that opens the store runs in a child: this process forks them all, and must not
  // hold an LMDB environment while it does.
  {
    auto child = test::spawn(parent_fds, [&](int fd) { return setup(dir.path(), c, fd); });
    std::string said;
    for (bool open = true; open;)
      for (auto& line : test::pump(child, open)) {
        said += line + "\n";
        if (line.rfind("M ", 0) == 0) setup_map = std::stoull(line.substr(2));
      }
    const int status = test::reap(child, parent_fds);
    INFO(said);
    REQUIRE(test::describe_status(status) == "exit 0");
  }

  // A process that dies early must fail the test, not kill this one when we write to it.
  struct IgnoreSigpipe {
    void (*previous)(int) = std::signal(SIGPIPE, SIG_IGN);
    ~IgnoreSigpipe() { std::signal(SIGPIPE, previous); }
  } ignore_sigpipe;
  std::vector<Proc> workers;
  std::vector<int> go_fds;
  for (int p = 0; p < c.processes; ++p) {
    int go[2];
    REQUIRE(::pipe(go) == 0);
    parent_fds.push_back(go[1]);  // so later children close it: only this process may write
    workers.push_back(
        test::spawn(parent_fds, [&](int fd) { return worker(dir.path(), c, p, go[0], fd); }));
    ::close(go[0]);
    go_fds.push_back(go[1]);
  }

  std::vector<Report> reports;
  std::vector<std::string> errors;
  std::size_t ready = 0, max_open_map = 0;
  std::vector<bool> open(workers.size(), true);
  const auto go_time = [&] {
    for (int fd : go_fds) {
      CHECK(::write(fd, "g", 1) == 1);
      ::close(fd);
      parent_fds.erase(std::find(parent_fds.begin(), parent_fds.end(), fd));
    }
    go_fds.clear();
  };
  Clock::time_point running_since{};
  while (std::find(open.begin(), open.end(), true) != open.end()) {
    std::vector<pollfd> polled;
    std::vector<std::size_t> which;
    for (std::size_t w = 0; w < workers.size(); ++w)
      if (open[w]) {
        polled.push_back({workers[w].fd, POLLIN, 0});
        which.push_back(w);
      }
    REQUIRE((::poll(polled.data(), polled.size(), -1) >= 0 || errno == EINTR));
    for (std::size_t k = 0; k < polled.size(); ++k) {
      if ((polled[k].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      bool still = true;
      for (const auto& line : test::pump(workers[which[k]], still)) {
        std::istringstream in(line);
        Report r;
        in >> r.tag;
        if (r.tag == 'R') {
          if (++ready == workers.size()) {
            go_time();
            running_since = Clock::now();
          }
          continue;
        }
        if (r.tag == 'M') {
          std::size_t m = 0;
          in >> m;
          if (ready < workers.size()) max_open_map = std::max(max_open_map, m);
          continue;
        }
        if (r.tag == 'X' || !(in >> r.p >> r.t >> r.i)) {
          errors.push_back(line);
          continue;
        }
        std::getline(in >> std::ws, r.rest);
        reports.push_back(std::move(r));
      }
      open[which[k]] = still;
      if (!still && !go_fds.empty()) go_time();  // one died before starting: free the others
    }
  }
  const auto ran = Clock::now() - running_since;
  for (std::size_t w = 0; w < workers.size(); ++w) {
    const int status = test::reap(workers[w], parent_fds);
    INFO("process " << w);
    CHECK(test::describe_status(status) == "exit 0");
  }
  for (const auto& e : errors) FAIL_CHECK(e);
  REQUIRE(errors.empty());

  // ---- what the acknowledged operations imply ----
  struct Patch {
    std::uint32_t version;
    std::string field, value;
    int process;
  };
  std::vector<std::vector<Patch>> patches(hot_count);
  std::vector<std::vector<std::uint32_t>> no_ops(hot_count);
  std::vector<std::map<std::string, bool>> following(hot_count);    // user: follows?
  std::vector<std::map<std::string, VoteType>> votes(hot_count);    // user: last vote
  std::map<std::string, std::vector<std::string>> winners, losers;  // "kind fqn": id / who
  std::map<char, std::size_t> counts;
  for (const auto& r : reports) {
    ++counts[r.tag];
    std::istringstream in(r.rest);
    const auto user = user_name(r.p, r.t);
    int j = 0;
    if (r.tag == 'C' || r.tag == 'L') {
      int kind = 0;
      std::string fqn, id;
      in >> kind >> fqn >> id;
      const auto key = std::to_string(kind) + " " + fqn;
      (r.tag == 'C' ? winners[key] : losers[key]).push_back(r.tag == 'C' ? id : user);
      if (r.tag == 'L') winners[key];  // every tried name has an entry
      continue;
    }
    if (r.tag == 'W') continue;
    in >> j;
    REQUIRE((j >= 0 && j < hot_count));
    if (r.tag == 'P') {
      Patch patch;
      in >> patch.version >> patch.field >> patch.value;
      patch.process = r.p;
      patches[j].push_back(patch);
    } else if (r.tag == 'N') {
      std::uint32_t v = 0;
      in >> v;
      no_ops[j].push_back(v);
    } else if (r.tag == 'F') {
      int follows = 0;
      in >> follows;
      following[j][user] = follows == 1;
    } else if (r.tag == 'V') {
      int v = 0;
      in >> v;
      votes[j][user] = static_cast<VoteType>(v);
    }
  }

  // ---- the store, read in this process now that every child is gone ----
  auto store = Store::open_lmdb(dir.path(), store_options(), lmdb_options()).value();
  const auto admin = store.principal("admin").value();

  std::size_t steps = 0, handovers = 0;  // consecutive versions, and those by two processes
  for (int j = 0; j < hot_count; ++j) {
    const auto& h = hot[j];
    INFO(type_name(h.kind) << " " << h.fqn);
    auto entity = store.get_json(admin, h.kind, EntityKey::by_fqn(h.fqn), {{"*"}}).value();
    const auto id = test::uuid_of(entity);
    // Versions: every acknowledged patch that changed something made exactly one, +0.1 each.
    const auto n = static_cast<std::uint32_t>(patches[j].size());
    std::set<std::uint32_t> returned;
    for (const auto& patch : patches[j]) returned.insert(patch.version);
    CHECK(returned.size() == patches[j].size());  // no two patches got the same version
    CHECK(Version::parse(test::version_of(entity)).value().tenths() == 1 + n);
    if (n > 0) {
      CHECK(*returned.begin() == 2);
      CHECK(*returned.rbegin() == 1 + n);
    }
    for (auto v : no_ops[j]) CHECK((v >= 1 && v <= 1 + n));
    std::map<std::uint32_t, int> by;
    for (const auto& patch : patches[j]) by[patch.version] = patch.process;
    for (auto it = by.begin(); it != by.end() && std::next(it) != by.end(); ++it, ++steps)
      handovers += it->second != std::next(it)->second;
    const auto history = store.history_json(admin, h.kind, id).value();
    std::map<std::uint32_t, bj::object> by_version;
    for (const auto& text : history.versions) {
      auto doc = test::parse(text).as_object();
      const auto v = Version::parse(test::version_of(doc)).value().tenths();
      CHECK(by_version.emplace(v, std::move(doc)).second);  // each version once
    }
    REQUIRE(by_version.size() == 1 + n);
    CHECK(by_version.begin()->first == 1);
    CHECK(by_version.rbegin()->first == 1 + n);  // so every step is +0.1
    for (const auto& patch : patches[j]) {
      auto it = by_version.find(patch.version);
      REQUIRE(it != by_version.end());
      const auto* written = it->second.if_contains(patch.field);
      INFO("version " << Version::from_tenths(patch.version).to_string() << " " << patch.field);
      REQUIRE(written != nullptr);
      CHECK(written->as_string() == patch.value);
    }
    // Followers and votes: each user's last acknowledged operation.
    std::set<std::string> followers, up, down, stored_followers, stored_up, stored_down;
    for (const auto& [user, yes] : following[j])
      if (yes) followers.insert(user);
    for (const auto& [user, v] : votes[j]) {
      if (v == VoteType::voted_up) up.insert(user);
      if (v == VoteType::voted_down) down.insert(user);
    }
    for (const auto& f : entity.at("followers").as_array())
      stored_followers.emplace(f.at("name").as_string());
    CHECK(stored_followers == followers);
    if (info(h.kind).has_votes) {
      const auto& v = entity.at("votes").as_object();
      for (const auto& u : v.at("upVoters").as_array()) stored_up.emplace(u.at("name").as_string());
      for (const auto& u : v.at("downVoters").as_array())
        stored_down.emplace(u.at("name").as_string());
      CHECK(v.at("upVotes").as_int64() == static_cast<std::int64_t>(up.size()));
      CHECK(v.at("downVotes").as_int64() == static_cast<std::int64_t>(down.size()));
      CHECK(stored_up == up);
      CHECK(stored_down == down);
    }
  }

  // Creates: one winner per name, whose entity it is; every other try got already_exists.
  std::map<Kind, std::int64_t> created;
  for (const auto& [key, ids] : winners) {
    INFO(key << ": winners " << ids.size() << ", losers " << losers[key].size());
    REQUIRE(ids.size() == 1);
    std::istringstream in(key);
    int kind = 0;
    std::string fqn;
    in >> kind >> fqn;
    const auto k = static_cast<Kind>(kind);
    ++created[k];
    auto got = store.get_json(admin, k, EntityKey::by_fqn(fqn)).value();
    CHECK(test::id_of(got) == ids.front());
    CHECK(test::version_of(got) == "0.1");
  }

  // List totals: the total of a page, a walk of small pages and what the operations imply.
  const std::map<Kind, std::int64_t> expected{
      {Kind::user, 1 + c.processes * c.threads},
      {Kind::glossary, 2 + created[Kind::glossary]},
      {Kind::glossary_term, 1 + created[Kind::glossary_term]},
      {Kind::mlmodel, 1 + created[Kind::mlmodel]},
      {Kind::search_index, 1},
      {Kind::domain, 1}};
  for (const auto& [kind, count] : expected) {
    INFO(type_name(kind));
    ListOptions o;
    o.limit = 7;
    std::int64_t walked = 0, total = -1;
    while (true) {
      auto page = store.list_json(admin, kind, o).value();
      if (total < 0) total = page.total;
      walked += static_cast<std::int64_t>(page.data.size());
      if (!page.after) break;
      o.after = page.after;
    }
    CHECK(total == walked);
    CHECK(walked == count);
  }

  const auto problems = store.verify().value();
  for (const auto& p : problems) FAIL_CHECK(p.key << ": " << p.message);
  CHECK(problems.empty());
  // The map was small when the processes opened it; it grew while they wrote.
  const auto final_map = map_size(store);
  CHECK(final_map > max_open_map);

  const auto total_ops = static_cast<std::size_t>(c.processes * c.threads * c.ops);
  std::cout << "concurrency test: " << c.processes << " processes x " << c.threads << " threads x "
            << c.ops << " operations = " << total_ops << " in "
            << std::chrono::duration<double>(ran).count() << " s (whole test "
            << std::chrono::duration<double>(Clock::now() - started).count()
            << " s); acknowledged: " << counts['P'] << " patches that changed something, "
            << counts['N'] << " that changed nothing, " << counts['F'] << " follows/unfollows, "
            << counts['V'] << " votes, " << counts['C'] << " creates won and " << counts['L']
            << " lost (" << winners.size() << " names), " << counts['W'] << " list walks; "
            << handovers << " of " << steps
            << " consecutive versions were written by two different processes; map " << setup_map
            << " -> " << max_open_map << " -> " << final_map << " bytes\n";
  CHECK(reports.size() == total_ops);
}
