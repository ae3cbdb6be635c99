#ifndef CATALOG_RESULTS_HPP
#define CATALOG_RESULTS_HPP

// What the catalog's reads answer besides single entities: pages of a list (typed and JSON),
// version history, pages of change events, and integrity problems. Below both the Store facade
// (store.hpp) and the engine, which share these types; hosts get them through
// <catalog/store.hpp>.

#include <catalog/change_event.hpp>
#include <catalog/entities.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace catalog {

/// One page of a list. `total` counts the whole filtered collection. Which cursors a page has:
/// docs/SEMANTICS.md §8.
template <class E>
struct Page {
  std::vector<E> data{};                ///< the entities, in list order (docs/SEMANTICS.md §8)
  std::optional<std::string> before{};  ///< ListOptions::before for the page before it
  std::optional<std::string> after{};   ///< ListOptions::after for the page after it
  std::int64_t total = 0;               ///< entities matching `include` and `service`, in all
};

namespace detail {

/// Where a typed list puts each entity of its page (Store::list<E>, Store::list_entities):
/// straight into the caller's vector, so no struct is moved through a page in between.
/// `restart` empties the target (of what an attempt that was retried put there) and reserves
/// room for `n`; `take` moves the struct out of `entity`, or answers false when it is of
/// another kind.
struct EntitySink {
  void* target = nullptr;
  void (*restart)(void* target, std::size_t n) = nullptr;
  bool (*take)(void* target, AnyEntity& entity) = nullptr;

  /// A sink that appends to `data`, a vector of one entity type or of AnyEntity.
  template <class T>
  static EntitySink into(std::vector<T>& data) {
    return {&data,
            [](void* target, std::size_t n) {
              auto& out = *static_cast<std::vector<T>*>(target);
              out.clear();
              out.reserve(n);
            },
            [](void* target, AnyEntity& entity) {
              auto& out = *static_cast<std::vector<T>*>(target);
              if constexpr (std::is_same_v<T, AnyEntity>) {
                out.push_back(std::move(entity));
              } else {
                auto* e = std::get_if<T>(&entity);
                if (e == nullptr) return false;
                out.push_back(std::move(*e));
              }
              return true;
            }};
  }
};

/// A typed page's cursors and total, its entities having gone to an EntitySink.
struct PageCursors {
  std::optional<std::string> before{};
  std::optional<std::string> after{};
  std::int64_t total = 0;
};

}  // namespace detail

/// A page as `{data, paging: {before?, after?, total}}` pieces (Store::list_json).
struct JsonPage {
  boost::json::array data;            ///< the entities as JSON objects
  std::optional<std::string> before;  ///< `paging.before`, as Page::before
  std::optional<std::string> after;   ///< `paging.after`, as Page::after
  std::int64_t total = 0;             ///< `paging.total`, as Page::total
};

/// Version history (docs/SEMANTICS.md §3) as JSON (Store::history_json): the current entity first,
/// then older versions newest first, each the entity serialized as JSON text.
struct History {
  std::string entity_type{};            ///< `entityType`: the reference type ("glossaryTerm")
  std::vector<std::string> versions{};  ///< `versions`: each a JSON text, newest first
};

/// Version history (docs/SEMANTICS.md §3) typed (Store::history<E>): the versions of History,
/// decoded, in the same order (the current entity first, then older versions newest first).
template <class E>
struct EntityHistory {
  std::string entity_type{};  ///< the reference type, as History's ("glossaryTerm")
  std::vector<E> versions{};  ///< the versions, newest first
};

/// A page of change events (docs/SEMANTICS.md §13): `after` is the last offset of the page when
/// more follow, `total` the number of events.
struct EventPage {
  std::vector<ChangeEvent> data{};       ///< the events, oldest first
  std::optional<std::uint64_t> after{};  ///< the last offset of the page, when more events follow
  std::int64_t total = 0;                ///< the number of events in the store
};

/// The same page with each event as its stored JSON object (Store::events_json, GET /v1/events).
struct JsonEventPage {
  std::vector<boost::json::object> data{};  ///< the events as stored, oldest first
  std::optional<std::uint64_t> after{};     ///< as EventPage::after
  std::int64_t total = 0;                   ///< as EventPage::total
};

/// One problem `Store::verify` found: the storage key concerned (printable: non-ASCII bytes as
/// `\xNN`) and what is wrong with it.
struct IntegrityProblem {
  std::string key{};      ///< the storage key, printable
  std::string message{};  ///< what is wrong with it
};

}  // namespace catalog

#endif  // CATALOG_RESULTS_HPP
