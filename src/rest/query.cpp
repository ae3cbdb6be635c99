// Query parameter values (docs/REST.md, docs/SEMANTICS.md §8).

#include "query.hpp"

#include <limits>

namespace catalog::rest::detail {

namespace {

Error invalid(std::string message) { return Error(Errc::invalid_parameter, std::move(message)); }

// A parameter value quoted in a message, cut short: values can be long and are the caller's.
std::string shown(std::string_view value) {
  constexpr std::size_t max = 64;
  return value.size() <= max ? std::string(value) : std::string(value.substr(0, max)) + "...";
}

}  // namespace

Result<std::optional<std::string>> Query::text(std::string_view name) const {
  auto value = text_or_empty(name);
  if (!value) return value.error();
  if (*value && (*value)->empty())
    return invalid("Query parameter " + std::string(name) + " must not be empty");
  return value;
}

Result<std::optional<std::string>> Query::text_or_empty(std::string_view name) const {
  const std::optional<std::string>* found = nullptr;
  for (const auto& [key, value] : params_) {
    if (key != name) continue;
    if (found) return invalid("Query parameter " + std::string(name) + " given more than once");
    found = &value;
  }
  if (!found) return std::optional<std::string>();
  return found->value_or(std::string());
}

Result<std::optional<std::uint64_t>> Query::integer(std::string_view name) const {
  auto text = this->text(name);
  if (!text) return text.error();
  if (!*text) return std::optional<std::uint64_t>();
  constexpr std::uint64_t cap = std::numeric_limits<std::int64_t>::max();
  std::uint64_t n = 0;
  bool over = false;
  for (char c : **text) {
    if (c < '0' || c > '9')
      return invalid("Query parameter " + std::string(name) +
                     " must be a non-negative integer, not " + shown(**text));
    const auto digit = std::uint64_t(c - '0');
    over = over || n > (cap - digit) / 10;
    if (!over) n = n * 10 + digit;
  }
  // Past 64 bits (signed) no value means anything: say so, naming what was sent.
  if (over)
    return invalid("Query parameter " + std::string(name) + " is too large, not a 64-bit integer: " +
                   shown(**text));
  return std::optional<std::uint64_t>(n);
}

Result<bool> Query::boolean(std::string_view name, bool fallback) const {
  auto text = this->text(name);
  if (!text) return text.error();
  if (!*text) return fallback;
  if (**text == "true") return true;
  if (**text == "false") return false;
  return invalid("Query parameter " + std::string(name) + " must be true or false, not " +
                 shown(**text));
}

Result<Include> Query::include() const {
  auto text = this->text("include");
  if (!text) return text.error();
  if (!*text || **text == "non-deleted") return Include::non_deleted;
  if (**text == "deleted") return Include::deleted;
  if (**text == "all") return Include::all;
  return invalid("Query parameter include must be one of non-deleted, deleted, all, not " +
                 shown(**text));
}

Result<std::vector<std::string>> Query::fields() const {
  auto text = this->text("fields");
  if (!text) return text.error();
  std::vector<std::string> fields;
  if (!*text) return fields;
  std::string_view rest = **text;
  for (;;) {
    auto comma = rest.find(',');
    fields.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return fields;
}

}  // namespace catalog::rest::detail
