// catalog::json::parse on any bytes, at the request depth (64) and at the stored-record depth
// (max_parse_depth). Properties: parse never crashes; what parses survives serialize and parse
// unchanged (parse(serialize(v)) == v, and serialize is then a fixed point); a document accepted
// at depth 64 is accepted, equal, at the larger depth; a refusal is a bad_request.
#include "fuzz_support.hpp"

#include <catalog/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

void round_trip(const boost::json::value& v, std::size_t depth) {
  std::string text = catalog::json::serialize(v);
  auto again = catalog::json::parse(text, {depth});
  if (!again) fuzz::fail("serialize(v) does not parse: " + again.error().message(), text);
  if (*again != v) fuzz::fail("parse(serialize(v)) != v", text);
  if (catalog::json::serialize(*again) != text)
    fuzz::fail("serialize(parse(serialize(v))) != serialize(v)", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto shallow = catalog::json::parse(text);
  auto deep = catalog::json::parse(text, {catalog::json::max_parse_depth});
  for (const auto* r : {&shallow, &deep})
    if (!*r && r->error().kind() != catalog::ErrorKind::bad_request)
      fuzz::fail("parse refused with another kind than bad_request", r->error().message());
  if (shallow) {
    if (!deep) fuzz::fail("accepted at depth 64, refused at the larger depth", text);
    if (*shallow != *deep) fuzz::fail("the two depths parse to different values", text);
    round_trip(*shallow, 64);
  }
  if (deep) round_trip(*deep, catalog::json::max_parse_depth);
  return 0;
}
