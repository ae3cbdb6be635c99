#ifndef CATALOG_DETAIL_SEARCH_ANALYZER_HPP
#define CATALOG_DETAIL_SEARCH_ANALYZER_HPP

// The analysis of docs/SEMANTICS.md §16 "Words": text and queries become words the same way, so
// that what is typed finds what was written. One component, with no catalog state: a function of
// its input and of `analyzer_version`. The index records its own version, which names the
// analyzer it used (search_index::index_version): a store indexed by another is reindexed when it
// opens.
//
//   1. Unicode: NFKC (compatibility forms: the `ﬁ` ligature, full-width letters), marks removed
//      (`café` is `cafe`), default-ignorable characters dropped (a soft hyphen joins), then case
//      folded (`Straße` is `strasse`), through utf8proc.
//   2. Words: runs of letters and digits; every other character separates. A word also splits
//      where a lower-case letter meets an upper-case one, before the last capital of a run of
//      capitals followed by a lower-case letter, and between letters and digits; its parts are
//      words too, and the whole word stays (`getHTTPResponse2`: `get`, `http`, `response`, `2`,
//      and `gethttpresponse2`).
//   3. Han, Hiragana, Katakana and Hangul: a run of them is a word of its own, indexed as its
//      overlapping pairs of characters (`東京都`: `東京`, `京都`).
//   4. A word is cut at 64 bytes, between characters.
//   5. English stemming (Snowball, through libstemmer) for the fields that use it.
//
// utf8proc and libstemmer stay out of this header: a host including catalog headers needs
// neither.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::search {

/// The version of the analysis below. A change that makes any text analyse differently bumps it.
inline constexpr std::uint32_t analyzer_version = 1;

/// The longest word, in bytes (a longer one is cut between characters).
inline constexpr std::size_t max_word_bytes = 64;

/// One word of a text, as typed between separators, analysed.
struct Word {
  /// The whole word: folded, cut at max_word_bytes. A run of Han, Kana or Hangul as it stands.
  std::string whole;
  /// Its parts where it splits (case changes, letters and digits), or a CJK run's overlapping
  /// pairs; empty when it does not split (the whole is its only word).
  std::vector<std::string> parts;
  /// Its place among the words of the text, from 0: phrases match consecutive places.
  std::uint32_t position = 0;
};

/// The words of `text`, in order. Bytes that are not UTF-8 separate words (they are never part
/// of one). Errors: none.
std::vector<Word> words(std::string_view text);

/// Whether `phrase` (folded words, as words() gives their wholes) stands in `text` at consecutive
/// places (true for an empty phrase): the words of the text read one after another, each whole
/// or, where it reads as parts (reads_as_parts), as its parts, so `customer orders` stands in
/// `customerOrders` and `orders table` in `customerOrders table`. On ASCII text where the
/// phrase stands as whole words, no word is built.
bool has_phrase(std::string_view text, std::span<const std::string> phrase);

/// Whether a phrase may read `w` as its parts one after another: it splits at case changes or
/// between letters and digits (customerOrders: customer, orders), not a CJK run's overlapping
/// pairs. has_phrase and the index's following words read such a word either way.
bool reads_as_parts(const Word& w);

/// The phrase `words` make (a query's) with each word that reads as its parts
/// (reads_as_parts) written as its parts: `customerOrders table` gives `customer orders table`.
/// Empty when no word does. A query's phrase stands where either reading does, so a word typed
/// whole finds a text that splits it (`customer_orders table`).
std::vector<std::string> phrase_as_parts(std::span<const Word> words);

/// `text` normalized as words are (NFKC, marks removed, case folded) but not split: what exact
/// name matches and typeahead prefixes compare. Bytes that are not UTF-8 become spaces.
std::string fold(std::string_view text);

/// `text` case folded (and composed, NFC) and nothing else: accents and compatibility forms
/// stay, so `Çafeteria` does not begin with `cafe`. What the first group of a typeahead compares.
std::string case_folded(std::string_view text);

/// The length in bytes of the character `text` starts with when it is Han, Kana or Hangul (a
/// character words() pairs; halfwidth Katakana too, which normalize to Katakana), with the code
/// points of its grapheme cluster (combining marks, conjoining jamo): else 0 (another
/// character, bytes that are not UTF-8, no text).
std::size_t cjk_character(std::string_view text);

/// Whether byte `at` of `text` starts a character as a reader sees one (a grapheme cluster
/// boundary, judged by the code points on either side): never inside a code point, nor
/// between a letter and its combining mark. True at either end.
bool character_boundary(std::string_view text, std::size_t at);

/// The English Snowball stem of a folded word (`orders` is `order`, `running` is `run`); a word
/// the stemmer does not change is returned as it is. Thread-safe.
std::string stem(std::string_view folded_word);

}  // namespace catalog::search

#endif  // CATALOG_DETAIL_SEARCH_ANALYZER_HPP
