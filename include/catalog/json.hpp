#ifndef CATALOG_JSON_HPP
#define CATALOG_JSON_HPP

// The one JSON codec of the catalog: strict parsing for every input the catalog reads, and
// serialization that writes decimals plainly (0.1, never 1E-1).

#include <catalog/error.hpp>

#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace catalog::json {

/// The deepest nesting `parse` ever accepts, whatever `ParseOptions::max_depth` says: Boost.JSON's
/// parser (and the destruction of a value) recurses once per level, so this bounds stack use.
inline constexpr std::size_t max_parse_depth = 4096;

struct ParseOptions {
  /// Deepest nesting accepted. Default: 64 (S15). Stored documents are read with a larger one.
  /// Values above `max_parse_depth` count as `max_parse_depth`.
  std::size_t max_depth = 64;
};

/// Parses `text` as one I-JSON value: valid UTF-8, no unpaired surrogate escapes, no duplicate
/// member names in any object, nesting at most `max_depth`, nothing but whitespace after it.
/// Numbers are finite (1e400 is refused) and correctly rounded (Boost.JSON 1.81's own parser is
/// not), so a parsed value survives `serialize` and `parse` unchanged.
/// Errors (all bad_request): invalid_json, duplicate_member, too_deep.
[[nodiscard]] Result<boost::json::value> parse(std::string_view text, ParseOptions options = {});

/// Serializes `v` compactly. Doubles are written as the shortest plain decimal that reads back
/// to the same double (`0.1`, `1.3`, `12.0` as `12.0`); integers as integers. Call it qualified:
/// for a boost::json::value argument, argument-dependent lookup also finds boost::json::serialize.
/// NaN and infinities (which parse never produces) are written as `null`. Errors: none.
std::string serialize(const boost::json::value& v);

/// Applies an RFC 7396 JSON Merge Patch to `target`. Errors: none (every patch applies).
boost::json::value merge_patch(boost::json::value target, const boost::json::value& patch);

/// Applies an RFC 6902 JSON Patch (an array of operations) to `document`.
/// Errors (bad_request, invalid_patch): not an array, an operation that is malformed (missing or
/// wrong-typed `op`/`path`/`from`/`value`, unknown op), a path that does not resolve, a `test`
/// that does not match, moving a value into one of its own children.
[[nodiscard]] Result<boost::json::value> apply_json_patch(boost::json::value document,
                                                          const boost::json::value& patch);

}  // namespace catalog::json

#endif  // CATALOG_JSON_HPP
