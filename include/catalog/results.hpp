#ifndef CATALOG_RESULTS_HPP
#define CATALOG_RESULTS_HPP

// What the catalog's reads answer besides single entities: pages of a list (typed and JSON),
// version history, pages of change events, and integrity problems. Below both the Store facade
// (store.hpp) and the engine, which share these types; hosts get them through
// <catalog/store.hpp>.

#include <catalog/change_event.hpp>

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

/// Version history (S3) as JSON (Store::history_json): the current entity first, then older
/// versions newest first, each the entity serialized as JSON text.
struct History {
  std::string entity_type{};
  std::vector<std::string> versions{};
};

/// Version history (S3) typed (Store::history<E>): the versions of History, decoded, in the same
/// order (the current entity first, then older versions newest first).
template <class E>
struct EntityHistory {
  std::string entity_type{};  // the reference type, as History's ("glossaryTerm")
  std::vector<E> versions{};
};

/// A page of change events (S13): `after` is the last offset of the page when more follow,
/// `total` the number of events.
struct EventPage {
  std::vector<ChangeEvent> data{};
  std::optional<std::uint64_t> after{};
  std::int64_t total = 0;
};

/// The same page with each event as its stored JSON object (Store::events_json, GET /v1/events).
struct JsonEventPage {
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
