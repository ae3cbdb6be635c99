// A full disk under an LMDB store is a storage error, never SIGBUS: the blocks of the map are
// reserved when it is opened and grown (LmdbBackend, "Disk space"), so a write that needs more
// map than the disk holds is refused before anything is written; what was acknowledged stays,
// the store stays readable, and once space is freed it is writable again. For a Store write, a
// recursive delete, the growth of the map and an import.
//
// The disk is a 24 MiB tmpfs mounted in a private mount namespace of this process, so nothing is
// left mounted whatever happens. That takes root (CAP_SYS_ADMIN); without it the test says why
// and checks nothing.
#include <catalog/admin.hpp>
#include <catalog/store.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace catalog;
using test::parse;

namespace {

// A 24 MiB tmpfs at a fresh directory, visible to this process only; empty `why` when mounted.
struct SmallDisk {
  test::TempDir dir;
  std::string why;

  SmallDisk() {
    if (::unshare(CLONE_NEWNS) != 0) {
      why = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
      return;
    }
    // Mounts made below stay in this namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      why = std::string("making / private: ") + std::strerror(errno);
      return;
    }
    if (::mount("catalog-test", dir.path().c_str(), "tmpfs", 0, "size=24m") != 0)
      why = std::string("mount tmpfs: ") + std::strerror(errno);
  }
  ~SmallDisk() {
    if (why.empty()) ::umount2(dir.path().c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
};

// Writes `bytes` of ballast into `file`, as much as fits.
void ballast(const std::filesystem::path& file, std::size_t bytes) {
  std::ofstream out(file, std::ios::binary);
  const std::string block(1 << 16, 'b');
  for (std::size_t n = 0; n < bytes && out; n += block.size()) out.write(block.data(), block.size());
}

bool full_disk_error(const Error& e) {
  return e.code() == Errc::storage &&
         e.message().find("No space left on device") != std::string::npos;
}

}  // namespace

TEST_CASE("a full disk is a storage error, and the store is usable once space is freed",
          "[lmdb][hardening]") {
  SmallDisk disk;
  if (!disk.why.empty()) {
    WARN("skipped: cannot mount a small tmpfs to fill (" << disk.why << "); run as root");
    return;
  }
  const auto root = disk.dir.path();
  storage::LmdbOptions small;
  small.map_size = 1 << 20;  // grows 1, 2, 4, 8 MiB; 16 MiB does not fit beside the ballast
  auto s = Store::open_lmdb(root / "store", test::test_options(), small).value();
  auto target = Store::open_lmdb(root / "target", StoreOptions{}, small).value();  // for import
  // A store made and closed, to be opened again on the full disk.
  Store::open_lmdb(root / "spare", StoreOptions{}, small).value();
  auto admin = s.principal("admin").value();
  ballast(root / "ballast", std::size_t{10} << 20);

  // A glossary of 40 terms of 32 KiB each: deleting it writes that much again.
  const std::string big(32 << 10, 't');
  s.create_json(admin, Kind::glossary, parse(R"({"name":"Tree","description":"d"})")).value();
  for (int i = 0; i < 40; ++i)
    s.create_json(admin, Kind::glossary_term,
                  parse(R"({"glossary":"Tree","name":"t)" + std::to_string(i) +
                        R"(","description":")" + big + R"("})"))
        .value();

  // Store writes until the map can grow no more.
  const std::string text(64 << 10, 'x');
  int made = 0;
  Error refusal;
  for (;; ++made) {
    REQUIRE(made < 1000);
    auto r = s.create_json(admin, Kind::glossary,
                           parse(R"({"name":"g)" + std::to_string(made) + R"(","description":")" +
                                 text + R"("})"));
    if (!r) {
      refusal = r.error();
      break;
    }
  }
  INFO(refusal.message());
  CHECK(full_disk_error(refusal));
  CHECK(made > 10);
  const auto full = test::dump(s);

  // Everything acknowledged is there, and the store reads and verifies.
  for (int i = 0; i < made; ++i)
    CHECK(s.get_json(admin, Kind::glossary, EntityKey::by_fqn("g" + std::to_string(i))).has_value());
  CHECK(s.verify().value().empty());

  SECTION("a recursive delete is refused the same way, nothing changed") {
    DeleteOptions recursive;
    recursive.recursive = true;
    auto r = s.remove_json(admin, Kind::glossary, EntityKey::by_fqn("Tree"), recursive);
    REQUIRE_FALSE(r.has_value());
    CHECK(full_disk_error(r.error()));
    CHECK(test::dump(s) == full);
  }
  SECTION("the map cannot grow, and stays as it was") {
    auto& lmdb = dynamic_cast<storage::LmdbBackend&>(s.backend());
    const auto before = lmdb.map_size();
    auto grown = lmdb.grow();
    REQUIRE_FALSE(grown.has_value());
    CHECK(full_disk_error(grown.error()));
    CHECK(lmdb.map_size() == before);
    CHECK(test::dump(s) == full);
  }
  SECTION("a store opened on the full disk: reads go on, growth and writes are refused") {
    storage::LmdbOptions big;
    big.map_size = std::size_t{16} << 20;  // more than the disk has left
    auto other = storage::LmdbBackend::open(root / "other", big);
    REQUIRE(other.has_value());  // opening reserves what it can, and still opens
    {
      auto read = (*other)->begin(storage::Mode::read_only);
      CHECK(read.has_value());
    }
    auto grown = (*other)->grow();
    REQUIRE_FALSE(grown.has_value());
    CHECK(full_disk_error(grown.error()));
    for (int attempt = 0; attempt < 2; ++attempt) {  // a failed growth leaves it unreserved
      auto write = (*other)->begin(storage::Mode::read_write);
      REQUIRE_FALSE(write.has_value());
      CHECK(full_disk_error(write.error()));
    }
  }
  SECTION("a lock file that cannot be reserved: each open is refused, none crashes") {
    // LMDB lays its lock file out through a mapping, so one without its blocks on a full disk
    // is SIGBUS. An open that made the file and could not reserve it must leave none behind,
    // and one that finds it (left by an older release) reserves it first.
    std::filesystem::remove(root / "spare" / "lock.mdb");
    ballast(root / "fill", std::size_t{64} << 20);  // every block left
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto reopened = storage::LmdbBackend::open(root / "spare", small);
      REQUIRE_FALSE(reopened.has_value());
      CHECK(full_disk_error(reopened.error()));
    }
    std::ofstream(root / "spare" / "lock.mdb").close();  // an empty one, as older releases left
    auto reopened = storage::LmdbBackend::open(root / "spare", small);
    REQUIRE_FALSE(reopened.has_value());
    CHECK(full_disk_error(reopened.error()));
    std::filesystem::remove(root / "fill");
  }
  SECTION("an import is refused, the target left empty") {
    const auto empty = test::dump(target);
    std::stringstream exported;
    REQUIRE(admin::export_store(s, exported).has_value());
    auto imported = admin::import_store(target, exported);
    REQUIRE_FALSE(imported.has_value());
    CHECK(full_disk_error(imported.error()));
    CHECK(test::dump(target) == empty);
  }

  // Space freed: the same writes go through.
  std::filesystem::remove(root / "ballast");
  CHECK(s.create_json(admin, Kind::glossary,
                      parse(R"({"name":"after","description":")" + text + R"("})")).has_value());
  DeleteOptions recursive;
  recursive.recursive = true;
  CHECK(s.remove_json(admin, Kind::glossary, EntityKey::by_fqn("Tree"), recursive).has_value());
  CHECK(s.verify().value().empty());
}
