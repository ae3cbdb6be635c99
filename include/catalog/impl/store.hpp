#ifndef CATALOG_IMPL_STORE_HPP
#define CATALOG_IMPL_STORE_HPP

// Inline bodies of Store's typed operations: each converts to the JSON operation and back.

namespace catalog {

template <class E>
Result<E> Store::create(const Principal& who, const typename E::create_type& request) {
  auto made = create_json(who, E::kind, to_json(request));
  if (!made) return made.error();
  return from_json<E>(*made);
}

template <class E>
Result<E> Store::get(const Principal& who, const EntityKey& key, const GetOptions& options) {
  auto got = get_json(who, E::kind, key, options);
  if (!got) return got.error();
  return from_json<E>(*got);
}

template <class E>
Result<Page<E>> Store::list(const Principal& who, const ListOptions& options) {
  auto page = list_json(who, E::kind, options);
  if (!page) return page.error();
  Page<E> out;
  out.data.reserve(page->data.size());
  for (const auto& item : page->data) {
    auto e = from_json<E>(item);
    if (!e) return e.error();
    out.data.push_back(std::move(*e));
  }
  out.before = std::move(page->before);
  out.after = std::move(page->after);
  out.total = page->total;
  return out;
}

template <class E>
Result<E> Store::patch(const Principal& who, const EntityKey& key, const boost::json::value& body,
                       const PatchOptions& options) {
  auto patched = patch_json(who, E::kind, key, body, options);
  if (!patched) return patched.error();
  return from_json<E>(*patched);
}

template <class E>
Result<std::optional<E>> Store::remove(const Principal& who, const EntityKey& key,
                                       const DeleteOptions& options) {
  auto removed = remove_json(who, E::kind, key, options);
  if (!removed) return removed.error();
  if (!*removed) return std::optional<E>();
  auto e = from_json<E>(**removed);
  if (!e) return e.error();
  return std::optional<E>(std::move(*e));
}

template <class E>
Result<E> Store::restore(const Principal& who, const Uuid& id) {
  auto restored = restore_json(who, E::kind, id);
  if (!restored) return restored.error();
  return from_json<E>(*restored);
}

template <class E>
Result<History> Store::history(const Principal& who, const Uuid& id) {
  return history_json(who, E::kind, id);
}

template <class E>
Result<E> Store::version(const Principal& who, const Uuid& id, std::string_view v) {
  auto got = version_json(who, E::kind, id, v);
  if (!got) return got.error();
  return from_json<E>(*got);
}

template <class E>
Result<E> Store::follow(const Principal& who, const Uuid& id, const Uuid& user) {
  auto got = follow_json(who, E::kind, id, user);
  if (!got) return got.error();
  return from_json<E>(*got);
}

template <class E>
Result<E> Store::unfollow(const Principal& who, const Uuid& id, const Uuid& user) {
  auto got = unfollow_json(who, E::kind, id, user);
  if (!got) return got.error();
  return from_json<E>(*got);
}

template <class E>
Result<E> Store::vote(const Principal& who, const Uuid& id, VoteType v) {
  auto got = vote_json(who, E::kind, id, v);
  if (!got) return got.error();
  return from_json<E>(*got);
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_HPP
