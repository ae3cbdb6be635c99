#ifndef CATALOG_IMPL_STORE_STORE_LIFECYCLE_IPP
#define CATALOG_IMPL_STORE_STORE_LIFECYCLE_IPP

// Store methods for delete, restore, patch and history: one transaction each.

#include <catalog/detail/store/store_impl.hpp>

namespace catalog {

namespace bj = boost::json;

Result<std::optional<bj::object>> Store::remove_json(const Principal& who, Kind kind,
                                                     const EntityKey& key,
                                                     const DeleteOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::remove, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::remove, [&](engine::Tx& tx) {
    return engine::remove(tx, who, kind, key, options, engine::AnswerForm::json);
  }));
}

Result<bj::object> Store::restore_json(const Principal& who, Kind kind, const Uuid& id) {
  if (auto bad = impl_->unknown_kind(StoreOperation::restore, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::restore, [&](engine::Tx& tx) {
    return engine::restore(tx, who, kind, id, engine::AnswerForm::json);
  }));
}

Result<bj::object> Store::patch_json(const Principal& who, Kind kind, const EntityKey& key,
                                     const bj::value& patch, const PatchOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::patch, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::patch, [&](engine::Tx& tx) {
    return engine::patch(tx, who, kind, key, patch, options, engine::AnswerForm::json);
  }));
}

Result<bj::object> Store::update_json(const Principal& who, Kind kind, const EntityKey& key,
                                      const PatchMaker& make, const PatchOptions& options) {
  if (auto bad = impl_->unknown_kind(StoreOperation::update, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::update, [&](engine::Tx& tx) {
    return engine::patch_with(tx, who, kind, key, make, options, engine::AnswerForm::json);
  }));
}

Result<std::optional<AnyEntity>> Store::remove_entity(const Principal& who, Kind kind,
                                                      const EntityKey& key,
                                                      const DeleteOptions& options) {
  return answer_entity(impl_->write(StoreOperation::remove, [&](engine::Tx& tx) {
    return engine::remove(tx, who, kind, key, options, engine::AnswerForm::entity);
  }));
}

Result<AnyEntity> Store::restore_entity(const Principal& who, Kind kind, const Uuid& id) {
  return answer_entity(impl_->write(StoreOperation::restore, [&](engine::Tx& tx) {
    return engine::restore(tx, who, kind, id, engine::AnswerForm::entity);
  }));
}

Result<AnyEntity> Store::patch_entity(const Principal& who, Kind kind, const EntityKey& key,
                                      const bj::value& patch, const PatchOptions& options) {
  return answer_entity(impl_->write(StoreOperation::patch, [&](engine::Tx& tx) {
    return engine::patch(tx, who, kind, key, patch, options, engine::AnswerForm::entity);
  }));
}

Result<AnyEntity> Store::update_entity(const Principal& who, Kind kind, const EntityKey& key,
                                       const PatchMaker& make, const PatchOptions& options) {
  return answer_entity(impl_->write(StoreOperation::update, [&](engine::Tx& tx) {
    return engine::patch_with(tx, who, kind, key, make, options, engine::AnswerForm::entity);
  }));
}

Result<History> Store::history_json(const Principal&, Kind kind, const Uuid& id) {
  if (auto bad = impl_->unknown_kind(StoreOperation::history, kind)) return *bad;
  // Version reads need only authentication (docs/SEMANTICS.md §12): the principal is proof of it.
  return impl_->read(StoreOperation::history,
                     [&](engine::Tx& tx) { return engine::history(tx, kind, id); });
}

Result<bj::object> Store::version_json(const Principal&, Kind kind, const Uuid& id,
                                       std::string_view version) {
  if (auto bad = impl_->unknown_kind(StoreOperation::history, kind)) return *bad;
  return impl_->read(StoreOperation::history,
                     [&](engine::Tx& tx) { return engine::version(tx, kind, id, version); });
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_LIFECYCLE_IPP
