// LMDB map sizing across processes (docs/SEMANTICS.md §15: several processes open one store; the map grows on its
// own). With MDB_WRITEMAP, LMDB cuts data.mdb to the map size a process asks for when it opens
// or resizes; a process that opened with a smaller size than another had grown to would cut the
// file under the other's map, whose next write past the new end is SIGBUS (seen once in ten runs
// of concurrency_test). Here: a process opening with a small map never shrinks the file, and the
// first process then writes on through its grown map.
#include <catalog/storage/lmdb_backend.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

namespace st = catalog::storage;

std::size_t data_size(const std::filesystem::path& dir) {
  struct stat s {};
  REQUIRE(::stat((dir / "data.mdb").c_str(), &s) == 0);
  return static_cast<std::size_t>(s.st_size);
}

// Writes `n` values of 1 KiB, one transaction each, growing the map as needed.
void write_values(st::Backend& backend, int first, int n) {
  for (int i = first; i < first + n; ++i) {
    for (int attempt = 0;; ++attempt) {
      auto txn = backend.begin(st::Mode::read_write).value();
      auto key = "k" + std::to_string(100000 + i);
      auto put = txn->put(key, std::string(1024, 'v'));
      auto done = put ? txn->commit() : put;
      if (done) break;
      REQUIRE(done.error().code() == catalog::Errc::storage_full);  // grown by the next begin
      REQUIRE(attempt < 40);
    }
  }
}

}  // namespace

TEST_CASE("a process opening with a small map never cuts the file under another's map") {
  test::TempDir dir;
  st::LmdbOptions small;
  small.map_size = 64 << 10;
  auto backend = st::LmdbBackend::open(dir.path(), small).value();
  write_values(*backend, 0, 3000);  // about 3 MiB of values: the map doubles several times
  // Grown further than the data needs, as a writer does when it finds the map full (the file is
  // extended at once; the size is recorded in the meta page only when a write commits).
  REQUIRE(backend->grow());
  REQUIRE(backend->grow());
  const auto grown = data_size(dir.path());
  REQUIRE(grown >= (std::size_t{16} << 20));

  // Another process opens the directory asking for 64 KiB, and writes once.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto other = st::LmdbBackend::open(dir.path(), small);
    if (!other) ::_exit(2);
    auto txn = (*other)->begin(st::Mode::read_write);
    if (!txn || !(*txn)->put("from-child", "x") || !(*txn)->commit()) ::_exit(3);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  CHECK(data_size(dir.path()) >= grown);
  // This process writes on into the pages of its map; a cut file would end it with SIGBUS.
  write_values(*backend, 3000, 6000);
  auto txn = backend->begin(st::Mode::read_only).value();
  CHECK(txn->get("from-child").value() == std::optional<std::string>("x"));
  CHECK(txn->get("k108999").value().has_value());
}
