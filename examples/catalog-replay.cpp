// catalog-replay: the REST surface from the command line (REST.md). Reads one JSON request per
// line on standard input, answers each through catalog::rest::Api, and writes one JSON line per
// input line on standard output, flushed, in order:
//
//   in:  {"method": "PUT", "path": "/v1/mlmodels/<id>/followers", "headers": {...}, "body": ...}
//   out: {"status": 200, "headers": {"ETag": "\"0.2\"", ...}, "body": <JSON or null>}
//
// `body` is sent as its JSON text, `rawBody` as the string's bytes (for malformed input). The
// Api's JSON answer is copied verbatim (so versions stay 0.2); an answer that is not JSON is
// given as `rawBody`. A line that is not a valid request object is answered 400 BAD_REQUEST and
// the replay goes on; the exit status is 0 at the end of input, 2 for bad options.

#include <catalog/json.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/store.hpp>

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace bj = boost::json;

namespace {

constexpr std::string_view usage =
    "usage: catalog-replay [--store memory | --store lmdb:<dir>]\n"
    "                      [--jwt-hs256-secret-file <file>]... [--jwt-rs256-public-key-file "
    "<pem>]...\n"
    "                      [--jwt-issuer <iss>] [--jwt-audience <aud>] [--jwt-allow-no-exp]\n"
    "                      [--jwt-leeway <seconds>] [--jwt-principal-claim <claim>]...\n"
    "                      [--admin <name>]... [--base-url <url>] [--now <epoch-seconds>]\n"
    "Reads one JSON request per line on standard input; writes one JSON response per line.\n";

// A command line that cannot be used: the message goes to stderr and the exit status is 2.
struct BadOption {
  std::string message;
};

struct Options {
  std::optional<std::filesystem::path> lmdb_dir;  // nullopt: memory
  catalog::StoreOptions store;
};

std::string read_file(const std::string& path, std::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadOption{std::string(flag) + ": cannot read " + path};
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadOption{std::string(flag) + ": cannot read " + path};
  return bytes;
}

// A non-negative decimal integer no larger than `max`.
std::int64_t read_integer(std::string_view text, std::string_view flag, std::int64_t max) {
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

Options parse_options(int argc, char** argv) {
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
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw BadOption{std::string(arg) + " needs a value"};
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (arg == "--store") {
      once(arg);
      auto v = value();
      if (v == "memory") {
        o.lmdb_dir.reset();
      } else if (v.starts_with("lmdb:") && v.size() > 5) {
        o.lmdb_dir = v.substr(5);
      } else {
        throw BadOption{"--store: expected memory or lmdb:<dir>, not " + v};
      }
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
    } else {
      throw BadOption{"unknown option " + std::string(arg)};
    }
  }
  return o;
}

// ---- one line ----

std::string bad_line(std::string_view message) {
  bj::value body(bj::object_kind);
  auto& o = body.as_object();
  o["code"] = 400;
  o["errorType"] = "BAD_REQUEST";
  o["message"] = message;
  return R"({"status":400,"body":)" + catalog::json::serialize(body) + "}";
}

// The request a line describes, or a message saying why it describes none.
std::variant<catalog::rest::Request, std::string> read_request(std::string_view line) {
  // Bodies are checked by the Api with its own depth limit, so the line itself may be deeper.
  auto parsed = catalog::json::parse(line, {catalog::json::max_parse_depth});
  if (!parsed) return "Invalid request line: " + parsed.error().message();
  const auto* o = parsed->if_object();
  if (!o) return std::string("Invalid request line: expected a JSON object");
  catalog::rest::Request request;
  for (const auto& member : *o) {
    std::string_view key(member.key().data(), member.key().size());
    const bj::value& v = member.value();
    if (key == "method" || key == "path" || key == "rawBody") {
      const auto* s = v.if_string();
      if (!s) return "Invalid request line: " + std::string(key) + " must be a string";
      std::string text(s->data(), s->size());
      if (key == "method")
        request.method = std::move(text);
      else if (key == "path")
        request.target = std::move(text);
      else
        request.body = std::move(text);
    } else if (key == "headers") {
      const auto* h = v.if_object();
      if (!h) return std::string("Invalid request line: headers must be an object");
      for (const auto& header : *h) {
        const auto* value = header.value().if_string();
        if (!value)
          return "Invalid request line: header " + std::string(header.key()) + " must be a string";
        request.headers.emplace_back(std::string(header.key()),
                                     std::string(value->data(), value->size()));
      }
    } else if (key == "body") {
      request.body = catalog::json::serialize(v);
    } else {
      return "Invalid request line: unknown member " + std::string(key);
    }
  }
  if (!o->contains("method")) return std::string("Invalid request line: method is missing");
  if (!o->contains("path")) return std::string("Invalid request line: path is missing");
  if (o->contains("body") && o->contains("rawBody"))
    return std::string("Invalid request line: body and rawBody are exclusive");
  return request;
}

std::string write_response(const catalog::rest::Response& response) {
  bj::object headers;
  for (const auto& [name, value] : response.headers) headers[name] = value;
  std::string line = R"({"status":)" + std::to_string(response.status) + R"(,"headers":)" +
                     catalog::json::serialize(bj::value(std::move(headers)));
  if (response.body.empty()) return line + R"(,"body":null})";
  auto json = catalog::json::parse(response.body, {catalog::json::max_parse_depth});
  if (!json)
    return line + R"(,"rawBody":)" + catalog::json::serialize(bj::string(response.body)) + "}";
  // Verbatim keeps the Api's number text; a (never produced) multi-line body is re-serialized
  // so that the output stays one line per request.
  bool one_line = response.body.find_first_of("\r\n") == std::string::npos;
  return line + R"(,"body":)" + (one_line ? response.body : catalog::json::serialize(*json)) + "}";
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const BadOption& bad) {
    std::cerr << "catalog-replay: " << bad.message << '\n' << usage;
    return 2;
  }

  auto store = options.lmdb_dir
                   ? catalog::Store::open_lmdb(*options.lmdb_dir, std::move(options.store))
                   : catalog::Store::in_memory(std::move(options.store));
  if (!store) {
    std::cerr << "catalog-replay: cannot open the store: " << store.error() << '\n';
    // Keys, leeway or admin names the store refuses are bad options too.
    return store.error().kind() == catalog::ErrorKind::bad_request ? 2 : 1;
  }
  catalog::rest::Api api(*store);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::string out;
    try {
      auto request = read_request(line);
      if (auto* message = std::get_if<std::string>(&request))
        out = bad_line(*message);
      else
        out = write_response(api.handle(std::get<catalog::rest::Request>(request)));
    } catch (const std::exception& e) {
      out = bad_line(std::string("Request not handled: ") + e.what());
    }
    std::cout << out << '\n' << std::flush;
  }
  return 0;
}
