#include <catalog/detail/base64url.hpp>
#include <catalog/json.hpp>
#include <catalog/json_patch.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bj = boost::json;
namespace cj = catalog::json;
using catalog::Errc;

namespace {

std::string read_vectors(const std::string& name) {
  std::ifstream in(std::string(CATALOG_VECTORS_DIR) + "/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses test input that is known to be good; failures show the message.
bj::value must_parse(std::string_view text) {
  auto r = cj::parse(text);
  INFO(text);
  if (!r) FAIL(r.error().message());
  return *r;
}

// The error code of a parse that must fail.
Errc parse_error(std::string_view text, catalog::json::ParseOptions options = {}) {
  auto r = cj::parse(text, options);
  INFO(text);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind() == catalog::ErrorKind::bad_request);
  return r.error().code();
}

std::string parse_message(std::string_view text) {
  auto r = cj::parse(text);
  REQUIRE_FALSE(r.has_value());
  return r.error().message();
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// parse

TEST_CASE("parse accepts ordinary JSON", "[json][parse]") {
  auto v = must_parse(R"( {"a": [1, -2, 3.5, true, false, null, "x"], "b": {"c": {}}} )");
  CHECK(v.at("a").at(0).as_int64() == 1);
  CHECK(v.at("a").at(1).as_int64() == -2);
  CHECK(v.at("a").at(2).as_double() == 3.5);
  CHECK(v.at("b").at("c").as_object().empty());
  CHECK(must_parse("18446744073709551615").as_uint64() == UINT64_MAX);
  CHECK(must_parse("-9223372036854775808").as_int64() == INT64_MIN);
  CHECK(must_parse("\"caf\xC3\xA9 \xF0\x9F\x98\x80\"").as_string() ==
        "caf\xC3\xA9 \xF0\x9F\x98\x80");
  CHECK(must_parse("0.1").as_double() == 0.1);
}

TEST_CASE("parse refuses duplicate member names at any depth", "[json][parse]") {
  CHECK(parse_error(R"({"a":1,"a":2})") == Errc::duplicate_member);
  CHECK(parse_error(R"({"a":1,"b":2,"a":1})") == Errc::duplicate_member);
  CHECK(parse_error(R"({"x":[{"b":1,"c":2,"b":3}]})") == Errc::duplicate_member);
  CHECK(parse_error(R"([[[{"k":{"z":null,"z":null}}]]])") == Errc::duplicate_member);
  // Names compare after unescaping.
  CHECK(parse_error(R"({"a":1,"\u0061":2})") == Errc::duplicate_member);
  CHECK(parse_message(R"({"x":{"a\"b":1,"a\"b":2}})") == R"(duplicate member name "a\"b")");

  // The same name in different objects, or after the object closed, is fine.
  auto v = must_parse(R"({"a":{"a":1,"b":{"a":2}},"b":[{"a":3},{"a":4}],"c":{"a":5}})");
  CHECK(v.at("c").at("a").as_int64() == 5);
  // Names differing only in case are different names.
  CHECK(must_parse(R"({"a":1,"A":2})").as_object().size() == 2);
}

TEST_CASE("parse refuses the dup_claim_sub token payload", "[json][parse][jwt]") {
  // jwt-rfc-examples.md, family "duplicate keys": "sub" alice then admin. A parser keeping the
  // last member would authenticate the token as admin.
  std::string payload = R"({"iss":"catalog","sub":"alice","sub":"admin","exp":4102444800})";
  auto segment = catalog::detail::base64url_encode(payload, catalog::detail::Padding::none);
  auto bytes = catalog::detail::base64url_decode(segment, catalog::detail::Padding::none);
  REQUIRE(bytes);
  auto r = cj::parse(*bytes);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::duplicate_member);
  CHECK(r.error().message() == R"(duplicate member name "sub")");
  // Boost.JSON's own parser silently keeps the last one: this is why parse exists.
  CHECK(bj::parse(*bytes).at("sub").as_string() == "admin");
}

TEST_CASE("parse limits nesting depth", "[json][parse]") {
  must_parse(nested_arrays(64));
  CHECK(parse_error(nested_arrays(65)) == Errc::too_deep);
  CHECK(parse_message(nested_arrays(65)) == "JSON nesting deeper than 64");

  std::string objects;
  for (int i = 0; i < 64; ++i) objects += R"({"a":)";
  must_parse(objects + "1" + std::string(64, '}'));
  CHECK(parse_error(R"({"a":)" + objects + "1" + std::string(65, '}')) == Errc::too_deep);

  catalog::json::ParseOptions deeper;
  deeper.max_depth = 200;
  CHECK(cj::parse(nested_arrays(200), deeper).has_value());
  CHECK(parse_error(nested_arrays(201), deeper) == Errc::too_deep);

  // Asking for more than max_parse_depth gets max_parse_depth: deeper would risk the stack.
  catalog::json::ParseOptions unlimited;
  unlimited.max_depth = std::numeric_limits<std::size_t>::max();
  CHECK(cj::parse(nested_arrays(cj::max_parse_depth), unlimited).has_value());
  CHECK(parse_error(nested_arrays(cj::max_parse_depth + 1), unlimited) == Errc::too_deep);
  CHECK(parse_error(nested_arrays(100000), unlimited) == Errc::too_deep);
}

TEST_CASE("parse survives hostile nesting without recursion", "[json][parse]") {
  CHECK(parse_error(std::string(100000, '[')) == Errc::too_deep);
  CHECK(parse_error(nested_arrays(100000)) == Errc::too_deep);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  CHECK(parse_error(objects) == Errc::too_deep);
}

TEST_CASE("parse refuses bytes that are not UTF-8", "[json][parse]") {
  for (std::string bad : {
           "\"\xFF\"",              // never valid
           "\"ab\xC3\"",            // truncated sequence
           "\"\xC0\x80\"",          // overlong NUL
           "\"\xE0\x80\xAF\"",      // overlong '/'
           "\"\xED\xA0\x80\"",      // an encoded surrogate
           "\"\xF4\x90\x80\x80\"",  // above U+10FFFF
           "\"\x80\"",              // lone continuation byte
           "{\"k\xFF\":1}",         // in a key
           "[\xFF]",                // outside a string
       }) {
    CHECK(parse_error(bad) == Errc::invalid_json);
  }
  CHECK(parse_message("[\"ab\xFF\"]") == "invalid or misplaced UTF-8 at byte 4");
}

TEST_CASE("parse refuses unpaired surrogate escapes", "[json][parse]") {
  std::string padding(40, ' ');  // Boost.JSON takes a different code path with more input left
  for (std::string bad : {
           R"("\ud800")",  // lone high at the end
           R"("\udbff")",
           R"("\udc00")",  // lone low
           R"("\udfff")",
           R"("\ud800x")",       // high then a character
           R"("\ud800\n")",      // high then another escape
           R"("\ud800\u0041")",  // high then a non-surrogate escape
           R"("\ud800\ud800")",  // high then high
           R"("\udc00\ud800")",  // reversed pair
           R"({"\ud800":1})",    // in a key
       }) {
    CHECK(parse_error(bad) == Errc::invalid_json);
    CHECK(parse_error("[" + bad + padding + "]") == Errc::invalid_json);
    auto message = parse_message("[" + bad + padding + "]");
    INFO(bad);
    CHECK(message.find("unpaired UTF-16 surrogate escape") != std::string::npos);
  }
  // A proper pair is U+1F600; an escaped backslash before "ud800" is no escape at all.
  CHECK(must_parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");
  CHECK(must_parse(R"("\uD83D\uDE00")").as_string() == "\xF0\x9F\x98\x80");
  CHECK(must_parse(R"("\\ud800")").as_string() == "\\ud800");
}

TEST_CASE("parse refuses empty input, trailing garbage, a BOM and non-JSON", "[json][parse]") {
  CHECK(parse_error("") == Errc::invalid_json);
  CHECK(parse_error(" \n\t ") == Errc::invalid_json);
  CHECK(parse_message("") == "empty JSON text");
  CHECK(parse_error("{} x") == Errc::invalid_json);
  CHECK(parse_error("[1]]") == Errc::invalid_json);
  CHECK(parse_error("1 2") == Errc::invalid_json);
  CHECK(parse_error(std::string("{}\0", 3)) == Errc::invalid_json);
  CHECK(parse_message("{} x") == "unexpected text after the JSON value at byte 3");
  CHECK(must_parse("{} \r\n\t").is_object());

  CHECK(parse_error("\xEF\xBB\xBF{}") == Errc::invalid_json);
  CHECK(parse_message("\xEF\xBB\xBF{}") == "JSON text must not start with a byte order mark");

  for (std::string bad : {"{", "[1,]", "{\"a\":1,}", "// c\n1", "'a'", "NaN", "Infinity", "01",
                          "1.", ".5", "+1", "{a:1}", "\"\t\""}) {
    CHECK(parse_error(bad) == Errc::invalid_json);
  }
  // Boost.JSON reads 1e400 as infinity; I-JSON numbers are finite.
  CHECK(parse_error("1e400") == Errc::invalid_json);
  CHECK(parse_error("[-1e400]") == Errc::invalid_json);
  CHECK(parse_message("1e400") == "number 1e400 is out of range");
}

TEST_CASE("parse rounds numbers correctly", "[json][parse]") {
  // Boost.JSON 1.81 reads this one unit in the last place off; parse must not.
  double expected = 0;
  std::string text = "13.387664401253275";
  std::from_chars(text.data(), text.data() + text.size(), expected);
  CHECK(bj::parse(text).as_double() != expected);
  CHECK(must_parse(text).as_double() == expected);
  // DBL_MAX written plainly, which Boost reads as infinity.
  auto max = must_parse(cj::serialize(bj::value(std::numeric_limits<double>::max())));
  CHECK(max.as_double() == std::numeric_limits<double>::max());
  // Underflow is zero, keeping the sign.
  CHECK(must_parse("1e-400").as_double() == 0.0);
  CHECK(std::signbit(must_parse("-1e-400").as_double()));
  CHECK(must_parse("4.9406564584124654e-324").as_double() ==
        std::numeric_limits<double>::denorm_min());
  // Integers beyond 64 bits become the nearest double.
  CHECK(must_parse("18446744073709551616").as_double() == 0x1p64);
  CHECK(must_parse("-9223372036854775809").as_double() == -0x1p63);
}

TEST_CASE("the json-patch-tests file itself has a duplicate member", "[json][parse]") {
  // Its disabled "duplicate ops" record names "op" twice: strict parsing must see it.
  auto r = cj::parse(read_vectors("json-patch-tests.json"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::duplicate_member);
  CHECK(r.error().message() == R"(duplicate member name "op")");
}

// ---------------------------------------------------------------------------------------------
// serialize

TEST_CASE("serialize writes decimals plainly", "[json][serialize]") {
  CHECK(cj::serialize(bj::value(0.1)) == "0.1");
  CHECK(cj::serialize(bj::value(1.3)) == "1.3");
  CHECK(cj::serialize(bj::value(12.0)) == "12.0");
  CHECK(cj::serialize(bj::value(0.0)) == "0.0");
  CHECK(cj::serialize(bj::value(-0.5)) == "-0.5");
  CHECK(cj::serialize(bj::value(1e21)) == "1000000000000000000000.0");
  CHECK(cj::serialize(bj::value(0.000123)) == "0.000123");
  CHECK(cj::serialize(must_parse("[0.1,1.3,12.0,2.5e-3]")) == "[0.1,1.3,12.0,0.0025]");
  CHECK(cj::serialize(bj::value(std::numeric_limits<double>::quiet_NaN())) == "null");
  CHECK(cj::serialize(bj::value(std::numeric_limits<double>::infinity())) == "null");
  CHECK(cj::serialize(bj::value(-std::numeric_limits<double>::infinity())) == "null");
}

TEST_CASE("serialize writes doubles that read back exactly", "[json][serialize]") {
  std::mt19937_64 random(20240601);
  std::vector<double> samples = {std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::min(),
                                 std::numeric_limits<double>::denorm_min(),
                                 -std::numeric_limits<double>::max(), 0.30000000000000004};
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = random();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isfinite(d)) samples.push_back(d);
  }
  for (double d : samples) {
    auto text = cj::serialize(bj::value(d));
    INFO(text);
    CHECK(text.find_first_of("eE") == std::string::npos);
    CHECK(text.find('.') != std::string::npos);
    auto back = must_parse(text);
    REQUIRE(back.is_double());
    CHECK(back.as_double() == d);
  }
}

TEST_CASE("serialize writes integers, strings and containers", "[json][serialize]") {
  CHECK(cj::serialize(bj::value(INT64_MIN)) == "-9223372036854775808");
  CHECK(cj::serialize(bj::value(INT64_MAX)) == "9223372036854775807");
  CHECK(cj::serialize(bj::value(UINT64_MAX)) == "18446744073709551615");
  CHECK(cj::serialize(bj::value(0)) == "0");
  CHECK(cj::serialize(bj::value(nullptr)) == "null");
  CHECK(cj::serialize(bj::value(true)) == "true");

  CHECK(cj::serialize(bj::value(std::string("q\"b\\n\n\r\t\x01/\xC3\xA9"))) ==
        R"("q\"b\\n\n\r\t\u0001/)"
        "\xC3\xA9\"");
  CHECK(cj::serialize(bj::value(std::string("\x7F\x1F"))) == "\"\x7F\\u001f\"");

  CHECK(cj::serialize(bj::array{}) == "[]");
  CHECK(cj::serialize(bj::object{}) == "{}");
  std::string text = R"({"a":[1,{"b":null,"c\n":[[],{}]}],"d":true,"e":"x","f":-1.25})";
  CHECK(cj::serialize(must_parse(text)) == text);
  CHECK(cj::serialize(must_parse(" { \"a\" : [ 1 , 2 ] } ")) == R"({"a":[1,2]})");
  // Long strings go through the serializer in several chunks.
  std::string long_text(1000, 'x');
  long_text += "\"";
  CHECK(cj::serialize(bj::value(long_text)) == "\"" + std::string(1000, 'x') + "\\\"\"");
}

// ---------------------------------------------------------------------------------------------
// merge_patch

TEST_CASE("merge_patch passes every RFC 7396 example", "[json][merge_patch]") {
  auto records = must_parse(read_vectors("rfc7386-examples.json")).as_array();
  std::size_t passed = 0;
  for (const auto& record : records) {
    const auto& r = record.as_object();
    INFO(cj::serialize(record));
    bool ok = cj::merge_patch(r.at("original"), r.at("patch")) == r.at("result");
    CHECK(ok);
    if (ok) ++passed;
  }
  std::cout << "rfc7386-examples.json: " << passed << " of " << records.size() << " passed\n";
  CHECK(passed == records.size());
}

TEST_CASE("merge_patch details", "[json][merge_patch]") {
  // Keeps member order of the target (stable erase), adds new members at the end.
  auto result =
      cj::merge_patch(must_parse(R"({"a":1,"b":2,"c":3})"), must_parse(R"({"a":null,"d":4})"));
  CHECK(cj::serialize(result) == R"({"b":2,"c":3,"d":4})");
  // Removing a member that is not there changes nothing.
  CHECK(cj::merge_patch(must_parse(R"({"a":1})"), must_parse(R"({"x":null})")) ==
        must_parse(R"({"a":1})"));
  // Arrays are replaced whole, nulls inside them kept.
  CHECK(cj::merge_patch(must_parse(R"({"a":[1]})"), must_parse(R"({"a":[null]})")) ==
        must_parse(R"({"a":[null]})"));
}

// ---------------------------------------------------------------------------------------------
// apply_json_patch

namespace {

struct SuiteCounts {
  std::size_t passed = 0;
  std::size_t skipped = 0;
  std::size_t total = 0;
};

SuiteCounts run_json_patch_suite(const std::string& name) {
  // Boost's lenient parser: the suite has a disabled record that repeats "op" on purpose.
  auto records = bj::parse(read_vectors(name)).as_array();
  SuiteCounts counts;
  for (const auto& record : records) {
    ++counts.total;
    const auto& r = record.as_object();
    auto disabled = r.if_contains("disabled");
    if ((disabled && disabled->is_bool() && disabled->get_bool()) || !r.contains("doc")) {
      ++counts.skipped;
      continue;
    }
    INFO(name << ": " << cj::serialize(record));
    auto result = cj::apply_json_patch(r.at("doc"), r.at("patch"));
    bool ok = false;
    if (const auto* expected = r.if_contains("expected")) {
      ok = result && *result == *expected;
    } else if (r.contains("error")) {
      ok = !result && result.error().code() == Errc::invalid_patch;
    } else {
      ok = result.has_value();  // only doc and patch: the patch must apply
    }
    if (!ok && result) UNSCOPED_INFO("result: " << cj::serialize(*result));
    if (!ok && !result) UNSCOPED_INFO("error: " << result.error().message());
    CHECK(ok);
    if (ok) ++counts.passed;
  }
  std::cout << name << ": " << counts.passed << " passed, " << counts.skipped << " skipped, of "
            << counts.total << " records\n";
  return counts;
}

// Applies `patch` to `doc` and returns the message of the failure it must cause.
std::string patch_error(std::string_view doc, std::string_view patch) {
  auto r = cj::apply_json_patch(must_parse(doc), must_parse(patch));
  INFO(doc << " " << patch);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::invalid_patch);
  CHECK(r.error().kind() == catalog::ErrorKind::bad_request);
  return r.error().message();
}

bj::value patched(std::string_view doc, std::string_view patch) {
  auto r = cj::apply_json_patch(must_parse(doc), must_parse(patch));
  INFO(doc << " " << patch);
  if (!r) FAIL(r.error().message());
  return *r;
}

}  // namespace

TEST_CASE("apply_json_patch passes json-patch-tests.json", "[json][json_patch]") {
  auto counts = run_json_patch_suite("json-patch-tests.json");
  CHECK(counts.passed + counts.skipped == counts.total);
  CHECK(counts.skipped == 3);
}

TEST_CASE("apply_json_patch passes json-patch-spec-tests.json", "[json][json_patch]") {
  auto counts = run_json_patch_suite("json-patch-spec-tests.json");
  CHECK(counts.passed + counts.skipped == counts.total);
  CHECK(counts.skipped == 1);
}

TEST_CASE("apply_json_patch refuses malformed patches", "[json][json_patch]") {
  CHECK(patch_error("{}", R"({"op":"add","path":"/a","value":1})") ==
        "a JSON Patch must be an array");
  CHECK(patch_error("{}", "[1]") == "JSON Patch operation 0: must be an object");
  CHECK(patch_error("{}", R"([{"path":"/a","value":1}])") ==
        R"(JSON Patch operation 0: missing member "op")");
  CHECK(patch_error("{}", R"([{"op":1,"path":"/a","value":1}])") ==
        R"(JSON Patch operation 0: member "op" must be a string)");
  CHECK(patch_error("{}", R"([{"op":"add","value":1}])") ==
        R"(JSON Patch operation 0: missing member "path")");
  CHECK(patch_error("{}", R"([{"op":"add","path":["/a"],"value":1}])") ==
        R"(JSON Patch operation 0: member "path" must be a string)");
  CHECK(patch_error("{}", R"([{"op":"test","path":"","value":{}},{"op":"ADD","path":"/a"}])") ==
        R"(JSON Patch operation 1 (ADD "/a"): unknown op "ADD")");
  CHECK(patch_error("{}", R"([{"op":"add","path":"/a"}])") ==
        R"(JSON Patch operation 0 (add "/a"): missing member "value")");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"move","path":"/b","from":7}])") ==
        R"(JSON Patch operation 0 (move "/b"): member "from" must be a string)");
  CHECK(patch_error(R"({"a":1})", R"([{"op":"copy","path":"/b"}])") ==
        R"(JSON Patch operation 0 (copy "/b"): missing member "from")");
}

TEST_CASE("apply_json_patch follows RFC 6901 pointers strictly", "[json][json_patch]") {
  CHECK(patch_error("{}", R"([{"op":"add","path":"a","value":1}])") ==
        R"(JSON Patch operation 0 (add "a"): JSON Pointer "a" must start with '/')");
  patch_error(R"({"a~":1})", R"([{"op":"test","path":"/a~","value":1}])");
  patch_error(R"({"a~2":1})", R"([{"op":"test","path":"/a~2","value":1}])");
  patch_error(R"({"a":1})", R"([{"op":"move","from":"a","path":"/b"}])");
  // ~01 is "~1", not "/": ~1 is unescaped after ~0 would be wrong.
  CHECK(patched(R"({"~1":1,"/":2})", R"([{"op":"remove","path":"/~01"}])") ==
        must_parse(R"({"/":2})"));
  CHECK(patched(R"({"a/b":{"c~d":1}})", R"([{"op":"replace","path":"/a~1b/c~0d","value":2}])") ==
        must_parse(R"({"a/b":{"c~d":2}})"));

  // Array indices: no leading zeros, no signs, within bounds; "-" only where add appends.
  patch_error("[1,2]", R"([{"op":"test","path":"/01","value":2}])");
  patch_error("[1,2]", R"([{"op":"test","path":"/+1","value":2}])");
  patch_error("[1,2]", R"([{"op":"test","path":"/ 1","value":2}])");
  patch_error("[1,2]", R"([{"op":"test","path":"/2","value":2}])");
  patch_error("[1,2]", R"([{"op":"test","path":"/-","value":2}])");
  patch_error("[1,2]", R"([{"op":"remove","path":"/-"}])");
  patch_error("[1,2]", R"([{"op":"replace","path":"/-","value":0}])");
  patch_error("[1,2]", R"([{"op":"add","path":"/99999999999999999999999","value":0}])");
  patch_error("[[1]]", R"([{"op":"test","path":"//0","value":1}])");  // Boost's find_pointer says 1
  patch_error("[1,2]", R"([{"op":"add","path":"/-/0","value":0}])");
  patch_error(R"({"a":1})", R"([{"op":"add","path":"/a/b","value":0}])");
  CHECK(patched("[1,2]", R"([{"op":"add","path":"/2","value":3}])") == must_parse("[1,2,3]"));
  CHECK(patched("[[1],2]", R"([{"op":"add","path":"/0/-","value":3}])") == must_parse("[[1,3],2]"));
  CHECK(patched(R"({"-":1})", R"([{"op":"test","path":"/-","value":1}])") ==
        must_parse(R"({"-":1})"));

  CHECK(patch_error(R"({"a":{"b":1}})", R"([{"op":"remove","path":"/a/c"}])") ==
        R"(JSON Patch operation 0 (remove "/a/c"): member "c" does not exist)");
  CHECK(patch_error("[1,2]", R"([{"op":"remove","path":"/5"}])") ==
        R"(JSON Patch operation 0 (remove "/5"): array index 5 is out of bounds (size 2))");
}

TEST_CASE("apply_json_patch move, copy and test", "[json][json_patch]") {
  CHECK(patch_error(R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a/c"}])") ==
        R"(JSON Patch operation 0 (move "/a/c"): cannot move "/a" into one of its own children)");
  patch_error(R"({"a":{"b":{}}})", R"([{"op":"move","from":"/a","path":"/a/b/c"}])");
  patch_error(R"({"a":1})", R"([{"op":"move","from":"","path":"/b"}])");
  // "/ab" is not a child of "/a": prefixes count whole tokens.
  CHECK(patched(R"({"a":1,"ab":{}})", R"([{"op":"move","from":"/a","path":"/ab/x"}])") ==
        must_parse(R"({"ab":{"x":1}})"));
  // Copying into one's own child is fine: the copy is taken first.
  CHECK(patched(R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/a/c"}])") ==
        must_parse(R"({"a":{"b":1,"c":{"b":1}}})"));
  CHECK(patched(R"([1,2,3])", R"([{"op":"move","from":"/0","path":"/-"}])") ==
        must_parse("[2,3,1]"));
  patch_error(R"({"a":1})", R"([{"op":"move","from":"/x","path":"/x"}])");

  // RFC 6902 4.6: numbers compare by value, objects ignore order, arrays do not.
  patched(R"({"n":1})", R"([{"op":"test","path":"/n","value":1.0}])");
  patched(R"({"n":1.0})", R"([{"op":"test","path":"/n","value":1}])");
  patched(R"({"n":18446744073709551615})",
          R"([{"op":"test","path":"/n","value":18446744073709551615}])");
  patched(R"({"n":-3})", R"([{"op":"test","path":"/n","value":-3.0}])");
  patch_error(R"({"n":1})", R"([{"op":"test","path":"/n","value":1.5}])");
  patch_error(R"({"n":9007199254740993})",
              R"([{"op":"test","path":"/n","value":9007199254740992.0}])");
  patch_error(R"({"n":1})", R"([{"op":"test","path":"/n","value":"1"}])");
  patch_error(R"({"n":null})", R"([{"op":"test","path":"/n","value":false}])");
  patch_error(R"({"a":[1,2]})", R"([{"op":"test","path":"/a","value":[2,1]}])");
  patched(R"({"a":{"x":[{"p":1,"q":2}],"y":0}})",
          R"([{"op":"test","path":"/a","value":{"y":0.0,"x":[{"q":2,"p":1}]}}])");
  CHECK(patch_error(R"({"n":1})", R"([{"op":"test","path":"/n","value":2}])") ==
        R"(JSON Patch operation 0 (test "/n"): test failed: the value is 1, not 2)");
}

TEST_CASE("apply_json_patch fails as a whole", "[json][json_patch]") {
  bj::value doc = must_parse(R"({"a":1,"b":[1,2]})");
  auto r = cj::apply_json_patch(doc, must_parse(R"([
      {"op":"add","path":"/c","value":3},
      {"op":"remove","path":"/b/0"},
      {"op":"test","path":"/a","value":2}])"));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message().find("operation 2 (test \"/a\")") != std::string::npos);
  CHECK(doc == must_parse(R"({"a":1,"b":[1,2]})"));
}

// ---------------------------------------------------------------------------------------------
// base64url

namespace {

using catalog::detail::base64url_decode;
using catalog::detail::base64url_encode;
using catalog::detail::Padding;

}  // namespace

TEST_CASE("base64url encodes the RFC 4648 examples", "[base64url]") {
  const std::pair<std::string, std::string> examples[] = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : examples) {
    CHECK(base64url_encode(bytes, Padding::none) == text);
    auto padded = text + std::string((4 - text.size() % 4) % 4, '=');
    CHECK(base64url_encode(bytes, Padding::required) == padded);
    CHECK(base64url_decode(text, Padding::none) == bytes);
    CHECK(base64url_decode(padded, Padding::required) == bytes);
  }
  // The alphabet's last two characters are '-' and '_' (where standard base64 has '+' and '/').
  CHECK(base64url_encode("\xFB\xFF", Padding::none) == "-_8");
  CHECK(base64url_decode("eyJhbGciOiJSUzI1NiJ9", Padding::none) == R"({"alg":"RS256"})");
}

TEST_CASE("base64url round trips every length", "[base64url]") {
  std::mt19937 random(4648);
  for (std::size_t length = 0; length <= 40; ++length) {
    for (int round = 0; round < 8; ++round) {
      std::string bytes;
      for (std::size_t i = 0; i < length; ++i) bytes += static_cast<char>(random() & 0xff);
      for (Padding padding : {Padding::none, Padding::required}) {
        auto text = base64url_encode(bytes, padding);
        INFO(length << " " << text);
        if (padding == Padding::required) {
          CHECK(text.size() % 4 == 0);
        } else {
          CHECK(text.find('=') == std::string::npos);
          CHECK(text.size() == (length * 4 + 2) / 3);
        }
        CHECK(text.find_first_of("+/ ") == std::string::npos);
        CHECK(base64url_decode(text, padding) == bytes);
        if (length % 3 != 0) {
          // The other padding mode refuses it.
          Padding other = padding == Padding::none ? Padding::required : Padding::none;
          CHECK_FALSE(base64url_decode(text, other));
        }
      }
    }
  }
}

TEST_CASE("base64url decoding is strict", "[base64url]") {
  auto none = [](std::string_view text) { return base64url_decode(text, Padding::none); };
  auto required = [](std::string_view text) { return base64url_decode(text, Padding::required); };

  // Standard-alphabet characters, whitespace and other bytes.
  for (std::string_view bad : std::initializer_list<std::string_view>{
           "ab+c", "ab/c", "ab c", " abc", "abc ", "ab\nc", "ab\tc", "ab.c", "ab\xC3\xA9",
           std::string_view("ab\0c", 4)}) {
    INFO(bad);
    CHECK_FALSE(none(bad));
    CHECK_FALSE(required(bad));
  }
  // Padding where none is expected, and wrong padding where it is.
  CHECK_FALSE(none("Zg=="));
  CHECK_FALSE(none("Zm8="));
  CHECK_FALSE(none("Zg="));
  CHECK_FALSE(required("Zg"));
  CHECK_FALSE(required("Zg="));
  CHECK_FALSE(required("Zg==="));
  CHECK_FALSE(required("Zm8=="));
  CHECK_FALSE(required("Zm9v===="));
  CHECK_FALSE(required("Z==="));
  CHECK_FALSE(required("===="));
  CHECK_FALSE(required("Zg=a"));
  CHECK_FALSE(required("Z=g="));
  CHECK_FALSE(required("Zg==Zm8="));
  CHECK(required("Zm8=") == "fo");
  CHECK(required("") == "");
  CHECK(none("") == "");
  // A remainder of one character can hold no byte.
  CHECK_FALSE(none("Z"));
  CHECK_FALSE(none("Zm9vY"));
  // Non-zero unused bits: "QQ" is the only spelling of "A"; "QR".."QZ" decode leniently to it.
  CHECK(none("QQ") == "A");
  for (std::string_view bad : {"QR", "QS", "QT", "QU", "QV", "QW", "QX", "QY", "QZ", "Qa", "Qf"}) {
    CHECK_FALSE(none(bad));
  }
  CHECK_FALSE(required("QR=="));
  CHECK(none("QUI") == "AB");
  CHECK_FALSE(none("QUJ"));
  CHECK_FALSE(none("QUK"));
  CHECK_FALSE(none("QUL"));
  CHECK_FALSE(required("QUJ="));
}

TEST_CASE("serialize escapes strings exactly as Boost.JSON does", "[json][serialize]") {
  // Strings with nothing to escape take a shorter path than the others; both must write what
  // Boost.JSON writes, in keys and in values.
  auto same = [](const std::string& text) {
    INFO("string of " << text.size() << " bytes, first byte " << (text.empty() ? -1 : static_cast<unsigned char>(text[0])));
    boost::json::value v = boost::json::string(text);
    CHECK(catalog::json::serialize(v) == boost::json::serialize(v));
    boost::json::object o;
    o[text] = text;
    CHECK(catalog::json::serialize(o) == boost::json::serialize(o));
  };
  same("");
  for (int c = 0; c < 0x80; ++c) {
    same(std::string(1, static_cast<char>(c)));
    same("ab" + std::string(1, static_cast<char>(c)) + "cd");
  }
  same("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80");  // é, U+2028, an emoji: written as they are
  same(std::string(300, 'x') + "\"" + std::string(300, '\\'));  // longer than one chunk
}
