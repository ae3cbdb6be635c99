// catalog-bench measurement 8: the stored encoding, which is chosen by this measurement.
//
// Records are stored as JSON text and read by detail::TextReader straight into their structs.
// The alternative measured here is a compact binary form of the same record, written by a
// prototype codec that exists only in this benchmark: each member of the described struct in
// the struct's order, without names; strings and arrays as a varint length then their bytes or
// elements; integers as zigzag varints; an id as its 16 bytes; an optional as a presence byte
// then its value; a JSON-valued member (a change's old and new value, an extension) as its JSON
// text; the record's envelope (kind, containers, deleting operation, members present) in front.
// It is what a binary encoding of these structs would at best be: no schema evolution, no
// checks beyond bounds, so its decode time is a lower bound for a real one.
//
// For every entity record of a store it measures the bytes and the time to decode (into a
// reused Record, as Tx::find does) and to encode, both ways, and checks that the binary form
// decodes to the record the text does.
#ifndef CATALOG_EXAMPLES_BENCH_ENCODING_HPP
#define CATALOG_EXAMPLES_BENCH_ENCODING_HPP

#include <catalog/detail/engine/engine.hpp>
#include <catalog/detail/json_mapping.hpp>
#include <catalog/json.hpp>

#include <boost/json/parse.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bench_encoding {

namespace engine = catalog::engine;

// ---- writing ----

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline void put_bytes(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

inline void put(std::string& out, const std::string& s) { put_bytes(out, s); }
inline void put(std::string& out, bool b) { out.push_back(b ? 1 : 0); }
template <class I>
requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) void put(std::string& out, I v) {
  auto wide = static_cast<std::int64_t>(v);
  put_varint(out, (static_cast<std::uint64_t>(wide) << 1) ^ static_cast<std::uint64_t>(wide >> 63));
}
inline void put(std::string& out, const catalog::Uuid& id) {
  out.append(reinterpret_cast<const char*>(id.data), 16);
}
inline void put(std::string& out, catalog::Version v) { put_varint(out, v.tenths()); }
template <class E>
requires std::is_enum_v<E>
void put(std::string& out, E e) { put_varint(out, static_cast<std::uint64_t>(e)); }
inline void put(std::string& out, const boost::json::value& v) {
  put_bytes(out, catalog::json::serialize(v));
}
inline void put(std::string& out, const boost::json::object& o) {
  put_bytes(out, catalog::json::serialize(o));
}
template <class T>
void put(std::string& out, const std::optional<T>& o);
template <class T>
void put(std::string& out, const std::vector<T>& v);
template <catalog::detail::Described T>
void put(std::string& out, const T& s);

template <class T>
void put(std::string& out, const std::optional<T>& o) {
  put(out, o.has_value());
  if (o) put(out, *o);
}
template <class T>
void put(std::string& out, const std::vector<T>& v) {
  put_varint(out, v.size());
  for (const auto& e : v) put(out, e);
}
template <catalog::detail::Described T>
void put(std::string& out, const T& s) {
  boost::mp11::mp_for_each<catalog::detail::members_of<T>>(
      [&](auto m) { put(out, s.*decltype(m)::pointer); });
}

// ---- reading ----

struct In {
  std::string_view s;
  std::size_t at = 0;
  bool ok = true;
};

inline std::uint64_t get_varint(In& in) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.at >= in.s.size()) break;
    auto b = static_cast<unsigned char>(in.s[in.at++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  in.ok = false;
  return 0;
}

inline std::string_view get_bytes(In& in) {
  auto n = get_varint(in);
  if (!in.ok || n > in.s.size() - in.at) {
    in.ok = false;
    return {};
  }
  auto out = in.s.substr(in.at, n);
  in.at += n;
  return out;
}

inline void get(In& in, std::string& s) { s.assign(get_bytes(in)); }
inline void get(In& in, bool& b) {
  if (in.at >= in.s.size()) {
    in.ok = false;
    return;
  }
  b = in.s[in.at++] != 0;
}
template <class I>
requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) void get(In& in, I& v) {
  auto z = get_varint(in);
  v = static_cast<I>(static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1));
}
inline void get(In& in, catalog::Uuid& id) {
  if (in.s.size() - in.at < 16) {
    in.ok = false;
    return;
  }
  std::memcpy(id.data, in.s.data() + in.at, 16);
  in.at += 16;
}
inline void get(In& in, catalog::Version& v) {
  v = catalog::Version::from_tenths(static_cast<std::uint32_t>(get_varint(in)));
}
template <class E>
requires std::is_enum_v<E>
void get(In& in, E& e) { e = static_cast<E>(get_varint(in)); }
inline void get(In& in, boost::json::value& v) {
  auto text = get_bytes(in);
  boost::system::error_code ec;
  v = boost::json::parse(text, ec);
  if (ec) in.ok = false;
}
inline void get(In& in, boost::json::object& o) {
  boost::json::value v;
  get(in, v);
  if (in.ok && v.is_object())
    o = std::move(v.get_object());
  else
    in.ok = false;
}
template <class T>
void get(In& in, std::optional<T>& o);
template <class T>
void get(In& in, std::vector<T>& v);
template <catalog::detail::Described T>
void get(In& in, T& s);

template <class T>
void get(In& in, std::optional<T>& o) {
  bool present = false;
  get(in, present);
  if (!present) {
    o.reset();
    return;
  }
  get(in, o.emplace());
}
template <class T>
void get(In& in, std::vector<T>& v) {
  auto n = get_varint(in);
  if (!in.ok || n > in.s.size() - in.at) {
    in.ok = false;
    return;
  }
  v.resize(n);
  for (auto& e : v) get(in, e);
}
template <catalog::detail::Described T>
void get(In& in, T& s) {
  boost::mp11::mp_for_each<catalog::detail::members_of<T>>(
      [&](auto m) { get(in, s.*decltype(m)::pointer); });
}

// ---- records ----

/// The binary form of a stored record: envelope, then the entity's members. Members kept as
/// written (imported non-canonical JSON) are not carried: the stores measured have none.
inline std::string encode_binary(const engine::Record& r) {
  std::string out;
  out.reserve(512);
  out.push_back(static_cast<char>(r.kind));
  put(out, r.container);
  put(out, r.glossary);
  put(out, r.deleted_by);
  put_bytes(out, std::string_view(reinterpret_cast<const char*>(r.stored.data()), r.stored.size()));
  std::visit([&](const auto& e) { put(out, e); }, r.value);
  return out;
}

/// decode_binary into `r` (reused, as Tx::find reuses its record); false if malformed.
inline bool decode_binary(std::string_view bytes, engine::Record& r) {
  In in{bytes};
  if (bytes.empty()) return false;
  r.reset(static_cast<catalog::Kind>(static_cast<unsigned char>(bytes[0])));
  in.at = 1;
  get(in, r.container);
  get(in, r.glossary);
  get(in, r.deleted_by);
  auto stored = get_bytes(in);
  r.stored.assign(stored.begin(), stored.end());
  std::visit([&](auto& e) { get(in, e); }, r.value);
  r.id = r.base().id;
  return in.ok && in.at == bytes.size();
}

}  // namespace bench_encoding

#endif  // CATALOG_EXAMPLES_BENCH_ENCODING_HPP
