// catalog-admin: the maintenance tools of a store, one subcommand each (like the sqlite3 shell's
// integrity_check, .backup and .dump, or LMDB's mdb_stat, mdb_copy, mdb_dump and mdb_load). Each
// is a function of catalog::admin (<catalog/admin.hpp>) that hosts can call themselves.
//
//   catalog-admin verify STORE            the integrity check: prints each problem as
//                                         `<key>: <message>`, one per line, or `ok`
//   catalog-admin backup STORE DEST       a consistent copy in a new LMDB directory DEST, taken
//                                         while others write; then DEST is opened and verified
//   catalog-admin export STORE [FILE]     the store as JSON lines (docs/EXPORT_FORMAT.md), to
//                                         FILE or stdout
//   catalog-admin import STORE [FILE]     an export (from FILE or stdin) into an empty STORE
//   catalog-admin stats STORE [--json]    what the store holds, and LMDB's figures
//   catalog-admin reindex STORE           builds the search index again from the entities
//   catalog-admin events STORE [--after N] [--follow]
//                                         change events as JSON lines; --follow keeps printing
//                                         new ones until SIGINT or SIGTERM
//
// STORE is `lmdb:DIR` or `postgresql:CONNINFO` (libpq keywords or a postgresql:// URI; with
// `--postgres-schema NAME`, anywhere on the line, for a schema other than "catalog"). Every
// command but import needs a store that exists; import creates an LMDB directory. An in-memory
// store would be empty, so `memory` is refused. An LMDB store on read-only media (or whose files
// are not ours to write but whose lock.mdb is, which every LMDB reader writes) is opened
// read-only by the commands that only read (verify, backup's source, export, stats, events),
// which say so on stderr: then nothing is written.
//
// Progress: export, import and verify print a progress line on stderr (entities done, rate, time
// left) when stderr is a terminal, and nothing extra otherwise.
//
// Exit status: 0 done; 1 problems: verify (or backup's check) found some, or import refused its
// input or a store that is not empty; 2 a bad command line, a store that cannot be opened, or
// work that could not finish (the message goes to stderr); 3 the store cannot be read: it is
// corrupt (it does not open, a read fails, or reading it crashed the command, which runs in a
// child process so that catalog-admin itself survives any file content).

#include <catalog/admin.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>
#include <catalog/version.hpp>
#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/postgres.hpp>
#endif

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "options.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace admin = catalog::admin;
namespace fs = std::filesystem;

constexpr int exit_ok = 0;
constexpr int exit_problems = 1;
constexpr int exit_usage = 2;
constexpr int exit_corrupt = 3;  // the store cannot be read (corrupt)

// A command line that cannot be carried out: the message goes to stderr (with the usage when
// the command line itself is wrong), the status is 2 unless said otherwise.
struct Refusal {
  std::string message;
  bool show_usage = false;
  int status = exit_usage;
};

// What is wrong, on one line of stderr, and where to read the usage when the command line was.
void report(const Refusal& r);

// What the command line says, as CLI11 fills it: the STORE, the second operand (backup's DEST,
// export's and import's FILE) and the flags of stats and events.
struct Invocation {
  std::string store;
  std::optional<std::string> second;
  bool json = false;
  bool follow = false;
  std::optional<std::uint64_t> after;
};

// Options that apply to every command.
struct Global {
  std::string postgres_schema = "catalog";
};
Global global;

// ---- STORE ----

// What a command does with its store.
enum class Use {
  read,    // verify, backup (its source), export, stats, events: read-only where it must be
  follow,  // events --follow: as read; it looks again itself while a server refuses sessions
  write,   // reindex
  create,  // import: an LMDB directory may be new
};

// Why the LMDB store in `dir` is to be read read-only, or nothing when it can be opened as
// usual: it is on read-only media, or its files are not ours to write but its lock.mdb is (an
// LMDB reader writes lock.mdb, except on read-only media: without that, no open can read it).
std::optional<std::string> read_only_reason(const fs::path& dir) {
  std::error_code ec;
  const bool lock_writable =
      fs::exists(dir / "lock.mdb", ec) && ::access((dir / "lock.mdb").c_str(), W_OK) == 0;
  for (const fs::path& p : {dir, dir / "data.mdb", dir / "map.lock"}) {
    if (p != dir && !fs::exists(p, ec)) continue;
    if (::access(p.c_str(), W_OK) == 0) continue;
    const int why = errno;
    if (why == EROFS || ((why == EACCES || why == EPERM) && lock_writable))
      return p.string() + ": " + std::strerror(why);
  }
  return std::nullopt;
}

// Opens the store `spec` names. It must exist already unless `use` is create (opening an LMDB
// directory would make one, and checking an empty new store says nothing about the one meant).
// Opened with no admins, so opening writes nothing (but the key schema of a new store, and the
// search index of a store written before search or by another analyzer version: docs/
// SEARCH_INDEX.md). A command that reads opens an LMDB store it cannot write read-only
// (LmdbOptions::read_only), and says so: then nothing at all is written.
catalog::Store open_store(std::string_view spec, Use use = Use::read) {
  const bool create = use == Use::create;
  // What the store says of its own work (a conversion from an older key schema, the search
  // index built on open, a storage map grown) goes to standard error.
  catalog::StoreOptions options;
  options.log = catalog_examples::stderr_log("catalog-admin");
  if (spec == "memory")
    throw Refusal{"memory: an in-memory store starts empty; name a store as lmdb:DIR or "
                  "postgresql:CONNINFO"};
  if (spec.starts_with("postgresql:") && spec.size() > 11) {
#ifdef CATALOG_EXAMPLES_POSTGRES
    catalog::storage::PostgresOptions postgres;
    postgres.schema = global.postgres_schema;
    // A follow asks again between its looks, where it also reads SIGINT; a look that waited
    // for the server inside itself would keep a Ctrl-C waiting.
    if (use == Use::follow) postgres.reconnect_wait = std::chrono::milliseconds{0};
    auto store = catalog::open_postgres(std::string(spec.substr(11)), options, postgres);
    if (!store)
      throw Refusal{"cannot open PostgreSQL schema " + global.postgres_schema + ": " +
                    store.error().message()};
    return std::move(*store);
#else
    throw Refusal{"postgresql: this build has no PostgreSQL support (catalog::postgres is built "
                  "when libpq is found; Debian: libpq-dev)"};
#endif
  }
  if (!spec.starts_with("lmdb:") || spec.size() == 5)
    throw Refusal{"expected a store as lmdb:DIR or postgresql:CONNINFO, not " + std::string(spec),
                  true};
  const fs::path dir(spec.substr(5));
  std::error_code ec;
  if (!create && !fs::is_regular_file(dir / "data.mdb", ec))
    throw Refusal{"no LMDB store in " + dir.string() + " (no data.mdb)"};
  // LMDB would make an empty file a new store: a truncated copy would pass as an empty one,
  // and a command that only reads would write to it.
  if (!create && fs::file_size(dir / "data.mdb", ec) == 0 && !ec)
    throw Refusal{"the store is corrupt: " + (dir / "data.mdb").string() +
                      " is empty (a truncated copy?)",
                  false, exit_corrupt};
  catalog::storage::LmdbOptions lmdb;
  if (use == Use::read || use == Use::follow) {
    // The map as the store has it: the default size would grow a smaller data.mdb (a compact
    // backup's) and reserve its blocks on disk. It grows, saying so, only if opening writes
    // more than fits (a conversion or an index built on open).
    const auto size = fs::file_size(dir / "data.mdb", ec);
    if (!ec && size > 0) lmdb.map_size = static_cast<std::size_t>(size);
    if (auto why = read_only_reason(dir)) {
      lmdb.read_only = true;
      std::cerr << "catalog-admin: the store cannot be written (" << *why
                << "): it is opened read-only\n";
    }
  }
  auto store = catalog::Store::open_lmdb(dir, options, lmdb);
  if (!store) throw Refusal{"cannot open " + dir.string() + ": " + store.error().message()};
  return std::move(*store);
}

// ---- progress on stderr ----

std::string grouped(std::uint64_t n) {
  auto digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string clock_text(double seconds) {
  auto s = static_cast<std::uint64_t>(seconds + 0.5);
  std::ostringstream o;
  if (s >= 3600)
    o << s / 3600 << ':' << std::setw(2) << std::setfill('0') << s / 60 % 60;
  else
    o << s / 60;
  o << ':' << std::setw(2) << std::setfill('0') << s % 60;
  return o.str();
}

// One line on stderr, rewritten in place, when stderr is a terminal: "export: 120,000 entities,
// 41%, 52,301 entities/s, 0:07 left". Nothing at all otherwise.
class ProgressLine {
 public:
  ProgressLine() : on_(::isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() { end_line(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  admin::ProgressFn fn() {
    if (!on_) return {};
    return [this](const admin::Progress& p) { show(p); };
  }

  // Ends a line left open (before an error message).
  void end_line() {
    if (open_) std::cerr << '\n' << std::flush;
    open_ = false;
  }

 private:
  void show(const admin::Progress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (!p.finished && open_ && now - shown_ < std::chrono::milliseconds(100)) return;
    shown_ = now;
    std::string text = std::string(p.phase) + ": " + grouped(p.entities) + " entities";
    if (p.total > 0)
      text += ", " + std::to_string(std::min<std::uint64_t>(100, p.done * 100 / p.total)) + "%";
    if (p.seconds > 0)
      text += ", " +
              grouped(static_cast<std::uint64_t>(static_cast<double>(p.entities) / p.seconds)) +
              " entities/s";
    if (p.finished)
      text += ", done in " + clock_text(p.seconds);
    else if (p.total > p.done && p.done > 0)
      text += ", " +
              clock_text(p.seconds * static_cast<double>(p.total - p.done) /
                         static_cast<double>(p.done)) +
              " left";
    std::cerr << "\r\033[K" << text << std::flush;
    open_ = true;
    if (p.finished) end_line();
  }

  bool on_;
  bool open_ = false;
  std::chrono::steady_clock::time_point shown_{};
};

// ---- subcommands ----

void print_problems(const std::vector<catalog::IntegrityProblem>& problems) {
  for (const auto& p : problems) {
    if (!p.key.empty()) std::cout << p.key << ": ";
    std::cout << p.message << '\n';
  }
}

// Whether an error reading a store says its file is damaged (LMDB's words for a page that is
// not what it should be, or a record that does not decode), rather than that it cannot be
// reached (permissions, a newer release, memory).
bool says_corrupt(std::string_view message) {
  // Phrases of LMDB's codes and of the catalog's own decoders, never a bare word that a path
  // could hold.
  for (std::string_view phrase :
       {"MDB_INVALID", "MDB_CORRUPTED", "MDB_PAGE_NOTFOUND", "MDB_BAD_TXN", "MDB_BAD_VALSIZE",
        "MDB_CURSOR_FULL", "MDB_VERSION_MISMATCH", "does not decode",
        "the store is corrupt:", "corrupt entity record", "corrupt edge key", "corrupt snapshot",
        "corrupt change event", "corrupt event key", "dangling containment edge"})
    if (message.find(phrase) != std::string_view::npos) return true;
  return false;
}

// verify in this process: 0 clean, 1 problems, 3 the store cannot be read because it is
// damaged; 2 (a Refusal) when it cannot be opened or read for another reason.
int verify_here(std::string_view spec) {
  std::optional<catalog::Store> store;
  try {
    store.emplace(open_store(spec));
  } catch (const Refusal& r) {
    if (!says_corrupt(r.message)) throw;
    throw Refusal{"cannot read the store, it is corrupt: " + r.message, false, exit_corrupt};
  }
  ProgressLine progress;
  auto problems = admin::verify(*store, progress.fn());
  progress.end_line();
  if (!problems) {
    const std::string message = problems.error().message();
    if (says_corrupt(message))
      throw Refusal{"cannot read the store, it is corrupt: " + message, false, exit_corrupt};
    throw Refusal{"cannot read the store: " + message};
  }
  if (problems->empty()) {
    std::cout << "ok\n";
    return exit_ok;
  }
  print_problems(*problems);
  return exit_problems;
}

const char* signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGABRT: return "SIGABRT";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGKILL: return "SIGKILL";
  case SIGPIPE: return "SIGPIPE";
  case SIGTERM: return "SIGTERM";
  case SIGINT: return "SIGINT";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

// LMDB keeps no checksums: a damaged page can send its reader outside the map or into one of
// its assertions. So every command that reads a store runs in a child process, which tells its
// outcome through a pipe before it exits; a child that ends without telling, by a fault signal
// or any other way (a sanitizer's report), was brought down by what it read: the store is
// corrupt (exit 3). A child killed from outside (SIGKILL, SIGTERM, SIGINT, SIGPIPE, SIGHUP) is
// that, not corruption: catalog-admin ends by the same signal. `corrupt_if_thrown`: an exception out of `here` came from what
// it read (verify: a length from a damaged page, say), else it is reported as main reports one.
// The child that guarded() waits for: SIGINT, SIGTERM and SIGHUP sent to catalog-admin alone
// (`kill <pid>`, not a terminal's Ctrl-C, which reaches both) are passed on to it, so that
// `events --follow` ends as it does when it runs in this process (SIGINT and SIGTERM: cleanly;
// SIGHUP: by the signal).
volatile sig_atomic_t guarded_child = 0;

extern "C" void pass_on_signal(int sig) {
  if (guarded_child > 0) ::kill(static_cast<pid_t>(guarded_child), sig);
}

int guarded(const Invocation& args, int (*here)(const Invocation&), bool corrupt_if_thrown) {
  auto run_here = [&] {
    try {
      const int status = here(args);
      // What a command printed and could not write (a full disk, a closed pipe) is a failure,
      // not a success with its output lost.
      std::cout.flush();
      if (!std::cout) throw Refusal{"cannot write to standard output"};
      return status;
    } catch (const Refusal& r) {
      // A store that could not be read because it is damaged is exit 3 whatever the command.
      if (r.status == exit_usage && says_corrupt(r.message)) {
        report(Refusal{"cannot read the store, it is corrupt: " + r.message, false, exit_corrupt});
        return exit_corrupt;
      }
      report(r);
      return r.status;
    } catch (const std::exception& e) {
      if (corrupt_if_thrown) {
        std::cerr << "catalog-admin: cannot read the store, it is corrupt: " << e.what() << '\n';
        return exit_corrupt;
      }
      std::cerr << "catalog-admin: " << e.what() << '\n';
      return exit_usage;
    }
  };
  std::cout.flush();
  std::cerr.flush();
  int told[2];
  if (::pipe(told) != 0) return run_here();  // no pipe: run here
  // SIGINT, SIGTERM and SIGHUP wait until the child is known and they are passed on to it, so
  // that none ends this process and leaves the child running.
  const int passed[3] = {SIGINT, SIGTERM, SIGHUP};
  sigset_t held, unheld;
  sigemptyset(&held);
  for (int sig : passed) sigaddset(&held, sig);
  ::sigprocmask(SIG_BLOCK, &held, &unheld);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(told[0]);
    ::close(told[1]);
    ::sigprocmask(SIG_SETMASK, &unheld, nullptr);
    return run_here();  // no child to be had: run here
  }
  if (child == 0) {
    // Killed with its parent (kill -9 of catalog-admin): a child left alone would go on
    // writing to the store, or following events, with no one to tell.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(exit_usage);  // the parent died before prctl
    ::sigprocmask(SIG_SETMASK, &unheld, nullptr);
    ::close(told[0]);
    const int status = run_here();
    std::cout.flush();
    std::cerr.flush();
    const char byte = static_cast<char>(status);
    (void)!::write(told[1], &byte, 1);
    ::_exit(status);
  }
  ::close(told[1]);
  guarded_child = child;
  struct sigaction pass {}, before[3];
  pass.sa_handler = pass_on_signal;
  sigemptyset(&pass.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(passed[i], &pass, &before[i]);
  ::sigprocmask(SIG_SETMASK, &unheld, nullptr);
  char byte = 0;
  ssize_t got = 0;
  while ((got = ::read(told[0], &byte, 1)) < 0 && errno == EINTR) {
  }
  ::close(told[0]);
  // The child's end, seen without reaping it: its pid is not reused before it is reaped, so a
  // signal passed on until then reaches it and no other process.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  guarded_child = 0;
  for (int i = 0; i < 3; ++i) sigaction(passed[i], &before[i], nullptr);
  int status = 0;
  int waited = 0;
  while ((waited = ::waitpid(child, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited < 0)
    throw Refusal{std::string("cannot wait for the command: ") + std::strerror(errno)};
  if (got == 1) return static_cast<unsigned char>(byte);
  std::string ended;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ended = std::string(signal_name(sig)) + " (" + std::to_string(sig) + ")";
    if (sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGPIPE || sig == SIGHUP) {
      // Ended from outside (a terminal's Ctrl-C, a reader of the output that went away): end
      // the same way, as the command would have ended in this process.
      ::signal(sig, SIG_DFL);
      ::raise(sig);
      throw Refusal{"reading " + args.store + " was ended by " + ended};  // the signal is ignored
    }
  } else {
    ended = "status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  throw Refusal{"cannot read the store, it is corrupt: reading " + args.store +
                    " ended with " + ended +
                    "; LMDB keeps no checksums and a damaged page misleads its reader. Restore "
                    "a backup, or export what still reads",
                false, exit_corrupt};
}

int verify(const Invocation& args) {
  return guarded(args, [](const Invocation& a) { return verify_here(a.store); }, true);
}

int backup_here(const Invocation& args) {
  // DEST may be written as STORE is: lmdb:DIR is DIR.
  std::string_view named = *args.second;
  if (named.starts_with("postgresql:"))
    throw Refusal{"backup writes an LMDB directory, not " + std::string(named), true};
  if (named.starts_with("lmdb:")) named.remove_prefix(5);
  if (named.empty()) throw Refusal{"DEST names no directory", true};
  const fs::path dest(named);
  {
    auto store = open_store(args.store);
    auto made = admin::backup(store, dest);
    if (!made) throw Refusal{"backup failed: " + made.error().message()};
    std::cout << "backup of " << args.store << " written to " << dest.string() << ": "
              << grouped(made->bytes) << " bytes ("
              << (made->lmdb_copy ? "LMDB's compacting copy" : "copied key by key") << ")\n";
  }
  // The backup must open as a store and pass the integrity check, read as it is: opened
  // read-only, it stays the compact copy LMDB wrote.
  catalog::storage::LmdbOptions as_is;
  as_is.read_only = true;
  auto copy = catalog::Store::open_lmdb(dest, catalog::StoreOptions{}, as_is);
  if (!copy) throw Refusal{"the backup does not open: " + copy.error().message()};
  // The check's reader made lock.mdb with LMDB's mode: the copy stays its owner's alone.
  std::error_code ec;
  if (fs::exists(dest / "lock.mdb", ec))
    fs::permissions(dest / "lock.mdb", fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace, ec);
  auto problems = admin::verify(*copy);
  if (!problems) throw Refusal{"the backup cannot be read: " + problems.error().message()};
  if (!problems->empty()) {
    std::cout << "the backup does not verify:\n";
    print_problems(*problems);
    return exit_problems;
  }
  std::cout << "the backup opens and verifies clean\n";
  return exit_ok;
}

int reindex_here(const Invocation& args) {
  auto store = open_store(args.store, Use::write);
  // The tool acts for whoever may run it on the store's files: as an admin.
  catalog::Principal tool{catalog::Uuid{}, "catalog-admin", true};
  auto indexed = store.reindex(tool);
  if (!indexed) throw Refusal{"reindex failed: " + indexed.error().message()};
  std::cout << "search index rebuilt: " << grouped(*indexed) << " entities\n";
  return exit_ok;
}

int export_here(const Invocation& args) {
  auto store = open_store(args.store);
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (args.second) {
    file.open(*args.second, std::ios::binary | std::ios::trunc);
    if (!file) throw Refusal{"cannot write " + *args.second};
    out = &file;
  }
  ProgressLine progress;
  auto exported = admin::export_store(store, *out, progress.fn());
  progress.end_line();
  if (!exported) {
    if (file.is_open()) {
      // An incomplete export is refused by import anyway (no end line); do not leave one.
      file.close();
      std::error_code ec;
      fs::remove(*args.second, ec);
    }
    throw Refusal{"export failed: " + exported.error().message()};
  }
  if (exported->skipped_keys > 0)
    std::cerr << "catalog-admin: warning: " << grouped(exported->skipped_keys)
              << " snapshots or edges of entities that do not exist were left out (verify "
                 "names them)\n";
  return exit_ok;
}

// Stdin as a stream an import can start over from (an LMDB map that fills makes it): a regular
// file is opened again; a pipe is copied to an unlinked temporary file first, on disk, not in
// memory. Sets `bytes` to the input's size.
std::unique_ptr<std::istream> seekable_stdin(std::uint64_t& bytes) {
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
    const auto at = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
    auto in = std::make_unique<std::ifstream>("/dev/stdin", std::ios::binary);
    if (*in && at > 0) in->seekg(at);
    if (*in) {
      bytes = static_cast<std::uint64_t>(st.st_size - std::max<off_t>(at, 0));
      return in;
    }
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/catalog-admin-import-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw Refusal{"cannot create a temporary file for stdin in " + path};
  // Unlinked at once, so that nothing is left behind however the program ends: the descriptor
  // keeps the file, and /dev/fd/N opens it again for reading.
  ::unlink(path.c_str());
  const std::string reopen = "/dev/fd/" + std::to_string(fd);
  {
    std::ofstream spool(reopen, std::ios::binary | std::ios::trunc);
    // An empty stdin copies nothing (operator<< would call that a failure): the import then
    // says the input is empty.
    if (std::cin.peek() != std::char_traits<char>::eof()) spool << std::cin.rdbuf();
    spool.flush();
    if (!spool) {
      ::close(fd);
      throw Refusal{"cannot copy stdin to a temporary file in " + path + " (disk full?)"};
    }
  }
  auto in = std::make_unique<std::ifstream>(reopen, std::ios::binary);
  ::close(fd);  // the stream holds the file now
  if (!*in) throw Refusal{"cannot read back the copy of stdin"};
  in->seekg(0, std::ios::end);
  bytes = static_cast<std::uint64_t>(in->tellg());
  in->seekg(0);
  return in;
}

int import(const Invocation& args) {
  admin::ImportOptions options;
  std::unique_ptr<std::istream> owned;
  // The input first: an input that cannot be read leaves no new store directory behind.
  if (args.second) {
    std::error_code ec;
    if (fs::is_directory(*args.second, ec))
      throw Refusal{"cannot read " + *args.second + ": it is a directory"};
    owned = std::make_unique<std::ifstream>(*args.second, std::ios::binary);
    if (!*owned) throw Refusal{"cannot read " + *args.second};
    options.input_bytes = fs::file_size(*args.second, ec);
  }
  // A target that cannot be read because it is damaged is exit 3, as for the other commands.
  auto store = [&] {
    try {
      return open_store(args.store, Use::create);
    } catch (const Refusal& r) {
      if (!says_corrupt(r.message)) throw;
      throw Refusal{"cannot read the store, it is corrupt: " + r.message, false, exit_corrupt};
    }
  }();
  std::istream* in = owned ? owned.get() : &std::cin;
  if (!owned && store.backend().grows_when_full()) {
    // Only a store that can fill and make the import start over needs to read it again.
    owned = seekable_stdin(options.input_bytes);
    in = owned.get();
  }
  ProgressLine progress;
  options.progress = progress.fn();
  auto imported = admin::import_store(store, *in, options);
  progress.end_line();
  if (!imported) {
    const auto code = imported.error().code();
    const bool refused = code == catalog::Errc::invalid_request ||
                         code == catalog::Errc::invalid_value ||
                         code == catalog::Errc::already_exists;
    const std::string message = imported.error().message();
    throw Refusal{"import refused, nothing imported: " + message, false,
                  refused                  ? exit_problems
                  : says_corrupt(message) ? exit_corrupt
                                           : exit_usage};
  }
  std::cout << "imported " << grouped(imported->entities) << " entities, "
            << grouped(imported->snapshots) << " snapshots, " << grouped(imported->edges)
            << " edges, " << grouped(imported->events) << " events into " << args.store << '\n';
  return exit_ok;
}

// A key family's tag as text: the letter, or \xHH for a byte that is not printable ASCII.
std::string printable_tag(char tag) {
  const auto byte = static_cast<unsigned char>(tag);
  if (byte > 0x20 && byte < 0x7f) return std::string(1, tag);
  constexpr const char* hex = "0123456789abcdef";
  return std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
}

boost::json::object stats_json(const admin::StoreStats& s) {
  boost::json::object o;
  boost::json::object kinds;
  for (const auto& k : s.kinds)
    kinds[catalog::type_name(k.kind)] = {{"live", k.live}, {"deleted", k.deleted}};
  o["entities"] = {{"live", s.live}, {"deleted", s.deleted}, {"kinds", std::move(kinds)}};
  o["snapshots"] = s.snapshots;
  boost::json::object relations;
  for (const auto& r : s.relations) relations[r.relation] = r.edges;
  o["edges"] = {{"total", s.edges}, {"relations", std::move(relations)}};
  o["events"] = s.events;
  boost::json::object families;
  for (const auto& f : s.families) {
    // A family the key schema does not know is named by its tag: each stays apart.
    std::string name(f.name);
    if (name == "unknown") name += " " + printable_tag(f.tag);
    families[name] = {{"tag", printable_tag(f.tag)}, {"keys", f.keys}, {"bytes", f.bytes}};
  }
  o["keys"] = {{"total", s.keys}, {"bytes", s.bytes}, {"families", std::move(families)}};
  if (s.lmdb) {
    const auto& l = *s.lmdb;
    o["lmdb"] = {{"mapSize", l.map_size},
                 {"pageSize", l.page_size},
                 {"pagesInUse", l.pages_in_use},
                 {"freePages", l.free_pages},
                 {"depth", l.depth},
                 {"branchPages", l.branch_pages},
                 {"leafPages", l.leaf_pages},
                 {"overflowPages", l.overflow_pages},
                 {"entries", l.entries},
                 {"lastTransaction", l.last_transaction},
                 {"readers", l.readers},
                 {"readerSlotsUsed", l.reader_slots_used},
                 {"maxReaders", l.max_readers}};
  }
  return o;
}

std::string mib(std::uint64_t bytes) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0)
    << " MiB";
  return o.str();
}

int stats_here(const Invocation& args) {
  const bool json = args.json;
  auto store = open_store(args.store);
  auto s = admin::stats(store);
  if (!s) throw Refusal{"stats could not read the store: " + s.error().message()};
  if (json) {
    std::cout << catalog::json::serialize(stats_json(*s)) << '\n';
    return exit_ok;
  }
  auto& out = std::cout;
  out << "entities: " << grouped(static_cast<std::uint64_t>(s->live)) << " live, "
      << grouped(static_cast<std::uint64_t>(s->deleted)) << " soft-deleted\n";
  for (const auto& k : s->kinds)
    out << "  " << std::left << std::setw(16) << catalog::type_name(k.kind) << std::right
        << std::setw(12) << grouped(static_cast<std::uint64_t>(k.live)) << " live" << std::setw(12)
        << grouped(static_cast<std::uint64_t>(k.deleted)) << " soft-deleted\n";
  out << "versions: " << grouped(s->snapshots) << " snapshots\n";
  out << "edges: " << grouped(s->edges) << '\n';
  for (const auto& r : s->relations)
    out << "  " << std::left << std::setw(16) << r.relation << std::right << std::setw(12)
        << grouped(r.edges) << '\n';
  out << "events: " << grouped(s->events) << '\n';
  out << "keys: " << grouped(s->keys) << ", " << grouped(s->bytes) << " bytes of keys and values ("
      << mib(s->bytes) << ")\n";
  for (const auto& f : s->families)
    out << "  " << printable_tag(f.tag) << " " << std::left << std::setw(20) << f.name << std::right
        << std::setw(12) << grouped(f.keys) << " keys" << std::setw(16) << grouped(f.bytes)
        << " bytes\n";
  if (s->lmdb) {
    const auto& l = *s->lmdb;
    out << "lmdb map size: " << grouped(l.map_size) << " bytes (" << mib(l.map_size) << ")\n";
    out << "lmdb page size: " << l.page_size << " bytes\n";
    out << "lmdb pages in use: " << grouped(l.pages_in_use) << " ("
        << mib(l.pages_in_use * l.page_size) << "), free pages: " << grouped(l.free_pages) << '\n';
    out << "lmdb tree: depth " << l.depth << ", " << grouped(l.branch_pages) << " branch, "
        << grouped(l.leaf_pages) << " leaf, " << grouped(l.overflow_pages) << " overflow pages, "
        << grouped(l.entries) << " entries\n";
    out << "lmdb readers: " << l.readers << " active, " << l.reader_slots_used << " slots used of "
        << l.max_readers << "\n";
    out << "lmdb last transaction: " << l.last_transaction << '\n';
  }
  return exit_ok;
}

std::atomic<bool> interrupted{false};
extern "C" void on_interrupt(int) { interrupted.store(true); }

int events_here(const Invocation& args) {
  const auto after = args.after;
  const bool follow = args.follow;
  auto store = open_store(args.store, follow ? Use::follow : Use::read);
  const admin::EventSink print = [](std::uint64_t, std::string_view event) {
    std::cout << event << '\n';
    return static_cast<bool>(std::cout);
  };
  if (!follow) {
    auto last = admin::events(store, after.value_or(0), print);
    std::cout.flush();
    if (!last) throw Refusal{"events could not be read: " + last.error().message()};
    return exit_ok;
  }
  // Ends cleanly on SIGINT or SIGTERM: the handler only sets a flag, which the follow reads
  // between looks for new events.
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  admin::FollowOptions options;
  options.stop = [] {
    std::cout.flush();  // asked after every look: what was printed reaches a pipe now
    return interrupted.load();
  };
  // A PostgreSQL store that cannot be read for a while (its server restarting) is looked at
  // again until it can; said on stderr when it starts and, while it lasts, once a minute. A
  // corrupt store ends the follow, and so does any failure of an LMDB store (a local file
  // that fails to read does not mend by itself).
  std::optional<std::chrono::steady_clock::time_point> said;
  std::string said_what;
  const bool remote = args.store.starts_with("postgresql:");
  options.retry = [&](const catalog::Error& e) {
    if (!remote ||
        (e.code() != catalog::Errc::storage && e.code() != catalog::Errc::storage_conflict &&
         e.code() != catalog::Errc::storage_unavailable) ||
        says_corrupt(e.message()))
      return false;
    const auto now = std::chrono::steady_clock::now();
    if (!said || said_what != e.message() || now - *said >= std::chrono::minutes(1)) {
      std::cerr << "catalog-admin: events: cannot read the store (" << e.message()
                << "); looking again every " << options.poll.count() << " ms\n";
      said = now;
      said_what = e.message();
    }
    return true;
  };
  auto last = admin::follow_events(store, after.value_or(0), print, options);
  std::cout.flush();
  if (!last) throw Refusal{"events could not be read: " + last.error().message()};
  return exit_ok;
}

// The commands that read a store, each in a child process (guarded). Import reads a file into a
// new store: what it reads cannot bring it down.
int backup(const Invocation& args) { return guarded(args, backup_here, false); }
int export_(const Invocation& args) { return guarded(args, export_here, false); }
int stats(const Invocation& args) { return guarded(args, stats_here, false); }
int reindex(const Invocation& args) { return guarded(args, reindex_here, false); }
int events(const Invocation& args) { return guarded(args, events_here, false); }

// The subcommands, in the order --help lists them.
struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Invocation&);
  const char* second = nullptr;  // the second operand's name, if the command takes one
  const char* second_help = nullptr;
  bool second_required = false;
};

constexpr Command commands[] = {
    {"verify", "Check every invariant; print each problem, or ok", verify},
    {"backup", "Copy the store, while others write, into a new LMDB directory and verify it",
     backup, "DEST", "The new LMDB directory of the copy (DIR or lmdb:DIR)", true},
    {"export", "Write the whole store as JSON lines (docs/EXPORT_FORMAT.md)", export_, "FILE",
     "The file to write (default, or -: stdout)"},
    {"import", "Read an export into an empty store, all or nothing", import, "FILE",
     "The file to read (default, or -: stdin)"},
    {"stats", "Entities, versions, edges, events, bytes; LMDB's map, pages and readers", stats},
    {"reindex", "Build the search index again from the entities, in batches", reindex},
    {"events", "Print change events as JSON lines; --follow waits for new ones", events},
};

constexpr const char* footer =
    "STORE is lmdb:DIR or postgresql:CONNINFO (schema \"catalog\" unless --postgres-schema, "
    "which may stand anywhere on the line). Progress goes to stderr when it is a terminal. An "
    "LMDB store on read-only media is read read-only by verify, backup, export, stats and "
    "events.\n"
    "Exit status: 0 done, 1 problems found or input refused, 2 bad usage or a store that cannot "
    "be opened, 3 the store cannot be read (corrupt).";

void report(const Refusal& r) {
  // One line: what is wrong, and for a bad command line where the usage is.
  std::cerr << "catalog-admin: " << r.message
            << (r.show_usage ? " (run catalog-admin --help for the usage)\n" : "\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("The maintenance tools of a catalog store, one command each.", "catalog-admin");
  catalog_examples::add_standard_flags(app);
  app.footer(footer);
  app.add_option("--postgres-schema", global.postgres_schema,
                 "The schema of the catalog in a PostgreSQL store (default catalog)")
      ->type_name("NAME");
  app.require_subcommand(1);
  app.fallthrough();  // --postgres-schema after the command too
  Invocation args;
  std::string after_text;
  std::vector<std::pair<CLI::App*, const Command*>> subcommands;
  for (const auto& c : commands) {
    auto* sub = app.add_subcommand(c.name, c.summary);
    sub->add_option("STORE", args.store, "lmdb:DIR or postgresql:CONNINFO")->required();
    if (c.second) {
      auto* second = sub->add_option(c.second, args.second, c.second_help);
      if (c.second_required) second->required();
    }
    if (c.run == stats) sub->add_flag("--json", args.json, "Print the figures as one JSON object");
    if (c.run == events) {
      sub->add_option("--after", after_text, "Print the events after this offset")
          ->type_name("N");
      sub->add_flag("--follow", args.follow, "Keep printing new events until SIGINT or SIGTERM");
    }
    subcommands.emplace_back(sub, &c);
  }
  if (argc <= 1) {
    std::string names;
    for (const auto& c : commands) names += (names.empty() ? "" : ", ") + std::string(c.name);
    return catalog_examples::bad_usage(app.get_name(), "a command is needed: " + names);
  }
  // The first operand names the command, and an option that neither the program nor that
  // command has is named as such: CLI11 alone would first say that the command or STORE is
  // missing.
  const CLI::App* command = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() > 1 && a.starts_with("-")) {
      const std::string name(a.substr(0, a.find('=')));
      const CLI::Option* option = app.get_option_no_throw(name);
      if (!option && command) option = command->get_option_no_throw(name);
      if (!option) return catalog_examples::bad_usage(app.get_name(), "unknown option " + name);
      // Its value, when not given with '=', is the next argument, whatever it looks like
      // ("--after -1" is read as a bad value, not as an option "-1").
      if (name.size() == a.size() && option->get_type_size_min() > 0) ++i;
    } else if (!command) {
      const auto c = std::find_if(subcommands.begin(), subcommands.end(),
                                  [&](const auto& s) { return a == s.second->name; });
      if (c == subcommands.end())
        return catalog_examples::bad_usage(app.get_name(), "unknown command " + std::string(a));
      command = c->first;
    }
  }
  const auto status = catalog_examples::parse(app, argc, argv, [&] {
    if (global.postgres_schema.empty())
      throw catalog_examples::BadOption{"--postgres-schema needs a schema name"};
    if (!after_text.empty() || app.get_subcommand("events")->count("--after") > 0)
      args.after = static_cast<std::uint64_t>(catalog_examples::read_integer(
          after_text, "--after", std::numeric_limits<std::int64_t>::max()));
  });
  if (status) return *status;
  try {
    for (const auto& [sub, command] : subcommands) {
      if (!sub->parsed()) continue;
      // `-` is standard output for export and standard input for import, as when left out.
      if ((command->run == export_ || command->run == import) && args.second == "-")
        args.second.reset();
      return command->run(args);
    }
    return exit_usage;  // require_subcommand(1) makes this unreachable
  } catch (const Refusal& r) {
    report(r);
    return r.status;
  } catch (const std::exception& e) {
    std::cerr << "catalog-admin: " << e.what() << '\n';
    return exit_usage;
  }
}
