#ifndef CATALOG_KIND_TRAITS_HPP
#define CATALOG_KIND_TRAITS_HPP

// The traits machinery: the table of every kind's `KindTraits<E>::info` (entities.hpp) that
// `info(Kind)` reads, and `visit_kind`, which calls generic code with the entity type of a
// run-time kind. Generic code asks these instead of testing kinds one by one, so a kind's rules
// live in one place: its struct and its traits.

#include <catalog/entities.hpp>
#include <catalog/kind.hpp>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace catalog {

namespace detail {

template <class... E>
constexpr std::array<KindInfo, sizeof...(E)> kind_table_of(boost::mp11::mp_list<E...>) {
  return {KindTraits<E>::info...};
}

template <class... E>
constexpr bool kinds_in_order(boost::mp11::mp_list<E...>) {
  std::size_t i = 0;
  return ((static_cast<std::size_t>(E::kind) == i++ && KindTraits<E>::info.kind == E::kind) && ...);
}

}  // namespace detail

/// Every kind's info, indexed by `Kind`.
inline constexpr auto kind_table = detail::kind_table_of(entity_types{});

static_assert(kind_table.size() == std::size(all_kinds), "every kind has an entity struct");
static_assert(detail::kinds_in_order(entity_types{}),
              "entity_types lists the structs in the order of Kind, each with its own traits");

/// The entity struct of kind `K`.
template <Kind K>
using entity_of = boost::mp11::mp_at_c<entity_types, static_cast<std::size_t>(K)>;

/// Calls `f(std::type_identity<E>{})` with the entity struct `E` of `kind` and returns what it
/// returns (the same type for every kind).
template <class F>
decltype(auto) visit_kind(Kind kind, F&& f) {
  return boost::mp11::mp_with_index<boost::mp11::mp_size<entity_types>::value>(
      static_cast<std::size_t>(kind), [&](auto index) -> decltype(auto) {
        return std::forward<F>(f)(
            std::type_identity<boost::mp11::mp_at_c<entity_types, decltype(index)::value>>{});
      });
}

}  // namespace catalog

#endif  // CATALOG_KIND_TRAITS_HPP
