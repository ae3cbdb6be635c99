#ifndef CATALOG_IMPL_ENGINE_REFERENCES_IPP
#define CATALOG_IMPL_ENGINE_REFERENCES_IPP

// Entity references read straight from stored records, and the sorted reference arrays of
// relationship fields (followers, voters, owners, ...).

#include <catalog/detail/engine/reference_sort.hpp>
#include <catalog/detail/engine/references.hpp>

#include <catalog/detail/engine/engine.hpp>

#include <catalog/detail/json_text.hpp>
#include <catalog/detail/utf8.hpp>

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

namespace catalog::engine {

namespace json = boost::json;

namespace {

// Stored records are read as any JSON writer may have spaced them: the scan gives up only on
// what the full decode would not read the same way.
using Scanner = detail::BasicTextReader<detail::Spacing::json>;

// Values the scan does not look at are skipped by their structure: the full decode, which a
// record must pass to be written, checks them.
bool skip_value(Scanner& s) { return s.skip_structure(); }

bool boolean(Scanner& s, bool& out) {
  if (s.eat("true")) {
    out = true;
    return true;
  }
  if (s.eat("false")) {
    out = false;
    return true;
  }
  return false;
}

// The entity document: id, name, fullyQualifiedName, displayName, deleted; the rest skipped.
bool scan_doc(Scanner& s, StoredReference& out) {
  if (!s.eat('{') || s.peek('}')) return false;
  bool id = false, name = false, fqn = false, display = false, deleted = false, version = false;
  out.display_name.reset();
  out.deleted = false;
  do {
    std::string_view key;
    bool escaped = false;
    if (!s.raw_string(key, escaped) || escaped || !s.eat(':')) return false;
    if (key == wire::id()) {
      std::string_view raw;
      if (id || !s.raw_string(raw, escaped) || escaped) return false;
      auto parsed = parse_uuid(raw);
      if (!parsed) return false;
      out.id = *parsed;
      id = true;
    } else if (key == wire::name()) {
      if (name || !s.string(out.name, out.name_buffer)) return false;
      name = true;
    } else if (key == wire::fqn()) {
      if (fqn || !s.string(out.fqn, out.fqn_buffer)) return false;
      fqn = true;
    } else if (key == wire::display_name()) {
      std::string_view d;
      if (display || !s.peek('"') || !s.string(d, out.display_name_buffer)) return false;
      out.display_name = d;
      display = true;
    } else if (key == wire::deleted()) {
      if (deleted || !boolean(s, out.deleted)) return false;
      deleted = true;
    } else if (key == wire::version()) {  // read by the full decode only, but required there too
      if (version || !skip_value(s)) return false;
      version = true;
    } else if (!skip_value(s)) {
      return false;
    }
  } while (s.eat(','));
  // What the full decode requires of every document, so that a record it refuses as corrupt
  // is not shown as a reference either.
  return s.eat('}') && id && name && fqn && deleted && version && !out.name.empty() &&
         !out.fqn.empty();
}

}  // namespace

namespace {

// The record's envelope (tx.ipp `encode`): each of "k" and "doc" once, read by `kind_member`
// and `doc_member` from the scanner at their values; other members skipped.
template <class OnKind, class OnDoc>
bool scan_record(std::string_view stored, OnKind kind_member, OnDoc doc_member) {
  Scanner s(stored);
  if (!s.eat('{') || s.peek('}')) return false;
  bool kind = false, doc = false;
  do {
    std::string_view key;
    bool escaped = false;
    if (!s.raw_string(key, escaped) || escaped || !s.eat(':')) return false;
    if (key == "k") {
      if (kind || !kind_member(s)) return false;
      kind = true;
    } else if (key == envelope::document) {
      if (doc || !doc_member(s)) return false;
      doc = true;
    } else if (!skip_value(s)) {
      return false;
    }
  } while (s.eat(','));
  return s.eat('}') && s.at_end() && kind && doc;
}

}  // namespace

bool scan_reference(std::string_view stored, StoredReference& out) {
  // The record is read from start to end: ask for all its cache lines at once, so that their
  // misses overlap instead of stalling the scan one line at a time. An entity with many
  // followers scans one record per follower, and few of those records are in cache.
  for (std::size_t at = 64; at < stored.size() && at < 1024; at += 64)
    __builtin_prefetch(stored.data() + at);
  return scan_record(
      stored,
      [&](Scanner& s) {
        std::string_view type;
        bool escaped = false;
        if (!s.raw_string(type, escaped) || escaped) return false;
        auto k = kind_from_type(type);
        if (!k) return false;
        out.kind = *k;
        return true;
      },
      [&](Scanner& s) { return scan_doc(s, out); });
}

namespace {

// The document's member `member`, as scan_document_string reads it.
bool scan_doc_string(Scanner& s, std::string_view member, std::optional<std::string_view>& out,
                     std::string& buffer) {
  if (!s.eat('{') || s.peek('}')) return false;
  bool seen = false;
  do {
    std::string_view key;
    bool escaped = false;
    if (!s.raw_string(key, escaped) || escaped || !s.eat(':')) return false;
    if (key == member) {
      if (seen) return false;
      seen = true;
      if (!s.eat("null")) {
        std::string_view text;
        if (!s.peek('"') || !s.string(text, buffer)) return false;
        out = text;
      }
    } else if (!skip_value(s)) {
      return false;
    }
  } while (s.eat(','));
  return s.eat('}');
}

}  // namespace

bool scan_document_string(std::string_view stored, std::string_view member,
                          std::optional<std::string_view>& out, std::string& buffer) {
  out.reset();
  return scan_record(
      stored, [](Scanner& s) { return skip_value(s); },
      [&](Scanner& s) { return scan_doc_string(s, member, out, buffer); });
}

EntityReference StoredReference::typed() const {
  EntityReference ref;
  ref.id = id;
  ref.type = type_name(kind);
  ref.name.emplace(name);
  ref.fully_qualified_name.emplace(fqn);
  if (display_name) ref.display_name.emplace(*display_name);
  ref.deleted = deleted;
  return ref;
}

json::object StoredReference::to_json(json::storage_ptr sp) const {
  json::object o(std::move(sp));
  o.reserve(6);
  char id_text[36];
  format_uuid(id, id_text);
  o.emplace(wire::id(), json::string_view(id_text, sizeof id_text));
  o.emplace(wire::reference_type(), type_name(kind));
  o.emplace(wire::name(), name);
  o.emplace(wire::fqn(), fqn);
  if (display_name) o.emplace(wire::display_name(), *display_name);
  o.emplace(wire::deleted(), deleted);
  return o;
}

Result<json::object> Tx::load_reference(Kind kind, const Uuid& id, Include include) {
  auto bytes = txn_.get_view(keys::entity(id));
  if (!bytes) return bytes.error();
  if (*bytes) {
    StoredReference s;
    if (scan_reference(**bytes, s) && s.kind == kind && s.id == id &&
        (include == Include::all || (include == Include::deleted) == s.deleted))
      return s.to_json();
  }
  // Anything else (missing, another kind or state, another form) as load() answers it.
  auto r = load(kind, EntityKey::by_id(id), include);
  if (!r) return r.error();
  return reference(*r);
}

Result<std::optional<Uuid>> Tx::find_id(Kind kind, std::string_view canonical_fqn) {
  auto id = txn_.get(keys::name(kind, canonical_fqn));
  if (!id) return id.error();
  if (!*id || (*id)->size() != 16) return std::optional<Uuid>();
  const Uuid named = keys::id_from_bytes(**id);
  auto bytes = txn_.get_view(keys::entity(named));
  if (!bytes) return bytes.error();
  if (*bytes) {
    StoredReference s;
    // Long FQNs share a bounded name key: the stored entity's FQN must be the one asked for.
    if (scan_reference(**bytes, s) && s.id == named)
      return s.kind == kind && s.fqn == canonical_fqn ? std::optional<Uuid>(named) : std::nullopt;
  }
  // Anything else (missing, another form) as find() answers it.
  auto r = find(kind, canonical_fqn);
  if (!r) return r.error();
  return *r ? std::optional<Uuid>((*r)->id) : std::nullopt;
}

namespace {

// References gathered in edge order, and the order they are shown in.
template <class Ref>
struct Gathered {
  std::vector<Ref> refs;
  std::vector<std::size_t> order;  // indexes into refs, by name, then id
};

// The reference of every edge's other end as `from_scan` builds it from the fields
// scan_reference read, or `from_record` from the decoded record when the scan gave up, and
// their order by name (`name_of`), then id. Each reference is read from the stored record
// without decoding it, and sorted by keys taken out once, so a reference costs neither the
// decode of a whole record nor a JSON object lookup per comparison.
template <class Ref, class FromScan, class FromRecord, class NameOf>
Result<Gathered<Ref>> gather_references(Tx& tx, const std::vector<Edge>& edges, FromScan from_scan,
                                        FromRecord from_record, NameOf name_of) {
  Gathered<Ref> out;
  auto& refs = out.refs;
  refs.reserve(edges.size());
  std::vector<Uuid> ids;
  ids.reserve(edges.size());
  // Edges come in the order of the other end's id, which is the order of its record's key: read
  // in one pass, each record is a search of one leaf page instead of a descent of the tree
  // (LMDB; PostgreSQL reads them in batches). The keys are made a batch at a time: memory a call
  // holds is memory it maps and faults in.
  StoredReference scanned;
  const auto add = [&](std::size_t, std::optional<std::string_view> bytes) -> Result<void> {
    if (!bytes) return {};
    if (scan_reference(*bytes, scanned)) {
      ids.push_back(scanned.id);
      refs.push_back(from_scan(scanned));
      return {};
    }
    auto r = decode(*bytes);
    if (!r) return r.error();
    ids.push_back(r->id);
    refs.push_back(from_record(*r));
    return {};
  };
  for (std::size_t at = 0; at < edges.size(); at += Tx::read_batch) {
    const auto id_of = [&](std::size_t i) -> const Uuid& { return edges[at + i].other; };
    if (auto r = tx.read_records(std::min(Tx::read_batch, edges.size() - at), id_of, add); !r)
      return r.error();
  }
  std::vector<HeadKey> sorted(refs.size());
  for (std::size_t i = 0; i < refs.size(); ++i) sorted[i] = HeadKey{name_head(name_of(refs[i])), i};
  sort_references(sorted, [&](const HeadKey& a, const HeadKey& b) {
    if (int c = name_of(refs[a.index]).compare(name_of(refs[b.index])); c != 0) return c < 0;
    return std::memcmp(ids[a.index].data, ids[b.index].data, 16) < 0;
  });
  out.order.reserve(sorted.size());
  for (const auto& k : sorted) out.order.push_back(k.index);
  return out;
}

}  // namespace

Result<json::array> references(Tx& tx, const std::vector<Edge>& edges) {
  auto g = gather_references<json::object>(
      tx, edges, [](const StoredReference& s) { return s.to_json(); },
      [](const Record& r) { return reference(r); },
      [](const json::object& o) { return std::string_view(o.at(wire::name()).get_string()); });
  if (!g) return g.error();
  json::array out;
  out.reserve(g->order.size());
  for (auto i : g->order) out.emplace_back(std::move(g->refs[i]));
  return out;
}

Result<std::vector<EntityReference>> typed_references(Tx& tx, const std::vector<Edge>& edges) {
  auto g = gather_references<EntityReference>(
      tx, edges, [](const StoredReference& s) { return s.typed(); },
      [](const Record& r) { return entity_reference(r); },
      [](const EntityReference& ref) { return std::string_view(*ref.name); });
  if (!g) return g.error();
  reorder(g->refs, g->order);
  return std::move(g->refs);
}

Result<std::pair<json::array, std::vector<EntityReference>>>
both_references(Tx& tx, const std::vector<Edge>& edges) {
  using Both = std::pair<json::object, EntityReference>;
  auto g = gather_references<Both>(
      tx, edges, [](const StoredReference& s) { return Both(s.to_json(), s.typed()); },
      [](const Record& r) { return Both(reference(r), entity_reference(r)); },
      [](const Both& ref) { return std::string_view(*ref.second.name); });
  if (!g) return g.error();
  std::pair<json::array, std::vector<EntityReference>> out;
  out.first.reserve(g->order.size());
  out.second.reserve(g->order.size());
  for (auto i : g->order) {
    out.first.emplace_back(std::move(g->refs[i].first));
    out.second.push_back(std::move(g->refs[i].second));
  }
  return out;
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_REFERENCES_IPP
