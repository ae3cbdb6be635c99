// Store: reading change events and in-process subscriptions (S13).

#include "../engine/paging.hpp"
#include "store_impl.hpp"

namespace catalog {

Result<EventPage> Store::events(const Principal& who, std::uint64_t after,
                                std::int64_t limit) const {
  if (auto l = engine::check_limit(limit); !l) return l.error();
  if (!who.is_admin) return fail(Errc::forbidden, "Only admins may read change events");
  return impl_->read([&](engine::Tx& tx) { return engine::events(tx, after, limit); });
}

std::uint64_t Store::subscribe(std::function<void(const boost::json::object&)> listener) {
  std::lock_guard lock(impl_->listeners_mutex);
  auto id = impl_->next_listener++;
  impl_->listeners.emplace(id, std::move(listener));
  return id;
}

void Store::unsubscribe(std::uint64_t id) {
  std::lock_guard lock(impl_->listeners_mutex);
  impl_->listeners.erase(id);
}

}  // namespace catalog
