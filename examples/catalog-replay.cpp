// catalog-replay: the REST surface from the command line (docs/REST.md). Reads one JSON request per
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

#include "options.hpp"

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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
  CLI::App app("Answers REST requests read one JSON object per line on standard input, one JSON "
               "response per line on standard output (docs/REST.md).",
               "catalog-replay");
  catalog_examples::add_standard_flags(app);
  catalog_examples::StoreFlags flags(app);
  catalog_examples::Options options;
  if (auto status = catalog_examples::parse(app, argc, argv, [&] { options = flags.options(); }))
    return *status;

  options.store.log = catalog_examples::stderr_log("catalog-replay");  // stdout is the answers'
  auto store = catalog_examples::open_store(std::move(options));
  if (!store) {
    // Keys, leeway or admin names the store refuses are bad options too.
    if (store.error().kind() == catalog::ErrorKind::bad_request) {
      return catalog_examples::bad_usage("catalog-replay", store.error().message());
    }
    std::cerr << "catalog-replay: cannot open the store: " << store.error().message() << '\n';
    return 1;
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
    // An answer that cannot be written (a full disk, a closed pipe) ends the replay: its
    // request was carried out, and whoever reads the answers must not miss that one was lost.
    if (!std::cout) {
      std::cerr << "catalog-replay: cannot write the answer to standard output ("
                << std::strerror(errno) << "); stopped\n";
      return 1;
    }
  }
  return 0;
}
