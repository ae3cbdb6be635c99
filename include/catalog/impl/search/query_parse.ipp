#ifndef CATALOG_IMPL_SEARCH_QUERY_PARSE_IPP
#define CATALOG_IMPL_SEARCH_QUERY_PARSE_IPP

// A query's text read into clauses (docs/SEMANTICS.md §16 "Query `q`"): words, phrases, prefixes,
// fields, required and excluded clauses.

#include <catalog/detail/search/query_parts.hpp>

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/utf8.hpp>
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace catalog::engine::search_query {

namespace {

struct ScopedField {
  std::string_view name;
  Field field;
};
constexpr ScopedField scoped_fields[] = {
    {"name", Field::name},
    {"displayName", Field::display_name},
    {"description", Field::description},
    {"fullyQualifiedName", Field::fqn},
    {"tags", Field::tags},
    {"synonyms", Field::synonyms},
    {"owner", Field::owner},
    {"service", Field::service},
    {"glossary", Field::glossary},
    {"domain", Field::domain},
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::size_t count_words(std::string_view q) {
  std::size_t n = 0;
  bool in = false;
  for (char c : q) {
    if (is_space(c))
      in = false;
    else if (!in)
      in = true, ++n;
  }
  return n;
}

std::optional<Field> scoped_field(std::string_view name) {
  for (const auto& s : scoped_fields)
    if (s.name == name) return s.field;
  return std::nullopt;
}

/// Adds the clauses of one typed word (not an operator, not a phrase).
void add_word(Query& query, std::string_view text, Occur occur) {
  std::optional<Field> field;
  if (auto colon = text.find(':'); colon != std::string_view::npos && colon > 0) {
    field = scoped_field(text.substr(0, colon));
    if (field) {
      text.remove_prefix(colon + 1);
    } else {
      // An unknown field: its words are plain words, each its own clause.
      for (auto& w : search::words(text)) {
        Clause c;
        c.occur = occur;
        c.word = QueryWord{std::move(w.whole), std::move(w.parts)};
        query.clauses.push_back(std::move(c));
      }
      return;
    }
  }
  auto set_field = [&](Clause& c) {
    if (field) c.fields = bit(*field), c.scoped = true;
  };
  bool prefix = false;
  while (text.size() > 1 && text.back() == '*') text.remove_suffix(1), prefix = true;
  auto words = search::words(text);
  if (words.empty()) return;
  if (prefix) {
    // One clause: a typed word that splits (`zzqq-aiohttp*`) matches where all its parts stand,
    // the last as a prefix, as a word without `*` matches where all its parts do.
    Clause c;
    c.occur = occur;
    c.type = ClauseType::prefix;
    set_field(c);
    for (std::size_t i = 0; i + 1 < words.size(); ++i)
      c.word.parts.push_back(std::move(words[i].whole));
    c.prefix = std::move(words.back().whole);
    query.clauses.push_back(std::move(c));
    return;
  }
  Clause c;
  c.occur = occur;
  set_field(c);
  if (words.size() == 1) {
    c.word = QueryWord{std::move(words[0].whole), std::move(words[0].parts)};
  } else {
    for (auto& w : words) c.word.parts.push_back(std::move(w.whole));
  }
  query.clauses.push_back(std::move(c));
}

void add_phrase(Query& query, std::string_view text, std::optional<Field> field, Occur occur) {
  auto words = search::words(text);
  if (words.empty()) return;
  Clause c;
  c.occur = occur;
  if (field) c.fields = bit(*field), c.scoped = true;
  if (words.size() == 1 && !search::reads_as_parts(words[0])) {
    c.word = QueryWord{std::move(words[0].whole), std::move(words[0].parts)};
  } else {
    // Several words, or one that splits (`"customerOrders"`): a phrase, read as typed and with
    // the words that split as their parts one after another.
    c.type = ClauseType::phrase;
    if (auto parts = search::phrase_as_parts(words); !parts.empty()) {
      Clause& reading = c.as_parts.emplace_back();
      reading.type = ClauseType::phrase;
      reading.fields = c.fields;
      reading.scoped = c.scoped;
      for (auto& w : parts) reading.phrase_hashes.push_back(si::word_hash(w));
      reading.phrase = std::move(parts);
    }
    for (auto& w : words) {
      c.phrase_hashes.push_back(si::word_hash(w.whole));
      c.phrase.push_back(std::move(w.whole));
    }
  }
  query.clauses.push_back(std::move(c));
}

}  // namespace

Result<void> check_query_text(std::string_view q) {
  if (q.size() > max_query_bytes)
    return fail(Errc::invalid_parameter,
                "Invalid parameter q: longer than " + std::to_string(max_query_bytes) + " bytes");
  if (!detail::valid_utf8(q)) return fail(Errc::invalid_parameter, "Invalid parameter q: not UTF-8");
  return {};
}

/// docs/SEMANTICS.md §16 "Query `q`": never fails for its syntax, only for its size (or bytes
/// that are not text).
Result<Query> parse(std::string_view q) {
  if (auto text = check_query_text(q); !text) return text.error();
  if (count_words(q) > max_query_words)
    return fail(Errc::invalid_parameter,
                "Invalid parameter q: more than " + std::to_string(max_query_words) + " words");
  Query query;
  std::size_t i = 0;
  const std::size_t n = q.size();
  while (i < n && is_space(q[i])) ++i;
  std::size_t e = n;
  while (e > i && is_space(q[e - 1])) --e;
  const auto trimmed = q.substr(i, e - i);
  if (trimmed.empty() || trimmed == "*") {
    query.match_all = true;
    return query;
  }
  query.folded = search::fold(trimmed);
  // First the items: phrases (with their closing quote) and whitespace-separated tokens.
  struct Item {
    std::string_view text;  // a token, or a phrase's inside
    bool phrase = false;
    Occur occur = Occur::should;  // a phrase's own + or -
    std::optional<Field> field;   // a phrase's field
  };
  std::vector<Item> items;
  while (i < n) {
    while (i < n && is_space(q[i])) ++i;
    if (i >= n) break;
    // A phrase: [+-][field:]"..." with its closing quote.
    std::size_t j = i;
    Occur occur = Occur::should;
    if (q[j] == '+' || q[j] == '-') occur = q[j] == '+' ? Occur::must : Occur::must_not, ++j;
    std::size_t k = j;
    while (k < n && std::isalpha(static_cast<unsigned char>(q[k]))) ++k;
    std::optional<Field> field;
    if (k < n && q[k] == ':' && k > j && (field = scoped_field(q.substr(j, k - j))))
      ++k;
    else
      k = j;
    if (k < n && q[k] == '"') {
      if (auto close = q.find('"', k + 1); close != std::string_view::npos) {
        items.push_back({q.substr(k + 1, close - k - 1), true, occur, field});
        i = close + 1;
        continue;
      }
    }
    std::size_t end = i;
    while (end < n && !is_space(q[end])) ++end;
    items.push_back({q.substr(i, end - i), false, Occur::should, std::nullopt});
    i = end;
  }
  // Then the operators, each judged by the items beside it as typed. AND and OR stand between
  // two words or phrases (the second may follow a NOT: `a AND NOT b`); NOT stands before a word
  // or phrase, and not after another NOT. Anywhere else (first, last, beside another operator)
  // an operator is stray, and a stray operator is a plain word.
  const auto keyword = [&](std::size_t at) {
    return at < items.size() && !items[at].phrase &&
           (items[at].text == "AND" || items[at].text == "OR" || items[at].text == "NOT");
  };
  const auto is_not = [&](std::size_t at) { return keyword(at) && items[at].text == "NOT"; };
  const auto word_at = [&](std::size_t at) { return at < items.size() && !keyword(at); };
  const auto operator_at = [&](std::size_t at) {
    if (is_not(at)) return word_at(at + 1) && (at == 0 || !is_not(at - 1));
    return at > 0 && word_at(at - 1) && (word_at(at + 1) || (is_not(at + 1) && word_at(at + 2)));
  };
  bool next_must = false, next_not = false;
  for (std::size_t at = 0; at < items.size(); ++at) {
    const auto& item = items[at];
    if (keyword(at) && operator_at(at)) {
      if (item.text == "AND") {
        if (!query.clauses.empty() && query.clauses.back().occur == Occur::should)
          query.clauses.back().occur = Occur::must;
        next_must = true;
      }
      if (item.text == "NOT") next_not = true;
      continue;
    }
    Occur occur = item.occur;
    auto token = item.text;
    if (!item.phrase) {
      if (token.size() > 1 && (token[0] == '+' || token[0] == '-'))
        occur = token[0] == '+' ? Occur::must : Occur::must_not, token.remove_prefix(1);
    }
    if (next_not) occur = Occur::must_not;
    if (next_must && occur == Occur::should) occur = Occur::must;
    next_must = next_not = false;
    if (item.phrase)
      add_phrase(query, token, item.field, occur);
    else
      add_word(query, token, occur);
  }
  // A word asked twice (`cafe cafe`, `cafe CAFÉ`) is one distinct query word: it is counted and
  // scored once (docs/SEMANTICS.md §16 "Ranking"), with the stronger of its occurrences
  // (excluded, then required).
  std::vector<Clause> kept;
  for (auto& c : query.clauses) {
    auto twin = std::find_if(kept.begin(), kept.end(), [&](const Clause& k) {
      return k.type == c.type && k.fields == c.fields && k.scoped == c.scoped &&
             k.word.whole == c.word.whole && k.word.parts == c.word.parts &&
             k.phrase == c.phrase && k.prefix == c.prefix;
    });
    if (twin == kept.end()) {
      kept.push_back(std::move(c));
    } else if (c.occur == Occur::must_not ||
               (c.occur == Occur::must && twin->occur == Occur::should)) {
      twin->occur = c.occur;
    }
  }
  query.clauses = std::move(kept);
  // Only exclusions (`-x`, `NOT x`, `x -x`): everything else, ordered as `*` is, so that the
  // evaluator and the check of search_after agree on the sort values of a hit.
  if (!query.clauses.empty() &&
      std::none_of(query.clauses.begin(), query.clauses.end(),
                   [](const Clause& c) { return c.occur != Occur::must_not; }))
    query.match_all = true;
  return query;
}

/// The words of a clause whose postings evaluation reads.
std::vector<std::string> atoms_of(const Clause& c) {
  std::vector<std::string> out;
  const bool stems = c.fields & (bit(Field::description) | bit(Field::display_name));
  auto add = [&](const std::string& w) {
    if (w.empty()) return;
    out.push_back(w);
    if (stems) out.push_back(std::string(1, si::stem_marker) + search::stem(w));
  };
  switch (c.type) {
  case ClauseType::word:
    add(c.word.whole);
    for (const auto& p : c.word.parts) add(p);
    break;
  case ClauseType::phrase:
    for (const auto& w : c.phrase) out.push_back(w);
    break;
  case ClauseType::prefix:
    for (const auto& w : c.word.parts) out.push_back(w);
    for (const auto& w : c.expanded) out.push_back(w);
    break;
  }
  return out;
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_QUERY_PARSE_IPP
