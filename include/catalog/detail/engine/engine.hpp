#ifndef CATALOG_DETAIL_ENGINE_ENGINE_HPP
#define CATALOG_DETAIL_ENGINE_ENGINE_HPP

// The engine: entity rules over one storage transaction. It knows nothing of LMDB or HTTP.
// `Tx` wraps a transaction with the catalog's reads and writes (records, names, edges, list
// indexes, counters, history, events); the operations are free functions over a Tx.

#include <catalog/detail/engine/keys.hpp>
#include <catalog/detail/engine/record.hpp>
#include <catalog/detail/engine/wire.hpp>

#include <catalog/error.hpp>
#include <catalog/kind.hpp>
#include <catalog/options.hpp>
#include <catalog/principal.hpp>
#include <catalog/results.hpp>
#include <catalog/storage/backend.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <functional>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::engine {

using keys::Rel;

/// A reference to an entity from an edge.
struct Edge {
  Uuid other{};
  std::string data;
};

/// Extra fields asked for. `all` = "*".
struct FieldSet {
  bool all = false;
  std::set<std::string, std::less<>> names;
  bool has(std::string_view f) const { return all || names.count(f) != 0; }
  static FieldSet everything() { return FieldSet{true, {}}; }
};

/// Checks `fields` against the kind's extras (docs/SEMANTICS.md §8 grammar). Errors: bad_request
/// (invalid_field).
Result<FieldSet> parse_fields(Kind kind, const std::vector<std::string>& fields);

/// Everything an operation needs beside the transaction.
struct Env {
  const StoreOptions& options;
  std::int64_t now_ms;
};

/// An event's stored text up to its offset: what event_text writes and append_event closes.
struct EventText {
  std::string text;
};

class Tx {
 public:
  Tx(storage::Transaction& txn, const Env& env) : txn_(txn), env_(env) {}

  storage::Transaction& raw() noexcept { return txn_; }
  const Env& env() const noexcept { return env_; }

  // ---- records ----
  Result<std::optional<Record>> find(const Uuid& id);
  /// As find(id), adding the size of the stored record to `bytes`.
  Result<std::optional<Record>> find(const Uuid& id, std::size_t& bytes);
  Result<std::optional<Record>> find(Kind kind, std::string_view canonical_fqn);
  /// The id of find(kind, canonical_fqn)'s record, read from the stored text without decoding
  /// the record when it is in the form the engine writes (references.ipp). Errors: as find.
  Result<std::optional<Uuid>> find_id(Kind kind, std::string_view canonical_fqn);
  /// By id or FQN, of `kind`, matching `include`. Errors: bad_request (FQN), not_found.
  Result<Record> load(Kind kind, const EntityKey& key, Include include);
  /// reference() of load(kind, id, include), read from the stored text without decoding the
  /// record when it is in the form the engine writes (references.ipp). Errors: as load.
  Result<boost::json::object> load_reference(Kind kind, const Uuid& id, Include include);
  /// A live entity of `kind` by FQN; `what` names it in messages. Errors: not_found.
  Result<Record> live_by_fqn(Kind kind, std::string_view fqn);
  /// A live entity of one of `kinds` by id. Errors: not_found.
  Result<Record> live_by_id(Kind kind, const Uuid& id);
  Result<void> put(const Record& r);
  /// Erases the record of `r` (a hard delete; its other keys are the caller's).
  Result<void> erase(const Record& r);
  /// Entities whose record or edges this transaction wrote: the search index follows them
  /// before the transaction commits (search_index::update). put, erase, link and unlink note
  /// theirs; a write through raw() notes its own.
  void touch(const Uuid& id) { touched_.push_back(id); }
  std::vector<Uuid> take_touched() { return std::move(touched_); }
  /// Has put and erase keep the stored bytes of each record before this transaction first
  /// writes it, for before() and `update` (search_index::update, which brings the search index
  /// up to date with what the transaction wrote). Past keep_limit bytes kept, they call `update`
  /// and keep anew, so that a transaction writing many records (a recursive delete) holds
  /// bounded memory. Without it (a store without the search index, an import), nothing is kept.
  void keep_records_for(Result<void> (*update)(Tx&)) { update_ = update; }
  static constexpr std::size_t keep_limit = std::size_t{2} << 20;
  /// The stored bytes of an entity's record before this transaction first wrote it (nullopt
  /// inside: it had none), or null when this transaction has not written it since `update` last
  /// ran: the record the search index was written from, whose terms an update replaces
  /// (docs/SEARCH_INDEX.md, "How a write keeps it").
  const std::optional<std::string>* before(const Uuid& id) const {
    auto it = before_.find(id);
    return it == before_.end() ? nullptr : &it->second;
  }
  /// touch() of the ends of an edge whose search documents show it: both, but for a follow
  /// (followers are not searched).
  void touch_edge(const Uuid& from, Rel rel, const Uuid& to) {
    if (rel == Rel::follows) return;
    touch(from);
    touch(to);
  }
  /// Reads the stored records of `count` entities, `id_of(i)` for i < count, with one get_each
  /// (ascending ids read fastest): `f(i, bytes)` with the record's stored bytes or nullopt, each
  /// valid during its call only; `f` may not use this Tx. The first error `f` returns ends the
  /// visits and is returned (before a storage error on a later key). Errors: storage, f's.
  template <class IdOf, class F>
  Result<void> read_records(std::size_t count, IdOf id_of, F f);
  /// Ids read_records is given at most at once by its callers: keys, views and records of one
  /// call are memory it holds (and maps and faults in, beyond glibc's mmap threshold).
  static constexpr std::size_t read_batch = 1024;

  // ---- indexes ----
  Result<void> put_name(const Record& r);
  Result<void> erase_name(const Record& r);
  /// Adds or removes the list index entries and counters of `r` in its current state.
  Result<void> index(const Record& r, bool add);
  /// The entries of a list: the sum of its counter's shards. Errors: storage.
  Result<std::int64_t> count(Kind kind, bool deleted, const Uuid& scope);

  // ---- edges ----
  Result<void> link(const Uuid& from, Rel rel, const Uuid& to, std::string_view data = {});
  Result<bool> unlink(const Uuid& from, Rel rel, const Uuid& to);
  Result<std::optional<std::string>> edge(const Uuid& from, Rel rel, const Uuid& to);
  /// Edges from `id` (forward) or to `id` (reverse) of one relation.
  Result<std::vector<Edge>> edges(const Uuid& id, Rel rel, bool reverse);

  // ---- history and events ----
  Result<void> put_snapshot(const Record& r, const boost::json::object& rendered);
  /// put_snapshot of a rendering already serialized.
  Result<void> put_snapshot(const Record& r, std::string_view serialized);
  /// Stores `event`, closed with its offset, as the next event. Errors: storage.
  Result<std::uint64_t> append_event(EventText event);
  /// The offsets of the events this transaction appended, [first, last]; first > last when
  /// none (subscribers read them back after commit, so a huge delete holds none in memory).
  std::uint64_t first_event() const noexcept { return first_event_; }
  std::uint64_t last_event() const noexcept { return last_event_; }
  /// The offset the next appended event will get. Errors: storage.
  Result<std::uint64_t> next_event_offset();

 private:
  Result<void> add_count(Kind kind, bool deleted, const Uuid& scope, const Uuid& id,
                         std::int64_t delta);
  /// Keeps the stored record of `id` as before(id) returns it, the first time it is written.
  Result<void> keep_before(const Uuid& id);
  storage::Transaction& txn_;
  const Env& env_;
  std::uint64_t first_event_ = 1;
  std::uint64_t last_event_ = 0;
  std::vector<Uuid> touched_;
  Result<void> (*update_)(Tx&) = nullptr;
  std::map<Uuid, std::optional<std::string>> before_;
  std::size_t before_bytes_ = 0;  // what before_ holds, about
};

// ---- rendering ----

/// A relationship field of a kind: the edge relation and whether the entity is its target.
using RelField = RelationField;
/// Relationship fields per kind, in the order they are rendered (the kind's traits).
inline std::span<const RelField> relation_fields(Kind k) { return info(k).relations; }
/// Whether entities of `kind` name their containers in a relation field (a team's parents):
/// then they may have several, found by their containment edges.
inline bool has_container_edges(Kind kind) {
  const auto fields = relation_fields(kind);
  return std::any_of(fields.begin(), fields.end(),
                     [](const RelField& rf) { return rf.rel == Rel::contains && rf.reverse; });
}

/// `{id, type, name, fullyQualifiedName, displayName?, deleted}` of a record.
boost::json::object reference(const Record& r);
/// reference() as the struct from_json of it gives (a stored null displayName is absent).
EntityReference entity_reference(const Record& r);
/// References of the other ends of edges, sorted by name then id. Errors: storage.
Result<boost::json::array> references(Tx& tx, const std::vector<Edge>& edges);
/// references() as structs, in the same order.
Result<std::vector<EntityReference>> typed_references(Tx& tx, const std::vector<Edge>& edges);
/// references() and typed_references() from one read of the records.
Result<std::pair<boost::json::array, std::vector<EntityReference>>>
both_references(Tx& tx, const std::vector<Edge>& edges);
/// Containers already rendered while rendering several entities of one read (a list page: ten
/// search indexes of one service read and render the service once). Valid for one transaction
/// that writes nothing in between.
struct ContainerCache {
  struct Entry {
    Uuid id;
    std::string_view copied;                  // the member copied from the container, if any
    boost::json::object reference;            // reference(container)
    EntityReference typed;                    // entity_reference(container)
    std::optional<boost::json::value> value;  // the copied member's value, when it has one
  };
  std::vector<Entry> entries;  // few: the containers of one page
};

/// What a rendering may take instead of reading it again.
struct RenderFrom {
  /// Remembers the containers rendered, for the next entity of the same read.
  ContainerCache* containers = nullptr;
  /// A rendering of the same entity, with the same fields, whose containers and relationships
  /// have not changed since (a patch of own fields only): their members are copied from it.
  const boost::json::object* previous = nullptr;
};

/// The entity as the API returns it: own fields, containers, and the extras in `fields`.
Result<boost::json::object> render(Tx& tx, const Record& r, const FieldSet& fields,
                                   const RenderFrom& from = {});
/// render() as the entity's struct, without JSON: what from_json of render() gives. The
/// containers' and relationships' references are read straight into their members.
Result<AnyEntity> render_entity(Tx& tx, Record r, const FieldSet& fields,
                                const RenderFrom& from = {});
/// Says to the backend what rendering `records` with `fields` will read (their containers,
/// their relationships' edges and the records those name), so that PostgreSQL fetches it in two
/// round trips for all of them instead of several per entity (storage::Transaction::prefetch).
/// Rendering answers the same with or without it. Errors: storage.
Result<void> prefetch_rendering(Tx& tx, std::span<const Record* const> records,
                                const FieldSet& fields);
/// Says to the backend that the records of `ids` are about to be read (Transaction::prefetch).
/// Errors: storage.
Result<void> prefetch_records(Tx& tx, std::span<const Uuid> ids);
/// render_entity() in `r`'s own struct, which becomes the answer (`r` is no longer a record to
/// store): no struct is moved.
Result<void> render_in(Tx& tx, Record& r, const FieldSet& fields, const RenderFrom& from = {});
/// The form an operation's answer is made in, as its caller asked: the JSON of the *_json
/// surface, the kind's struct for typed callers, or none (an operation inside another, whose
/// answer nobody reads). Each form is rendered straight from the record, in one walk with the
/// history snapshot's text when the operation writes a version. JSON is not made from the
/// struct, which does not keep the bytes of members kept as written (Record::written).
enum class AnswerForm { none, json, entity };

/// An operation's answer: the entity with every field, in the form asked.
struct Answer {
  Kind kind = Kind::user;
  std::optional<boost::json::object> json;
  std::optional<AnyEntity> entity;
};
/// The answer of `r` as it stands (no version written); `from` may help render it. As a struct
/// it is made of `r`'s own, which is left unspecified.
Result<Answer> answer(Tx& tx, Record& r, AnswerForm form, const RenderFrom& from = {});
/// The history snapshot of `r`'s new version is written, and the answer made, from one
/// rendering with every field. As a struct it is made of `r`'s own, which is left unspecified.
Result<Answer> snapshot_answer(Tx& tx, Record& r, AnswerForm form, const RenderFrom& from = {});
/// An answer's JSON, its struct. Errors: internal (an answer made in another form).
Result<boost::json::object> answer_json(Answer a);
Result<AnyEntity> answer_entity(Answer a);

// ---- resources for the authorizer ----

/// The Resource view of a record (or of a kind being created, owners from `owners`).
class RecordResource final : public Resource {
 public:
  /// `record`: the entity, or for a create its container (owners are inherited from it) with
  /// `own` the owners the request names. `target` names the entity in a refusal; by default
  /// "<kind> <fqn>" of `record`, or the kind alone without one.
  RecordResource(Tx& tx, Kind kind, const Record* record, std::vector<OwnerRef> own = {},
                 std::string target = {})
      : tx_(tx), kind_(kind), record_(record), own_(std::move(own)), target_(std::move(target)) {}
  std::string target() const;
  Kind kind() const noexcept override { return kind_; }
  Result<std::vector<OwnerRef>> owners() const override;
  Result<std::vector<Uuid>> teams_of(const Uuid& user) const override;
  Result<std::vector<PolicyRule>> policies_of(std::span<const Uuid> teams) const override;

 private:
  Tx& tx_;
  Kind kind_;
  const Record* record_;
  std::vector<OwnerRef> own_;
  std::string target_;
};

/// The one authorization call of every operation (docs/SEMANTICS.md §14 step 7): admins pass;
/// everyone else is judged by the configured Authorizer. A refusal's message ends with the entity
/// it concerns.
Result<void> authorize(Tx& tx, const Principal& who, std::span<const Operation> ops,
                       const RecordResource& what);

// ---- operations ----

// Each operation that answers with the entity does so as an Answer.

Result<Answer> create(Tx& tx, const Principal& who, Kind kind, const boost::json::value& body,
                      AnswerForm form);
/// Writes a new version of `r` (changed in memory): +0.1 (+1.0 when `major`), stamps,
/// `change` (its previousVersion set here) as changeDescription, list entries moved if the
/// deletion state changed since `was_deleted`, snapshot, and one event of `event_type`. Returns
/// the snapshot: the entity as rendered with every field, which `from` may help render.
Result<Answer> write_version(Tx& tx, const Principal& who, Record& r, bool was_deleted,
                             ChangeDescription change, EventType event_type, bool major,
                             AnswerForm form, const RenderFrom& from = {});
/// docs/SEMANTICS.md §3: what a major change changes, as text: the values in `doc` of the
/// kind's major fields (KindInfo::major_fields; an ML model's algorithm, server and target).
/// Two docs of one entity differ in it exactly when the version between them went up by 1.0
/// rather than 0.1; verify and import check a history by it.
std::string major_values(Kind kind, const boost::json::object& doc);

Result<std::optional<Answer>> remove(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                                     const DeleteOptions& options, AnswerForm form);
Result<Answer> restore(Tx& tx, const Principal& who, Kind kind, const Uuid& id, AnswerForm form);
Result<History> history(Tx& tx, Kind kind, const Uuid& id);
Result<boost::json::object> version(Tx& tx, Kind kind, const Uuid& id, std::string_view text);
Result<Answer> patch(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                     const boost::json::value& body, const PatchOptions& options, AnswerForm form);
/// patch() with the body made from the current document in the same transaction (typed edits):
/// no other writer can come between the read and the write.
Result<Answer> patch_with(Tx& tx, const Principal& who, Kind kind, const EntityKey& key,
                          const PatchMaker& make, const PatchOptions& options, AnswerForm form);

/// The key schema a store was written with (keys::meta("key_schema")): 1 when not recorded
/// (stores written before it was). Errors: storage.
Result<std::uint64_t> stored_key_schema(Tx& tx);
/// The refusal of a store written with key schema `schema`, newer than this library's.
Error newer_key_schema(std::uint64_t schema);
/// Whether a store without the schema record, which reads as schema 1, is one: every key has a
/// tag some version of the catalog writes (the families of keys.hpp and of the search index),
/// and none is a counter shard (schema 2 and later write those, with the record). Reads the whole
/// store. Errors: storage: "the store is corrupt" when it holds shards (the record was lost),
/// else "not a catalog store" (an LMDB environment another program wrote), naming the first key
/// of neither.
Result<void> check_catalog_keys(Tx& tx);
/// Converts a store of key schema 1 (one counter key per list) to the current schema (sharded
/// counters) and records it; nothing if it is current. Whether it converted: false when the
/// store was current already (another host converted it). Errors: storage (also a store written
/// by a newer schema).
Result<bool> upgrade_key_schema(Tx& tx);

/// Creates, restores or promotes an admin user (docs/SEMANTICS.md §11), without authorization.
/// Whether it restored a soft-deleted one (the store logs it). Errors: invalid_name, storage.
Result<bool> ensure_admin(Tx& tx, std::string_view name);

// ---- stored values (values.ipp) ----

/// The one parse of stored JSON text (records, snapshots, events): Boost.JSON's parser with the
/// depth of catalog::json::max_parse_depth. Errors: storage, with the parser's message.
/// `storage` holds the parsed values (a caller that drops them at once passes a monotonic one).
Result<boost::json::value> parse_stored(std::string_view bytes,
                                        boost::json::storage_ptr storage = {});
/// A record's stored value: `{"k", "c"?, "g"?, "d"?, "doc"}` with the stored document.
/// decode: errors storage ("corrupt entity record").
std::string encode(const Record& r);
Result<Record> decode(std::string_view bytes);
/// decode() into `out` (on an error, `out` is anything).
Result<void> decode(std::string_view bytes, Record& out);
/// decode's two ways, apart for tests: straight from the text when the record is in the form
/// the engine writes (nullopt, or false, otherwise: never an error), and through the DOM for
/// every form.
std::optional<Record> decode_text(std::string_view bytes);
bool decode_text(std::string_view bytes, Record& out);
Result<Record> decode_document(std::string_view bytes);
/// A history snapshot (keys::history). Errors: storage ("corrupt snapshot").
Result<boost::json::object> decode_snapshot(std::string_view bytes);
/// The change event stored at `offset` (keys::event), its "offset" member as that unsigned.
/// Errors: storage ("corrupt change event").
Result<boost::json::object> decode_event(std::uint64_t offset, std::string_view bytes);

/// An event's stored text (docs/SEMANTICS.md §13) up to its offset, written member by member: id,
/// eventType, entityType, entityId, entityFullyQualifiedName, previousVersion, currentVersion,
/// userName, timestamp, then `change` (JSON text) as the changeDescription, or when empty the
/// record's own change description (not for entityCreated). append_event adds the offset and closes
/// it. `previous` defaults to the record's version (a created entity has no earlier one:
/// docs/SEMANTICS.md §13's previousVersion repeats it).
EventText event_text(EventType type, const Record& r, std::optional<Version> previous,
                     const Principal& who, std::int64_t now, std::string_view change = {});

template <class IdOf, class F>
Result<void> Tx::read_records(std::size_t count, IdOf id_of, F f) {
  const auto records = keys::entities(count, id_of);
  std::optional<Error> failed;
  auto read = txn_.get_each(records.keys, [&](std::size_t i, std::optional<std::string_view> b) {
    if (failed) return;
    if (auto r = f(i, b); !r) failed = r.error();
  });
  if (failed) return *failed;  // the first error in key order
  if (!read) return read.error();
  return {};
}

}  // namespace catalog::engine

#endif  // CATALOG_DETAIL_ENGINE_ENGINE_HPP
