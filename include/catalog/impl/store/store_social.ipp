#ifndef CATALOG_IMPL_STORE_STORE_SOCIAL_IPP
#define CATALOG_IMPL_STORE_STORE_SOCIAL_IPP

// Store: follow, unfollow and vote (docs/SEMANTICS.md §4, §5), each one write transaction.

#include <catalog/detail/engine/social.hpp>
#include <catalog/detail/store/store_impl.hpp>

namespace catalog {

Result<boost::json::object> Store::follow_json(const Principal& who, Kind kind, const Uuid& id,
                                               const Uuid& user) {
  if (auto bad = impl_->unknown_kind(StoreOperation::follow, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::follow, [&](engine::Tx& tx) {
    return engine::follow(tx, who, kind, id, user, engine::AnswerForm::json);
  }));
}

Result<boost::json::object> Store::unfollow_json(const Principal& who, Kind kind, const Uuid& id,
                                                 const Uuid& user) {
  if (auto bad = impl_->unknown_kind(StoreOperation::follow, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::follow, [&](engine::Tx& tx) {
    return engine::unfollow(tx, who, kind, id, user, engine::AnswerForm::json);
  }));
}

Result<boost::json::object> Store::vote_json(const Principal& who, Kind kind, const Uuid& id,
                                             VoteType vote) {
  if (auto bad = impl_->unknown_kind(StoreOperation::vote, kind)) return *bad;
  return answer_json(impl_->write(StoreOperation::vote, [&](engine::Tx& tx) {
    return engine::vote(tx, who, kind, id, vote, engine::AnswerForm::json);
  }));
}

Result<AnyEntity> Store::follow_entity(const Principal& who, Kind kind, const Uuid& id,
                                       const Uuid& user) {
  return answer_entity(impl_->write(StoreOperation::follow, [&](engine::Tx& tx) {
    return engine::follow(tx, who, kind, id, user, engine::AnswerForm::entity);
  }));
}

Result<AnyEntity> Store::unfollow_entity(const Principal& who, Kind kind, const Uuid& id,
                                         const Uuid& user) {
  return answer_entity(impl_->write(StoreOperation::follow, [&](engine::Tx& tx) {
    return engine::unfollow(tx, who, kind, id, user, engine::AnswerForm::entity);
  }));
}

Result<AnyEntity> Store::vote_entity(const Principal& who, Kind kind, const Uuid& id,
                                     VoteType vote) {
  return answer_entity(impl_->write(StoreOperation::vote, [&](engine::Tx& tx) {
    return engine::vote(tx, who, kind, id, vote, engine::AnswerForm::entity);
  }));
}

}  // namespace catalog

#endif  // CATALOG_IMPL_STORE_STORE_SOCIAL_IPP
