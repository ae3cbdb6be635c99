#ifndef CATALOG_RESULTS_HPP
#define CATALOG_RESULTS_HPP

// What the catalog's reads answer besides single entities: pages of a list (typed and JSON),
// version history, pages of change events, and integrity problems. Below both the Store facade
// (store.hpp) and the engine, which share these types; hosts get them through
// <catalog/store.hpp>.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace catalog {

/// One page of a list. `total` counts the whole filtered collection.
template <class E>
struct Page {
  std::vector<E> data{};
  std::optional<std::string> before{};
  std::optional<std::string> after{};
  std::int64_t total = 0;
};

/// A page as `{data, paging: {before?, after?, total}}` pieces (Store::list_json).
struct JsonPage {
  boost::json::array data;
  std::optional<std::string> before;
  std::optional<std::string> after;
  std::int64_t total = 0;
};

/// Version history (S3): the current entity first, then older versions newest first, each the
/// entity serialized as JSON text.
struct History {
  std::string entity_type{};
  std::vector<std::string> versions{};
};

/// A page of change events (S13).
struct EventPage {
  std::vector<boost::json::object> data{};
  std::optional<std::uint64_t> after{};
  std::int64_t total = 0;
};

/// One problem `Store::verify` found: the storage key concerned (printable: non-ASCII bytes as
/// \xNN) and what is wrong with it.
struct IntegrityProblem {
  std::string key{};
  std::string message{};
};

}  // namespace catalog

#endif  // CATALOG_RESULTS_HPP
