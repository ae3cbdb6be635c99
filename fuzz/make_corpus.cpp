// Writes the seed corpus of the fuzz targets: fuzz_make_corpus <dir> writes <dir>/<target>/<seed>
// for every target; the files under fuzz/corpus/ are its output (ctest fuzz_corpus_current checks
// that they still are). With --large it writes instead the long versions of the two patch
// sequences of issue 9 (megabytes each, for long runs, not kept in the repository).
//
// The two sequences: (1) `add /extension/n` a 60-deep object, `move /extension/c` to its
// innermost object, `move /extension/n` to `/extension/c`, repeated: every triple nests the
// document about 60 levels deeper, though no body is deeper than 64; (2) `copy` from "" (the
// whole document) into `/extension/x<i>`, repeated: every copy doubles the document.
#include "fuzz_support.hpp"

#include <catalog/detail/base64url.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;

fs::path out_dir;

void write(std::string_view target, std::string_view name, std::string_view bytes) {
  auto dir = out_dir / target;
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) fuzz::fail("cannot write a seed", (dir / name).string());
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// {"c":{"c":...{}}}: `depth` nested objects.
std::string nested_object(std::size_t depth) {
  return repeat(R"({"c":)", depth - 1) + "{}" + repeat("}", depth - 1);
}

// Sequence (1) with `triples` triples, as a JSON Patch body.
std::string deep_move(std::size_t triples) {
  constexpr std::size_t depth = 60;
  std::string body = R"([{"op":"add","path":"/extension","value":{"c":{}}})";
  const std::string add =
      R"(,{"op":"add","path":"/extension/n","value":)" + nested_object(depth) + "}";
  const std::string move_in =
      R"(,{"op":"move","from":"/extension/c","path":"/extension/n)" + repeat("/c", depth) + R"("})";
  const std::string move_back = R"(,{"op":"move","from":"/extension/n","path":"/extension/c"})";
  for (std::size_t i = 0; i < triples; ++i) body += add + move_in + move_back;
  return body + "]";
}

// Sequence (2) with `copies` copies, as a JSON Patch body: each to a new member, so each copy
// holds all the earlier ones.
std::string copy_root(std::size_t copies) {
  std::string body = R"([{"op":"add","path":"/extension","value":{}})";
  for (std::size_t i = 0; i < copies; ++i)
    body += R"(,{"op":"copy","from":"","path":"/extension/x)" + std::to_string(i) + R"("})";
  return body + "]";
}

std::string rest_patch(std::string_view body) {
  return "PATCH\n/v1/mlmodels/{model}\nContent-Type: application/json-patch+json\n\n" +
         std::string(body);
}

void large() {
  write("fuzz_patch", "deep_move_1700", deep_move(1700));
  write("fuzz_patch", "deep_move_11000", deep_move(11000));
  write("fuzz_patch", "copy_root_40", copy_root(40));
  write("fuzz_rest", "patch_deep_move_1700", rest_patch(deep_move(1700)));
}

void json_parse() {
  const char* t = "fuzz_json_parse";
  write(t, "model",
        R"({"name":"churn","service":"mlflow","algorithm":"xgboost",)"
        R"("mlFeatures":[{"name":"tenure","dataType":"numerical"}],)"
        R"("extension":{"team":"growth","weights":[0.25,1e-3,-7]}})");
  write(t, "policy",
        R"({"name":"p","rules":[{"name":"r","effect":"deny","resources":["all"],)"
        R"j("operations":["Delete"],"condition":"!isOwner()"}]})j");
  write(t, "numbers",
        "[0,-0,0.1,1.3,12.0,-0.0,1e308,-1e-308,5e-324,2.2250738585072014e-308,"
        "18446744073709551615,-9223372036854775808,9223372036854775808,"
        "123456789012345678901234567890,1E2,1e+2,0.30000000000000004]");
  write(t, "strings", R"(["\u00e9\ud83d\ude00","\\\"\/\b\f\n\r\t","é","\u0000",""])");
  write(t, "whitespace", " \t\r\n{ \"a\" : [ 1 , { \"b\" : null } , true , false ] } \n");
  write(t, "depth_64", repeat("[", 64) + repeat("]", 64));
  write(t, "depth_65", repeat("[", 65) + repeat("]", 65));
  write(t, "deep_objects", repeat(R"({"a":)", 100) + "1" + repeat("}", 100));
  write(t, "duplicate", R"({"a":1,"a":2})");
  write(t, "invalid_utf8", "\"\xff\xfe\"");
  write(t, "lone_surrogate", R"(["\ud800"])");
  write(t, "overflow", "[1e400]");
  write(t, "trailing", "{} {}");
}

void patch() {
  const char* t = "fuzz_patch";
  write(t, "merge_description", R"({"description":"Who stays"})");
  write(t, "merge_null", R"({"description":null,"displayName":"Churn"})");
  write(t, "merge_extension", R"({"extension":{"a":{"b":[1,2,3]},"team":null}})");
  write(t, "merge_tags", R"({"tags":[{"tagFQN":"Tier.Tier1","labelType":"Manual"}]})");
  write(t, "merge_features", R"({"mlFeatures":[{"name":"age","dataType":"categorical"}]})");
  write(t, "merge_read_only", R"({"name":"other","version":9.9})");
  write(t, "merge_owners", R"({"owners":[]})");
  // A major change (docs/SEMANTICS.md §3): the model goes from 0.1 to 1.1, so its history has no
  // 0.2. CI's fuzz run once reached this and the harness, not the library, assumed 0.2.
  write(t, "merge_algorithm_major", R"({"algorithm":"ys"})");
  write(t, "patch_replace", R"([{"op":"replace","path":"/description","value":"x"}])");
  write(t, "patch_ops",
        R"([{"op":"add","path":"/extension/k","value":[1,{"a":2}]},)"
        R"({"op":"move","from":"/extension/k","path":"/extension/m"},)"
        R"({"op":"copy","from":"/extension/m","path":"/extension/n"},)"
        R"({"op":"test","path":"/extension/n/0","value":1},)"
        R"({"op":"remove","path":"/extension/m"}])");
  write(t, "patch_append_tag", R"([{"op":"add","path":"/tags/-","value":{"tagFQN":"PII.None"}}])");
  write(t, "patch_escaped_pointer", R"([{"op":"add","path":"/extension/a~1b~0c","value":1}])");
  write(t, "patch_into_own_child", R"([{"op":"move","from":"/extension","path":"/extension/c"}])");
  write(t, "patch_copy_root_once", copy_root(1));
  // The two sequences of issue 9 at a size that keeps the repository small: 70 triples (50 KB)
  // already nest the model deeper than stored records were decoded; 20 copies build gigabytes.
  write(t, "deep_move_70", deep_move(70));
  write(t, "copy_root_20", copy_root(20));
}

void cursor() {
  const char* t = "fuzz_cursor";
  const std::string id = "00000000-0000-4000-8000-000000000000";
  auto encoded = [](std::string_view json) {
    return catalog::detail::base64url_encode(json, catalog::detail::Padding::required);
  };
  const std::string churn = R"({"name":"churn","id":")" + id + R"("})";
  write(t, "after_encoded", std::string(1, '\x00') + encoded(churn));
  write(t, "before_encoded", std::string(1, '\x02') + encoded(churn));
  write(t, "after_json", std::string(1, '\x01') + churn);
  write(t, "after_json_scoped_limit4", std::string(1, '\x1d') + churn);
  write(t, "before_json_dotted", std::string(1, '\x03') + R"({"name":"b.2","id":")" + id + R"("})");
  write(t, "after_json_utf8",
        std::string(1, '\x01') + "{\"name\":\"\xc3\xa9t\xc3\xa9\",\"id\":\"" + id + "\"}");
  write(t, "bad_name", std::string(1, '\x01') + R"({"name":"a::b","id":")" + id + R"("})");
  write(t, "extra_member", std::string(1, '\x01') + R"({"name":"x","id":")" + id + R"(","z":1})");
  write(t, "no_id", std::string(1, '\x01') + R"({"name":"x"})");
  write(t, "not_base64", std::string(1, '\x00') + "not a cursor");
  write(t, "unpadded", std::string(1, '\x00') + "eyJuYW1lIjoiYSJ9");
}

void fqn() {
  const char* t = "fuzz_fqn";
  write(t, "one", "churn");
  write(t, "two", "mlflow.churn");
  write(t, "quoted", R"(Business.Revenue."v1.0")");
  write(t, "needless_quotes", R"("ab"."c")");
  write(t, "utf8", "\xc3\xa9t\xc3\xa9.\xe2\x82\xac");
  write(t, "long", repeat(std::string(300, 'a') + ".", 10) + "b");
  write(t, "empty_part", "a..b");
  write(t, "unbalanced", R"("a.b)");
  write(t, "misplaced_quote", R"(a"b.c)");
  write(t, "colons", "a::b.c");
  write(t, "control", std::string("a\x01.b", 5));
}

void search() {
  const char* t = "fuzz_search";
  auto q = [&](std::string_view name, std::string_view text) {
    write(t, std::string("q_") + std::string(name), std::string(1, '\x00') + std::string(text));
  };
  q("words", "customer orders");
  q("phrase", "\"placed by customers\"");
  q("operators", "+orders -churn NOT rate AND customers OR x");
  q("fields", "name:churn description:\"who leave\" tags:pii owner:x");
  q("prefix", "cust* a*");
  q("odd", "\"unbalanced +&[] - * x:y ((");
  q("cjk", "東京 déjà");
  q("star", "*");
  auto f = [&](std::string_view name, std::string_view text) {
    write(t, std::string("filter_") + std::string(name), std::string(1, '\x01') + std::string(text));
  };
  f("must", R"({"query":{"bool":{"must":[{"term":{"entityType":"glossaryTerm"}}]}}})");
  f("nested", R"({"query":{"bool":{"should":[{"bool":{"must_not":{"terms":{"tags.tagFQN.keyword":["PII.Sensitive"]}}}}],"filter":{"term":{"deleted":false}}}}})");
  f("value", R"({"query":{"term":{"glossary.name":{"value":"biz"}}}})");
  f("unsupported", R"({"query":{"bool":{"must":{"range":{"updatedAt":{"gt":1}}}}}})");
  write(t, "suggest", std::string(1, '\x02') + "cust");
}

void jwt() {
  const char* t = "fuzz_jwt";
  const std::string times = R"("iat":)" + std::to_string(fuzz::now_seconds) + R"(,"exp":)" +
                            std::to_string(fuzz::now_seconds + 3600);
  const std::string hs = R"({"alg":"HS256","typ":"JWT"})";
  const std::string strict =
      R"({"sub":"admin","iss":"https://idp.test","aud":"catalog",)" + times + "}";
  write(t, "raw_valid",
        std::string(1, '\0') + fuzz::sign_hs256(hs, R"({"sub":"admin",)" + times + "}"));
  write(t, "raw_valid_strict", std::string(1, '\0') + fuzz::sign_hs256(hs, strict));
  write(t, "raw_garbage",
        std::string("\x00"
                    "abc.def.ghi",
                    12));
  write(t, "hs256", "\x01" + hs + "\n" + strict);
  write(t, "rs256",
        "\x02"
        R"({"alg":"RS256","typ":"JWT"})"
        "\n" +
            strict);
  write(t, "hs256_kid",
        "\x03"
        R"({"alg":"HS256","kid":"h2"})"
        "\n" +
            strict);
  write(t, "email",
        "\x01" + hs + "\n" + R"({"email":"bob@example.com","aud":["x","catalog"],)" + times + "}");
  write(t, "alg_none",
        "\x01"
        R"({"alg":"none"})"
        "\n" +
            strict);
  write(t, "crit",
        "\x01"
        R"({"alg":"HS256","crit":["b64"]})"
        "\n" +
            strict);
  write(t, "not_yet",
        "\x01" + hs + "\n" + R"({"sub":"a","nbf":)" + std::to_string(fuzz::now_seconds + 600) +
            R"(,"exp":1e20})");
  write(t, "exp_string", "\x01" + hs + "\n" + R"({"sub":"a","exp":"tomorrow"})");
  write(t, "wrong_kid",
        "\x01"
        R"({"alg":"HS256","kid":"h2"})"
        "\n" +
            strict);
}

void rest() {
  const char* t = "fuzz_rest";
  write(t, "list", "GET\n/v1/mlmodels?limit=2&fields=*\n\n");
  write(t, "get_by_name", "GET\n/v1/mlmodels/name/mlflow.churn?fields=*&include=all\n\n");
  write(t, "get_term", "GET\n/v1/glossaryTerms/name/Business.Revenue.%22v1.0%22\n\n");
  write(t, "list_scoped", "GET\n/v1/searchIndexes?service=elasticsearch&limit=1\n\n");
  write(t, "create_model",
        "POST\n/v1/mlmodels\nContent-Type: application/json\n\n"
        R"({"name":"m2","service":"mlflow","algorithm":"lr"})");
  write(t, "create_user",
        "POST\n/v1/users\n\n"
        R"({"name":"carol","email":"carol@example.com","isAdmin":true})");
  write(t, "create_policy",
        "POST\n/v1/policies\n\n"
        R"({"name":"p2","rules":[{"name":"r","effect":"deny",)"
        R"("resources":["mlmodel"],"operations":["EditAll"],)"
        R"j("condition":"isOwner() && !noOwner()"}]})j");
  write(t, "patch_json_patch",
        "PATCH\n/v1/mlmodels/{model}\nContent-Type: application/json-patch+json\n"
        "If-Match: \"0.1\"\n\n"
        R"([{"op":"replace","path":"/description","value":"x"}])");
  write(t, "patch_merge",
        "PATCH\n/v1/mlmodels/name/mlflow.churn\n"
        "Content-Type: application/merge-patch+json\n\n"
        R"({"extension":{"a":1}})");
  write(t, "patch_as_bob",
        "PATCH\n/v1/mlmodels/{model}\nAuthorization: Bearer {bob-token}\n\n"
        R"({"description":"mine now"})");
  write(t, "delete_recursive",
        "DELETE\n/v1/services/mlmodelServices/{service}?hardDelete=true&recursive=true\n\n");
  write(t, "delete_soft", "DELETE\n/v1/mlmodels/{model}\nIf-Match: *\n\n");
  write(t, "restore", "PUT\n/v1/mlmodels/restore\n\n{\"id\":\"{model}\"}");
  write(t, "follow", "PUT\n/v1/mlmodels/{model}/followers\n\n\"{bob}\"");
  write(t, "unfollow", "DELETE\n/v1/mlmodels/{model}/followers/{admin}\n\n");
  write(t, "vote",
        "PUT\n/v1/mlmodels/{model}/vote\nAuthorization: Bearer {bob-token}\n\n"
        R"({"updatedVoteType":"votedUp"})");
  write(t, "versions", "GET\n/v1/mlmodels/{model}/versions\n\n");
  write(t, "version", "GET\n/v1/mlmodels/{model}/versions/0.1\n\n");
  write(t, "events", "GET\n/v1/events?after=0&limit=5\n\n");
  write(t, "unauthorized", "GET\n/v1/mlmodels\nAuthorization: Bearer x.y.z\n\n");
  write(t, "method_not_allowed", "DELETE\n/v1/mlmodels\n\n");
  write(t, "bad_target", "GET\n/v1/%zz?limit=abc\n\n");
  write(t, "patch_deep_move_70", rest_patch(deep_move(70)));
  write(t, "patch_copy_root_20", rest_patch(copy_root(20)));
}

// Stored entity records as the engine writes them (from tests/fixtures/store_schema2.pairs), and
// forms only the DOM path reads.
void stored_record() {
  const char* t = "fuzz_stored_record";
  write(t, "policy",
        R"seed({"k":"policy","doc":{"id":"b9a04596-7258-43b1-ad4b-c85203994e2d","name":"no-deletes","fullyQualifiedName":"no-deletes","rules":[{"name":"deny","effect":"deny","resources":["glossaryTerm"],"operations":["Delete"],"condition":"!isOwner()"}],"enabled":true,"version":0.1,"updatedAt":1767225600000,"updatedBy":"admin","deleted":false}})seed");
  write(t, "searchIndex",
        R"seed({"k":"searchIndex","c":"a7e16e11-e931-45cf-9575-a3669b7ad35d","doc":{"id":"cd4a307f-60f4-4b91-878b-63e6532a5886","name":"customers","fullyQualifiedName":"elastic.customers","fields":[{"name":"id","dataType":"KEYWORD"},{"name":"address","dataType":"OBJECT","children":[{"name":"city","dataType":"TEXT"}]}],"indexType":"Index","tags":[],"version":0.2,"updatedAt":1767225600000,"updatedBy":"admin","deleted":false,"displayName":"Customers","changeDescription":{"fieldsAdded":[{"name":"displayName","newValue":"Customers"}],"fieldsUpdated":[],"fieldsDeleted":[],"previousVersion":0.1}}})seed");
  write(t, "mlmodel",
        R"seed({"k":"mlmodel","c":"67c2d87c-1722-4502-90d0-0d22f78038e0","doc":{"id":"c7b3f0a3-3831-4c3f-82b0-8b4b4c802004","name":"churn","fullyQualifiedName":"mlflow.churn","description":"Churn, second","algorithm":"lightgbm","mlFeatures":[{"name":"age","dataType":"numerical"}],"mlHyperParameters":[],"tags":[{"tagFQN":"PII.Sensitive","source":"Classification","labelType":"Manual","state":"Confirmed"}],"version":1.2,"updatedAt":1767225600000,"updatedBy":"admin","deleted":false,"changeDescription":{"fieldsAdded":[],"fieldsUpdated":[{"name":"algorithm","oldValue":"xgboost","newValue":"lightgbm"}],"fieldsDeleted":[],"previousVersion":0.2}}})seed");
  write(t, "glossaryTerm_deleted",
        R"seed({"k":"glossaryTerm","c":"d9e1a598-c6af-427d-8993-08665ef9eca0","g":"d9e1a598-c6af-427d-8993-08665ef9eca0","d":27,"doc":{"id":"701d1e85-8e40-47de-9b26-db62006c7977","name":"Cost","fullyQualifiedName":"Business.Cost","description":"money out","synonyms":[],"status":"Draft","mutuallyExclusive":false,"tags":[],"version":0.4,"updatedAt":1767225600000,"updatedBy":"admin","deleted":true,"changeDescription":{"fieldsAdded":[],"fieldsUpdated":[{"name":"deleted","oldValue":false,"newValue":true}],"fieldsDeleted":[],"previousVersion":0.3}}})seed");
  write(t, "noncanonical",
        R"({"k":"domain","doc":{"id":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0","name":"D",)"
        R"("fullyQualifiedName":"D","description":"d\u00e9\ud83d\ude00","domainType":"Aggregate",)"
        R"("version":2,"updatedAt":1,"updatedBy":"a","deleted":false,"displayName":null}})");
}

}  // namespace

int main(int argc, char** argv) {
  bool want_large = argc == 3 && std::string_view(argv[1]) == "--large";
  if (argc != 2 && !want_large) {
    std::cerr << "usage: fuzz_make_corpus [--large] <dir>\n";
    return 2;
  }
  out_dir = argv[argc - 1];
  if (want_large) {
    large();
    return 0;
  }
  json_parse();
  patch();
  cursor();
  fqn();
  jwt();
  search();
  rest();
  stored_record();
  return 0;
}
