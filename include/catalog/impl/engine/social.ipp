#ifndef CATALOG_IMPL_ENGINE_SOCIAL_IPP
#define CATALOG_IMPL_ENGINE_SOCIAL_IPP

// Followers (docs/SEMANTICS.md §4) and votes (docs/SEMANTICS.md §5). Each is one edge from the user
// to the entity (votes carry "u" or "d"), so a change is O(1) writes whatever the number of
// followers or voters. The entity's own document, version and history are never touched; the event
// alone records the change.

#include <catalog/detail/engine/social.hpp>

#include <catalog/detail/json_mapping.hpp>

namespace catalog::engine {

namespace json = boost::json;

namespace {

// The routes exist only for the kinds whose docs/SEMANTICS.md §2 row lists the field.
Result<void> require_route(Kind kind, bool exists, std::string_view field) {
  if (exists) return {};
  return fail(Errc::not_found, std::string(type_name(kind)) + " has no " + std::string(field));
}

// One field's change (docs/SEMANTICS.md §3), as JSON texts: `list` is fieldsAdded, fieldsUpdated or
// fieldsDeleted; an empty old or new value is left out.
struct FieldChange {
  std::string_view list, name, old_value, new_value;
};

// Appends the entityFieldsChanged event of one field's change. The change description lives
// only in the event: the entity keeps the one of its last version (docs/SEMANTICS.md §3). It is
// written as text, byte for byte as serializing {previousVersion, fieldsAdded, fieldsUpdated,
// fieldsDeleted} writes it, without building those objects and arrays on every follow or vote.
Result<void> record(Tx& tx, const Principal& who, const Record& r, const FieldChange& c) {
  std::string change = "{";
  wire::key(change, wire::previous_version(), true);
  detail::write_text(change, r.version());
  for (auto list : {wire::fields_added(), wire::fields_updated(), wire::fields_deleted()}) {
    wire::key(change, list);
    change += '[';
    if (list == c.list) {
      change += '{';
      wire::key(change, wire::field_name(), true);
      catalog::json::serialize_string_to(change, c.name);
      if (!c.old_value.empty()) (wire::key(change, wire::old_value()), change += c.old_value);
      if (!c.new_value.empty()) (wire::key(change, wire::new_value()), change += c.new_value);
      change += '}';
    }
    change += ']';
  }
  change += '}';
  if (auto e = tx.append_event(
          event_text(EventType::entity_fields_changed, r, r.version(), who, tx.env().now_ms, change));
      !e)
    return e.error();
  return {};
}

Result<Answer> set_follower(Tx& tx, const Principal& who, Kind kind, const Uuid& id,
                            const Uuid& user, bool follow, AnswerForm form) {
  if (auto r = require_route(kind, info(kind).has_followers, wire::followers()); !r) return r.error();
  // Unfollowing works on soft-deleted entities (and for soft-deleted users): nobody is stuck
  // following what they cannot follow any more.
  const Include needed = follow ? Include::non_deleted : Include::all;
  auto r = tx.load(kind, id, needed);
  if (!r) return r.error();
  const Operation op = user == who.id ? Operation::follow : Operation::edit_followers;
  RecordResource resource(tx, kind, &*r);
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();
  auto follower = tx.load_reference(Kind::user, user, needed);  // the event names it
  if (!follower) return follower.error();

  auto existing = tx.edge(user, Rel::follows, id);
  if (!existing) return existing.error();
  if (existing->has_value() != follow) {
    if (follow) {
      if (auto l = tx.link(user, Rel::follows, id); !l) return l.error();
    } else {
      if (auto u = tx.unlink(user, Rel::follows, id); !u) return u.error();
    }
    std::string refs = "[";
    catalog::json::serialize_to(refs, *follower);
    refs += ']';
    auto e = follow ? record(tx, who, *r, {wire::fields_added(), wire::followers(), {}, refs})
                    : record(tx, who, *r, {wire::fields_deleted(), wire::followers(), refs, {}});
    if (!e) return e.error();
  }
  return answer(tx, *r, form);
}

// The edge data of a vote; nullopt for unVoted (no edge).
std::optional<std::string> vote_data(VoteType v) {
  if (v == VoteType::voted_up) return "u";
  if (v == VoteType::voted_down) return "d";
  return std::nullopt;
}

// The vote an edge's data stands for, as a JSON string.
std::string vote_name(const std::optional<std::string>& data) {
  const auto v = !data          ? VoteType::un_voted
                 : *data == "u" ? VoteType::voted_up
                                : VoteType::voted_down;
  std::string out;
  catalog::json::serialize_string_to(out, detail::enum_name(v));
  return out;
}

}  // namespace

Result<Answer> follow(Tx& tx, const Principal& who, Kind kind, const Uuid& id, const Uuid& user,
                      AnswerForm form) {
  return set_follower(tx, who, kind, id, user, true, form);
}

Result<Answer> unfollow(Tx& tx, const Principal& who, Kind kind, const Uuid& id, const Uuid& user,
                        AnswerForm form) {
  return set_follower(tx, who, kind, id, user, false, form);
}

Result<Answer> vote(Tx& tx, const Principal& who, Kind kind, const Uuid& id, VoteType v,
                    AnswerForm form) {
  if (detail::enum_name(v).empty())
    return fail(Errc::invalid_value,
                "Invalid updatedVoteType: must be one of votedUp, votedDown, unVoted");
  if (auto r = require_route(kind, info(kind).has_votes, wire::votes()); !r) return r.error();
  auto r = tx.load(kind, id, Include::non_deleted);
  if (!r) return r.error();
  const Operation op = Operation::edit_votes;
  RecordResource resource(tx, kind, &*r);
  if (auto a = authorize(tx, who, {&op, 1}, resource); !a) return a.error();
  // The caller's principal may outlive its user: a vote needs a live voter to show.
  if (auto voter = tx.load_reference(Kind::user, who.id, Include::non_deleted); !voter)
    return voter.error();

  auto current = tx.edge(who.id, Rel::votes, id);
  if (!current) return current.error();
  auto wanted = vote_data(v);
  if (*current != wanted) {
    if (wanted) {
      if (auto l = tx.link(who.id, Rel::votes, id, *wanted); !l) return l.error();
    } else {
      if (auto u = tx.unlink(who.id, Rel::votes, id); !u) return u.error();
    }
    // The voter is the event's userName; the change is that user's vote, O(1) to describe.
    auto from = vote_name(*current);
    auto to = vote_name(wanted);
    if (auto e = record(tx, who, *r, {wire::fields_updated(), wire::votes(), from, to}); !e) return e.error();
  }
  return answer(tx, *r, form);
}


}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_SOCIAL_IPP
