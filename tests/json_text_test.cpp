// Records are read straight from their stored text into structs (detail::read_text,
// engine::decode_text) when they are in the form the engine writes, and through the DOM
// (engine::decode_document) otherwise. The fast way must never disagree with the DOM: whenever
// it gives a record, the DOM gives the same one. Checked on every record of the format fixture,
// on records with escapes, and on seeded mutations of them.
#include <catalog/change_event.hpp>
#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/json_text.hpp>
#include <catalog/json.hpp>

#include "fixture_support.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace catalog;
namespace bj = boost::json;

namespace {

std::vector<std::string> fixture_records() {
  std::vector<std::string> out;
  for (const auto& [key, value] : read_pairs(fixtures + "/store_schema2.pairs"))
    if (engine::keys::decode_entity(key)) out.push_back(value);
  return out;
}

// Everything a record holds, as text: the struct (every member, stored or not), what it stores
// in which order, what it keeps as written, and its stored bytes.
std::string describe(const engine::Record& r) {
  std::string out = std::string(type_name(r.kind)) + " " + to_string(r.id);
  out += " c=" + (r.container ? to_string(*r.container) : "-");
  out += " g=" + (r.glossary ? to_string(*r.glossary) : "-");
  out += " d=" + std::to_string(r.deleted_by) + " stored=";
  for (auto p : r.stored) out += std::to_string(p) + ",";
  out += " written=" + std::to_string(r.written.size()) + " struct=";
  out += std::visit([](const auto& e) { return catalog::json::serialize(detail::to_json(e)); },
                    r.value);
  out += " bytes=" + engine::encode(r);
  return out;
}

// The fast way agrees with the DOM on `text`; returns whether the fast way read it.
bool agrees(const std::string& text) {
  auto fast = engine::decode_text(text);
  auto dom = engine::decode_document(text);
  if (!fast) return false;
  INFO(text);
  REQUIRE(dom.has_value());
  CHECK(dom->written.empty());
  CHECK(describe(*fast) == describe(*dom));
  return true;
}

}  // namespace

TEST_CASE("every record the engine wrote is read straight from its text", "[json_text]") {
  const auto records = fixture_records();
  REQUIRE(records.size() == 17);
  for (const auto& text : records) {
    INFO(text);
    CHECK(agrees(text));
    CHECK(engine::encode(engine::decode_text(text).value()) == text);
  }
}

TEST_CASE("strings with escapes and non-ASCII text read the same both ways", "[json_text]") {
  const auto records = fixture_records();
  const std::vector<std::string> descriptions = {
      "line one\nline two\ttabbed", "a \"quoted\" word and a back\\slash",
      "control \x01 char",          "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "slash / and \b\f\r",         ""};
  std::size_t read = 0;
  for (const auto& text : records) {
    auto r = engine::decode(text).value();
    for (const auto& d : descriptions) {
      bj::value v(d);
      REQUIRE(r.set_member("description", &v));
      auto bytes = engine::encode(r);
      INFO(bytes);
      CHECK(agrees(bytes));
      CHECK(engine::decode_text(bytes)->base().description == d);
      ++read;
    }
  }
  CHECK(read == records.size() * descriptions.size());
  // Escapes Boost.JSON's serializer does not write but any JSON may hold: \/ and \u.
  auto r = engine::decode(records.front()).value();
  bj::value v("@");
  REQUIRE(r.set_member("description", &v));
  auto bytes = engine::encode(r);
  auto at = bytes.find(R"("description":"@")");
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 17, R"("description":"\/\u00e9\u20AC\u0041\ud83d\ude00")");
  CHECK(agrees(bytes));
  CHECK(engine::decode_text(bytes)->base().description == "/\xc3\xa9\xe2\x82\xac"
                                                          "A\xf0\x9f\x98\x80");
}

TEST_CASE("forms the engine does not write go to the DOM", "[json_text]") {
  const auto records = fixture_records();
  const auto& text = records.front();
  REQUIRE(engine::decode_text(text).has_value());
  auto variant = [&](std::string from, std::string to) {
    auto s = text;
    auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  // Whitespace, versions written otherwise (an integer, an exponent, two decimals, digits past
  // a double's precision), an explicit null, an unpaired surrogate escape, trailing bytes.
  for (const auto& s :
       {variant(R"("k":)", R"("k" :)"), variant(R"("version":0.1)", R"("version":1)"),
        variant(R"("version":0.1)", R"("version":1E-1)"),
        variant(R"("version":0.1)", R"("version":0.10)"),
        variant(R"("version":0.1)", R"("version":0.10000000000000001)"),
        variant(R"("deleted":false)", R"("deleted":false,"displayName":null)"),
        variant(R"("name":")", R"("name":"\ud83d)"), text + " "}) {
    INFO(s);
    CHECK_FALSE(engine::decode_text(s).has_value());
  }
  // The DOM still reads the ones that are valid records, and keeps them as written.
  auto null_name = variant(R"("deleted":false)", R"("deleted":false,"displayName":null)");
  auto dom = engine::decode(null_name);
  REQUIRE(dom.has_value());
  CHECK(engine::encode(*dom) == null_name);
}

TEST_CASE("mutated records: whatever the fast way reads, the DOM reads the same", "[json_text]") {
  // Seeded mutations of every fixture record: a byte replaced by one of JSON's own characters or
  // a random one, a byte dropped or doubled, the text cut short. Most break the record; those the
  // fast way still reads must read the same through the DOM.
  std::mt19937 rng(20261126);
  const std::string specials = "{}[]\":,\\0123456789.eE-+ntfu \x01\x80\xff";
  std::size_t tried = 0, fast_read = 0;
  for (const auto& text : fixture_records()) {
    for (int i = 0; i < 400; ++i) {
      auto s = text;
      std::uniform_int_distribution<std::size_t> at(0, s.size() - 1);
      std::size_t p = at(rng);
      switch (rng() % 5) {
      case 0: s[p] = specials[rng() % specials.size()]; break;
      case 1: s[p] = static_cast<char>(rng() & 0xff); break;
      case 2: s.erase(p, 1); break;
      case 3: s.insert(p, 1, s[p]); break;
      default: s.resize(p); break;
      }
      ++tried;
      if (agrees(s)) ++fast_read;
    }
  }
  CHECK(tried == 17 * 400);
  CHECK(fast_read > 0);  // some mutations keep a valid record (a digit for a digit)
}

namespace {

// A record's encoding as it was made before detail::write_text: each stored member's JSON value
// (for_each_stored) serialized, after the envelope encode writes.
std::string encoded_through_values(const engine::Record& r) {
  auto bytes = engine::encode(r);
  auto doc = bytes.find(R"(,"doc":{)");
  REQUIRE(doc != std::string::npos);
  std::string out = bytes.substr(0, doc + 8);
  bool first = true;
  r.for_each_stored([&](std::string_view name, const bj::value& v) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += name;
    out += "\":";
    out += catalog::json::serialize(v);
  });
  return out + "}}";
}

}  // namespace

TEST_CASE("records are encoded straight from their structs as their members' JSON would be",
          "[json_text]") {
  // Every string character JSON escapes or passes, versions, nested structs and JSON values.
  std::string every_control;
  for (int c = 0; c < 0x20; ++c) every_control += static_cast<char>(c);
  every_control += "\x7f\"\\/ caf\xc3\xa9";
  const std::vector<std::string> strings = {"", "plain", every_control, "\xf0\x9f\x98\x80"};
  std::size_t checked = 0;
  for (const auto& text : fixture_records()) {
    auto r = engine::decode(text).value();
    CHECK(engine::encode(r) == encoded_through_values(r));
    for (const auto& s : strings) {
      bj::value v(s);
      REQUIRE(r.set_member("description", &v));
      INFO(s);
      CHECK(engine::encode(r) == encoded_through_values(r));
      std::string written;
      detail::write_text(written, s);
      CHECK(written == catalog::json::serialize(bj::value(s)));
      ++checked;
    }
    for (std::uint32_t tenths : {1u, 10u, 13u, 120u, 1234567u, 4294967295u}) {
      r.base().version = Version::from_tenths(tenths);
      CHECK(engine::encode(r) == encoded_through_values(r));
    }
  }
  CHECK(checked == 17 * strings.size());
  // Mutations the DOM reads keep members as written (an explicit null, an odd form): those are
  // written as kept, the rest from the struct, as before.
  std::mt19937 rng(20261127);
  std::size_t decoded = 0;
  for (const auto& text : fixture_records())
    for (int i = 0; i < 200; ++i) {
      auto s = text;
      s[std::uniform_int_distribution<std::size_t>(0, s.size() - 1)(rng)] =
          "0123456789.e\" n"[rng() % 15];
      auto r = engine::decode(s);
      if (!r) continue;
      ++decoded;
      INFO(s);
      CHECK(engine::encode(*r) == encoded_through_values(*r));
    }
  CHECK(decoded > 0);
}

TEST_CASE("json_string_end and valid_utf8 agree with a byte-at-a-time reading", "[json_text]") {
  // They and the writer's test for strings to escape pass ordinary bytes eight at a time: every
  // special byte (quote, backslash, control character, non-ASCII) is put at every offset from an
  // eight-byte boundary, in seeded strings.
  auto slow_end = [](const char* p, const char* end, bool& escaped) -> const char* {
    escaped = false;
    for (; p != end; ++p) {
      auto c = static_cast<unsigned char>(*p);
      if (c == '"') return p;
      if (c < 0x20) return nullptr;
      if (c == '\\') {
        escaped = true;
        if (++p == end) return nullptr;
      }
    }
    return nullptr;
  };
  auto slow_utf8 = [](std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
      auto n = detail::utf8_sequence(s.substr(i));
      if (n == 0) return false;
      i += n;
    }
    return true;
  };
  const std::string specials[] = {"\"", "\\", "\\\"", "\x01", "\x1f", "\x7f", " ", "\xc3\xa9",
                                  "\xc3", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\xa0\x80"};
  std::mt19937 rng(7);
  int checked = 0;
  for (std::size_t length = 0; length < 40; ++length) {
    for (std::size_t at = 0; at <= length; ++at) {
      for (const auto& special : specials) {
        std::string s;
        for (std::size_t i = 0; i < length; ++i)
          s += static_cast<char>('a' + static_cast<int>(rng() % 26));
        s.insert(at, special);
        if (rng() % 3 == 0) s.insert(rng() % (s.size() + 1), specials[rng() % 12]);
        INFO(s);
        bool fast_escaped = false, slow_escaped = false;
        const char* begin = s.data();
        const char* end = s.data() + s.size();
        CHECK(detail::json_string_end(begin, end, fast_escaped) ==
              slow_end(begin, end, slow_escaped));
        if (slow_end(begin, end, slow_escaped) != nullptr) CHECK(fast_escaped == slow_escaped);
        CHECK(detail::valid_utf8(s) == slow_utf8(s));
        // The writer copies strings with nothing to escape and has Boost.JSON escape the rest.
        CHECK(catalog::json::serialize(bj::value(s)) == bj::serialize(bj::value(s)));
        ++checked;
      }
    }
  }
  CHECK(checked > 9000);
}

TEST_CASE("canonical tells the forms to_json writes from those it would not", "[json_text]") {
  using detail::canonical;
  auto change = [](const char* text) { return bj::parse(text); };
  constexpr std::type_identity<ChangeDescription> cd;
  // What to_json writes is canonical.
  ChangeDescription d;
  d.previous_version = Version::from_tenths(3);
  d.fields_updated.push_back(FieldChange{"description", bj::value("a"), bj::value(nullptr)});
  CHECK(canonical(detail::to_json(d), cd));
  // Members out of order, a version as an integer, an explicit null for an optional, a member
  // that is not optional left out: each converts, none writes back the same.
  const auto base = catalog::json::serialize(detail::to_json(d));
  INFO(base);
  for (const char* other :
       {R"({"previousVersion":0.3,"fieldsAdded":[],"fieldsUpdated":[],"fieldsDeleted":[]})",
        R"({"fieldsAdded":[],"fieldsUpdated":[],"fieldsDeleted":[],"previousVersion":1})",
        R"({"fieldsUpdated":[],"fieldsDeleted":[],"previousVersion":0.3})"}) {
    INFO(other);
    auto v = change(other);
    ChangeDescription read;
    REQUIRE(detail::from_json(v, read, "").has_value());
    CHECK_FALSE(canonical(v, cd));
  }
  CHECK_FALSE(canonical(bj::value(1), std::type_identity<Version>{}));
  CHECK(canonical(bj::value(0.1), std::type_identity<Version>{}));
  CHECK_FALSE(canonical(bj::value(nullptr), std::type_identity<std::optional<std::string>>{}));
  // A value kept as JSON keeps its explicit null.
  CHECK(canonical(bj::value(nullptr), std::type_identity<std::optional<bj::value>>{}));
}

TEST_CASE("the spaced reader takes white space between tokens, the canonical one none",
          "[json_text]") {
  const std::string spaced = " { \"a\" :\t[ 1 , -2.5e3 , true , null , { } ] ,\r\n\"b\" : \"x\" } ";
  detail::BasicTextReader<detail::Spacing::json> s(spaced);
  std::string_view key, value;
  REQUIRE(s.eat('{'));
  REQUIRE(s.key(key));
  CHECK(key == "a");
  REQUIRE(s.skip(value, 4));
  CHECK(value == "[ 1 , -2.5e3 , true , null , { } ]");
  REQUIRE(s.eat(','));
  REQUIRE(s.key(key));
  std::string buffer;
  REQUIRE(s.string(value, buffer));
  CHECK(value == "x");
  CHECK(s.eat('}'));
  CHECK(s.at_end());
  detail::TextReader canonical(spaced);
  CHECK_FALSE(canonical.eat('{'));
  // Nesting past the limit is refused by both.
  detail::BasicTextReader<detail::Spacing::json> deep("[[[ ]]]");
  CHECK_FALSE(deep.skip(value, 2));
}

TEST_CASE("member_name gives a member's wire name from its description", "[json_text]") {
  CHECK(detail::member_name<&EntityBase::display_name>() == "displayName");
  CHECK(detail::member_name<&EntityBase::version>() == "version");
  CHECK(detail::member_name<&TagLabel::tag_fqn>() == "tagFQN");
  CHECK(detail::member_name<&ChangeEvent::entity_fully_qualified_name>() ==
        "entityFullyQualifiedName");
  // A member a kind inherits is named by its own class's description, the same in every kind.
  CHECK(detail::member_name<&Glossary::tags>() == "tags");
}

TEST_CASE("a log line: controls, C1 controls, U+2028, U+2029 and bytes that are not UTF-8 come "
          "as \\xHH; other text as it is",
          "[json_text]") {
  using catalog::detail::one_line;
  CHECK(one_line("plain text, caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80") ==
        "plain text, caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80");
  CHECK(one_line("a\nb\tc\x1b[31m\x7F") == "a\\x0Ab\\x09c\\x1B[31m\\x7F");
  // U+0085 (next line), U+009B (CSI), U+2028, U+2029; U+00A0 and U+2027 are kept.
  CHECK(one_line("x\xC2\x85y\xC2\x9B" "31mz\xE2\x80\xA8w\xE2\x80\xA9v\xC2\xA0\xE2\x80\xA7") ==
        "x\\xC2\\x85y\\xC2\\x9B31mz\\xE2\\x80\\xA8w\\xE2\\x80\\xA9v\xC2\xA0\xE2\x80\xA7");
  // A lone C1 byte, a truncated sequence, an overlong form, a surrogate: each byte escaped.
  CHECK(one_line("\x9B" "1m") == "\\x9B1m");
  CHECK(one_line("a\xE2\x80") == "a\\xE2\\x80");
  CHECK(one_line("\xC0\x8A") == "\\xC0\\x8A");
  CHECK(one_line("\xED\xA0\x80") == "\\xED\\xA0\\x80");
  CHECK(one_line(std::string_view("a\0b", 3)) == "a\\x00b");
  CHECK(one_line("") == "");
}
