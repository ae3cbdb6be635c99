#ifndef CATALOG_IMPL_STORE_STORE_VERIFY_IPP
#define CATALOG_IMPL_STORE_STORE_VERIFY_IPP

// Store::verify: the engine's integrity check (impl/engine/verify.ipp) in one read transaction.

#include <catalog/detail/engine/verify.hpp>
#include <catalog/detail/store/store_impl.hpp>

namespace catalog {

Result<std::vector<IntegrityProblem>> Store::verify() const {
  return impl_->read(StoreOperation::verify,
                     [](engine::Tx& tx) { return engine::check_integrity(tx); });
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_VERIFY_IPP
