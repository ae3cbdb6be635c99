#ifndef CATALOG_IMPL_FQN_IPP
#define CATALOG_IMPL_FQN_IPP

#include <catalog/fqn.hpp>

#include <catalog/detail/utf8.hpp>

namespace catalog::fqn {

namespace {

using detail::next_code_point;

// `text` for a message: cut to at most 200 bytes at a character boundary, or a placeholder when
// it is not valid UTF-8 or holds control characters (a message is JSON text, which must be UTF-8).
std::string shown(std::string_view text) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    if (!next_code_point(text, i, cp) || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      return "(not printable)";
    if (i <= 200) end = i;
  }
  std::string out(text.substr(0, end));
  if (end < text.size()) out += "...";
  return out;
}

}  // namespace

Result<void> validate_name(std::string_view name, std::string_view what) {
  std::string field(what);
  if (name.empty()) return fail(Errc::invalid_name, field + " must not be empty");
  if (name.size() > max_name_bytes)
    return fail(Errc::invalid_name, field + " is longer than 400 bytes");
  std::size_t chars = 0;
  for (std::size_t i = 0; i < name.size();) {
    char32_t cp = 0;
    if (!next_code_point(name, i, cp))
      return fail(Errc::invalid_name, field + " is not valid UTF-8");
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      return fail(Errc::invalid_name, field + " must not contain control characters");
    ++chars;
  }
  if (chars > max_name_chars)
    return fail(Errc::invalid_name, field + " is longer than 256 characters");
  if (name.find("::") != std::string_view::npos)
    return fail(Errc::invalid_name, field + " must not contain ::");
  if (name.find('"') != std::string_view::npos)
    return fail(Errc::invalid_name, field + " must not contain \"");
  return {};
}

std::string quote(std::string_view name) {
  if (name.find('.') == std::string_view::npos) return std::string(name);
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  out += name;
  out += '"';
  return out;
}

std::string append(std::string_view parent, std::string_view name) {
  std::string out(parent);
  if (!out.empty()) out += '.';
  out += quote(name);
  return out;
}

Result<std::vector<std::string>> split(std::string_view text) {
  auto bad = [&](const char* why) {
    return fail(Errc::invalid_fqn, "Invalid fullyQualifiedName " + shown(text) + ": " + why);
  };
  if (text.empty()) return bad("empty");
  if (text.size() > max_fqn_bytes) return bad("longer than 3072 bytes");
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (true) {
    std::string part;
    if (i < text.size() && text[i] == '"') {
      auto close = text.find('"', i + 1);
      if (close == std::string_view::npos) return bad("unbalanced quotes");
      part.assign(text.substr(i + 1, close - i - 1));
      i = close + 1;
      if (i < text.size() && text[i] != '.') return bad("a quote must end a part");
    } else {
      auto dot = text.find('.', i);
      auto end = dot == std::string_view::npos ? text.size() : dot;
      part.assign(text.substr(i, end - i));
      if (part.find('"') != std::string::npos) return bad("a quote must start a part");
      i = end;
    }
    if (part.empty()) return bad("empty part");
    // Every part is a name (docs/SEMANTICS.md §15): a bad one is a bad request wherever the FQN
    // appears.
    if (auto valid = validate_name(part, "a part"); !valid)
      return bad(valid.error().message().c_str());
    parts.push_back(std::move(part));
    if (i == text.size()) break;
    ++i;  // the '.'
    if (i == text.size()) return bad("empty part");
  }
  return parts;
}

std::string build(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out = append(out, n);
  return out;
}

Result<std::string> canonical(std::string_view text) {
  auto parts = split(text);
  if (!parts) return parts.error();
  return build(*parts);
}

}  // namespace catalog::fqn

#endif  // CATALOG_IMPL_FQN_IPP
