#ifndef CATALOG_IMPL_JSON_IPP
#define CATALOG_IMPL_JSON_IPP

#include <catalog/json.hpp>

#include <catalog/detail/json_scan.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/value_stack.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace catalog::json {

namespace {

namespace bj = boost::json;

// ---------------------------------------------------------------------------------------------
// Parsing

// `s` as a JSON string, for messages.
std::string quoted(std::string_view s) {
  return bj::serialize(bj::string_view(s.data(), s.size()));
}

// A basic_parser handler that builds the value exactly as boost::json::parser does (through a
// value_stack) but also remembers the member names of every open object: Boost.JSON 1.81 builds
// an object from its members with insertion semantics, so `{"a":1,"a":2}` silently becomes
// `{"a":2}` and the duplicate cannot be seen afterwards.
class StrictHandler {
public:
  static constexpr std::size_t max_object_size = bj::object::max_size();
  static constexpr std::size_t max_array_size = bj::array::max_size();
  static constexpr std::size_t max_key_size = bj::string::max_size();
  static constexpr std::size_t max_string_size = bj::string::max_size();

  StrictHandler() { stack_.reset(); }

  // The first failure the handler itself found (the parser's own failures arrive as codes).
  const std::optional<Error>& error() const noexcept { return error_; }
  bj::value release() { return stack_.release(); }

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_object_begin(bj::error_code&) {
    names_.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t n, bj::error_code&) {
    names_.pop_back();
    stack_.push_object(n);
    return true;
  }
  bool on_array_begin(bj::error_code&) { return true; }
  bool on_array_end(std::size_t n, bj::error_code&) {
    stack_.push_array(n);
    return true;
  }

  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    key_.append(s.data(), s.size());
    stack_.push_chars(s);
    return true;
  }
  bool on_key(bj::string_view s, std::size_t, bj::error_code& ec) {
    key_.append(s.data(), s.size());
    // Keys only ever belong to the innermost open object, so one set per open object suffices.
    if (!names_.back().insert(key_).second) {
      error_ = Error(Errc::duplicate_member, "duplicate member name " + quoted(key_));
      ec = bj::error::syntax;  // any failure code stops the parser; error_ says what it was
      return false;
    }
    key_.clear();
    stack_.push_key(s);
    return true;
  }

  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_chars(s);
    return true;
  }
  bool on_string(bj::string_view s, std::size_t, bj::error_code&) {
    stack_.push_string(s);
    return true;
  }

  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, bj::string_view, bj::error_code&) {
    number_.clear();
    stack_.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, bj::string_view, bj::error_code&) {
    number_.clear();
    stack_.push_uint64(u);
    return true;
  }
  bool on_double(double d, bj::string_view s, bj::error_code& ec) {
    // Boost.JSON 1.81 does not round correctly: about one 17-digit double in ten reads back one
    // unit off, and DBL_MAX written plainly reads as infinity. std::from_chars is exact, so the
    // catalog reads back exactly what serialize wrote.
    number_.append(s.data(), s.size());
    auto r = std::from_chars(number_.data(), number_.data() + number_.size(), d);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow is zero (Boost agrees); overflow is refused: I-JSON numbers are finite doubles
      // and Boost would give infinity, which JSON cannot spell.
      if (std::fabs(d) >= 1 || std::isinf(d)) {
        error_ = Error(Errc::invalid_json, "number " + number_ + " is out of range");
        ec = bj::error::syntax;
        return false;
      }
      d = number_.front() == '-' ? -0.0 : 0.0;
    }
    number_.clear();
    stack_.push_double(d);
    return true;
  }
  bool on_bool(bool b, bj::error_code&) {
    stack_.push_bool(b);
    return true;
  }
  bool on_null(bj::error_code&) {
    stack_.push_null();
    return true;
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

private:
  bj::value_stack stack_;
  std::vector<std::unordered_set<std::string>> names_;
  std::string key_;     // the member name being read (Boost may deliver it in parts)
  std::string number_;  // likewise for the number being read
  std::optional<Error> error_;
};

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The code unit of a `\uXXXX` escape starting at `i`, if one really starts there (the backslash
// is not itself escaped).
std::optional<unsigned> escape_at(std::string_view text, std::size_t i) {
  if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u') return std::nullopt;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    if (!is_hex(text[k])) return std::nullopt;
  }
  std::size_t backslashes = 0;
  while (backslashes < i && text[i - 1 - backslashes] == '\\') ++backslashes;
  if (backslashes % 2 != 0) return std::nullopt;
  unsigned unit = 0;
  std::from_chars(text.data() + i + 2, text.data() + i + 6, unit, 16);
  return unit;
}

// Boost.JSON refuses every unpaired surrogate escape, but reports it as a syntax error, a bad hex
// digit or an "illegal leading/trailing surrogate" depending on where the escape falls in its
// buffer; look for the escape near the failure so the message can name it.
bool unpaired_surrogate_near(std::string_view text, std::size_t pos) {
  std::size_t first = pos > 12 ? pos - 12 : 0;
  std::size_t last = std::min(pos, text.size());
  for (std::size_t i = first; i <= last; ++i) {
    auto unit = escape_at(text, i);
    if (!unit || *unit < 0xd800 || *unit > 0xdfff) continue;
    if (*unit <= 0xdbff) {
      auto next = escape_at(text, i + 6);
      if (!next || *next < 0xdc00 || *next > 0xdfff) return true;
    } else {
      auto prev = i >= 6 ? escape_at(text, i - 6) : std::nullopt;
      if (!prev || *prev < 0xd800 || *prev > 0xdbff) return true;
    }
  }
  return false;
}

Error describe_parse_failure(std::string_view text, std::size_t pos, bj::error_code ec,
                             std::size_t max_depth) {
  auto at = " at byte " + std::to_string(pos);
  if (ec == bj::error::too_deep) {
    return Error(Errc::too_deep, "JSON nesting deeper than " + std::to_string(max_depth));
  }
  if (ec == bj::error::incomplete) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return Error(Errc::invalid_json, "empty JSON text");
    }
    return Error(Errc::invalid_json, "JSON text ends before the value is complete");
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    return Error(Errc::invalid_json, "JSON text must not start with a byte order mark");
  }
  if (unpaired_surrogate_near(text, pos)) {
    return Error(Errc::invalid_json, "unpaired UTF-16 surrogate escape" + at);
  }
  if (pos < text.size() && static_cast<unsigned char>(text[pos]) >= 0x80) {
    return Error(Errc::invalid_json, "invalid or misplaced UTF-8" + at);
  }
  return Error(Errc::invalid_json, "invalid JSON" + at + ": " + ec.message());
}

// ---------------------------------------------------------------------------------------------
// Serialization

// Fixed notation of the shortest round-tripping digits: at most 309 integer digits, or "0." plus
// 323 zeros plus 17 digits for the smallest subnormals, plus ".0".
constexpr std::size_t double_buffer = 400;

// How a double is written: the shortest plain decimal that reads back to it; an integral double
// stays a double when read back (`12.0`, not `12`). NaN and infinities, which JSON cannot spell
// and parse never produces, are `null`.
std::string_view format_double(double d, char (&buf)[double_buffer]) {
  if (!std::isfinite(d)) return "null";
  auto r = std::to_chars(buf, buf + double_buffer - 2, d, std::chars_format::fixed);
  auto n = static_cast<std::size_t>(r.ptr - buf);
  if (std::string_view(buf, n).find('.') == std::string_view::npos) {
    buf[n++] = '.';
    buf[n++] = '0';
  }
  return {buf, n};
}

// The length of a string as the serializer writes it: quotes, two-character escapes for the
// quote, backslash and \b \f \n \r \t, six-character \u00XX escapes for other controls.
std::size_t string_bytes(bj::string_view s) {
  std::size_t n = 2 + s.size();
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
      n += 1;
    else if (c < 0x20)
      n += 5;
  }
  return n;
}

template <class Integer> std::size_t integer_bytes(Integer i) {
  char buf[24];
  return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, i).ptr - buf);
}

std::size_t scalar_bytes(const bj::value& v) {
  switch (v.kind()) {
  case bj::kind::null: return 4;
  case bj::kind::bool_: return v.get_bool() ? 4 : 5;
  case bj::kind::int64: return integer_bytes(v.get_int64());
  case bj::kind::uint64: return integer_bytes(v.get_uint64());
  case bj::kind::double_: {
    char buf[double_buffer];
    return format_double(v.get_double(), buf).size();
  }
  case bj::kind::string: return string_bytes(v.get_string());
  default: return 0;  // containers are counted by measure
  }
}

class Writer {
public:
  explicit Writer(std::string& out) : out_(out) {}

  void write(const bj::value& v) {
    switch (v.kind()) {
    case bj::kind::null: out_ += "null"; break;
    case bj::kind::bool_: out_ += v.get_bool() ? "true" : "false"; break;
    case bj::kind::int64: write_integer(v.get_int64()); break;
    case bj::kind::uint64: write_integer(v.get_uint64()); break;
    case bj::kind::double_: write_double(v.get_double()); break;
    case bj::kind::string: write_string(v.get_string()); break;
    case bj::kind::array: {
      out_ += '[';
      bool first = true;
      for (const auto& element : v.get_array()) {
        if (!first) out_ += ',';
        first = false;
        write(element);
      }
      out_ += ']';
      break;
    }
    case bj::kind::object: write_object(v.get_object()); break;
    }
  }

  void write_object(const bj::object& o) {
    out_ += '{';
    bool first = true;
    for (const auto& member : o) {
      if (!first) out_ += ',';
      first = false;
      write_string(member.key());
      out_ += ':';
      write(member.value());
    }
    out_ += '}';
  }

  void write_double(double d) {
    char buf[double_buffer];
    out_ += format_double(d, buf);
  }

  // A string with nothing to escape is copied between quotes (most keys and values: a fifth of
  // the time of serializing a record went to the serializer's state machine). Anything else goes
  // to Boost.JSON's serializer, which escapes exactly what JSON requires (the quote, the
  // backslash and the controls); reusing one avoids an allocation per string.
  void write_string(bj::string_view s) {
    if (plain_string(s)) {
      append_plain(out_, s);
      return;
    }
    if (!strings_) strings_.emplace();  // made for the first string with escapes only
    strings_->reset(s);
    char buf[256];
    while (!strings_->done()) {
      auto chunk = strings_->read(buf, sizeof buf);
      out_.append(chunk.data(), chunk.size());
    }
  }

  static bool plain_string(std::string_view s) {
    return detail::find_json_special(s.data(), s.data() + s.size()) == s.data() + s.size();
  }
  static void append_plain(std::string& out, std::string_view s) {
    out += '"';
    out.append(s.data(), s.size());
    out += '"';
  }

private:
  template <class Integer> void write_integer(Integer i) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, i);
    out_.append(buf, r.ptr);
  }

  std::string& out_;
  std::optional<bj::serializer> strings_;
};

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
  if (text.front() != '/') return failure("JSON Pointer " + quoted(text) + " must start with '/'");
  tokens.emplace_back();
  for (std::size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == '/') {
      tokens.emplace_back();
    } else if (c == '~') {
      char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next != '0' && next != '1') {
        return failure("JSON Pointer " + quoted(text) + " has '~' not followed by 0 or 1");
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
    return failure("array index " + quoted(token) + " is not digits without a leading zero");
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
      if (it == object->end()) return failure("member " + quoted(token) + " does not exist");
      current = &it->value();
    } else if (auto* array = current->if_array()) {
      auto index = parse_index(token, array->size(), false);
      if (!index) return index.error();
      current = &(*array)[*index];
    } else {
      return failure("cannot descend into a scalar with token " + quoted(token));
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
    if (it == object->end()) return failure("member " + quoted(last) + " does not exist");
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

// Deep equality for `test`: numbers by value, objects ignoring member order, arrays in order.
bool json_equal(const bj::value& a, const bj::value& b) {
  if (a.is_number() && b.is_number()) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  if (const auto* x = a.if_array()) {
    const auto& y = b.get_array();
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      if (!json_equal((*x)[i], y[i])) return false;
    }
    return true;
  }
  if (const auto* x = a.if_object()) {
    const auto& y = b.get_object();
    if (x->size() != y.size()) return false;
    for (const auto& member : *x) {
      const bj::value* other = y.if_contains(member.key());
      if (!other || !json_equal(member.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

Result<const bj::string*> string_member(const bj::object& op, std::string_view name) {
  const bj::value* v = op.if_contains(name);
  if (!v) return failure("missing member " + quoted(name));
  if (!v->is_string()) return failure("member " + quoted(name) + " must be a string");
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
    if (!json_equal(**target, **v)) {
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
    if (!source) return failure("from " + quoted(**from_text) + ": " + source.error().message());
    if (name == "copy") {
      if (auto charged = budget.charge(**source, path.size()); !charged) return charged;
      return add(doc, path, **source);
    }
    if (*from == path) return {};
    if (is_proper_prefix(*from, path)) {
      return failure("cannot move " + quoted(**from_text) + " into one of its own children");
    }
    // A value moved no deeper than it was keeps the document within its depth; only a move
    // deeper needs measuring (and repeated, it would nest the document without bound).
    if (path.size() > from->size())
      if (auto charged = budget.charge(**source, path.size()); !charged) return charged;
    auto moved = remove(doc, *from);
    if (!moved) return moved.error();
    return add(doc, path, std::move(*moved));
  }
  return failure("unknown op " + quoted(name));
}

}  // namespace

Result<boost::json::value> parse(std::string_view text, ParseOptions options) {
  bj::parse_options boost_options;
  boost_options.max_depth = std::min(options.max_depth, max_parse_depth);
  bj::basic_parser<StrictHandler> parser(boost_options);
  bj::error_code ec;
  std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (const auto& error = parser.handler().error()) return *error;
  if (ec) return describe_parse_failure(text, used, ec, boost_options.max_depth);
  if (used < text.size()) {
    return fail(Errc::invalid_json,
                "unexpected text after the JSON value at byte " + std::to_string(used));
  }
  return parser.handler().release();
}

Extent measure(const boost::json::value& root, std::size_t stop_bytes) {
  struct Frame {
    const bj::value* container;
    std::size_t next;
  };
  Extent extent;
  std::vector<Frame> open;
  // Counts `v`'s own bytes (for a container: brackets and separators) and opens containers.
  auto enter = [&](const bj::value& v) {
    if (const auto* a = v.if_array()) {
      extent.bytes += 2 + (a->empty() ? 0 : a->size() - 1);
    } else if (const auto* o = v.if_object()) {
      extent.bytes += 2 + (o->empty() ? 0 : o->size() - 1);
    } else {
      extent.bytes += scalar_bytes(v);
      return;
    }
    open.push_back({&v, 0});
    extent.depth = std::max(extent.depth, open.size());
  };
  enter(root);
  while (!open.empty() && extent.bytes <= stop_bytes) {
    Frame& top = open.back();
    const bj::value* child = nullptr;
    if (const auto* a = top.container->if_array()) {
      if (top.next < a->size()) child = &(*a)[top.next++];
    } else {
      const auto& o = top.container->get_object();
      if (top.next < o.size()) {
        const auto& member = *(o.begin() + static_cast<std::ptrdiff_t>(top.next++));
        extent.bytes += string_bytes(member.key()) + 1;  // the name and its colon
        child = &member.value();
      }
    }
    if (child)
      enter(*child);  // may reallocate `open`: `top` is not used after this
    else
      open.pop_back();
  }
  return extent;
}

std::string serialize(const boost::json::value& v) {
  std::string out;
  Writer(out).write(v);
  return out;
}

void serialize_to(std::string& out, const boost::json::value& v) { Writer(out).write(v); }

void serialize_to(std::string& out, const boost::json::object& o) { Writer(out).write_object(o); }

void serialize_string_to(std::string& out, std::string_view s) { Writer(out).write_string(s); }

void serialize_double_to(std::string& out, double d) {
  char buf[double_buffer];
  out += format_double(d, buf);
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
    where += " (" + std::string(**name) + " " + quoted(**path_text) + ")";
    auto path = parse_pointer(**path_text);
    if (!path) return fail(Errc::invalid_patch, where + ": " + path.error().message());
    auto applied = apply_operation(document, *op, **name, *path, budget);
    if (!applied) return fail(applied.error().code(), where + ": " + applied.error().message());
  }
  return document;
}

}  // namespace catalog::json

#endif  // CATALOG_IMPL_JSON_IPP
