#ifndef CATALOG_DETAIL_JSON_TEXT_HPP
#define CATALOG_DETAIL_JSON_TEXT_HPP

// Reading described structs straight from JSON text, without a DOM: the fast path of the codec
// (json_mapping.hpp) for text the catalog wrote itself (stored records). And writing them as
// that text, the way stored records are encoded.
//
// It reads only the canonical form, the one `to_json` and `catalog::json::serialize` write: no
// whitespace, a struct's members in the struct's order with every non-optional member present
// and absent optionals omitted (never `null`), versions as decimals. On anything else (other
// forms, invalid JSON, a value that does not convert) it answers false and the caller reads the
// text through the DOM and `from_json`, which accept every form, keep non-canonical ones as
// written and word the errors. So this reader never decides what a document means: whenever it
// answers true, `from_json` of the parsed text would have given the same struct, and the text is
// `canonical` (json_text_test checks this on stored records and on mutations of them).
//
// The same cursor, spaced (`Spacing::json`), reads tokens with white space between them: the
// reference scan (references.ipp) reads stored records that way and skips what it does not need.

#include <catalog/detail/json_mapping.hpp>
#include <catalog/detail/json_scan.hpp>
#include <catalog/detail/utf8.hpp>
#include <catalog/json.hpp>

#include <boost/json/parse.hpp>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace catalog::detail {

/// The code unit of the four hex digits at `s[at]`.
inline bool hex4(std::string_view s, std::size_t at, std::uint32_t& out) noexcept {
  if (at + 4 > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    char c = s[i];
    std::uint32_t d = c >= '0' && c <= '9'   ? static_cast<std::uint32_t>(c - '0')
                      : c >= 'a' && c <= 'f' ? static_cast<std::uint32_t>(c - 'a' + 10)
                      : c >= 'A' && c <= 'F' ? static_cast<std::uint32_t>(c - 'A' + 10)
                                             : 16;
    if (d == 16) return false;
    out = out * 16 + d;
  }
  return true;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Decodes the RFC 8259 escapes of a string's text between its quotes into `out`. A `\u`
/// escape of a surrogate must be a high one followed by a low one (what Boost.JSON's parser
/// accepts); anything else answers false.
inline bool unescape_json(std::string_view raw, std::string& out) {
  out.clear();
  out.reserve(raw.size());  // escapes only shorten the text
  for (std::size_t i = 0; i < raw.size();) {
    // The bytes up to the next escape, at once.
    const std::size_t escape = raw.find('\\', i);
    if (escape == std::string_view::npos) {
      out.append(raw.data() + i, raw.size() - i);
      break;
    }
    out.append(raw.data() + i, escape - i);
    i = escape + 1;
    if (i == raw.size()) return false;
    switch (raw[i++]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        std::uint32_t cp = 0;
        if (!hex4(raw, i, cp)) return false;
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          std::uint32_t low = 0;
          if (i + 6 > raw.size() || raw[i] != '\\' || raw[i + 1] != 'u' ||
              !hex4(raw, i + 2, low) || low < 0xDC00 || low > 0xDFFF)
            return false;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default: return false;
    }
  }
  return true;
}

/// Where a reader takes white space: nowhere (`none`, the canonical text the catalog writes), or
/// before any token, as RFC 8259 allows (`json`, for text another writer may have spaced).
enum class Spacing { none, json };

/// A cursor over JSON text: canonical (`Spacing::none`, the stored records' form) or spaced as
/// any JSON writer may space it. Every method answers false (and may leave the cursor anywhere)
/// when the text there is not what it reads.
template <Spacing S>
class BasicTextReader {
 public:
  explicit BasicTextReader(std::string_view text) noexcept
      : p_(text.data()), end_(text.data() + text.size()) {}

  bool at_end() noexcept {
    space();
    return p_ == end_;
  }
  bool peek(char c) noexcept {
    space();
    return p_ != end_ && *p_ == c;
  }
  bool eat(char c) noexcept {
    if (!peek(c)) return false;
    ++p_;
    return true;
  }
  bool eat(std::string_view word) noexcept {
    space();
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }

  /// A string's text between its quotes, still escaped (`escaped` tells whether it has
  /// escapes); no raw control characters. UTF-8 is not checked here.
  bool raw_string(std::string_view& raw, bool& escaped) noexcept {
    if (!eat('"')) return false;
    const char* close = json_string_end(p_, end_, escaped);
    if (close == nullptr) return false;
    raw = std::string_view(p_, static_cast<std::size_t>(close - p_));
    p_ = close + 1;
    return true;
  }

  /// A string without escapes (member names, ids, enumeration names), as a view of the text;
  /// its UTF-8 is checked.
  bool plain_string(std::string_view& out) noexcept {
    bool escaped = false;
    return raw_string(out, escaped) && !escaped && valid_utf8(out);
  }

  /// `"name":`, the name as a view.
  bool key(std::string_view& name) noexcept { return plain_string(name) && eat(':'); }

  /// Any JSON string, its escapes decoded.
  bool string(std::string& out) {
    std::string_view raw;
    bool escaped = false;
    if (!raw_string(raw, escaped) || !valid_utf8(raw)) return false;
    if (escaped) return unescape_json(raw, out);
    out.assign(raw.data(), raw.size());
    return true;
  }

  /// Any JSON string as a view: of the text when it has no escapes, else of `buffer` holding
  /// it decoded.
  bool string(std::string_view& out, std::string& buffer) {
    std::string_view raw;
    bool escaped = false;
    if (!raw_string(raw, escaped) || !valid_utf8(raw)) return false;
    if (!escaped) {
      out = raw;
      return true;
    }
    if (!unescape_json(raw, buffer)) return false;
    out = buffer;
    return true;
  }

  /// A number's text: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
  bool number(std::string_view& out) noexcept {
    space();
    const char* start = p_;
    auto digits = [&] {
      const char* s = p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ != s;
    };
    eat('-');
    if (eat('0')) {
      if (p_ != end_ && *p_ >= '0' && *p_ <= '9') return false;
    } else if (!digits()) {
      return false;
    }
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    out = std::string_view(start, static_cast<std::size_t>(p_ - start));
    return true;
  }

  /// The text of the JSON value here, whatever it is, nesting at most `max_depth`.
  bool skip(std::string_view& out, std::size_t max_depth) {
    space();
    const char* start = p_;
    std::string open;  // the closing character of each container open, innermost last
    std::string ignored;
    std::string_view n, text;
    for (;;) {
      bool empty = false;  // a container that closed at once
      if (eat('{') || eat('[')) {
        char close = p_[-1] == '{' ? '}' : ']';
        if (open.size() + 1 > max_depth) return false;
        empty = eat(close);
        if (!empty) {
          open += close;
          if (close == '}' && !(string(text, ignored) && eat(':'))) return false;
          continue;
        }
      }
      if (!empty &&
          !(string(text, ignored) || eat("true") || eat("false") || eat("null") || number(n)))
        return false;
      // After a value: close what ends here, then the next element or member, or the end.
      for (;;) {
        if (open.empty()) {
          out = std::string_view(start, static_cast<std::size_t>(p_ - start));
          return true;
        }
        if (eat(',')) {
          if (open.back() == '}' && !(string(text, ignored) && eat(':'))) return false;
          break;
        }
        if (!eat(open.back())) return false;
        open.pop_back();
      }
    }
  }

  /// Skips the value here by its structure alone: a string to its closing quote, an object or
  /// array to its matching bracket (strings inside read as strings, so their brackets do not
  /// count), a number or literal by its characters. Nothing inside is checked: for a reader that
  /// wants a few members of a document that another reading checks whole.
  bool skip_structure() noexcept {
    space();
    if (p_ == end_) return false;
    std::string_view raw;
    bool escaped = false;
    if (*p_ == '"') return raw_string(raw, escaped);
    if (*p_ == '{' || *p_ == '[') {
      std::size_t depth = 0;
      while (p_ != end_) {
        const char c = *p_;
        if (c == '"') {
          if (!raw_string(raw, escaped)) return false;
          continue;
        }
        if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          ++p_;
          return true;
        }
        ++p_;
      }
      return false;
    }
    const char* start = p_;
    while (p_ != end_ && scalar_char(*p_)) ++p_;
    return p_ != start;
  }

 private:
  void space() noexcept {
    if constexpr (S == Spacing::json)
      while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // The characters of numbers and literals (true, false, null).
  static bool scalar_char(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '-' || c == '+' || c == '.';
  }

  const char* p_;
  const char* end_;
};

/// The reader of canonical text, the form of stored records.
using TextReader = BasicTextReader<Spacing::none>;

/// Sub-values kept as JSON (change descriptions' old and new values, extensions) are read by
/// Boost.JSON's parser, as the DOM path reads them, when they nest at most this deep; deeper
/// ones go to the DOM path (which allows catalog::json::max_parse_depth).
inline constexpr std::size_t text_value_depth = catalog::json::max_document_depth;

inline bool read_text(TextReader& r, std::string& out) { return r.string(out); }

inline bool read_text(TextReader& r, bool& out) {
  if (r.eat("true")) {
    out = true;
    return true;
  }
  if (r.eat("false")) {
    out = false;
    return true;
  }
  return false;
}

template <class I>
  requires std::is_same_v<I, std::int64_t> || std::is_same_v<I, std::uint64_t>
bool read_text(TextReader& r, I& out) {
  std::string_view t;
  if (!r.number(t)) return false;
  const char* end = t.data() + t.size();
  auto [ptr, ec] = std::from_chars(t.data(), end, out);
  return ec == std::errc() && ptr == end;
}

inline bool read_text(TextReader& r, Uuid& out) {
  std::string_view t;
  if (!r.plain_string(t)) return false;
  auto id = parse_uuid(t);
  if (!id) return false;
  out = *id;
  return true;
}

/// A version as serialize writes it, digits with one decimal (`0.1`, `12.0`), read exactly:
/// other forms (`1`, `1E0`, `0.10`) go to the DOM, whose from_json reads them through a double.
inline bool read_text(TextReader& r, Version& out) {
  std::string_view t;
  if (!r.number(t) || t.size() < 3 || t.size() > 11 || t[t.size() - 2] != '.') return false;
  std::uint64_t tenths = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i == t.size() - 2) continue;
    if (t[i] < '0' || t[i] > '9') return false;  // a sign, a second point or an exponent
    tenths = tenths * 10 + static_cast<std::uint64_t>(t[i] - '0');
  }
  if (tenths < 1 || tenths >= 4'000'000'000) return false;  // as from_json: 0.1 to 399999999.9
  out = Version::from_tenths(static_cast<std::uint32_t>(tenths));
  return true;
}

template <NamedEnum E>
bool read_text(TextReader& r, E& out) {
  std::string_view t;
  if (!r.plain_string(t)) return false;
  auto e = enum_from_name<E>(t);
  if (!e) return false;
  out = *e;
  return true;
}

/// A value kept as JSON, parsed onto the default memory resource.
inline bool read_text(TextReader& r, boost::json::value& out) {
  // The usual values of a change description (a flag, a null, a string without escapes) are
  // made here; starting Boost's parser for them cost more than reading them.
  std::string_view t;
  TextReader scalar = r;  // a string with escapes is left to the parser, from here
  if (scalar.plain_string(t)) {
    out = boost::json::string(t);
    r = scalar;
    return true;
  }
  if (bool b = false; read_text(r, b)) {
    out = b;
    return true;
  }
  if (r.eat("null")) {
    out = nullptr;
    return true;
  }
  if (!r.skip(t, text_value_depth)) return false;
  boost::json::parse_options po;
  po.max_depth = text_value_depth;
  boost::system::error_code ec;
  auto v = boost::json::parse(boost::json::string_view(t.data(), t.size()), ec,
                              boost::json::storage_ptr(), po);
  if (ec) return false;
  out = std::move(v);
  return true;
}

inline bool read_text(TextReader& r, boost::json::object& out) {
  boost::json::value v;
  if (!r.peek('{') || !read_text(r, v)) return false;
  out = std::move(v.get_object());
  return true;
}

/// As from_json: an explicit null is kept (only an absent member is nullopt).
inline bool read_text(TextReader& r, std::optional<boost::json::value>& out) {
  boost::json::value v;
  if (!read_text(r, v)) return false;
  out = std::move(v);
  return true;
}

template <class T>
bool read_text(TextReader& r, std::optional<T>& out);
template <class T>
bool read_text(TextReader& r, std::vector<T>& out);
template <Described T>
bool read_text(TextReader& r, T& out);

/// read_text and write_text of one member type, as functions of a member's address (as
/// FieldOps for the JSON DOM conversions).
struct TextOps {
  bool (*read)(TextReader& r, void* field);
  void (*write)(std::string& out, const void* field);  ///< an empty optional as null
};

/// The TextOps of T's members, by position in T's description (defined at the end of this
/// file).
template <Described T>
std::span<const TextOps* const> text_fields();

template <class T>
bool read_text(TextReader& r, std::optional<T>& out) {
  if (r.peek('n')) return false;  // an explicit null is not canonical
  T element{};
  if (!read_text(r, element)) return false;
  out = std::move(element);
  return true;
}

template <class T>
bool read_text(TextReader& r, std::vector<T>& out) {
  if (!r.eat('[')) return false;
  out.clear();
  if (r.eat(']')) return true;
  do {
    T element{};
    if (!read_text(r, element)) return false;
    out.push_back(std::move(element));
  } while (r.eat(','));
  return r.eat(']');
}

/// A described struct's members, in the struct's order, every non-optional one present: the
/// struct at `out`, of layout `layout` and member text operations `text`.
inline bool read_struct_text(TextReader& r, void* out, const Layout& layout,
                             std::span<const TextOps* const> text) {
  if (!r.eat('{')) return false;
  std::uint64_t seen = 0;
  if (!r.eat('}')) {
    std::size_t next = 0;  // the smallest position the next member may have
    do {
      std::string_view name;
      if (!r.key(name)) return false;
      auto at = layout.table.find(name);
      if (!at || *at < next) return false;
      next = *at + 1;
      seen |= std::uint64_t{1} << *at;
      if (!text[*at]->read(r, layout.fields[*at].in(out))) return false;
    } while (r.eat(','));
    if (!r.eat('}')) return false;
  }
  return has_required(layout, seen) && has_every_non_optional(layout, seen);
}

template <Described T>
bool read_text(TextReader& r, T& out) {
  return read_struct_text(r, &out, layout<T>(), text_fields<T>());
}

// ---- writing ----
//
// write_text appends to `out` exactly what catalog::json::serialize(to_json(v)) writes, without
// building the DOM value in between: how stored records are encoded (json_text_test checks the
// two agree).

inline void write_text(std::string& out, const std::string& s) {
  catalog::json::serialize_string_to(out, s);
}
inline void write_text(std::string& out, bool b) { out += b ? "true" : "false"; }
// As to_json: no floating-point members (they would convert to the flag), and integers of the
// two widths JSON values hold.
void write_text(std::string& out, double) = delete;
void write_text(std::string& out, float) = delete;
template <class I>
  requires std::is_same_v<I, std::int64_t> || std::is_same_v<I, std::uint64_t>
void write_text(std::string& out, I i) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}
inline void write_text(std::string& out, const Uuid& id) {
  char text[36];
  format_uuid(id, text);
  out += '"';
  out.append(text, sizeof text);
  out += '"';
}
inline void write_text(std::string& out, Version v) {
  catalog::json::serialize_double_to(out, static_cast<double>(v.tenths()) / 10.0);
}
template <NamedEnum E>
void write_text(std::string& out, E e) {
  catalog::json::serialize_string_to(out, enum_name(e));
}
inline void write_text(std::string& out, const boost::json::value& v) {
  catalog::json::serialize_to(out, v);
}
inline void write_text(std::string& out, const boost::json::object& o) {
  catalog::json::serialize_to(out, o);
}
template <class T>
void write_text(std::string& out, const std::optional<T>& v);
template <class T>
void write_text(std::string& out, const std::vector<T>& v);
template <Described T>
void write_text(std::string& out, const T& s);

/// An absent optional as `null` (a struct's writer leaves such a member out instead).
template <class T>
void write_text(std::string& out, const std::optional<T>& v) {
  if (v)
    write_text(out, *v);
  else
    out += "null";
}

template <class T>
void write_text(std::string& out, const std::vector<T>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    write_text(out, v[i]);
  }
  out += ']';
}

/// A described struct: every member in the struct's order but absent optionals (the struct at
/// `object`, of `fields` and member text operations `text`).
inline void write_struct_text(std::string& out, const void* object, std::span<const Field> fields,
                              std::span<const TextOps* const> text) {
  out += '{';
  bool first = true;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const void* field = fields[i].in(object);
    if (!fields[i].ops->present(field)) continue;
    if (!first) out += ',';
    first = false;
    out += '"';
    out += fields[i].name;  // names need no escapes
    out += "\":";
    text[i]->write(out, field);
  }
  out += '}';
}

template <Described T>
void write_text(std::string& out, const T& s) {
  write_struct_text(out, &s, fields<T>(), text_fields<T>());
}

// ---- the member table ----

template <class F>
bool field_read_text(TextReader& r, void* field) {
  return detail::read_text(r, *static_cast<F*>(field));
}
template <class F>
void field_write_text(std::string& out, const void* field) {
  detail::write_text(out, *static_cast<const F*>(field));
}
template <class F>
inline constexpr TextOps text_ops{&field_read_text<F>, &field_write_text<F>};

template <class T, template <class...> class L, class... D>
constexpr std::array<const TextOps*, sizeof...(D)> make_text_fields(L<D...>) {
  return {&text_ops<member_type<T, D>>...};
}

template <Described T>
std::span<const TextOps* const> text_fields() {
  static constexpr auto table = make_text_fields<T>(members_of<T>{});
  return table;
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_JSON_TEXT_HPP
