#ifndef CATALOG_DETAIL_ENGINE_REFERENCE_SORT_HPP
#define CATALOG_DETAIL_ENGINE_REFERENCE_SORT_HPP

// The order of a reference array (docs/SEMANTICS.md §2: by name, bytewise, then by id), for
// arrays of any length: each reference is sorted as a 24-byte key (the name's first 16 bytes and
// its index), so the sort moves small keys and compares whole names only where heads tie; the
// references are then put in that order in place. The search index orders its buffered writes
// by key the same way (impl/search/index_writes.ipp, WriteBuffer).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog::engine {

// The first 16 bytes of `name` as two big-endian integers, zero-padded: comparing heads orders
// names as comparing the names does, except that equal heads need the names compared.
inline std::array<std::uint64_t, 2> name_head(std::string_view name) {
  std::array<std::uint64_t, 2> head{};
  for (std::size_t i = 0; i < 16; ++i) {
    const std::uint64_t byte = i < name.size() ? static_cast<unsigned char>(name[i]) : 0;
    head[i / 8] |= byte << (8 * (7 - i % 8));
  }
  return head;
}

// What the sort of references moves: 24 bytes a reference. Names and ids are looked up by
// index only when the heads tie.
struct HeadKey {
  std::array<std::uint64_t, 2> head;  // the name's first 16 bytes, big-endian, zero-padded
  std::size_t index;                  // into the references
};

// Sorts by head, a byte at a time from the last (a stable radix sort), skipping the bytes every
// head has alike (names with a common prefix, short names' padding). It takes no branch on the
// keys' values, where a comparison sort's branches on unrelated names cannot be predicted.
inline void radix_sort_by_head(std::vector<HeadKey>& keys) {
  if (keys.size() < 2) return;
  auto byte = [](const HeadKey& k, unsigned b) {
    return static_cast<unsigned>(k.head[b / 8] >> (8 * (7 - b % 8))) & 0xffu;
  };
  std::array<std::uint64_t, 2> differs{};  // the bits where some head differs from the first
  for (const auto& k : keys)
    for (std::size_t i = 0; i < 2; ++i) differs[i] |= k.head[i] ^ keys[0].head[i];
  std::vector<HeadKey> other(keys.size());
  for (unsigned b = 16; b-- > 0;) {
    if (((differs[b / 8] >> (8 * (7 - b % 8))) & 0xffu) == 0) continue;
    std::array<std::size_t, 256> at{};
    for (const auto& k : keys) ++at[byte(k, b)];
    std::size_t sum = 0;
    for (auto& a : at) sum += std::exchange(a, sum);
    for (const auto& k : keys) other[at[byte(k, b)]++] = k;
    keys.swap(other);
  }
}

// Sorts by head (a comparison sort below 64 keys, where the radix sort's passes cost more), then
// each run of equal heads by `less` (whole names, then ids).
template <class Less>
void sort_references(std::vector<HeadKey>& keys, Less less) {
  if (keys.size() < 64)
    std::sort(keys.begin(), keys.end(), [](const HeadKey& a, const HeadKey& b) {
      return a.head[0] != b.head[0] ? a.head[0] < b.head[0] : a.head[1] < b.head[1];
    });
  else
    radix_sort_by_head(keys);
  for (std::size_t at = 0; at < keys.size();) {
    std::size_t end = at + 1;
    // Not std::array's ==, which calls memcmp: two word comparisons, inline.
    while (end < keys.size() && keys[end].head[0] == keys[at].head[0] &&
           keys[end].head[1] == keys[at].head[1])
      ++end;
    if (end - at > 1)
      std::sort(keys.begin() + static_cast<std::ptrdiff_t>(at),
                keys.begin() + static_cast<std::ptrdiff_t>(end), less);
    at = end;
  }
}

// Puts refs in `order` (indexes into refs) in place, cycle by cycle: no second array of refs is
// allocated and faulted in, only one bit a reference.
template <class Ref>
void reorder(std::vector<Ref>& refs, const std::vector<std::size_t>& order) {
  std::vector<bool> placed(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (placed[i]) continue;
    Ref held = std::move(refs[i]);
    for (std::size_t at = i;;) {
      placed[at] = true;
      const std::size_t from = order[at];
      if (from == i) {
        refs[at] = std::move(held);
        break;
      }
      refs[at] = std::move(refs[from]);
      at = from;
    }
  }
}

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_REFERENCE_SORT_HPP
