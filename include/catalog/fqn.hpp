#ifndef CATALOG_FQN_HPP
#define CATALOG_FQN_HPP

// The one FQN codec (docs/SEMANTICS.md §2): parts joined by '.', a part wrapped in double quotes
// exactly when it contains '.'; and the entity name rules every part obeys.

#include <catalog/detail/export.hpp>
#include <catalog/error.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

/// The FQN codec and the name rules every part obeys (docs/SEMANTICS.md §2).
namespace catalog::fqn {

/// The longest FQN, in bytes of UTF-8 (docs/SEMANTICS.md §2, §15); longer is invalid_fqn.
inline constexpr std::size_t max_fqn_bytes = 3072;
/// The most characters (code points) a name may have (docs/SEMANTICS.md §2).
inline constexpr std::size_t max_name_chars = 256;
/// The most bytes of UTF-8 a name may have (docs/SEMANTICS.md §2).
inline constexpr std::size_t max_name_bytes = 400;

/// Checks a name: 1 to 256 characters, at most 400 bytes of UTF-8, no control characters, no
/// `::`, no `"`. `what` names the field in the message.
/// Errors: bad_request (invalid_name).
CATALOG_DECL Result<void> validate_name(std::string_view name, std::string_view what = "name");

/// `name` as one FQN part: quoted when it contains '.'.
CATALOG_DECL std::string quote(std::string_view name);

/// The canonical FQN of `parent` (already canonical, may be empty) followed by `name`.
CATALOG_DECL std::string append(std::string_view parent, std::string_view name);

/// The names of an FQN's parts (quotes removed). `"g1".t1` gives {g1, t1}.
/// Errors: bad_request (invalid_fqn): empty text or part, unbalanced or misplaced quotes, over
/// 3072 bytes.
CATALOG_DECL Result<std::vector<std::string>> split(std::string_view fqn);

/// Joins names into the canonical FQN.
CATALOG_DECL std::string build(const std::vector<std::string>& names);

/// split then build: the canonical form used for every lookup. Errors: as split.
CATALOG_DECL Result<std::string> canonical(std::string_view fqn);

}  // namespace catalog::fqn

#endif  // CATALOG_FQN_HPP
