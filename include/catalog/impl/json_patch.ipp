#ifndef CATALOG_IMPL_JSON_PATCH_IPP
#define CATALOG_IMPL_JSON_PATCH_IPP

#include <catalog/json_patch.hpp>

#include <boost/json/string.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace catalog::json {

namespace {

namespace bj = boost::json;

// `s` as a JSON string, for messages.
std::string json_quoted(std::string_view s) {
  std::string out;
  serialize_string_to(out, s);
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON Pointer (RFC 6901) and JSON Patch (RFC 6902)

// What the operations of one patch have built so far, against its limits.
class Budget {
 public:
  explicit Budget(PatchLimits limits) : limits_(limits) {}

  // Charges placing `v` at `at` levels below the root. Measuring costs at most what is left of
  // the budget, so a whole patch measures no more than max_bytes.
  Result<void> charge(const bj::value& v, std::size_t at) {
    std::size_t left = limits_.max_bytes - used_;
    auto extent = measure(v, left);
    if (extent.bytes > left)
      return fail(Errc::too_large, "the patch builds more than " +
                                       std::to_string(limits_.max_bytes) + " bytes of JSON");
    used_ += extent.bytes;
    if (at + extent.depth > limits_.max_depth)
      return fail(Errc::too_deep,
                  "the result would nest deeper than " + std::to_string(limits_.max_depth));
    return {};
  }

 private:
  PatchLimits limits_;
  std::size_t used_ = 0;
};

// A failure inside one operation; apply_json_patch prefixes which operation it was.
Error failure(std::string message) { return Error(Errc::invalid_patch, std::move(message)); }

// Splits a pointer into its unescaped reference tokens. Boost's find_pointer is not used: 1.81
// reads an empty token followed by '/' as array index 0, and add needs the last token anyway.
Result<std::vector<std::string>> parse_pointer(std::string_view text) {
  std::vector<std::string> tokens;
  if (text.empty()) return tokens;
  if (text.front() != '/')
    return failure("JSON Pointer " + json_quoted(text) + " must start with '/'");
  tokens.emplace_back();
  for (std::size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '/') {
      tokens.emplace_back();
    } else if (c == '~') {
      char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next != '0' && next != '1') {
        return failure("JSON Pointer " + json_quoted(text) + " has '~' not followed by 0 or 1");
      }
      tokens.back() += next == '0' ? '~' : '/';
      ++i;
    } else {
      tokens.back() += c;
    }
  }
  return tokens;
}

// An array index token: "0" or digits without a leading zero, below `size` (or equal to it when
// `allow_end`, for add's insertion at the end).
Result<std::size_t> parse_index(const std::string& token, std::size_t size, bool allow_end) {
  bool digits = !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || (token.size() > 1 && token[0] == '0')) {
    return failure("array index " + json_quoted(token) + " is not digits without a leading zero");
  }
  std::size_t index = 0;
  auto r = std::from_chars(token.data(), token.data() + token.size(), index);
  if (r.ec != std::errc() || index > size || (index == size && !allow_end)) {
    return failure("array index " + token + " is out of bounds (size " + std::to_string(size) +
                   ")");
  }
  return index;
}

// The value the first `count` tokens designate.
Result<bj::value*> resolve(bj::value& root, const std::vector<std::string>& tokens,
                           std::size_t count) {
  bj::value* current = &root;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& token = tokens[i];
    if (auto* object = current->if_object()) {
      auto it = object->find(token);
      if (it == object->end()) return failure("member " + json_quoted(token) + " does not exist");
      current = &it->value();
    } else if (auto* array = current->if_array()) {
      auto index = parse_index(token, array->size(), false);
      if (!index) return index.error();
      current = &(*array)[*index];
    } else {
      return failure("cannot descend into a scalar with token " + json_quoted(token));
    }
  }
  return current;
}

Result<bj::value*> resolve(bj::value& root, const std::vector<std::string>& tokens) {
  return resolve(root, tokens, tokens.size());
}

Result<void> add(bj::value& root, const std::vector<std::string>& tokens, bj::value v) {
  if (tokens.empty()) {
    root = std::move(v);
    return {};
  }
  auto parent = resolve(root, tokens, tokens.size() - 1);
  if (!parent) return parent.error();
  const std::string& last = tokens.back();
  if (auto* object = (*parent)->if_object()) {
    object->insert_or_assign(last, std::move(v));
    return {};
  }
  if (auto* array = (*parent)->if_array()) {
    if (last == "-") {
      array->push_back(std::move(v));
      return {};
    }
    auto index = parse_index(last, array->size(), true);
    if (!index) return index.error();
    array->insert(array->begin() + static_cast<std::ptrdiff_t>(*index), std::move(v));
    return {};
  }
  return failure("the parent of the target is not an object or array");
}

Result<bj::value> remove(bj::value& root, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return failure("the whole document cannot be removed");
  auto parent = resolve(root, tokens, tokens.size() - 1);
  if (!parent) return parent.error();
  const std::string& last = tokens.back();
  if (auto* object = (*parent)->if_object()) {
    auto it = object->find(last);
    if (it == object->end()) return failure("member " + json_quoted(last) + " does not exist");
    bj::value removed = std::move(it->value());
    object->stable_erase(it);  // plain erase would move the last member into the gap
    return removed;
  }
  if (auto* array = (*parent)->if_array()) {
    auto index = parse_index(last, array->size(), false);
    if (!index) return index.error();
    bj::value removed = std::move((*array)[*index]);
    array->erase(array->begin() + static_cast<std::ptrdiff_t>(*index));
    return removed;
  }
  return failure("the parent of the target is not an object or array");
}

// RFC 6902 section 4.6: numbers are equal when their values are, whatever their spelling, so
// 1 equals 1.0 (Boost.JSON's operator== says they differ).
bool numbers_equal(const bj::value& a, const bj::value& b) {
  if (a.is_double() || b.is_double()) {
    if (a.is_double() && b.is_double()) return a.get_double() == b.get_double();
    const bj::value& d = a.is_double() ? a : b;
    const bj::value& i = a.is_double() ? b : a;
    double x = d.get_double();
    if (x != std::trunc(x)) return false;
    // Both bounds are powers of two, so exact as doubles; inside them the cast is exact too.
    if (i.is_int64()) {
      if (x < -0x1p63 || x >= 0x1p63) return false;
      return static_cast<std::int64_t>(x) == i.get_int64();
    }
    if (x < 0 || x >= 0x1p64) return false;
    return static_cast<std::uint64_t>(x) == i.get_uint64();
  }
  return a == b;  // int64 and uint64: Boost compares them by value
}

Result<const bj::string*> string_member(const bj::object& op, std::string_view name) {
  const bj::value* v = op.if_contains(name);
  if (!v) return failure("missing member " + json_quoted(name));
  if (!v->is_string()) return failure("member " + json_quoted(name) + " must be a string");
  return &v->get_string();
}

Result<const bj::value*> value_member(const bj::object& op) {
  const bj::value* v = op.if_contains("value");
  if (!v) return failure("missing member \"value\"");
  return v;
}

bool is_proper_prefix(const std::vector<std::string>& prefix,
                      const std::vector<std::string>& tokens) {
  return prefix.size() < tokens.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

Result<void> apply_operation(bj::value& doc, const bj::object& op, std::string_view name,
                             const std::vector<std::string>& path, Budget& budget) {
  if (name == "add" || name == "replace" || name == "test") {
    auto v = value_member(op);
    if (!v) return v.error();
    if (name != "test")
      if (auto charged = budget.charge(**v, path.size()); !charged) return charged;
    if (name == "add") return add(doc, path, **v);
    auto target = resolve(doc, path);
    if (!target) return target.error();
    if (name == "replace") {
      **target = **v;
      return {};
    }
    if (!equal(**target, **v)) {
      return failure("test failed: the value is " + json::serialize(**target) + ", not " +
                     json::serialize(**v));
    }
    return {};
  }
  if (name == "remove") {
    auto removed = remove(doc, path);
    if (!removed) return removed.error();
    return {};
  }
  if (name == "move" || name == "copy") {
    auto from_text = string_member(op, "from");
    if (!from_text) return from_text.error();
    auto from = parse_pointer(**from_text);
    if (!from) return from.error();
    auto source = resolve(doc, *from);
    if (!source)
      return failure("from " + json_quoted(**from_text) + ": " + source.error().message());
    if (name == "copy") {
      if (auto charged = budget.charge(**source, path.size()); !charged) return charged;
      return add(doc, path, **source);
    }
    if (*from == path) return {};
    if (is_proper_prefix(*from, path)) {
      return failure("cannot move " + json_quoted(**from_text) + " into one of its own children");
    }
    // A value moved no deeper than it was keeps the document within its depth; only a move
    // deeper needs measuring (and repeated, it would nest the document without bound).
    if (path.size() > from->size())
      if (auto charged = budget.charge(**source, path.size()); !charged) return charged;
    auto moved = remove(doc, *from);
    if (!moved) return moved.error();
    return add(doc, path, std::move(*moved));
  }
  return failure("unknown op " + json_quoted(name));
}

}  // namespace

bool equal(const bj::value& a, const bj::value& b) noexcept {
  if (a.is_number() && b.is_number()) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  if (const auto* x = a.if_array()) {
    const auto& y = b.get_array();
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i)
      if (!equal((*x)[i], y[i])) return false;
    return true;
  }
  if (const auto* x = a.if_object()) {
    const auto& y = b.get_object();
    if (x->size() != y.size()) return false;
    for (const auto& member : *x) {
      const bj::value* other = y.if_contains(member.key());
      if (!other || !equal(member.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

boost::json::value merge_patch(boost::json::value target, const boost::json::value& patch) {
  const auto* members = patch.if_object();
  if (!members) return patch;
  if (!target.is_object()) target.emplace_object();
  auto& object = target.get_object();
  for (const auto& member : *members) {
    if (member.value().is_null()) {
      object.stable_erase(member.key());
      continue;
    }
    auto it = object.find(member.key());
    if (it == object.end()) {
      // Merging into null strips the nulls nested in the patch value (RFC 7396 row 15).
      object.emplace(member.key(), merge_patch(nullptr, member.value()));
    } else {
      it->value() = merge_patch(std::move(it->value()), member.value());
    }
  }
  return target;
}

Result<boost::json::value> apply_json_patch(boost::json::value document,
                                            const boost::json::value& patch, PatchLimits limits) {
  Budget budget(limits);
  const auto* operations = patch.if_array();
  if (!operations) return fail(Errc::invalid_patch, "a JSON Patch must be an array");
  for (std::size_t index = 0; index < operations->size(); ++index) {
    const bj::value& operation = (*operations)[index];
    auto where = "JSON Patch operation " + std::to_string(index);
    const auto* op = operation.if_object();
    if (!op) return fail(Errc::invalid_patch, where + ": must be an object");
    auto name = string_member(*op, "op");
    if (!name) return fail(Errc::invalid_patch, where + ": " + name.error().message());
    auto path_text = string_member(*op, "path");
    if (!path_text) return fail(Errc::invalid_patch, where + ": " + path_text.error().message());
    where += " (" + std::string(**name) + " " + json_quoted(**path_text) + ")";
    auto path = parse_pointer(**path_text);
    if (!path) return fail(Errc::invalid_patch, where + ": " + path.error().message());
    auto applied = apply_operation(document, *op, **name, *path, budget);
    if (!applied) return fail(applied.error().code(), where + ": " + applied.error().message());
  }
  return document;
}

}  // namespace catalog::json

#endif  // CATALOG_IMPL_JSON_PATCH_IPP
