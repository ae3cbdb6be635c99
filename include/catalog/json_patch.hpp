#ifndef CATALOG_JSON_PATCH_HPP
#define CATALOG_JSON_PATCH_HPP

// The two patch formats of docs/SEMANTICS.md §9 on JSON values: RFC 7396 JSON Merge Patch and
// RFC 6902 JSON Patch (with RFC 6901 JSON Pointers), bounded by the limits of §15.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>
#include <catalog/json.hpp>

#include <boost/json/value.hpp>

#include <cstddef>

namespace catalog::json {

/// Applies an RFC 7396 JSON Merge Patch to `target`. Errors: none (every patch applies).
CATALOG_DECL boost::json::value merge_patch(boost::json::value target, const boost::json::value& patch);

/// What a JSON Patch may build (docs/SEMANTICS.md §15): `copy` and `add` can double a document per
/// operation, and `move` can push a subtree deeper each time, so limits bind every operation, not
/// the result.
struct PatchLimits {
  /// The deepest the document may become. Default: max_document_depth.
  std::size_t max_depth = max_document_depth;
  /// The total serialized size of the values the operations insert (add, replace, copy, and
  /// move when it takes a value deeper). Bounds the work and memory of a whole patch to a small
  /// multiple of this. Default: 24 MiB (three times the default body limit).
  std::size_t max_bytes = std::size_t{24} << 20;
};

/// Applies an RFC 6902 JSON Patch (an array of operations) to `document` (which is within
/// `limits.max_depth`). Stops at the first operation that would pass a limit; nothing it builds
/// ever exceeds them. Errors (bad_request): invalid_patch for not an array, an operation that is
/// malformed (missing or wrong-typed `op`/`path`/`from`/`value`, unknown op), a path that does
/// not resolve, a `test` that does not match, moving a value into one of its own children;
/// too_deep for an operation that would nest the document deeper than `limits.max_depth`;
/// too_large when the operations together would build more than `limits.max_bytes`.
[[nodiscard]] CATALOG_DECL Result<boost::json::value> apply_json_patch(boost::json::value document,
                                                          const boost::json::value& patch,
                                                          PatchLimits limits = {});

/// Whether two values are the same JSON, as RFC 6902's `test` compares them: numbers by value
/// whatever their spelling (1 equals 1.0, which Boost.JSON's `==` says differ), objects whatever
/// the order of their members, arrays element by element. What a patch that changes nothing is
/// judged by (docs/SEMANTICS.md §3).
[[nodiscard]] CATALOG_DECL bool equal(const boost::json::value& a,
                                      const boost::json::value& b) noexcept;

}  // namespace catalog::json

#endif  // CATALOG_JSON_PATCH_HPP
