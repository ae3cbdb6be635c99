// The FQN codec (docs/SEMANTICS.md §2) on any bytes: split, build, canonical, quote, append,
// validate_name. Properties: nothing crashes; an FQN that splits has valid names for parts, its
// canonical form splits back to the same parts and is its own canonical form, and is never longer
// than the input; a valid name quotes to a one-part FQN of itself and appends as a last part.
#include "fuzz_support.hpp"

#include <catalog/fqn.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fqn = catalog::fqn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto parts = fqn::split(text);
  if (parts) {
    if (parts->empty()) fuzz::fail("split gave no part", text);
    for (const auto& p : *parts)
      if (!fqn::validate_name(p)) fuzz::fail("split gave a part that is no valid name", p);
    std::string built = fqn::build(*parts);
    if (built.size() > text.size()) fuzz::fail("the canonical form is longer than the input", text);
    auto again = fqn::split(built);
    if (!again) fuzz::fail("the canonical form does not split", built);
    if (*again != *parts) fuzz::fail("the canonical form splits to other parts", built);
    auto canonical = fqn::canonical(text);
    if (!canonical || *canonical != built)
      fuzz::fail("canonical(text) != build(split(text))", text);
    auto fixed = fqn::canonical(built);
    if (!fixed || *fixed != built)
      fuzz::fail("the canonical form is not its own canonical form", built);
    // append is build's step: the parent's FQN and the last name.
    std::vector<std::string> parent(parts->begin(), parts->end() - 1);
    if (fqn::append(fqn::build(parent), parts->back()) != built)
      fuzz::fail("append(parent, last) != build(parts)", built);
  } else if (parts.error().code() != catalog::Errc::invalid_fqn) {
    fuzz::fail("split refused with another code than invalid_fqn", parts.error().message());
  }

  if (fqn::validate_name(text)) {
    auto quoted = fqn::quote(text);
    auto one = fqn::split(quoted);
    if (!one || one->size() != 1 || (*one)[0] != text)
      fuzz::fail("a valid name does not split back from its quoted form", quoted);
    auto two = fqn::split(fqn::append("parent", text));
    if (!two || *two != std::vector<std::string>{"parent", std::string(text)})
      fuzz::fail("a valid name appended to a parent does not split back", quoted);
  }
  return 0;
}
