// catalog-admin: the maintenance tools of a store, one subcommand each (like the sqlite3 shell's
// integrity_check, or LMDB's mdb_stat and mdb_dump):
//
//   catalog-admin verify STORE    the integrity check (Store::verify): prints each problem as
//                                 `<key>: <message>`, one per line, or `ok` when there is none
//
// STORE names an existing store: `lmdb:DIR`. An in-memory store would be empty, so `memory` is
// refused. Exit status: 0 done (verify: the store is clean); 1 verify found problems; 2 a bad
// command line, a store that cannot be opened, or a check that could not finish (the message
// goes to stderr).
//
// A subcommand is one function over its arguments in the table `commands`; add new ones there
// (backup, export, import, stats, events).

#include <catalog/store.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace {

constexpr int exit_ok = 0;
constexpr int exit_problems = 1;
constexpr int exit_usage = 2;

// A command line that cannot be carried out: the message goes to stderr (with the usage when
// the command line itself is wrong), the status is 2.
struct Refusal {
  std::string message;
  bool show_usage = false;
};

using Args = std::span<char* const>;

// ---- STORE ----

// Opens the store `spec` names; it must exist already (opening an LMDB directory would create
// one, and checking an empty new store says nothing about the one meant).
catalog::Store open_existing(std::string_view spec) {
  if (spec == "memory")
    throw Refusal{"memory: an in-memory store starts empty; name a store as lmdb:DIR"};
  if (!spec.starts_with("lmdb:") || spec.size() == 5)
    throw Refusal{"expected a store as lmdb:DIR, not " + std::string(spec), true};
  const std::filesystem::path dir(spec.substr(5));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / "data.mdb", ec))
    throw Refusal{"no LMDB store in " + dir.string() + " (no data.mdb)"};
  // No admins, so opening writes nothing.
  auto store = catalog::Store::open_lmdb(dir, catalog::StoreOptions{});
  if (!store) throw Refusal{"cannot open " + dir.string() + ": " + store.error().message()};
  return std::move(*store);
}

// ---- subcommands ----

int verify(Args args) {
  if (args.size() != 1) throw Refusal{"verify takes one STORE", true};
  auto store = open_existing(args[0]);
  auto problems = store.verify();
  if (!problems) throw Refusal{"verify could not read the store: " + problems.error().message()};
  if (problems->empty()) {
    std::cout << "ok\n";
    return exit_ok;
  }
  for (const auto& p : *problems) {
    if (!p.key.empty()) std::cout << p.key << ": ";
    std::cout << p.message << '\n';
  }
  return exit_problems;
}

struct Command {
  std::string_view name;
  std::string_view arguments;
  std::string_view summary;
  int (*run)(Args);
};

constexpr Command commands[] = {
    {"verify", "STORE",
     "checks every invariant of the store; prints each problem, or ok (exit 1 if any)", verify},
};

std::string usage() {
  std::string out = "usage: catalog-admin COMMAND ARGS...\n";
  for (const auto& c : commands)
    out += "  catalog-admin " + std::string(c.name) + " " + std::string(c.arguments) + "\n      " +
           std::string(c.summary) + "\n";
  out += "STORE is lmdb:DIR, an existing store.\n"
         "Exit status: 0 done, 1 problems found, 2 bad usage or a store that cannot be read.\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args all(argv, static_cast<std::size_t>(argc));
  if (all.size() < 2) {
    std::cerr << usage();
    return exit_usage;
  }
  const std::string_view name = all[1];
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << usage();
    return exit_ok;
  }
  try {
    for (const auto& c : commands)
      if (c.name == name) return c.run(all.subspan(2));
    throw Refusal{"unknown command " + std::string(name), true};
  } catch (const Refusal& r) {
    std::cerr << "catalog-admin: " << r.message << '\n' << (r.show_usage ? usage() : "");
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "catalog-admin: " << e.what() << '\n';
    return exit_usage;
  }
}
