// The analysis of search (docs/SEMANTICS.md §16 "Words"), case by case: Unicode normalization,
// case folding and marks, splitting at separators, case changes and letter-digit boundaries with
// the whole word kept, CJK pairs, the 64-byte cut, bytes that are not UTF-8, and stemming.
#include <catalog/detail/search/analyzer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace catalog::search;

namespace {

// Every word of `text` as the index keeps it: each whole, then its parts.
std::vector<std::string> indexed(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& w : words(text)) {
    out.push_back(w.whole);
    out.insert(out.end(), w.parts.begin(), w.parts.end());
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("words split at separators, case changes and digits, keeping the whole word",
          "[search][analyzer]") {
  CHECK(indexed("customerOrders") == Strings{"customerorders", "customer", "orders"});
  CHECK(indexed("customer_orders") == Strings{"customer", "orders"});
  CHECK(indexed("customer orders") == Strings{"customer", "orders"});
  CHECK(indexed("getHTTPResponse2") ==
        Strings{"gethttpresponse2", "get", "http", "response", "2"});
  CHECK(indexed("python3") == Strings{"python3", "python", "3"});
  CHECK(indexed("python-3") == Strings{"python", "3"});
  CHECK(indexed("dim.customer.\"v1.0\"") == Strings{"dim", "customer", "v1", "v", "1", "0"});
  CHECK(indexed("HTTP") == Strings{"http"});
  CHECK(indexed("A") == Strings{"a"});
  CHECK(indexed("  --  ").empty());
  CHECK(indexed("").empty());
  CHECK(indexed("g++ & [x]") == Strings{"g", "x"});
}

TEST_CASE("positions count the words as typed", "[search][analyzer]") {
  const auto w = words("Churn model, v2churn");
  REQUIRE(w.size() == 3);
  CHECK(w[0].position == 0);
  CHECK(w[1].position == 1);
  CHECK(w[2].position == 2);
  CHECK(w[2].whole == "v2churn");
  CHECK(w[2].parts == Strings{"v", "2", "churn"});
}

TEST_CASE("Unicode: NFKC, marks removed, case folded", "[search][analyzer]") {
  CHECK(indexed("Café") == Strings{"cafe"});
  CHECK(indexed("STRASSE Straße") == Strings{"strasse", "strasse"});
  CHECK(indexed("\xef\xac\x81le") == Strings{"file"});                   // the fi ligature
  CHECK(indexed("\xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8c") == Strings{"full"});  // Ｆｕｌｌ
  CHECK(indexed("ÉTÉ été") == Strings{"ete", "ete"});
  CHECK(fold("Ünïcode Name") == "unicode name");
  CHECK(fold("g++") == "g++");
}

TEST_CASE("Han, Kana and Hangul runs are overlapping pairs", "[search][analyzer]") {
  CHECK(indexed("東京都庁") == Strings{"東京都庁", "東京", "京都", "都庁"});
  CHECK(indexed("東") == Strings{"東"});
  // Marks go everywhere, the voicing marks of Kana too (デ is テ), in text and queries alike.
  CHECK(indexed("データ分析") == Strings{"テータ分析", "テー", "ータ", "タ分", "分析"});
  CHECK(indexed("한국어") == Strings{"한국어", "한국", "국어"});
  // A CJK run and Latin letters are separate words.
  CHECK(indexed("mlflow模型") == Strings{"mlflow", "模型"});
}

TEST_CASE("a word is cut at 64 bytes, between characters", "[search][analyzer]") {
  const auto w = words(std::string(100, 'a'));
  REQUIRE(w.size() == 1);
  CHECK(w[0].whole == std::string(64, 'a'));
  std::string accented;
  for (int i = 0; i < 40; ++i) accented += "\xc3\xa6";  // æ: two bytes, no mark to strip
  const auto v = words(accented);
  REQUIRE(v.size() == 1);
  CHECK(v[0].whole.size() == 64);
  CHECK(words(std::string(30, 'x') + "1" + std::string(80, 'y'))[0].parts.back().size() == 64);
}

TEST_CASE("emoji are not words: they separate the words around them", "[search][analyzer]") {
  CHECK(indexed("\xf0\x9f\x98\x80").empty());                                    // 😀
  CHECK(indexed("data\xf0\x9f\x98\x80lake") == Strings{"data", "lake"});           // data😀lake
  // A joined sequence (👩 ZWJ 💻): the joiner is dropped, both pictures separate.
  CHECK(indexed("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb" "dev") == Strings{"dev"});
  CHECK(indexed("\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd" "ok") == Strings{"ok"});  // 👍🏽: a skin tone
  CHECK(indexed("\xf0\x9f\x87\xa9\xf0\x9f\x87\xaa" "berlin") == Strings{"berlin"});  // a flag
  CHECK(indexed("\xe2\x9d\xa4\xef\xb8\x8f" "love") == Strings{"love"});  // ❤ and a variation selector
  // A keycap (1, a variation selector, the enclosing keycap mark) is its digit.
  CHECK(indexed("1\xef\xb8\x8f\xe2\x83\xa3 go") == Strings{"1", "go"});
  std::string many;
  for (int i = 0; i < 2560; ++i) many += "\xf0\x9f\x98\x80";  // 10 KB of them
  CHECK(indexed(many).empty());
  CHECK(fold("\xf0\x9f\x98\x80 Go") == "\xf0\x9f\x98\x80 go");  // typeahead keeps them
}

TEST_CASE("10 KB words: the whole cut at 64 bytes between characters, each part cut alike",
          "[search][analyzer]") {
  const auto one = [](const std::string& text) {
    auto w = words(text);
    REQUIRE(w.size() == 1);
    return w[0];
  };
  // One letter 10,240 times: one word of 64 letters, no parts.
  const auto plain = one(std::string(10240, 'a'));
  CHECK(plain.whole == std::string(64, 'a'));
  CHECK(plain.parts.empty());
  // Letters and digits in turn: 10,240 parts of one character, the whole cut.
  std::string mixed;
  for (int i = 0; i < 5120; ++i) mixed += "a1";
  const auto m = one(mixed);
  CHECK(m.whole.size() == 64);
  REQUIRE(m.parts.size() == 10240);
  CHECK(m.parts.front() == "a");
  CHECK(m.parts.back() == "1");
  // camelCase 10 KB long: a part per capital, the first "a", then "ba".
  std::string camel;
  for (int i = 0; i < 5120; ++i) camel += "aB";
  const auto c = one(camel);
  REQUIRE(c.parts.size() == 5121);
  CHECK(c.parts[0] == "a");
  CHECK(c.parts[1] == "ba");
  CHECK(c.parts.back() == "b");
  // A part longer than 64 bytes is cut too: a digit, then 10 KB of letters.
  const auto long_part = one("1" + std::string(10240, 'y'));
  REQUIRE(long_part.parts.size() == 2);
  CHECK(long_part.parts[1] == std::string(64, 'y'));
  // Accented: the marks go first, then the cut (64 letters, not 32 two-byte ones).
  std::string accented;
  for (int i = 0; i < 5120; ++i) accented += "\xc3\xa9";  // é
  CHECK(one(accented).whole == std::string(64, 'e'));
  // Han: the run cut between characters (21 of 3 bytes), and every pair of the run.
  std::string han;
  for (int i = 0; i < 3413; ++i) han += "\xe6\x9d\xb1";  // 東, 10,239 bytes
  const auto h = one(han);
  CHECK(h.whole.size() == 63);
  REQUIRE(h.parts.size() == 3412);
  CHECK(h.parts.front() == "\xe6\x9d\xb1\xe6\x9d\xb1");
  // 10 KB of short dotted parts is 2,048 words, not one.
  std::string dotted;
  for (int i = 0; i < 2048; ++i) dotted += "abcd.";
  const auto d = words(dotted);
  REQUIRE(d.size() == 2048);
  CHECK(d.back().whole == "abcd");
  CHECK(d.back().position == 2047);
}

TEST_CASE("bytes that are not UTF-8 separate words", "[search][analyzer]") {
  CHECK(indexed("abc\xff" "def") == Strings{"abc", "def"});
  CHECK(indexed("\xc3") == Strings{});
  CHECK(indexed("x\xed\xa0\x80y") == Strings{"x", "y"});  // an encoded surrogate
  CHECK(fold("a\xff" "b") == "a b");
}

TEST_CASE("English stemming", "[search][analyzer]") {
  CHECK(stem("orders") == "order");
  CHECK(stem("running") == "run");
  CHECK(stem("customers") == "custom");
  CHECK(stem("churn") == "churn");
  CHECK(stem("") == "");
  CHECK(stem("東京") == "東京");
}

TEST_CASE("stems stay right when the memo of recent stems is full and its slots reused",
          "[search][analyzer]") {
  // 60,000 distinct words, more than the memo of a thread holds, so many share a slot in turn.
  static constexpr std::string_view suffixes[] = {"ing", "s", "ed", "ness", "ation", "ly"};
  std::vector<std::string> words;
  for (int i = 0; i < 60'000; ++i) {
    std::string w = "t";
    for (int n = i; n > 0; n /= 26) w += static_cast<char>('a' + n % 26);
    words.push_back(w + std::string(suffixes[i % 6]));
  }
  std::string prefix;
  for (int i = 0; i < 16; ++i) prefix += "an";
  words.push_back(prefix + "running");  // longer than the memo keeps
  // Each word stemmed once, in a thread of its own (a memo of its own, each word met once).
  std::vector<std::string> expected;
  std::thread([&] {
    for (const auto& w : words) expected.push_back(stem(w));
  }).join();
  CHECK(expected.back() == prefix + "run");
  // Here, in another order and twice, so that words meet their slots held by others.
  std::mt19937 rng(7);
  std::vector<std::size_t> order(words.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int round = 0; round < 2; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    for (auto i : order) {
      INFO(words[i]);
      REQUIRE(stem(words[i]) == expected[i]);
    }
  }
  CHECK(stem("running") == "run");
  CHECK(stem("orders") == "order");
}

TEST_CASE("ignorable characters join, Kana punctuation separates", "[search][analyzer]") {
  CHECK(indexed("cus\xc2\xad" "tomer") == Strings{"customer"});  // a soft hyphen
  CHECK(indexed("データ・分析") == Strings{"テータ", "テー", "ータ", "分析"});
  CHECK(indexed("人々") == Strings{"人々"});
}

TEST_CASE("ASCII text gives the words the Unicode path gives", "[search][analyzer]") {
  // ASCII text is analysed by a path of its own; a non-ASCII word after it sends the same text
  // through the general path, which must find the same words before that one.
  const std::string alphabet = "aZ9_ -.xY0Q:b\tHTTPs2";
  std::uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;  // a fixed LCG: the same texts on every run
    return seed >> 8;
  };
  std::vector<std::string> texts = {"getHTTPResponse2", "customer_orders", "ABCdef", "a1B2c3",
                                    "XMLHttpRequest", std::string(100, 'A') + "bc",
                                    "  --  ", ""};
  for (int i = 0; i < 500; ++i) {
    std::string t;
    const auto length = next() % 40;
    for (std::uint32_t k = 0; k < length; ++k) t += alphabet[next() % alphabet.size()];
    texts.push_back(t);
  }
  for (const auto& t : texts) {
    INFO(t);
    const auto ascii = words(t);
    auto general = words(t + " \xc3\xa9");  // é
    REQUIRE(!general.empty());
    CHECK(general.back().whole == "e");  // its mark removed
    general.pop_back();
    REQUIRE(ascii.size() == general.size());
    for (std::size_t k = 0; k < ascii.size(); ++k) {
      CHECK(ascii[k].whole == general[k].whole);
      CHECK(ascii[k].parts == general[k].parts);
      CHECK(ascii[k].position == general[k].position);
    }
  }
}

TEST_CASE("a query's phrase read with its words that split as their parts", "[search][analyzer]") {
  CHECK(phrase_as_parts(words("customerOrders table")) == Strings{"customer", "orders", "table"});
  CHECK(phrase_as_parts(words("the getHTTPResponse2 x1")) ==
        Strings{"the", "get", "http", "response", "2", "x", "1"});
  CHECK(phrase_as_parts(words("customer_orders table")).empty());  // no word splits
  CHECK(phrase_as_parts(words("customerorders table")).empty());
  // A Han run's overlapping pairs are not read one after another.
  CHECK(phrase_as_parts(words("\xe6\x9d\xb1\xe4\xba\xac\xe9\x83\xbd tower")).empty());
  CHECK(phrase_as_parts(words("\xe6\x9d\xb1\xe4\xba\xac\xe9\x83\xbd towerA")) ==
        Strings{"\xe6\x9d\xb1\xe4\xba\xac\xe9\x83\xbd", "tower", "a"});
}

TEST_CASE("has_phrase answers what reading each word whole or as its parts answers",
          "[search][analyzer]") {
  // The reference: a graph of the text's words, each whole and, where it reads as parts, each
  // part; after a whole or a last part come the next word's whole and first part, after a part
  // the next part. The phrase stands where a walk of the graph spells it.
  auto reference = [](std::string_view text, const Strings& phrase) {
    if (phrase.empty()) return true;
    const auto all = words(text);
    struct Node {
      std::string token;
      std::vector<std::size_t> after;
    };
    std::vector<Node> nodes;
    std::vector<std::size_t> whole_at(all.size()), first_part_at(all.size(), SIZE_MAX);
    for (std::size_t i = 0; i < all.size(); ++i) {
      whole_at[i] = nodes.size();
      nodes.push_back({all[i].whole, {}});
      if (reads_as_parts(all[i])) {
        first_part_at[i] = nodes.size();
        for (const auto& p : all[i].parts) nodes.push_back({p, {}});
      }
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      std::vector<std::size_t> next_word;
      if (i + 1 < all.size()) {
        next_word.push_back(whole_at[i + 1]);
        if (first_part_at[i + 1] != SIZE_MAX) next_word.push_back(first_part_at[i + 1]);
      }
      nodes[whole_at[i]].after = next_word;
      if (first_part_at[i] != SIZE_MAX) {
        const auto n = all[i].parts.size();
        for (std::size_t j = 0; j + 1 < n; ++j)
          nodes[first_part_at[i] + j].after = {first_part_at[i] + j + 1};
        nodes[first_part_at[i] + n - 1].after = next_word;
      }
    }
    std::set<std::size_t> at;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (nodes[n].token == phrase[0]) at.insert(n);
    for (std::size_t k = 1; k < phrase.size() && !at.empty(); ++k) {
      std::set<std::size_t> next;
      for (auto n : at)
        for (auto m : nodes[n].after)
          if (nodes[m].token == phrase[k]) next.insert(m);
      at = std::move(next);
    }
    return !at.empty();
  };
  // Cases by hand, each answer checked against the reference too.
  const std::string long_word(70, 'Q');
  const struct {
    std::string text;
    Strings phrase;
    bool expected;
  } cases[] = {
      {"Customer orders, by region", {"customer", "orders"}, true},
      {"customer-orders", {"customer", "orders"}, true},     // a separator is a separator
      {"customerOrders", {"customer", "orders"}, true},      // a word read as its parts
      {"customerOrders", {"customerorders"}, true},
      {"customerOrders", {"orders", "customer"}, false},
      {"the customerOrders table", {"the", "customer"}, true},   // into a word's first part
      {"the customerOrders table", {"orders", "table"}, true},   // out of its last part
      {"the customerOrders table", {"customerorders", "table"}, true},
      {"the customerOrders table", {"the", "orders"}, false},
      {"getHTTPResponse2 now", {"http", "response", "2", "now"}, true},
      {"orders customer", {"customer", "orders"}, false},    // order matters
      {"customer the orders", {"customer", "orders"}, false},  // consecutive places only
      {"HTTP2 server", {"http2", "server"}, true},
      {long_word + " x", {std::string(64, 'q'), "x"}, true},  // the 64-byte cut
      {long_word, {std::string(70, 'q')}, false},
      {"Caf\xc3\xa9 au lait", {"cafe", "au"}, true},          // the general path
      {"\xe6\x9d\xb1\xe4\xba\xac tower", {"\xe6\x9d\xb1\xe4\xba\xac", "tower"}, true},
      {"", {"x"}, false},
      {"anything", {}, true},
      {"a a a b", {"a", "a", "b"}, true},                    // a match that starts again
      {"a b a b c", {"a", "b", "c"}, true},
      {"a b a c", {"a", "b", "c"}, false},
      {"plain ascii text, then caf\xc3\xa9", {"cafe"}, true},  // non-ASCII past 8 bytes
  };
  for (const auto& c : cases) {
    INFO(c.text);
    CHECK(has_phrase(c.text, c.phrase) == c.expected);
    CHECK(reference(c.text, c.phrase) == c.expected);
  }
  // Phrases of more than 64 words.
  std::string many;
  for (int i = 0; i < 70; ++i) many += i == 69 ? "end" : "w ";
  const Strings seventy_ws(69, "w");
  Strings ending(65, "w");
  ending.push_back("end");
  Strings wrong_end(65, "w");
  wrong_end.push_back("x");
  CHECK(has_phrase(many, seventy_ws));
  CHECK(has_phrase(many, ending));
  CHECK_FALSE(has_phrase(many, wrong_end));
  CHECK(reference(many, ending));
  // Seeded random texts, with phrases taken from their own words (and some changed).
  const std::string alphabet = "aZ9_ -.xY0Q:b\tHTTPs2";
  std::uint32_t seed = 424242;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;  // a fixed LCG: the same texts on every run
    return seed >> 8;
  };
  int found = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string t;
    const auto length = next() % 60;
    for (std::uint32_t k = 0; k < length; ++k) t += alphabet[next() % alphabet.size()];
    if (next() % 8 == 0) t += " \xc3\xa9t\xc3\xa9";  // some through the general path
    const auto all = words(t);
    Strings phrase;
    if (!all.empty()) {
      const std::size_t from = next() % all.size();
      const std::size_t count = 1 + next() % std::min<std::size_t>(3, all.size() - from);
      for (std::size_t k = 0; k < count; ++k) phrase.push_back(all[from + k].whole);
      // Sometimes from a word's parts on, as a phrase may read them.
      if (next() % 3 == 0 && reads_as_parts(all[from])) {
        phrase.clear();
        const auto& parts = all[from].parts;
        for (std::size_t j = next() % parts.size(); j < parts.size(); ++j)
          phrase.push_back(parts[j]);
        if (from + 1 < all.size()) phrase.push_back(all[from + 1].whole);
      }
      if (next() % 3 == 0) phrase[next() % phrase.size()] += "z";
    } else {
      phrase.push_back("a");
    }
    INFO(t);
    const bool expected = reference(t, phrase);
    found += expected ? 1 : 0;
    CHECK(has_phrase(t, phrase) == expected);
  }
  CHECK(found > 1000);  // the phrases mostly stand in their texts: both answers are exercised
  CHECK(found < 2000);
}
