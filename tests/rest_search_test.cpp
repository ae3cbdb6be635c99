// The search routes of docs/REST.md through rest::Api: answer shapes, 401 and 405, the table of
// bad search input (400 BAD_REQUEST, store unchanged) and the table of odd query strings that
// are plain words (200).

#include "rest_support.hpp"

#include <catch2/catch.hpp>

using namespace rest_test;

namespace {

std::string encoded(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

struct SearchFixture : Fixture {
  SearchFixture() {
    create("services/mlmodelServices", R"({"name":"mlflow","serviceType":"Mlflow"})");
    create("mlmodels", R"({"name":"churnModel","service":"mlflow","algorithm":"xgb",
        "description":"Predicts customer churn from usage","tags":[{"tagFQN":"Tier.Gold"}]})");
    create("glossaries", R"({"name":"biz","description":"Business words"})");
    create("glossaryTerms",
           R"({"glossary":"biz","name":"churn","description":"Customers who leave"})");
  }
};

}  // namespace

TEST_CASE_METHOD(SearchFixture, "search routes answer the shapes of docs/REST.md",
                 "[rest][search]") {
  auto found = ok("GET", "/v1/search/query?q=churn&index=all");
  const auto& hits = found.at("hits").as_object();
  CHECK(hits.at("total").at("value") == 2);
  CHECK(hits.at("total").at("relation") == "eq");
  CHECK(hits.at("max_score").is_double());
  CHECK(found.at("took").is_int64());
  const auto& first = hits.at("hits").at(0).as_object();
  // The exact name first.
  CHECK(first.at("_index") == "glossary_term_search_index");
  CHECK(first.at("_source").at("name") == "churn");
  CHECK(first.at("highlight").at("name").at(0) == "<span class=\"text-highlighter\">churn</span>");
  CHECK(first.at("sort").as_array().size() == 5);
  CHECK(found.at("aggregations").at("entityType").at("buckets").as_array().size() == 2);

  auto model = ok(
      "GET", "/v1/search/query?q=usage&index=mlmodel_search_index&include_source_fields=name,tags");
  const auto& source = model.at("hits").at("hits").at(0).at("_source").as_object();
  CHECK(source.size() == 2);
  CHECK(source.at("tags").at(0).at("tagFQN") == "Tier.Gold");

  auto filtered =
      ok("GET", "/v1/search/query?q=*&query_filter=" +
                    encoded(R"({"query":{"bool":{"must":{"term":{"entityType":"mlmodel"}}}}})"));
  CHECK(filtered.at("hits").at("total").at("value") == 1);

  auto suggest = ok("GET", "/v1/search/suggest?q=chu&index=all");
  const auto& entry = suggest.at("suggest").at("metadata-suggest").at(0).as_object();
  CHECK(entry.at("text") == "chu");
  CHECK(entry.at("options").as_array().size() == 2);
  CHECK(entry.at("options").at(0).at("text") == "churn");

  auto agg = ok("GET", "/v1/search/aggregate?field=tags.tagFQN&q=churn");
  CHECK(agg.at("aggregations").at("tags.tagFQN").at("buckets").at(0).at("key") == "Tier.Gold");

  // A soft delete disappears from the next search.
  auto term = found.at("hits").at("hits").at(0).at("_id").as_string();
  ok("DELETE", "/v1/glossaryTerms/" + std::string(term));
  CHECK(ok("GET", "/v1/search/query?q=leave").at("hits").at("total").at("value") == 0);
  CHECK(ok("GET", "/v1/search/query?q=leave&deleted=true").at("hits").at("total").at("value") == 1);
}

TEST_CASE_METHOD(SearchFixture, "search routes: 401 first, 405 for other methods",
                 "[rest][search]") {
  for (std::string path :
       {"/v1/search/query?q=x", "/v1/search/suggest?q=x", "/v1/search/aggregate?field=status"}) {
    require_error(call("GET", path, {}, {}, std::string("not-a-token")), 401, "UNAUTHORIZED");
    auto r = call("POST", path, "{}");
    CHECK(r.status == 405);
    CHECK(header(r, "Allow") == "GET");
  }
  require_error(call("GET", "/v1/search/other"), 404, "NOT_FOUND");
}

TEST_CASE_METHOD(SearchFixture, "bad search input is 400 and changes nothing", "[rest][search]") {
  const auto before = test::dump(store);
  const std::string long_q(1025, 'a');
  std::string many_words;
  for (int i = 0; i < 33; ++i) many_words += "w%20";  // a + is a literal plus
  std::string deep = R"({"term":{"status":"Approved"}})";
  for (int i = 0; i < 9; ++i) deep = R"({"bool":{"must":[)" + deep + "]}}";
  const std::vector<std::string> rows = {
      "/v1/search/query?q=" + long_q,
      "/v1/search/query?q=" + many_words,
      "/v1/search/query?index=table_search_index",
      "/v1/search/query?index=",
      "/v1/search/query?index=ALL",
      "/v1/search/query?index=policy",
      "/v1/search/query?index=all&index=all",
      "/v1/search/query?from=-1",
      "/v1/search/query?from=x",
      "/v1/search/query?from=10001",
      "/v1/search/query?from=9991&size=10",
      "/v1/search/query?size=10001",
      "/v1/search/query?size=-5",
      "/v1/search/query?size=1e3",
      "/v1/search/query?size=",
      "/v1/search/query?from=5000&size=5001",
      "/v1/search/query?from=99999999999999999999",
      "/v1/search/query?deleted=yes",
      "/v1/search/query?deleted=1",
      "/v1/search/query?deleted=",
      "/v1/search/query?track_total_hits=maybe",
      "/v1/search/query?sort_field=owner",
      "/v1/search/query?sort_field=",
      "/v1/search/query?sort_field=_id",
      "/v1/search/query?sort_field=description",
      "/v1/search/query?sort_order=up",
      "/v1/search/query?sort_order=DESC",
      "/v1/search/query?sort_order=",
      "/v1/search/query?search_after=",
      "/v1/search/query?search_after=x",
      "/v1/search/query?search_after=" + encoded("{}"),
      "/v1/search/query?search_after=" + encoded("[1]"),
      "/v1/search/query?search_after=" + encoded("[null,\"a\"]"),
      "/v1/search/query?search_after=" + encoded("[true,\"a\"]"),
      "/v1/search/query?search_after=" + encoded("[[1],\"a\"]"),
      "/v1/search/query?q=x&search_after=" + encoded("[\"a\",\"b\"]"),
      "/v1/search/query?q=x&search_after=" + encoded("[1,2,3,4,5]"),
      "/v1/search/query?sort_field=updatedAt&search_after=" + encoded("[\"a\",\"b\"]"),
      "/v1/search/query?sort_field=name.keyword&search_after=" + encoded("[1,\"b\"]"),
      "/v1/search/query?query_filter=",
      "/v1/search/query?query_filter=x",
      "/v1/search/query?query_filter=" + encoded("[]"),
      "/v1/search/query?query_filter=" + encoded("{}"),
      "/v1/search/query?query_filter=" + encoded(R"({"bool":{}})"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"match_all":{}}})"),
      // The top is a bool (docs/SEMANTICS.md §16), not a leaf.
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"term":{"status":"Draft"}}})"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"terms":{"status":["Draft"]}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"range":{"updatedAt":{"gt":1}}}}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"term":{"columns.name":"x"}}}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"term":{"name":"x"}}}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"terms":{"status":"x"}}}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"term":{"status":{"v":"x"}}}}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"term":{"status":null}}}}})"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"bool":{"must":{"term":{}}}}})"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"bool":{"boost":2}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":[{"term":{"a":1}},1]}}})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"filter":{"exists":{"field":"tags"}}}}})"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":)" + deep + "}"),
      "/v1/search/query?query_filter=" + encoded(R"({"query":{"bool":{}},"size":1})"),
      "/v1/search/query?query_filter=" +
          encoded(R"({"query":{"bool":{"must":{"term":{"status":"a","deleted":true}}}}})"),
      "/v1/search/query?include_source_fields=",
      "/v1/search/query?q=a&q=b",
      "/v1/search/suggest?q=x&size=101",
      "/v1/search/suggest?q=x&size=-1",
      "/v1/search/suggest?q=x&index=nope",
      "/v1/search/suggest?q=" + long_q,
      "/v1/search/suggest?q=x&q=y",
      "/v1/search/aggregate",
      "/v1/search/aggregate?field=name",
      "/v1/search/aggregate?field=status&size=51",
      "/v1/search/aggregate?field=status&index=nope",
      "/v1/search/aggregate?field=status&deleted=no",
      "/v1/search/aggregate?field=status&q=" + long_q,
  };
  CHECK(rows.size() >= 60);
  for (const auto& row : rows) {
    INFO(row);
    require_error(call("GET", row), 400, "BAD_REQUEST");
  }
  CHECK(test::dump(store) == before);
}

TEST_CASE_METHOD(SearchFixture,
                 "search input that is not text, a bad search_after id, and bool filters 8 deep",
                 "[rest][search]") {
  const auto before = test::dump(store);
  // Bytes that are not UTF-8 in q or value are 400, never echoed back (docs/SEMANTICS.md §15).
  for (const std::string q : {"%ff", "%c3", "a%ff%fe", "%ed%a0%80"}) {
    INFO(q);
    require_error(call("GET", "/v1/search/query?q=" + q), 400, "BAD_REQUEST",
                  "Invalid parameter q: not UTF-8");
    require_error(call("GET", "/v1/search/suggest?q=" + q), 400, "BAD_REQUEST",
                  "Invalid parameter q: not UTF-8");
    require_error(call("GET", "/v1/search/aggregate?field=status&q=" + q), 400, "BAD_REQUEST",
                  "Invalid parameter q: not UTF-8");
    require_error(call("GET", "/v1/search/aggregate?field=status&value=" + q), 400,
                  "BAD_REQUEST", "Invalid parameter value: not UTF-8");
  }
  // search_after: the id a hit's sort values end with, the number of values, their types.
  require_error(call("GET", "/v1/search/query?q=churn&search_after=" +
                                encoded(R"([1,1,2,"a","not-a-uuid"])")),
                400, "BAD_REQUEST", "Invalid parameter search_after: the last value is not an id");
  require_error(call("GET", "/v1/search/query?sort_field=updatedAt&search_after=" +
                                encoded(R"([1,"zzz"])")),
                400, "BAD_REQUEST", "the last value is not an id");
  require_error(call("GET", "/v1/search/query?sort_field=updatedAt&search_after=" +
                                encoded(R"(["abc","00000000-0000-0000-0000-000000000000"])")),
                400, "BAD_REQUEST", "Invalid parameter search_after: value 1 must be a number");
  require_error(call("GET", "/v1/search/query?q=churn&search_after=" + encoded(R"([1,2])")), 400,
                "BAD_REQUEST", "a hit of this sort has 5 sort values, not 2");
  CHECK(test::dump(store) == before);

  // A hit's own sort values continue after it.
  auto first = ok("GET", "/v1/search/query?q=churn&size=1");
  auto after = first.at("hits").at("hits").at(0).at("sort");
  auto next = ok("GET", "/v1/search/query?q=churn&size=1&search_after=" +
                            encoded(catalog::json::serialize(after)));
  CHECK(next.at("hits").at("hits").at(0).at("_id") != first.at("hits").at("hits").at(0).at("_id"));

  // query_filter: bools nest up to 8 deep (docs/SEMANTICS.md §16); the term inside is a leaf.
  auto nested = [](int bools) {
    std::string f = R"({"term":{"entityType":"glossary"}})";
    for (int i = 0; i < bools; ++i) f = R"({"bool":{"must":[)" + f + "]}}";
    return encoded(R"({"query":)" + f.substr(0) + "}");
  };
  auto eight = ok("GET", "/v1/search/query?q=*&query_filter=" + nested(8));
  CHECK(eight.at("hits").at("total").at("value") == 1);
  CHECK(eight.at("hits").at("hits").at(0).at("_source").at("name") == "biz");
  require_error(call("GET", "/v1/search/query?q=*&query_filter=" + nested(9)), 400, "BAD_REQUEST",
                "Invalid parameter query_filter: nested deeper than 8");
}

TEST_CASE_METHOD(SearchFixture, "odd query strings are plain words: 200", "[rest][search]") {
  const std::vector<std::string> odd = {"\"unbalanced",
                                        "unbalanced\"",
                                        "\"",
                                        "\"\"",
                                        "+",
                                        "-",
                                        "*",
                                        "**",
                                        "+&[]",
                                        "&&",
                                        "||",
                                        "!",
                                        "(",
                                        ")",
                                        "((churn",
                                        "churn))",
                                        "x:y",
                                        "unknown:churn",
                                        ":churn",
                                        "churn:",
                                        "a:b:c",
                                        "AND",
                                        "OR",
                                        "NOT",
                                        "AND churn",
                                        "churn NOT",
                                        "+-churn",
                                        "-+churn",
                                        "\\",
                                        "%",
                                        "~churn",
                                        "churn^2",
                                        "churn~",
                                        "[1 TO 5]",
                                        "{a}",
                                        "name:",
                                        "name:\"",
                                        "<script>",
                                        "'; drop",
                                        "🙂",
                                        "東京",
                                        "churn*",
                                        "*churn",
                                        "c*h*u*r*n"};
  CHECK(odd.size() >= 30);
  for (const auto& q : odd) {
    INFO(q);
    auto r = call("GET", "/v1/search/query?q=" + encoded(q));
    CHECK(r.status == 200);
  }
  // And what they find: words inside odd syntax are still words.
  CHECK(ok("GET", "/v1/search/query?q=" + encoded("((churn")).at("hits").at("total").at("value") ==
        2);
  CHECK(ok("GET", "/v1/search/query?q=" + encoded("unknown:churn"))
            .at("hits")
            .at("total")
            .at("value") == 2);
}
