#ifndef CATALOG_EXAMPLES_OPTIONS_HPP
#define CATALOG_EXAMPLES_OPTIONS_HPP

// The command lines of the tools, all through CLI11 (header-only, Debian libcli11-dev), so that
// each has the same `--help` and `--version`, takes `--flag value` and `--flag=value`, and
// answers a command line it cannot use with one line naming the bad argument, a pointer to
// `--help`, and exit status 2.
//
// The flags shared by catalog-replay, catalog-serve and catalog-tour (docs/REST.md): which store,
// which token keys and claims, which admins, which clock. A program adds its own flags to the
// same CLI::App.
//
//   [--store memory | --store lmdb:<dir> | --store postgresql:<conninfo>]
//   [--postgres-schema <name>]
//   [--jwt-hs256-secret-file <file>]... [--jwt-rs256-public-key-file <pem>]...
//   [--jwt-issuer <iss>] [--jwt-audience <aud>] [--jwt-allow-no-exp]
//   [--jwt-leeway <seconds>] [--jwt-principal-claim <claim>]...
//   [--admin <name>]... [--base-url <url>] [--now <epoch-seconds>]
//
// Single-valued flags may be given once. `postgresql:<conninfo>` is libpq's (keywords such as
// "host=db.example port=5432 dbname=meta user=catalog", or a postgresql:// URI);
// `--postgres-schema` names the schema of the catalog in that database (default "catalog").
// PostgreSQL needs a build with catalog::postgres (libpq).

#include <catalog/store.hpp>
#include <catalog/version.hpp>
#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/postgres.hpp>
#endif

#include "write_whole.hpp"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog_examples {

// A command line that cannot be used, found after CLI11 has parsed it (a file that cannot be
// read, a value out of range): reported as CLI11's own errors are.
struct BadOption {
  std::string message;
};

// Reports a command line that cannot be used: one line on stderr naming what is wrong and where
// the usage is. Returns the exit status, 2.
inline int bad_usage(const std::string& program, std::string_view message) {
  std::cerr << program << ": " << message << " (run " << program << " --help for the usage)\n";
  return 2;
}

// Gives `app` the flags every tool has: `-h`/`--help` and `--version` (the program's name and the
// library's version, as `catalog-serve 0.1.0`). A flag given a value (`--keep=yes`) is refused.
inline void add_standard_flags(CLI::App& app) {
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.set_version_flag("--version", app.get_name() + " " + catalog::library_version_string(),
                       "Print the version and exit");
  app.option_defaults()->disable_flag_override();
  app.get_formatter()->column_width(34);
}

// Parses argv[1..argc) into `app`. Returns the status to exit with when the program should stop
// here (0 after --help or --version, 2 after a bad command line), nullopt to go on. `check` runs
// after a successful parse and may throw BadOption.
template <class Check>
std::optional<int> parse(CLI::App& app, int argc, char** argv, Check check) {
  try {
    app.parse(argc, argv);
    check();
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();  // the help of the subcommand named, if one was
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << '\n';
    return 0;
  } catch (const CLI::ExtrasError&) {
    // Every tool words it alike, naming the first argument it cannot place (CLI11 lists them
    // all, in an order of its own).
    const auto left = app.remaining();
    bool operands = false;  // after `--`
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--" && !operands) {
        operands = true;
        continue;
      }
      const std::string name = a.substr(0, a.find('='));
      if (std::find(left.begin(), left.end(), a) == left.end() &&
          std::find(left.begin(), left.end(), name) == left.end())
        continue;
      if (!operands && a.size() > 1 && a.front() == '-')
        return bad_usage(app.get_name(), "unknown option " + name);
      return bad_usage(app.get_name(), "unexpected argument " + a);
    }
    return bad_usage(app.get_name(), "unexpected arguments");
  } catch (const CLI::ParseError& e) {
    return bad_usage(app.get_name(), e.what());
  } catch (const BadOption& bad) {
    return bad_usage(app.get_name(), bad.message);
  }
}

struct Options {
  bool store_given = false;                       // --store was on the command line
  std::optional<std::filesystem::path> lmdb_dir;  // nullopt: memory (or PostgreSQL)
  std::optional<std::string> postgres;            // the conninfo of --store postgresql:
  std::string postgres_schema = "catalog";
  catalog::StoreOptions store;
};

// The bytes of the regular file `path` (a directory or a device is a bad option, not a read
// that throws from inside the stream).
inline std::string read_file(const std::string& path, std::string_view flag) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw BadOption{std::string(flag) + ": cannot read " + path + ": " + ec.message()};
  if (!std::filesystem::is_regular_file(status))
    throw BadOption{std::string(flag) + ": " + path + " is not a file"};
  try {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int why = errno;
      throw BadOption{std::string(flag) + ": cannot read " + path +
                      (why != 0 ? std::string(": ") + std::strerror(why) : std::string())};
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw BadOption{std::string(flag) + ": cannot read " + path};
    return bytes;
  } catch (const std::ios_base::failure&) {
    throw BadOption{std::string(flag) + ": cannot read " + path};
  }
}

// A decimal integer from `min` to `max` (CLI11's own conversion would take signs, hexadecimal
// and exponents).
inline std::int64_t read_integer(std::string_view text, std::string_view flag, std::int64_t max,
                                 std::int64_t min = 0) {
  const auto refused = [&] {
    return BadOption{std::string(flag) + ": " + std::string(text) + " is not an integer from " +
                     std::to_string(min) + " to " + std::to_string(max)};
  };
  if (text.empty()) throw refused();
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > (max - (c - '0')) / 10) throw refused();
    n = n * 10 + (c - '0');
  }
  if (n < min) throw refused();
  return n;
}

// The shared flags as CLI11 fills them; `options()` turns them into Options.
class StoreFlags {
 public:
  // Adds the shared flags to `app`, in the group "Store and authentication". `store_help`
  // describes --store, its default included (the tour's is not memory).
  explicit StoreFlags(CLI::App& app,
                      const char* store_help =
                          "memory (the default), lmdb:<dir> or postgresql:<conninfo>") {
    const std::string group = "Store and authentication";
    store_ = app.add_option("--store", store_text_, store_help)
                 ->type_name("<store>")
                 ->group(group);
    app.add_option("--postgres-schema", schema_,
                   "The schema of the catalog in a PostgreSQL store (default catalog)")
        ->type_name("<name>")
        ->group(group);
    app.add_option("--jwt-hs256-secret-file", hs256_files_,
                   "A file whose exact bytes are an HS256 secret (repeatable)")
        ->type_name("<file>")
        ->allow_extra_args(false)
        ->group(group);
    app.add_option("--jwt-rs256-public-key-file", rs256_files_,
                   "A PEM RSA public key for RS256 tokens (repeatable)")
        ->type_name("<pem>")
        ->allow_extra_args(false)
        ->group(group);
    issuer_ = app.add_option("--jwt-issuer", issuer_text_, "The iss every token must carry")
                  ->type_name("<iss>")
                  ->group(group);
    audience_ = app.add_option("--jwt-audience", audience_text_, "The aud every token must carry")
                    ->type_name("<aud>")
                    ->group(group);
    app.add_flag("--jwt-allow-no-exp", allow_no_exp_, "Accept tokens without exp")->group(group);
    leeway_ = app.add_option("--jwt-leeway", leeway_text_,
                             "Clock skew allowed on exp, nbf and iat, in seconds (default 60)")
                  ->type_name("<seconds>")
                  ->group(group);
    app.add_option("--jwt-principal-claim", claims_,
                   "A claim naming the user; repeated, replaces email, preferred_username, sub")
        ->type_name("<claim>")
        ->allow_extra_args(false)
        ->group(group);
    app.add_option("--admin", admins_,
                   "An admin principal, made an admin user if missing (repeatable)")
        ->type_name("<name>")
        ->allow_extra_args(false)
        ->group(group);
    base_url_ = app.add_option("--base-url", base_url_text_, "The base of the href of answers")
                    ->type_name("<url>")
                    ->group(group);
    now_ = app.add_option("--now", now_text_,
                          "Fixes the clock of token checks and timestamps (epoch seconds)")
               ->type_name("<epoch-seconds>")
               ->group(group);
  }

  // The options the flags say. Throws BadOption for a value the flag cannot take.
  Options options() const {
    Options o;
    auto& jwt = o.store.jwt;
    if (store_->count() > 0) {
      o.store_given = true;
      const std::string& v = store_text_;
      if (v == "memory") {
        o.lmdb_dir.reset();
      } else if (v.starts_with("lmdb:") && v.size() > 5) {
        o.lmdb_dir = v.substr(5);
      } else if (v.starts_with("postgresql:") && v.size() > 11) {
        o.postgres = v.substr(11);
      } else {
        throw BadOption{"--store: expected memory, lmdb:<dir> or postgresql:<conninfo>, not " + v};
      }
    }
#ifndef CATALOG_EXAMPLES_POSTGRES
    if (o.postgres)
      throw BadOption{"--store postgresql: this build has no PostgreSQL support (catalog::postgres "
                      "is built when libpq is found; Debian: libpq-dev)"};
#endif
    if (schema_.empty()) throw BadOption{"--postgres-schema needs a schema name"};
    o.postgres_schema = schema_;
    // The file's exact bytes are the secret: no trimming of a final newline. Each key is
    // checked alone, so that a refusal names its flag and file.
    using catalog::auth::JwtOptions;
    for (const auto& file : hs256_files_)
      jwt.hs256_keys.push_back(
          load_key(file, "--jwt-hs256-secret-file", "HS256 key 0", &JwtOptions::hs256_keys));
    for (const auto& file : rs256_files_)
      jwt.rs256_keys.push_back(
          load_key(file, "--jwt-rs256-public-key-file", "RS256 key 0", &JwtOptions::rs256_keys));
    if (issuer_->count() > 0) jwt.issuer = issuer_text_;
    if (audience_->count() > 0) jwt.audience = audience_text_;
    if (allow_no_exp_) jwt.allow_no_exp = true;
    if (leeway_->count() > 0)
      jwt.leeway_seconds =
          read_integer(leeway_text_, "--jwt-leeway", std::numeric_limits<std::int32_t>::max());
    if (!claims_.empty()) {
      for (const auto& claim : claims_)
        if (claim.empty()) throw BadOption{"--jwt-principal-claim needs a claim name"};
      jwt.principal_claims = claims_;  // replaces the defaults
    }
    for (const auto& name : admins_)
      if (name.empty()) throw BadOption{"--admin needs a user name"};
    o.store.admins = admins_;
    if (base_url_->count() > 0) o.store.base_url = base_url_text_;
    if (now_->count() > 0) {
      // Fixes the clock of token checks and timestamps: epoch seconds, kept in milliseconds.
      const std::int64_t ms =
          read_integer(now_text_, "--now", std::numeric_limits<std::int64_t>::max() / 1000) * 1000;
      o.store.clock = [ms] { return ms; };
    }
    return o;
  }

 private:
  CLI::Option* store_ = nullptr;
  CLI::Option* issuer_ = nullptr;
  CLI::Option* audience_ = nullptr;
  CLI::Option* leeway_ = nullptr;
  CLI::Option* base_url_ = nullptr;
  CLI::Option* now_ = nullptr;
  std::string store_text_;
  std::string schema_ = "catalog";
  // The key in `file`, given with `flag`, as a verifier with it alone in `keys` takes it; a
  // refusal names the flag and file in place of the verifier's `named` ("HS256 key 0").
  template <class Key>
  static Key load_key(const std::string& file, std::string_view flag, std::string_view named,
                      std::vector<Key> catalog::auth::JwtOptions::*keys) {
    Key key{read_file(file, flag), std::nullopt};
    catalog::auth::JwtOptions alone;
    (alone.*keys).push_back(key);
    auto verifier = catalog::auth::JwtVerifier::create(std::move(alone));
    if (verifier) return key;
    std::string why = verifier.error().message();
    if (why.starts_with(named)) why.erase(0, named.size());
    else why = ": " + why;
    throw BadOption{std::string(flag) + ": " + file + why};
  }

  std::vector<std::string> hs256_files_;
  std::vector<std::string> rs256_files_;
  std::string issuer_text_;
  std::string audience_text_;
  bool allow_no_exp_ = false;
  std::string leeway_text_;
  std::vector<std::string> claims_;
  std::vector<std::string> admins_;
  std::string base_url_text_;
  std::string now_text_;
};

// Whether standard error is systemd's journal: systemd names the stream it connects in
// JOURNAL_STREAM as `<device>:<inode>` (systemd.exec(5)), and a process whose stderr is still
// that stream may start each line with its priority (sd-daemon(3)).
inline bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct ::stat st{};
  if (stream == nullptr || ::fstat(STDERR_FILENO, &st) != 0) return false;
  return std::string_view(stream) ==
         std::to_string(static_cast<unsigned long long>(st.st_dev)) + ':' +
             std::to_string(static_cast<unsigned long long>(st.st_ino));
}

// What every tool does with what the store says of its own work (a store converted or indexed
// when opened, a map grown, retries, slow operations): each message at info level or above on
// stderr, after the tool's name. The sink is called from every thread that works
// (options.hpp, LogSink), so each line is one write of the whole line under a lock: lines of
// operations running at once never mix. When stderr is the journal, each line starts with its
// priority (<3> error, <4> warning, <6> info), so that the journal keeps the level
// (`journalctl -p warning`).
inline catalog::LogSink stderr_log(std::string program) {
  return [program = std::move(program), journal = stderr_is_journal()](
             catalog::LogLevel level, std::string_view message) {
    if (level < catalog::LogLevel::info) return;
    std::string line;
    line.reserve(program.size() + message.size() + 8);
    if (journal)
      line += level == catalog::LogLevel::error     ? "<3>"
              : level == catalog::LogLevel::warning ? "<4>"
                                                    : "<6>";
    line += program;
    line += ": ";
    line += message;
    line += '\n';
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    write_whole(STDERR_FILENO, line);
  };
}

// Opens the store the options name. Errors: storage, and the keys, leeway or admin names the
// store refuses (bad_request: report them as bad options, exit 2).
inline catalog::Result<catalog::Store> open_store(Options options) {
#ifdef CATALOG_EXAMPLES_POSTGRES
  if (options.postgres) {
    catalog::storage::PostgresOptions postgres;
    postgres.schema = options.postgres_schema;
    return catalog::open_postgres(*options.postgres, std::move(options.store), std::move(postgres));
  }
#endif
  return options.lmdb_dir ? catalog::Store::open_lmdb(*options.lmdb_dir, std::move(options.store))
                          : catalog::Store::in_memory(std::move(options.store));
}

// The store the options name, for messages: "memory", "LMDB in <dir>", "PostgreSQL schema <s>".
inline std::string describe_store(const Options& options) {
  if (options.postgres) return "PostgreSQL schema " + options.postgres_schema;
  if (options.lmdb_dir) return "LMDB in " + options.lmdb_dir->string();
  return "memory";
}

}  // namespace catalog_examples

#endif  // CATALOG_EXAMPLES_OPTIONS_HPP
