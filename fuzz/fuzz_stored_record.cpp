// engine::decode on any bytes, as a stored entity record. Properties: it never crashes, and it
// refuses only with a storage error; whatever the fast way (straight from the text,
// decode_text) reads, the DOM way (decode_document) reads the same; a record that decodes
// encodes to bytes that decode to the same record, and encode is then a fixed point.
#include "fuzz_support.hpp"

#include <catalog/detail/engine/engine.hpp>
#include <catalog/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using catalog::engine::Record;

// Everything a record holds, as text (its struct whole, stored order, kept-as-written members).
std::string describe(const Record& r) {
  std::string out = std::string(catalog::type_name(r.kind)) + " " + catalog::to_string(r.id);
  out += r.container ? " c=" + catalog::to_string(*r.container) : " c=-";
  out += r.glossary ? " g=" + catalog::to_string(*r.glossary) : " g=-";
  out += " d=" + std::to_string(r.deleted_by) + " stored=";
  for (auto p : r.stored) out += std::to_string(p) + ",";
  out += " written=";
  for (const auto& [p, v] : r.written) out += std::to_string(p) + catalog::json::serialize(v);
  out += " struct=";
  out += std::visit(
      [](const auto& e) { return catalog::json::serialize(catalog::detail::to_json(e)); },
      r.value);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto dom = catalog::engine::decode_document(bytes);
  if (!dom && dom.error().code() != catalog::Errc::storage)
    fuzz::fail("a record refused with another error than storage", dom.error().message());
  auto fast = catalog::engine::decode_text(bytes);
  if (fast) {
    if (!dom) fuzz::fail("read from the text, refused by the DOM", bytes);
    if (!dom->written.empty()) fuzz::fail("read from the text, kept as written by the DOM", bytes);
    if (describe(*fast) != describe(*dom)) fuzz::fail("the two ways read different records", bytes);
  }
  if (!dom) return 0;
  const auto text = catalog::engine::encode(*dom);
  auto again = catalog::engine::decode(text);
  if (!again) fuzz::fail("an encoded record does not decode: " + again.error().message(), text);
  if (describe(*again) != describe(*dom)) fuzz::fail("decode(encode(r)) differs from r", text);
  if (catalog::engine::encode(*again) != text) fuzz::fail("encode is not a fixed point", text);
  return 0;
}
