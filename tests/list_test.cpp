// Lists with cursors (docs/SEMANTICS.md §8) on both backends: full walks forward and back for every include mode
// and limit, equal names in two services, writes between page reads, every refused request
// with its error and an unchanged store, and the cost of a page.
#include <catalog/store.hpp>

#include "support.hpp"
#include <catalog/detail/engine/keys.hpp>  // counter_shards: what reading a total may cost

#include <catalog/detail/base64url.hpp>
#include <catalog/storage/memory_backend.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <tuple>

using namespace catalog;
using test::id_of;
using test::parse;
namespace bj = boost::json;

namespace {

Uuid uuid_of(const std::string& id) { return parse_uuid(id).value(); }

// What the test knows of each search index, to compute every expected page on its own.
struct Item {
  std::string name;
  std::string id;
  std::string service;
  bool deleted = false;
  bool gone = false;  // hard-deleted
};

// Lowercase canonical UUID text orders like the 16 id bytes, so (name, id text) is list order.
bool list_order(const Item& a, const Item& b) {
  return std::tie(a.name, a.id) < std::tie(b.name, b.id);
}

std::string b64(std::string_view bytes) {
  return detail::base64url_encode(bytes, detail::Padding::required);
}

// The documented cursor: base64url with padding of {"name", "id"}.
std::string cursor_of(std::string_view name, std::string_view id) {
  bj::object o;
  o["name"] = name;
  o["id"] = id;
  return b64(catalog::json::serialize(o));
}
std::string cursor_of(const Item& i) { return cursor_of(i.name, i.id); }

std::vector<Item> expected(const std::vector<Item>& items, Include include,
                           const std::optional<std::string>& service) {
  std::vector<Item> out;
  for (const auto& i : items) {
    if (i.gone) continue;
    if (include == Include::non_deleted && i.deleted) continue;
    if (include == Include::deleted && !i.deleted) continue;
    if (service && i.service != *service) continue;
    out.push_back(i);
  }
  std::sort(out.begin(), out.end(), list_order);
  return out;
}

struct Catalog {
  Principal admin;
  std::vector<Item> items;

  Item& create(Store& s, std::string name, std::string service) {
    auto made = s.create_json(admin, Kind::search_index,
                              parse(R"({"name":")" + name + R"(","service":")" + service +
                                    R"(","fields":[]})"))
                    .value();
    items.push_back(Item{std::move(name), id_of(made), std::move(service)});
    return items.back();
  }
  void soft_delete(Store& s, Item& i) {
    s.remove_json(admin, Kind::search_index, uuid_of(i.id)).value();
    i.deleted = true;
  }
  void hard_delete(Store& s, Item& i) {
    DeleteOptions hard;
    hard.hard_delete = true;
    s.remove_json(admin, Kind::search_index, uuid_of(i.id), hard).value();
    i.gone = true;
  }
  Item& named(std::string_view name, std::string_view service) {
    for (auto& i : items)
      if (i.name == name && i.service == service) return i;
    throw std::logic_error("no such item");
  }
};

// Two search services with indexes of the same names, names that order bytewise (upper case
// before lower case, UTF-8 after ASCII), and three soft-deleted indexes.
Catalog build(Store& s) {
  Catalog c;
  c.admin = s.principal("admin").value();
  for (auto service : {"es1", "es2"})
    s.create_json(
         c.admin, Kind::search_service,
         parse(R"({"name":")" + std::string(service) + R"(","serviceType":"ElasticSearch"})"))
        .value();
  for (auto name : {"beta", "alpha", "Beta", "delta", "\xc3\xa9t\xc3\xa9", "gamma", "zeta"})
    c.create(s, name, "es1");
  for (auto name : {"gamma", "alpha", "beta", "omega", "Zulu"}) c.create(s, name, "es2");
  c.soft_delete(s, c.named("delta", "es1"));
  c.soft_delete(s, c.named("beta", "es2"));
  c.soft_delete(s, c.named("zeta", "es1"));
  return c;
}

std::vector<std::string> ids(const bj::array& data) {
  std::vector<std::string> out;
  for (const auto& e : data) out.push_back(id_of(e.as_object()));
  return out;
}

std::vector<std::string> ids(const std::vector<Item>& items, std::size_t from, std::size_t to) {
  std::vector<std::string> out;
  for (auto i = from; i < to; ++i) out.push_back(items[i].id);
  return out;
}

// Walks forward until `after` is absent, then back from the last page until `before` is absent,
// for every limit from 1 to n + 1, checking each page against `want` at its offset.
void walk(Store& s, const Principal& who, ListOptions base, const std::vector<Item>& want) {
  const auto n = want.size();
  for (std::size_t limit = 1; limit <= n + 1; ++limit) {
    INFO("limit " << limit << " of " << n);
    ListOptions o = base;
    o.limit = static_cast<std::int64_t>(limit);
    std::size_t offset = 0;
    std::size_t last_offset = 0;
    std::optional<std::string> last_before;
    for (bool first = true;; first = false) {
      INFO("forward at " << offset);
      auto page = s.list_json(who, Kind::search_index, o).value();
      CHECK(page.total == static_cast<std::int64_t>(n));
      auto count = std::min(limit, n - offset);
      REQUIRE(page.data.size() == count);
      CHECK(ids(page.data) == ids(want, offset, offset + count));
      REQUIRE(page.after.has_value() == (offset + count < n));
      REQUIRE(page.before.has_value() == !first);
      if (page.after) CHECK(*page.after == cursor_of(want[offset + count - 1]));
      if (page.before) CHECK(*page.before == cursor_of(want[offset]));
      last_offset = offset;
      last_before = page.before;
      offset += count;
      if (!page.after) break;
      o.after = page.after;
    }
    CHECK(offset == n);
    if (!last_before) {
      CHECK(last_offset == 0);  // one page held everything
      continue;
    }
    o.after.reset();
    o.before = last_before;
    std::size_t end = last_offset;
    for (;;) {
      INFO("backward to " << end);
      auto page = s.list_json(who, Kind::search_index, o).value();
      CHECK(page.total == static_cast<std::int64_t>(n));
      auto count = std::min(limit, end);
      auto start = end - count;
      REQUIRE(page.data.size() == count);
      CHECK(ids(page.data) == ids(want, start, end));
      REQUIRE(page.before.has_value() == (start > 0));
      REQUIRE(page.after.has_value());
      CHECK(*page.after == cursor_of(want[end - 1]));
      if (page.before) CHECK(*page.before == cursor_of(want[start]));
      end = start;
      if (!page.before) break;
      o.before = page.before;
    }
    CHECK(end == 0);
  }
}

ListOptions options(Include include, std::optional<std::string> service = {}) {
  ListOptions o;
  o.include = include;
  o.service = std::move(service);
  return o;
}

}  // namespace

TEMPLATE_TEST_CASE("list walks visit every entity once, in order, for every limit", "[list]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  for (auto include : {Include::non_deleted, Include::deleted, Include::all}) {
    for (std::optional<std::string> service :
         {std::optional<std::string>(), std::optional<std::string>("es1"),
          std::optional<std::string>("es2")}) {
      INFO("include " << static_cast<int>(include) << " service " << service.value_or("-"));
      auto want = expected(c.items, include, service);
      REQUIRE(!want.empty());
      walk(s, c.admin, options(include, service), want);
    }
  }
  // The orders the fixture was built to exercise.
  auto all = expected(c.items, Include::all, {});
  std::vector<std::string> names;
  for (const auto& i : all) names.push_back(i.name);
  CHECK(names == std::vector<std::string>{"Beta", "Zulu", "alpha", "alpha", "beta", "beta", "delta",
                                          "gamma", "gamma", "omega", "zeta", "\xc3\xa9t\xc3\xa9"});
  CHECK(expected(c.items, Include::non_deleted, {}).size() == 9);
  CHECK(expected(c.items, Include::deleted, {}).size() == 3);
}

TEMPLATE_TEST_CASE("list pages: rendering, fields, limit 0, empty pages, typed lists", "[list]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  auto want = expected(c.items, Include::non_deleted, {});

  SECTION("entities are rendered with base fields, extras only when asked") {
    auto page = s.list_json(c.admin, Kind::search_index, options(Include::non_deleted)).value();
    REQUIRE(page.data.size() == 9);
    const auto& first = page.data.at(0).as_object();
    CHECK(first.at("name") == "Beta");
    CHECK(first.at("service").at("name") == "es1");
    CHECK(first.at("serviceType") == "ElasticSearch");
    CHECK(first.contains("owners"));
    CHECK(!first.contains("followers"));
    CHECK(!first.contains("votes"));
    auto o = options(Include::non_deleted);
    o.fields = {"*"};
    auto all = s.list_json(c.admin, Kind::search_index, o).value();
    for (const auto& e : all.data) {
      CHECK(e.as_object().contains("followers"));
      CHECK(e.as_object().at("votes").at("upVotes") == 0);
    }
    o.fields = {"followers"};
    auto some = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(some.data.at(0).as_object().contains("followers"));
    CHECK(!some.data.at(0).as_object().contains("votes"));
  }

  SECTION("limit 0 gives only the total, whatever the cursor") {
    auto o = options(Include::all);
    o.limit = 0;
    auto page = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(page.data.empty());
    CHECK(!page.before);
    CHECK(!page.after);
    CHECK(page.total == 12);
    o.after = cursor_of(want[3]);
    page = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(page.data.empty());
    CHECK(!page.before);
    CHECK(!page.after);
    CHECK(page.total == 12);
  }

  SECTION("an empty page echoes the request's cursor and carries no other") {
    auto o = options(Include::non_deleted);
    auto past = cursor_of(want.back());
    o.after = past;
    auto page = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(page.data.empty());
    CHECK(page.before == past);
    CHECK(!page.after);
    CHECK(page.total == 9);
    o.after.reset();
    auto front = cursor_of(want.front());
    o.before = front;
    page = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(page.data.empty());
    CHECK(page.after == front);
    CHECK(!page.before);
    // Any well-formed cursor is a position, even where no entity ever stood.
    o.before = cursor_of("m", "ffffffff-ffff-ffff-ffff-ffffffffffff");
    page = s.list_json(c.admin, Kind::search_index, o).value();
    std::vector<std::string> names;
    for (const auto& e : page.data) names.emplace_back(e.at("name").as_string());
    CHECK(names ==
          std::vector<std::string>{"Beta", "Zulu", "alpha", "alpha", "beta", "gamma", "gamma"});
    CHECK(!page.before);
    CHECK(page.after == cursor_of(want[6]));
    // A cursor written by hand, with an upper-case id, is read the same.
    auto upper = want[2].id;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    o.before.reset();
    o.after = b64(R"({"id":")" + upper + R"(","name":")" + want[2].name + R"("})");
    page = s.list_json(c.admin, Kind::search_index, o).value();
    CHECK(ids(page.data) == ids(want, 3, 9));
  }

  SECTION("an empty collection") {
    auto page = s.list_json(c.admin, Kind::mlmodel, {}).value();
    CHECK(page.data.empty());
    CHECK(!page.before);
    CHECK(!page.after);
    CHECK(page.total == 0);
  }

  SECTION("typed list") {
    ListOptions o;
    o.limit = 2;
    o.service = "es2";
    auto page = s.template list<SearchIndex>(c.admin, o).value();
    REQUIRE(page.data.size() == 2);
    CHECK(page.data[0].name == "Zulu");
    CHECK(page.data[1].name == "alpha");
    CHECK(page.data[1].service->name == "es2");
    CHECK(page.total == 4);
    CHECK(page.after);
    CHECK(!page.before);
  }

  SECTION("other kinds list the same way: users by name, then id") {
    for (auto name : {"zoe", "Adam", "bob"})
      s.create_json(c.admin, Kind::user,
                    parse(R"({"name":")" + std::string(name) + R"(","email":")" + name +
                          R"(@example.com"})"))
          .value();
    ListOptions o;
    o.limit = 3;
    auto page = s.list_json(c.admin, Kind::user, o).value();
    std::vector<std::string> names;
    for (const auto& e : page.data) names.emplace_back(e.at("name").as_string());
    CHECK(names == std::vector<std::string>{"Adam", "admin", "bob"});
    CHECK(page.total == 4);
    o.after = page.after;
    page = s.list_json(c.admin, Kind::user, o).value();
    REQUIRE(page.data.size() == 1);
    CHECK(page.data[0].at("name") == "zoe");
  }
}

TEMPLATE_TEST_CASE("the service filter: equal names, unknown and soft-deleted services", "[list]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  auto names_of = [](const Store::JsonPage& p) {
    std::vector<std::string> out;
    for (const auto& e : p.data)
      out.push_back(std::string(e.at("name").as_string()) + "@" +
                    std::string(e.at("service").at("name").as_string()));
    return out;
  };
  auto o = options(Include::non_deleted, "es2");
  auto page = s.list_json(c.admin, Kind::search_index, o).value();
  CHECK(names_of(page) ==
        std::vector<std::string>{"Zulu@es2", "alpha@es2", "gamma@es2", "omega@es2"});
  CHECK(page.total == 4);
  // The FQN is made canonical before it is looked up.
  o.service = "\"es2\"";
  CHECK(s.list_json(c.admin, Kind::search_index, o).value().total == 4);

  o.service = "nowhere";
  page = s.list_json(c.admin, Kind::search_index, o).value();
  CHECK(page.data.empty());
  CHECK(page.total == 0);
  CHECK(!page.before);
  CHECK(!page.after);

  // A service of the other service kind is unknown here.
  s.create_json(c.admin, Kind::mlmodel_service,
                parse(R"({"name":"mlflow","serviceType":"Mlflow"})"))
      .value();
  o.service = "mlflow";
  CHECK(s.list_json(c.admin, Kind::search_index, o).value().total == 0);

  // A soft-deleted service still scopes its assets: they are listed as deleted ones.
  DeleteOptions recursive;
  recursive.recursive = true;
  auto es2 = s.get_json(c.admin, Kind::search_service, EntityKey::by_fqn("es2")).value();
  s.remove_json(c.admin, Kind::search_service, uuid_of(id_of(es2)), recursive).value();
  o = options(Include::non_deleted, "es2");
  page = s.list_json(c.admin, Kind::search_index, o).value();
  CHECK(page.data.empty());
  CHECK(page.total == 0);
  o.include = Include::deleted;
  page = s.list_json(c.admin, Kind::search_index, o).value();
  CHECK(names_of(page) ==
        std::vector<std::string>{"Zulu@es2", "alpha@es2", "beta@es2", "gamma@es2", "omega@es2"});
  CHECK(page.total == 5);
  // ML models filter the same way.
  s.create_json(c.admin, Kind::mlmodel, parse(R"({"name":"m","service":"mlflow","algorithm":"a"})"))
      .value();
  ListOptions m;
  m.service = "mlflow";
  CHECK(s.list_json(c.admin, Kind::mlmodel, m).value().total == 1);
  m.service = "es1";
  CHECK(s.list_json(c.admin, Kind::mlmodel, m).value().total == 0);
}

TEMPLATE_TEST_CASE("the service filter reads a service stored in another form as the engine's",
                   "[list]", CATALOG_STORE_FIXTURES) {
  // The filter takes the service's id from its stored text without decoding it when the text is
  // in the engine's form, and from the full decode otherwise: both find the same service.
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  const auto es2 =
      uuid_of(id_of(s.get_json(c.admin, Kind::search_service, EntityKey::by_fqn("es2")).value()));
  const auto es1_total =
      s.list_json(c.admin, Kind::search_index, options(Include::non_deleted, "es1")).value().total;
  auto o = options(Include::non_deleted, "es2");
  const auto before = s.list_json(c.admin, Kind::search_index, o).value();
  REQUIRE(before.total == 4);
  {  // The same record with its first member's name escaped: valid JSON the scan gives up on.
    auto txn = s.backend().begin(storage::Mode::read_write).value();
    const auto key = engine::keys::entity(es2);
    auto text = txn->get(key).value().value();
    REQUIRE(text.rfind(R"({"k":)", 0) == 0);
    text.replace(0, 5, R"({"\u006b":)");
    txn->put(key, text).value();
    txn->commit().value();
  }
  auto after = s.list_json(c.admin, Kind::search_index, o).value();
  CHECK(after.total == before.total);
  REQUIRE(after.data.size() == before.data.size());
  for (std::size_t i = 0; i < after.data.size(); ++i)
    CHECK(after.data[i].at("id") == before.data[i].at("id"));
  o.service = "es1";  // the other service is still found by its scan
  CHECK(s.list_json(c.admin, Kind::search_index, o).value().total == es1_total);
  CHECK(es1_total > 0);
}

TEMPLATE_TEST_CASE("writes between page reads never skip or repeat a surviving entity", "[list]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  const bool forward = GENERATE(true, false);
  INFO((forward ? "forward" : "backward"));
  auto start = expected(c.items, Include::non_deleted, {});
  std::vector<std::string> seen_names;
  std::vector<std::string> seen_ids;
  ListOptions o;
  o.limit = 1;
  if (!forward) o.before = cursor_of("\xf4\x8f\xbf\xbf", "ffffffff-ffff-ffff-ffff-ffffffffffff");
  int round = 0;
  for (;; ++round) {
    auto page = s.list_json(c.admin, Kind::search_index, o).value();
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& e : page.data)
      got.emplace_back(std::string(e.at("name").as_string()), id_of(e.as_object()));
    if (!forward) std::reverse(got.begin(), got.end());
    for (auto& [name, id] : got) {
      seen_names.push_back(name);
      seen_ids.push_back(id);
    }
    auto next = forward ? page.after : page.before;
    if (!next) break;
    if (forward)
      o.after = next;
    else
      o.before = next;
    // Between reads: new entities on both sides of the cursor, an unvisited entity
    // soft-deleted, another hard-deleted, a visited one deleted, and a deleted one restored.
    auto tag = std::to_string(round);
    c.create(s, "B" + tag, round % 2 ? "es1" : "es2");
    c.create(s, "zz" + tag, round % 2 ? "es2" : "es1");
    std::vector<Item*> unvisited;
    for (auto& i : c.items)
      if (!i.gone && !i.deleted &&
          std::find(seen_ids.begin(), seen_ids.end(), i.id) == seen_ids.end())
        unvisited.push_back(&i);
    if (round == 1 && unvisited.size() > 3) c.soft_delete(s, *unvisited[unvisited.size() / 2]);
    if (round == 2 && unvisited.size() > 3) c.hard_delete(s, *unvisited[1]);
    if (round == 3) {
      for (auto& i : c.items)
        if (!i.gone && !i.deleted && i.id == seen_ids.front()) {
          c.soft_delete(s, i);
          break;
        }
    }
    if (round == 4) {
      auto& back = c.named("delta", "es1");
      s.restore_json(c.admin, Kind::search_index, uuid_of(back.id)).value();
      back.deleted = false;
    }
  }
  CHECK(round > 4);
  // Strictly in list order (descending when walking back), hence no entity twice.
  for (std::size_t i = 1; i < seen_ids.size(); ++i) {
    auto prev = std::tie(seen_names[i - 1], seen_ids[i - 1]);
    auto here = std::tie(seen_names[i], seen_ids[i]);
    CHECK((forward ? prev < here : here < prev));
  }
  // Every entity live at the start and at the end was seen.
  auto end = expected(c.items, Include::non_deleted, {});
  for (const auto& i : start) {
    bool survived =
        std::any_of(end.begin(), end.end(), [&](const Item& e) { return e.id == i.id; });
    bool seen = std::find(seen_ids.begin(), seen_ids.end(), i.id) != seen_ids.end();
    if (survived) CHECK(seen);
  }
}

TEMPLATE_TEST_CASE("refused list requests: the exact error, nothing changed", "[list][errors]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  const auto before = test::dump(s);
  auto refused = [&](Kind kind, const ListOptions& o, Errc code, std::string_view words) {
    auto r = s.list_json(c.admin, kind, o);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind() == ErrorKind::bad_request);
    CHECK(r.error().code() == code);
    CHECK_THAT(r.error().message(), Catch::Contains(std::string(words)));
    CHECK(test::dump(s) == before);
  };
  auto limit = [](std::int64_t n) {
    ListOptions o;
    o.limit = n;
    return o;
  };
  refused(Kind::search_index, limit(-1), Errc::invalid_parameter, "limit");
  refused(Kind::search_index, limit(1'000'001), Errc::invalid_parameter, "limit");
  refused(Kind::search_index, limit(std::numeric_limits<std::int64_t>::min()),
          Errc::invalid_parameter, "limit");
  CHECK(s.list_json(c.admin, Kind::search_index, limit(1'000'000)).value().data.size() == 9);

  auto good = cursor_of("alpha", c.items[0].id);
  ListOptions both;
  both.before = good;
  both.after = good;
  auto r = s.list_json(c.admin, Kind::search_index, both);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code() == Errc::invalid_parameter);
  CHECK(r.error().message() == "Only one of before or after query parameter allowed");

  const std::string id = c.items[0].id;
  // {"name":"abcd","id":"<36 characters>"} is 59 bytes: its encoding ends in one '='.
  const auto padded = cursor_of("abcd", id);
  REQUIRE(padded.back() == '=');
  const std::vector<std::pair<std::string, std::string>> bad_cursors = {
      {"empty", ""},
      {"garbage", "!!!not a cursor!!!"},
      {"not base64url (standard alphabet)", "ab+/"},
      {"whitespace", " " + good},
      {"truncated by one character", good.substr(0, good.size() - 1)},
      {"truncated by a group", good.substr(0, good.size() - 4)},
      {"missing padding", padded.substr(0, padded.size() - 1)},
      {"padding in the middle", "YQ==" + good},
      {"not JSON", b64("name=alpha")},
      {"JSON not an object", b64(R"(["alpha",")" + id + R"("])")},
      {"JSON string", b64(R"("alpha")")},
      {"extra member", b64(R"({"name":"alpha","id":")" + id + R"(","x":1})")},
      {"missing id", b64(R"({"name":"alpha"})")},
      {"missing name", b64(R"({"id":")" + id + R"("})")},
      {"duplicate member", b64(R"({"name":"alpha","name":"beta","id":")" + id + R"("})")},
      {"id not a uuid", b64(R"({"name":"alpha","id":"not-a-uuid"})")},
      {"id in braces", b64(R"({"name":"alpha","id":"{)" + id + R"(}"})")},
      {"id not a string", b64(R"({"name":"alpha","id":7})")},
      {"name not a string", b64(R"({"name":1,"id":")" + id + R"("})")},
      {"name null", b64(R"({"name":null,"id":")" + id + R"("})")},
      {"name empty", b64(R"({"name":"","id":")" + id + R"("})")},
      {"name too long", b64(R"({"name":")" + std::string(600, 'x') + R"(","id":")" + id + R"("})")},
      {"trailing bytes after the JSON", b64(R"({"name":"alpha","id":")" + id + R"("}x)")},
      {"empty JSON object", b64("{}")},
  };
  for (const auto& [what, text] : bad_cursors) {
    INFO(what);
    ListOptions o;
    o.after = text;
    refused(Kind::search_index, o, Errc::invalid_parameter, "after");
    o.after.reset();
    o.before = text;
    refused(Kind::search_index, o, Errc::invalid_parameter, "before");
  }
  // The well-formed ones these were made from are accepted.
  ListOptions ok;
  ok.after = padded;
  CHECK(s.list_json(c.admin, Kind::search_index, ok).has_value());
  ok.after = good;
  CHECK(s.list_json(c.admin, Kind::search_index, ok).has_value());

  ListOptions fields;
  fields.fields = {"owners", "colour"};
  refused(Kind::glossary, fields, Errc::invalid_field, "Invalid field name colour");
  fields.fields = {""};
  refused(Kind::glossary, fields, Errc::invalid_field, "Invalid field name ");
  fields.fields = {"votes"};  // an extra of other kinds, not of domains
  refused(Kind::domain, fields, Errc::invalid_field, "Invalid field name votes");
  ListOptions include;
  include.include = static_cast<Include>(7);
  refused(Kind::search_index, include, Errc::invalid_parameter, "include");
  ListOptions service;
  service.service = "es1";
  refused(Kind::glossary, service, Errc::invalid_parameter, "service");
  service.service = "\"es1";
  refused(Kind::search_index, service, Errc::invalid_fqn, "");
  service.service = "";
  refused(Kind::search_index, service, Errc::invalid_fqn, "");
}

TEMPLATE_TEST_CASE("a page larger than a read batch lists every entity once, in order", "[list]",
                   CATALOG_STORE_FIXTURES) {
  // A page's records are read 1,024 at a time (Tx::read_batch): 1,100 cross the boundary.
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  ListOptions o;
  o.limit = 0;
  o.service = "es1";
  const auto before = s.list_json(c.admin, Kind::search_index, o).value().total;
  for (int i = 0; i < 1100; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "n%04d", i);
    c.create(s, name, "es1");
  }
  o.limit = 2000;
  auto page = s.list_json(c.admin, Kind::search_index, o).value();
  REQUIRE(page.data.size() == static_cast<std::size_t>(before) + 1100);
  std::vector<std::string> names;
  for (const auto& e : page.data) names.emplace_back(e.at("name").as_string());
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  auto typed = s.template list<SearchIndex>(c.admin, o).value();
  REQUIRE(typed.data.size() == page.data.size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(typed.data[i].name == names[i]);
}

TEMPLATE_TEST_CASE("a list key naming a missing entity or one of another kind is a storage error",
                   "[list][errors]", CATALOG_STORE_FIXTURES) {
  // The page's records are read together (get_each), each checked as it is decoded.
  TestType f;
  auto& s = f.store;
  auto c = build(s);
  namespace keys = engine::keys;
  auto put = [&](const std::string& key) {
    auto txn = s.backend().begin(storage::Mode::read_write).value();
    txn->put(key, "").value();
    txn->commit().value();
  };
  auto typed_error = [](const auto& r) { return r ? std::optional<Errc>() : r.error().code(); };
  ListOptions o;
  o.limit = 20;
  // The list answers a storage error naming the bad key's entity, JSON and typed alike, and the
  // store is unchanged.
  auto refused = [&](const std::string& words) {
    const auto before = test::dump(s);
    auto r = s.list_json(c.admin, Kind::search_index, o);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == Errc::storage);
    CHECK_THAT(r.error().message(), Catch::Contains(words));
    CHECK(typed_error(s.template list<SearchIndex>(c.admin, o)) == Errc::storage);
    CHECK(test::dump(s) == before);
  };
  SECTION("a missing entity, between two that exist") {
    const auto ghost = random_uuid();
    put(keys::list(Kind::search_index, false, keys::all_scope, "alpha2", ghost));
    refused("list index names a missing entity " + to_string(ghost));
  }
  SECTION("an entity of another kind") {
    const auto user = uuid_of(
        id_of(s.create_json(c.admin, Kind::user, parse(R"({"name":"u","email":"u@example.com"})"))
                  .value()));
    put(keys::list(Kind::search_index, false, keys::all_scope, "alpha2", user));
    refused("list index names an entity of another kind " + to_string(user));
  }
}

TEST_CASE("list is authorized once, as ViewBasic or ViewAll on the kind", "[list][auth]") {
  auto recorder = std::make_shared<test::RecordingAuthorizer>();
  auto options = test::test_options();
  options.authorizer = recorder;
  auto s = Store::in_memory(options).value();
  auto admin = s.principal("admin").value();
  s.create_json(admin, Kind::user, parse(R"({"name":"alice","email":"alice@example.com"})"))
      .value();
  s.create_json(admin, Kind::glossary, parse(R"({"name":"G","description":"g"})")).value();
  auto alice = s.principal("alice").value();
  auto calls = recorder->calls().size();

  ListOptions basic;
  CHECK(s.list_json(alice, Kind::glossary, basic).value().data.size() == 1);
  auto made = recorder->calls();
  REQUIRE(made.size() == calls + 1);
  CHECK(made.back().ops == std::vector<Operation>{Operation::view_basic});
  CHECK(made.back().kind == Kind::glossary);
  CHECK(made.back().owners == 0);

  ListOptions extra;
  extra.fields = {"owners"};
  CHECK(s.list_json(alice, Kind::glossary, extra).has_value());
  made = recorder->calls();
  REQUIRE(made.size() == calls + 2);
  CHECK(made.back().ops == std::vector<Operation>{Operation::view_all});

  recorder->deny(Operation::view_all);
  auto r = s.list_json(alice, Kind::glossary, extra);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind() == ErrorKind::forbidden);
  CHECK(s.list_json(alice, Kind::glossary, basic).has_value());
  // A bad request is refused before authorization.
  ListOptions bad;
  bad.limit = -1;
  auto before = recorder->calls().size();
  CHECK(s.list_json(alice, Kind::glossary, bad).error().kind() == ErrorKind::bad_request);
  CHECK(recorder->calls().size() == before);
}

namespace {

// Counts the key reads of every transaction, to show what a page costs.
struct Reads {
  std::size_t gets = 0;
  std::size_t scans = 0;
  std::size_t steps = 0;  // cursor next() calls
};

class CountingCursor final : public storage::Cursor {
 public:
  CountingCursor(std::unique_ptr<storage::Cursor> inner, Reads& reads)
      : inner_(std::move(inner)), reads_(reads) {}
  bool valid() const noexcept override { return inner_->valid(); }
  std::string_view key() const noexcept override { return inner_->key(); }
  std::string_view value() const noexcept override { return inner_->value(); }
  Result<void> next() override {
    ++reads_.steps;
    return inner_->next();
  }

 private:
  std::unique_ptr<storage::Cursor> inner_;
  Reads& reads_;
};

class CountingTransaction final : public storage::Transaction {
 public:
  CountingTransaction(std::unique_ptr<storage::Transaction> inner, Reads& reads)
      : inner_(std::move(inner)), reads_(reads) {}
  Result<std::optional<std::string>> get(std::string_view key) override {
    ++reads_.gets;
    return inner_->get(key);
  }
  Result<void> put(std::string_view key, std::string_view value) override {
    return inner_->put(key, value);
  }
  Result<bool> erase(std::string_view key) override { return inner_->erase(key); }
  Result<std::unique_ptr<storage::Cursor>> scan(const storage::Range& range,
                                                storage::Direction dir) override {
    ++reads_.scans;
    auto c = inner_->scan(range, dir);
    if (!c) return c.error();
    return std::unique_ptr<storage::Cursor>(new CountingCursor(std::move(*c), reads_));
  }
  Result<void> commit() override { return inner_->commit(); }

 private:
  std::unique_ptr<storage::Transaction> inner_;
  Reads& reads_;
};

class CountingBackend final : public storage::Backend {
 public:
  Reads reads;
  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override {
    auto t = inner_.begin(mode);
    if (!t) return t.error();
    return std::unique_ptr<storage::Transaction>(new CountingTransaction(std::move(*t), reads));
  }

 private:
  storage::MemoryBackend inner_;
};

}  // namespace

TEST_CASE("a page reads limit + 1 index keys wherever it starts, however many are deleted",
          "[list][cost]") {
  auto backend = std::make_unique<CountingBackend>();
  auto* counting = backend.get();
  auto s = Store::open(std::move(backend), test::test_options()).value();
  Catalog c;
  c.admin = s.principal("admin").value();
  s.create_json(c.admin, Kind::search_service, parse(R"({"name":"es","serviceType":"E"})")).value();
  // 150 live and 150 soft-deleted, interleaved by name.
  for (int i = 0; i < 300; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "i%03d", i);
    auto& item = c.create(s, name, "es");
    if (i % 2) c.soft_delete(s, item);
  }
  auto cost = [&](ListOptions o) {
    counting->reads = {};
    auto page = s.list_json(c.admin, Kind::search_index, o).value();
    REQUIRE(page.data.size() == static_cast<std::size_t>(o.limit));
    return counting->reads;
  };
  for (auto include : {Include::non_deleted, Include::deleted, Include::all}) {
    const std::size_t sources = include == Include::all ? 2 : 1;
    for (auto at : {"", "i010", "i150", "i280"}) {
      INFO("include " << static_cast<int>(include) << " at " << at);
      ListOptions o;
      o.include = include;
      o.limit = 5;
      if (*at) o.after = cursor_of(at, "00000000-0000-0000-0000-000000000000");
      auto forward = cost(o);
      // The merged sources step limit + 1 times in all, and each source's `total` sums its
      // counter's shards (at most counter_shards keys, however large the list); each rendered
      // entity reads a fixed number of keys (its record, its service, its owners and domains
      // edges).
      const std::size_t total_steps = sources * catalog::engine::keys::counter_shards;
      CHECK(forward.steps <= 6 + total_steps);
      CHECK(forward.gets <= sources + 5 * 3);
      CHECK(forward.scans <= 2 * sources + 5 * 2);
      o.after.reset();
      o.before = cursor_of(*at ? at : "i299", "ffffffff-ffff-ffff-ffff-ffffffffffff");
      auto backward = cost(o);
      CHECK(backward.steps <= 6 + total_steps);
      CHECK(backward.gets <= sources + 5 * 3);
    }
  }
  // `total` is read from counters, not counted: one scan of at most counter_shards keys per
  // list (live and deleted here), whatever the number of entities.
  ListOptions zero;
  zero.limit = 0;
  zero.include = Include::all;
  counting->reads = {};
  CHECK(s.list_json(c.admin, Kind::search_index, zero).value().total == 300);
  CHECK(counting->reads.steps <= 2 * catalog::engine::keys::counter_shards);
  CHECK(counting->reads.scans == 2);
  CHECK(counting->reads.gets <= 2);
}
