#ifndef CATALOG_IMPL_STORE_STORE_EVENTS_IPP
#define CATALOG_IMPL_STORE_STORE_EVENTS_IPP

// Store: reading change events and in-process subscriptions (docs/SEMANTICS.md §13).

#include <catalog/detail/engine/paging.hpp>
#include <catalog/detail/store/store_impl.hpp>

namespace catalog {

Result<ChangeEvent> Store::Impl::typed_event(const boost::json::object& stored) {
  auto event = from_json<ChangeEvent>(stored);
  if (!event) return fail(Errc::storage, "corrupt change event: " + event.error().message());
  return event;
}

Result<JsonEventPage> Store::events_json(const Principal& who, std::uint64_t after,
                                         std::int64_t limit) const {
  if (auto l = engine::check_limit(limit); !l)
    return impl_->failed(StoreOperation::events, l.error());
  if (!who.is_admin)
    return impl_->failed(StoreOperation::events,
                         Error(Errc::forbidden, "Only admins may read change events"));
  return impl_->read(StoreOperation::events,
                     [&](engine::Tx& tx) { return engine::events(tx, after, limit); });
}

Result<EventPage> Store::events(const Principal& who, std::uint64_t after,
                                std::int64_t limit) const {
  auto page = events_json(who, after, limit);
  if (!page) return page.error();
  EventPage out;
  out.data.reserve(page->data.size());
  for (const auto& stored : page->data) {
    auto event = Impl::typed_event(stored);
    if (!event) return event.error();
    out.data.push_back(std::move(*event));
  }
  out.after = page->after;
  out.total = page->total;
  return out;
}

std::uint64_t Store::subscribe(std::function<void(const ChangeEvent&)> listener) {
  std::lock_guard lock(impl_->listeners_mutex);
  auto id = impl_->next_listener++;
  impl_->listeners.emplace(
      id, std::make_shared<const std::function<void(const ChangeEvent&)>>(std::move(listener)));
  return id;
}

void Store::unsubscribe(std::uint64_t id) {
  std::lock_guard lock(impl_->listeners_mutex);
  impl_->listeners.erase(id);
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_EVENTS_IPP
