#ifndef CATALOG_IMPL_JSON_IPP
#define CATALOG_IMPL_JSON_IPP

#include <catalog/json.hpp>

#include <catalog/detail/json_scan.hpp>
#include <catalog/detail/utf8.hpp>

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
std::string quote_for_message(std::string_view s) {
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
      error_ = Error(Errc::duplicate_member, "duplicate member name " + quote_for_message(key_));
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

  // A string with nothing to escape (most keys and values) is copied between quotes, without
  // passing through the serializer's state machine. Anything else goes
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
      if (const auto* s = v.if_string())
        extent.i_json = extent.i_json && catalog::detail::valid_utf8(*s);
      else if (const auto* d = v.if_double())
        extent.i_json = extent.i_json && std::isfinite(*d);
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
        extent.i_json = extent.i_json && catalog::detail::valid_utf8(member.key());
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

}  // namespace catalog::json

#endif  // CATALOG_IMPL_JSON_IPP
