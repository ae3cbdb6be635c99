#ifndef CATALOG_DETAIL_STORAGE_PG_ARRAY_HPP
#define CATALOG_DETAIL_STORAGE_PG_ARRAY_HPP

// PostgreSQL's binary form of a bytea array, which the PostgreSQL backend sends to write many
// keys in one statement (and catalog-bench's raw libpq baseline, to send the same statements).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::storage::detail {

/// The type oids of bytea and of an array of bytea.
inline constexpr unsigned bytea_oid = 17;
inline constexpr unsigned bytea_array_oid = 1001;

/// `items` as a one-dimensional array of bytea in PostgreSQL's binary form (array_send): the
/// number of dimensions, a flag for nulls, the element type, the length and lower bound, then
/// each element's length and bytes; integers big-endian.
inline std::string bytea_array(const std::vector<std::string_view>& items) {
  std::string out;
  std::size_t size = 20;
  for (auto item : items) size += 4 + item.size();
  out.reserve(size);
  auto u32 = [&](std::uint32_t v) {
    const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                           static_cast<char>(v >> 8), static_cast<char>(v)};
    out.append(bytes, 4);
  };
  u32(1);  // dimensions
  u32(0);  // no nulls
  u32(bytea_oid);
  u32(static_cast<std::uint32_t>(items.size()));
  u32(1);  // lower bound
  for (auto item : items) {
    u32(static_cast<std::uint32_t>(item.size()));
    out.append(item);
  }
  return out;
}

}  // namespace catalog::storage::detail

#endif  // CATALOG_DETAIL_STORAGE_PG_ARRAY_HPP
