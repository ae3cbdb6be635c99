#ifndef CATALOG_IMPL_STORE_HPP
#define CATALOG_IMPL_STORE_HPP

// Inline bodies of Store's typed operations. The engine answers them with the struct of the
// kind; a create request still goes in as its JSON (the request's checks are the JSON ones), and
// history and version read the JSON snapshots they store.

namespace catalog {

template <class E>
Result<E> Store::create(const Principal& who, const typename E::create_type& request) {
  return entity_of<E>(create_entity(who, E::kind, to_json(request)));
}

template <class E>
Result<E> Store::get(const Principal& who, const EntityKey& key, const GetOptions& options) {
  return entity_of<E>(get_entity(who, E::kind, key, options));
}

template <class E>
Result<Page<E>> Store::list(const Principal& who, const ListOptions& options) {
  return list_into<E>(who, E::kind, options);
}

template <class E>
Result<SearchPage<E>> Store::search(const Principal& who, SearchRequest request) {
  request.index = std::string(search_index_name(E::kind));
  auto found = search(who, request);
  if (!found) return found.error();
  SearchPage<E> out;
  out.total = found->total;
  out.total_exact = found->total_exact;
  out.max_score = found->max_score;
  out.aggregations = std::move(found->aggregations);
  out.hits.reserve(found->hits.size());
  for (auto& h : found->hits)
    out.hits.push_back(SearchHitOf<E>{std::get<E>(std::move(h.entity)), std::move(h.index),
                                      h.score, std::move(h.highlight), std::move(h.sort)});
  return out;
}

template <class T>
Result<Page<T>> Store::list_into(const Principal& who, Kind kind, const ListOptions& options) {
  // Generic over the kinds without an instantiation per kind in the library (adding a kind
  // stays three files): the engine moves each struct out of its record into `out` itself.
  Page<T> out;
  auto cursors = list_to_sink(who, kind, options, detail::EntitySink::into(out.data));
  if (!cursors) return cursors.error();
  out.before = std::move(cursors->before);
  out.after = std::move(cursors->after);
  out.total = cursors->total;
  return out;
}

template <class E>
Result<E> Store::patch(const Principal& who, const EntityKey& key, const boost::json::value& body,
                       const PatchOptions& options) {
  return entity_of<E>(patch_entity(who, E::kind, key, body, options));
}

namespace detail {

/// The JSON Patch that turns object `before` into `after`, member by member (`add`, `replace`,
/// `remove` of whole top-level members, in a stable order).
inline boost::json::array member_diff(const boost::json::object& before,
                                      const boost::json::object& after) {
  boost::json::array ops;
  auto pointer = [](boost::json::string_view name) {
    std::string p = "/";
    for (char c : name) {
      if (c == '~')
        p += "~0";
      else if (c == '/')
        p += "~1";
      else
        p += c;
    }
    return p;
  };
  for (const auto& member : before) {
    const auto* now = after.if_contains(member.key());
    if (!now)
      ops.push_back({{"op", "remove"}, {"path", pointer(member.key())}});
    else if (*now != member.value())
      ops.push_back({{"op", "replace"}, {"path", pointer(member.key())}, {"value", *now}});
  }
  for (const auto& member : after)
    if (!before.contains(member.key()))
      ops.push_back({{"op", "add"}, {"path", pointer(member.key())}, {"value", member.value()}});
  return ops;
}

}  // namespace detail

template <class E, class Edit>
Result<E> Store::update(const Principal& who, const EntityKey& key, Edit&& edit,
                        const PatchOptions& options) {
  return entity_of<E>(update_entity(
      who, E::kind, key,
      [&](const boost::json::object& current) -> Result<boost::json::value> {
        auto entity = from_json<E>(current);
        if (!entity) return entity.error();
        // Compare the struct with itself before and after, so that what the JSON mapping
        // normalizes never looks like a change.
        auto before = to_json(*entity);
        edit(*entity);
        return detail::member_diff(before.as_object(), to_json(*entity).as_object());
      },
      options));
}

template <class E>
Result<std::optional<E>> Store::remove(const Principal& who, const EntityKey& key,
                                       const DeleteOptions& options) {
  return entity_of<E>(remove_entity(who, E::kind, key, options));
}

template <class E>
Result<E> Store::restore(const Principal& who, const Uuid& id) {
  return entity_of<E>(restore_entity(who, E::kind, id));
}

template <class E>
Result<EntityHistory<E>> Store::history(const Principal& who, const Uuid& id) {
  auto history = history_json(who, E::kind, id);
  if (!history) return history.error();
  EntityHistory<E> out;
  out.entity_type = std::move(history->entity_type);
  out.versions.reserve(history->versions.size());
  // Stored versions nest deeper than a request may (docs/SEMANTICS.md §15).
  json::ParseOptions stored;
  stored.max_depth = json::max_parse_depth;
  for (const auto& text : history->versions) {
    auto doc = json::parse(text, stored);
    if (!doc) return fail(Errc::storage, "corrupt version: " + doc.error().message());
    auto e = from_json<E>(*doc);
    if (!e) return fail(Errc::storage, "corrupt version: " + e.error().message());
    out.versions.push_back(std::move(*e));
  }
  return out;
}

template <class E>
Result<E> Store::version(const Principal& who, const Uuid& id, std::string_view v) {
  auto got = version_json(who, E::kind, id, v);
  if (!got) return got.error();
  return from_json<E>(*got);
}

template <class E>
Result<E> Store::entity_of(Result<AnyEntity> got) {
  if (!got) return got.error();
  auto* e = std::get_if<E>(&*got);
  if (!e) return fail(Errc::storage, "an entity of one kind read as another");
  return std::move(*e);
}

template <class E>
Result<std::optional<E>> Store::entity_of(Result<std::optional<AnyEntity>> got) {
  if (!got) return got.error();
  if (!*got) return std::optional<E>();
  auto e = entity_of<E>(Result<AnyEntity>(std::move(**got)));
  if (!e) return e.error();
  return std::optional<E>(std::move(*e));
}

template <class E>
Result<E> Store::follow(const Principal& who, const Uuid& id, const Uuid& user) {
  return entity_of<E>(follow_entity(who, E::kind, id, user));
}

template <class E>
Result<E> Store::unfollow(const Principal& who, const Uuid& id, const Uuid& user) {
  return entity_of<E>(unfollow_entity(who, E::kind, id, user));
}

template <class E>
Result<E> Store::vote(const Principal& who, const Uuid& id, VoteType v) {
  return entity_of<E>(vote_entity(who, E::kind, id, v));
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_HPP
