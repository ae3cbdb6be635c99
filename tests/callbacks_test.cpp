// The functions a host hands a Store (an update's edit, the clock, the log sink, change listeners)
// and what the store does when they misbehave: a call back into a Store from inside its
// transaction is refused instead of waiting for itself; an exception from inside the transaction
// leaves through the caller with the store unchanged; a listener's or a log sink's exception
// after the commit changes nothing for the caller; a listener keeps its own state.
#include <catalog/admin.hpp>
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using catalog::Errc;
using catalog::Glossary;
using catalog::LogLevel;

namespace {

/// A store in memory or in a temporary LMDB directory, with options the test chooses.
struct Opened {
  std::unique_ptr<test::TempDir> dir;  // declared first: removed after the store closes
  catalog::Store store;
};

Opened open(bool lmdb, catalog::StoreOptions options) {
  if (!lmdb) return {nullptr, catalog::Store::in_memory(std::move(options)).value()};
  auto dir = std::make_unique<test::TempDir>();
  auto store = catalog::Store::open_lmdb(dir->path(), std::move(options)).value();
  return {std::move(dir), std::move(store)};
}

Glossary glossary(catalog::Store& s, const catalog::Principal& who, const std::string& name) {
  catalog::CreateGlossary g;
  g.name = name;
  g.description = "first";
  return s.create<Glossary>(who, g).value();
}

/// A store with the test options, its admin, and glossary A.
struct WithGlossary {
  Opened opened;
  catalog::Principal admin = opened.store.principal("admin").value();
  Glossary a = glossary(opened.store, admin, "A");
};

/// Runs `body` on a WithGlossary in memory, then on one in LMDB (`lmdb` says which).
template <class Body>
void on_each_backend(Body body) {
  for (bool lmdb : {false, true}) {
    CAPTURE(lmdb);
    WithGlossary fx{open(lmdb, test::test_options())};
    body(fx, lmdb);
  }
}

bool says_nested(const catalog::Error& e) {
  return e.code() == Errc::internal &&
         e.message().find("from inside a transaction") != std::string::npos;
}

}  // namespace

TEST_CASE("a Store operation called from inside a transaction is refused, not waited for") {
  on_each_backend([](WithGlossary& fx, bool lmdb) {
    auto& s = fx.opened.store;
    const auto& admin = fx.admin;
    const auto& a = fx.a;

    // From an update's edit: a read and a write of the same store, and a read of another store.
    auto other = open(lmdb, test::test_options());
    std::vector<catalog::Error> refused;
    auto edited = s.update<Glossary>(admin, a.id, [&](Glossary& g) {
      g.description = "second";
      if (auto r = s.get<Glossary>(admin, a.id); !r) refused.push_back(r.error());
      catalog::CreateGlossary b;
      b.name = "B";
      b.description = "b";
      if (auto r = s.create<Glossary>(admin, b); !r) refused.push_back(r.error());
      if (auto r = other.store.principal("admin"); !r) refused.push_back(r.error());
    });
    REQUIRE(edited);
    CHECK(edited->description == "second");
    // The edit runs once here (no conflict), so each of the three calls was refused once.
    REQUIRE(refused.size() == 3);
    for (const auto& e : refused) CHECK(says_nested(e));
    CHECK(s.get<Glossary>(admin, catalog::EntityKey::by_fqn("B")).error().code() == Errc::not_found);

    // After it, the thread is outside again: reads and writes go through.
    CHECK(s.get<Glossary>(admin, a.id).value().description == "second");
    CHECK(glossary(s, admin, "C").name == "C");
  });
}

TEST_CASE("catalog::admin: its progress callback may not call the Store, nor an edit call it") {
  on_each_backend([](WithGlossary& fx, bool lmdb) {
    std::stringstream dump;
    REQUIRE(catalog::admin::export_store(fx.opened.store, dump));

    // An import's progress, told inside its write transaction, that writes to the store. An
    // import needs an empty store: one without the admin the test options make.
    catalog::StoreOptions bare = test::test_options();
    bare.admins.clear();
    auto empty = open(lmdb, bare);
    std::vector<catalog::Error> refused;
    catalog::admin::ImportOptions options;
    options.progress = [&](const catalog::admin::Progress&) {
      catalog::CreateGlossary g;
      g.name = "During";
      if (auto r = empty.store.create<Glossary>(fx.admin, g); !r) refused.push_back(r.error());
    };
    auto imported = catalog::admin::import_store(empty.store, dump, options);
    REQUIRE(imported);
    REQUIRE_FALSE(refused.empty());
    for (const auto& e : refused) CHECK(says_nested(e));

    // An admin function from inside a Store operation's callback.
    std::optional<catalog::Error> from_edit;
    auto edited = fx.opened.store.update<Glossary>(fx.admin, fx.a.id, [&](Glossary& g) {
      g.description = "edited";
      std::stringstream out;
      if (auto r = catalog::admin::export_store(fx.opened.store, out); !r) from_edit = r.error();
    });
    REQUIRE(edited);
    REQUIRE(from_edit);
    CHECK(says_nested(*from_edit));
  });
}

TEST_CASE("a clock that calls back into its store is refused, and the operation still answers") {
  for (bool lmdb : {false, true}) {
    CAPTURE(lmdb);
    auto options = test::test_options();
    auto clock = options.clock;
    catalog::Store* self = nullptr;
    std::vector<catalog::Error> refused;
    options.clock = [&, clock] {
      if (self)
        if (auto r = self->principal("admin"); !r) refused.push_back(r.error());
      return clock();
    };
    auto opened = open(lmdb, std::move(options));
    self = &opened.store;
    const auto admin = opened.store.principal("admin").value();
    // Each call of the clock inside the transactions of principal() and create() was refused.
    CHECK(!refused.empty());
    for (const auto& e : refused) CHECK(says_nested(e));
    refused.clear();
    CHECK(glossary(opened.store, admin, "A").name == "A");
    CHECK(!refused.empty());
    for (const auto& e : refused) CHECK(says_nested(e));
  }
}

TEST_CASE("an exception from an edit leaves through the caller and the store as it was") {
  on_each_backend([](WithGlossary& fx, bool /*lmdb*/) {
    auto& s = fx.opened.store;
    const auto& admin = fx.admin;
    const auto& a = fx.a;
    const auto before = test::dump(s);
    CHECK_THROWS_WITH(s.update<Glossary>(admin, a.id,
                                         [](Glossary& g) {
                                           g.description = "lost";
                                           throw std::runtime_error("edit failed");
                                         }),
                      "edit failed");
    CHECK(test::dump(s) == before);
    // The transaction ended (LMDB's writer lock, the memory backend's turn): writes go on.
    auto edited = s.update<Glossary>(admin, a.id, [](Glossary& g) { g.description = "kept"; });
    REQUIRE(edited);
    CHECK(edited->description == "kept");
  });
}

TEST_CASE("listeners keep their state, and one that throws changes nothing for the caller") {
  for (bool lmdb : {false, true}) {
    CAPTURE(lmdb);
    auto options = test::test_options();
    std::vector<std::pair<LogLevel, std::string>> logged;
    bool sink_throws = false;
    options.log = [&](LogLevel level, std::string_view message) {
      logged.emplace_back(level, std::string(message));
      if (sink_throws) throw std::runtime_error("sink failed");
    };
    auto opened = open(lmdb, std::move(options));
    auto& s = opened.store;
    const auto admin = s.principal("admin").value();

    // A stateful listener: the one subscribed is the one called, commit after commit.
    std::vector<int> counts;
    auto counting = s.subscribe([&counts, n = 0](const catalog::ChangeEvent&) mutable {
      counts.push_back(++n);
    });
    auto a = glossary(s, admin, "A");
    glossary(s, admin, "B");
    glossary(s, admin, "C");
    CHECK(counts == std::vector<int>{1, 2, 3});
    s.unsubscribe(counting);

    // A listener that throws, subscribed before one that records: the patch answers, the other
    // listener hears the event, and the exception is logged.
    s.subscribe([](const catalog::ChangeEvent&) { throw std::runtime_error("listener failed"); });
    std::vector<std::uint64_t> heard;
    s.subscribe([&](const catalog::ChangeEvent& e) { heard.push_back(e.offset); });
    logged.clear();
    auto patched =
        s.patch<Glossary>(admin, a.id, test::parse(R"({"description":"second"})"));
    REQUIRE(patched);
    CHECK(patched->description == "second");
    REQUIRE(heard.size() == 1);
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].first == LogLevel::error);
    CHECK(logged[0].second == "a change listener threw at event " + std::to_string(heard[0]) +
                                  ": listener failed");

    // A log sink that throws too: still the answer of the committed write.
    sink_throws = true;
    auto again = s.patch<Glossary>(admin, a.id, test::parse(R"({"description":"third"})"));
    REQUIRE(again);
    CHECK(again->description == "third");
    CHECK(heard.size() == 2);
    CHECK(s.get<Glossary>(admin, a.id).value().description == "third");
  }
}

TEST_CASE("a log sink's call into a Store is refused wherever the line is logged from") {
  // A slow write is logged after its commit, and a listener's exception after the listeners:
  // the transaction is over then, but the sink still may not call a Store (options.hpp). Before,
  // such a call was accepted there, and a sink that wrote on each slow write recursed until the
  // stack ran out.
  for (bool lmdb : {false, true}) {
    CAPTURE(lmdb);
    auto options = test::test_options();
    options.slow_operation = std::chrono::milliseconds(1);
    auto ticks = std::make_shared<std::int64_t>(1767225600000);
    std::vector<catalog::Error> refused;
    catalog::Store* store = nullptr;
    catalog::Principal admin;
    std::optional<catalog::Uuid> glossary_id;
    int sink_calls = 0;
    options.log = [&](LogLevel, std::string_view) {
      if (!store || !glossary_id) return;
      ++sink_calls;
      auto r = store->patch<Glossary>(admin, *glossary_id,
                                      test::parse(R"({"description":"from the sink"})"));
      if (!r) refused.push_back(r.error());
    };
    auto opened = open(lmdb, std::move(options));
    auto& s = opened.store;
    admin = s.principal("admin").value();
    auto a = glossary(s, admin, "A");
    store = &s;
    glossary_id = a.id;
    s.subscribe([](const catalog::ChangeEvent&) { throw std::runtime_error("listener failed"); });
    // Slow for sure: the edit takes longer than the threshold.
    auto patched = s.update<Glossary>(admin, a.id, [](Glossary& g) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      g.description = "second";
    });
    REQUIRE(patched);
    CHECK(sink_calls >= 2);  // the listener's exception, the slow operation
    REQUIRE(refused.size() == static_cast<std::size_t>(sink_calls));
    for (const auto& e : refused) CHECK(says_nested(e));
    store = nullptr;
    CHECK(s.get<Glossary>(admin, a.id).value().description == "second");
    CHECK(s.history_json(admin, catalog::Kind::glossary, a.id).value().versions.size() == 2);
  }
}
