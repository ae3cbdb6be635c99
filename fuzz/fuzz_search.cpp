// Search requests on any bytes (docs/SEMANTICS.md §16), over a small store built once. The first
// byte chooses what the rest is: 0, a query string `q`; 1, a `query_filter`; 2, a typeahead
// prefix. Properties: nothing crashes; a query string is refused only for its size (over 1,024
// bytes or 32 words) or for bytes that are not UTF-8, never for its syntax; a filter is read or
// refused as invalid_parameter, and a filter that was read is answered or refused as
// invalid_parameter (an unsupported field); suggest answers any UTF-8 prefix within the size
// limit; every hit is a live entity.
#include "fuzz_support.hpp"

#include <catalog/detail/utf8.hpp>
#include <catalog/json.hpp>
#include <catalog/search.hpp>
#include <catalog/store.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

catalog::Store& store() {
  static catalog::Store s = [] {
    catalog::StoreOptions o;
    o.admins = {"admin"};
    o.clock = [] { return std::int64_t{1767225600000}; };
    auto made = catalog::Store::in_memory(o);
    if (!made) fuzz::fail("cannot open a store", made.error().message());
    auto admin = made->principal("admin").value();
    auto create = [&](catalog::Kind kind, std::string_view body) {
      if (!made->create_json(admin, kind, catalog::json::parse(body).value()))
        fuzz::fail("cannot create", body);
    };
    create(catalog::Kind::glossary, R"({"name":"biz","description":"Business words",
        "tags":[{"tagFQN":"PII.Sensitive"}]})");
    create(catalog::Kind::glossary_term, R"({"glossary":"biz","name":"customerOrders",
        "description":"Orders placed by customers; 東京 déjà-vu getHTTPResponse2","synonyms":["sales"]})");
    create(catalog::Kind::glossary_term, R"({"glossary":"biz","name":"churn.rate",
        "description":"Customers who leave"})");
    return std::move(*made);
  }();
  return s;
}

bool too_long(std::string_view q) {
  if (q.size() > 1024) return true;
  std::size_t words = 0;
  bool in = false;
  for (char c : q) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    if (space)
      in = false;
    else if (!in)
      in = true, ++words;
  }
  return words > 32;
}

void check_hits(const catalog::SearchResult& r, std::string_view input) {
  for (const auto& h : r.hits)
    if (std::visit([](const auto& e) { return e.deleted; }, h.entity))
      fuzz::fail("a live search found a deleted entity", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto& s = store();
  static const auto admin = s.principal("admin").value();
  switch (data[0] % 3) {
  case 0: {
    catalog::SearchRequest r;
    r.q = std::string(text);
    auto found = s.search(admin, r);
    const bool text_ok = catalog::detail::valid_utf8(text);
    if (found) {
      if (too_long(text)) fuzz::fail("an over-long query was answered", text);
      if (!text_ok) fuzz::fail("a query that is not UTF-8 was answered", text);
      check_hits(*found, text);
    } else if (found.error().code() != catalog::Errc::invalid_parameter ||
               (!too_long(text) && text_ok)) {
      fuzz::fail("a query string was refused for its syntax: " + found.error().message(), text);
    }
    break;
  }
  case 1: {
    auto filter = catalog::parse_search_filter(text);
    if (!filter) {
      if (filter.error().code() != catalog::Errc::invalid_parameter)
        fuzz::fail("a filter was refused with another code: " + filter.error().message(), text);
      break;
    }
    catalog::SearchRequest r;
    r.q = "customers";
    r.filter = *filter;
    auto found = s.search(admin, r);
    if (found)
      check_hits(*found, text);
    else if (found.error().code() != catalog::Errc::invalid_parameter)
      fuzz::fail("a read filter was refused with another code: " + found.error().message(), text);
    break;
  }
  case 2: {
    auto suggested = s.suggest(admin, text, "all", 10);
    const bool refusable = text.size() > 1024 || !catalog::detail::valid_utf8(text);
    if (!suggested && (!refusable || suggested.error().code() != catalog::Errc::invalid_parameter))
      fuzz::fail("a prefix was refused: " + suggested.error().message(), text);
    if (suggested && refusable) fuzz::fail("a prefix that is not UTF-8 was answered", text);
    break;
  }
  }
  return 0;
}
