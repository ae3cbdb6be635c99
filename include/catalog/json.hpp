#ifndef CATALOG_JSON_HPP
#define CATALOG_JSON_HPP

// The one JSON codec of the catalog: strict parsing for every input the catalog reads, and
// serialization that writes decimals plainly (0.1, never 1E-1). The patch formats applied to
// parsed values are in <catalog/json_patch.hpp>.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>

/// The catalog's JSON codec (strict I-JSON parsing, plain serialization) and the patch formats of
/// docs/SEMANTICS.md §9 (json_patch.hpp).
namespace catalog::json {

/// The deepest nesting `parse` ever accepts, whatever `ParseOptions::max_depth` says: Boost.JSON's
/// parser (and the destruction of a value) recurses once per level, so this bounds stack use.
inline constexpr std::size_t max_parse_depth = 4096;

/// The deepest a request body, patch or token may nest (docs/SEMANTICS.md §15).
inline constexpr std::size_t max_body_depth = 64;

/// The deepest an entity document may be: the most a create or a patch may produce
/// (docs/SEMANTICS.md §15). The same as a body, so whatever a client reads it can send back
/// (docs/SEMANTICS.md §9: a patch may repeat the current document). Stored records wrap a document
/// in a few levels (history, events, change descriptions) and are read back with `max_parse_depth`,
/// so whatever was stored stays readable.
inline constexpr std::size_t max_document_depth = max_body_depth;

/// Options of `parse`. Plain data.
struct ParseOptions {
  /// Deepest nesting accepted. Default: 64 (docs/SEMANTICS.md §15). Stored documents are read with
  /// a larger one. Values above `max_parse_depth` count as `max_parse_depth`.
  std::size_t max_depth = max_body_depth;
};

/// Parses `text` as one I-JSON value: valid UTF-8, no unpaired surrogate escapes, no duplicate
/// member names in any object, nesting at most `max_depth`, nothing but whitespace after it.
/// Numbers are finite (1e400 is refused) and correctly rounded (Boost.JSON 1.81's own parser is
/// not), so a parsed value survives `serialize` and `parse` unchanged.
/// Errors (all bad_request): invalid_json, duplicate_member, too_deep.
[[nodiscard]] CATALOG_DECL Result<boost::json::value> parse(std::string_view text,
                                                        ParseOptions options = {});

/// How deep a value nests and how long its serialization is.
struct Extent {
  std::size_t depth = 0;  ///< nesting of arrays and objects: 0 for a scalar, 1 for `[1]`
  std::size_t bytes = 0;  ///< the length of `serialize(v)`
  /// Whether every string and member name is UTF-8 and every number finite, as `parse` reads
  /// them: a value built in C++ may hold what no JSON text parses to.
  bool i_json = true;
};

/// Measures `v` without recursion, so any value can be measured. Stops early (with a partial
/// result whose `bytes` exceeds `stop_bytes`) once the size passes `stop_bytes`, so the cost is
/// bounded by the limit being checked, not by the value. Errors: none.
CATALOG_DECL Extent measure(const boost::json::value& v, std::size_t stop_bytes = static_cast<std::size_t>(-1));

/// Serializes `v` compactly. Doubles are written as the shortest plain decimal that reads back
/// to the same double (`0.1`, `1.3`, `12.0` as `12.0`); integers as integers. Call it qualified:
/// for a boost::json::value argument, argument-dependent lookup also finds boost::json::serialize.
/// NaN and infinities (which parse never produces) are written as `null`. Errors: none.
CATALOG_DECL std::string serialize(const boost::json::value& v);
/// serialize(v) appended to `out`.
CATALOG_DECL void serialize_to(std::string& out, const boost::json::value& v);
/// serialize(o) of an object appended to `out`.
CATALOG_DECL void serialize_to(std::string& out, const boost::json::object& o);
/// A string, as serialize writes it (quoted and escaped), appended to `out`.
CATALOG_DECL void serialize_string_to(std::string& out, std::string_view s);
/// A double, as serialize writes it, appended to `out`.
CATALOG_DECL void serialize_double_to(std::string& out, double d);

}  // namespace catalog::json

#endif  // CATALOG_JSON_HPP
