#ifndef CATALOG_IMPL_SEARCH_ANALYZER_IPP
#define CATALOG_IMPL_SEARCH_ANALYZER_IPP

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/utf8.hpp>

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace catalog::search {

namespace {

// `text` with every byte that does not start or continue a valid UTF-8 sequence replaced by a
// space (so it separates words), as utf8proc refuses such text whole.
std::string valid_text(std::string_view text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      out += ' ';
      ++p;
      --left;
      continue;
    }
    out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    p += n;
    left -= n;
  }
  return out;
}

// utf8proc_map of valid UTF-8 with `options`.
std::string mapped(std::string_view valid, int options) {
  if (valid.empty()) return {};
  // Fast path: on ASCII, NFKC, mark removal and dropping default-ignorables change nothing, and
  // case folding is A-Z to a-z (what utf8proc gives, without its decomposition buffers).
  if (std::all_of(valid.begin(), valid.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return (options & UTF8PROC_CASEFOLD) ? detail::ascii_lowered(valid) : std::string(valid);
  }
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(valid.data()),
                              static_cast<utf8proc_ssize_t>(valid.size()), &out,
                              static_cast<utf8proc_option_t>(options));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  if (n < 0) return {};  // cannot happen on valid UTF-8; nothing rather than a wrong word
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

// IGNORE drops the default-ignorable characters (soft hyphen, joiners): they join, not split.
constexpr int normalize = UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_STRIPMARK | UTF8PROC_IGNORE;
constexpr int case_fold = UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD;

// `word` cut to at most max_word_bytes, between characters.
std::string cut(std::string word) {
  if (word.size() <= max_word_bytes) return word;
  std::size_t at = max_word_bytes;
  while (at > 0 && (static_cast<unsigned char>(word[at]) & 0xC0) == 0x80) --at;
  word.resize(at);
  return word;
}

enum class Class { separator, lower, upper, other_letter, digit, cjk };

bool is_cjk(utf8proc_int32_t c) {
  if (c == 0x30A0 || c == 0x30FB) return false;  // Kana punctuation: ゠ and the middle dot
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||    // Han
         (c >= 0x20000 && c <= 0x323AF) || (c >= 0xF900 && c <= 0xFAFF) ||  // Han, ext. B-H
         (c >= 0x3005 && c <= 0x3007) ||                                    // 々 〆 〇
         (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||    // Kana
         (c >= 0x1B000 && c <= 0x1B16F) ||                                  // Kana supplement
         (c >= 0xAC00 && c <= 0xD7FF) || (c >= 0x1100 && c <= 0x11FF) ||    // Hangul
         (c >= 0x3130 && c <= 0x318F) || (c >= 0xA960 && c <= 0xA97F);      // Hangul jamo
}

Class class_of(utf8proc_int32_t c) {
  if (c < 0x80) {  // ASCII: the categories utf8proc gives them
    if (c >= 'a' && c <= 'z') return Class::lower;
    if (c >= 'A' && c <= 'Z') return Class::upper;
    if (c >= '0' && c <= '9') return Class::digit;
    return Class::separator;
  }
  if (is_cjk(c)) return Class::cjk;
  switch (utf8proc_category(c)) {
  case UTF8PROC_CATEGORY_LU:
  case UTF8PROC_CATEGORY_LT: return Class::upper;
  case UTF8PROC_CATEGORY_LL: return Class::lower;
  case UTF8PROC_CATEGORY_LM:
  case UTF8PROC_CATEGORY_LO: return Class::other_letter;
  case UTF8PROC_CATEGORY_ND:
  case UTF8PROC_CATEGORY_NL:
  case UTF8PROC_CATEGORY_NO: return Class::digit;
  default: return Class::separator;
  }
}

struct Char {
  std::size_t begin, end;  // bytes of the normalized text
  Class cls;
};

// Where a run of letters and digits splits: before character i.
bool splits_before(std::span<const Char> run, std::size_t i) {
  const Class prev = run[i - 1].cls, cur = run[i].cls;
  if ((prev == Class::digit) != (cur == Class::digit)) return true;  // letters and digits
  if (prev == Class::lower && cur == Class::upper) return true;      // camelCase
  // The last capital of a run of capitals begins the next part: HTTPResponse is HTTP Response.
  return prev == Class::upper && cur == Class::upper && i + 1 < run.size() &&
         run[i + 1].cls == Class::lower;
}

bool ascii(std::string_view text) {
  // Eight bytes at a time: none has its high bit set.
  std::size_t i = 0;
  std::uint64_t high = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t eight = 0;
    std::memcpy(&eight, text.data() + i, 8);
    high |= eight;
  }
  for (; i < text.size(); ++i) high |= static_cast<unsigned char>(text[i]);
  return (high & 0x8080808080808080ull) == 0;
}

// words() of ASCII text, without the Unicode steps: on ASCII, NFKC, mark removal and dropping
// default-ignorables change nothing, case folding is A-Z to a-z, a character is a byte and its
// class is the byte's (what class_of gives). The same words as the general path, found in one
// pass over the bytes with no table of characters and no copy of the text.
// Whether an ASCII byte is a letter or digit (what class_of does not call a separator), by table.
constexpr auto ascii_word_bytes = [] {
  std::array<bool, 128> t{};
  for (int c = 0; c < 128; ++c)
    t[static_cast<std::size_t>(c)] =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  return t;
}();

// Calls f(begin, end) with the bytes of each word of ASCII text, its runs of letters and digits,
// while f answers true.
template <class F>
void for_each_ascii_run(std::string_view text, F f) {
  const auto in_word = [&](std::size_t i) {
    return ascii_word_bytes[static_cast<unsigned char>(text[i]) & 0x7f];
  };
  for (std::size_t i = 0, n = text.size(); i < n;) {
    if (!in_word(i)) {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < n && in_word(end)) ++end;
    if (!f(i, end)) return;
    i = end;
  }
}

// Whether some place s of `count` words has word(s + k) equal to phrase[k] for every k.
template <class Equal>
bool has_consecutive(std::size_t count, std::span<const std::string> phrase, Equal equal) {
  for (std::size_t s = 0; s + phrase.size() <= count; ++s) {
    std::size_t k = 0;
    while (k < phrase.size() && equal(s + k, phrase[k])) ++k;
    if (k == phrase.size()) return true;
  }
  return false;
}

std::vector<Word> ascii_words(std::string_view text) {
  const auto cls = [&](std::size_t i) { return class_of(static_cast<unsigned char>(text[i])); };
  const auto lowered = [&](std::size_t from, std::size_t to) {
    return detail::ascii_lowered(text.substr(from, std::min(to - from, max_word_bytes)));
  };
  std::vector<Word> out;
  for_each_ascii_run(text, [&](std::size_t i, std::size_t end) {
    Word word;
    word.position = static_cast<std::uint32_t>(out.size());
    word.whole = lowered(i, end);
    std::size_t from = i;
    for (std::size_t k = i + 1; k <= end; ++k) {
      if (k < end) {
        const Class prev = cls(k - 1), cur = cls(k);
        const bool split = (prev == Class::digit) != (cur == Class::digit) ||
                           (prev == Class::lower && cur == Class::upper) ||
                           (prev == Class::upper && cur == Class::upper && k + 1 < end &&
                            cls(k + 1) == Class::lower);
        if (!split) continue;
      }
      if (from == i && k == end) break;  // the word does not split: no parts
      word.parts.push_back(lowered(from, k));
      from = k;
    }
    out.push_back(std::move(word));
    return true;
  });
  return out;
}

}  // namespace

namespace {

// The code point `text` starts with and its length in bytes; a length of 0 for bytes that are
// not UTF-8 (or no text).
std::pair<utf8proc_int32_t, std::size_t> first_code_point(std::string_view text) {
  if (text.empty()) return {0, 0};
  utf8proc_int32_t cp = 0;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                  static_cast<utf8proc_ssize_t>(text.size()), &cp);
  return {cp, n > 0 ? static_cast<std::size_t>(n) : 0};
}

}  // namespace

std::size_t cjk_character(std::string_view text) {
  if (text.empty() || static_cast<unsigned char>(text[0]) < 0x80) return 0;
  auto [cp, n] = first_code_point(text);
  // Halfwidth Katakana are Katakana once normalized, as words() sees them.
  if (n == 0 || !(is_cjk(cp) || (cp >= 0xFF66 && cp <= 0xFF9F))) return 0;
  // With what follows it in its grapheme cluster: combining voiced marks, a syllable's
  // conjoining jamo, variation selectors.
  utf8proc_int32_t state = 0;
  std::size_t length = n;
  while (length < text.size()) {
    const auto [next, m] = first_code_point(text.substr(length));
    if (m == 0 || utf8proc_grapheme_break_stateful(cp, next, &state)) break;
    cp = next;
    length += m;
  }
  return length;
}

bool character_boundary(std::string_view text, std::size_t at) {
  if (at == 0 || at >= text.size()) return true;
  if ((static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) return false;
  std::size_t lead = at - 1;
  while (lead > 0 && (static_cast<unsigned char>(text[lead]) & 0xC0) == 0x80) --lead;
  const auto [before, n] = first_code_point(text.substr(lead, at - lead));
  const auto [after, m] = first_code_point(text.substr(at));
  if (n == 0 || m == 0) return true;  // bytes that are not UTF-8 join nothing
  return utf8proc_grapheme_break(before, after);
}

std::string fold(std::string_view text) {
  return mapped(mapped(valid_text(text), normalize), case_fold);
}

std::string case_folded(std::string_view text) { return mapped(valid_text(text), case_fold); }

std::vector<Word> words(std::string_view text) {
  if (ascii(text)) return ascii_words(text);
  const std::string normal = mapped(valid_text(text), normalize);
  std::vector<Char> chars;
  {
    const auto* base = reinterpret_cast<const utf8proc_uint8_t*>(normal.data());
    std::size_t at = 0;
    while (at < normal.size()) {
      utf8proc_int32_t cp = 0;
      const auto n =
          utf8proc_iterate(base + at, static_cast<utf8proc_ssize_t>(normal.size() - at), &cp);
      const std::size_t len = n > 0 ? static_cast<std::size_t>(n) : 1;
      chars.push_back({at, at + len, n > 0 ? class_of(cp) : Class::separator});
      at += len;
    }
  }
  std::vector<Word> out;
  auto text_of = [&](const Char& first, const Char& last) {
    return std::string_view(normal).substr(first.begin, last.end - first.begin);
  };
  for (std::size_t i = 0; i < chars.size();) {
    const Class cls = chars[i].cls;
    if (cls == Class::separator) {
      ++i;
      continue;
    }
    const bool cjk = cls == Class::cjk;
    std::size_t end = i + 1;
    while (end < chars.size() && chars[end].cls != Class::separator &&
           (chars[end].cls == Class::cjk) == cjk)
      ++end;
    const std::span<const Char> run(chars.data() + i, end - i);
    Word word;
    word.position = static_cast<std::uint32_t>(out.size());
    word.whole = cut(mapped(text_of(run.front(), run.back()), case_fold));
    if (cjk) {
      for (std::size_t k = 0; k + 1 < run.size(); ++k)
        word.parts.push_back(mapped(text_of(run[k], run[k + 1]), case_fold));
      if (word.parts.size() == 1) word.parts.clear();  // two characters: the pair is the whole
    } else {
      std::size_t from = 0;
      for (std::size_t k = 1; k <= run.size(); ++k) {
        if (k < run.size() && !splits_before(run, k)) continue;
        word.parts.push_back(cut(mapped(text_of(run[from], run[k - 1]), case_fold)));
        from = k;
      }
      if (word.parts.size() == 1) word.parts.clear();
    }
    if (!word.whole.empty()) out.push_back(std::move(word));
    i = end;
  }
  return out;
}

bool reads_as_parts(const Word& w) {
  if (w.parts.size() < 2) return false;
  std::size_t bytes = 0;
  for (const auto& p : w.parts) bytes += p.size();
  return bytes == w.whole.size();  // a CJK run's pairs overlap: more bytes than the run
}

std::vector<std::string> phrase_as_parts(std::span<const Word> words) {
  std::vector<std::string> out;
  bool split = false;
  for (const auto& w : words) {
    if (reads_as_parts(w)) {
      split = true;
      out.insert(out.end(), w.parts.begin(), w.parts.end());
    } else {
      out.push_back(w.whole);
    }
  }
  if (!split) out.clear();
  return out;
}

namespace {

/// Whether `phrase` is read from place (i, j) of `words` on: j is a part of word i, or npos for
/// the word whole; after a part comes the next part, after the last part or a whole the next
/// word, whole or (reads_as_parts) from its first part.
bool phrase_from(std::span<const Word> words, std::size_t i, std::size_t j,
                 std::span<const std::string> phrase) {
  while (true) {
    const auto& w = words[i];
    if ((j == std::string::npos ? w.whole : w.parts[j]) != phrase.front()) return false;
    phrase = phrase.subspan(1);
    if (phrase.empty()) return true;
    if (j != std::string::npos && j + 1 < w.parts.size()) {
      ++j;
      continue;
    }
    if (++i == words.size()) return false;
    if (reads_as_parts(words[i]) && phrase_from(words, i, 0, phrase)) return true;
    j = std::string::npos;
  }
}

/// Whether some word of ASCII `text` may split: a capital after a letter or digit, or a digit
/// beside a letter. Without one, reading parts finds nothing reading wholes did not.
bool ascii_may_split(std::string_view text) {
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char a = text[i - 1], b = text[i];
    if ((b >= 'A' && b <= 'Z' && (alpha(a) || digit(a))) || (digit(b) && alpha(a)) ||
        (alpha(b) && digit(a)))
      return true;
  }
  return false;
}

/// Whether every word of `phrase` stands somewhere in ASCII `text`, case aside (as a word, a
/// part or inside one): what any reading of the phrase there needs.
bool ascii_holds_each(std::string_view text, std::span<const std::string> phrase) {
  const auto lower = detail::ascii_lowered(text);
  return std::all_of(phrase.begin(), phrase.end(),
                     [&](const std::string& w) { return lower.find(w) != std::string::npos; });
}

/// has_phrase over the words of a text: each read whole or, where it reads as parts, as them.
bool phrase_in(std::span<const Word> all, std::span<const std::string> phrase) {
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (phrase_from(all, i, std::string::npos, phrase)) return true;
    if (reads_as_parts(all[i]))
      for (std::size_t j = 0; j < all[i].parts.size(); ++j)
        if (phrase_from(all, i, j, phrase)) return true;
  }
  return false;
}

bool ascii_phrase_of_wholes(std::string_view text, std::span<const std::string> phrase);

}  // namespace

bool has_phrase(std::string_view text, std::span<const std::string> phrase) {
  if (phrase.empty()) return true;
  if (!ascii(text)) return phrase_in(words(text), phrase);
  // ASCII: the words read whole where they stand, without building them; the words (and their
  // parts) built only where a word splits and each phrase word stands in the text somewhere.
  if (ascii_phrase_of_wholes(text, phrase)) return true;
  return ascii_may_split(text) && ascii_holds_each(text, phrase) && phrase_in(words(text), phrase);
}

namespace {

// ASCII text: the phrase among the words read whole.
bool ascii_phrase_of_wholes(std::string_view text, std::span<const std::string> phrase) {
  // ASCII: each word's whole is its run lowercased and cut at max_word_bytes (ascii_words);
  // the runs are compared where they stand, in one pass. Bit k of `ends` says that the runs
  // just read end with phrase[0..k].
  const auto equal = [&](std::size_t begin, std::size_t end, const std::string& word) {
    const std::size_t length = std::min(end - begin, max_word_bytes);
    if (length != word.size()) return false;
    for (std::size_t j = 0; j < length; ++j) {
      char c = text[begin + j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != word[j]) return false;
    }
    return true;
  };
  const std::size_t n = phrase.size();
  if (n == 0) return true;
  if (n > 64) {
    std::vector<std::pair<std::size_t, std::size_t>> runs;  // [begin, end) of each word
    for_each_ascii_run(text, [&](std::size_t begin, std::size_t end) {
      runs.emplace_back(begin, end);
      return true;
    });
    return has_consecutive(runs.size(), phrase, [&](std::size_t i, const std::string& word) {
      return equal(runs[i].first, runs[i].second, word);
    });
  }
  std::uint64_t ends = 0;
  const std::uint64_t whole = std::uint64_t{1} << (n - 1);
  for_each_ascii_run(text, [&](std::size_t begin, std::size_t end) {
    std::uint64_t here = 0;  // bit k: this run is phrase[k]
    for (std::size_t k = 0; k < n; ++k)
      if (equal(begin, end, phrase[k])) here |= std::uint64_t{1} << k;
    ends = ((ends << 1) | 1) & here;
    return (ends & whole) == 0;
  });
  return (ends & whole) != 0;
}

}  // namespace

namespace {

// One English stemmer per thread: a Snowball stemmer keeps state between calls.
class Stemmer {
 public:
  Stemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {}
  ~Stemmer() {
    if (stemmer_ != nullptr) sb_stemmer_delete(stemmer_);
  }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  /// The stem of `word`, from the memo when the word was stemmed lately. A text's words repeat
  /// (an index build stems the same few thousand words over and over), and a Snowball stem costs
  /// several times a hash lookup. The memo is direct-mapped: a word has one slot, by its hash,
  /// and takes it over from whatever word held it, so it stays at `memo_slots` words of at most
  /// `memo_word_bytes` per thread: 1 MiB of slots, 2.5 MiB were every word that long.
  std::string stem(std::string_view word) {
    if (stemmer_ == nullptr || word.empty()) return std::string(word);
    if (word.size() > memo_word_bytes) return snowball(word);
    if (memo_.empty()) memo_.resize(memo_slots);
    auto& slot = memo_[std::hash<std::string_view>{}(word) & (memo_slots - 1)];
    if (slot.word != word) {
      slot.stem = snowball(word);
      slot.word = word;
    }
    return slot.stem;
  }

 private:
  struct Slot {
    std::string word;  // empty: no word yet (an empty word is never looked up)
    std::string stem;
  };
  std::string snowball(std::string_view word) {
    const sb_symbol* s = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
    if (s == nullptr) return std::string(word);  // out of memory: the word unstemmed
    return std::string(reinterpret_cast<const char*>(s),
                       static_cast<std::size_t>(sb_stemmer_length(stemmer_)));
  }

  static constexpr std::size_t memo_slots = std::size_t{1} << 14;
  static constexpr std::size_t memo_word_bytes = 32;  // longer words are rare: stemmed each time
  sb_stemmer* stemmer_;
  std::vector<Slot> memo_;
};

}  // namespace

std::string stem(std::string_view folded_word) {
  thread_local Stemmer stemmer;
  return stemmer.stem(folded_word);
}

}  // namespace catalog::search

#endif  // CATALOG_IMPL_SEARCH_ANALYZER_IPP
