#ifndef CATALOG_DETAIL_ENGINE_VERIFY_HPP
#define CATALOG_DETAIL_ENGINE_VERIFY_HPP

// The integrity check over one transaction: Store::verify runs it in a read transaction, and
// catalog::admin's import in its write transaction before committing, so that data that would
// not verify is never committed.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/results.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace catalog::engine {

/// Told every few thousand keys, and once at the end, how many keys and how many entity records
/// the check has passed.
using IntegrityProgress = std::function<void(std::uint64_t keys, std::uint64_t entities)>;

/// Checks every invariant of the key schema over what `tx` sees (Store::verify documents which).
/// Memory does not grow with the store. Errors: storage (a read failed).
Result<std::vector<IntegrityProblem>> check_integrity(Tx& tx,
                                                      const IntegrityProgress& progress = {});

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_VERIFY_HPP
