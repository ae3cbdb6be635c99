#ifndef CATALOG_IMPL_ADMIN_DUMP_IPP
#define CATALOG_IMPL_ADMIN_DUMP_IPP

// Export and import in the JSON-lines format of docs/EXPORT_FORMAT.md.
//
// Export reads one snapshot with three cursors walked side by side (a merge join on the entity
// id, which leads the keys of records, history and reverse edges alike): each entity's record,
// then its snapshots, then the edges into it, so every family is read once, in order, with no
// seek per entity. Import reads the same order back and writes each record as the engine writes
// it, rebuilding the indexes through the engine's own Tx (names, list entries and counters,
// both directions of each edge), in one write transaction.

#include <catalog/detail/admin/common.hpp>
#include <catalog/detail/store/in_transaction.hpp>

#include <catalog/detail/engine/validate.hpp>
#include <catalog/detail/engine/verify.hpp>
#include <catalog/detail/search/index.hpp>

#include <catalog/change_event.hpp>
#include <catalog/fqn.hpp>
#include <catalog/detail/json_mapping.hpp>
#include <catalog/json.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <istream>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog::admin {

namespace {

namespace bj = boost::json;
namespace keys = engine::keys;
using engine::parse_stored;
using engine::Rel;

constexpr std::string_view format_name = "catalog-export";
constexpr std::size_t id_size = 16;
// Tag and id: the prefix every record, snapshot and reverse-edge key starts with.
constexpr std::size_t id_prefix_size = 1 + id_size;

std::string id_text(std::string_view bytes) { return to_string(keys::id_from_bytes(bytes)); }

// ---- export ----

class LineWriter {
 public:
  explicit LineWriter(std::ostream& out) : out_(out) {}

  Result<void> write(const bj::value& line) {
    text_ = catalog::json::serialize(line);
    text_ += '\n';
    out_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    if (!out_)
      return fail(Errc::storage, "cannot write the export: the output failed after " +
                                     std::to_string(bytes_) + " bytes");
    bytes_ += text_.size();
    return {};
  }
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::ostream& out_;
  std::string text_;
  std::uint64_t bytes_ = 0;
};

Error corrupt(std::string_view key, std::string_view what) {
  return fail(Errc::storage, std::string(what) + " at key " + keys::printable(key) +
                                 " does not decode (catalog-admin verify names the problem)");
}

// {"entity":{"type","container"?,"glossary"?,"deletedBy"?,"doc"}} from a stored record.
Result<bj::value> entity_line(std::string_view key, std::string_view bytes) {
  auto parsed = parse_stored(bytes);
  if (!parsed || !parsed->is_object()) return corrupt(key, "entity record");
  auto& record = parsed->get_object();
  const auto* kind = record.if_contains("k");
  auto* doc = record.if_contains("doc");
  if (!kind || !kind->is_string() || !kind_from_type(kind->get_string()) || !doc ||
      !doc->is_object())
    return corrupt(key, "entity record");
  const auto* id = doc->get_object().if_contains("id");
  const auto key_id = keys::decode_entity(key);
  if (!id || !id->is_string() || !key_id || id->get_string() != to_string(*key_id))
    return corrupt(key, "entity record (its id)");
  bj::value line(bj::object_kind);
  auto& entity = line.get_object()["entity"].emplace_object();
  entity["type"] = *kind;
  for (auto [member, name] : {std::pair{"c", "container"}, {"g", "glossary"}, {"d", "deletedBy"}})
    if (const auto* v = record.if_contains(member)) entity[name] = *v;
  entity["doc"] = std::move(*doc);
  return line;
}

// {"snapshot":{"id","version","doc"}} from a history key (H id version) and its value.
Result<bj::value> snapshot_line(const keys::HistoryKey& key, std::string_view key_bytes,
                                std::string_view bytes) {
  auto parsed = parse_stored(bytes);
  if (!parsed || !parsed->is_object()) return corrupt(key_bytes, "snapshot");
  bj::value line(bj::object_kind);
  auto& snapshot = line.get_object()["snapshot"].emplace_object();
  snapshot["id"] = to_string(key.id);
  snapshot["version"] = catalog::detail::to_json(key.version);
  snapshot["doc"] = std::move(*parsed);
  return line;
}

// {"edge":{"from","relation","to","data"?}} from a reverse edge key (Q to rel from) and its data;
// null for a key that is not one (skipped).
std::optional<bj::value> edge_line(std::string_view key, std::string_view data) {
  const auto decoded = keys::decode_reverse_edge(key);
  if (!decoded) return std::nullopt;
  const auto relation = detail::relation_name(static_cast<char>(decoded->rel));
  if (relation.empty()) return std::nullopt;
  bj::value line(bj::object_kind);
  auto& edge = line.get_object()["edge"].emplace_object();
  edge["from"] = to_string(decoded->from);
  edge["relation"] = relation;
  edge["to"] = to_string(decoded->to);
  if (!data.empty()) edge["data"] = data;
  return line;
}

// Moves `cursor` past the keys whose id (after the tag) sorts before `id`, counting them as
// skipped (they belong to no entity), and calls `emit` for each key of `id` itself.
template <class Emit>
Result<void> merge(storage::Cursor& cursor, std::string_view id, std::uint64_t& skipped,
                   Emit&& emit) {
  while (cursor.valid()) {
    const auto key = cursor.key();
    const auto key_id = key.substr(1, id_size);
    const int order = key.size() < id_prefix_size ? -1 : key_id.compare(id);
    if (order > 0) return {};
    if (order < 0) {
      ++skipped;
    } else if (auto e = emit(key, cursor.value()); !e) {
      return e.error();
    }
    if (auto n = cursor.next(); !n) return n.error();
  }
  return {};
}

// How many lines the export will write, for the progress estimate: entities from the counters,
// events from the last offset.
Result<std::uint64_t> expected_lines(engine::Tx& tx, storage::Transaction& raw) {
  std::uint64_t expected = 0;
  for (Kind kind : all_kinds)
    for (bool deleted : {false, true}) {
      auto n = tx.count(kind, deleted, keys::all_scope);
      if (!n) return n.error();
      expected += static_cast<std::uint64_t>(std::max<std::int64_t>(0, *n));
    }
  auto last_event = raw.get(keys::meta("event_offset"));
  if (!last_event) return last_event.error();
  if (*last_event && (*last_event)->size() == 8) expected += keys::decode_u64(**last_event);
  return expected;
}

// Writes the sections of one export in order (header, entities with their snapshots and edges,
// events, end), counting what it writes in `info`.
class Exporter {
 public:
  Exporter(storage::Transaction& raw, std::ostream& out, detail::Reporter& reporter)
      : raw_(raw), writer_(out), reporter_(reporter) {}

  Result<void> header() {
    bj::value line(bj::object_kind);
    line.get_object()["format"] = format_name;
    line.get_object()["version"] = export_format_version;
    return writer_.write(line);
  }

  // Every entity with its snapshots and the edges into it: the three families are walked side
  // by side (the merge join above); keys that belong to no entity are counted as skipped.
  Result<void> entities() {
    auto records = scan("E");
    if (!records) return records.error();
    auto history = scan("H");
    if (!history) return history.error();
    auto edges = scan("Q");
    if (!edges) return edges.error();
    for (auto& e = **records; e.valid();) {
      if (!keys::decode_entity(e.key())) {
        ++info_.skipped_keys;
      } else if (auto w = entity(e.key(), e.value(), **history, **edges); !w) {
        return w.error();
      }
      if (auto n = e.next(); !n) return n.error();
    }
    // What is left belongs to ids after the last entity.
    for (auto* rest : {history->get(), edges->get()})
      for (; rest->valid(); ++info_.skipped_keys)
        if (auto n = rest->next(); !n) return n.error();
    return {};
  }

  // The change events, in offset order.
  Result<void> events() {
    auto log = scan("V");
    if (!log) return log.error();
    for (auto& c = **log; c.valid();) {
      const auto key = c.key();
      auto parsed = parse_stored(c.value());
      if (!keys::decode_event(key) || !parsed || !parsed->is_object()) return corrupt(key, "event");
      bj::value line(bj::object_kind);
      line.get_object()["event"] = std::move(*parsed);
      if (auto w = writer_.write(line); !w) return w.error();
      ++info_.counts.events;
      ++reporter_.progress().done;
      reporter_.step();
      if (auto n = c.next(); !n) return n.error();
    }
    return {};
  }

  // The end line with the totals; what the export wrote.
  Result<ExportInfo> end() {
    const auto& counts = info_.counts;
    bj::value line(bj::object_kind);
    auto& totals = line.get_object()["end"].emplace_object();
    totals["entities"] = counts.entities;
    totals["snapshots"] = counts.snapshots;
    totals["edges"] = counts.edges;
    totals["events"] = counts.events;
    if (auto w = writer_.write(line); !w) return w.error();
    info_.bytes = writer_.bytes();
    return info_;
  }

 private:
  Result<std::unique_ptr<storage::Cursor>> scan(std::string_view tag) {
    return raw_.scan(storage::prefix_range(tag), storage::Direction::forward);
  }

  // One entity's line, then the lines of its snapshots and of the edges into it.
  Result<void> entity(std::string_view key, std::string_view value, storage::Cursor& history,
                      storage::Cursor& edges) {
    auto line = entity_line(key, value);
    if (!line) return line.error();
    if (auto w = writer_.write(*line); !w) return w.error();
    auto& counts = info_.counts;
    ++counts.entities;
    const auto id = key.substr(1);
    auto snapshot = [&](std::string_view k, std::string_view v) -> Result<void> {
      const auto decoded = keys::decode_history(k);
      if (!decoded) {
        ++info_.skipped_keys;
        return {};
      }
      auto line = snapshot_line(*decoded, k, v);
      if (!line) return line.error();
      ++counts.snapshots;
      return writer_.write(*line);
    };
    if (auto m = merge(history, id, info_.skipped_keys, snapshot); !m) return m.error();
    auto edge = [&](std::string_view k, std::string_view v) -> Result<void> {
      auto line = edge_line(k, v);
      if (!line) {
        ++info_.skipped_keys;
        return {};
      }
      ++counts.edges;
      return writer_.write(*line);
    };
    if (auto m = merge(edges, id, info_.skipped_keys, edge); !m) return m.error();
    reporter_.progress().entities = counts.entities;
    ++reporter_.progress().done;
    reporter_.step();
    return {};
  }

  storage::Transaction& raw_;
  LineWriter writer_;
  detail::Reporter& reporter_;
  ExportInfo info_;
};

}  // namespace

Result<ExportInfo> export_store(Store& store, std::ostream& out, const ProgressFn& progress) {
  if (catalog::detail::in_transaction) return catalog::detail::nested_transaction();
  catalog::detail::InTransaction inside;  // the progress callback runs in the transaction
  auto txn = store.backend().begin(storage::Mode::read_only);
  if (!txn) return txn.error();
  auto& raw = **txn;
  const engine::Env env{detail::plain_options(), 0};
  engine::Tx tx(raw, env);
  detail::Reporter reporter(progress, "export");
  auto expected = expected_lines(tx, raw);
  if (!expected) return expected.error();
  reporter.progress().total = *expected;
  Exporter exporter(raw, out, reporter);
  if (auto h = exporter.header(); !h) return h.error();
  if (auto e = exporter.entities(); !e) return e.error();
  if (auto e = exporter.events(); !e) return e.error();
  auto info = exporter.end();
  if (!info) return info.error();
  out.flush();
  if (!out) return fail(Errc::storage, "cannot write the export: the output failed at the end");
  reporter.finish();
  return info;
}

namespace {

// ---- import ----

// The bytes of a line that spans blocks of the input, in one anonymous mapping of the line limit
// made at the first such line: the system backs its pages only as the line fills them, so a line
// costs what it holds and is never copied to grow (a doubling string held up to twice the limit
// for a line over it).
class LineBuffer {
 public:
  explicit LineBuffer(std::size_t max) : max_(max) {}
  ~LineBuffer() {
    if (data_ != nullptr) ::munmap(data_, max_);
  }
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;

  // REQUIRES: size() + n <= the limit. Where no mapping of the limit can be had (a limit past
  // the address space, memory overcommit disabled), the bytes go into a string instead.
  void append(const char* bytes, std::size_t n) {
    if (n == 0) return;
    if (data_ == nullptr && !unmappable_) {
      void* map = ::mmap(nullptr, max_, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (map == MAP_FAILED)
        unmappable_ = true;
      else
        data_ = static_cast<char*>(map);
    }
    if (data_ == nullptr) {
      fallback_.append(bytes, n);
      return;
    }
    std::memcpy(data_ + size_, bytes, n);
    size_ += n;
  }
  void clear() noexcept {
    size_ = 0;
    fallback_.clear();
  }
  bool empty() const noexcept { return size() == 0; }
  std::size_t size() const noexcept { return data_ == nullptr ? fallback_.size() : size_; }
  std::string_view view() const noexcept {
    return data_ == nullptr ? std::string_view(fallback_) : std::string_view(data_, size_);
  }

 private:
  std::size_t max_;
  char* data_ = nullptr;
  std::size_t size_ = 0;
  bool unmappable_ = false;
  std::string fallback_;
};

// The lines of a stream, each at most `max` bytes, read in large blocks.
class LineReader {
 public:
  LineReader(std::istream& in, std::size_t max)
      : in_(in), max_(max), buffer_(1 << 20), line_(max) {}

  // The next line without its newline (a last line may lack one), or nullopt at the end.
  // Errors: invalid_request (too long), storage (the stream failed).
  Result<std::optional<std::string_view>> next() {
    line_.clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_) {
        if (auto f = fill(); !f) return f.error();
        if (end_ == 0) {
          if (!any) return std::optional<std::string_view>();
          ++number_;
          unterminated_ = true;
          return std::optional<std::string_view>(line_.view());
        }
      }
      const char* from = buffer_.data() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_));
      const std::size_t n = nl ? static_cast<std::size_t>(nl - from) : end_ - pos_;
      if (line_.size() + n > max_)
        return fail(Errc::invalid_request, "line " + std::to_string(number_ + 1) +
                                               ": longer than " + std::to_string(max_) + " bytes");
      any = true;
      pos_ += n + (nl ? 1 : 0);
      bytes_ += n + (nl ? 1 : 0);
      if (nl && line_.empty()) {
        ++number_;
        return std::optional<std::string_view>(std::string_view(from, n));  // no copy
      }
      line_.append(from, n);
      if (nl) {
        ++number_;
        return std::optional<std::string_view>(line_.view());
      }
    }
  }

  std::uint64_t number() const noexcept { return number_; }
  std::uint64_t bytes() const noexcept { return bytes_; }
  // Whether the last line read ended at the end of the input, without a newline.
  bool unterminated() const noexcept { return unterminated_; }

 private:
  Result<void> fill() {
    pos_ = end_ = 0;
    if (done_) return {};
    in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    end_ = static_cast<std::size_t>(in_.gcount());
    if (in_.bad()) return fail(Errc::storage, "cannot read the input");
    if (!in_) done_ = true;  // end of input (eof and fail set by a short read)
    return {};
  }

  std::istream& in_;
  std::size_t max_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0, end_ = 0;
  bool done_ = false;
  LineBuffer line_;
  std::uint64_t number_ = 0;
  std::uint64_t bytes_ = 0;
  bool unterminated_ = false;
};

// Reads the lines of an export into a transaction, checking each against the format and the
// ones before it. Every error names its line.
class Importer {
 public:
  explicit Importer(engine::Tx& tx) : tx_(tx), txn_(tx.raw()) {}

  Result<void> take(std::string_view text, std::uint64_t number) {
    line_ = number;
    auto taken = take_line(text);
    if (!taken) {
      const auto& e = taken.error();
      return Error(e.code(), "line " + std::to_string(number) + ": " + e.message());
    }
    return {};
  }

  // At the end of the input, after `lines` lines.
  Result<void> finish(std::uint64_t lines) {
    if (section_ == Section::end) return {};
    if (lines == 0) return fail(Errc::invalid_request, "the input is empty: not a catalog export");
    return fail(Errc::invalid_request, "the input ends after line " + std::to_string(lines) +
                                           " without the end line: it is truncated");
  }

  const DumpCounts& counts() const noexcept { return counts_; }
  // About the keys written, for the estimate of the check.
  std::uint64_t keys() const noexcept { return keys_; }

 private:
  enum class Section { header, entities, events, end };

  static Error bad(std::string message) { return fail(Errc::invalid_request, std::move(message)); }

  Result<void> take_line(std::string_view text) {
    if (section_ == Section::end) return bad("nothing may follow the end line");
    if (text.empty()) return bad("an empty line");
    if (text.back() == '\r') return bad("ends with a carriage return: lines end with \\n alone");
    auto parsed = catalog::json::parse(text, {catalog::json::max_parse_depth});
    if (!parsed) return bad("not JSON: " + parsed.error().message());
    // Export writes each line one way (compact, members in order, numbers as the catalog
    // writes them), so that an export of the imported store is the same bytes: another
    // spelling of the same value (1e-1 for 0.1, spaces, escapes) would not be.
    if (catalog::json::serialize(*parsed) != text)
      return bad("not written as export writes it: compact JSON, numbers as plain decimals "
                 "(0.1, not 1e-1), strings with no needless escapes");
    if (section_ == Section::header) return header(*parsed);
    auto* line = parsed->if_object();
    if (!line || line->size() != 1)
      return bad("expected an object with one member (entity, snapshot, edge, event or end)");
    auto& member = *line->begin();
    const std::string_view type = member.key();
    auto& body = member.value();
    if (type == "event") return event(body);
    if (type == "end") return end(body);
    if (section_ == Section::events)
      return bad("a line of type " + std::string(type) +
                 " after the events (only events and the end "
                 "line follow the first event)");
    auto* object = body.if_object();
    if (!object) return bad("the " + std::string(type) + " is not an object");
    if (type == "entity") return entity(*object);
    if (type == "snapshot") return snapshot(*object);
    if (type == "edge") return edge(*object);
    return bad("unknown line type " + std::string(type));
  }

  Result<void> header(const bj::value& v) {
    const auto* o = v.if_object();
    const auto* format = o ? o->if_contains("format") : nullptr;
    if (!format || !format->is_string() || format->get_string() != format_name)
      return bad(
          R"(not a catalog export: the first line must be {"format":"catalog-export","version":N})");
    const auto* version = o->if_contains("version");
    if (!version || !version->is_int64() || version->get_int64() < 1 || o->size() != 2)
      return bad(R"(the format line must be {"format":"catalog-export","version":N}, N from 1)");
    if (o->begin()->key() != "format")
      return bad(R"(the format line must be {"format":"catalog-export","version":N}, in that order)");
    if (version->get_int64() > export_format_version)
      return fail(Errc::invalid_value, "format version " + std::to_string(version->get_int64()) +
                                           " is newer than this library reads (" +
                                           std::to_string(export_format_version) + ")");
    section_ = Section::entities;
    return {};
  }

  // The S15 limits of a create or patch on a stored document: its members but the change
  // description, which holds the old value of each changed field beside the new one.
  static Result<void> document_limits(const bj::object& doc, const StoreOptions& options) {
    const auto max_bytes = options.max_document_bytes;
    std::size_t bytes = 2, depth = 1;  // the braces
    bool first = true;
    for (const auto& m : doc) {
      if (m.key() == "changeDescription") continue;
      const auto extent = catalog::json::measure(m.value(), max_bytes);
      const auto name = catalog::json::measure(bj::value(m.key()), max_bytes);
      bytes += (first ? 0 : 1) + name.bytes + 1 + extent.bytes;  // comma, "name", colon, value
      depth = std::max(depth, 1 + extent.depth);
      first = false;
    }
    if (bytes > max_bytes)
      return fail(Errc::too_large, "the doc is larger than " + std::to_string(max_bytes) + " bytes");
    if (depth > catalog::json::max_document_depth)
      return fail(Errc::too_deep, "the doc nests deeper than " +
                                      std::to_string(catalog::json::max_document_depth));
    return {};
  }

  // Checks that `o` has no members but `allowed`.
  static Result<void> only(const bj::object& o, std::string_view what,
                           std::initializer_list<std::string_view> allowed) {
    for (const auto& m : o)
      if (std::find(allowed.begin(), allowed.end(), m.key()) == allowed.end())
        return bad("unknown member " + std::string(m.key()) + " in " + std::string(what));
    return {};
  }

  // Checks that the members of `o` come in the order of `order` (export's; some may be absent).
  static Result<void> in_order(const bj::object& o, std::string_view what,
                               std::initializer_list<std::string_view> order) {
    auto next = order.begin();
    for (const auto& m : o) {
      while (next != order.end() && *next != m.key()) ++next;
      if (next == order.end())
        return bad("the members of " + std::string(what) + " are not in export's order (" +
                   [&] {
                     std::string names;
                     for (auto n : order) names += (names.empty() ? "" : ", ") + std::string(n);
                     return names;
                   }() +
                   ")");
      ++next;
    }
    return {};
  }

  // What every doc of an entity line or snapshot line holds as the catalog writes it, beyond
  // its kind's members: a changeDescription exactly after version 0.1, naming an earlier
  // version, nested no deeper than the values it records. (Its bytes are not bounded here: it
  // records rendered references, which no document limit bounds; the line limit does.)
  static Result<void> doc_rules(const bj::object& doc, Version version) {
    const auto* change = doc.if_contains("changeDescription");
    if ((change != nullptr) != (version > Version::initial()))
      return bad(change ? "the doc has a changeDescription at version 0.1"
                        : "the doc at version " + version.to_string() +
                              " has no changeDescription (every version after 0.1 has one)");
    if (!change) return {};
    const auto* o = change->if_object();
    const auto* previous = o ? o->if_contains("previousVersion") : nullptr;
    Version before;
    if (!previous || !catalog::detail::from_json(*previous, before, "previousVersion") ||
        catalog::json::serialize(*previous) != before.to_string() || !(before < version))
      return bad("the doc's changeDescription.previousVersion is not a version before " +
                 version.to_string());
    const auto extent = catalog::json::measure(*change, std::numeric_limits<std::size_t>::max());
    if (extent.depth > catalog::json::max_document_depth + 3)
      return bad("the doc's changeDescription nests deeper than its values can");
    return {};
  }

  // The members every doc has, whatever wrote it: the kind's required ones (a user's email, a
  // model's algorithm) and each entity's own fields (id, name and FQN, version, updatedAt,
  // updatedBy, deleted), which no patch changes. (Members the API writes with their defaults,
  // a user's isAdmin, and optional members written as null are taken: builds before 0.1.0
  // removed the one and wrote the other on patches, the engine still serves such records, and
  // an export of any store it opens imports. docs/COMPATIBILITY.md.)
  static Result<void> presence(const engine::Record& r, const bj::object& doc) {
    for (auto name : info(r.kind).required)
      if (!doc.contains(name))
        return bad("the doc has no " + std::string(name) + " (every " +
                   std::string(type_name(r.kind)) + " has one)");
    const auto fields = r.fields();
    for (std::size_t p = 0; p < engine_base_members; ++p)
      if (!fields[p].ops->optional && !engine::rendered_only(r.kind, fields[p].name) &&
          !doc.contains(fields[p].name))
        return bad("the doc has no " + std::string(fields[p].name) + " (every entity has one)");
    return {};
  }
  static constexpr std::size_t engine_base_members =
      engine::record_detail::member_count<EntityBase>;

  // A doc's own members (an entity's, or a snapshot's without what the history API renders:
  // relationships, votes, containers), read into `r`, by the rules the API writes them by: the
  // document limits, presence, and the values its rules allow. A version the API wrote may pass
  // the document limit by its stamps (a soft delete or restore, which add nothing else, by a
  // user with a longer name than the last patch's), so it is measured with room for them.
  Result<void> own_rules(const engine::Record& r, const bj::object& doc) const {
    auto options = tx_.env().options;
    options.max_document_bytes += stamp_room;
    if (auto l = document_limits(doc, options); !l) return bad(l.error().message());
    if (auto p = presence(r, doc); !p) return p.error();
    if (auto v = engine::check_entity_values(r); !v) return bad(v.error().message());
    if (auto v = engine::check_stored_tags(r); !v) return bad(v.error().message());
    return {};
  }

  // An id written as export writes them: lowercase 8-4-4-4-12.
  static Result<Uuid> id_member(const bj::object& o, std::string_view name, std::string_view what) {
    const auto* v = o.if_contains(name);
    if (!v) return bad(std::string(what) + " has no " + std::string(name));
    auto id = v->is_string() ? parse_uuid(v->get_string()) : Result<Uuid>(Error());
    if (!id || to_string(*id) != v->get_string())
      return bad(std::string(name) + " of " + std::string(what) +
                 " is not an id (8-4-4-4-12 lowercase hex)");
    return *id;
  }

  static Result<Version> version_member(const bj::object& o, std::string_view what) {
    const auto* v = o.if_contains("version");
    Version version;
    if (!v || !catalog::detail::from_json(*v, version, "version") ||
        catalog::json::serialize(*v) != version.to_string())
      return bad(std::string(what) + " has no valid version (a plain decimal with one digit "
                                     "after the point, as 0.1 or 1.2)");
    return version;
  }

  // The entity whose lines are being read closes: its history ended at its version.
  Result<void> close_entity() {
    if (!current_) return {};
    const Version version = current_->version();
    if (last_snapshot_ != version)
      return bad("the entity of line " + std::to_string(entity_line_) + " is at version " +
                 version.to_string() + " but its snapshots " +
                 (last_snapshot_ ? "end at " + last_snapshot_->to_string() : "are missing") +
                 " (each version has a snapshot, the current one last)");
    current_.reset();
    return {};
  }

  // An entity line: the entity before it closes, this one is read and written.
  Result<void> entity(bj::object& o) {
    if (auto c = close_entity(); !c) return c.error();
    auto r = entity_record(o);
    if (!r) return r.error();
    // What create and patch refuse is refused here too: a document past the docs/SEMANTICS.md §15
    // limits, and values the docs/SEMANTICS.md §2 rules do not allow.
    const auto& doc = o.at("doc").get_object();
    if (auto c = own_rules(*r, doc); !c) return c.error();
    if (auto d = doc_rules(doc, r->version()); !d) return d.error();
    if (r->fqn().size() > catalog::fqn::max_fqn_bytes)
      return bad("the FQN is longer than " + std::to_string(catalog::fqn::max_fqn_bytes) + " bytes");
    if (r->deleted_by > max_deleted_by_) {
      max_deleted_by_ = r->deleted_by;
      max_deleted_by_line_ = line_;
    }
    if (auto s = store_entity(std::move(*r)); !s) return s.error();
    current_doc_ = doc;  // for the snapshot of its current version
    return {};
  }

  // The record an entity line holds, checked alone: its members, type, container ids,
  // deletion offset and the doc's identity and deleted flag.
  static Result<engine::Record> entity_record(bj::object& o) {
    if (auto c = only(o, "an entity", {"type", "container", "glossary", "deletedBy", "doc"}); !c)
      return c.error();
    if (auto c = in_order(o, "an entity", {"type", "container", "glossary", "deletedBy", "doc"}); !c)
      return c.error();
    const auto* type = o.if_contains("type");
    auto kind = type && type->is_string() ? kind_from_type(type->get_string()) : std::nullopt;
    if (!kind) return bad("the entity has no known type");
    if (o.contains("glossary") && *kind != Kind::glossary_term)
      return bad("a glossary member on a " + std::string(type_name(*kind)) +
                 " (only glossary terms have one)");
    std::optional<Uuid> container, glossary;
    for (auto [name, field] : {std::pair{"container", &container}, {"glossary", &glossary}}) {
      if (!o.contains(name)) continue;
      auto id = id_member(o, name, "the entity");
      if (!id) return id.error();
      *field = *id;
    }
    std::uint64_t deleted_by = 0;
    if (const auto* d = o.if_contains("deletedBy")) {
      if (d->is_int64() && d->get_int64() > 0)
        deleted_by = static_cast<std::uint64_t>(d->get_int64());
      else if (d->is_uint64())
        deleted_by = d->get_uint64();
      else
        return bad("deletedBy is not an event offset (a positive integer)");
    }
    auto* doc_value = o.if_contains("doc");
    if (!doc_value || !doc_value->is_object()) return bad("the entity has no doc object");
    const auto& doc = doc_value->get_object();
    auto id = id_member(doc, "id", "the doc");
    if (!id) return id.error();
    for (const char* member : {"name", "fullyQualifiedName"})
      if (const auto* v = doc.if_contains(member); !v || !v->is_string())
        return bad("the doc has no " + std::string(member));
    if (auto v = version_member(doc, "the doc"); !v) return v.error();
    const auto* deleted = doc.if_contains("deleted");
    if (!deleted || !deleted->is_bool()) return bad("the doc has no deleted flag");
    auto r = engine::record_from_document(*kind, doc, "the doc is not a " +
                                                          std::string(type_name(*kind)));
    if (!r) return bad(r.error().message());
    r->container = container;
    r->glossary = glossary;
    r->deleted_by = deleted_by;
    if (deleted->get_bool() != (r->deleted_by != 0))
      return bad(r->deleted_by ? "a live entity with deletedBy"
                              : "a soft-deleted entity without deletedBy (the offset of the "
                                "event that deleted it)");
    return r;
  }

  // Writes an entity read from its line, with its name and list entries, once it is known to
  // come after the entity before it and to have an FQN of its own; it becomes the current one.
  Result<void> store_entity(engine::Record r) {
    const auto id_bytes = keys::id_bytes(r.id);
    if (!last_entity_.empty() && id_bytes <= last_entity_)
      return bad("entity " + to_string(r.id) +
                 " is not after the entity before it (entities "
                 "come in increasing id order, each once)");
    auto named = txn_.get(keys::name(r.kind, r.fqn()));
    if (!named) return named.error();
    if (*named)
      return bad(std::string(type_name(r.kind)) + " " + std::string(r.fqn()) +
                 " has the FQN of an entity before it (" +
                 ((*named)->size() == id_size ? id_text(**named) : "?") + ")");
    if (auto p = tx_.put(r); !p) return p.error();
    if (auto p = tx_.put_name(r); !p) return p.error();
    if (auto p = tx_.index(r, true); !p) return p.error();
    keys_ += r.scope() ? 4 : 3;
    last_entity_ = id_bytes;
    entity_line_ = line_;
    last_snapshot_.reset();
    last_edge_.clear();
    current_ = std::move(r);
    ++counts_.entities;
    return {};
  }

  // The entity a snapshot or edge line belongs to: the one just read.
  Result<void> of_current(const Uuid& id, std::string_view what) {
    if (!current_ || current_->id != id)
      return bad(std::string(what) + " of " + to_string(id) +
                 " is not among the lines of its entity (they follow the entity line)");
    return {};
  }

  Result<void> snapshot(bj::object& o) {
    if (auto c = only(o, "a snapshot", {"id", "version", "doc"}); !c) return c.error();
    if (auto c = in_order(o, "a snapshot", {"id", "version", "doc"}); !c) return c.error();
    auto id = id_member(o, "id", "the snapshot");
    if (!id) return id.error();
    if (auto c = of_current(*id, "a snapshot"); !c) return c.error();
    auto version = version_member(o, "the snapshot");
    if (!version) return version.error();
    if (!last_edge_.empty())
      return bad("a snapshot after an edge into its entity (an entity's snapshots come before "
                 "its edges)");
    if (last_snapshot_ && *version <= *last_snapshot_)
      return bad("snapshot " + version->to_string() + " is not after snapshot " +
                 last_snapshot_->to_string() + " (snapshots come in version order)");
    if (*version > current_->version())
      return bad("snapshot " + version->to_string() + " is newer than its entity's version " +
                 current_->version().to_string());
    const auto* doc = o.if_contains("doc");
    if (!doc || !doc->is_object()) return bad("the snapshot has no doc object");
    if (auto c = snapshot_doc(doc->get_object(), *version); !c) return c.error();
    // docs/SEMANTICS.md §3: each version 1.0 after the one before when a major field changed
    // (an ML model's algorithm, server or target), else one tenth; its changeDescription names
    // the one before.
    auto major = engine::major_values(current_->kind, doc->get_object());
    if (last_snapshot_) {
      const auto step = major != last_major_ ? 10u : 1u;
      if (version->tenths() != last_snapshot_->tenths() + step)
        return bad("snapshot " + version->to_string() + " follows snapshot " +
                   last_snapshot_->to_string() +
                   (step == 10 ? " but changes a major field (which adds 1.0)"
                               : " (a change adds 0.1, a major change of an ML model 1.0)"));
      const auto& previous =
          doc->get_object().at("changeDescription").get_object().at("previousVersion");
      if (catalog::json::serialize(previous) != last_snapshot_->to_string())
        return bad("the changeDescription of snapshot " + version->to_string() +
                   " names previousVersion " + catalog::json::serialize(previous) + ", not " +
                   last_snapshot_->to_string());
    }
    if (auto p = txn_.put(keys::history(*id, *version), catalog::json::serialize(*doc)); !p)
      return p.error();
    ++keys_;
    last_snapshot_ = *version;
    last_major_ = std::move(major);
    ++counts_.snapshots;
    return {};
  }

  // How far past the document limit a doc may go (own_rules): a user name of up to 400 bytes,
  // escaped, with the deleted flag's.
  static constexpr std::size_t stamp_room = 4096;

  // A snapshot's doc is the entity as the history API returned it at that version: its id,
  // version, name and FQN, the rules of every doc, an entity's nesting, and at the entity's
  // current version every member of the entity line's doc as it is there.
  Result<void> snapshot_doc(const bj::object& doc, Version version) {
    auto id = id_member(doc, "id", "the snapshot's doc");
    if (!id) return id.error();
    if (*id != current_->id) return bad("the snapshot's doc is of another entity");
    auto at = version_member(doc, "the snapshot's doc");
    if (!at) return at.error();
    if (*at != version) return bad("the snapshot's doc is at version " + at->to_string());
    const auto* name = doc.if_contains("name");
    if (!name || !name->is_string() || !catalog::fqn::validate_name(name->get_string()))
      return bad("the snapshot's doc has no valid name");
    const auto* fqn_value = doc.if_contains("fullyQualifiedName");
    if (!fqn_value || !fqn_value->is_string() ||
        fqn_value->get_string().size() > catalog::fqn::max_fqn_bytes)
      return bad("the snapshot's doc has no valid fullyQualifiedName");
    if (auto d = doc_rules(doc, version); !d) return d.error();
    // Its own members were written by the same rules as the entity's: every version of an
    // entity is one the API could have written.
    bj::object own;
    for (const auto& m : doc)
      if (!engine::rendered_only(current_->kind, m.key())) own.emplace(m.key(), m.value());
    auto r = engine::record_from_document(current_->kind, own,
                                          "the snapshot's doc is not a " +
                                              std::string(type_name(current_->kind)));
    if (!r) return bad(r.error().message());
    if (auto c = own_rules(*r, own); !c) return c.error();
    // As deep as an entity's own members and its references; its bytes are bounded by the
    // line limit alone (followers, users and their displayNames have no other).
    for (const auto& m : doc)
      if (catalog::json::measure(m.value(), std::numeric_limits<std::size_t>::max()).depth >
          catalog::json::max_document_depth + 2)
        return bad("the snapshot's doc nests deeper than an entity's members can");
    if (version == current_->version()) {
      for (const auto& m : current_doc_) {
        const auto* same = doc.if_contains(m.key());
        if (!same || *same != m.value())
          return bad("the snapshot of the current version differs from the entity's doc in " +
                     std::string(m.key()));
      }
    }
    return {};
  }

  Result<void> edge(const bj::object& o) {
    if (auto c = only(o, "an edge", {"from", "relation", "to", "data"}); !c) return c.error();
    if (auto c = in_order(o, "an edge", {"from", "relation", "to", "data"}); !c) return c.error();
    auto to = id_member(o, "to", "the edge");
    if (!to) return to.error();
    if (auto c = of_current(*to, "an edge into"); !c) return c.error();
    auto from = id_member(o, "from", "the edge");
    if (!from) return from.error();
    const auto* relation = o.if_contains("relation");
    auto rel = relation && relation->is_string()
                   ? detail::relation_from_name(relation->get_string())
                   : std::nullopt;
    if (!rel) return bad("the edge has no known relation");
    std::string_view data;
    if (const auto* d = o.if_contains("data")) {
      if (!d->is_string()) return bad("the edge's data is not a string");
      data = d->get_string();
    }
    if (*rel == Rel::votes ? data != "u" && data != "d" : !data.empty())
      return bad(*rel == Rel::votes ? R"(a vote's data is "u" (up) or "d" (down))"
                                    : "only votes carry data");
    // The order of the reverse keys (Q to rel from): by relation byte, then by `from`.
    std::string position(1, static_cast<char>(*rel));
    position += keys::id_bytes(*from);
    if (!last_edge_.empty() && position <= last_edge_)
      return bad("the edge is not after the edge before it (the edges into an entity come in "
                 "the order of their relation's byte, then of `from`, each once)");
    if (auto l = tx_.link(*from, *rel, *to, data); !l) return l.error();
    keys_ += 2;
    last_edge_ = std::move(position);
    ++counts_.edges;
    return {};
  }

  Result<void> event(bj::value& v) {
    if (section_ == Section::entities) {
      if (auto c = close_entity(); !c) return c.error();
      section_ = Section::events;
    }
    auto* o = v.if_object();
    if (!o) return bad("the event is not an object");
    ChangeEvent typed;
    if (auto e = catalog::detail::from_json(v, typed, "event"); !e)
      return bad("the event is not a change event (docs/SEMANTICS.md §13): " + e.error().message());
    if (auto c = event_rules(*o, typed); !c) return c.error();
    const auto* offset = o->if_contains("offset");
    const auto expected = counts_.events + 1;
    if (!offset || !offset->is_int64() || offset->get_int64() < 0 ||
        static_cast<std::uint64_t>(offset->get_int64()) != expected)
      return bad("the event's offset is not " + std::to_string(expected) +
                 " (offsets are dense from 1, in order)");
    if (auto p = txn_.put(keys::event(expected), catalog::json::serialize(v)); !p) return p.error();
    event_ids_.emplace_back(typed.id, line_);
    ++keys_;
    ++counts_.events;
    return {};
  }

  // What the catalog writes in an event (docs/SEMANTICS.md §13): ids as export writes them, the
  // versions and changeDescription of its type, an FQN. (Its timestamp is the host's clock's,
  // which may be anything.)
  static Result<void> event_rules(const bj::object& o, const ChangeEvent& e) {
    for (const char* member : {"id", "entityId"})
      if (auto id = id_member(o, member, "the event"); !id) return id.error();
    const bool same = e.event_type == EventType::entity_created ||
                      e.event_type == EventType::entity_fields_changed ||
                      e.event_type == EventType::entity_deleted;
    const auto type = o.at("eventType").get_string();
    if (same && e.previous_version != e.current_version)
      return bad("an " + std::string(type) +
                 " event whose previousVersion is not its currentVersion");
    if (!same && !(e.previous_version < e.current_version))
      return bad("an " + std::string(type) + " event whose previousVersion is not before its "
                 "currentVersion");
    if (e.event_type == EventType::entity_created && e.change_description)
      return bad("an entityCreated event with a changeDescription");
    if (e.entity_fully_qualified_name.empty() ||
        e.entity_fully_qualified_name.size() > catalog::fqn::max_fqn_bytes)
      return bad("the event's entityFullyQualifiedName is not an FQN");
    return {};
  }

  Result<void> end(const bj::value& v) {
    if (auto c = close_entity(); !c) return c.error();
    const auto* o = v.if_object();
    if (!o) return bad("the end line's counts are not an object");
    if (auto c = only(*o, "the end line", {"entities", "snapshots", "edges", "events"}); !c)
      return c.error();
    for (auto [name, count] : {std::pair{"entities", counts_.entities},
                               {"snapshots", counts_.snapshots},
                               {"edges", counts_.edges},
                               {"events", counts_.events}}) {
      const auto* n = o->if_contains(name);
      if (!n || !n->is_int64() || n->get_int64() < 0 ||
          static_cast<std::uint64_t>(n->get_int64()) != count)
        return bad("the end line does not count the " + std::to_string(count) + " " + name +
                   " read");
    }
    // Each event has an id of its own (the catalog draws one per event). The ids are kept with
    // their lines as they are read (24 bytes an event) and compared here, sorted.
    std::sort(event_ids_.begin(), event_ids_.end());
    for (std::size_t i = 1; i < event_ids_.size(); ++i)
      if (event_ids_[i].first == event_ids_[i - 1].first)
        return bad("the event of line " + std::to_string(event_ids_[i].second) +
                   " has the id of the event of line " + std::to_string(event_ids_[i - 1].second) +
                   " (each event's id is its own)");
    if (max_deleted_by_ > counts_.events)
      return bad("the entity of line " + std::to_string(max_deleted_by_line_) +
                 " was deleted by event " + std::to_string(max_deleted_by_) +
                 ", past the last event (" + std::to_string(counts_.events) + ")");
    if (counts_.events > 0)
      if (auto p = txn_.put(keys::meta("event_offset"), keys::encode_u64(counts_.events)); !p)
        return p.error();
    section_ = Section::end;
    return {};
  }

  engine::Tx& tx_;
  storage::Transaction& txn_;
  Section section_ = Section::header;
  std::uint64_t line_ = 0;
  DumpCounts counts_;
  std::uint64_t keys_ = 0;
  // The entity whose snapshots and edges are being read, and where they are.
  std::optional<engine::Record> current_;
  bj::object current_doc_;  // its entity line's doc
  std::uint64_t entity_line_ = 0;
  std::string last_entity_;  // id bytes
  std::optional<Version> last_snapshot_;
  std::string last_major_;  // engine::major_values of the last snapshot
  std::string last_edge_;  // relation byte and `from` id
  // The largest deletedBy read, and the line of its entity: an event offset, so at most the
  // last event's.
  std::uint64_t max_deleted_by_ = 0;
  std::uint64_t max_deleted_by_line_ = 0;
  std::vector<std::pair<Uuid, std::uint64_t>> event_ids_;  // each event's id and line
};

// The store holds nothing but what opening it writes (the key schema).
Result<void> check_empty(storage::Transaction& txn) {
  const auto schema = keys::meta("key_schema");
  const auto analyzer = keys::meta(engine::search_index::analyzer_meta);
  auto cursor = txn.scan(storage::Range{}, storage::Direction::forward);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid();) {
    if (c->key() != schema && c->key() != analyzer) {
      auto entities = txn.scan(storage::prefix_range("E"), storage::Direction::forward);
      if (!entities) return entities.error();
      const std::string held = (*entities)->valid()
                                   ? "entities"
                                   : "data (key " + keys::printable(c->key().substr(0, 24)) + ")";
      return fail(Errc::already_exists,
                  "the store is not empty: it holds " + held +
                      "; import goes into an empty store, so that nothing is mixed or lost");
    }
    if (auto n = c->next(); !n) return n.error();
  }
  return {};
}

std::string describe(const std::vector<IntegrityProblem>& problems) {
  std::string out = "the input does not make a consistent store (" +
                    std::to_string(problems.size()) + " problem" +
                    (problems.size() == 1 ? "" : "s") + "): ";
  for (std::size_t i = 0; i < problems.size() && i < 3; ++i) {
    if (i) out += "; ";
    if (!problems[i].key.empty()) out += problems[i].key + ": ";
    out += problems[i].message;
  }
  if (problems.size() > 3) out += "; ...";
  return out;
}

Result<DumpCounts> import_once(storage::Backend& backend, std::istream& in,
                               const ImportOptions& options) {
  if (catalog::detail::in_transaction) return catalog::detail::nested_transaction();
  catalog::detail::InTransaction inside;  // the progress callback runs in the transaction
  auto txn = backend.begin(storage::Mode::read_write);
  if (!txn) return txn.error();
  if (auto e = check_empty(**txn); !e) return e.error();
  const engine::Env env{detail::plain_options(), 0};
  engine::Tx tx(**txn, env);
  Importer importer(tx);
  LineReader reader(in, options.max_line_bytes);
  detail::Reporter reporter(options.progress, "import");
  reporter.progress().total = options.input_bytes;
  for (;;) {
    auto line = reader.next();
    if (!line) return line.error();
    if (!*line) break;
    if (auto t = importer.take(**line, reader.number()); !t) return t.error();
    if (reader.unterminated())  // export ends every line with \n, the last one too
      return fail(Errc::invalid_request,
                  "line " + std::to_string(reader.number()) + ": no newline at its end");
    reporter.progress().entities = importer.counts().entities;
    reporter.progress().done = reader.bytes();
    reporter.step();
  }
  if (auto f = importer.finish(reader.number()); !f) return f.error();
  // The search index is derived: built from what was imported, in the same transaction.
  if (auto s = engine::search_index::rebuild(tx); !s) return s.error();
  reporter.finish();
  if (options.check) {
    detail::Reporter checking(options.progress, "check");
    checking.progress().total = importer.keys() + 1;
    auto problems = engine::check_integrity(tx, [&](std::uint64_t keys, std::uint64_t entities) {
      checking.progress().done = keys;
      checking.progress().entities = entities;
      checking.report();
    });
    if (!problems) return problems.error();
    if (!problems->empty()) return fail(Errc::invalid_request, describe(*problems));
    checking.finish();
  }
  if (auto c = (*txn)->commit(); !c) return c.error();
  return importer.counts();
}

}  // namespace

Result<DumpCounts> import_store(Store& store, std::istream& in, const ImportOptions& options) {
  auto& backend = store.backend();
  // The store takes about what the export does, plus its indexes and half-full pages.
  if (options.input_bytes > 0) backend.make_room(options.input_bytes);
  const auto start = in.tellg();
  // A full map ends the transaction; the backend grows the map when the next one begins.
  constexpr int max_attempts = 40;
  for (int attempt = 1;; ++attempt) {
    auto imported = import_once(backend, in, options);
    if (imported || imported.error().code() != Errc::storage_full || attempt == max_attempts ||
        !backend.grows_when_full())
      return imported;
    in.clear();
    if (start == std::istream::pos_type(-1) || !in.seekg(start))
      return fail(Errc::storage_full,
                  imported.error().message() +
                      "; the input cannot be read again to start over: import from a file, or "
                      "open the store with a larger map");
  }
}

}  // namespace catalog::admin

#endif  // CATALOG_IMPL_ADMIN_DUMP_IPP
