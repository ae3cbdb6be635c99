// catalog::admin through the library: export and import reproduce a store key for
// key across backends, bad or truncated input is refused by line and leaves the store empty,
// an LMDB map that fills restarts an import, progress is reported, a backup taken while another
// process writes verifies clean, stats count what the store holds, and events are read from an
// offset and followed. The hidden cases at the end write the stores tests/admin/cli_test.sh
// runs catalog-admin on.
#include <catalog/admin.hpp>

#include <catalog/detail/engine/keys.hpp>  // to break one key, and to read raw counts
#include <catalog/storage/memory_backend.hpp>
#include "admin_support.hpp"
#include "child_process.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace catalog;
using test::admin::export_text;
using test::admin::import_text;
using test::admin::joined;
using test::admin::lines_of;
using test::admin::workload;
namespace bj = boost::json;
namespace fs = std::filesystem;
namespace keys = catalog::engine::keys;

namespace {

// The type of an export line: its one member's name ("format" for the first line).
std::string line_type(const std::string& line) {
  auto v = test::parse(line).as_object();
  if (v.contains("format")) return "format";
  REQUIRE(v.size() == 1);
  return std::string(v.begin()->key());
}

// The indexes of the lines of `type`.
std::vector<std::size_t> lines_of_type(const std::vector<std::string>& lines,
                                       const std::string& type) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (line_type(lines[i]) == type) out.push_back(i);
  return out;
}

std::int64_t total(Store& s, Kind kind, Include include) {
  auto admin = s.principal("admin").value();
  ListOptions o;
  o.limit = 0;
  o.include = include;
  return s.list_json(admin, kind, o).value().total;
}

// A stream that cannot seek (like a pipe): the default streambuf refuses every seek.
class OneWay : public std::streambuf {
 public:
  explicit OneWay(std::string& text) { setg(text.data(), text.data(), text.data() + text.size()); }
};

struct Collected {
  std::vector<admin::Progress> calls;
  std::vector<std::string> phases;  // the phase of each call (Progress holds a view)
  admin::ProgressFn fn() {
    return [this](const admin::Progress& p) {
      calls.push_back(p);
      phases.emplace_back(p.phase);
    };
  }
  // The calls of one phase.
  std::vector<admin::Progress> of(const std::string& phase) const {
    std::vector<admin::Progress> out;
    for (std::size_t i = 0; i < calls.size(); ++i)
      if (phases[i] == phase) out.push_back(calls[i]);
    return out;
  }
};

// Each phase's calls grow, and only the last one is marked finished.
void check_phase(const std::vector<admin::Progress>& calls) {
  REQUIRE(!calls.empty());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].finished == (i + 1 == calls.size()));
    if (i > 0) {
      CHECK(calls[i].entities >= calls[i - 1].entities);
      CHECK(calls[i].done >= calls[i - 1].done);
      CHECK(calls[i].seconds >= calls[i - 1].seconds);
    }
  }
}

}  // namespace

TEST_CASE("export and import reproduce a store key for key: LMDB to memory to LMDB",
          "[admin][export][import]") {
  test::TempDir dir;
  auto source = Store::open_lmdb(dir.path() / "source", test::test_options()).value();
  workload(source);
  REQUIRE(source.verify().value().empty());

  admin::ExportInfo info;
  const auto text = export_text(source, &info);
  CHECK(info.skipped_keys == 0);
  CHECK(info.bytes == text.size());
  CHECK(export_text(source) == text);  // the same store gives the same bytes

  // Every key and value of the source, the indexes rebuilt by the import included.
  auto memory = Store::in_memory().value();
  auto counts = import_text(memory, text);
  REQUIRE(counts.has_value());
  CHECK(*counts == info.counts);
  CHECK(test::dump(memory) == test::dump(source));
  CHECK(export_text(memory) == text);

  auto back = Store::open_lmdb(dir.path() / "back").value();
  REQUIRE(import_text(back, export_text(memory)).has_value());
  CHECK(test::dump(back) == test::dump(source));
  CHECK(export_text(back) == text);
  CHECK(back.verify().value().empty());

  // The imported store goes on where the source was: the next event takes the next offset.
  auto admin = back.principal("admin").value();
  REQUIRE(back.create_json(admin, Kind::glossary,
                           test::parse(R"({"name":"After","description":"a"})")));
  auto page = back.events(admin, info.counts.events, 10).value();
  REQUIRE(page.data.size() == 1);
  CHECK(page.data[0].offset == info.counts.events + 1);
}

TEST_CASE("the export format: the format line, each entity with its history and the edges into "
          "it, the events, the end line",
          "[admin][export]") {
  auto s = Store::in_memory(test::test_options()).value();
  workload(s);
  admin::ExportInfo info;
  const auto lines = lines_of(export_text(s, &info));
  REQUIRE(lines.size() >= 3);
  CHECK(lines.front() == R"({"format":"catalog-export","version":1})");
  CHECK(lines.back() == R"({"end":{"entities":)" + std::to_string(info.counts.entities) +
                            R"(,"snapshots":)" + std::to_string(info.counts.snapshots) +
                            R"(,"edges":)" + std::to_string(info.counts.edges) + R"(,"events":)" +
                            std::to_string(info.counts.events) + "}}");
  CHECK(lines_of_type(lines, "entity").size() == info.counts.entities);
  CHECK(lines_of_type(lines, "snapshot").size() == info.counts.snapshots);
  CHECK(lines_of_type(lines, "edge").size() == info.counts.edges);
  CHECK(lines_of_type(lines, "event").size() == info.counts.events);

  // Sections in order: entities (each followed by its lines), then events.
  const auto events = lines_of_type(lines, "event");
  REQUIRE(!events.empty());
  for (std::size_t i = 1; i < events.front(); ++i) CHECK(line_type(lines[i]) != "event");
  for (std::size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i] == events.front() + i);
    auto e = test::parse(lines[events[i]]).at("event").as_object();
    CHECK(e.at("offset").to_number<std::uint64_t>() == i + 1);
  }

  // The model churn: versions 0.1, 0.2 and 1.2 (a major change), and the edges into it in the
  // order of their relation byte: its service contains it, alice follows and owns it, the
  // admin voted it up.
  auto model =
      s.get_json(s.principal("admin").value(), Kind::mlmodel, EntityKey::by_fqn("mlflow.churn"))
          .value();
  const auto id = test::id_of(model);
  std::size_t at = 0;
  for (auto i : lines_of_type(lines, "entity"))
    if (test::parse(lines[i]).at("entity").at("doc").at("id").as_string() == id) at = i;
  REQUIRE(at > 0);
  auto entity = test::parse(lines[at]).at("entity").as_object();
  CHECK(entity.at("type") == "mlmodel");
  CHECK(entity.at("container").is_string());
  CHECK(!entity.contains("deletedBy"));
  CHECK(entity.at("doc").at("version") == 1.2);
  std::vector<std::string> versions;
  std::vector<std::string> edges;
  for (std::size_t i = at + 1; i < lines.size(); ++i) {
    const auto type = line_type(lines[i]);
    if (type == "snapshot") {
      auto snapshot = test::parse(lines[i]).at("snapshot").as_object();
      CHECK(snapshot.at("id").as_string() == id);
      versions.push_back(catalog::json::serialize(snapshot.at("version")));
    } else if (type == "edge") {
      auto edge = test::parse(lines[i]).at("edge").as_object();
      CHECK(edge.at("to").as_string() == id);
      edges.push_back(
          std::string(edge.at("relation").as_string()) +
          (edge.contains("data") ? ":" + std::string(edge.at("data").as_string()) : ""));
    } else {
      break;
    }
  }
  CHECK(versions == std::vector<std::string>{"0.1", "0.2", "1.2"});
  CHECK(edges == std::vector<std::string>{"contains", "follows", "owns", "votes:u"});

  // A soft-deleted entity carries the offset of the event that deleted it.
  for (auto i : lines_of_type(lines, "entity")) {
    auto e = test::parse(lines[i]).at("entity").as_object();
    CHECK(e.at("doc").at("deleted").as_bool() == e.contains("deletedBy"));
  }
}

TEST_CASE("import refuses a store that is not empty, and changes nothing", "[admin][import]") {
  auto source = Store::in_memory(test::test_options()).value();
  workload(source);
  const auto text = export_text(source);
  auto target = Store::in_memory(test::test_options()).value();  // holds the admin user
  const auto before = test::dump(target);
  auto refused = import_text(target, text);
  REQUIRE(!refused);
  CHECK(refused.error().code() == Errc::already_exists);
  CHECK(refused.error().message().find("not empty") != std::string::npos);
  CHECK(test::dump(target) == before);
}

TEST_CASE("import refuses bad or truncated input with its line number and leaves the store empty",
          "[admin][import]") {
  auto source = Store::in_memory(test::test_options()).value();
  workload(source);
  const auto text = export_text(source);
  const auto lines = lines_of(text);
  const auto entities = lines_of_type(lines, "entity");
  const auto events = lines_of_type(lines, "event");
  REQUIRE(entities.size() >= 3);
  const auto n = [](std::size_t index) { return std::to_string(index + 1); };  // 1-based

  struct Case {
    std::string name;
    std::string input;
    Errc code;
    std::string message;  // a part of it
  };
  std::vector<Case> cases;
  auto with = [&](auto change) {
    auto copy = lines;
    change(copy);
    return joined(copy);
  };
  cases.push_back({"empty", "", Errc::invalid_request, "the input is empty"});
  cases.push_back({"not an export", with([](auto& l) { l[0] = R"({"format":"x","version":1})"; }),
                   Errc::invalid_request, "line 1: not a catalog export"});
  cases.push_back({"a newer format",
                   with([](auto& l) { l[0] = R"({"format":"catalog-export","version":2})"; }),
                   Errc::invalid_value, "line 1: format version 2 is newer than this library"});
  cases.push_back({"no end line", with([](auto& l) { l.pop_back(); }), Errc::invalid_request,
                   "the input ends after line " + std::to_string(lines.size() - 1) +
                       " without the end line: it is truncated"});
  {
    // Cut in the middle of the last entity line.
    const auto cut = text.find(lines[entities.back()]) + lines[entities.back()].size() / 2;
    cases.push_back({"cut in a line", text.substr(0, cut), Errc::invalid_request,
                     "line " + n(entities.back()) + ": not JSON"});
  }
  cases.push_back({"not JSON", with([&](auto& l) { l[entities[1]] = "{\"entity\":"; }),
                   Errc::invalid_request, "line " + n(entities[1]) + ": not JSON"});
  cases.push_back({"an empty line", with([&](auto& l) { l[entities[1]] = ""; }),
                   Errc::invalid_request, "line " + n(entities[1]) + ": an empty line"});
  cases.push_back({"not one member", with([&](auto& l) { l[entities[1]] = "[]"; }),
                   Errc::invalid_request, "line " + n(entities[1]) + ": expected an object"});
  {
    // The first entity's lines moved after the second's.
    auto copy = lines;
    std::vector<std::string> first(copy.begin() + entities[0], copy.begin() + entities[1]);
    copy.erase(copy.begin() + entities[0], copy.begin() + entities[1]);
    const auto moved_to = entities[0] + (entities[2] - entities[1]);
    copy.insert(copy.begin() + moved_to, first.begin(), first.end());
    cases.push_back({"entities out of order", joined(copy), Errc::invalid_request,
                     "line " + n(moved_to) + ": entity "});
  }
  cases.push_back({"a snapshot among another entity's lines",
                   with([&](auto& l) { std::swap(l[entities[1]], l[entities[1] + 1]); }),
                   Errc::invalid_request, "line " + n(entities[1]) + ": a snapshot of "});
  {
    // An entity's last snapshot (the current version) left out.
    std::size_t last = entities[1] + 1;
    while (line_type(lines[last + 1]) == "snapshot") ++last;
    auto copy = lines;
    copy.erase(copy.begin() + last);
    cases.push_back({"no snapshot of the current version", joined(copy), Errc::invalid_request,
                     "line " + n(entities[1]) + " is at version"});
  }
  cases.push_back({"an unknown member", with([&](auto& l) {
                     l[entities[1]].insert(l[entities[1]].size() - 2, R"(,"extra":1)");
                   }),
                   Errc::invalid_request, "line " + n(entities[1]) + ": unknown member extra"});
  {
    const auto edges = lines_of_type(lines, "edge");
    REQUIRE(!edges.empty());
    auto copy = lines;
    auto& line = copy[edges.front()];
    const auto at = line.find(R"("relation":")") + 12;
    line.replace(at, line.find('"', at) - at, "likes");
    cases.push_back({"an unknown relation", joined(copy), Errc::invalid_request,
                     "line " + n(edges.front()) + ": the edge has no known relation"});
  }
  {
    // The edge from an ML model's service left out: every line is well formed, the store
    // would not be (the model's record names its container).
    auto copy = lines;
    std::size_t dropped = 0;
    std::string type;
    for (std::size_t i = 0; i < copy.size() && dropped == 0; ++i) {
      if (line_type(copy[i]) == "entity")
        type = test::parse(copy[i]).at("entity").at("type").as_string();
      if (type == "mlmodel" && copy[i].find(R"("relation":"contains")") != std::string::npos)
        dropped = i;
    }
    REQUIRE(dropped > 0);
    copy.erase(copy.begin() + dropped);
    auto& end = copy.back();
    const auto at = end.find(R"("edges":)") + 8;
    const auto digits = end.find(',', at) - at;
    end.replace(at, digits, std::to_string(std::stoull(end.substr(at, digits)) - 1));
    cases.push_back({"a missing containment edge", joined(copy), Errc::invalid_request,
                     "does not make a consistent store"});
  }
  {
    // A second entity with an FQN taken, with the largest id, so that it comes in order.
    auto copy = lines;
    auto entity = test::parse(copy[entities[0]]).as_object();
    entity["entity"].as_object()["doc"].as_object()["id"] = "ffffffff-ffff-4fff-bfff-ffffffffffff";
    copy.insert(copy.begin() + events.front(), catalog::json::serialize(entity));
    cases.push_back({"a duplicate FQN", joined(copy), Errc::invalid_request,
                     "line " + n(events.front()) + ": "});
    const auto duplicate = test::parse(copy[events.front()]).at("entity");
    cases.back().message += std::string(duplicate.at("type").as_string()) + " " +
                            std::string(duplicate.at("doc").at("fullyQualifiedName").as_string()) +
                            " has the FQN of an entity before it";
  }
  cases.push_back({"an event missing", with([&](auto& l) { l.erase(l.begin() + events[1]); }),
                   Errc::invalid_request,
                   "line " + n(events[1]) + ": the event's offset is not 2"});
  cases.push_back({"an entity after the events",
                   with([&](auto& l) { l.insert(l.begin() + events[1], l[entities[0]]); }),
                   Errc::invalid_request, "line " + n(events[1]) + ": a line of type entity"});
  cases.push_back({"wrong counts", with([&](auto& l) {
                     auto& end = l.back();
                     end.insert(end.find("\"entities\":") + 11, "9");
                   }),
                   Errc::invalid_request,
                   "line " + std::to_string(lines.size()) + ": the end line does not count"});
  cases.push_back({"after the end", with([](auto& l) { l.push_back(l.back()); }),
                   Errc::invalid_request,
                   "line " + std::to_string(lines.size() + 1) + ": nothing may follow"});

  for (const auto& c : cases) {
    SECTION(c.name) {
      auto target = Store::in_memory().value();
      const auto empty = test::dump(target);
      auto refused = import_text(target, c.input);
      REQUIRE(!refused);
      INFO(refused.error().message());
      CHECK(refused.error().code() == c.code);
      CHECK(refused.error().message().find(c.message) != std::string::npos);
      CHECK(test::dump(target) == empty);
    }
  }

  SECTION("a line longer than the limit") {
    auto target = Store::in_memory().value();
    std::istringstream in(text);
    admin::ImportOptions options;
    options.max_line_bytes = 200;
    auto refused = admin::import_store(target, in, options);
    REQUIRE(!refused);
    CHECK(refused.error().message().find("longer than 200 bytes") != std::string::npos);
  }

  SECTION("truncated input leaves an LMDB store empty too") {
    test::TempDir dir;
    auto target = Store::open_lmdb(dir.path()).value();
    const auto empty = test::dump(target);
    auto copy = lines;
    copy.pop_back();
    auto refused = import_text(target, joined(copy));
    REQUIRE(!refused);
    CHECK(refused.error().message().find("truncated") != std::string::npos);
    CHECK(test::dump(target) == empty);
    REQUIRE(import_text(target, text).has_value());  // and it takes the whole export afterwards
    CHECK(export_text(target) == text);
  }
}

TEST_CASE("import starts over when an LMDB map fills, if the input can be read again",
          "[admin][import]") {
  auto source = Store::in_memory(test::test_options()).value();
  workload(source, 150);
  auto text = export_text(source);
  test::TempDir dir;
  storage::LmdbOptions tiny;
  tiny.map_size = std::size_t{256} << 10;  // far less than the import needs

  SECTION("a stream that cannot seek: refused, nothing written") {
    auto target = Store::open_lmdb(dir.path(), {}, tiny).value();
    const auto empty = test::dump(target);
    OneWay buffer(text);
    std::istream in(&buffer);
    auto refused = admin::import_store(target, in);
    REQUIRE(!refused);
    CHECK(refused.error().code() == Errc::storage_full);
    CHECK(refused.error().message().find("cannot be read again") != std::string::npos);
    CHECK(test::dump(target) == empty);
  }
  SECTION("a stream that can: the map grows and the import completes") {
    auto target = Store::open_lmdb(dir.path(), {}, tiny).value();
    auto imported = import_text(target, text);
    INFO((imported ? "" : imported.error().message()));
    REQUIRE(imported.has_value());
    CHECK(test::dump(target) == test::dump(source));
  }
  SECTION("the size of the input given: the map is made room for first") {
    auto target = Store::open_lmdb(dir.path(), {}, tiny).value();
    OneWay buffer(text);
    std::istream in(&buffer);
    admin::ImportOptions options;
    options.input_bytes = text.size();
    REQUIRE(admin::import_store(target, in, options).has_value());
    CHECK(export_text(target) == text);
  }
}

TEST_CASE("export, import and verify report their progress", "[admin][progress]") {
  auto source = Store::in_memory(test::test_options()).value();
  workload(source, 1100);  // more than one report's worth of entities
  Collected exported;
  std::ostringstream out;
  auto info = admin::export_store(source, out, exported.fn()).value();
  const auto text = out.str();
  auto export_calls = exported.of("export");
  check_phase(export_calls);
  CHECK(export_calls.size() >= 2);
  CHECK(export_calls.back().entities == info.counts.entities);
  CHECK(export_calls.back().done == info.counts.entities + info.counts.events);
  CHECK(export_calls.back().total == export_calls.back().done);

  Collected imported;
  auto target = Store::in_memory().value();
  std::istringstream in(text);
  admin::ImportOptions options;
  options.progress = imported.fn();
  options.input_bytes = text.size();
  REQUIRE(admin::import_store(target, in, options).has_value());
  auto import_calls = imported.of("import");
  check_phase(import_calls);
  CHECK(import_calls.back().entities == info.counts.entities);
  CHECK(import_calls.back().done == text.size());
  CHECK(import_calls.back().total == text.size());
  auto check_calls = imported.of("check");
  check_phase(check_calls);
  CHECK(check_calls.back().entities == info.counts.entities);
  CHECK(imported.phases.front() == "import");
  CHECK(imported.phases.back() == "check");

  Collected verified;
  REQUIRE(admin::verify(target, verified.fn()).value().empty());
  auto verify_calls = verified.of("verify");
  check_phase(verify_calls);
  CHECK(verify_calls.back().entities == info.counts.entities);
  CHECK(verify_calls.size() >= 2);
  CHECK(verify_calls.back().total == 0);  // memory does not say how many keys it holds
}

TEST_CASE("verify through catalog::admin finds what Store::verify finds", "[admin][verify]") {
  test::TempDir dir;
  auto s = Store::open_lmdb(dir.path(), test::test_options()).value();
  workload(s);
  CHECK(admin::verify(s).value().empty());
  {
    auto txn = s.backend().begin(storage::Mode::read_write).value();
    REQUIRE(txn->erase(keys::name(Kind::mlmodel, "mlflow.churn")).value());
    txn->commit().value();
  }
  auto problems = admin::verify(s).value();
  auto expected = s.verify().value();
  REQUIRE(problems.size() == expected.size());
  REQUIRE(!problems.empty());
  for (std::size_t i = 0; i < problems.size(); ++i) {
    CHECK(problems[i].key == expected[i].key);
    CHECK(problems[i].message == expected[i].message);
  }
  Collected verified;
  REQUIRE(!admin::verify(s, verified.fn()).value().empty());
  CHECK(verified.calls.back().total > 0);  // LMDB knows how many keys it holds
  CHECK(verified.calls.back().done == verified.calls.back().total);
}

TEST_CASE("backup: a consistent copy of an LMDB store while another process writes to it",
          "[admin][backup]") {
  test::TempDir dir;
  const auto busy = dir.path() / "busy";
  const auto stop = dir.path() / "stop";
  {
    auto s = Store::open_lmdb(busy, test::test_options()).value();
    workload(s);
  }
  // The writer creates glossaries, one transaction each, until the stop file appears.
  std::vector<int> fds;
  auto writer = test::spawn(fds, [&](int fd) {
    auto s = Store::open_lmdb(busy, test::test_options()).value();
    auto admin = s.principal("admin").value();
    for (int i = 0;; ++i) {
      auto made = s.create_json(
          admin, Kind::glossary,
          test::parse(R"({"name":"w)" + std::to_string(i) + R"(","description":"w"})"));
      if (!made) return 1;
      test::say(fd, std::to_string(i));
      if (fs::exists(stop)) return 0;
    }
  });
  int written = 0;
  bool open = true;
  while (open && written < 20) written += static_cast<int>(test::pump(writer, open).size());
  REQUIRE(written >= 20);

  auto s = Store::open_lmdb(busy, test::test_options()).value();
  auto copied = admin::backup(s, dir.path() / "copy");
  // Written after the copy was taken: not in it.
  auto admin = s.principal("admin").value();
  REQUIRE(
      s.create_json(admin, Kind::glossary, test::parse(R"({"name":"late","description":"l"})")));
  std::ofstream(stop).put('x');
  while (open) (void)test::pump(writer, open);
  const int status = test::reap(writer, fds);
  CHECK(test::describe_status(status) == "exit 0");
  INFO((copied ? "" : copied.error().message()));
  REQUIRE(copied.has_value());
  CHECK(copied->lmdb_copy);
  CHECK(copied->bytes == fs::file_size(dir.path() / "copy" / "data.mdb"));
  // The copy is its owner's alone, whatever the umask.
  CHECK(fs::status(dir.path() / "copy").permissions() == fs::perms::owner_all);
  CHECK(fs::status(dir.path() / "copy" / "data.mdb").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));

  auto copy = Store::open_lmdb(dir.path() / "copy", test::test_options()).value();
  CHECK(copy.verify().value().empty());
  const auto in_copy = total(copy, Kind::glossary, Include::all);
  CHECK(in_copy >= 1 + 20);  // G, and the writer's first 20
  CHECK(in_copy < total(s, Kind::glossary, Include::all));
  CHECK(!copy.get_json(copy.principal("admin").value(), Kind::glossary, EntityKey::by_fqn("late")));
}

TEST_CASE("backup of a store in memory copies it key by key; a backup never overwrites",
          "[admin][backup]") {
  auto s = Store::in_memory(test::test_options()).value();
  workload(s);
  test::TempDir dir;
  auto copied = admin::backup(s, dir.path() / "copy").value();
  CHECK(!copied.lmdb_copy);
  CHECK(copied.bytes > 0);
  CHECK(fs::status(dir.path() / "copy").permissions() == fs::perms::owner_all);
  for (const char* file : {"data.mdb", "lock.mdb"})
    CHECK(fs::status(dir.path() / "copy" / file).permissions() ==
          (fs::perms::owner_read | fs::perms::owner_write));
  {
    auto copy = Store::open_lmdb(dir.path() / "copy").value();
    CHECK(test::dump(copy) == test::dump(s));
  }

  auto again = admin::backup(s, dir.path() / "copy");
  REQUIRE(!again);
  CHECK(again.error().code() == Errc::invalid_value);
  CHECK(again.error().message().find("is not empty") != std::string::npos);
  std::ofstream(dir.path() / "file").put('x');
  auto file = admin::backup(s, dir.path() / "file");
  REQUIRE(!file);
  CHECK(file.error().message().find("is not a directory") != std::string::npos);
  // An empty directory is fine, and keeps its own mode; the files in it are the owner's.
  fs::create_directories(dir.path() / "empty");
  fs::permissions(dir.path() / "empty", fs::perms::owner_all | fs::perms::group_read |
                                            fs::perms::group_exec);
  CHECK(admin::backup(s, dir.path() / "empty").has_value());
  CHECK(fs::status(dir.path() / "empty").permissions() ==
        (fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec));
  CHECK(fs::status(dir.path() / "empty" / "data.mdb").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("stats: entities per kind, versions, edges, events, bytes, and LMDB's figures",
          "[admin][stats]") {
  test::TempDir dir;
  auto s = Store::open_lmdb(dir.path(), test::test_options()).value();
  workload(s);
  admin::ExportInfo info;
  const auto lines = lines_of(export_text(s, &info));
  auto st = admin::stats(s).value();

  REQUIRE(st.kinds.size() == std::size(all_kinds));
  std::int64_t live = 0, deleted = 0;
  for (const auto& k : st.kinds) {
    INFO(type_name(k.kind));
    CHECK(k.live == total(s, k.kind, Include::non_deleted));
    CHECK(k.deleted == total(s, k.kind, Include::deleted));
    live += k.live;
    deleted += k.deleted;
  }
  CHECK(st.live == live);
  CHECK(st.deleted == deleted);
  CHECK(static_cast<std::uint64_t>(live + deleted) == info.counts.entities);
  CHECK(st.kinds[0].kind == Kind::user);
  CHECK(st.kinds[0].live == 2);     // admin, alice
  CHECK(st.kinds[0].deleted == 1);  // bob (carol is gone)
  CHECK(st.snapshots == info.counts.snapshots);
  CHECK(st.edges == info.counts.edges);
  CHECK(st.events == info.counts.events);
  std::uint64_t follows = 0;
  for (const auto& line : lines)
    if (line.find(R"("relation":"follows")") != std::string::npos) ++follows;
  bool found = false;
  for (const auto& r : st.relations)
    if (r.relation == "follows") {
      CHECK(r.edges == follows);
      found = true;
    }
  CHECK(found);
  std::uint64_t keys = 0, bytes = 0;
  for (const auto& f : st.families) {
    keys += f.keys;
    bytes += f.bytes;
  }
  CHECK(keys == st.keys);
  CHECK(bytes == st.bytes);
  CHECK(st.families.front().name == "counters");
  // Every family the store writes has its name, the search index's too.
  std::string tags;
  for (const auto& f : st.families) {
    INFO(f.tag);
    CHECK(f.name != "unknown");
    tags += f.tag;
  }
  CHECK(tags == "CEFGHJKLMNQRVXY");

  REQUIRE(st.lmdb);
  CHECK(st.lmdb->entries == st.keys);
  CHECK(st.lmdb->page_size > 0);
  CHECK(st.lmdb->map_size >= std::size_t{64} << 20);
  CHECK(st.lmdb->pages_in_use * st.lmdb->page_size <= st.lmdb->map_size);
  CHECK(st.lmdb->free_pages < st.lmdb->pages_in_use);
  CHECK(st.lmdb->leaf_pages > 0);
  CHECK(st.lmdb->readers == 0);
  {
    auto reading = s.backend().begin(storage::Mode::read_only).value();
    CHECK(admin::stats(s).value().lmdb->readers == 1);
  }
  CHECK(st.lmdb->max_readers == 126);

  auto memory = Store::in_memory().value();
  auto empty = admin::stats(memory).value();
  CHECK(!empty.lmdb);
  CHECK(empty.live == 0);
  CHECK(empty.keys == 2);  // the key schema and the search analyzer
}

TEST_CASE("events: from an offset, stopped by the sink, and followed while another thread writes",
          "[admin][events]") {
  auto s = Store::in_memory(test::test_options()).value();
  workload(s);
  const auto last = admin::stats(s).value().events;
  REQUIRE(last > 10);

  std::vector<std::uint64_t> offsets;
  auto collect = [&](std::uint64_t offset, std::string_view event) {
    auto e = test::parse(event).as_object();
    CHECK(e.at("offset").to_number<std::uint64_t>() == offset);
    CHECK(e.at("eventType").is_string());
    offsets.push_back(offset);
    return true;
  };
  CHECK(admin::events(s, 0, collect).value() == last);
  REQUIRE(offsets.size() == last);
  for (std::size_t i = 0; i < offsets.size(); ++i) CHECK(offsets[i] == i + 1);

  offsets.clear();
  CHECK(admin::events(s, last - 3, collect).value() == last);
  CHECK(offsets == std::vector<std::uint64_t>{last - 2, last - 1, last});
  offsets.clear();
  CHECK(admin::events(s, last, collect).value() == last);
  CHECK(offsets.empty());

  int seen = 0;
  auto two = [&](std::uint64_t, std::string_view) { return ++seen < 2; };
  CHECK(admin::events(s, 0, two).value() == 2);

  // Followed: a thread waits for five new events while this one makes them.
  std::vector<std::string> followed;
  std::atomic<std::size_t> count{0};
  std::optional<Result<std::uint64_t>> ended;
  std::thread follower([&] {
    admin::FollowOptions options;
    options.poll = std::chrono::milliseconds(5);
    options.stop = [&] { return count.load() >= 5; };
    ended = admin::follow_events(
        s, last,
        [&](std::uint64_t, std::string_view event) {
          followed.emplace_back(event);
          ++count;
          return true;
        },
        options);
  });
  auto admin = s.principal("admin").value();
  for (int i = 0; i < 5; ++i)
    REQUIRE(s.create_json(
        admin, Kind::glossary,
        test::parse(R"({"name":"f)" + std::to_string(i) + R"(","description":"f"})")));
  follower.join();
  REQUIRE(ended.has_value());
  REQUIRE(ended->has_value());
  CHECK(**ended == last + 5);
  REQUIRE(followed.size() == 5);
  for (std::size_t i = 0; i < followed.size(); ++i) {
    auto e = test::parse(followed[i]).as_object();
    CHECK(e.at("offset").to_number<std::uint64_t>() == last + 1 + i);
    CHECK(e.at("eventType") == "entityCreated");
    CHECK(e.at("entityFullyQualifiedName").as_string() == "f" + std::to_string(i));
  }

  // A sink that stops ends the follow too.
  seen = 0;
  CHECK(admin::follow_events(s, 0, two).value() == 2);
}

namespace {

// A memory store whose read transactions fail while `down` counts (a server restarting): the
// begin numbered n (from 1) fails when n is in `failing`.
class OutageBackend final : public storage::Backend {
 public:
  std::vector<int> failing;
  int read_begins = 0;
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    if (mode == storage::Mode::read_only &&
        std::find(failing.begin(), failing.end(), ++read_begins) != failing.end())
      return fail(Errc::storage, "PostgreSQL: cannot connect: the server is restarting");
    return inner_.begin(mode);
  }

 private:
  storage::MemoryBackend inner_;
};

}  // namespace

TEST_CASE("events: a follow that options.retry lets go on passes every event once",
          "[admin][events]") {
  auto owned = std::make_unique<OutageBackend>();
  auto& backend = *owned;
  auto s = Store::open(std::move(owned), test::test_options()).value();
  auto admin = s.principal("admin").value();
  // Past one look's batch (1,024), so that a look fails between two batches.
  for (int i = 0; i < 1100; ++i)
    REQUIRE(s.create_json(admin, Kind::glossary,
                          test::parse(R"({"name":"g)" + std::to_string(i) + R"(","description":"g"})")));
  const auto last = admin::stats(s).value().events;
  REQUIRE(last > 1100);

  std::vector<std::uint64_t> offsets;
  auto collect = [&](std::uint64_t offset, std::string_view) {
    offsets.push_back(offset);
    return true;
  };
  std::vector<std::string> retried;
  admin::FollowOptions options;
  options.poll = std::chrono::milliseconds(1);
  options.stop = [&] { return !offsets.empty() && offsets.back() == last; };

  SECTION("without retry a failed look ends the follow with its error") {
    backend.read_begins = 0;
    backend.failing = {1};
    const auto ended = admin::follow_events(s, 0, collect, options);
    REQUIRE_FALSE(ended.has_value());
    CHECK(ended.error().code() == Errc::storage);
    CHECK(offsets.empty());
  }
  SECTION("with retry: failures before the first event and between two batches") {
    options.retry = [&](const Error& e) {
      retried.push_back(e.message());
      return e.code() == Errc::storage;
    };
    backend.read_begins = 0;
    backend.failing = {1, 2, 4, 5};  // 3 reads the first batch, 6 the rest
    const auto ended = admin::follow_events(s, 0, collect, options);
    REQUIRE(ended.has_value());
    CHECK(*ended == last);
    CHECK(retried.size() == 4);
    CHECK(retried.front() == "PostgreSQL: cannot connect: the server is restarting");
    REQUIRE(offsets.size() == last);  // none twice, none skipped
    for (std::size_t i = 0; i < offsets.size(); ++i) CHECK(offsets[i] == i + 1);
  }
  SECTION("a retry that declines ends the follow, after what was passed") {
    options.retry = [&](const Error& e) {
      retried.push_back(e.message());
      return false;
    };
    backend.read_begins = 0;
    backend.failing = {2};
    const auto ended = admin::follow_events(s, 0, collect, options);
    REQUIRE_FALSE(ended.has_value());
    CHECK(ended.error().code() == Errc::storage);
    CHECK(retried.size() == 1);
    CHECK(offsets.size() == 1024);
  }
}

// ---- stores for tests/admin/cli_test.sh ----

TEST_CASE("write the workload store for catalog-admin", "[.admin_cli_store]") {
  const char* dir = std::getenv("CATALOG_ADMIN_STORE");
  REQUIRE(dir);
  fs::remove_all(dir);
  auto s = Store::open_lmdb(dir, test::test_options()).value();
  workload(s, static_cast<int>(test::env_number("CATALOG_ADMIN_EXTRA", 0)));
  REQUIRE(s.verify().value().empty());
}

// Creates glossaries w0, w1, ... in CATALOG_ADMIN_STORE, one transaction each; touches
// CATALOG_ADMIN_READY after CATALOG_ADMIN_COUNT of them (default 10) and stops when
// CATALOG_ADMIN_STOP exists (or, without it, after the count).
TEST_CASE("write to a store until told to stop", "[.admin_writer]") {
  const char* dir = std::getenv("CATALOG_ADMIN_STORE");
  REQUIRE(dir);
  const char* ready = std::getenv("CATALOG_ADMIN_READY");
  const char* stop = std::getenv("CATALOG_ADMIN_STOP");
  const auto count = test::env_number("CATALOG_ADMIN_COUNT", 10);
  const std::string prefix =
      std::getenv("CATALOG_ADMIN_PREFIX") ? std::getenv("CATALOG_ADMIN_PREFIX") : "w";
  auto s = Store::open_lmdb(dir, test::test_options()).value();
  auto admin = s.principal("admin").value();
  for (std::uint64_t i = 0;; ++i) {
    if (i == count) {
      if (ready) std::ofstream(ready).put('x');
      if (!stop) break;
    }
    if (stop && fs::exists(stop)) break;
    REQUIRE(s.create_json(
        admin, Kind::glossary,
        test::parse(R"({"name":")" + prefix + std::to_string(i) + R"(","description":"w"})")));
  }
}
