// Search (docs/SEMANTICS.md §16) through Store on every backend: what each write does to the next
// search, the ranking rules one by one, the query syntax, filters, facets, paging, typeahead,
// the errors of bad requests, reindex, and verify's check of the index after each step.

#include "support.hpp"

#include <catalog/detail/search/index.hpp>
#include <catalog/storage/memory_backend.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>

using catalog::AggregateRequest;
using catalog::Errc;
using catalog::Kind;
using catalog::SearchRequest;
using test::parse;

namespace {

struct Catalog {
  catalog::Store& s;
  catalog::Principal admin = s.principal("admin").value();

  test::json::object make(Kind kind, std::string_view body) {
    auto made = s.create_json(admin, kind, parse(body));
    INFO(body);
    INFO((made ? std::string() : made.error().message()));
    REQUIRE(made.has_value());
    return std::move(*made);
  }
  /// The names of a query's hits, in order.
  std::vector<std::string> names(SearchRequest r) {
    auto found = s.search(admin, r);
    INFO(r.q);
    REQUIRE(found.has_value());
    std::vector<std::string> out;
    for (const auto& h : found->hits)
      out.push_back(std::visit([](const auto& e) { return e.name; }, h.entity));
    return out;
  }
  std::vector<std::string> names(std::string q, bool deleted = false) {
    SearchRequest r;
    r.q = std::move(q);
    r.deleted = deleted;
    r.size = 100;
    return names(r);
  }
  void clean() {
    auto problems = s.verify();
    REQUIRE(problems.has_value());
    for (const auto& p : *problems) UNSCOPED_INFO(p.key << ": " << p.message);
    CHECK(problems->empty());
  }
};

using Names = std::vector<std::string>;

/// A filter every entity passes, which no facet key narrows: it takes `*` off the walk by name
/// (docs/SEARCH_INDEX.md, "Browsing") onto the scan of every search document.
catalog::SearchFilter passes_all() {
  return catalog::parse_search_filter(
             R"({"query":{"bool":{"must_not":[{"term":{"tags.tagFQN":"No.Such.Tag"}}]}}})")
      .value();
}

/// `r`'s answer, and the answer of `r` with passes_all(): the hits' kinds and ids in order, the
/// total and whether it is exact, and the facets must be the same.
void same_as_scan(catalog::Store& s, const catalog::Principal& who, const SearchRequest& r) {
  SearchRequest scan = r;
  scan.filter = passes_all();
  auto a = s.search(who, r);
  auto b = s.search(who, scan);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  INFO("q=" << r.q << " index=" << r.index << " from=" << r.from << " size=" << r.size);
  CHECK(a->total == b->total);
  CHECK(a->total_exact == b->total_exact);
  auto hits = [](const catalog::SearchResult& p) {
    std::vector<std::string> out;
    for (const auto& h : p.hits)
      out.push_back(std::visit([](const auto& e) { return catalog::to_string(e.id); }, h.entity));
    return out;
  };
  CHECK(hits(*a) == hits(*b));
  REQUIRE(a->aggregations.size() == b->aggregations.size());
  for (std::size_t i = 0; i < a->aggregations.size(); ++i) {
    CHECK(a->aggregations[i].field == b->aggregations[i].field);
    CHECK(a->aggregations[i].buckets == b->aggregations[i].buckets);
  }
}

// The highlights of query `q`'s one hit, by field.
std::map<std::string, std::vector<std::string>> highlights_of(const Catalog& c, std::string q) {
  SearchRequest r;
  r.q = std::move(q);
  auto found = c.s.search(c.admin, r);
  REQUIRE(found.has_value());
  REQUIRE(found->hits.size() == 1);
  return {found->hits[0].highlight.begin(), found->hits[0].highlight.end()};
}

}  // namespace

TEMPLATE_TEST_CASE("every write is searched by the next query: create, patch, delete, restore",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
  auto model = c.make(Kind::mlmodel, R"({"name":"churnPredictor","service":"mlflow",
      "algorithm":"xgboost","description":"Predicts which customers cancel their subscription"})");
  c.clean();
  CHECK(c.names("churn") == Names{"churnPredictor"});
  CHECK(c.names("customers") == Names{"churnPredictor"});
  CHECK(c.names("subscription") == Names{"churnPredictor"});

  // Patched words are found and the old ones are gone.
  auto id = test::uuid_of(model);
  REQUIRE(c.s.patch_json(c.admin, Kind::mlmodel, catalog::EntityKey::by_id(id),
                         parse(R"({"description":"Forecasts revenue per region"})"))
              .has_value());
  CHECK(c.names("subscription").empty());
  CHECK(c.names("revenue") == Names{"churnPredictor"});
  c.clean();

  // Changed in C++ (Store::update): the same, through the typed search too.
  REQUIRE(c.s.update<catalog::MlModel>(c.admin, catalog::EntityKey::by_id(id),
                                       [](catalog::MlModel& m) {
                                         m.description = "Forecasts revenue per warehouse";
                                         m.display_name = "Stock Forecaster";
                                       })
              .has_value());
  CHECK(c.names("warehouse") == Names{"churnPredictor"});
  CHECK(c.names("region").empty());
  {
    SearchRequest r;
    r.q = "forecaster";
    auto typed = c.s.search<catalog::MlModel>(c.admin, r);
    REQUIRE(typed.has_value());
    REQUIRE(typed->hits.size() == 1);
    CHECK(typed->hits[0].entity.display_name == "Stock Forecaster");
  }
  c.clean();

  // Soft-deleted: only with deleted=true; restored: back.
  REQUIRE(c.s.remove_json(c.admin, Kind::mlmodel, catalog::EntityKey::by_id(id), {}).has_value());
  CHECK(c.names("revenue").empty());
  CHECK(c.names("revenue", true) == Names{"churnPredictor"});
  c.clean();
  REQUIRE(c.s.restore_json(c.admin, Kind::mlmodel, id).has_value());
  CHECK(c.names("revenue") == Names{"churnPredictor"});
  CHECK(c.names("revenue", true).empty());

  // Hard-deleted: gone, index and all.
  catalog::DeleteOptions hard;
  hard.hard_delete = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::mlmodel, catalog::EntityKey::by_id(id), hard).has_value());
  CHECK(c.names("revenue").empty());
  CHECK(c.names("revenue", true).empty());
  c.clean();
}

TEMPLATE_TEST_CASE("a recursive delete takes a glossary's terms out of search, a restore brings "
                   "them back",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  auto g = c.make(Kind::glossary, R"({"name":"finance","description":"Money words"})");
  for (int i = 0; i < 30; ++i)
    c.make(Kind::glossary_term, R"({"glossary":"finance","name":"term)" + std::to_string(i) +
                                    R"(","description":"ledger entry )" + std::to_string(i) +
                                    "\"}");
  CHECK(c.names("ledger").size() == 30);
  catalog::DeleteOptions recursive;
  recursive.recursive = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary, catalog::EntityKey::by_id(test::uuid_of(g)),
                          recursive)
              .has_value());
  CHECK(c.names("ledger").empty());
  CHECK(c.names("ledger", true).size() == 30);
  c.clean();
  REQUIRE(c.s.restore_json(c.admin, Kind::glossary, test::uuid_of(g)).has_value());
  CHECK(c.names("ledger").size() == 30);
  recursive.hard_delete = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary, catalog::EntityKey::by_id(test::uuid_of(g)),
                          recursive)
              .has_value());
  CHECK(c.names("ledger", true).empty());
  CHECK(c.names("finance").empty());
  c.clean();
}

TEMPLATE_TEST_CASE("a recursive delete of a tree of 2,000 terms: out of search, back on restore, "
                   "gone when hard",
                   "[search][scale]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  auto g = c.make(Kind::glossary, R"({"name":"big","description":"A large tree"})");
  // A word of each child's own, of letters alone (a word of letters and digits has parts, which
  // other children's words would hold too).
  const auto own = [](int p, int k) {
    std::string w = "w";
    for (int n = p * 49 + k + 1; n > 0; n /= 26) w += static_cast<char>('a' + n % 26);
    return w;
  };
  // 40 terms with 49 children each.
  for (int p = 0; p < 40; ++p) {
    const auto parent = "p" + std::to_string(p);
    auto made = c.make(Kind::glossary_term, R"({"glossary":"big","name":")" + parent +
                                                R"(","description":"ledger parent"})");
    for (int k = 0; k < 49; ++k)
      c.make(Kind::glossary_term, R"({"glossary":"big","parent":"big.)" + parent +
                                      R"(","name":"c)" + std::to_string(k) +
                                      R"(","description":"ledger child )" + own(p, k) + "\"}");
  }
  const auto total = [&](std::string q, bool deleted) {
    SearchRequest r;
    r.q = std::move(q);
    r.deleted = deleted;
    r.size = 1;
    auto found = c.s.search(c.admin, r);
    REQUIRE(found.has_value());
    CHECK(found->total_exact);
    return found->total;
  };
  CHECK(total("ledger", false) == 2000);
  CHECK(total("child", false) == 1960);
  CHECK(c.names(own(39, 48)) == Names{"c48"});
  c.clean();

  catalog::DeleteOptions recursive;
  recursive.recursive = true;
  const auto term_id = [&](std::string_view fqn) {
    return test::uuid_of(
        c.s.get_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_fqn(std::string(fqn)), {})
            .value());
  };
  // A recursive soft delete of `id` takes `taken` terms out of search (`word`, of one of them,
  // named `name`, only with deleted=true); its restore brings all 2,000 back.
  const auto delete_and_restore = [&](Kind kind, const catalog::Uuid& id, std::int64_t taken,
                                      const std::string& word, const std::string& name) {
    REQUIRE(c.s.remove_json(c.admin, kind, catalog::EntityKey::by_id(id), recursive).has_value());
    CHECK(total("ledger", false) == 2000 - taken);
    CHECK(total("ledger", true) == taken);
    CHECK(c.names(word).empty());
    CHECK(c.names(word, true) == Names{name});
    c.clean();
    REQUIRE(c.s.restore_json(c.admin, kind, id).has_value());
    CHECK(total("ledger", false) == 2000);
    CHECK(total("ledger", true) == 0);
  };
  // One parent and its 49 children, then the glossary and all 2,000.
  delete_and_restore(Kind::glossary_term, term_id("big.p7"), 50, own(7, 3), "c3");
  delete_and_restore(Kind::glossary, test::uuid_of(g), 2000, own(39, 48), "c48");
  CHECK(c.names(own(0, 0)) == Names{"c0"});
  c.clean();

  recursive.hard_delete = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary, catalog::EntityKey::by_id(test::uuid_of(g)),
                          recursive)
              .has_value());
  CHECK(total("ledger", false) == 0);
  CHECK(total("ledger", true) == 0);
  CHECK(c.names("big").empty());
  c.clean();
}

TEMPLATE_TEST_CASE("names, displayNames and FQNs longer than a key holds: every key under "
                   "LMDB's 511 bytes, each entity found by search, typeahead and filters",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  const auto repeat = [](std::string_view s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  const std::string han = "\xe6\x9d\xb1";  // 東
  // Names at their limit (400 bytes), domains three deep (an FQN of 1,202 bytes), owners'
  // displayNames of 2 KB that differ only at their end.
  const std::string a = "a" + repeat(han, 133), b = "b" + repeat(han, 133),
                    d = "d" + repeat(han, 133);
  c.make(Kind::domain, R"({"name":")" + a + R"(","domainType":"Aggregate","description":"d"})");
  c.make(Kind::domain, R"({"name":")" + b + R"(","domainType":"Aggregate","description":"d",)"
                       R"("parent":")" + a + "\"}");
  c.make(Kind::domain, R"({"name":")" + d + R"(","domainType":"Aggregate","description":"d",)"
                       R"("parent":")" + a + "." + b + "\"}");
  const std::string ab = a + "." + b, abd = ab + "." + d;
  const std::string owner_text = "Owner " + repeat(han, 700);
  auto one = c.make(Kind::user, R"({"name":"one","email":"one@example.com","displayName":")" +
                                    owner_text + R"( one"})");
  auto two = c.make(Kind::user, R"({"name":"two","email":"two@example.com","displayName":")" +
                                    owner_text + R"( two"})");
  c.make(Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  const std::string shown = "Index " + repeat("\xe7\x95\x8c", 1000);  // 界
  const std::string first = "i" + repeat(han, 133), second = "j" + repeat(han, 133);
  c.make(Kind::search_index, R"({"service":"es","name":")" + first + R"(","displayName":")" +
                                 shown + R"( first","description":"needle","fields":[],)"
                                 R"("domains":[")" + abd + R"("],"owners":[{"id":")" +
                                 test::id_of(one) + R"(","type":"user"}]})");
  c.make(Kind::search_index, R"({"service":"es","name":")" + second + R"(","displayName":")" +
                                 shown + R"( second","description":"needle","fields":[],)"
                                 R"("domains":[")" + ab + R"("],"owners":[{"id":")" +
                                 test::id_of(two) + R"(","type":"user"}]})");
  c.clean();

  // Every key of the store, the index's too, fits LMDB's limit.
  {
    auto txn = c.s.backend().begin(catalog::storage::Mode::read_only).value();
    auto all = txn->scan(catalog::storage::Range{}, catalog::storage::Direction::forward);
    REQUIRE(all.has_value());
    std::size_t longest = 0, keys = 0;
    for (auto& cursor = *all; cursor->valid();) {
      longest = std::max(longest, cursor->key().size());
      ++keys;
      REQUIRE(cursor->next());
    }
    CHECK(keys > 50);
    CHECK(longest <= 511);
  }

  CHECK(c.names("needle") == Names{first, second});
  CHECK(c.names(repeat("\xe7\x95\x8c", 2) + " first") == Names{first, second});
  CHECK(c.names("name:" + first) == Names{first});
  // Typeahead by a displayName's first 300 bytes, and by a whole name.
  {
    auto s = c.s.suggest(c.admin, "index " + repeat("\xe7\x95\x8c", 98), "all", 10);
    REQUIRE(s.has_value());
    REQUIRE(s->size() == 2);
    CHECK((*s)[0].text == first);
    auto n = c.s.suggest(c.admin, second, "all", 10);
    REQUIRE(n.has_value());
    REQUIRE_FALSE(n->empty());
    CHECK(n->front().text == second);
  }
  // Filters by values whose keys are cut alike: each finds its own entity only.
  const auto filtered = [&](std::string_view field, const std::string& value) {
    SearchRequest r;
    r.q = "needle";
    r.filter = catalog::parse_search_filter(R"({"query":{"bool":{"filter":[{"term":{")" +
                                            std::string(field) + R"(":")" + value + R"("}}]}}})")
                   .value();
    return c.names(r);
  };
  CHECK(filtered("owners.displayName", owner_text + " one") == Names{first});
  CHECK(filtered("owners.displayName", owner_text + " two") == Names{second});
  CHECK(filtered("owners.displayName", owner_text).empty());
  CHECK(filtered("domains.fullyQualifiedName", abd) == Names{first});
  CHECK(filtered("domains.fullyQualifiedName", ab) == Names{second});
  CHECK(filtered("domains.fullyQualifiedName", a).empty());
  // Facets count the whole values.
  {
    SearchRequest r;
    r.q = "needle";
    auto found = c.s.search(c.admin, r);
    REQUIRE(found.has_value());
    for (const auto& facet : found->aggregations) {
      if (facet.field == "owners.displayName")
        CHECK(facet.buckets == std::vector<catalog::FacetBucket>{{owner_text + " one", 1},
                                                                 {owner_text + " two", 1}});
      if (facet.field == "domains.fullyQualifiedName")
        CHECK(facet.buckets ==
              std::vector<catalog::FacetBucket>{{ab, 1}, {abd, 1}});
    }
  }
  // A new owner displayName, longer still, reaches the facets and filters of what it owns.
  REQUIRE(c.s.patch_json(c.admin, Kind::user, catalog::EntityKey::by_id(test::uuid_of(one)),
                         parse(R"({"displayName":")" + owner_text + owner_text + "\"}"))
              .has_value());
  CHECK(filtered("owners.displayName", owner_text + owner_text) == Names{first});
  CHECK(filtered("owners.displayName", owner_text + " one").empty());
  c.clean();
}

TEMPLATE_TEST_CASE("ranking: exact name, then words matched, then field weights, stems below",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"glossary"})");
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"orderItems","description":"Lines of an order"})");
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"orders","description":"What customers bought"})");
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"shipment","description":"Ships orders and order items"})");
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"invoice","description":"Billing of an order"})");

  // The exact name first, whatever the scores.
  auto orders = c.names("orders");
  REQUIRE(!orders.empty());
  CHECK(orders.front() == "orders");
  // A name match above a description match (weights 10 against 2).
  SearchRequest items;
  items.q = "items";
  items.index = "glossaryTerm";
  CHECK(c.names(items).front() == "orderItems");
  // More distinct query words matched first: two words (orderItems by its name's parts,
  // shipment by its description), then one (invoice).
  CHECK(c.names("order items") == Names{"orderItems", "shipment", "invoice"});
  CHECK(c.names("billing shipment").size() == 2);
  // Unstemmed above stemmed: "run" as written, then "running" by its stem.
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"a1","description":"running fast"})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"a2","description":"run fast"})");
  CHECK(c.names("description:run") == Names{"a2", "a1"});
  CHECK(c.names("description:runs").size() == 2);
}

TEMPLATE_TEST_CASE("highlights: each matching word wrapped, stems where fields are stemmed, a "
                   "description's fragment around its first match",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"glossary"})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"customerOrders",
      "displayName":"Customer Orders Running","synonyms":["buyer orders","purchases"],
      "description":"Every order a customer placed with the shop, from the first basket to the )"
                              R"(final invoice, kept for seven years as the law asks of any )"
                              R"(business that sells goods. A refund reverses an order; each )"
                              R"(refund is its own line, and partial refunds are allowed. )"
                              R"(Orders older than seven years are archived, never deleted."})");
  // The highlights of the query's one hit, by field.
  auto lit = [&](std::string q) { return highlights_of(c, std::move(q)); };
  const std::string on = R"(<span class="text-highlighter">)", off = "</span>";
  // A name's part lights the whole run it is in; every field that matched is there, no other.
  auto orders = lit("orders");
  CHECK(orders["name"] == std::vector<std::string>{on + "customerOrders" + off});
  CHECK(orders["displayName"] == std::vector<std::string>{"Customer " + on + "Orders" + off +
                                                          " Running"});
  CHECK(orders["synonyms"] == std::vector<std::string>{"buyer " + on + "orders" + off});
  // The description by its stem ("order"), from its start: the match is in its first words.
  CHECK(orders["description"] ==
        std::vector<std::string>{"Every " + on + "order" + off +
                                 " a customer placed with the shop, from the first basket to the "
                                 "final invoice, kept for seven years as the law asks of any "
                                 "business that sells"});
  CHECK(orders.size() == 4);
  // Stems light displayName and description, not names or synonyms.
  auto run = lit("run");
  CHECK(run.size() == 1);
  CHECK(run["displayName"] ==
        std::vector<std::string>{"Customer Orders " + on + "Running" + off});
  // A description: about 150 characters from a third of that before its first match, whole
  // words at both ends, every match inside wrapped.
  auto refund = lit("refund");
  REQUIRE(refund["description"].size() == 1);
  const auto& fragment = refund["description"][0];
  CHECK(fragment.rfind(" the law asks of any business that sells goods. A " + on + "refund" + off +
                           " reverses",
                       0) == 0);
  CHECK(fragment.size() >= 150 + 3 * (on.size() + off.size()));
  CHECK(fragment.substr(fragment.size() - 12) == "Orders older");
  CHECK(fragment.find("each " + on + "refund" + off + " is its own line") != std::string::npos);
  CHECK(fragment.find(on + "refunds" + off) != std::string::npos);
  CHECK(fragment.find("archived") == std::string::npos);
  CHECK(refund.count("name") == 0);
  // Only the fields that matched: one synonym, and of the list only that one.
  auto purchases = lit("purchases");
  CHECK(purchases.size() == 1);
  CHECK(purchases["synonyms"] == std::vector<std::string>{on + "purchases" + off});
}

TEST_CASE("highlights of Han, Kana and Hangul: the matched pairs wrapped, a description cut "
          "between characters",
          "[search]") {
  test::MemoryFixture f;
  Catalog c{f.store};
  std::string description;
  for (int i = 0; i < 20; ++i) description += "顧客の購買履歴に基づいて";
  description += "解約";
  for (int i = 0; i < 20; ++i) description += "を予測するモデルです";
  c.make(Kind::glossary, R"({"name":"g","description":"glossary"})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"数据模型","description":")" +
                                  description + R"("})");
  auto lit = [&](std::string q) { return highlights_of(c, std::move(q)); };
  const std::string on = R"(<span class="text-highlighter">)", off = "</span>";
  // A name: only the characters of the matched pair.
  CHECK(lit("据模")["name"] == std::vector<std::string>{"数" + on + "据模" + off + "型"});
  CHECK(lit("数据模型")["name"] == std::vector<std::string>{on + "数据模型" + off});
  // A description of 442 characters without a space: 150 of them, 50 before the match.
  auto cut = lit("解約");
  REQUIRE(cut["description"].size() == 1);
  const auto& fragment = cut["description"][0];
  const auto at = fragment.find(on + "解約" + off);
  REQUIRE(at != std::string::npos);
  CHECK(fragment.find(on, at + 1) == std::string::npos);
  auto characters = [](std::string_view s) {
    return std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; });
  };
  CHECK(characters(fragment.substr(0, at)) == 50);
  CHECK(characters(fragment) - characters(on) - characters(off) == 150);
  CHECK(description.find(fragment.substr(0, at) + "解約") != std::string::npos);
}

TEST_CASE("highlights of Hangul in jamo, Kana with combining marks and halfwidth Katakana: the "
          "characters as normalized text pairs them, never a part of one",
          "[search]") {
  test::MemoryFixture f;
  Catalog c{f.store};
  // 한국어 as conjoining jamo (NFD, as some systems write it), がくせい with its voiced mark
  // combining, and ﾃﾞｰﾀ in halfwidth Katakana (ﾃﾞ is one character to a reader).
  const std::string hangul = "\u1112\u1161\u11AB\u1100\u116E\u11A8\u110B\u1165";
  const std::string kana = "\u304B\u3099\u304F\u305B\u3044";
  const std::string halfwidth = "\uFF83\uFF9E\uFF70\uFF80";
  c.make(Kind::glossary, R"({"name":"g","description":"glossary"})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"t1","description":"d","displayName":")" + hangul + R"("})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"t2","description":"d","displayName":")" + kana + R"("})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"t3","description":"d","displayName":")" + halfwidth + R"("})");
  // The one highlight of the one hit: its displayName.
  auto lit = [&](std::string q) {
    auto h = highlights_of(c, std::move(q));
    REQUIRE(h.size() == 1);
    REQUIRE(h["displayName"].size() == 1);
    return h["displayName"][0];
  };
  const std::string on = R"(<span class="text-highlighter">)", off = "</span>";
  // 한국 typed as syllables (NFC): the first two syllables' jamo are wrapped, whole.
  CHECK(lit("\uD55C\uAD6D") == on + hangul.substr(0, 18) + off + hangul.substr(18));
  // がく typed precomposed: か and its mark together.
  CHECK(lit("\u304C\u304F") == on + kana.substr(0, 9) + off + kana.substr(9));
  // デー typed in full width: ﾃﾞ and ｰ.
  CHECK(lit("\u30C7\u30FC") == on + halfwidth.substr(0, 9) + off + halfwidth.substr(9));
}

TEMPLATE_TEST_CASE("query syntax: phrases, prefixes, required and excluded words, fields, FQN "
                   "parts, odd strings read as words",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  c.make(Kind::search_index, R"({"name":"customer_orders","service":"es",
      "description":"Orders placed by customers last year",
      "fields":[{"name":"orderId","dataType":"KEYWORD","description":"the order key"},
                {"name":"address","dataType":"OBJECT","children":[{"name":"postalCode","dataType":"TEXT"}]}]})");
  c.make(Kind::search_index, R"({"name":"year_report","service":"es",
      "description":"Customers placed last orders","fields":[{"name":"total","dataType":"LONG"}]})");

  // year_report's description holds "customers" and "orders", which share the parts' stems:
  // found, below the name's match.
  CHECK(c.names("customerOrders") == Names{"customer_orders", "year_report"});
  CHECK(c.names("name:customerOrders") == Names{"customer_orders"});
  CHECK(c.names("\"placed by customers\"") == Names{"customer_orders"});
  CHECK(c.names("\"customers placed\"") == Names{"year_report"});
  CHECK(c.names("postal*") == Names{"customer_orders"});
  CHECK(c.names("postalcode") == Names{"customer_orders"});
  // A prefix on a typed word that splits matches where all its parts stand, the last as a
  // prefix, as the word without `*` does: not where any one part does.
  CHECK(c.names("customer_ord*") == Names{"customer_orders"});
  CHECK(c.names("customer-ord*") == Names{"customer_orders"});
  CHECK(c.names("year_rep*") == Names{"year_report"});
  CHECK(c.names("zzqq-ord*").empty());
  CHECK(c.names("report_ord*").empty());
  CHECK(c.names("year -customer_ord*") == Names{"year_report"});
  CHECK(c.names("+report year") == Names{"year_report"});
  CHECK(c.names("year -report") == Names{"customer_orders"});
  CHECK(c.names("year NOT report") == Names{"customer_orders"});
  CHECK(c.names("customers AND report") == Names{"year_report"});
  CHECK(c.names("name:report") == Names{"year_report"});
  CHECK(c.names("description:report").empty());
  CHECK(c.names("es.customer_orders").front() == "customer_orders");
  CHECK(c.names("service:es").size() == 2);
  // Odd strings are words, never errors.
  for (std::string q : {"\"unbalanced", "+&[]", "-", "*", "x:y", "report)", "((year", "a:b:c",
                        "AND", "OR report", "NOT", "\\", "%", "report*"}) {
    SearchRequest r;
    r.q = q;
    INFO(q);
    CHECK(c.s.search(c.admin, r).has_value());
  }
  CHECK(c.names("report*") == Names{"year_report"});
  CHECK(c.names("*").size() == 3);  // the service too (index all)
}

TEMPLATE_TEST_CASE("phrases: in names, in descriptions with escapes and non-ASCII text, in "
                   "fields read from other entities, and across word boundaries",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::search_service, R"({"name":"warehouse_es","serviceType":"ElasticSearch"})");
  // A description the record stores with escapes (quotes, a newline, a tab, a slash).
  c.make(Kind::search_index, R"({"name":"quoted","service":"warehouse_es",
      "description":"He said \"red\tgreen\" and\nblue/white paint",
      "fields":[{"name":"f","dataType":"TEXT"}]})");
  c.make(Kind::search_index, R"({"name":"cafe_menu","displayName":"Café Menu Board",
      "service":"warehouse_es","description":"Crème brûlée au café",
      "fields":[{"name":"f","dataType":"TEXT"}]})");
  c.make(Kind::search_index, R"({"name":"columns_only","service":"warehouse_es",
      "description":null,
      "fields":[{"name":"f","dataType":"TEXT","description":"amber and teal columns"}]})");
  c.make(Kind::search_index, R"({"name":"green_blue","service":"warehouse_es",
      "description":"blue, then green","fields":[{"name":"f","dataType":"TEXT"}]})");

  CHECK(c.names(R"("red green")") == Names{"quoted"});
  CHECK(c.names(R"("and blue")") == Names{"quoted"});           // across the newline
  CHECK(c.names(R"("blue white paint")") == Names{"quoted"});   // across the slash
  CHECK(c.names(R"("he red")").empty());                        // not consecutive
  CHECK(c.names(R"("creme brulee")") == Names{"cafe_menu"});    // folded, marks removed
  CHECK(c.names(R"("cafe menu board")") == Names{"cafe_menu"});  // the displayName
  CHECK(c.names(R"("amber and teal")") == Names{"columns_only"});  // a column's description
  CHECK(c.names(R"("blue green")").empty());
  CHECK(c.names(R"("blue then green")") == Names{"green_blue"});
  CHECK(c.names(R"("warehouse es")").size() == 5);  // the service, and its name in the others
  CHECK(c.names(R"(description:"amber and teal")").empty());  // scoped: not a column
  c.clean();
}

TEMPLATE_TEST_CASE("a phrase of two words is found from the postings, as writes change the "
                   "words that follow each word",
                   "[search]", CATALOG_STORE_FIXTURES) {
  // Each posting holds the words that follow its word in each field (docs/SEARCH_INDEX.md,
  // "Phrases"): a phrase of two words is answered from them, one of three or more from the text
  // where they allow it.
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  auto pie = c.make(Kind::glossary_term, R"({"glossary":"g","name":"pie",
      "description":"red apple tart, apple pie and scene scene",
      "synonyms":["big data","cloud store"]})");
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"sauce",
      "description":"apple red sauce"})");
  const auto id = test::uuid_of(pie);
  auto patch = [&](std::string_view description) {
    REQUIRE(c.s.patch_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_id(id),
                           parse(R"({"description":")" + std::string(description) + "\"}"))
                .has_value());
  };
  CHECK(c.names(R"("red apple")") == Names{"pie"});
  CHECK(c.names(R"("apple red")") == Names{"sauce"});  // the order counts
  CHECK(c.names(R"("tart apple")") == Names{"pie"});   // across the comma
  CHECK(c.names(R"("scene scene")") == Names{"pie"});  // a word after itself
  CHECK(c.names(R"("apple sauce")").empty());          // both words, never one after the other
  // A word read for a plain clause first, then for the phrase with what follows it.
  CHECK(c.names(R"(red +"red apple")") == Names{"pie"});
  // Each synonym is a text of its own: the field's texts do not run on into each other.
  CHECK(c.names(R"(synonyms:"big data")") == Names{"pie"});
  CHECK(c.names(R"(synonyms:"data cloud")").empty());
  // Three words: each one followed by the next somewhere (red apple, apple pie), but not the
  // three in a row.
  CHECK(c.names(R"("red apple pie")").empty());
  CHECK(c.names(R"("apple pie and")") == Names{"pie"});
  c.clean();

  // A word put between the two takes the phrase away; the new pairs are found.
  patch("red green apple tart");
  CHECK(c.names(R"("red apple")").empty());
  CHECK(c.names(R"("red green")") == Names{"pie"});
  CHECK(c.names(R"("green apple")") == Names{"pie"});
  CHECK(c.names(R"("apple pie")").empty());
  c.clean();
  // Taken out again, it is back; the phrase counts where the word is the description's last.
  patch("tart of red apple");
  CHECK(c.names(R"("red apple")") == Names{"pie"});
  CHECK(c.names(R"("green apple")").empty());
  CHECK(c.names(R"("apple tart")").empty());
  c.clean();
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_id(id), {})
              .has_value());
  CHECK(c.names(R"("red apple")").empty());
  CHECK(c.names(R"("red apple")", true) == Names{"pie"});
  c.clean();
}

TEMPLATE_TEST_CASE("a phrase reads a word that splits as its parts: customerOrders holds "
                   "\"customer orders\"",
                   "[search]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §16: customerOrders, customer_orders and customer orders find each other;
  // a phrase reads a word whole or as its parts one after another (docs/SEARCH_INDEX.md,
  // "Phrases").
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  for (auto [name, description] :
       {std::pair{"camel", "the customerOrders table"}, {"snake", "the customer_orders table"},
        {"spaced", "the customer orders table"}, {"other", "orders of customers"},
        {"joined", "the customerorders table"}, {"http", "calls getHTTPResponse2 twice"}}) {
    c.make(Kind::glossary_term, std::string(R"({"glossary":"g","name":")") + name +
                                    R"(","description":")" + description + "\"}");
  }
  CHECK(c.names("\"customer orders\"") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("\"orders table\"") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("\"the customer\"") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("\"the customer orders table\"") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("\"customerorders table\"") == Names{"camel", "joined"});
  CHECK(c.names("\"orders customer\"").empty());
  // A phrase word typed whole that splits is read whole or as its parts too, so it finds a text
  // that splits it.
  // (Ranked by BM25F: the reading of three words scores above that of two.)
  CHECK(c.names("\"customerOrders table\"") == Names{"camel", "snake", "spaced", "joined"});
  CHECK(c.names("\"the customerOrders\"") == Names{"camel", "snake", "spaced", "joined"});
  CHECK(c.names("\"the customer_orders table\"") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("+\"customerOrders table\" -joined") == Names{"camel", "snake", "spaced"});
  CHECK(c.names("\"customerOrders the\"").empty());
  CHECK(c.names("\"getHTTPResponse2 twice\"") == Names{"http"});
  CHECK(c.names("\"getHTTP response2\"") == Names{"http"});
  CHECK(c.names("\"getHTTP twice\"").empty());
  CHECK(c.names("\"http response\"") == Names{"http"});
  CHECK(c.names("\"get http response 2 twice\"") == Names{"http"});
  CHECK(c.names("\"calls get\"") == Names{"http"});
  CHECK(c.names("\"response twice\"").empty());  // the last part is 2
  // The highlight of such a phrase lights the word that holds it.
  auto lit = highlights_of(c, "\"http response\"");
  const std::string lit_word = R"(<span class="text-highlighter">getHTTPResponse2</span>)";
  CHECK(lit["description"] == std::vector<std::string>{"calls " + lit_word + " twice"});
  // And that of a word typed whole lights the parts of a text that splits it.
  lit = highlights_of(c, "description:\"customerOrders table\" -camel -joined -spaced");
  const std::string open = R"(<span class="text-highlighter">)", close = "</span>";
  CHECK(lit["description"] == std::vector<std::string>{"the " + open + "customer" + close + "_" +
                                                       open + "orders" + close + " " + open +
                                                       "table" + close});
  // One quoted word that splits is a phrase of its parts too: it finds them one after another
  // (and the word whole), not apart, as the word unquoted does.
  const auto sorted = [](Names names) {
    std::sort(names.begin(), names.end());
    return names;
  };
  CHECK(sorted(c.names("\"customerOrders\"")) == Names{"camel", "joined", "snake", "spaced"});
  CHECK(sorted(c.names("\"customer_orders\"")) == Names{"camel", "snake", "spaced"});
  CHECK(sorted(c.names("description:\"customerOrders\"")) ==
        Names{"camel", "joined", "snake", "spaced"});
  CHECK(sorted(c.names("\"ordersCustomer\"")).empty());
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"reversed","description":"orders then customer"})");
  const auto unquoted = c.names("customerOrders");
  CHECK(std::find(unquoted.begin(), unquoted.end(), "reversed") != unquoted.end());
  CHECK(sorted(c.names("\"customerOrders\"")) == Names{"camel", "joined", "snake", "spaced"});
  CHECK(sorted(c.names("\"customerOrders\" -camel -snake")) == Names{"joined", "spaced"});
  c.clean();
}

TEMPLATE_TEST_CASE("a phrase finds what reading the text finds, over random texts",
                   "[search]", CATALOG_STORE_FIXTURES) {
  // Phrases come from the postings' following words (two words) or from them and the text
  // (more): against search::has_phrase on each description, over texts made of camelCase,
  // digits, accents, ligatures, CJK and repeated words between various separators (seeded).
  // The texts also hold words the queries type whole split apart (X-1 for x1), which a phrase
  // finds as the word's parts.
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  const std::vector<std::string> vocabulary{"alpha", "Beta", "gamma", "getHTTPResponse2", "déjà",
                                            "Straße", "東京都", "x1", "the", "ﬁle", "for", "data",
                                            "X-1", "get_http-Response 2"};
  // Separators as written in JSON: two are escapes.
  const std::vector<std::string> separators{" ", "  ", ", ", "-", "\\n", "/", ". ", "\\\"", "_"};
  std::mt19937 rng(20261129);
  auto pick = [&](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
  };
  std::map<std::string, std::string> descriptions;  // name: the description's text
  for (int i = 0; i < 60; ++i) {
    std::string text;
    const int words = std::uniform_int_distribution<int>(1, 12)(rng);
    for (int w = 0; w < words; ++w) text += (w > 0 ? pick(separators) : "") + pick(vocabulary);
    const auto name = "t" + std::to_string(i);
    c.make(Kind::glossary_term,
           R"({"glossary":"g","name":")" + name + R"(","description":")" + text + "\"}");
    // The text as stored: the two escapes above read back as a newline and a quote.
    std::string stored;
    for (std::size_t k = 0; k < text.size(); ++k) {
      if (text[k] == '\\' && k + 1 < text.size()) {
        stored += text[k + 1] == 'n' ? '\n' : text[k + 1];
        ++k;
      } else {
        stored += text[k];
      }
    }
    descriptions[name] = stored;
  }
  int answered = 0;  // queries that some description answers
  int by_parts = 0;  // texts only the reading as parts finds
  // The queries also name the parts of the words that split (getHTTPResponse2: get, http,
  // response, 2), which a phrase reads one after another.
  auto asked = vocabulary;
  for (const char* part : {"get", "http", "response", "2", "x", "1"}) asked.push_back(part);
  for (const char* whole : {"x1", "getHTTPResponse2"}) asked.push_back(whole);  // asked more often
  for (int q = 0; q < 150; ++q) {
    const int n = std::uniform_int_distribution<int>(2, 3)(rng);
    std::string typed;
    for (int w = 0; w < n; ++w) typed += (w > 0 ? " " : "") + pick(asked);
    // The phrase as typed, and with the words that split read as their parts.
    const auto words = catalog::search::words(typed);
    std::vector<std::string> phrase;
    for (const auto& w : words) phrase.push_back(w.whole);
    const auto as_parts = catalog::search::phrase_as_parts(words);
    Names expected;
    for (const auto& [name, text] : descriptions) {
      const bool typed_reading = catalog::search::has_phrase(text, phrase);
      if (typed_reading || (!as_parts.empty() && catalog::search::has_phrase(text, as_parts))) {
        expected.push_back(name);
        if (!typed_reading) ++by_parts;
      }
    }
    auto found = c.names("description:\"" + typed + "\"");
    std::sort(found.begin(), found.end());
    INFO(typed);
    CHECK(found == expected);
    if (!expected.empty()) ++answered;
  }
  // Both kinds of answer are common: the comparison says something.
  INFO(answered << " queries answered, " << by_parts << " texts found by parts only");
  CHECK(answered > 30);
  CHECK(by_parts > 5);
  CHECK(answered < 120);
  c.clean();
}

namespace {

/// 1,100 terms, each description saying "build", and 1,050 of them "build 3": both parts of
/// `build3` are frequent. "alpha" stands in the descriptions of 11 of them, in the names of 11
/// others (with "3" in the description only: not a match of `alpha3`, whose parts must share a
/// field), as "alphas" (a stem) in the descriptions of 11 more, and one says "alpha3" itself.
void make_parts_catalog(Catalog& c) {
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  for (int i = 0; i < 1100; ++i) {
    std::string name = "t" + std::to_string(1000 + i);
    std::string description = i == 7      ? "alpha3 build 3 of the release"
                              : i < 1050 ? "build 3 of the release"
                                         : "build of the release";
    if (i % 100 == 0) description += " alpha";
    if (i % 100 == 25) description += " alphas";
    if (i % 100 == 50) name = "alpha_" + name;
    c.make(Kind::glossary_term,
           R"({"glossary":"g","name":")" + name + R"(","description":")" + description + "\"}");
  }
}

/// What make_parts_catalog's terms answer to `alpha3`: the descriptions holding both parts (or
/// the word), those with the word or "alpha" itself before those with "alphas".
void check_parts_answers(Catalog& c) {
  Names plain, stemmed;
  for (int i = 0; i < 1100; ++i) {
    const auto name = "t" + std::to_string(1000 + i);
    if (i == 7 || i % 100 == 0) plain.push_back(name);
    if (i % 100 == 25) stemmed.push_back(name);
  }
  for (const auto* q : {"alpha3", "description:alpha3", "+alpha3 +release"}) {
    INFO(q);
    auto found = c.names(q);
    REQUIRE(found.size() == plain.size() + stemmed.size());
    Names first(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(plain.size()));
    Names last(found.begin() + static_cast<std::ptrdiff_t>(plain.size()), found.end());
    std::sort(first.begin(), first.end());
    std::sort(last.begin(), last.end());
    CHECK(first == plain);
    CHECK(last == stemmed);
  }
  CHECK(c.names("name:alpha3").empty());
  CHECK(c.names("alpha3 -t1007").size() == plain.size() + stemmed.size() - 1);
  {
    // The rarest part typed last; and another clause bringing in every term: the 23 that
    // match both words come first.
    auto found = c.names("3alpha");
    std::sort(found.begin(), found.end());
    Names all23 = plain;
    all23.insert(all23.end(), stemmed.begin(), stemmed.end());
    std::sort(all23.begin(), all23.end());
    CHECK(found == all23);
    SearchRequest r;
    r.q = "alpha3 release";
    r.size = 23;
    auto first = c.names(r);
    std::sort(first.begin(), first.end());
    CHECK(first == all23);
  }
  // Both parts frequent: each part's postings read whole. The word's document frequency is
  // its rarer part's (1,050), also where another clause read the other part (1,100) first: a
  // term's score is then the sum of its scores for each word alone.
  SearchRequest every;
  every.q = "build3";
  every.size = 1100;
  auto all = c.s.search(c.admin, every);
  REQUIRE(all.has_value());
  CHECK(all->total == 1050);
  CHECK(all->total_exact);
  auto score_of = [&](std::string q, std::string_view name) {
    SearchRequest r;
    r.q = std::move(q);
    r.size = 1100;
    auto found = c.s.search(c.admin, r);
    REQUIRE(found.has_value());
    for (const auto& h : found->hits)
      if (std::visit([](const auto& e) { return e.name; }, h.entity) == name) return h.score;
    FAIL("no hit " << name << " for " << r.q);
    return 0.0;
  };
  for (const auto* name : {"t1001", "t1100"}) {
    INFO(name);
    CHECK(score_of("build build3", name) ==
          Approx(score_of("build", name) + score_of("build3", name)));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("a word with parts, one of them frequent, matches where its parts share a "
                   "field, stems ranked below",
                   "[search][scale]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  make_parts_catalog(c);
  check_parts_answers(c);
}

TEST_CASE("a posting's bytes keep the words that follow its word, field by field, and refuse "
          "what encode_posting does not make",
          "[search]") {
  namespace si = catalog::engine::search_index;
  std::array<std::uint32_t, si::field_count> lengths{};
  lengths[static_cast<std::size_t>(si::Field::name)] = 3;
  lengths[static_cast<std::size_t>(si::Field::description)] = 40;
  std::vector<std::uint32_t> following{si::word_hash("pie"), si::word_hash("tart")};
  std::sort(following.begin(), following.end());  // as Term::next holds them
  const std::vector<si::Term> terms{si::Term{"apple", si::Field::name, 1, {}},
                                    si::Term{"apple", si::Field::description, 2, following}};
  const auto bytes = si::encode_posting(terms, lengths);
  std::vector<si::PostingField> fields;
  si::PostingNext next;
  REQUIRE(si::decode_posting(bytes, fields, &next));
  REQUIRE(fields.size() == 2);
  CHECK(fields[0].field == si::Field::name);
  CHECK(fields[1].field == si::Field::description);
  CHECK(fields[1].count == 2);
  CHECK(fields[1].length_class == si::length_class(40));
  CHECK(next.ends == std::vector<std::uint32_t>{0, 2});
  CHECK(next.hashes == terms[1].next);
  // Without `next`, the same fields, the hashes skipped.
  std::vector<si::PostingField> plain;
  REQUIRE(si::decode_posting(bytes, plain));
  REQUIRE(plain.size() == 2);
  CHECK(plain[1].count == 2);
  // Cut anywhere but after the first field's three bytes, it is refused.
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    INFO(n);
    CHECK(si::decode_posting(bytes.substr(0, n), plain) == (n == 3));
  }
  // Hashes out of order, or twice, are refused where they are read (a phrase's words; verify
  // compares a posting's bytes whole).
  si::PostingNext scratch;
  auto swapped = si::encode_posting(
      std::vector<si::Term>{si::Term{"apple", si::Field::description, 2, {9, 7}}}, lengths);
  CHECK_FALSE(si::decode_posting(swapped, plain, &scratch));
  auto twice = si::encode_posting(
      std::vector<si::Term>{si::Term{"apple", si::Field::description, 2, {7, 7}}}, lengths);
  CHECK_FALSE(si::decode_posting(twice, plain, &scratch));
  CHECK(si::word_hash("pie") == 0x6a40feb5u);  // stored: the same on every platform

}

TEMPLATE_TEST_CASE("filters, facets, sorting, paging with from and search_after, totals",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary,
         R"({"name":"g","description":"words","tags":[{"tagFQN":"PII.Sensitive"}]})");
  for (int i = 0; i < 25; ++i)
    c.make(Kind::glossary_term, R"({"glossary":"g","name":"t)" + std::to_string(100 + i) +
                                    R"(","description":"shared word","tags":[{"tagFQN":")" +
                                    (i % 2 ? "Tier.Gold" : "Tier.Silver") + R"("}]})");
  SearchRequest r;
  r.q = "shared";
  r.size = 10;
  auto page = c.s.search(c.admin, r);
  REQUIRE(page.has_value());
  CHECK(page->total == 25);
  CHECK(page->total_exact);
  CHECK(page->hits.size() == 10);
  auto facet = [&](std::string_view field) {
    for (const auto& a : page->aggregations)
      if (a.field == field) return a.buckets;
    return std::vector<catalog::FacetBucket>{};
  };
  CHECK(facet("tags.tagFQN") ==
        std::vector<catalog::FacetBucket>{{"Tier.Silver", 13}, {"Tier.Gold", 12}});
  CHECK(facet("entityType") == std::vector<catalog::FacetBucket>{{"glossaryTerm", 25}});
  CHECK(facet("glossary.name") == std::vector<catalog::FacetBucket>{{"g", 25}});

  // Walk every hit with search_after; and with from: the same order.
  std::vector<std::string> walked, paged;
  SearchRequest next = r;
  for (;;) {
    auto p = c.s.search(c.admin, next);
    REQUIRE(p.has_value());
    if (p->hits.empty()) break;
    for (const auto& h : p->hits) walked.push_back(std::get<catalog::GlossaryTerm>(h.entity).name);
    next.search_after = p->hits.back().sort;
  }
  for (std::int64_t from = 0; from < 30; from += 10) {
    SearchRequest p = r;
    p.from = from;
    for (auto& n : c.names(p)) paged.push_back(n);
  }
  CHECK(walked.size() == 25);
  CHECK(walked == paged);

  // A query of exclusions only is ordered as `*` (by name): its hits' sort values continue it.
  for (const char* q : {"-glossary", "NOT zzz", "zzz -zzz"}) {
    CAPTURE(q);
    SearchRequest only_not;
    only_not.q = q;
    only_not.index = "glossaryTerm";
    only_not.size = 7;
    std::vector<std::string> by_after;
    for (;;) {
      auto p = c.s.search(c.admin, only_not);
      REQUIRE(p.has_value());
      if (p->hits.empty()) break;
      CHECK(p->hits.back().sort.size() == 2);  // name and id
      for (const auto& h : p->hits)
        by_after.push_back(std::get<catalog::GlossaryTerm>(h.entity).name);
      only_not.search_after = p->hits.back().sort;
    }
    CHECK(by_after.size() == 25);
    CHECK(std::is_sorted(by_after.begin(), by_after.end()));
  }

  // A filter on a tag, sorted by name descending.
  auto filter = catalog::parse_search_filter(
      R"({"query":{"bool":{"must":[{"term":{"tags.tagFQN.keyword":"Tier.Gold"}}]}}})");
  REQUIRE(filter.has_value());
  SearchRequest gold = r;
  gold.filter = *filter;
  gold.sort_field = "name.keyword";
  gold.sort_order = "desc";
  gold.size = 100;
  auto golds = c.names(gold);
  CHECK(golds.size() == 12);
  CHECK(std::is_sorted(golds.rbegin(), golds.rend()));

  // The typed form: one kind.
  SearchRequest typed;
  typed.q = "shared";
  auto terms = c.s.search<catalog::GlossaryTerm>(c.admin, typed);
  REQUIRE(terms.has_value());
  CHECK(terms->total == 25);

  // Aggregate: one facet, keys containing a value.
  AggregateRequest a;
  a.field = "tags.tagFQN";
  a.value = "gold";
  auto one = c.s.aggregate(c.admin, a);
  REQUIRE(one.has_value());
  CHECK(one->buckets == std::vector<catalog::FacetBucket>{{"Tier.Gold", 12}});
  // Case aside, and nothing else: an accent is a letter of its own (docs/SEMANTICS.md §16).
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"u1","description":"d","tags":[{"tagFQN":"Cafe.Creme"}]})");
  c.make(Kind::glossary_term,
         R"({"glossary":"g","name":"u2","description":"d","tags":[{"tagFQN":"Café.Crème"}]})");
  a.value = "FE";
  CHECK(c.s.aggregate(c.admin, a).value().buckets ==
        std::vector<catalog::FacetBucket>{{"Cafe.Creme", 1}});
  a.value = "FÉ";
  CHECK(c.s.aggregate(c.admin, a).value().buckets ==
        std::vector<catalog::FacetBucket>{{"Café.Crème", 1}});
}

TEMPLATE_TEST_CASE("typeahead: names that start with the text, an exact name first, then words",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  for (auto n : {"customer", "customerOrders", "customer_v2", "newCustomer", "other"})
    c.make(Kind::glossary_term,
           std::string(R"({"glossary":"g","name":")") + n + R"(","description":"d"})");
  auto s = c.s.suggest(c.admin, "Customer", "all", 10);
  REQUIRE(s.has_value());
  std::vector<std::string> names;
  for (const auto& x : *s) names.push_back(x.text);
  CHECK(names == Names{"customer", "customerOrders", "customer_v2", "newCustomer"});
  auto two = c.s.suggest(c.admin, "cust", "glossaryTerm", 2);
  REQUIRE(two.has_value());
  CHECK(two->size() == 2);
  auto json = c.s.suggest_json(c.admin, "oth", "all", 10);
  REQUIRE(json.has_value());
  const auto& options = json->at("suggest").at("metadata-suggest").at(0).at("options").as_array();
  REQUIRE(options.size() == 1);
  CHECK(options[0].at("text") == "other");
  CHECK(options[0].at("_index") == "glossary_term_search_index");
}

TEMPLATE_TEST_CASE("stray operators are words, a repeated word counts once, highlights only where "
                   "a clause searches, a fragment near the end is whole, typeahead's first group "
                   "is case folded only",
                   "[search]", CATALOG_STORE_FIXTURES) {
  // docs/SEMANTICS.md §16: "a stray operator ... is read as plain words"; "the number of distinct
  // query words matched"; highlights are "the matched fields"; "a fragment of about 150
  // characters"; typeahead's first group: the name or displayName "case folded" begins with q.
  TestType f;
  Catalog c{f.store};
  c.make(Kind::mlmodel_service, R"({"name":"svc","serviceType":"Mlflow"})");
  auto model = [&](std::string_view rest) {
    c.make(Kind::mlmodel,
           std::string(R"({"service":"svc","algorithm":"a",)") + std::string(rest) + "}");
  };
  model(R"("name":"m1","description":"black and white")");
  model(R"("name":"m4","description":"red")");
  model(R"("name":"aaa","description":"cafe and many other words here to dilute the score")");
  model(R"("name":"bbb","displayName":"orders")");
  model(R"("name":"fox","description":"red fox","displayName":"Fox Box")");
  model(R"("name":"hl","description":"lazy brown dog","displayName":"Brown Things")");
  std::string lorem;
  for (int i = 0; i < 40; ++i) lorem += "lorem ipsum ";
  model(R"("name":"hl3","description":")" + lorem + R"( wolf")");
  model(R"("name":"Çafeteria")");
  model(R"("name":"big cafe")");
  model(R"("name":"nt","description":"do not touch")");
  model(R"("name":"asc-data")");
  model(R"("name":"zip-data")");
  // Stray operators are words; operators between operands (NOT before one) are operators.
  CHECK(c.names("AND") == Names{"m1", "aaa"});
  CHECK(c.names("red AND") == Names{"m4", "fox", "m1", "aaa"});
  CHECK(c.names("AND red") == Names{"m4", "fox", "m1", "aaa"});
  CHECK(c.names("NOT") == Names{"nt"});
  CHECK(c.names("touch NOT") == Names{"nt"});
  CHECK(c.names("red AND black").empty());
  CHECK(c.names("red NOT fox") == Names{"m4"});
  CHECK(c.names("red AND NOT fox") == Names{"m4"});
  CHECK(c.names("black AND AND white") == Names{"m1", "aaa"});  // both stray: plain words
  CHECK(c.names("NOT NOT red") == Names{"nt", "m4", "fox"});  // both stray
  CHECK(c.names("red OR OR white") == Names{"m1", "m4", "fox"});
  // A word asked required and plain is required; excluded and plain, excluded.
  CHECK(c.names("+cafe cafe") == Names{"big cafe", "aaa"});
  CHECK(c.names("red fox -fox") == Names{"m4"});
  // A word asked twice, or in two spellings that analyse alike, is one distinct query word.
  CHECK(c.names("cafe orders") == Names{"bbb", "big cafe", "aaa"});
  CHECK(c.names("cafe cafe orders") == Names{"bbb", "big cafe", "aaa"});
  CHECK(c.names("cafe CAFÉ orders") == Names{"bbb", "big cafe", "aaa"});
  // Highlights: the fields a clause searches, a phrase's where it stands.
  const std::string on = R"(<span class="text-highlighter">)", off = "</span>";
  auto fox = highlights_of(c, "name:fox");
  CHECK(fox.size() == 1);
  CHECK(fox["name"] == std::vector<std::string>{on + "fox" + off});
  auto dog = highlights_of(c, "\"brown dog\"");
  CHECK(dog.size() == 1);
  CHECK(dog["description"] ==
        std::vector<std::string>{"lazy " + on + "brown" + off + " " + on + "dog" + off});
  // Near the end of a long description, the fragment takes its characters from before the match.
  auto wolf = highlights_of(c, "wolf");
  REQUIRE(wolf["description"].size() == 1);
  const auto& fragment = wolf["description"][0];
  CHECK(fragment.size() >= 140 + on.size() + off.size());
  CHECK(fragment.substr(fragment.size() - 4 - off.size()) == "wolf" + off);
  // Typeahead: Çafeteria does not begin with "cafe" case folded (it does with marks removed):
  // it comes with the words, by name after "big cafe"; for "çaf" it is in the first group.
  auto names_of = [&](std::string_view q) {
    auto s = c.s.suggest(c.admin, q, "mlmodel", 10);
    REQUIRE(s.has_value());
    std::vector<std::pair<std::string, double>> out;
    for (const auto& x : *s) out.emplace_back(x.text, x.score);
    return out;
  };
  CHECK(names_of("cafe") ==
        std::vector<std::pair<std::string, double>>{{"big cafe", 1.0}, {"Çafeteria", 1.0}});
  CHECK(names_of("ÇAF") ==
        std::vector<std::pair<std::string, double>>{{"Çafeteria", 2.0}, {"big cafe", 1.0}});
  // A text of several words offers by its words only what holds each of them, the last as a
  // prefix: `asc-da` does not offer zip-data for its `da`.
  CHECK(names_of("asc-da") == std::vector<std::pair<std::string, double>>{{"asc-data", 2.0}});
  CHECK(names_of("data") ==
        std::vector<std::pair<std::string, double>>{{"asc-data", 1.0}, {"zip-data", 1.0}});
  CHECK(names_of("nope-da").empty());
}

TEMPLATE_TEST_CASE("bad search requests are 400 invalid_parameter and change nothing", "[search]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  const auto before = test::dump(c.s);
  auto refused = [&](SearchRequest r) {
    auto found = c.s.search(c.admin, r);
    REQUIRE(!found);
    CHECK(found.error().code() == Errc::invalid_parameter);
    CHECK(found.error().kind() == catalog::ErrorKind::bad_request);
  };
  SearchRequest r;
  r.q = std::string(1025, 'a');
  refused(r);
  r.q = "";
  for (int i = 0; i < 33; ++i) r.q += "w ";
  refused(r);
  r = {};
  r.index = "table_search_index";
  refused(r);
  r = {};
  r.from = 9995;
  r.size = 10;
  refused(r);
  r = {};
  r.size = 10001;
  refused(r);
  r = {};
  r.sort_field = "owner";
  refused(r);
  r = {};
  r.sort_order = "up";
  refused(r);
  r = {};
  r.search_after = std::vector<catalog::SortValue>{std::int64_t{1}};
  refused(r);
  r = {};
  r.q = "x";
  r.search_after = std::vector<catalog::SortValue>{std::string("a"), std::string("b")};
  refused(r);  // a _score sort has five values
  r = {};
  catalog::SearchFilter deep;
  deep.term = catalog::SearchTerm{"entityType", {"glossary"}};
  for (int i = 0; i < 9; ++i) {
    catalog::SearchFilter up;
    up.must.push_back(std::move(deep));
    deep = std::move(up);
  }
  r.filter = deep;
  refused(r);
  r = {};
  r.filter = catalog::SearchFilter{catalog::SearchTerm{"columns.name", {"x"}}, {}, {}, {}, {}};
  refused(r);
  for (std::string bad : {"", "[]", "{}", R"({"query":{"match":{"name":"x"}}})",
                          R"({"query":{"bool":{"must":{"range":{"updatedAt":{}}}}}})",
                          R"({"query":{"bool":{"must":[1]}}})",
                          R"({"query":{"bool":{"should":{"term":{"a":"b","c":"d"}}}}})",
                          R"({"query":{"bool":{"must":{"terms":{"status":"Approved"}}}}})",
                          R"({"query":{"bool":{"must":{"term":{"status":[1]}}}}})",
                          R"({"query":{"bool":{"minimum_should_match":1}}})"}) {
    INFO(bad);
    auto parsed = catalog::parse_search_filter(bad);
    REQUIRE(!parsed);
    CHECK(parsed.error().code() == Errc::invalid_parameter);
  }
  AggregateRequest a;
  a.field = "name";
  CHECK(c.s.aggregate(c.admin, a).error().code() == Errc::invalid_parameter);
  CHECK(c.s.suggest(c.admin, "x", "all", 101).error().code() == Errc::invalid_parameter);
  CHECK(c.s.suggest(c.admin, "x", "nope", 1).error().code() == Errc::invalid_parameter);
  CHECK(test::dump(c.s) == before);
}

TEMPLATE_TEST_CASE("who sees what: hits a user may not view are left out before counting",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::user, R"({"name":"bob","email":"bob@example.com"})");
  c.make(Kind::glossary, R"({"name":"g","description":"visible words"})");
  auto bob = c.s.principal("bob").value();
  SearchRequest r;
  r.q = "visible";
  auto as_bob = c.s.search(bob, r);
  REQUIRE(as_bob.has_value());
  // The default policy lets every user view basic fields: bob sees the glossary.
  CHECK(as_bob->total == 1);
}

TEST_CASE("past 10,000 matches: the total says so, facets count the best 10,000, and "
          "search_after and from walk on in order",
          "[search][scale]") {
  // More matches than the window: the ranking selects the best 10,000 for the facets and orders
  // only the page, which must give what ordering every match would.
  test::MemoryFixture f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  constexpr int n = 10'020;
  auto name_of = [](int i) {
    std::string digits = std::to_string(i);
    return "t" + std::string(5 - digits.size(), '0') + digits;
  };
  for (int i = 0; i < n; ++i)
    c.make(Kind::glossary_term,
           R"({"glossary":"g","name":")" + name_of(i) + R"(","description":"common words")" +
               (i >= 10'000 ? R"(,"tags":[{"tagFQN":"Tier.Gold"}])" : "") + "}");
  SearchRequest r;
  r.q = "common";
  r.index = "glossaryTerm";
  r.sort_field = "name.keyword";
  r.sort_order = "asc";
  r.size = 10;
  auto tags = [](const catalog::SearchResult& p) {
    for (const auto& a : p.aggregations)
      if (a.field == "tags.tagFQN") return a.buckets;
    return std::vector<catalog::FacetBucket>{};
  };
  auto names = [](const catalog::SearchResult& p) {
    Names out;
    for (const auto& h : p.hits) out.push_back(std::get<catalog::GlossaryTerm>(h.entity).name);
    return out;
  };
  auto first = c.s.search(c.admin, r).value();
  CHECK(first.total == 10'000);
  CHECK(!first.total_exact);
  CHECK(names(first) == Names{name_of(0), name_of(1), name_of(2), name_of(3), name_of(4),
                              name_of(5), name_of(6), name_of(7), name_of(8), name_of(9)});
  CHECK(tags(first).empty());  // the gold ones are past the best 10,000
  // Descending, the best 10,000 hold all 20 gold ones.
  SearchRequest down = r;
  down.sort_order = "desc";
  auto last = c.s.search(c.admin, down).value();
  CHECK(names(last).front() == name_of(n - 1));
  CHECK(tags(last) == std::vector<catalog::FacetBucket>{{"Tier.Gold", 20}});
  // The exact count when asked.
  SearchRequest exact = r;
  exact.track_total_hits = true;
  auto counted = c.s.search(c.admin, exact).value();
  CHECK(counted.total == n);
  CHECK(counted.total_exact);
  // The last page `from` reaches, and search_after past the window.
  SearchRequest far = r;
  far.from = 9'990;
  auto edge = c.s.search(c.admin, far).value();
  REQUIRE(edge.hits.size() == 10);
  CHECK(names(edge).front() == name_of(9'990));
  CHECK(names(edge).back() == name_of(9'999));
  SearchRequest after = r;
  after.search_after = edge.hits.back().sort;
  after.size = 100;
  auto beyond = c.s.search(c.admin, after).value();
  Names expected;
  for (int i = 10'000; i < n; ++i) expected.push_back(name_of(i));
  CHECK(names(beyond) == expected);
  // Ranked by score, a page after search_after continues where the one before ended.
  SearchRequest scored;
  scored.q = "common";
  scored.index = "glossaryTerm";
  scored.size = 7;
  auto one = c.s.search(c.admin, scored).value();
  SearchRequest scored_next = scored;
  scored_next.search_after = one.hits.back().sort;
  auto two = c.s.search(c.admin, scored_next).value();
  SearchRequest both = scored;
  both.size = 14;
  auto whole = c.s.search(c.admin, both).value();
  auto joined = names(one);
  for (auto& x : names(two)) joined.push_back(x);
  CHECK(joined == names(whole));

  // `*` by name reads the lists by name up to one past the window: what it answers is what the
  // scan of every document answers.
  SearchRequest star;
  star.q = "*";
  star.index = "glossaryTerm";
  auto browsed = c.s.search(c.admin, star).value();
  CHECK(browsed.total == 10'000);
  CHECK(!browsed.total_exact);
  CHECK(names(browsed).front() == name_of(0));
  CHECK(tags(browsed).empty());
  same_as_scan(c.s, c.admin, star);
  star.from = 9'990;
  same_as_scan(c.s, c.admin, star);
  star.from = 0;
  star.index = "all";  // the glossary "g" first, then the terms
  star.size = 3;
  same_as_scan(c.s, c.admin, star);
  CHECK(c.s.search(c.admin, star).value().hits.size() == 3);
  // Descending, three entities named t00020 stand at 10,000 to 10,002 (t10019 first): the
  // window's last place is the one of them with the least id, as the ranking orders one name.
  for (std::string service : {"mlflow", "mlflow2"}) {
    c.make(Kind::mlmodel_service, R"({"name":")" + service + R"(","serviceType":"Mlflow"})");
    c.make(Kind::mlmodel, R"({"name":"t00020","service":")" + service + R"(","algorithm":"x"})");
  }
  star.sort_order = "desc";
  star.size = 10;
  same_as_scan(c.s, c.admin, star);
  star.from = 9'990;
  same_as_scan(c.s, c.admin, star);
}

TEST_CASE("a store written without the index is indexed by reindex and by the next open",
          "[search]") {
  test::TempDir dir;
  auto options = test::test_options();
  options.search_index = false;
  {
    auto store = catalog::Store::open_lmdb(dir.path(), options).value();
    Catalog c{store};
    c.make(Kind::glossary, R"({"name":"quiet","description":"never indexed"})");
    CHECK(c.names("quiet").empty());
    auto again = store.reindex(c.admin, 2);
    REQUIRE(again.has_value());
    CHECK(*again >= 2);  // the admin user and the glossary
    CHECK(c.names("quiet") == Names{"quiet"});
    c.clean();
    // Written without the index again; the index is stale until the next open notices nothing
    // (the analyzer is current) - so reindex is the repair, and verify says so.
    c.make(Kind::glossary, R"({"name":"later","description":"not indexed"})");
    auto problems = store.verify();
    REQUIRE(problems.has_value());
    CHECK(!problems->empty());
    auto bob = c.s.principal("admin").value();
    bob.is_admin = false;
    CHECK(store.reindex(bob).error().code() == Errc::forbidden);
  }
  {
    // A reindex left half done is finished by the next open.
    auto store = catalog::Store::open_lmdb(dir.path(), options).value();
    {
      auto txn = store.backend().begin(catalog::storage::Mode::read_write).value();
      REQUIRE(txn->put(std::string("Msearch_reindex"), ""));
      REQUIRE(txn->commit());
    }
  }
  auto store = catalog::Store::open_lmdb(dir.path(), test::test_options()).value();
  Catalog c{store};
  CHECK(c.names("later") == Names{"later"});
  c.clean();
}

TEMPLATE_TEST_CASE("a reindex and a hard delete that write more index keys than the index "
                   "buffers at once: the same index, written in parts",
                   "[search][scale]", test::MemoryFixture, test::LmdbFixture) {
  // The index writes of one update are buffered and written in key order, in parts of 8 MiB
  // (docs/SEARCH_INDEX.md, "Writing"); a reindex makes them in parts of at most 2 MiB of records.
  // 100 terms of 1,500 words of 48 letters make 150,000 postings of about 70 bytes: one reindex
  // step writes them in four parts, one recursive hard delete erases them in two.
  TestType f;
  Catalog c{f.store};
  const auto word = [](int term, int at) {
    std::string w = "q";
    for (int n = term * 1500 + at; n > 0; n /= 25) w += static_cast<char>('a' + n % 25);
    w.resize(48, 'z');  // z: no digit of the number
    return w;
  };
  auto g = c.make(Kind::glossary, R"({"name":"many","description":"Long terms"})");
  constexpr int terms = 100;
  for (int t = 0; t < terms; ++t) {
    std::string description;
    for (int at = 0; at < 1500; ++at) description += word(t, at) + ' ';
    c.make(Kind::glossary_term, R"({"glossary":"many","name":"term)" + std::to_string(t) +
                                    R"(","description":")" + description + "\"}");
  }
  auto indexed = c.s.reindex(c.admin, 1000);
  REQUIRE(indexed.has_value());
  CHECK(*indexed == terms + 2);  // the terms, the glossary and the admin user
  c.clean();
  CHECK(c.names(word(0, 7)) == Names{"term0"});
  CHECK(c.names(word(terms - 1, 1499)) == Names{"term99"});
  CHECK(c.names(word(50, 0) + " " + word(50, 750)) == Names{"term50"});

  // A recursive soft delete and a restore of 7.5 MB of records: past Tx::keep_limit, the
  // transaction brings the index up to date with what it wrote so far and keeps anew.
  catalog::DeleteOptions recursive;
  recursive.recursive = true;
  static_assert(catalog::engine::Tx::keep_limit < 7'000'000);
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary, catalog::EntityKey::by_id(test::uuid_of(g)),
                          recursive)
              .has_value());
  CHECK(c.names(word(0, 7)).empty());
  CHECK(c.names(word(terms - 1, 1499), true) == Names{"term99"});
  c.clean();
  REQUIRE(c.s.restore_json(c.admin, Kind::glossary, test::uuid_of(g)).has_value());
  CHECK(c.names(word(0, 7)) == Names{"term0"});
  CHECK(c.names(word(50, 3), true).empty());
  c.clean();

  recursive.hard_delete = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary, catalog::EntityKey::by_id(test::uuid_of(g)),
                          recursive)
              .has_value());
  CHECK(c.names(word(0, 7), true).empty());
  CHECK(c.names(word(terms - 1, 1499), true).empty());
  c.clean();
  // Nothing of the terms is left in the index's key space: postings, documents.
  auto txn = c.s.backend().begin(catalog::storage::Mode::read_only).value();
  auto left = txn->scan(catalog::storage::prefix_range("X"), catalog::storage::Direction::forward);
  REQUIRE(left.has_value());
  std::size_t postings = 0;
  for (auto& cursor = *left; cursor->valid();) {
    ++postings;
    REQUIRE(cursor->next());
  }
  CHECK(postings < 100);  // the admin user's words
}

TEST_CASE("an index of version 1 (terms inside the documents) or 5 (terms under T) is rebuilt "
          "when the store opens",
          "[search]") {
  // Its reindex, interrupted, left its progress (the last id, 16 bytes) as well, or not: either
  // way the store is indexed again from the start.
  const bool interrupted = GENERATE(false, true);
  const char older = GENERATE(char{1}, char{5});
  CAPTURE(interrupted, int{older});
  test::TempDir dir;
  auto count = [](catalog::Store& s, char tag) {
    auto txn = s.backend().begin(catalog::storage::Mode::read_only).value();
    auto c = txn->scan(catalog::storage::prefix_range(std::string(1, tag)),
                       catalog::storage::Direction::forward)
                 .value();
    std::size_t n = 0;
    for (; c->valid(); ++n) REQUIRE(c->next().has_value());
    return n;
  };
  {
    auto store = catalog::Store::open_lmdb(dir.path(), test::test_options()).value();
    Catalog c{store};
    c.make(Kind::glossary, R"({"name":"older","description":"indexed by version one"})");
    REQUIRE(count(store, 'T') == 0);
    // What the older version left: its version under M search_analyzer, and for version 5 a T
    // record per document (version 1 had none).
    auto txn = store.backend().begin(catalog::storage::Mode::read_write).value();
    auto version = txn->get("Msearch_analyzer").value().value();
    REQUIRE(version.size() == 8);
    REQUIRE(version.back() == catalog::engine::search_index::index_version);
    version.back() = older;
    REQUIRE(txn->put("Msearch_analyzer", version));
    if (older == 5) {
      std::vector<std::string> documents;
      auto cursor = txn->scan(catalog::storage::prefix_range("Y"),
                              catalog::storage::Direction::forward)
                        .value();
      while (cursor->valid()) {
        documents.emplace_back(cursor->key());
        REQUIRE(cursor->next().has_value());
      }
      cursor.reset();
      for (const auto& k : documents) REQUIRE(txn->put("T" + k.substr(1), std::string(1, '\x03')));
      REQUIRE(documents.size() >= 2);
    }
    if (interrupted) {
      // The largest id: resumed after it, nothing would be indexed again.
      auto last = txn->scan(catalog::storage::prefix_range("Y"),
                            catalog::storage::Direction::reverse)
                      .value();
      REQUIRE(last->valid());
      REQUIRE(txn->put("Msearch_reindex", std::string(last->key().substr(1))));
    }
    REQUIRE(txn->commit());
  }
  auto options = test::test_options();
  std::vector<std::string> logged;
  options.log = [&](catalog::LogLevel, std::string_view message) {
    logged.emplace_back(message);
  };
  auto store = catalog::Store::open_lmdb(dir.path(), options).value();
  REQUIRE(!logged.empty());
  CHECK(logged.front().starts_with(
        "building the search index (version " +
        std::to_string(catalog::engine::search_index::index_version) + ")"));
  CHECK(count(store, 'T') == 0);
  CHECK(count(store, 'Y') >= 2);  // the admin user and the glossary
  Catalog c{store};
  CHECK(c.names("one") == Names{"older"});
  c.clean();
}

namespace {

/// The keys of the search index's families with their values, to count what a write changed.
std::map<std::string, std::string> index_keys(catalog::Store& s) {
  std::map<std::string, std::string> out;
  auto txn = s.backend().begin(catalog::storage::Mode::read_only).value();
  for (char tag : catalog::engine::search_index::families) {
    auto c = txn->scan(catalog::storage::prefix_range(std::string(1, tag)),
                       catalog::storage::Direction::forward)
                 .value();
    for (; c->valid(); (void)c->next()) out.emplace(c->key(), c->value());
  }
  return out;
}

/// How many index keys differ (added, removed or rewritten) between two states.
std::size_t changed(const std::map<std::string, std::string>& a,
                    const std::map<std::string, std::string>& b) {
  std::size_t n = 0;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) ++n;
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) ++n;
  return n;
}

}  // namespace

TEMPLATE_TEST_CASE("soft delete, restore, follow and vote write a constant number of index keys, "
                   "however long the text; a patch only the words that changed",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::user, R"({"name":"bob","email":"bob@example.com"})");
  c.make(Kind::glossary, R"({"name":"g","description":"d"})");
  std::string longer;
  for (int i = 0; i < 400; ++i) longer += "word" + std::to_string(i) + " ";
  longer += "yankee";
  auto term = c.make(Kind::glossary_term,
                     R"({"glossary":"g","name":"long","description":")" + longer + "\"}");
  const auto id = test::uuid_of(term);
  const auto bob = c.s.principal("bob").value();

  auto before = index_keys(c.s);
  REQUIRE(
      c.s.remove_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_id(id), {}).has_value());
  auto after = index_keys(c.s);
  CHECK(changed(before, after) == 1);  // the search document's deleted flag
  REQUIRE(c.s.restore_json(c.admin, Kind::glossary_term, id).has_value());
  before = after;
  after = index_keys(c.s);
  CHECK(changed(before, after) == 1);

  before = after;
  REQUIRE(c.s.follow_json(bob, Kind::glossary_term, id, bob.id).has_value());
  after = index_keys(c.s);
  CHECK(changed(before, after) == 0);  // followers are not searched
  REQUIRE(c.s.vote_json(bob, Kind::glossary_term, id, catalog::VoteType::voted_up).has_value());
  before = after;
  after = index_keys(c.s);
  CHECK(changed(before, after) == 1);  // the up-vote count, a sort field

  // One word changed of 401: its postings, and the document; the name's keys stay.
  before = after;
  auto patched = longer;
  patched.replace(patched.find("yankee"), 6, "zulu");
  REQUIRE(c.s.patch_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_id(id),
                         parse(R"({"description":")" + patched + "\"}"))
              .has_value());
  after = index_keys(c.s);
  // The postings of yankee, of its stem (yanke) and of zulu (its own stem), of word399 and of
  // its last part, 399 (the words before: what a phrase may read after them changed), and the
  // document (its updatedAt).
  CHECK(changed(before, after) == 6);
  CHECK(c.names("zulu") == Names{"long"});
  CHECK(c.names("yankee").empty());
  c.clean();
}

TEMPLATE_TEST_CASE("a reindex, made in parts on two threads, writes the index the writes made, "
                   "byte for byte",
                   "[search]", CATALOG_STORE_FIXTURES) {
  // A reindex reads a part of its batch while another thread makes the documents and writes of
  // the part before (docs/SEARCH_INDEX.md, "Writing"), and on PostgreSQL asks for the part's
  // reads ahead: what it writes must be what the writes themselves left, key for key and byte
  // for byte, whatever the batch and so the parts.
  TestType f;
  Catalog c{f.store};
  auto data = c.make(Kind::team, R"({"name":"data","teamType":"Group","displayName":"Data"})");
  c.make(Kind::user, R"({"name":"bob","email":"bob@example.com","displayName":"Bob Builder"})");
  c.make(Kind::domain, R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
  c.make(Kind::glossary, R"({"name":"g","description":"Words of the trade","owners":[{"id":")" +
                             test::id_of(data) + R"(","type":"team"}]})");
  c.make(Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  c.make(Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
  const auto bob = c.s.principal("bob").value();
  for (int i = 0; i < 60; ++i) {
    const auto n = std::to_string(i);
    const auto tags = R"("tags":[{"tagFQN":"Tier.T)" + std::to_string(i % 4) + R"("}])";
    auto term = c.make(Kind::glossary_term,
                       R"({"glossary":"g","name":"term)" + n + R"(","displayName":"Term )" + n +
                           R"(","description":"Shared words and word)" + n + " running runner " +
                           std::string(static_cast<std::size_t>(i % 7) * 3, 'x') + R"(",)" +
                           tags + R"(,"synonyms":["syn)" + n + R"("]})");
    if (i % 5 == 0)
      REQUIRE(c.s.vote_json(bob, Kind::glossary_term, test::uuid_of(term),
                            catalog::VoteType::voted_up)
                  .has_value());
    if (i % 6 == 0)
      REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term,
                              catalog::EntityKey::by_id(test::uuid_of(term)), {})
                  .has_value());
    if (i % 3 == 0)
      c.make(Kind::search_index, R"({"service":"es","name":"idx)" + n +
                                     R"(","fields":[{"name":"colOne","dataType":"TEXT",)"
                                     R"("description":"first column"}],"domains":["Sales"],)" +
                                     tags + "}");
    if (i % 4 == 0)
      c.make(Kind::mlmodel, R"({"service":"mlflow","name":"model)" + n +
                                R"(","algorithm":"forest","mlFeatures":[{"name":"featureX)" + n +
                                R"(","dataType":"numerical","description":"a feature"}]})");
  }
  c.clean();
  const auto written = index_keys(c.s);
  REQUIRE(written.size() > 1000);
  for (std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{0}}) {
    INFO("batch " << batch);
    auto indexed = c.s.reindex(c.admin, batch);
    REQUIRE(indexed.has_value());
    CHECK(*indexed > 100);
    const auto rebuilt = index_keys(c.s);
    CHECK(rebuilt.size() == written.size());
    CHECK(changed(written, rebuilt) == 0);
  }
  c.clean();
}

TEMPLATE_TEST_CASE("an owner's new displayName reaches the facets of what it owns", "[search]",
                   CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  auto team = c.make(Kind::team, R"({"name":"data","teamType":"Group","displayName":"Data"})");
  c.make(Kind::glossary, R"({"name":"g","description":"owned words","owners":[{"id":")" +
                             test::id_of(team) + R"(","type":"team"}]})");
  auto facet = [&] {
    AggregateRequest a;
    a.field = "owners.displayName";
    a.q = "owned";
    return c.s.aggregate(c.admin, a).value().buckets;
  };
  CHECK(facet() == std::vector<catalog::FacetBucket>{{"Data", 1}});
  REQUIRE(c.s.patch_json(c.admin, Kind::team, catalog::EntityKey::by_id(test::uuid_of(team)),
                         parse(R"({"displayName":"Data Platform"})"))
              .has_value());
  CHECK(facet() == std::vector<catalog::FacetBucket>{{"Data Platform", 1}});
  SearchRequest owner;
  owner.q = "owner:platform";
  CHECK(c.names(owner) == Names{"g"});
  c.clean();
  // Again: the words of the displayName it had go from what it owns (the owned entity's record
  // did not change; its old words come from what its search document holds of its owner).
  REQUIRE(c.s.patch_json(c.admin, Kind::team, catalog::EntityKey::by_id(test::uuid_of(team)),
                         parse(R"({"displayName":"Analytics"})"))
              .has_value());
  CHECK(c.names(owner).empty());
  owner.q = "owner:analytics";
  CHECK(c.names(owner) == Names{"g"});
  owner.q = "owner:data";  // the team's name
  CHECK(c.names(owner) == Names{"g"});
  c.clean();
}

TEMPLATE_TEST_CASE("a filter finds what it keeps through facet keys, which every write keeps: "
                   "the answers are those of the documents",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  auto data = c.make(Kind::team, R"({"name":"data","teamType":"Group","displayName":"Data"})");
  auto ops = c.make(Kind::team, R"({"name":"ops","teamType":"Group"})");
  auto sales = c.make(Kind::domain, R"({"name":"Sales","domainType":"Aggregate","description":"d"})");
  c.make(Kind::glossary, R"({"name":"g","description":"words"})");
  // What each term is, as the oracle of every filter below: its tags, owner and domain.
  c.make(Kind::search_service, R"({"name":"es","serviceType":"ElasticSearch"})");
  // What each entity is, as the oracle of every filter below: twelve glossary terms, then three
  // search indexes (which alone can be in a domain); tags, owner and domain.
  struct Term {
    std::string name;
    std::vector<std::string> tags;
    bool by_data;
    bool in_sales;
    bool index;
    std::string id;
  };
  std::vector<Term> terms;
  for (int i = 0; i < 15; ++i) {
    const bool index = i >= 12;
    Term t{(index ? "i" : "t") + std::to_string(100 + i), {}, i % 2 == 1, index && i != 13, index,
           ""};
    if (i % 3 != 1) t.tags.push_back("Tier.Gold");
    if (i % 3 == 1) t.tags.push_back("Tier.Silver");
    if (i % 3 == 2) t.tags.push_back("PII.Sensitive");
    if (i == 7) t.tags.push_back("Rare.One");
    std::string tags;
    for (const auto& tag : t.tags)
      tags += std::string(tags.empty() ? "" : ",") + R"({"tagFQN":")" + tag + "\"}";
    std::string body = (index ? R"({"service":"es","fields":[])" : R"({"glossary":"g")") +
                       std::string(R"(,"name":")") + t.name +
                       R"(","description":"shared word","tags":[)" + tags +
                       R"(],"owners":[{"id":")" + test::id_of(t.by_data ? data : ops) +
                       R"(","type":"team"}])";
    if (t.in_sales) body += R"(,"domains":["Sales"])";
    t.id = test::id_of(c.make(index ? Kind::search_index : Kind::glossary_term, body + "}"));
    terms.push_back(std::move(t));
  }
  c.clean();
  const auto has_tag = [](const Term& t, std::string_view tag) {
    return std::find(t.tags.begin(), t.tags.end(), tag) != t.tags.end();
  };
  // The names a query finds with a filter, sorted; and those of the terms `keep` holds.
  auto found = [&](std::string q, std::string filter, bool deleted = false) {
    SearchRequest r;
    r.q = std::move(q);
    r.size = 100;
    r.deleted = deleted;
    auto parsed = catalog::parse_search_filter(filter);
    INFO(filter);
    REQUIRE(parsed.has_value());
    r.filter = *parsed;
    auto names = c.names(r);
    std::sort(names.begin(), names.end());
    return names;
  };
  std::vector<std::string> gone;  // hard-deleted, or soft-deleted
  auto expected = [&](auto&& keep) {
    Names out;
    for (const auto& t : terms)
      if (keep(t) && std::find(gone.begin(), gone.end(), t.name) == gone.end())
        out.push_back(t.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto bool_of = [](std::string clauses) {
    return R"({"query":{"bool":{)" + clauses + "}}}";
  };
  const auto term_of = [](std::string field, std::string value) {
    return R"({"term":{")" + field + R"(":")" + value + R"("}})";
  };
  auto check_all = [&] {
    const auto gold = term_of("tags.tagFQN", "Tier.Gold");
    for (const std::string q : {"shared", "*"}) {
      INFO(q);
      CHECK(found(q, bool_of(R"("must":[)" + gold + "]")) ==
            expected([&](const Term& t) { return has_tag(t, "Tier.Gold"); }));
      // A selective one (fewer than a quarter of the documents: read from its keys alone).
      CHECK(found(q, bool_of(R"("filter":[)" + term_of("tags.tagFQN", "Rare.One") + "]")) ==
            expected([&](const Term& t) { return has_tag(t, "Rare.One"); }));
      CHECK(found(q, bool_of(R"("must":[{"terms":{"tags.tagFQN":["Tier.Silver","Rare.One"]}}])")) ==
            expected([&](const Term& t) {
              return has_tag(t, "Tier.Silver") || has_tag(t, "Rare.One");
            }));
      CHECK(found(q, bool_of(R"("must":[)" + gold + "," + term_of("owners.name", "data") + "]")) ==
            expected([&](const Term& t) { return has_tag(t, "Tier.Gold") && t.by_data; }));
      CHECK(found(q, bool_of(R"("should":[)" + term_of("tags.tagFQN", "PII.Sensitive") + "," +
                             term_of("owners.displayName", "ops") + "]")) ==
            expected([&](const Term& t) { return has_tag(t, "PII.Sensitive") || !t.by_data; }));
      // A should beside a must: matches() reads the must alone.
      CHECK(found(q, bool_of(R"("must":[)" + term_of("owners.id", test::id_of(data)) +
                             R"(],"should":[)" + gold + "]")) ==
            expected([&](const Term& t) { return t.by_data; }));
      CHECK(found(q, bool_of(R"("must":[)" + term_of("domains.fullyQualifiedName", "Sales") +
                             "," + term_of("entityType", "searchIndex") + "]")) ==
            expected([&](const Term& t) { return t.in_sales; }));
      CHECK(found(q, bool_of(R"("must":[)" + term_of("domains.id", test::id_of(sales)) +
                             R"(],"must_not":[)" + gold + "]")) ==
            expected([&](const Term& t) { return t.in_sales && !has_tag(t, "Tier.Gold"); }));
      CHECK(found(q, bool_of(R"("must":[)" + term_of("glossary.name", "g") + "," +
                             term_of("status", "Approved") + "]")) ==
            expected([](const Term& t) { return !t.index; }));
      CHECK(found(q, bool_of(R"("must":[)" + term_of("service.name", "es") + "]")) ==
            expected([](const Term& t) { return t.index; }));
      CHECK(found(q, bool_of(R"("must":[)" + term_of("tags.tagFQN", "No.Such") + "]")).empty());
      // Nested: a bool inside a must narrows by its own terms.
      CHECK(found(q, bool_of(R"("must":[{"bool":{"should":[)" + term_of("tags.tagFQN", "Rare.One") +
                             "," + term_of("owners.name", "ops") + "]}}]")) ==
            expected([&](const Term& t) { return has_tag(t, "Rare.One") || !t.by_data; }));
    }
    // One candidate, a filter of more: the filter is tested on the candidate alone.
    CHECK(found("t100", bool_of(R"("must":[)" + gold + "]")) ==
          expected([&](const Term& t) { return t.name == "t100" && has_tag(t, "Tier.Gold"); }));
    CHECK(found("t101", bool_of(R"("must":[)" + gold + "]")).empty());
    c.clean();
  };
  check_all();

  // A patch of tags moves its facet keys.
  REQUIRE(c.s.patch_json(c.admin, Kind::glossary_term,
                         catalog::EntityKey::by_id(catalog::parse_uuid(terms[0].id).value()),
                         parse(R"({"tags":[{"tagFQN":"Rare.One"}]})"))
              .has_value());
  terms[0].tags = {"Rare.One"};
  check_all();
  // An owner's new displayName: what it owns is found by it, not by the old one.
  REQUIRE(c.s.patch_json(c.admin, Kind::team, catalog::EntityKey::by_id(test::uuid_of(data)),
                         parse(R"({"displayName":"Data Platform"})"))
              .has_value());
  CHECK(found("*", bool_of(R"("must":[)" + term_of("owners.displayName", "Data Platform") + "]")) ==
        expected([](const Term& t) { return t.by_data; }));
  CHECK(found("*", bool_of(R"("must":[)" + term_of("owners.displayName", "Data") + "]")).empty());
  // Soft-deleted: found with deleted=true alone; hard-deleted: not at all.
  const auto by_name = [&](const std::string& name) {
    return catalog::EntityKey::by_fqn("g." + name);
  };
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term, by_name("t107"), {}).has_value());
  gone.push_back("t107");
  check_all();
  CHECK(found("shared", bool_of(R"("must":[)" + term_of("tags.tagFQN", "Rare.One") + "]"), true) ==
        Names{"t107"});
  catalog::DeleteOptions hard;
  hard.hard_delete = true;
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term, by_name("t102"), hard).has_value());
  gone.push_back("t102");
  check_all();
}

TEMPLATE_TEST_CASE("`*` by name answers as the scan of every document: kinds, deleted, paging, "
                   "and what a user may view",
                   "[search]", CATALOG_STORE_FIXTURES) {
  TestType f;
  Catalog c{f.store};
  c.make(Kind::user, R"({"name":"bob","email":"bob@example.com"})");
  c.make(Kind::team, R"({"name":"ab","teamType":"Group"})");
  c.make(Kind::glossary, R"({"name":"b","description":"d","tags":[{"tagFQN":"Tier.Gold"}]})");
  c.make(Kind::glossary, R"({"name":"Z","description":"d"})");
  for (std::string name : {"a", "c", "B", "aa", "b0", "zz"})
    c.make(Kind::glossary_term, R"({"glossary":"b","name":")" + name + R"(","description":"d"})");
  c.make(Kind::mlmodel_service, R"({"name":"mlflow","serviceType":"Mlflow"})");
  c.make(Kind::mlmodel, R"({"name":"b","service":"mlflow","algorithm":"x"})");
  REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term, catalog::EntityKey::by_fqn("b.aa"), {})
              .has_value());
  for (std::string q : {"*", ""})
    for (std::string index : {"all", "glossaryTerm", "dataAsset", "team", "user"})
      for (bool deleted : {false, true}) {
        SearchRequest r;
        r.q = q;
        r.index = index;
        r.deleted = deleted;
        r.size = 100;
        same_as_scan(c.s, c.admin, r);
        r.from = 2;
        r.size = 3;
        same_as_scan(c.s, c.admin, r);
        r.sort_order = "desc";  // by name, from the last
        same_as_scan(c.s, c.admin, r);
        r.from = 0;
        r.size = 100;
        same_as_scan(c.s, c.admin, r);
      }
  // A user who may view only some kinds (docs/SEMANTICS.md §16 "Who sees what").
  const auto bob = c.s.principal("bob").value();
  SearchRequest r;
  r.q = "*";
  r.size = 100;
  same_as_scan(c.s, bob, r);
  // The walk's order: names bytewise (capitals first), then ids.
  auto found = c.names("*");
  CHECK(std::is_sorted(found.begin(), found.end()));
  // `all`: glossaries b and Z, terms a, c, B, b0 and zz (aa is deleted), mlflow and its model b;
  // not users or teams.
  CHECK(found == Names{"B", "Z", "a", "b", "b", "b0", "c", "mlflow", "zz"});
}

TEST_CASE("verify names each posting, typeahead and facet key that is missing or different, and "
          "counts what no document makes",
          "[search]") {
  test::MemoryFixture f;
  Catalog c{f.store};
  c.make(Kind::glossary, R"({"name":"atlas","description":"maps of distant lands",
      "tags":[{"tagFQN":"Tier.Gold"}]})");
  c.clean();
  namespace st = catalog::storage;
  auto edit = [&](auto&& change) {
    auto txn = f.store.backend().begin(st::Mode::read_write).value();
    change(*txn);
    REQUIRE(txn->commit().has_value());
  };
  auto first = [&](std::string prefix) {
    auto txn = f.store.backend().begin(st::Mode::read_only).value();
    auto cursor = txn->scan(st::prefix_range(prefix), st::Direction::forward).value();
    REQUIRE(cursor->valid());
    return std::pair<std::string, std::string>(cursor->key(), cursor->value());
  };
  auto count = [&](std::string prefix) {
    auto txn = f.store.backend().begin(st::Mode::read_only).value();
    std::size_t n = 0;
    auto cursor = txn->scan(st::prefix_range(prefix), st::Direction::forward).value();
    for (; cursor->valid(); ++n) REQUIRE(cursor->next().has_value());
    return n;
  };
  const auto postings = count("X"), names = count("K"), words = count("J");
  auto problems = [&] {
    std::vector<std::string> out;
    for (const auto& p : f.store.verify().value()) {
      UNSCOPED_INFO(p.key << ": " << p.message);
      out.push_back(p.message);
    }
    return out;
  };
  auto has = [](const std::vector<std::string>& messages, const std::string& start) {
    return std::any_of(messages.begin(), messages.end(),
                       [&](const std::string& m) { return m.starts_with(start); });
  };
  const auto stored = first("Xdistant");  // (clang 14 cannot capture structured bindings)
  const std::string posting = stored.first, value = stored.second;
  // The same key of another word: "X" word 0x00 id.
  const std::string other = "Xzzz" + posting.substr(posting.find('\0'));

  SECTION("a posting's value changed: named, and the counts agree") {
    // One more field (name), counted once, in a field of length class 1: well formed.
    edit([&](st::Transaction& t) {
      REQUIRE(t.put(posting, value + std::string("\x00\x01\x01", 3)));
    });
    const auto found = problems();
    CHECK(found.size() == 1);
    CHECK(has(found, "posting differs from the document of atlas"));
  }
  SECTION("a posting missing: named, and counted") {
    edit([&](st::Transaction& t) { REQUIRE(t.erase(posting)); });
    const auto found = problems();
    CHECK(found.size() == 2);
    CHECK(has(found, "missing: the posting of a word of atlas"));
    CHECK(has(found, std::to_string(postings - 1) + " search postings stored, but the documents " +
                         "hold " + std::to_string(postings)));
  }
  SECTION("a posting replaced by another word's: the missing one named, the counts agree") {
    edit([&](st::Transaction& t) {
      REQUIRE(t.erase(posting));
      REQUIRE(t.put(other, value));
    });
    const auto found = problems();
    CHECK(found.size() == 1);
    CHECK(has(found, "missing: the posting of a word of atlas"));
  }
  SECTION("a facet key missing: named and counted; one no document makes: counted") {
    const auto stored_facet = first("F");
    const std::string facet = stored_facet.first;
    REQUIRE(count("F") == 1);  // its tag's
    edit([&](st::Transaction& t) { REQUIRE(t.erase(facet)); });
    auto found = problems();
    CHECK(found.size() == 2);
    CHECK(has(found, "missing: a facet key of atlas"));
    CHECK(has(found, "0 facet keys stored, but the documents make 1"));
    edit([&](st::Transaction& t) {
      REQUIRE(t.put(facet, ""));
      REQUIRE(t.put("F" + std::string(1, 'd') + "Tier.Silver" + facet.substr(facet.find('\0')), ""));
    });
    found = problems();
    CHECK(found.size() == 1);
    CHECK(has(found, "2 facet keys stored, but the documents make 1"));
  }
  SECTION("a posting no document makes: counted") {
    edit([&](st::Transaction& t) { REQUIRE(t.put(other, value)); });
    const auto found = problems();
    CHECK(found.size() == 1);
    CHECK(has(found, std::to_string(postings + 1) + " search postings stored, but the documents " +
                         "hold " + std::to_string(postings)));
  }
  SECTION("a terms record (T) of an index before version 6: counted") {
    const std::string terms_key = "T" + posting.substr(posting.size() - 16);
    edit([&](st::Transaction& t) { REQUIRE(t.put(terms_key, std::string("\x03\x00", 2))); });
    const auto found = problems();
    CHECK(found.size() == 1);
    CHECK(has(found, "1 search term records of an index version before 6 stored"));
  }
  SECTION("typeahead keys: a name missing, a word no document makes") {
    const auto name = first("Katlas").first;
    const auto word = first("Jatlas").first;
    edit([&](st::Transaction& t) {
      REQUIRE(t.erase(name));
      REQUIRE(t.put("Jzzz" + word.substr(word.find('\0')), ""));
    });
    const auto found = problems();
    CHECK(found.size() == 3);
    CHECK(has(found, "missing: typeahead name"));
    CHECK(has(found, std::to_string(names - 1) + " typeahead names stored, but the documents " +
                         "have " + std::to_string(names)));
    CHECK(has(found, std::to_string(words + 1) + " typeahead words stored, but the documents " +
                         "have " + std::to_string(words)));
  }
}

namespace {

// Counts the postings (X keys) a cursor passes.
class PostingSteps final : public catalog::storage::Cursor {
 public:
  PostingSteps(std::unique_ptr<catalog::storage::Cursor> inner, std::size_t& postings)
      : inner_(std::move(inner)), postings_(postings) {
    note();
  }
  bool valid() const noexcept override { return inner_->valid(); }
  std::string_view key() const noexcept override { return inner_->key(); }
  std::string_view value() const noexcept override { return inner_->value(); }
  catalog::Result<void> next() override {
    auto n = inner_->next();
    if (n) note();
    return n;
  }

 private:
  void note() {
    if (inner_->valid() && inner_->key().starts_with('X')) ++postings_;
  }
  std::unique_ptr<catalog::storage::Cursor> inner_;
  std::size_t& postings_;
};

// Counts the search documents (Y keys) each transaction reads: what a query's candidates cost;
// and the postings (X keys) it reads, by key or by cursor.
class DocumentReads final : public catalog::storage::Transaction {
 public:
  DocumentReads(std::unique_ptr<catalog::storage::Transaction> inner, std::size_t& reads,
                std::size_t& postings, bool dear)
      : inner_(std::move(inner)), reads_(reads), postings_(postings), dear_(dear) {}
  bool reads_ahead() const noexcept override { return dear_; }
  catalog::Result<std::optional<std::string>> get(std::string_view key) override {
    if (key.starts_with('Y')) ++reads_;
    if (key.starts_with('X')) ++postings_;
    return inner_->get(key);
  }
  catalog::Result<void> put(std::string_view key, std::string_view value) override {
    return inner_->put(key, value);
  }
  catalog::Result<bool> erase(std::string_view key) override { return inner_->erase(key); }
  catalog::Result<std::unique_ptr<catalog::storage::Cursor>> scan(
      const catalog::storage::Range& range, catalog::storage::Direction dir) override {
    auto c = inner_->scan(range, dir);
    if (!c) return c.error();
    return std::unique_ptr<catalog::storage::Cursor>(new PostingSteps(std::move(*c), postings_));
  }
  catalog::Result<void> commit() override { return inner_->commit(); }

 private:
  std::unique_ptr<catalog::storage::Transaction> inner_;
  std::size_t& reads_;
  std::size_t& postings_;
  bool dear_;
};

class DocumentCounting final : public catalog::storage::Backend {
 public:
  std::size_t reads = 0;
  std::size_t postings = 0;
  /// What its transactions' reads_ahead() says: true makes the engine treat each read as dear,
  /// as on PostgreSQL (the memory backend beneath answers prefetch as the default does).
  bool dear = false;
  catalog::Result<std::unique_ptr<catalog::storage::Transaction>> begin(
      catalog::storage::Mode mode) override {
    auto t = inner_.begin(mode);
    if (!t) return t.error();
    return std::unique_ptr<catalog::storage::Transaction>(
        new DocumentReads(std::move(*t), reads, postings, dear));
  }

 private:
  catalog::storage::MemoryBackend inner_;
};

}  // namespace

TEST_CASE("required words read the documents of the rarest clause only, and answer as before",
          "[search][cost]") {
  auto backend = std::make_unique<DocumentCounting>();
  auto* counting = backend.get();
  auto store = catalog::Store::open(std::move(backend), test::test_options()).value();
  Catalog c{store};
  c.make(Kind::glossary, R"({"name":"g","description":"words"})");
  // 40 terms say "common"; 4 of them say "rare" too, one says "rare" in a phrase with "sight".
  for (int i = 0; i < 40; ++i) {
    std::string description = "a common word";
    if (i % 13 == 0) description += i == 13 ? " and a rare sight" : " and a rare one";
    c.make(Kind::glossary_term, R"({"glossary":"g","name":"t)" + std::to_string(100 + i) +
                                    R"(","description":")" + description + "\"}");
  }
  const auto cost = [&](std::string q) {
    counting->reads = 0;
    auto n = c.names(std::move(q));
    return std::to_string(n.size()) + " found, " + std::to_string(counting->reads) + " read";
  };
  // Any word: every document holding either is a candidate.
  CHECK(cost("rare common") == "40 found, 40 read");
  // Required words: only the documents of the rarest, each of which holds the others too.
  CHECK(cost("+rare +common") == "4 found, 4 read");
  CHECK(cost("common AND rare") == "4 found, 4 read");
  CHECK(cost("+rare common") == "4 found, 4 read");
  CHECK(cost("+common +\"rare sight\"") == "1 found, 1 read");
  CHECK(cost("+common +rar*") == "4 found, 4 read");
  CHECK(cost("+common +rare -sight") == "3 found, 4 read");
  CHECK(cost("+rare +missing") == "0 found, 0 read");
  // What the answers are does not change: the words each one matched still rank it.
  CHECK(c.names("+common rare").size() == 40);
  CHECK(c.names("+common rare").front() == "t100");
  CHECK(c.names("+rare +common") == Names{"t100", "t113", "t126", "t139"});
}

TEST_CASE("a word with parts reads a frequent part's postings only for the documents of the "
          "rarest part, and answers as before",
          "[search][cost]") {
  auto backend = std::make_unique<DocumentCounting>();
  auto* counting = backend.get();
  auto store = catalog::Store::open(std::move(backend), test::test_options()).value();
  Catalog c{store};
  make_parts_catalog(c);
  counting->postings = 0;
  CHECK(c.names("alpha3").size() == 23);
  // "alpha3" (1 posting), "alpha" (23), its stem (11), then "3" up to four times those
  // (136) and by key for the 34 documents of the first two: not the 1,100 of "3".
  INFO(counting->postings << " postings read");
  CHECK(counting->postings < 250);
  check_parts_answers(c);
}

TEST_CASE("past the window, ranked by score: only documents whose bound can reach the best "
          "10,000 are read, and the answer is that of reading them all",
          "[search][cost][scale]") {
  // docs/SEARCH_INDEX.md, "The best 10,000". Reads count as dear here (as on PostgreSQL), so
  // the bounds apply past 10,001 candidates; an exact total (track_total_hits) reads every
  // candidate: the oracle of each answer.
  auto backend = std::make_unique<DocumentCounting>();
  auto* counting = backend.get();
  counting->dear = true;
  auto store = catalog::Store::open(std::move(backend), test::test_options()).value();
  Catalog c{store};
  c.make(Kind::glossary, R"({"name":"g","description":"common ground"})");
  constexpr int n = 12'000;
  int rare = 0, rare_live = 0;
  const std::string filler = " lorem ipsum dolor sit amet";
  std::vector<std::string> deleted_ids;
  for (int i = 0; i < n; ++i) {
    // Scores that differ: descriptions of many lengths, some saying the word twice, some names
    // holding it (a field weighing more), a rarer second word, tags to count.
    // Tiers of equal scores, thousands each: the 10,000th best falls inside one, which the
    // bounds cannot split (its unread members might come first by name), so reading stops past
    // it. One in eight is long, and ranks below every other: the best 10,000 are decided
    // before the last batches of those are reached.
    std::string description = "common";
    for (int k = 0; k <= (i % 8 == 7 ? 60 : i % 3); ++k) description += filler;
    if (i % 5 == 0) description += " common";
    if (i % 97 == 0) description += " rare", ++rare, rare_live += i % 202 != 0;
    const std::string name =
        (i % 101 == 0 ? "common_t" : "t") + std::to_string(100'000 + i);
    std::string body = R"({"glossary":"g","name":")" + name + R"(","description":")" +
                       description + R"(","tags":[{"tagFQN":"Tier.T)" + std::to_string(i % 7) +
                       R"("}])";
    if (i % 13 == 0) body += R"(,"displayName":"Common )" + std::to_string(i) + "\"";
    auto made = c.make(Kind::glossary_term, body + "}");
    // Some of the best are soft-deleted: no live query may show them.
    if (i % 202 == 0) deleted_ids.push_back(test::id_of(made));
  }
  c.make(Kind::glossary_term, R"({"glossary":"g","name":"common","description":"the word"})");
  for (const auto& id : deleted_ids)
    REQUIRE(c.s.remove_json(c.admin, Kind::glossary_term,
                            catalog::EntityKey::by_id(catalog::parse_uuid(id).value()), {})
                .has_value());
  c.clean();

  const auto hits = [](const catalog::SearchResult& r) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& h : r.hits)
      out.emplace_back(std::visit([](const auto& e) { return e.name; }, h.entity), h.score);
    return out;
  };
  // What a query must read: fewer documents than the candidates, every one, or either.
  enum class Reads { fewer, all, any };
  const auto same = [&](SearchRequest r, Reads reads) {
    INFO("q=" << r.q << " index=" << r.index << " from=" << r.from << " size=" << r.size);
    SearchRequest all = r;
    all.track_total_hits = true;
    counting->reads = 0;
    auto every = c.s.search(c.admin, all);
    const auto read_all = counting->reads;
    counting->reads = 0;
    auto best = c.s.search(c.admin, r);
    const auto read_best = counting->reads;
    REQUIRE(every.has_value());
    REQUIRE(best.has_value());
    CHECK(every->total > 10'000);
    CHECK(every->total_exact);
    CHECK(best->total == 10'000);
    CHECK(!best->total_exact);
    CHECK(hits(*best) == hits(*every));
    REQUIRE(best->aggregations.size() == every->aggregations.size());
    for (std::size_t i = 0; i < best->aggregations.size(); ++i) {
      INFO(best->aggregations[i].field);
      CHECK(best->aggregations[i].buckets == every->aggregations[i].buckets);
    }
    // Rendering the page reads no search document: these are the candidates' alone.
    if (reads == Reads::fewer) CHECK(read_best < read_all);
    if (reads == Reads::all) CHECK(read_best == read_all);
    CHECK(read_best <= read_all);
    return *best;
  };
  SearchRequest r;
  r.q = "common";
  r.size = 20;
  const auto first = same(r, Reads::fewer);
  REQUIRE(!first.hits.empty());
  CHECK(std::visit([](const auto& e) { return e.name; }, first.hits.front().entity) == "common");
  r.index = "glossaryTerm";
  r.from = 9'980;
  same(r, Reads::fewer);  // the window's last page
  r.from = 0;
  r.q = "common rare";  // those with both words first
  same(r, Reads::fewer);
  r.q = "comm*";
  same(r, Reads::fewer);
  r.q = "common -rare";
  same(r, Reads::fewer);
  // A phrase: bounded as if found wherever its words are. Here the long descriptions, which
  // say "lorem" 61 times, rank first: nothing is left unread, but the answer is the same.
  r.q = "\"common lorem\"";
  same(r, Reads::any);
  r.q = "common";
  r.filter = passes_all();  // tested on each document read
  same(r, Reads::fewer);
  r.filter.reset();
  // Fewer candidates than the window and one: every one is read.
  r.q = "common +rare";
  counting->reads = 0;
  auto few = c.s.search(c.admin, r).value();
  CHECK(few.total_exact);
  CHECK(few.total == rare_live);
  CHECK(counting->reads == static_cast<std::size_t>(rare));
  // aggregate counts the same best 10,000.
  AggregateRequest a;
  a.q = "common";
  a.field = "tags.tagFQN";
  a.size = 50;
  SearchRequest all;
  all.q = "common";
  all.track_total_hits = true;
  auto facet = c.s.aggregate(c.admin, a).value();
  auto every = c.s.search(c.admin, all).value();
  for (const auto& f : every.aggregations)
    if (f.field == "tags.tagFQN") CHECK(facet.buckets == f.buckets);
  // Read as cheap (LMDB, memory): four windows of candidates before the bounds pay.
  counting->dear = false;
  r.q = "common";
  same(r, Reads::all);
}
