#ifndef CATALOG_DETAIL_ENGINE_REFERENCES_HPP
#define CATALOG_DETAIL_ENGINE_REFERENCES_HPP

// Entity references read straight from stored records.
//
// An entity with many followers (or voters) renders one reference per follower, so the cost of
// a follow, vote or get on a popular entity is the cost of a reference, and a reference must not
// decode the follower's whole record (a JSON DOM of every field). A reference shows five
// fields, so `scan_reference` reads just those from the stored text, without building a DOM;
// whatever it does not expect sends the caller back to the full decode, so both agree.

#include <catalog/entities.hpp>
#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace catalog::engine {

/// The fields of a reference as one stored record holds them. The views point into the stored
/// bytes, or into this object's buffers for strings that had escapes; reuse one object for many
/// records so its buffers are allocated once.
struct StoredReference {
  Kind kind = Kind::user;
  Uuid id{};
  std::string_view name;
  std::string_view fqn;
  std::optional<std::string_view> display_name;
  bool deleted = false;

  std::string name_buffer, fqn_buffer, display_name_buffer;  // unescaped strings

  /// `{id, type, name, fullyQualifiedName, displayName?, deleted}`, the same members in the
  /// same order as `reference(decode(stored))`.
  boost::json::object to_json(boost::json::storage_ptr sp = {}) const;
  /// to_json() as the struct from_json of it gives.
  EntityReference typed() const;
};

/// Reads the reference fields of a stored entity record (tx.ipp `encode`: `{"k": type, ...,
/// "doc": {...}}`) into `out`. Returns false when the record is not what it expects (a field
/// absent or of another type, a member repeated, bytes that are not JSON, a string that is not
/// UTF-8): then the full `decode` must read it, and decides whether the record is corrupt. When
/// it returns true, every field equals what `reference(*decode(stored))` shows. Members it does
/// not read are skipped by their structure (brackets and strings), not validated.
bool scan_reference(std::string_view stored, StoredReference& out);

/// Reads the string member `member` of a stored record's document (a description) into `out`:
/// the text, unescaped (a view into `stored`, or into `buffer` when it had escapes), or nullopt
/// when the document does not have it or holds null there. Returns false when the record is
/// not what it expects (the member repeated or not a string or null, a key with escapes, bytes
/// that are not JSON): then the full `decode` must read it. Other members are skipped by their
/// structure, not validated. When it returns true, `out` is what the decoded struct's member
/// holds.
bool scan_document_string(std::string_view stored, std::string_view member,
                          std::optional<std::string_view>& out, std::string& buffer);

}  // namespace catalog::engine

#endif
