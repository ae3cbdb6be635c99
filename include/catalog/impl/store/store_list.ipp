#ifndef CATALOG_IMPL_STORE_STORE_LIST_IPP
#define CATALOG_IMPL_STORE_STORE_LIST_IPP

// Store::list_json (docs/SEMANTICS.md §8): the request is checked on its own, then read in one read
// transaction.

#include <catalog/detail/engine/paging.hpp>
#include <catalog/detail/store/store_impl.hpp>

namespace catalog {

Result<Store::JsonPage> Store::list_json(const Principal& who, Kind kind,
                                         const ListOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::list, kind)) return *bad;
  auto query = engine::parse_list_query(kind, options);
  if (!query) return impl_->failed(StoreOperation::list, query.error());
  return impl_->read(StoreOperation::list,
                     [&](engine::Tx& tx) { return engine::list(tx, who, *query); });
}

Result<Page<AnyEntity>> Store::list_entities(const Principal& who, Kind kind,
                                             const ListOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::list, kind)) return *bad;
  return list_into<AnyEntity>(who, kind, options);
}

Result<detail::PageCursors> Store::list_to_sink(const Principal& who, Kind kind,
                                                const ListOptions& options,
                                                detail::EntitySink sink) {
  auto query = engine::parse_list_query(kind, options);
  if (!query) return impl_->failed(StoreOperation::list, query.error());
  return impl_->read(StoreOperation::list,
                     [&](engine::Tx& tx) { return engine::list_entities(tx, who, *query, sink); });
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_LIST_IPP
