#ifndef CATALOG_IMPL_KIND_IPP
#define CATALOG_IMPL_KIND_IPP

#include <catalog/kind.hpp>

#include <catalog/kind_traits.hpp>

namespace catalog {

const KindInfo& info(Kind k) noexcept { return kind_table[static_cast<std::size_t>(k)]; }

std::optional<Kind> service_kind(Kind k) noexcept { return info(k).service; }

std::optional<Kind> kind_from_type(std::string_view type) noexcept {
  for (const auto& k : kind_table)
    if (k.type == type) return k.kind;
  return std::nullopt;
}

std::optional<Kind> kind_from_collection(std::string_view collection) noexcept {
  for (const auto& k : kind_table)
    if (k.collection == collection) return k.kind;
  return std::nullopt;
}

}  // namespace catalog

#endif  // CATALOG_IMPL_KIND_IPP
