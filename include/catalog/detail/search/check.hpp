#ifndef CATALOG_DETAIL_SEARCH_CHECK_HPP
#define CATALOG_DETAIL_SEARCH_CHECK_HPP

// The search index's part of the integrity check (engine/verify.ipp): every searched entity's
// document is the one its record and edges make now, every word of it has its posting and every
// name its typeahead keys, and nothing else is there; the statistics are the sums of what the
// postings and documents hold. Called key by key in the verifier's one forward scan.

#include <catalog/detail/search/index.hpp>

#include <functional>

namespace catalog::engine::search_index {

class Checker {
 public:
  using Problem = std::function<void(std::string_view key, std::string message)>;
  Checker(Tx& tx, Problem problem) : tx_(tx), problem_(std::move(problem)) {}

  /// An entity record that decoded: its search document must exist (searched kinds).
  Result<void> entity(const Record& r);
  /// A key of the search families (G, J, K, X, Y).
  Result<void> key(std::string_view key, std::string_view value);
  /// After the scan: the counts and sums.
  Result<void> finish();

 private:
  Result<void> document(std::string_view key, std::string_view value);

  Tx& tx_;
  Problem problem_;
  // Sums of the G keys as stored, and as the documents make them.
  std::array<FieldStats, field_count + 1> stored_stats_{}, expected_stats_{};
  // Postings and typeahead keys stored, and those the documents name (each one checked present).
  std::uint64_t postings_ = 0, expected_postings_ = 0;
  std::uint64_t names_ = 0, expected_names_ = 0;
  std::uint64_t name_words_ = 0, expected_name_words_ = 0;
};

}  // namespace catalog::engine::search_index

#endif  // CATALOG_DETAIL_SEARCH_CHECK_HPP
