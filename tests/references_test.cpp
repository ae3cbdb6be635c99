// Entity references read from stored records without decoding them (<catalog/detail/engine/references.hpp>):
// the scan agrees with the full decode on every field, escapes and Unicode included, gives up on
// whatever it does not expect, and reference arrays keep their order (name, then id) and bytes.
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/engine/references.hpp>
#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace catalog;
namespace bj = boost::json;

namespace {

const char* const some_id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

// The scan of `stored` succeeds and shows what the full decode shows, byte for byte.
void agrees(const std::string& stored) {
  INFO(stored);
  engine::StoredReference scanned;
  REQUIRE(engine::scan_reference(stored, scanned));
  auto record = engine::decode(stored);
  REQUIRE(record.has_value());
  CHECK(scanned.kind == record->kind);
  CHECK(scanned.id == record->id);
  CHECK(catalog::json::serialize(scanned.to_json()) ==
        catalog::json::serialize(engine::reference(*record)));
}

std::string stored(Kind kind, bj::object doc, bool in_glossary = false) {
  auto r = engine::record_from_document(kind, doc).value();
  if (in_glossary) {
    r.container = random_uuid();
    r.glossary = random_uuid();
    r.deleted_by = 42;
  }
  return engine::encode(r);
}

}  // namespace

TEST_CASE("scan_reference agrees with the full decode on records the engine writes",
          "[references]") {
  auto doc = [](std::string name, std::string fqn) {
    bj::object d;
    d["id"] = some_id;
    d["name"] = name;
    d["fullyQualifiedName"] = fqn;
    d["version"] = 0.1;
    d["updatedAt"] = 1767225600000;
    d["deleted"] = false;
    return d;
  };
  agrees(stored(Kind::user, doc("alice", "alice")));
  // Quoted FQN parts (escaped quotes), backslashes, Unicode written as UTF-8.
  agrees(stored(Kind::user, doc("john.doe", "\"john.doe\"")));
  agrees(stored(Kind::user, doc("back\\slash", "back\\slash")));
  agrees(stored(Kind::user, doc("Zoë 😀 名前", "Zoë 😀 名前")));

  auto d = doc("t.1", "G.\"t.1\"");
  d["displayName"] = "a \"quoted\" name\twith\ncontrol \x01 characters \\ and é";
  d["deleted"] = true;
  agrees(stored(Kind::glossary_term, d, true));

  // Members in another order, nested values whose strings hold brackets, quotes and keys the
  // scan looks for; no displayName.
  bj::object e;
  e["extension"] = bj::parse(R"({"name":"not it","a":[{"}":"]["},"\"{"],"deleted":"x"})");
  e["deleted"] = false;
  e["fullyQualifiedName"] = "svc.idx";
  e["fields"] = bj::parse(R"([{"name":"id","dataType":"KEYWORD","children":[]}])");
  e["name"] = "idx";
  e["id"] = some_id;
  e["version"] = 1.3;
  e["tags"] = bj::array{};
  agrees(stored(Kind::search_index, e));
}

TEST_CASE("scan_reference reads escapes and spacing the engine does not write", "[references]") {
  // \/, \u escapes of either case, a surrogate pair, \u0000, white space between tokens, an
  // upper-case id (read as the same id, shown lower-case).
  agrees(R"({"k":"user","doc":{"id":"0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",)"
         R"("name":"a\/b\u00e9\u00C9\ud83d\ude00","fullyQualifiedName":"\"a.b\"",)"
         R"("displayName":"nul\u0000here","version":0.1,"deleted":false}})");
  agrees(" { \"k\" : \"user\" ,\n \"doc\" : { \"id\" : \"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\" ,"
         " \"name\" : \"x\" , \"fullyQualifiedName\" : \"x\" , \"version\" : 0.1 ,"
         " \"deleted\" : true } } ");
  // The kind after the document; numbers and nulls to skip.
  agrees(R"({"doc":{"id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0","name":"x",)"
         R"("fullyQualifiedName":"x","extension":{"n":-1.5e3,"z":null},"version":0.1,)"
         R"("deleted":false},"k":"searchIndex","c":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1"})");
}

TEST_CASE("scan_reference gives up on what it does not expect", "[references]") {
  // The version and the deleted flag the full decode requires are added unless given (or
  // `stamped` is false), so that each case fails for the reason it shows.
  auto fails = [](const std::string& doc_members, const std::string& head = R"("k":"user",)",
                  bool stamped = true) {
    std::string stamps;
    if (stamped && doc_members.find(R"("version")") == std::string::npos)
      stamps += R"(,"version":0.1)";
    if (stamped && doc_members.find(R"("deleted")") == std::string::npos)
      stamps += R"(,"deleted":false)";
    std::string text = "{" + head + R"("doc":{"id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",)" +
                       doc_members + stamps + "}}";
    INFO(text);
    engine::StoredReference scanned;
    CHECK_FALSE(engine::scan_reference(text, scanned));
  };
  const std::string ok = R"("name":"x","fullyQualifiedName":"x")";
  // What the full decode reads differently (null displayName, non-boolean deleted) or refuses.
  fails(ok + R"(,"displayName":null)");
  fails(ok + R"(,"displayName":1)");
  fails(ok + R"(,"deleted":"true")");
  fails(ok + R"(,"deleted":truex)");
  fails(R"("fullyQualifiedName":"x")");
  fails(R"("name":1,"fullyQualifiedName":"x")");
  fails(ok + R"(,"name":"y")");
  fails(R"("name":"\ud800","fullyQualifiedName":"x")");
  fails(R"("name":"\udc00x","fullyQualifiedName":"x")");
  fails(R"("name":"\x","fullyQualifiedName":"x")");
  fails(R"("name":"\u12","fullyQualifiedName":"x")");
  fails("\"name\":\"\xC3\x28\",\"fullyQualifiedName\":\"x\"");
  fails("\"name\":\"a\x01\",\"fullyQualifiedName\":\"x\"");
  fails(ok, R"("k":"nonsense",)");
  fails(ok, R"("k":"user","k":"team",)");
  fails(ok, "");
  fails(ok + R"(,"extra":[1,2)");
  // What the full decode requires: a version and the deleted flag, a name and an FQN.
  const std::string user = R"("k":"user",)";
  fails(ok + R"(,"deleted":false)", user, false);
  fails(ok + R"(,"version":0.1)", user, false);
  fails(ok + R"(,"version":0.1,"version":0.2)");
  fails(R"("name":"","fullyQualifiedName":"x")");
  fails(R"("name":"x","fullyQualifiedName":"")");

  engine::StoredReference scanned;
  const std::string good = R"({"k":"user","doc":{"id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",)"
                           R"("name":"x","fullyQualifiedName":"x","version":0.1,)"
                           R"("deleted":false}})";
  REQUIRE(engine::scan_reference(good, scanned));
  CHECK_FALSE(engine::scan_reference(good + "x", scanned));
  CHECK_FALSE(engine::scan_reference(good.substr(0, good.size() - 1), scanned));
  CHECK_FALSE(engine::scan_reference("", scanned));
  CHECK_FALSE(engine::scan_reference("[]", scanned));
  std::string bad_id = good;
  bad_id.replace(bad_id.find("0f1e"), 4, "0g1e");
  CHECK_FALSE(engine::scan_reference(bad_id, scanned));
}

TEMPLATE_TEST_CASE("followers and voters: references sorted by name then id, as each user shows",
                   "[references]", CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto admin = s.principal("admin").value();
  s.create_json(admin, Kind::search_service,
                test::parse(R"({"name":"es","serviceType":"ElasticSearch"})"))
      .value();
  auto index = s.create_json(admin, Kind::search_index,
                             test::parse(R"({"name":"idx","service":"es","fields":[]})"))
                   .value();
  auto index_id = test::uuid_of(index);

  // Names whose order and escapes matter: a dot (quoted FQN), a backslash, Unicode, upper case
  // before lower case, one a prefix of another.
  const std::vector<std::string> names{"zed", "a.b", "a", "ab", "B", "back\\slash", "Zoë", "é"};
  std::vector<bj::object> users;
  for (std::size_t i = 0; i < names.size(); ++i) {
    bj::object body;
    body["name"] = names[i];
    body["email"] = "user" + std::to_string(i) + "@example.com";
    if (i % 3 == 0) body["displayName"] = "The \"" + names[i] + "\"\n\u00e9";
    auto u = s.create_json(admin, Kind::user, body).value();
    s.follow_json(admin, Kind::search_index, index_id, test::uuid_of(u)).value();
    users.push_back(std::move(u));
  }
  // A soft-deleted follower shows deleted: true.
  s.remove_json(admin, Kind::user, test::uuid_of(users[1])).value();

  // The expected array, from each user's own document.
  std::vector<bj::object> expected;
  for (const auto& u : users) {
    auto now = s.get_json(admin, Kind::user, EntityKey::by_id(test::uuid_of(u)),
                          GetOptions{.include = Include::all})
                   .value();
    bj::object ref;
    ref["id"] = now.at("id");
    ref["type"] = "user";
    ref["name"] = now.at("name");
    ref["fullyQualifiedName"] = now.at("fullyQualifiedName");
    if (auto d = now.find("displayName"); d != now.end()) ref["displayName"] = d->value();
    ref["deleted"] = now.at("deleted");
    expected.push_back(std::move(ref));
  }
  std::sort(expected.begin(), expected.end(), [](const bj::object& a, const bj::object& b) {
    std::string_view an = a.at("name").as_string(), bn = b.at("name").as_string();
    if (an != bn) return an < bn;
    return std::memcmp(parse_uuid(a.at("id").as_string())->data,
                       parse_uuid(b.at("id").as_string())->data, 16) < 0;
  });
  bj::array want(expected.begin(), expected.end());

  GetOptions g;
  g.fields = {"followers"};
  auto got = s.get_json(admin, Kind::search_index, EntityKey::by_id(index_id), g).value();
  CHECK(catalog::json::serialize(got.at("followers")) == catalog::json::serialize(want));

  // Voters go through the same reading.
  for (std::size_t i = 0; i < 3; ++i) {
    auto who = s.principal(names[i == 1 ? 3 : i]).value();
    s.vote_json(who, Kind::search_index, index_id, VoteType::voted_up).value();
  }
  GetOptions v;
  v.fields = {"votes"};
  auto voted = s.get_json(admin, Kind::search_index, EntityKey::by_id(index_id), v).value();
  const auto& up = voted.at("votes").at("upVoters").as_array();
  REQUIRE(up.size() == 3);
  CHECK(up[0].at("name") == "a");
  CHECK(up[1].at("name") == "ab");
  CHECK(up[2].at("name") == "zed");
}

TEST_CASE("scan_document_string reads one string member as the full decode does, or gives up",
          "[references]") {
  std::optional<std::string_view> out;
  std::string buffer;
  auto doc = [](const char* description) {
    bj::object d;
    d["id"] = some_id;
    d["name"] = "g";
    d["fullyQualifiedName"] = "g";
    d["version"] = 0.1;
    d["deleted"] = false;
    if (description) d["description"] = description;
    return d;
  };
  // Records the engine writes: the description as the decoded struct holds it.
  for (const char* description : {"plain words", "with \"quotes\", a\nnewline and \\ slash",
                                  "Cr\xc3\xa8me br\xc3\xbbl\xc3\xa9\x65", ""}) {
    INFO(description);
    const auto text = stored(Kind::glossary, doc(description));
    REQUIRE(engine::scan_document_string(text, "description", out, buffer));
    auto record = engine::decode(text);
    REQUIRE(record.has_value());
    REQUIRE(out.has_value());
    CHECK(*out == record->base().description.value());
  }
  {
    const auto text = stored(Kind::glossary, doc("d"));
    REQUIRE(engine::scan_document_string(text, "displayName", out, buffer));
    CHECK_FALSE(out.has_value());  // absent
  }
  const std::string head = R"({"k":"glossary","doc":{"id":")" + std::string(some_id) + R"(",)";
  const std::string tail = R"(,"version":0.1,"deleted":false}})";
  auto reads = [&](const std::string& members, std::optional<std::string> expected) {
    INFO(members);
    const std::string text = head + members + tail;  // `out` may view it
    REQUIRE(engine::scan_document_string(text, "description", out, buffer));
    CHECK(out.has_value() == expected.has_value());
    if (out && expected) CHECK(std::string(*out) == *expected);
  };
  reads(R"("name":"g","description":null)", std::nullopt);
  reads(R"("name":"g","description":"a\u00e9\/b")", "a\xc3\xa9/b");
  reads(R"("name":"g", "description" : "spaced" ,"tags":[{"x":[1,{"y":null}]}])", "spaced");
  auto gives_up = [&](const std::string& text) {
    INFO(text);
    CHECK_FALSE(engine::scan_document_string(text, "description", out, buffer));
  };
  gives_up(head + R"("name":"g","description":"a","description":"b")" + tail);  // repeated
  gives_up(head + R"("name":"g","description":1)" + tail);                       // not a string
  gives_up(head + R"("name":"g","descr\u0069ption":"a")" + tail);                // escaped key
  gives_up(head + R"("name":"g","description":"\ud800")" + tail);                // not UTF-8
  gives_up(head + R"("name":"g","description":"a")" + tail + "x");               // trailing bytes
  gives_up(R"({"doc":{"description":"a"}})");                                    // no kind
  gives_up(R"({"k":"glossary"})");                                               // no document
  gives_up("");
  gives_up("[]");
}
