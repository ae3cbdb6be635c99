#ifndef CATALOG_DETAIL_ENGINE_SOCIAL_HPP
#define CATALOG_DETAIL_ENGINE_SOCIAL_HPP

// Followers (docs/SEMANTICS.md §4) and votes (docs/SEMANTICS.md §5): edges from users to entities.
// They never make a version; each effective change appends one entityFieldsChanged event, and a
// repeat changes nothing.

#include <catalog/detail/engine/engine.hpp>

#include <catalog/entities.hpp>

#include <boost/json/object.hpp>

namespace catalog::engine {

/// Each operation answers with the entity in the form its caller asks (engine.hpp, AnswerForm).

/// Adds `user` to the followers of a live entity; returns it with all fields.
/// Errors: not_found (kind without followers, entity missing or soft-deleted, user missing or
/// soft-deleted), forbidden (Follow as oneself, else EditFollowers), storage.
Result<Answer> follow(Tx& tx, const Principal& who, Kind kind, const Uuid& id, const Uuid& user,
                      AnswerForm form);

/// Removes `user` from the followers, also of a soft-deleted entity and for a soft-deleted user.
/// Errors: not_found (kind without followers, entity or user missing), forbidden, storage.
Result<Answer> unfollow(Tx& tx, const Principal& who, Kind kind, const Uuid& id,
                        const Uuid& user, AnswerForm form);

/// Sets the caller's vote on a live entity; returns it with all fields.
/// Errors: bad_request (invalid_value: not a vote type), not_found (kind without votes, entity
/// missing or soft-deleted, caller no longer a live user), forbidden (EditVotes), storage.
Result<Answer> vote(Tx& tx, const Principal& who, Kind kind, const Uuid& id, VoteType vote,
                    AnswerForm form);

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_SOCIAL_HPP
