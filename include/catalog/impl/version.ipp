#ifndef CATALOG_IMPL_VERSION_IPP
#define CATALOG_IMPL_VERSION_IPP

#include <catalog/version.hpp>

#include <limits>

namespace catalog {

LibraryVersion library_version() noexcept {
  return {CATALOG_VERSION_MAJOR, CATALOG_VERSION_MINOR, CATALOG_VERSION_PATCH};
}

std::string library_version_string() {
  const auto v = library_version();
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

Result<Version> Version::parse(std::string_view text) {
  auto bad = [&] {
    return fail(Errc::invalid_version, "Invalid version " + std::string(text) +
                                           ": expected a number like 0.1 or 1.3");
  };
  auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 2 != text.size()) return bad();
  auto whole = text.substr(0, dot);
  if (whole.size() > 1 && whole[0] == '0') return bad();
  std::uint64_t value = 0;
  bool beyond = false;  // well formed, but past what a version's tenths can count
  for (char c : whole) {
    if (c < '0' || c > '9') return bad();
    if (!beyond) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    beyond = beyond || value > std::numeric_limits<std::uint32_t>::max() / 10 - 1;
  }
  char frac = text[dot + 1];
  if (frac < '0' || frac > '9') return bad();
  if (beyond)
    return fail(Errc::not_found, "Version " + std::string(text.substr(0, 64)) +
                                     " was never written: it is past the largest a catalog writes");
  value = value * 10 + static_cast<std::uint64_t>(frac - '0');
  if (value == 0) return bad();
  return Version::from_tenths(static_cast<std::uint32_t>(value));
}

std::string Version::to_string() const {
  return std::to_string(tenths_ / 10) + "." + std::to_string(tenths_ % 10);
}

}  // namespace catalog

#endif  // CATALOG_IMPL_VERSION_IPP
