// Store::verify: the engine's integrity check (engine/verify.cpp) in one read transaction.

#include "../engine/verify.hpp"
#include "store_impl.hpp"

namespace catalog {

Result<std::vector<IntegrityProblem>> Store::verify() const {
  return impl_->read([](engine::Tx& tx) { return engine::check_integrity(tx); });
}

}  // namespace catalog
