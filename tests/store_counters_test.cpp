// What a Store counts and logs about its own work (<catalog/counters.hpp>, StoreOptions::log and
// slow_operation): each operation once with its final outcome, slow operations, commit times,
// and a full LMDB map grown on the way. Retries after conflicts are in retry_test.
#include <catalog/storage/memory_backend.hpp>
#include <catalog/store.hpp>

#include "forwarding_transaction.hpp"
#include "support.hpp"
#include <catalog/detail/store/counting.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace catalog;
using test::parse;

namespace {

const OperationCounts& of(const StoreCounters& c, StoreOperation op) {
  return c.operations[static_cast<std::size_t>(op)];
}

std::uint64_t failed(const StoreCounters& c, StoreOperation op, ErrorKind kind) {
  return of(c, op).failed[static_cast<std::size_t>(kind)];
}

struct Log {
  std::vector<std::pair<LogLevel, std::string>> lines;
  LogSink sink() {
    return [this](LogLevel level, std::string_view message) {
      lines.emplace_back(level, std::string(message));
    };
  }
  std::size_t count(LogLevel level, std::string_view text) const {
    return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
      return l.first == level && l.second.find(text) != std::string::npos;
    }));
  }
};

// A memory backend whose write commits take at least `pause`.
class SlowCommitBackend final : public storage::Backend {
 public:
  explicit SlowCommitBackend(std::chrono::milliseconds pause) : pause_(pause) {}
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    auto t = inner_.begin(mode);
    if (!t) return t.error();
    if (mode == storage::Mode::read_only) return t;
    return std::unique_ptr<storage::Transaction>(std::make_unique<Txn>(std::move(*t), pause_));
  }

 private:
  class Txn final : public test::ForwardingTransaction {
   public:
    Txn(std::unique_ptr<storage::Transaction> inner, std::chrono::milliseconds pause)
        : ForwardingTransaction(std::move(inner)), pause_(pause) {}
    Result<void> commit() override {
      std::this_thread::sleep_for(pause_);
      return inner_->commit();
    }

   private:
    std::chrono::milliseconds pause_;
  };

  storage::MemoryBackend inner_;
  std::chrono::milliseconds pause_;
};

// A memory backend whose read transactions fail while `fail_reads` is set (an LMDB reader table
// that is full, a database session lost).
class FailingReadsBackend final : public storage::Backend {
 public:
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    if (mode == storage::Mode::read_only && fail_reads)
      return Error(Errc::storage, "no reader slot is free");
    return inner_.begin(mode);
  }
  bool fail_reads = false;

 private:
  storage::MemoryBackend inner_;
};

// A store whose commits take at least 20 ms (SlowCommitBackend), which logs to `log` and counts
// operations of 5 ms or more as slow.
Store slow_store(Log& log) {
  auto options = test::test_options();
  options.log = log.sink();
  options.slow_operation = std::chrono::milliseconds(5);
  return Store::open(std::make_unique<SlowCommitBackend>(std::chrono::milliseconds(20)), options)
      .value();
}

}  // namespace

TEST_CASE("each operation is counted once, with its outcome by error kind", "[store_counters]") {
  auto store = Store::in_memory(test::test_options()).value();
  auto admin = store.principal("admin").value();
  const auto before = store.counters();

  auto body = parse(R"({"name":"Business","description":"Terms"})");
  auto made = store.create_json(admin, Kind::glossary, body);
  REQUIRE(made.has_value());
  auto again = store.create_json(admin, Kind::glossary, body);
  REQUIRE(again.error().kind() == ErrorKind::conflict);
  auto missing = store.get_json(admin, Kind::glossary, EntityKey::by_fqn("Nothing"));
  REQUIRE(missing.error().kind() == ErrorKind::not_found);
  auto bad_fields = store.get_json(admin, Kind::glossary, EntityKey::by_fqn("Business"),
                                   GetOptions{{"noSuchField"}});
  REQUIRE(bad_fields.error().kind() == ErrorKind::bad_request);
  ListOptions bad_limit;
  bad_limit.limit = -1;
  REQUIRE(store.list_json(admin, Kind::glossary, bad_limit).error().kind() ==
          ErrorKind::bad_request);
  REQUIRE(store.list_json(admin, Kind::glossary, {}).has_value());
  auto nobody = store.authenticate("not.a.token");
  REQUIRE(nobody.error().kind() == ErrorKind::unauthorized);
  auto user = store.principal("admin").value();
  REQUIRE(store.events_json(user, 0, -5).error().kind() == ErrorKind::bad_request);

  const auto after = store.counters();
  CHECK(of(after, StoreOperation::create).ok == of(before, StoreOperation::create).ok + 1);
  CHECK(failed(after, StoreOperation::create, ErrorKind::conflict) ==
        failed(before, StoreOperation::create, ErrorKind::conflict) + 1);
  CHECK(failed(after, StoreOperation::get, ErrorKind::not_found) ==
        failed(before, StoreOperation::get, ErrorKind::not_found) + 1);
  CHECK(failed(after, StoreOperation::get, ErrorKind::bad_request) ==
        failed(before, StoreOperation::get, ErrorKind::bad_request) + 1);
  CHECK(failed(after, StoreOperation::list, ErrorKind::bad_request) ==
        failed(before, StoreOperation::list, ErrorKind::bad_request) + 1);
  CHECK(of(after, StoreOperation::list).ok == of(before, StoreOperation::list).ok + 1);
  CHECK(failed(after, StoreOperation::authenticate, ErrorKind::unauthorized) ==
        failed(before, StoreOperation::authenticate, ErrorKind::unauthorized) + 1);
  CHECK(failed(after, StoreOperation::events, ErrorKind::bad_request) ==
        failed(before, StoreOperation::events, ErrorKind::bad_request) + 1);
  // Opening the store (its transactions wrote the admin user) is one maintenance operation.
  CHECK(of(before, StoreOperation::maintain).ok == 1);
  // One write committed here; nothing retried, nothing slow (no threshold set).
  CHECK(after.commits == before.commits + 1);
  CHECK(after.map_full_retries == 0);
  CHECK(after.conflict_retries == 0);
  CHECK(after.slow_operations == 0);
  CHECK(after.commit_p50 <= after.commit_p90);
  CHECK(after.commit_p90 <= after.commit_p99);
  CHECK(after.commit_p99 <= after.commit_max);
  CHECK(store_operation_name(StoreOperation::create) == "create");
  CHECK(store_operation_name(StoreOperation::maintain) == "maintain");
}

TEST_CASE("an operation slower than slow_operation is logged and counted", "[store_counters]") {
  Log log;
  auto store = slow_store(log);
  auto admin = store.principal("admin").value();
  const auto before = store.counters();
  const auto logged = log.count(LogLevel::warning, "slow operation: create took ");

  auto made =
      store.create_json(admin, Kind::glossary, parse(R"({"name":"Slow","description":"Slow"})"));
  INFO((made ? std::string("created") : made.error().message()));
  REQUIRE(made.has_value());

  const auto after = store.counters();
  CHECK(after.slow_operations == before.slow_operations + 1);
  CHECK(log.count(LogLevel::warning, "slow operation: create took ") == logged + 1);
  // Commits take at least 20 ms: every percentile says so (within its bucket's 19%).
  CHECK(after.commit_max >= std::chrono::milliseconds(20));
  CHECK(after.commit_p50 >= std::chrono::microseconds(16'000));
  // A read commits nothing and is fast.
  REQUIRE(store.get_json(admin, Kind::glossary, EntityKey::by_fqn("Slow")).has_value());
  CHECK(store.counters().slow_operations == after.slow_operations);
}

TEST_CASE("a logged message is one line: a line break a request sent comes as \\x0A",
          "[store_counters]") {
  // A slow operation's line quotes its error, and an unknown member's name is the request's.
  Log log;
  auto options = test::test_options();
  options.log = log.sink();
  options.slow_operation = std::chrono::milliseconds(1);
  auto store = Store::in_memory(options).value();
  auto admin = store.principal("admin").value();
  REQUIRE(store.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"g"})")));
  auto refused = store.update_json(
      admin, Kind::glossary, EntityKey::by_fqn("G"),
      [](const boost::json::object&) -> Result<boost::json::value> {
        std::this_thread::sleep_for(std::chrono::milliseconds(3));  // slow for sure
        return parse(
            R"([{"op":"add","path":"/x\n\u001b[31mforged\u0085\u009b1m\u2028end","value":1}])");
      });
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == Errc::invalid_request);
  CHECK(refused.error().message().find("x\n\x1b[31mforged") != std::string::npos);
  // Refused, the glossary is as it was.
  const auto g = store.get_json(admin, Kind::glossary, EntityKey::by_fqn("G")).value();
  CHECK(g.at("version") == 0.1);
  CHECK(!g.contains("x\n\x1b[31mforged\xC2\x85\xC2\x9B" "1m\xE2\x80\xA8" "end"));
  const auto line = std::find_if(log.lines.begin(), log.lines.end(), [](const auto& l) {
    return l.second.starts_with("slow operation: ") &&
           l.second.find(" and failed: ") != std::string::npos;
  });
  REQUIRE(line != log.lines.end());
  CHECK(line->second.find("x\\x0A\\x1B[31mforged\\xC2\\x85\\xC2\\x9B1m\\xE2\\x80\\xA8end") !=
        std::string::npos);
  for (const auto& [level, message] : log.lines) {
    CHECK(std::none_of(message.begin(), message.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
    }));
    CHECK(message.find("\xC2\x85") == std::string::npos);
    CHECK(message.find("\xE2\x80\xA8") == std::string::npos);
  }
}

TEST_CASE("opening a store, a reindex, a verify, a search, a suggest and an aggregate are each "
          "counted once, as themselves",
          "[store_counters]") {
  // Every commit takes 20 ms, so that an operation of several transactions would be counted and
  // logged as slow once for each if its transactions were counted.
  Log log;
  auto store = slow_store(log);
  // Opening read the key schema, found the store new, built the search index and made the admin:
  // one maintenance operation, slow once.
  const auto opened = store.counters();
  CHECK(of(opened, StoreOperation::maintain).ok == 1);
  CHECK(opened.commits >= 2);
  CHECK(opened.slow_operations == 1);
  CHECK(log.count(LogLevel::warning, "slow operation: maintain took ") == 1);

  auto admin = store.principal("admin").value();
  for (int i = 0; i < 5; ++i)
    REQUIRE(store
                .create_json(admin, Kind::glossary,
                             parse(R"({"name":"Terms)" + std::to_string(i) +
                                   R"(","description":"Business terms"})"))
                .has_value());
  const auto before = store.counters();

  // A reindex in batches of two entities: a transaction to mark it, clearing, one a batch, one to
  // finish; one operation.
  auto indexed = store.reindex(admin, 2);
  REQUIRE(indexed.has_value());
  CHECK(*indexed == 6);  // the admin user and the five glossaries
  const auto reindexed = store.counters();
  CHECK(reindexed.commits >= before.commits + 5);
  CHECK(of(reindexed, StoreOperation::reindex).ok == 1);
  CHECK(of(reindexed, StoreOperation::maintain).ok == 1);
  CHECK(reindexed.slow_operations == before.slow_operations + 1);
  CHECK(log.count(LogLevel::warning, "slow operation: reindex took ") == 1);
  // A reindex by a non-admin: refused before it starts, counted once.
  auto user = store.create_json(admin, Kind::user, parse(R"({"name":"bob","email":"bob@x.org"})"));
  REQUIRE(user.has_value());
  auto bob = store.principal("bob").value();
  REQUIRE(store.reindex(bob).error().kind() == ErrorKind::forbidden);
  CHECK(failed(store.counters(), StoreOperation::reindex, ErrorKind::forbidden) == 1);
  REQUIRE(store.verify().value().empty());
  CHECK(of(store.counters(), StoreOperation::verify).ok == 1);

  // search, suggest and aggregate: each its own operation.
  SearchRequest request;
  request.q = "business";
  auto found = store.search(admin, request);
  REQUIRE(found.has_value());
  CHECK(found->total == 5);
  REQUIRE(store.suggest(admin, "Terms", "all", 3).has_value());
  REQUIRE(store.suggest_json(admin, "Terms", "all", 101).error().kind() ==
          ErrorKind::bad_request);
  AggregateRequest facet;
  facet.field = "entityType";
  REQUIRE(store.aggregate(admin, facet).has_value());
  request.size = -1;
  REQUIRE(store.search(admin, request).error().kind() == ErrorKind::bad_request);
  const auto searched = store.counters();
  CHECK(of(searched, StoreOperation::search).ok == 1);
  CHECK(failed(searched, StoreOperation::search, ErrorKind::bad_request) == 1);
  CHECK(of(searched, StoreOperation::suggest).ok == 1);
  CHECK(failed(searched, StoreOperation::suggest, ErrorKind::bad_request) == 1);
  CHECK(of(searched, StoreOperation::aggregate).ok == 1);
  CHECK(store_operation_name(StoreOperation::suggest) == "suggest");
  CHECK(store_operation_name(StoreOperation::aggregate) == "aggregate");
  CHECK(store_operation_name(StoreOperation::verify) == "verify");
  CHECK(store_operation_name(StoreOperation::reindex) == "reindex");
}

TEST_CASE("a full LMDB map is grown, logged and counted, and the write goes through",
          "[store_counters]") {
  test::TempDir dir;
  Log log;
  auto options = test::test_options();
  options.log = log.sink();
  storage::LmdbOptions small;
  small.map_size = std::size_t{256} << 10;
  auto store = Store::open_lmdb(dir.path(), options, small).value();
  auto admin = store.principal("admin").value();
  const std::string text(2000, 'x');
  for (int i = 0; i < 400; ++i) {
    auto body =
        parse(R"({"name":"g)" + std::to_string(i) + R"(","description":")" + text + R"("})");
    REQUIRE(store.create_json(admin, Kind::glossary, body).has_value());
  }
  const auto c = store.counters();
  CHECK(c.map_full_retries > 0);
  CHECK(log.count(LogLevel::info, "the storage map is full (") == c.map_full_retries);
  CHECK(log.count(LogLevel::info, ": it grows and the operation runs again") == c.map_full_retries);
  CHECK(failed(c, StoreOperation::create, ErrorKind::internal) == 0);
  CHECK(of(c, StoreOperation::create).ok == 400);
}

TEST_CASE("a write too large for an LMDB map at its maximum size fails once there, not 40 times",
          "[store_counters]") {
  test::TempDir dir;
  Log log;
  auto options = test::test_options();
  options.log = log.sink();
  storage::LmdbOptions capped;
  capped.map_size = std::size_t{512} << 10;  // one growth, to the maximum, then no more
  capped.max_map_size = std::size_t{1} << 20;
  auto store = Store::open_lmdb(dir.path(), options, capped).value();
  auto admin = store.principal("admin").value();
  const auto before = test::dump(store);
  auto body = parse(R"({"name":"big","description":")" + std::string(3 << 20, 'x') + R"("})");
  auto made = store.create_json(admin, Kind::glossary, body);
  REQUIRE_FALSE(made.has_value());
  CHECK(made.error().code() == Errc::storage_full);
  CHECK(made.error().message() ==
        "LMDB map is full at 1048576 bytes, its maximum size (LmdbOptions::max_map_size 1048576)");
  const auto c = store.counters();
  CHECK(c.map_full_retries == 1);
  CHECK(log.count(LogLevel::info, "the storage map is full") == 1);
  CHECK(test::dump(store) == before);
  // Small writes still fit.
  CHECK(store.create_json(admin, Kind::glossary, parse(R"({"name":"small","description":"d"})"))
            .has_value());
}

TEST_CASE("commit time buckets cover every time and tell percentiles within a quarter",
          "[store_counters]") {
  using detail::StoreCounting;
  for (std::uint64_t us : {0ull, 1ull, 3ull, 4ull, 5ull, 7ull, 8ull, 1000ull, 1023ull, 1024ull,
                           123456789ull, 1ull << 62, ~0ull}) {
    const auto b = StoreCounting::bucket(us);
    REQUIRE(b < StoreCounting::bucket_count);
    CHECK(StoreCounting::bucket_top(b) >= us);
    if (b > 0) CHECK(StoreCounting::bucket_top(b - 1) < us);
    // The top of a bucket is at most 1.25 times anything in it (for times of 4 us and more).
    if (us >= 4)
      CHECK(static_cast<double>(StoreCounting::bucket_top(b)) <= 1.25 * static_cast<double>(us));
  }
  StoreCounting counting;
  for (int i = 0; i < 98; ++i) counting.commit(std::chrono::microseconds(100));
  counting.commit(std::chrono::microseconds(5000));
  counting.commit(std::chrono::microseconds(90000));
  const auto c = counting.snapshot();
  CHECK(c.commits == 100);
  CHECK(c.commit_p50 >= std::chrono::microseconds(100));
  CHECK(c.commit_p50 < std::chrono::microseconds(125));
  CHECK(c.commit_p90 == c.commit_p50);
  CHECK(c.commit_p99 >= std::chrono::microseconds(5000));
  CHECK(c.commit_p99 < std::chrono::microseconds(6250));
  CHECK(c.commit_max == std::chrono::microseconds(90000));
}

TEST_CASE("events the listeners cannot be told of, because reading them back fails, are logged "
          "with their offsets; the commit stands",
          "[store_counters]") {
  Log log;
  auto options = test::test_options();
  options.log = log.sink();
  auto owned = std::make_unique<FailingReadsBackend>();
  auto* backend = owned.get();
  auto store = Store::open(std::move(owned), options).value();
  auto admin = store.principal("admin").value();
  std::vector<std::uint64_t> told;
  store.subscribe([&](const ChangeEvent& e) { told.push_back(e.offset); });
  backend->fail_reads = true;
  auto created = store.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"g"})"));
  backend->fail_reads = false;
  REQUIRE(created);
  CHECK(told.empty());
  const auto events = store.events(admin, 0, 100).value();
  REQUIRE_FALSE(events.data.empty());
  const auto offset = std::to_string(events.data.back().offset);
  CHECK(log.count(LogLevel::error, "the change listeners were not told of events " + offset +
                                       " to " + offset + ": reading them failed: no reader slot") ==
        1);
  // The next commit is told as usual.
  REQUIRE(store.create_json(admin, Kind::glossary, parse(R"({"name":"H","description":"h"})")));
  CHECK(told.size() == 1);
}

TEST_CASE("a slow_operation threshold up to milliseconds::max() never counts an operation slow",
          "[store_counters]") {
  Log log;
  auto options = test::test_options();
  options.log = log.sink();
  options.slow_operation = std::chrono::milliseconds::max();
  auto store = Store::in_memory(options).value();
  auto admin = store.principal("admin").value();
  REQUIRE(store.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"g"})")));
  CHECK(store.counters().slow_operations == 0);
  CHECK(log.count(LogLevel::warning, "slow operation") == 0);
}
