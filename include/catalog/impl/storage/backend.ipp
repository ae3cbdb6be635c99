#ifndef CATALOG_IMPL_STORAGE_BACKEND_IPP
#define CATALOG_IMPL_STORAGE_BACKEND_IPP

#include <catalog/storage/backend.hpp>

#include <string>
#include <utility>

namespace catalog::storage {

Range prefix_range(std::string_view prefix) {
  Range range{std::string(prefix), std::nullopt};
  // The first key after every key starting with `prefix`: drop trailing 0xFF bytes (they cannot
  // be incremented), then increment the last remaining byte. Nothing left means no bound.
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xFF) {
    end.pop_back();
  }
  if (!end.empty()) {
    end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
    range.end = std::move(end);
  }
  return range;
}

Result<void> check_key(std::string_view key) {
  if (key.empty()) {
    return fail(Errc::invalid_value, "storage key is empty");
  }
  if (key.size() > max_key_size) {
    return fail(Errc::key_too_long, "storage key of " + std::to_string(key.size()) +
                                        " bytes is longer than the limit of " +
                                        std::to_string(max_key_size) + " bytes");
  }
  return {};
}

}  // namespace catalog::storage

#endif  // CATALOG_IMPL_STORAGE_BACKEND_IPP
