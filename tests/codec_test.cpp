// The small codecs every layer shares: Version, the FQN codec and name rules, UUIDs, the
// error type, and the entity structs' JSON mapping.
#include <catalog/entities.hpp>
#include <catalog/error.hpp>
#include <catalog/fqn.hpp>
#include <catalog/json.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace catalog;

TEST_CASE("the library's version is the headers' CATALOG_VERSION", "[version]") {
  const auto v = library_version();
  CHECK(v == LibraryVersion{CATALOG_VERSION_MAJOR, CATALOG_VERSION_MINOR, CATALOG_VERSION_PATCH});
  CHECK(CATALOG_VERSION ==
        CATALOG_VERSION_MAJOR * 10000 + CATALOG_VERSION_MINOR * 100 + CATALOG_VERSION_PATCH);
  CHECK(library_version_string() == std::to_string(v.major) + "." + std::to_string(v.minor) +
                                        "." + std::to_string(v.patch));
  CHECK(LibraryVersion{0, 9, 9} < LibraryVersion{1, 0, 0});
  CHECK(LibraryVersion{1, 2, 0} < LibraryVersion{1, 2, 1});
}

TEST_CASE("Version: integer tenths, plain decimals, strict parsing", "[version]") {
  CHECK(Version::initial().to_string() == "0.1");
  CHECK(Version::from_tenths(13).to_string() == "1.3");
  CHECK(Version::from_tenths(3).next_major().to_string() == "1.3");
  CHECK(Version::from_tenths(9).next_minor().to_string() == "1.0");
  for (auto [text, tenths] : {std::pair{"0.1", 1u}, {"1.3", 13u}, {"10.0", 100u}, {"123.9", 1239u}})
    CHECK(Version::parse(text).value().tenths() == tenths);
  for (auto bad : {"1", "1e1", "0.15", "-1", ".5", "abc", "0.0", "01.1", "1.", "", " 0.1", "0.1 ",
                   "+1.0"}) {
    INFO(bad);
    auto r = Version::parse(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Errc::invalid_version);
    CHECK(r.error().kind() == ErrorKind::bad_request);
  }
  // Of the grammar, but past what a catalog can write: a version no entity ever had.
  for (auto beyond : {"429496729.0", "99999999999.1", "99999999999999999999999999.0"}) {
    INFO(beyond);
    auto r = Version::parse(beyond);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == Errc::not_found);
  }
  CHECK(Version::parse("429496728.9").value().tenths() == 4294967289u);
  // On the wire: a JSON number written 0.1, never 1E-1.
  CHECK(json::serialize(detail::to_json(Version::from_tenths(1))) == "0.1");
  CHECK(json::serialize(detail::to_json(Version::from_tenths(13))) == "1.3");
  CHECK(json::serialize(detail::to_json(Version::from_tenths(20))) == "2.0");
  Version v;
  CHECK(detail::from_json(json::parse("0.7").value(), v, "version"));
  CHECK(v.tenths() == 7);
  CHECK_FALSE(detail::from_json(json::parse("0.75").value(), v, "version"));
  CHECK_FALSE(detail::from_json(json::parse("\"0.7\"").value(), v, "version"));
}

TEST_CASE("FQN codec: quote, build, split, canonical", "[fqn]") {
  CHECK(fqn::quote("plain") == "plain");
  CHECK(fqn::quote("a.b") == "\"a.b\"");
  CHECK(fqn::build({"Business", "v1.0"}) == "Business.\"v1.0\"");
  CHECK(fqn::build({"a.b"}) == "\"a.b\"");
  CHECK(fqn::append("", "x") == "x");
  CHECK(fqn::append("g.t", "c.d") == "g.t.\"c.d\"");
  CHECK(fqn::split("g1.t1").value() == std::vector<std::string>{"g1", "t1"});
  CHECK(fqn::split("\"a.b\".c").value() == std::vector<std::string>{"a.b", "c"});
  CHECK(fqn::canonical("\"g1\".t1").value() == "g1.t1");
  CHECK(fqn::canonical("g.\"x.y\".\"z\"").value() == "g.\"x.y\".z");
  for (auto bad : {"", ".", "a.", ".a", "a..b", "\"a", "a\"", "\"a\"b", "a.\"b", "\"\"",
                   "a.\"\".b"}) {
    INFO(bad);
    auto r = fqn::split(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::invalid_fqn);
  }
  // 3072 bytes at most, in parts that are names (docs/SEMANTICS.md §15): eleven 255-byte parts and a 256-byte one.
  std::string longest;
  for (int i = 0; i < 11; ++i) longest += std::string(255, 'a') + ".";
  longest += std::string(3072 - longest.size(), 'b');
  CHECK(fqn::split(longest).value().size() == 12);
  CHECK(fqn::split(longest + "b").error().code() == Errc::invalid_fqn);
  // A part that is not a valid name is refused whatever the FQN's length: too long, NUL, ::,
  // overlong or surrogate UTF-8, code points above U+10FFFF.
  for (std::string bad : {std::string(401, 'a'), std::string("g.a\0b", 6), std::string("a::b"),
                          std::string("g.\xC0\xAF"), std::string("\xED\xA0\x80"),
                          std::string("g.\xF4\x90\x80\x80"), std::string("\xF5\x80\x80\x80"),
                          std::string("\"a::b.c\"")}) {
    INFO(bad);
    CHECK(fqn::split(bad).error().code() == Errc::invalid_fqn);
  }
}

TEST_CASE("names: length, bytes, control characters, :: and quotes", "[fqn]") {
  CHECK(fqn::validate_name("Revenue"));
  CHECK(fqn::validate_name("v1.0"));
  CHECK(fqn::validate_name("Umsatz \xc3\xa4\xc3\xb6\xc3\xbc"));
  CHECK(fqn::validate_name(std::string(256, 'x')));
  CHECK(fqn::validate_name(std::string(100, 'x') + std::string(100, '\xe2') ).error().code() == Errc::invalid_name);  // not UTF-8
  std::string wide;
  for (int i = 0; i < 133; ++i) wide += "\xe2\x82\xac";  // 133 euro signs: 399 bytes, fine
  CHECK(fqn::validate_name(wide));
  wide += "\xe2\x82\xac";  // 402 bytes
  CHECK(fqn::validate_name(wide).error().code() == Errc::invalid_name);
  for (auto bad : {std::string(), std::string(257, 'x'), std::string("a::b"), std::string("a\"b"),
                   std::string("tab\there"), std::string("nul\0x", 5), std::string("c1\xc2\x85")}) {
    INFO(bad);
    CHECK(fqn::validate_name(bad).error().code() == Errc::invalid_name);
  }
}

TEST_CASE("UUIDs: exactly 8-4-4-4-12 hex, either case, written lowercase", "[uuid]") {
  auto id = parse_uuid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0").value();
  CHECK(to_string(id) == "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  CHECK(to_string(parse_uuid("00000000-0000-0000-0000-000000000000").value()) ==
        "00000000-0000-0000-0000-000000000000");
  for (auto bad : {"", "not-a-uuid", "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}",
                   "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f",
                   "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00", "0f1e2d3g-4b5a-6978-8796-a5b4c3d2e1f0",
                   "0f1e2d3c_4b5a-6978-8796-a5b4c3d2e1f0"}) {
    INFO(bad);
    CHECK(parse_uuid(bad).error().code() == Errc::invalid_uuid);
  }
  CHECK(random_uuid() != random_uuid());
}

TEST_CASE("random ids are version 4, distinct across pool refills, and not shared with a fork",
          "[uuid]") {
  // Ids come from a pool filled 64 at a time; 1,000 cross many refills.
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_uuid();
    CHECK((id.data[6] >> 4) == 4);
    CHECK((id.data[8] & 0xC0) == 0x80);
    seen.insert(to_string(id));
  }
  CHECK(seen.size() == 1000);
  // A forked child must not hand out the ids its parent will: with a copied pool, both would
  // take the same next bytes.
  (void)random_uuid();  // the pool now has bytes left that the child would otherwise copy
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto id = random_uuid();
    auto written = ::write(fds[1], id.data, 16);
    ::_exit(written == 16 ? 0 : 1);
  }
  ::close(fds[1]);
  auto mine = random_uuid();
  Uuid theirs;
  std::size_t got = 0;
  while (got < 16) {
    auto n = ::read(fds[0], theirs.data + got, 16 - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(got == 16);
  CHECK(WIFEXITED(status));
  CHECK(mine != theirs);
  CHECK(seen.count(to_string(theirs)) == 0);
}

TEST_CASE("errors: kinds and type names", "[error]") {
  struct Row {
    Errc code;
    ErrorKind kind;
    std::string_view type;
  };
  for (auto [code, kind, type] :
       {Row{Errc::invalid_json, ErrorKind::bad_request, "BAD_REQUEST"},
        Row{Errc::read_only_field, ErrorKind::bad_request, "BAD_REQUEST"},
        Row{Errc::unauthenticated, ErrorKind::unauthorized, "UNAUTHORIZED"},
        Row{Errc::forbidden, ErrorKind::forbidden, "FORBIDDEN"},
        Row{Errc::not_found, ErrorKind::not_found, "NOT_FOUND"},
        Row{Errc::already_exists, ErrorKind::conflict, "CONFLICT"},
        Row{Errc::version_mismatch, ErrorKind::conflict, "CONFLICT"},
        Row{Errc::storage, ErrorKind::internal, "INTERNAL_ERROR"}}) {
    Error e(code, "m");
    CHECK(e.kind() == kind);
    CHECK(type_name(e.kind()) == type);
  }
  Result<int> r = Error(Errc::not_found, "glossary instance for x not found");
  CHECK_THROWS_AS(r.value(), Exception);
  try {
    (void)r.value();
  } catch (const Exception& e) {
    CHECK(e.error().kind() == ErrorKind::not_found);
    CHECK(std::string(e.what()) == "glossary instance for x not found");
  }
}

TEST_CASE("entity JSON: camelCase names, absent optionals omitted, strict reading", "[entities]") {
  MlModel m;
  m.id = parse_uuid("11111111-2222-3333-4444-555555555555").value();
  m.name = "churn";
  m.fully_qualified_name = "mlflow.churn";
  m.algorithm = "xgboost";
  m.ml_features = {MlFeature{"age", FeatureDataType::categorical, {}, {}}};
  m.tags = {TagLabel{"PII.Sensitive", TagSource::classification, {}, {}, {}}};
  auto v = to_json(m);
  auto& o = v.as_object();
  CHECK(o.at("fullyQualifiedName") == "mlflow.churn");
  CHECK(o.at("mlFeatures").at(0).at("dataType") == "categorical");
  CHECK(o.at("tags").at(0).at("tagFQN") == "PII.Sensitive");
  CHECK(o.at("tags").at(0).at("source") == "Classification");
  CHECK_FALSE(o.at("tags").at(0).as_object().contains("labelType"));
  CHECK_FALSE(o.contains("displayName"));
  CHECK_FALSE(o.contains("votes"));
  CHECK(json::serialize(o.at("version")) == "0.1");
  auto back = from_json<MlModel>(v).value();
  CHECK(back.name == "churn");
  CHECK(back.ml_features.at(0).data_type == FeatureDataType::categorical);
  CHECK(back.version == Version::initial());

  auto refused = [](const char* text, Errc code, std::string_view words) {
    INFO(text);
    auto r = from_json<CreateDomain>(json::parse(text).value());
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == code);
    CHECK_THAT(r.error().message(), Catch::Contains(std::string(words)));
  };
  refused(R"({"name":"d","description":"x"})", Errc::invalid_request, "domainType");
  refused(R"({"name":"d","description":"x","domainType":"Sideways"})", Errc::invalid_value, "Source-aligned");
  refused(R"({"name":"d","description":"x","domainType":"Aggregate","extra":1})", Errc::invalid_request, "extra");
  refused(R"({"name":1,"description":"x","domainType":"Aggregate"})", Errc::invalid_request, "name");
  refused(R"({"name":"d","description":"x","domainType":"Aggregate","experts":"bob"})", Errc::invalid_request, "experts");
  refused(R"({"name":"d","description":"x","domainType":"Aggregate","owners":[{"id":"x","type":"user"}]})", Errc::invalid_uuid, "owners[0].id");
  auto ok = from_json<CreateDomain>(json::parse(R"({"name":"d","description":"x","domainType":"Consumer-aligned","displayName":null})").value()).value();
  CHECK(ok.domain_type == DomainType::consumer_aligned);
  CHECK_FALSE(ok.display_name);

  // Conversions run without paths first and convert only a failed member again with its path:
  // the message still names the exact place, however deep, and whichever element failed.
  auto message = [](const char* text) {
    INFO(text);
    auto r = from_json<CreateGlossary>(json::parse(text).value());
    REQUIRE_FALSE(r);
    return r.error().message();
  };
  CHECK(message(R"({"name":"g","description":"x","tags":[{"tagFQN":"a"},{"labelType":"Manual"}]})") ==
        "Missing required member tags[1].tagFQN");
  CHECK(message(R"({"name":"g","description":"x","tags":[{"tagFQN":"a"},{"tagFQN":"b","colour":1}]})") ==
        "Unknown member tags[1].colour");
  CHECK(message(R"({"name":"g","description":"x","owners":[{"id":"4b8ba2ee-8e8d-4b7a-9b9a-2f2c4a4f0a10","type":"user"},{"id":"4b8ba2ee-8e8d-4b7a-9b9a-2f2c4a4f0a10","type":7}]})") ==
        "Invalid member owners[1].type: expected a string");
  CHECK_THAT(message(R"({"name":"g","description":"x","tags":[{"tagFQN":"a","state":"Sideways"}]})"),
             Catch::Contains("tags[0].state"));
  // A wrong value deep in nested structs is found in time linear in the depth, not exponential
  // (each level once quietly, the failing one again with its path): 30 levels of search index
  // fields, the most a request's nesting limit allows, answer at once.
  std::string deep = R"({"name":"z","dataType":1})";
  std::string expected = "dataType";
  for (int level = 0; level < 30; ++level) {
    deep = R"({"name":"f","dataType":"t","children":[)" + deep + "]}";
    expected = "children[0]." + expected;
  }
  auto nested = from_json<SearchIndexField>(json::parse(deep).value());
  REQUIRE_FALSE(nested);
  CHECK(nested.error().message() == "Invalid member " + expected + ": expected a string");
  // Members in any order read the same as in the order the catalog writes them.
  auto shuffled = from_json<CreateGlossary>(json::parse(
      R"({"tags":[{"state":"Suggested","tagFQN":"a"}],"mutuallyExclusive":true,"description":"x","name":"g"})").value());
  REQUIRE(shuffled);
  CHECK(shuffled->name == "g");
  CHECK(shuffled->description == "x");
  CHECK(shuffled->mutually_exclusive == true);
  REQUIRE(shuffled->tags.size() == 1);
  CHECK(shuffled->tags[0].tag_fqn == "a");
  CHECK(shuffled->tags[0].state == TagState::suggested);
}

TEST_CASE("member_position finds every member of every entity struct and nothing else",
          "[codec]") {
  // The lookup table is hashed: each wire name must come back at its place in the description,
  // and names that are not members (near misses included) must not be found.
  auto check = [&]<class T>(std::type_identity<T>) {
    std::size_t position = 0;
    boost::mp11::mp_for_each<catalog::detail::members_of<T>>([&](auto member) {
      const std::string name = catalog::detail::wire_name<decltype(member)>();
      INFO(name);
      CHECK(catalog::detail::member_position<T>(name) == position);
      CHECK_FALSE(catalog::detail::member_position<T>(name + "x").has_value());
      CHECK_FALSE(catalog::detail::member_position<T>(name.substr(1)).has_value());
      ++position;
    });
    CHECK_FALSE(catalog::detail::member_position<T>("").has_value());
  };
  boost::mp11::mp_for_each<boost::mp11::mp_transform<std::type_identity, catalog::entity_types>>(
      [&](auto type) { check(type); });
  check(std::type_identity<catalog::SearchIndexField>{});
  check(std::type_identity<catalog::PolicyRule>{});
  check(std::type_identity<catalog::ChangeDescription>{});
}
