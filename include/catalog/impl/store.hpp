#ifndef CATALOG_IMPL_STORE_HPP
#define CATALOG_IMPL_STORE_HPP

// Inline bodies of Store's typed operations: each converts to the JSON operation and back.

namespace catalog {

template <class E>
Result<E> Store::create(const Principal& who, const typename E::create_type& request) {
  auto made = create_json(who, E::kind, to_json(request));
  if (!made) return made.error();
  return from_json<E>(*made);
}

template <class E>
Result<E> Store::get(const Principal& who, const EntityKey& key, const GetOptions& options) {
  auto got = get_json(who, E::kind, key, options);
  if (!got) return got.error();
  return from_json<E>(*got);
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_HPP
