// `catalog-admin verify` survives any content of data.mdb. LMDB keeps no checksums, so a damaged
// page can crash its reader; verify runs its check in a child process and reports such a crash
// as corruption. So do the other commands that read a store; stats, export, events and reindex
// are checked on fewer copies below (backup runs in the same guard). Copies of a populated store get one flipped byte, or one page of garbage, at
// seeded places, and every run of verify must end with one of its documented exit statuses and
// say something: 0 with "ok" (the damage missed what is read), 1 with the problems on stdout, 3
// with "corrupt" on stderr. Never a signal.
//
// CATALOG_CORRUPT_TRIALS sets the number of trials of each sort (default 110: 220 in all).
#include <catalog/store.hpp>

#include "child_process.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <lmdb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

using namespace catalog;
using test::parse;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

struct Run {
  bool exited = false;
  int status = -1;  // exit status, or the signal when !exited
  std::string out, err;
};

// Runs `catalog-admin <command> lmdb:<dir>` with stdout and stderr in files beside `dir`.
Run admin_on(const std::filesystem::path& admin, const char* command,
             const std::filesystem::path& dir) {
  const auto out_file = dir.string() + ".out", err_file = dir.string() + ".err";
  const std::string spec = "lmdb:" + dir.string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(120);
    // Under the sanitizers, a fault inside LMDB (which is not instrumented) stays a signal, as
    // in a plain build; a sanitizer's report from the catalog's own code fails the test below.
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS"}) {
      const char* set = std::getenv(name);
      std::string value = set ? std::string(set) + ":" : std::string();
      value += "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0";
      ::setenv(name, value.c_str(), 1);
    }
    ::execl(admin.c_str(), admin.c_str(), command, spec.c_str(), static_cast<char*>(nullptr));
    ::_exit(121);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) REQUIRE(errno == EINTR);
  Run run;
  run.exited = WIFEXITED(status);
  run.status = run.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  run.out = read_file(out_file);
  run.err = read_file(err_file);
  return run;
}

Run verify(const std::filesystem::path& admin, const std::filesystem::path& dir) {
  return admin_on(admin, "verify", dir);
}

// A store with some of everything: users, a team, services with models and indexes, a glossary
// tree, followers and votes, soft-deleted entities, many versions.
void populate(const std::filesystem::path& dir) {
  storage::LmdbOptions small;
  small.map_size = 1 << 20;
  auto s = Store::open_lmdb(dir, test::test_options(), small).value();
  auto admin = s.principal("admin").value();
  for (int i = 0; i < 20; ++i)
    s.create_json(admin, Kind::user,
                  parse(R"({"name":"u)" + std::to_string(i) + R"(","email":"u)" +
                        std::to_string(i) + R"(@example.com"})"))
        .value();
  s.create_json(admin, Kind::team, parse(R"({"name":"T","teamType":"Department"})")).value();
  s.create_json(admin, Kind::mlmodel_service,
                parse(R"({"name":"ml","serviceType":"Mlflow"})"))
      .value();
  s.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"g"})")).value();
  for (int i = 0; i < 60; ++i) {
    auto n = std::to_string(i);
    auto m = s.create_json(admin, Kind::mlmodel,
                           parse(R"({"service":"ml","name":"m)" + n +
                                 R"(","algorithm":"a","description":")" + std::string(200, 'd') +
                                 R"("})"))
                 .value();
    s.patch_json(admin, Kind::mlmodel, test::uuid_of(m), parse(R"({"description":"v2 )" + n + R"("})"))
        .value();
    for (int f = 0; f < 5; ++f)
      s.follow_json(admin, Kind::mlmodel, test::uuid_of(m),
                    s.principal("u" + std::to_string((i + f) % 20)).value().id)
          .value();
    s.create_json(admin, Kind::glossary_term,
                  parse(R"({"glossary":"G","name":"t)" + n + R"(","description":"term"})"))
        .value();
    if (i % 7 == 0) s.remove_json(admin, Kind::mlmodel, test::uuid_of(m)).value();
  }
}

// A populated store in `dir`, its data.mdb's bytes, and how many of them its pages use.
struct Source {
  std::string pristine;
  std::size_t used = 0;

  explicit Source(const std::filesystem::path& dir) {
    populate(dir);
    pristine = read_file(dir / "data.mdb");
    auto backend = storage::LmdbBackend::open(dir).value();
    auto stats = backend->stats().value();
    used = stats.pages_in_use * stats.page_size;
  }
};

// Whether a sanitizer report is about LMDB's own code writing a damaged page: its first frame
// past the interceptor is in liblmdb, under a write of the catalog's LMDB transaction.
bool in_lmdb_write(const std::string& err) {
  const auto at = err.find("ERROR: AddressSanitizer");
  const auto first = err.find("#1 ", at);
  const auto second = err.find("#2 ", at);
  if (first == std::string::npos || second == std::string::npos) return false;
  const auto lmdb = err.find("liblmdb", first);
  const bool lmdb_first = lmdb != std::string::npos && lmdb < second;
  const bool writing = err.find("LmdbTransaction::put", at) != std::string::npos ||
                       err.find("LmdbTransaction::erase", at) != std::string::npos ||
                       err.find("LmdbTransaction::commit", at) != std::string::npos;
  return lmdb_first && writing;
}

// What every run of catalog-admin on a damaged copy must be: ended by itself (never a signal),
// and the catalog's own reading of damaged records defined behaviour. (LMDB's writer on a
// damaged page is LMDB's: opening may write, setting up or converting a store whose schema key
// the damage hit, and that write can go wrong inside liblmdb.)
void check_defined(const Run& run) {
  REQUIRE(run.exited);
  CHECK((run.err.find("ERROR: AddressSanitizer") == std::string::npos ||
         in_lmdb_write(run.err)));
  CHECK(run.err.find("runtime error:") == std::string::npos);
}

// " exit 0: 38; exit 3: 12;" for the statuses counted.
std::string summary(const std::map<int, int>& statuses) {
  std::ostringstream out;
  for (auto [status, n] : statuses) out << " exit " << status << ": " << n << ";";
  return out.str();
}

}  // namespace

TEST_CASE("catalog-admin verify ends with a documented status on any damaged data.mdb",
          "[admin][hardening]") {
#ifndef CATALOG_ADMIN_PATH
  WARN("skipped: this build has no catalog-admin");
#else
  const std::filesystem::path admin = CATALOG_ADMIN_PATH;
  test::TempDir work;
  const auto source = work.path() / "source";
  const Source made(source);
  const std::string& pristine = made.pristine;
  const std::size_t used = made.used;
  REQUIRE(used > 0);
  REQUIRE(used <= pristine.size());
  const std::size_t page = 4096;
  {
    auto clean = verify(admin, source);
    REQUIRE(clean.exited);
    REQUIRE(clean.status == 0);
  }

  const std::uint64_t trials = test::env_number("CATALOG_CORRUPT_TRIALS", 110);
  test::Rng rng(20261127);
  std::map<int, int> statuses;
  for (std::uint64_t t = 0; t < 2 * trials; ++t) {
    std::string bytes = pristine;
    std::string damage;
    if (t % 2 == 0) {
      const auto at = rng.below(used);
      const auto mask = static_cast<char>(1 + rng.below(255));
      bytes[at] = static_cast<char>(bytes[at] ^ mask);
      damage = "byte " + std::to_string(at) + " xor " + std::to_string(static_cast<unsigned char>(mask));
    } else {
      const auto p = rng.below(used / page);
      for (std::size_t i = 0; i < page; ++i) bytes[p * page + i] = static_cast<char>(rng.below(256));
      damage = "garbage page " + std::to_string(p);
    }
    const auto dir = work.path() / ("trial" + std::to_string(t));
    std::filesystem::create_directory(dir);
    write_file(dir / "data.mdb", bytes);
    auto run = verify(admin, dir);
    INFO("trial " << t << ": " << damage << "\n--- stdout\n"
                  << run.out.substr(0, 2000) << "--- stderr\n"
                  << run.err.substr(0, 2000));
    check_defined(run);
    switch (run.status) {
    case 0: CHECK(run.out == "ok\n"); break;
    case 1: CHECK_FALSE(run.out.empty()); break;
    case 3: CHECK_THAT(run.err, Catch::Contains("corrupt")); break;
    default: FAIL("exit status " << run.status << " is not one verify documents"); break;
    }
    ++statuses[run.status];
    std::filesystem::remove_all(dir);
  }
  WARN(2 * trials << " damaged copies:" << summary(statuses));
  // The damage is found: at least a quarter of the runs report problems or corruption (ids are
  // random, so the store's layout, and what each seeded damage hits, differ between runs).
  CHECK(statuses[1] + statuses[3] > static_cast<int>(trials / 2));
#endif
}

TEST_CASE("catalog-admin's other reading commands end with a status, never a signal, on a damaged "
          "data.mdb",
          "[admin][hardening]") {
#ifndef CATALOG_ADMIN_PATH
  WARN("skipped: this build has no catalog-admin");
#else
  const std::filesystem::path admin = CATALOG_ADMIN_PATH;
  test::TempDir work;
  const Source made(work.path() / "source");
  const std::string& pristine = made.pristine;
  const std::size_t used = made.used;
  const std::size_t page = 4096;
  const char* const commands[] = {"stats", "export", "events", "reindex"};
  const std::uint64_t trials = test::env_number("CATALOG_CORRUPT_TRIALS", 110) / 2;
  test::Rng rng(20261130);
  std::map<int, int> statuses;
  for (std::uint64_t t = 0; t < trials; ++t) {
    // A page of garbage: what most often brings a reader down.
    std::string bytes = pristine;
    const auto p = 2 + rng.below(used / page - 2);  // past the two meta pages
    for (std::size_t i = 0; i < page; ++i) bytes[p * page + i] = static_cast<char>(rng.below(256));
    const auto dir = work.path() / ("trial" + std::to_string(t));
    std::filesystem::create_directory(dir);
    write_file(dir / "data.mdb", bytes);
    const char* command = commands[t % std::size(commands)];
    auto run = admin_on(admin, command, dir);
    INFO("trial " << t << ": " << command << " on garbage page " << p << "\n--- stderr\n"
                  << run.err.substr(0, 2000));
    check_defined(run);
    switch (run.status) {
    case 0: break;  // the damage missed what the command reads
    case 2: CHECK_FALSE(run.err.empty()); break;
    case 3: CHECK_THAT(run.err, Catch::Contains("corrupt")); break;
    default: FAIL("exit status " << run.status << " is not one catalog-admin documents"); break;
    }
    ++statuses[run.status];
    std::filesystem::remove_all(dir);
  }
  WARN(trials << " damaged copies:" << summary(statuses));
  CHECK(statuses[3] > 0);  // some damage was read, and reported as such
#endif
}

TEST_CASE("verify reads LMDB's free list: a damaged entry is corruption (exit 3), not ok",
          "[admin][hardening]") {
#ifndef CATALOG_ADMIN_PATH
  WARN("skipped: this build has no catalog-admin");
#else
  const std::filesystem::path admin = CATALOG_ADMIN_PATH;
  test::TempDir work;
  const auto dir = work.path() / "store";
  populate(dir);  // its patches and deletes free pages: the free list has entries
  // The free list's entries, where their bytes are: each value of LMDB's database 0 is a count
  // of page numbers then the numbers. Find the first value's count in the file and make it
  // larger than the map, as a damaged page would.
  std::uint64_t free_pages = 0;
  {
    auto backend = storage::LmdbBackend::open(dir).value();
    free_pages = backend->stats().value().free_pages;
  }
  REQUIRE(free_pages > 0);
  REQUIRE(verify(admin, dir).status == 0);
  // The first free list entry's bytes, as LMDB reads them (database 0: the key a transaction
  // id, the value a count of page numbers and the numbers).
  std::string value;
  {
    MDB_env* env = nullptr;
    REQUIRE(mdb_env_create(&env) == 0);
    REQUIRE(mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0644) == 0);
    MDB_txn* txn = nullptr;
    REQUIRE(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0);
    MDB_cursor* cursor = nullptr;
    REQUIRE(mdb_cursor_open(txn, 0, &cursor) == 0);
    MDB_val k, v;
    REQUIRE(mdb_cursor_get(cursor, &k, &v, MDB_FIRST) == 0);
    REQUIRE(k.mv_size == 8);
    value.assign(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    mdb_env_close(env);
  }
  // Its node in the file: an 8-byte header (the data size as two 16-bit halves, low first,
  // then flags and the key's size), the 8-byte key, the value. Every copy of it (freed pages
  // may hold older ones) gets a data size that is no whole number of page numbers.
  std::string bytes = read_file(dir / "data.mdb");
  int damaged = 0;
  for (auto at = bytes.find(value); at != std::string::npos; at = bytes.find(value, at + 1)) {
    if (at < 16) continue;
    std::uint32_t size = 0;
    std::uint16_t key_size = 0;
    std::memcpy(&size, bytes.data() + at - 16, 4);
    std::memcpy(&key_size, bytes.data() + at - 10, 2);
    if (size != value.size() || key_size != 8) continue;
    size += 3;
    std::memcpy(bytes.data() + at - 16, &size, 4);
    ++damaged;
  }
  REQUIRE(damaged > 0);
  write_file(dir / "data.mdb", bytes);
  auto run = verify(admin, dir);
  INFO(run.out << run.err);
  REQUIRE(run.exited);
  CHECK(run.status == 3);
  CHECK_THAT(run.err, Catch::Contains("the store is corrupt: a free list entry of"));
#endif
}
