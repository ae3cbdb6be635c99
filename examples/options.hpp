#ifndef CATALOG_EXAMPLES_OPTIONS_HPP
#define CATALOG_EXAMPLES_OPTIONS_HPP

// The command line shared by catalog-replay and catalog-serve (docs/REST.md): which store, which
// token keys and claims, which admins, which clock. A program adds its own flags (catalog-serve's
// `--port`) through `extra`.
//
//   [--store memory | --store lmdb:<dir> | --store postgresql:<conninfo>]
//   [--postgres-schema <name>]
//   [--jwt-hs256-secret-file <file>]... [--jwt-rs256-public-key-file <pem>]...
//   [--jwt-issuer <iss>] [--jwt-audience <aud>] [--jwt-allow-no-exp]
//   [--jwt-leeway <seconds>] [--jwt-principal-claim <claim>]...
//   [--admin <name>]... [--base-url <url>] [--now <epoch-seconds>]
//
// `--flag value` and `--flag=value` both work; single-valued flags may be given once.
// `postgresql:<conninfo>` is libpq's (keywords such as "host=db.example port=5432 dbname=meta
// user=catalog", or a postgresql:// URI); `--postgres-schema` names the schema of the catalog in
// that database (default "catalog"). PostgreSQL needs a build with catalog::postgres (libpq).

#include <catalog/store.hpp>
#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/postgres.hpp>
#endif

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog_examples {

// A command line that cannot be used: the message goes to stderr and the exit status is 2.
struct BadOption {
  std::string message;
};

struct Options {
  bool store_given = false;                       // --store was on the command line
  std::optional<std::filesystem::path> lmdb_dir;  // nullopt: memory (or PostgreSQL)
  std::optional<std::string> postgres;            // the conninfo of --store postgresql:
  std::string postgres_schema = "catalog";
  catalog::StoreOptions store;
};

// Returns the value of the flag being parsed (throws BadOption when there is none).
using OptionValue = std::function<std::string()>;
// A program's own flags: handles `flag` (taking its value from `value`) and returns true, or
// returns false for a flag it does not know either.
using ExtraOption = std::function<bool(std::string_view flag, const OptionValue& value)>;

// The bytes of the regular file `path` (a directory or a device is a bad option, not a read
// that throws from inside the stream).
inline std::string read_file(const std::string& path, std::string_view flag) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw BadOption{std::string(flag) + ": cannot read " + path + ": " + ec.message()};
  if (!std::filesystem::is_regular_file(status))
    throw BadOption{std::string(flag) + ": " + path + " is not a file"};
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw BadOption{std::string(flag) + ": cannot read " + path};
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw BadOption{std::string(flag) + ": cannot read " + path};
    return bytes;
  } catch (const std::ios_base::failure& e) {
    throw BadOption{std::string(flag) + ": cannot read " + path};
  }
}

// A non-negative decimal integer no larger than `max`.
inline std::int64_t read_integer(std::string_view text, std::string_view flag, std::int64_t max) {
  if (text.empty()) throw BadOption{std::string(flag) + " needs a non-negative integer"};
  std::int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > (max - (c - '0')) / 10)
      throw BadOption{std::string(flag) + ": " + std::string(text) +
                      " is not an integer from 0 to " + std::to_string(max)};
    n = n * 10 + (c - '0');
  }
  return n;
}

// `--version`: the program's name and the version of the library it runs, as
// `catalog-serve 0.1.0`.
inline void print_version(const char* argv0) {
  std::cout << std::filesystem::path(argv0).filename().string() << ' '
            << catalog::library_version_string() << '\n';
}

// Parses argv[1..argc). `--help` prints `usage` and `--version` the version, and each exits 0.
// Throws BadOption.
inline Options parse_options(int argc, char** argv, std::string_view usage,
                             const ExtraOption& extra = {}) {
  Options o;
  auto& jwt = o.store.jwt;
  bool claims_given = false;
  std::vector<std::string> seen;  // single-valued flags already given
  auto once = [&](std::string_view flag) {
    for (const auto& s : seen)
      if (s == flag) throw BadOption{std::string(flag) + " given more than once"};
    seen.emplace_back(flag);
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::optional<std::string> inline_value;  // --flag=value
    if (auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = std::string(arg.substr(eq + 1));
      arg = arg.substr(0, eq);
    }
    OptionValue value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw BadOption{std::string(arg) + " needs a value"};
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (arg == "--version") {
      print_version(argv[0]);
      std::exit(0);
    } else if (arg == "--store") {
      once(arg);
      auto v = value();
      o.store_given = true;
      if (v == "memory") {
        o.lmdb_dir.reset();
      } else if (v.starts_with("lmdb:") && v.size() > 5) {
        o.lmdb_dir = v.substr(5);
      } else if (v.starts_with("postgresql:") && v.size() > 11) {
        o.postgres = v.substr(11);
      } else {
        throw BadOption{"--store: expected memory, lmdb:<dir> or postgresql:<conninfo>, not " + v};
      }
    } else if (arg == "--postgres-schema") {
      once(arg);
      o.postgres_schema = value();
      if (o.postgres_schema.empty()) throw BadOption{"--postgres-schema needs a schema name"};
    } else if (arg == "--jwt-hs256-secret-file") {
      // The file's exact bytes are the secret: no trimming of a final newline.
      jwt.hs256_keys.push_back({read_file(value(), arg), std::nullopt});
    } else if (arg == "--jwt-rs256-public-key-file") {
      jwt.rs256_keys.push_back({read_file(value(), arg), std::nullopt});
    } else if (arg == "--jwt-issuer") {
      once(arg);
      jwt.issuer = value();
    } else if (arg == "--jwt-audience") {
      once(arg);
      jwt.audience = value();
    } else if (arg == "--jwt-allow-no-exp") {
      if (inline_value) throw BadOption{"--jwt-allow-no-exp takes no value"};
      jwt.allow_no_exp = true;
    } else if (arg == "--jwt-leeway") {
      once(arg);
      jwt.leeway_seconds = read_integer(value(), arg, std::numeric_limits<std::int32_t>::max());
    } else if (arg == "--jwt-principal-claim") {
      if (!claims_given) jwt.principal_claims.clear();  // the first one replaces the defaults
      claims_given = true;
      auto claim = value();
      if (claim.empty()) throw BadOption{"--jwt-principal-claim needs a claim name"};
      jwt.principal_claims.push_back(std::move(claim));
    } else if (arg == "--admin") {
      auto name = value();
      if (name.empty()) throw BadOption{"--admin needs a user name"};
      o.store.admins.push_back(std::move(name));
    } else if (arg == "--base-url") {
      once(arg);
      o.store.base_url = value();
    } else if (arg == "--now") {
      once(arg);
      // Fixes the clock of token checks and timestamps: epoch seconds, kept in milliseconds.
      const std::int64_t ms =
          read_integer(value(), arg, std::numeric_limits<std::int64_t>::max() / 1000) * 1000;
      o.store.clock = [ms] { return ms; };
    } else if (!extra || !extra(arg, value)) {
      throw BadOption{"unknown option " + std::string(arg)};
    } else {
      once(arg);  // a program's own flags are single-valued
    }
  }
#ifndef CATALOG_EXAMPLES_POSTGRES
  if (o.postgres)
    throw BadOption{"--store postgresql: this build has no PostgreSQL support (catalog::postgres "
                    "is built when libpq is found; Debian: libpq-dev)"};
#endif
  return o;
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
