// The list cursor codec through its public route, Store::list_json with `before` or `after`.
// Input: one control byte, then the cursor. Control bit 0: the cursor is the rest as is (0) or
// the rest base64url-encoded with padding (1), so mutations also reach the JSON inside a
// well-formed cursor; bit 1: `after` (0) or `before` (1); bit 2: scoped to the service mlflow;
// bits 3-4: the page size (1 to 4).
// Properties: nothing crashes; a refused cursor is a bad_request; a page holds at most `limit`
// entities; the cursors a page gives back are accepted in turn.
#include "fuzz_support.hpp"

#include <catalog/detail/base64url.hpp>
#include <catalog/store.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

using catalog::Kind;

// Six models under one service, named to sort in bytewise order around a dotted and a non-ASCII
// name; built once, as listing changes nothing.
fuzz::World& world() {
  static fuzz::World w = [] {
    auto made = fuzz::World::make();
    for (const char* name : {"attrition", "b.2", "zeta", "\xc3\xa9t\xc3\xa9", "Upper"}) {
      std::string body =
          R"({"name":")" + std::string(name) + R"(","service":"mlflow","algorithm":"xgboost"})";
      fuzz::must(made.store.create_json(made.admin, Kind::mlmodel,
                                        fuzz::must(catalog::json::parse(body), "body")),
                 "create a model");
    }
    return made;
  }();
  return w;
}

catalog::Result<catalog::Store::JsonPage> list(std::optional<std::string> before,
                                               std::optional<std::string> after, bool scoped,
                                               std::int64_t limit) {
  catalog::ListOptions options;
  options.limit = limit;
  options.before = std::move(before);
  options.after = std::move(after);
  if (scoped) options.service = "mlflow";
  return world().store.list_json(world().admin, Kind::mlmodel, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned control = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string cursor =
      (control & 1) ? catalog::detail::base64url_encode(rest, catalog::detail::Padding::required)
                    : std::string(rest);
  const bool before = (control & 2) != 0;
  const bool scoped = (control & 4) != 0;
  const std::int64_t limit = 1 + ((control >> 3) & 3);

  auto page = before ? list(cursor, std::nullopt, scoped, limit)
                     : list(std::nullopt, cursor, scoped, limit);
  if (!page) {
    if (page.error().kind() != catalog::ErrorKind::bad_request)
      fuzz::fail("a cursor was refused with another kind than bad_request", page.error().message());
    return 0;
  }
  if (page->data.size() > std::size_t(limit)) fuzz::fail("a page holds more than its limit");
  if (page->total != 6) fuzz::fail("the total is not the six models");
  if (page->before) {
    auto back = list(page->before, std::nullopt, scoped, limit);
    if (!back) fuzz::fail("a before cursor the list gave is refused", back.error().message());
  }
  if (page->after) {
    auto next = list(std::nullopt, page->after, scoped, limit);
    if (!next) fuzz::fail("an after cursor the list gave is refused", next.error().message());
  }
  return 0;
}
