// The Store runs an operation again when its transaction conflicted with concurrent writers
// (Errc::storage_conflict, which PostgreSQL returns): bounded, with backoff, and an operation that
// keeps conflicting gives up with storage_conflict having changed nothing. The conflicts here
// come from a backend that makes them on demand, over the memory backend.
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

using namespace catalog;
using test::parse;

namespace {

// Where the next conflicts happen: at a write transaction's commit, at its first get, or at a
// read transaction's first get.
enum class Where { commit, write_get, read_get };

struct Plan {
  std::atomic<int> conflicts{0};  // how many transactions still conflict
  Where where = Where::commit;
  std::atomic<int> write_begins{0};
  std::atomic<int> read_begins{0};
  int at_get = 1;  // which get of a transaction conflicts (read_get, write_get)
  // What they fail with: a conflict, or a session the server ended before the commit.
  Errc code = Errc::storage_conflict;
};

class ConflictingTransaction final : public storage::Transaction {
 public:
  ConflictingTransaction(std::unique_ptr<storage::Transaction> inner, Plan& plan,
                         storage::Mode mode)
      : inner_(std::move(inner)), plan_(plan), mode_(mode) {}

  Result<std::optional<std::string>> get(std::string_view key) override {
    const Where here = mode_ == storage::Mode::read_only ? Where::read_get : Where::write_get;
    if (++gets_ == plan_.at_get)
      if (auto d = conflict_if(here); !d) return d.error();
    if (dead_) return *dead_;
    return inner_->get(key);
  }
  Result<void> put(std::string_view key, std::string_view value) override {
    if (dead_) return *dead_;
    return inner_->put(key, value);
  }
  Result<bool> erase(std::string_view key) override {
    if (dead_) return *dead_;
    return inner_->erase(key);
  }
  Result<std::unique_ptr<storage::Cursor>> scan(const storage::Range& range,
                                                storage::Direction dir) override {
    if (dead_) return *dead_;
    return inner_->scan(range, dir);
  }
  Result<void> commit() override {
    if (mode_ == storage::Mode::read_write)
      if (auto d = conflict_if(Where::commit); !d) return d.error();
    if (dead_) return *dead_;
    return inner_->commit();
  }

 private:
  // Fails (and kills the transaction, rolling it back) if this is where the plan conflicts.
  Result<void> conflict_if(Where here) {
    if (dead_) return *dead_;
    if (here == plan_.where && !decided_) {
      decided_ = true;
      if (plan_.conflicts.fetch_sub(1) > 0) {
        dead_ = Error(plan_.code, "injected failure");
        inner_.reset();
        return *dead_;
      }
    }
    return {};
  }

  std::unique_ptr<storage::Transaction> inner_;
  Plan& plan_;
  storage::Mode mode_;
  bool decided_ = false;
  int gets_ = 0;
  std::optional<Error> dead_;
};

class ConflictingBackend final : public storage::Backend {
 public:
  explicit ConflictingBackend(Plan& plan) : plan_(plan) {}
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    ++(mode == storage::Mode::read_write ? plan_.write_begins : plan_.read_begins);
    auto t = inner_.begin(mode);
    if (!t) return t.error();
    return std::unique_ptr<storage::Transaction>(
        std::make_unique<ConflictingTransaction>(std::move(*t), plan_, mode));
  }

 private:
  storage::MemoryBackend inner_;
  Plan& plan_;
};

struct Fixture {
  Plan plan;
  std::vector<std::string> log;  // "<level> <message>" of each line the store logged
  Store store = Store::open(std::make_unique<ConflictingBackend>(plan), options()).value();
  Principal admin = store.principal("admin").value();
  std::vector<std::string> events;  // the eventType of each event a subscriber was told of

  Fixture() {
    store.subscribe([this](const ChangeEvent& e) {
      events.emplace_back(catalog::detail::enum_name(e.event_type));
    });
    plan.conflicts = -1000000;  // armed by each test
  }

  StoreOptions options() {
    auto o = test::test_options();
    o.log = [this](LogLevel level, std::string_view message) {
      log.push_back(std::to_string(static_cast<int>(level)) + " " + std::string(message));
    };
    return o;
  }
  std::size_t logged(std::string_view text) const {
    return static_cast<std::size_t>(std::count_if(log.begin(), log.end(), [&](const auto& line) {
      return line.find(text) != std::string::npos;
    }));
  }
  const OperationCounts& creates(const StoreCounters& c) const {
    return c.operations[static_cast<std::size_t>(StoreOperation::create)];
  }

  Result<boost::json::object> create_user(const std::string& name) {
    return store.create_json(admin, Kind::user,
                             parse(R"({"name":")" + name + R"(","email":")" + name +
                                   R"(@example.com"})"));
  }
  std::int64_t users() {
    ListOptions o;
    o.limit = 0;
    return store.list_json(admin, Kind::user, o).value().total;
  }
};

}  // namespace

TEST_CASE("an operation whose transaction conflicts runs again and is applied once", "[retry]") {
  Fixture f;
  const auto where = GENERATE(Where::commit, Where::write_get);
  f.plan.where = where;
  f.plan.conflicts = 3;
  f.plan.write_begins = 0;
  const auto before = f.store.counters();
  auto made = f.create_user("alice");
  REQUIRE(made.has_value());
  CHECK(f.plan.write_begins == 4);  // three conflicted, the fourth committed
  // Counted once, as it ended; each retry counted and logged at debug level.
  const auto after = f.store.counters();
  CHECK(f.creates(after).ok == f.creates(before).ok + 1);
  CHECK(after.conflict_retries == before.conflict_retries + 3);
  CHECK(after.conflicts_given_up == 0);
  CHECK(after.commits == before.commits + 1);
  CHECK(f.logged("0 a transaction conflicted with concurrent writers (attempt ") == 3);
  CHECK(f.logged("of 12): it runs again") == 3);
  CHECK(f.users() == 2);            // admin and alice, once
  CHECK(f.events == std::vector<std::string>{"entityCreated"});
  auto page = f.store.events(f.admin, 0, 100).value();
  CHECK(page.total == static_cast<std::int64_t>(page.data.size()));
  CHECK(page.data.back().entity_fully_qualified_name == "alice");
  CHECK(f.store.verify().value().empty());
}

TEST_CASE("an operation that keeps conflicting gives up and changes nothing", "[retry]") {
  Fixture f;
  f.plan.where = Where::commit;
  f.plan.conflicts = 1000;
  f.plan.write_begins = 0;
  const auto before = test::dump(f.store);
  const auto counted = f.store.counters();
  auto refused = f.create_user("bob");
  REQUIRE_FALSE(refused.has_value());
  const auto now = f.store.counters();
  CHECK(f.creates(now).ok == f.creates(counted).ok);
  CHECK(f.creates(now).failed[static_cast<std::size_t>(ErrorKind::internal)] ==
        f.creates(counted).failed[static_cast<std::size_t>(ErrorKind::internal)] + 1);
  CHECK(now.conflict_retries == counted.conflict_retries + 11);
  CHECK(now.conflicts_given_up == counted.conflicts_given_up + 1);
  CHECK(now.commits == counted.commits);
  CHECK(f.logged("2 an operation gave up after 12 attempts in conflict with concurrent writers") ==
        1);
  CHECK(refused.error().code() == Errc::storage_conflict);
  CHECK(refused.error().kind() == ErrorKind::internal);
  CHECK(refused.error().message().find("gave up after 12 attempts") != std::string::npos);
  CHECK(refused.error().message().find("nothing was changed") != std::string::npos);
  CHECK(f.plan.write_begins == 12);
  f.plan.conflicts = 0;
  CHECK(test::dump(f.store) == before);
  CHECK(f.events.empty());
  // The next operation goes through.
  CHECK(f.create_user("bob").has_value());
  CHECK(f.users() == 2);
}

TEST_CASE("a read whose transaction conflicts runs again", "[retry]") {
  Fixture f;
  f.create_user("carol").value();
  f.plan.where = Where::read_get;
  f.plan.conflicts = 2;
  f.plan.read_begins = 0;
  auto got = f.store.get_json(f.admin, Kind::user, EntityKey::by_fqn("carol"));
  REQUIRE(got.has_value());
  CHECK(got->at("name").as_string() == "carol");
  CHECK(f.plan.read_begins == 3);
}

TEST_CASE("a typed list whose read conflicts midway answers each entity once", "[retry]") {
  // The entities of a typed page go straight into the answer as they are read: a read that
  // conflicts after some of them must start the page over, not append to it.
  Fixture f;
  for (const char* name : {"carol", "dave", "erin"}) f.create_user(name).value();
  for (int at : {2, 3, 4}) {
    INFO("conflict at get " << at);
    f.plan.where = Where::read_get;
    f.plan.at_get = at;
    f.plan.conflicts = 1;
    f.plan.read_begins = 0;
    auto page = f.store.list<User>(f.admin).value();
    CHECK(f.plan.read_begins == 2);
    std::vector<std::string> names;
    for (const auto& u : page.data) names.push_back(u.name);
    CHECK(names == std::vector<std::string>{"admin", "carol", "dave", "erin"});
    CHECK(page.total == 4);
    auto any = f.store.list_entities(f.admin, Kind::user).value();
    CHECK(any.data.size() == 4);
  }
}

TEST_CASE("other errors are not retried", "[retry]") {
  Fixture f;
  f.create_user("dave").value();
  f.plan.write_begins = 0;
  auto again = f.create_user("dave");
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code() == Errc::already_exists);
  CHECK(f.plan.write_begins == 1);
}

TEST_CASE("an operation whose session the server ended before its commit runs again, 3 times "
          "at most",
          "[retry]") {
  // storage_unavailable: nothing of the transaction was written (PostgreSQL: a restart).
  Fixture f;
  f.plan.code = Errc::storage_unavailable;
  f.plan.where = GENERATE(Where::write_get, Where::read_get);
  const bool writes = f.plan.where == Where::write_get;
  const auto counted = f.store.counters();
  f.plan.conflicts = 2;
  if (writes) {
    REQUIRE(f.create_user("carol").has_value());
  } else {
    REQUIRE(f.store.get_json(f.admin, Kind::user, EntityKey::by_fqn("admin"), {}).has_value());
  }
  auto now = f.store.counters();
  CHECK(now.unavailable_retries == counted.unavailable_retries + 2);
  CHECK(now.conflict_retries == counted.conflict_retries);
  CHECK(f.logged("2 the database server ended a transaction's session before it committed "
                 "(attempt ") == 2);
  CHECK(f.users() == (writes ? 2 : 1));

  // A third in a row: given up, nothing changed.
  const auto before = test::dump(f.store);
  f.plan.conflicts = 3;
  auto refused = writes ? f.create_user("dave").error()
                        : f.store.get_json(f.admin, Kind::user, EntityKey::by_fqn("admin"), {})
                              .error();
  CHECK(refused.code() == Errc::storage_unavailable);
  CHECK(refused.kind() == ErrorKind::internal);
  CHECK(refused.message().find("gave up after 3 attempts, each ended by the database server") !=
        std::string::npos);
  CHECK(f.store.counters().unavailable_retries == now.unavailable_retries + 2);
  f.plan.conflicts = 0;
  CHECK(test::dump(f.store) == before);
}
