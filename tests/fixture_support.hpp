#ifndef CATALOG_TESTS_FIXTURE_SUPPORT_HPP
#define CATALOG_TESTS_FIXTURE_SUPPORT_HPP

// tests/fixtures/*.pairs: every key and value of a store, hex, one pair a line.

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

const std::string fixtures = CATALOG_TEST_FIXTURES_DIR;

inline std::string hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

inline std::string unhex(std::string_view text) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  REQUIRE(text.size() % 2 == 0);
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2)
    out += static_cast<char>(nibble(text[i]) * 16 + nibble(text[i + 1]));
  return out;
}

inline std::vector<std::pair<std::string, std::string>> read_pairs(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::string line; std::getline(in, line);) {
    auto space = line.find(' ');
    REQUIRE(space != std::string::npos);
    pairs.emplace_back(unhex(std::string_view(line).substr(0, space)),
                       unhex(std::string_view(line).substr(space + 1)));
  }
  return pairs;
}

}  // namespace

#endif  // CATALOG_TESTS_FIXTURE_SUPPORT_HPP
