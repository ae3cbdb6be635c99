// The sorts behind reference arrays (detail/engine/reference_sort.hpp), against std::sort of the
// same names and ids: heads that tie on 16 bytes, names that are prefixes of others or shorter
// than a head, bytes above 0x7f, and both the comparison sort (under 64 keys) and the radix sort.
#include <catalog/detail/engine/reference_sort.hpp>

#include "child_process.hpp"

#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

using namespace catalog::engine;

namespace {

struct Named {
  std::string name;
  int id;
  bool operator==(const Named&) const = default;
};

// `n` names drawn from a few families that stress the head: shared 16-byte prefixes, prefixes of
// each other, short names, high bytes.
std::vector<Named> names(std::size_t n, std::uint64_t seed) {
  test::Rng rng(seed);
  const std::vector<std::string> stems = {"", "a", "customer_orders_", "customer_orders_2024",
                                          "\xc3\xa9t\xc3\xa9", "zz", "customer_orders_\xff"};
  std::vector<Named> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = rng.pick(stems);
    for (std::size_t k = rng.below(4); k > 0; --k) name += static_cast<char>('a' + rng.below(3));
    out.push_back({name, static_cast<int>(rng.below(50))});
  }
  return out;
}

// The order sort_references and reorder give, applied to `refs`.
std::vector<Named> sorted_by_heads(std::vector<Named> refs) {
  std::vector<HeadKey> keys(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) keys[i] = HeadKey{name_head(refs[i].name), i};
  sort_references(keys, [&](const HeadKey& a, const HeadKey& b) {
    const auto& x = refs[a.index];
    const auto& y = refs[b.index];
    return x.name != y.name ? x.name < y.name : x.id < y.id;
  });
  std::vector<std::size_t> order;
  for (const auto& k : keys) order.push_back(k.index);
  reorder(refs, order);
  return refs;
}

}  // namespace

TEST_CASE("reference sorts order by name bytewise, then id", "[references]") {
  for (std::size_t n : {0u, 1u, 2u, 17u, 63u, 64u, 65u, 200u, 1000u}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      auto refs = names(n, seed * 1000 + n);
      auto expected = refs;
      std::sort(expected.begin(), expected.end(), [](const Named& a, const Named& b) {
        return a.name != b.name ? a.name < b.name : a.id < b.id;
      });
      INFO("n = " << n << ", seed " << seed);
      CHECK(sorted_by_heads(refs) == expected);
    }
  }
}

TEST_CASE("name heads compare as the names' first 16 bytes", "[references]") {
  CHECK(name_head("") == std::array<std::uint64_t, 2>{0, 0});
  CHECK(name_head("a") < name_head("b"));
  CHECK(name_head("a") < name_head("a\x01"));
  CHECK(name_head("\xff") > name_head("zzzz"));
  CHECK(name_head(std::string(16, 'x') + "a") == name_head(std::string(16, 'x') + "b"));
}

TEST_CASE("reorder puts references in order in place", "[references]") {
  std::vector<std::string> refs = {"c", "a", "d", "b", "e"};
  reorder(refs, {1, 3, 0, 2, 4});
  CHECK(refs == std::vector<std::string>{"a", "b", "c", "d", "e"});
  std::vector<std::string> none;
  reorder(none, {});
  CHECK(none.empty());
}
