#ifndef CATALOG_IMPL_SEARCH_HIGHLIGHT_IPP
#define CATALOG_IMPL_SEARCH_HIGHLIGHT_IPP

// Highlights (docs/SEMANTICS.md §16 "Highlights"): the runs of a hit's own texts that hold a
// query word or, where the field is stemmed, a word of its stem, wrapped; a description's
// fragment around its first.

#include <catalog/detail/search/query_parts.hpp>
#include <catalog/detail/utf8.hpp>

#include <algorithm>
#include <catalog/detail/search/analyzer.hpp>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::engine::search_query {

namespace {

// A byte of a word: a letter or digit of ASCII (whatever locale the host set), or any byte of a
// multi-byte character.
bool word_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/// Whether a run of letters and digits holds a highlighted word (or, with `stems`, a word whose
/// stem is one).
bool run_lit(std::string_view run, const std::set<std::string>& words, bool stems) {
  // An ASCII run none of whose lowered text holds a word (or a stem) is not lit: most runs.
  if (std::all_of(run.begin(), run.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    const auto lower = detail::ascii_lowered(run);
    const bool may = std::any_of(words.begin(), words.end(), [&](const std::string& w) {
      std::string_view plain = w;
      if (!plain.empty() && plain[0] == si::stem_marker) {
        // A stem is mostly a prefix of its words, but not always (city: citi): its start.
        plain.remove_prefix(1);
        if (plain.size() > 3) plain.remove_suffix(1);
      }
      return !plain.empty() && lower.find(plain) != std::string::npos;
    });
    if (!may) return false;
  }
  auto is_lit = [&](const std::string& s) {
    if (words.count(s)) return true;
    if (!stems) return false;
    std::string stem(1, si::stem_marker);
    stem += search::stem(s);
    return words.count(stem) > 0;
  };
  for (const auto& w : search::words(run))
    if (is_lit(w.whole) || std::any_of(w.parts.begin(), w.parts.end(), is_lit)) return true;
  return false;
}

/// Whether byte `at` of `text` continues a character begun before it.
bool continuation(std::string_view text, std::size_t at) {
  return (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
}

/// Calls `f(start, run, lit)` for each run of a run of Han, Kana or Hangul characters (`run`,
/// at `start` of the text): the characters of the pairs (or the one character) that are
/// highlighted words, lit, and the others between them, as words() pairs such a run.
template <class F>
bool each_cjk_run(std::string_view run, std::size_t start, const std::set<std::string>& words,
                  F& f) {
  // Only a word with such characters can light them: without one, the run is not folded.
  if (std::none_of(words.begin(), words.end(), [](const std::string& w) {
        return std::any_of(w.begin(), w.end(),
                           [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
      }))
    return f(start, run, false);
  std::vector<std::size_t> at;  // where each character starts, then the run's end
  for (std::size_t i = 0; i < run.size();) {
    at.push_back(i);
    i += std::max<std::size_t>(1, search::cjk_character(run.substr(i)));
  }
  at.push_back(run.size());
  const std::size_t n = at.size() - 1;
  std::vector<bool> lit(n, false);
  if (words.count(search::fold(run)) > 0) lit.assign(n, true);
  for (std::size_t k = 0; k + 1 < n; ++k)
    if (words.count(search::fold(run.substr(at[k], at[k + 2] - at[k]))) > 0)
      lit[k] = lit[k + 1] = true;
  for (std::size_t k = 0; k < n;) {
    std::size_t e = k + 1;
    while (e < n && lit[e] == lit[k]) ++e;
    if (!f(start + at[k], run.substr(at[k], at[e] - at[k]), bool(lit[k]))) return false;
    k = e;
  }
  return true;
}

/// Calls `f(start, run, lit)` for each run of `text`: the runs of letters and digits, split
/// where Han, Kana or Hangul begin or end (words() splits there too; such a run is lit by its
/// pairs), and the runs of other bytes between them (never lit), in order; stops where `f`
/// returns false.
template <class F>
void each_run(std::string_view text, const std::set<std::string>& words, bool stems, F&& f) {
  for (std::size_t i = 0; i < text.size();) {
    const bool word = word_byte(static_cast<unsigned char>(text[i]));
    std::size_t e = i + 1;
    while (e < text.size() && word_byte(static_cast<unsigned char>(text[e])) == word) ++e;
    if (!word) {
      if (!f(i, text.substr(i, e - i), false)) return;
      i = e;
      continue;
    }
    for (std::size_t j = i; j < e;) {
      const bool cjk = search::cjk_character(text.substr(j, e - j)) > 0;
      std::size_t k = j;
      if (cjk) {
        while (k < e) {
          const auto length = search::cjk_character(text.substr(k, e - k));
          if (length == 0) break;
          k += length;
        }
        if (!each_cjk_run(text.substr(j, k - j), j, words, f)) return;
      } else {
        ++k;
        while (k < e && (continuation(text, k) || search::cjk_character(text.substr(k, e - k)) == 0))
          ++k;
        const auto run = text.substr(j, k - j);
        if (!f(j, run, run_lit(run, words, stems))) return;
      }
      j = k;
    }
    i = e;
  }
}

/// `text` with each run of letters and digits that holds a highlighted word wrapped; empty
/// when none does.
std::string light(std::string_view text, const std::set<std::string>& words, bool stems) {
  std::string out;
  bool any = false;
  each_run(text, words, stems, [&](std::size_t, std::string_view run, bool lit) {
    if (lit) {
      any = true;
      out += "<span class=\"text-highlighter\">";
      out += run;
      out += "</span>";
    } else {
      out += run;
    }
    return true;
  });
  return any ? out : std::string();
}

/// Where the first run of `text` that light() would wrap starts.
std::optional<std::size_t> first_lit(std::string_view text, const std::set<std::string>& words,
                                     bool stems) {
  std::optional<std::size_t> first;
  each_run(text, words, stems, [&](std::size_t at, std::string_view, bool lit) {
    if (lit) first = at;
    return !lit;
  });
  return first;
}

/// Whether cutting `text` before byte `at` would split a word: the bytes on both sides are of
/// letters or digits, and not the boundary of a Han, Kana or Hangul character (which a run of
/// them may be cut at, as words() pairs it).
bool splits_word(std::string_view text, std::size_t at) {
  if (at == 0 || at >= text.size()) return false;
  if (!word_byte(static_cast<unsigned char>(text[at - 1])) ||
      !word_byte(static_cast<unsigned char>(text[at])))
    return false;
  if (!search::character_boundary(text, at)) return true;
  if (search::cjk_character(text.substr(at)) > 0) return false;
  // After a Han, Kana or Hangul character (its cluster ends here)?
  std::size_t lead = at - 1;
  for (int back = 0; back < 8 && lead > 0; ++back) {
    while (lead > 0 && continuation(text, lead)) --lead;
    if (search::character_boundary(text, lead)) break;
    --lead;
  }
  return search::cjk_character(text.substr(lead)) != at - lead;
}

/// About 150 characters of a description around its first match: from a third of that before
/// it, whole words at both ends.
std::string fragment(std::string_view text, const std::set<std::string>& words) {
  constexpr std::size_t width = 150;
  const auto lit = first_lit(text, words, true);
  if (!lit) return {};
  std::size_t start = *lit;
  for (std::size_t back = 0; back < width / 3 && start > 0; ++back)
    do --start;
    while (start > 0 && continuation(text, start));
  std::size_t end = start, ahead = 0;
  for (; ahead < width && end < text.size(); ++ahead)
    do ++end;
    while (end < text.size() && continuation(text, end));
  // Near the end of the text, the characters that did not fit after go before.
  for (; ahead < width && start > 0; ++ahead)
    do --start;
    while (start > 0 && continuation(text, start));
  while (start > 0 && splits_word(text, start)) ++start;
  while (end < text.size() && end > start && splits_word(text, end)) ++end;
  return light(text.substr(start, end - start), words, true);
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>>
highlights(const std::vector<si::FieldText>& texts, const std::vector<Light>& lights) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  auto add = [&](std::string_view field, std::string lit) {
    if (lit.empty()) return;
    for (auto& [f, list] : out)
      if (f == field) {
        list.push_back(std::move(lit));
        return;
      }
    out.emplace_back(std::string(field), std::vector<std::string>{std::move(lit)});
  };
  std::set<std::string> words;
  for (const auto& ft : texts) {
    // The words of the clauses that search this field, a phrase's where it stands.
    words.clear();
    for (const auto& l : lights)
      if ((l.fields & bit(ft.field)) && (l.phrase.empty() || search::has_phrase(ft.text, l.phrase)))
        words.insert(l.words.begin(), l.words.end());
    if (words.empty()) continue;
    switch (ft.field) {
    case Field::name: add("name", light(ft.text, words, false)); break;
    case Field::display_name: add("displayName", light(ft.text, words, true)); break;
    case Field::description: add("description", fragment(ft.text, words)); break;
    case Field::synonyms: add("synonyms", light(ft.text, words, false)); break;
    case Field::tags: add("tags", light(ft.text, words, false)); break;
    default: break;
    }
  }
  return out;
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_HIGHLIGHT_IPP
