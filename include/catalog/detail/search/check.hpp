#ifndef CATALOG_DETAIL_SEARCH_CHECK_HPP
#define CATALOG_DETAIL_SEARCH_CHECK_HPP

// The search index's part of the integrity check (engine/verify.ipp): every searched entity's
// document is the one its record and edges make now, every word of it has its posting and every
// name its typeahead keys, and nothing else is there; the statistics are the sums of what the
// postings and documents hold. Called key by key in the verifier's one forward scan.

#include <catalog/detail/search/index.hpp>

#include <cstdint>
#include <functional>

namespace catalog::engine::search_index {

class Checker {
 public:
  using Problem = std::function<void(std::string_view key, std::string message)>;
  Checker(Tx& tx, Problem problem) : tx_(tx), problem_(std::move(problem)) {}

  /// An entity record that decoded: its search document must exist (searched kinds).
  Result<void> entity(const Record& r);
  /// A key of the search families (F, G, J, K, T, X, Y).
  Result<void> key(std::string_view key, std::string_view value);
  /// After the scan: the counts and sums; where the postings, typeahead or facet keys stored
  /// are not those the documents make, a second pass names each one missing or different.
  Result<void> finish();

  /// An order-independent digest of a set of (key, value) pairs: equal sets give equal digests,
  /// and a set with a pair missing, added or changed gives another unless both 64-bit sums
  /// collide at once (not a cryptographic guarantee: verify finds corruption, not an adversary).
  struct Digest {
    std::uint64_t count = 0, a = 0, b = 0;
    void add(std::string_view key, std::string_view value);
    friend bool operator==(const Digest&, const Digest&) = default;
  };

 private:
  Result<void> document(std::string_view key, std::string_view value);
  /// Reads the postings, typeahead and facet keys of each document that matches its entity (found
  /// again by a scan of the Y keys) and names each one missing or different: what finish()
  /// runs when the digests differ.
  Result<void> name_differences();

  Tx& tx_;
  Problem problem_;
  // Sums of the G keys as stored, and as the documents make them.
  std::array<FieldStats, field_count + 1> stored_stats_{}, expected_stats_{};
  // Postings (X), typeahead names (K) and words (J) and facet keys (F): as stored, and as the
  // documents make them. A key is checked against the documents by these sums, not read once per
  // document word.
  Digest postings_, expected_postings_;
  Digest names_, expected_names_;
  Digest name_words_, expected_name_words_;
  Digest facets_, expected_facets_;
  /// T keys: what index versions before 6 kept, none of which this one makes.
  std::uint64_t stale_terms_ = 0;
  /// The expected digest of a key of X, K, J or F.
  Digest& expected(char tag);
};

}  // namespace catalog::engine::search_index

#endif  // CATALOG_DETAIL_SEARCH_CHECK_HPP
