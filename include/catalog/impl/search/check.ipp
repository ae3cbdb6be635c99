#ifndef CATALOG_IMPL_SEARCH_CHECK_IPP
#define CATALOG_IMPL_SEARCH_CHECK_IPP

#include <catalog/detail/search/check.hpp>


namespace catalog::engine::search_index {

namespace {
constexpr std::string_view repair = " (catalog-admin reindex rebuilds the index)";
}

Result<void> Checker::entity(const Record& r) {
  if (!searched(r.kind)) return {};
  auto y = tx_.raw().get(keys::search_doc(r.id));
  if (!y) return y.error();
  if (!*y)
    problem_(keys::search_doc(r.id), "missing: the search document of " +
                                         std::string(type_name(r.kind)) + " " +
                                         std::string(r.fqn()) + std::string(repair));
  return {};
}

Result<void> Checker::key(std::string_view key, std::string_view value) {
  switch (key[0]) {
  case 'G': {
    auto k = keys::decode_field_stats(key);
    if (!k || value.size() != 16 || (k->field >= field_count && k->field != all_documents)) {
      problem_(key, "malformed search statistic");
      return {};
    }
    auto& s = stored_stats_[k->field == all_documents ? field_count : k->field];
    s.documents += static_cast<std::int64_t>(keys::decode_u64(value.substr(0, 8)));
    s.length += static_cast<std::int64_t>(keys::decode_u64(value.substr(8)));
    return {};
  }
  case 'J':
  case 'K':
    if (!keys::decode_text_id(key[0], key) || !value.empty())
      problem_(key, "malformed typeahead key");
    ++(key[0] == 'K' ? names_ : name_words_);
    return {};
  case 'X': {
    ++postings_;
    std::vector<std::pair<Field, std::uint32_t>> counts;
    if (!keys::decode_text_id('X', key) || !decode_posting(value, counts))
      problem_(key, "malformed search posting");
    return {};
  }
  case 'Y': return document(key, value);
  }
  return {};
}

Result<void> Checker::document(std::string_view key, std::string_view value) {
  auto id = keys::decode_search_doc(key);
  auto stored = decode_document(value);
  if (!id || !stored) {
    problem_(key, "malformed search document");
    return {};
  }
  auto r = tx_.find(*id);
  if (!r) {
    if (r.error().code() != Errc::storage) return r.error();
    return {};  // a record that does not decode is reported under its own key
  }
  if (!*r) {
    problem_(key, "search document of a missing entity" + std::string(repair));
    return {};
  }
  auto built = build(tx_, **r, nullptr);
  if (!built) return built.error();
  if (!*built) {
    problem_(key, "search document of an entity that is not searched" + std::string(repair));
    return {};
  }
  const auto& d = **built;
  if (encode(d) != value) {
    problem_(key, "search document differs from what " + std::string(type_name(d.kind)) + " " +
                      d.fqn + " makes now" + std::string(repair));
    return {};
  }
  // Each posting, with its value.
  for (const auto& terms : postings(d)) {
    ++expected_postings_;
    const auto k = keys::posting(terms.front().word, d.id);
    auto v = tx_.raw().get(k);
    if (!v) return v.error();
    if (!*v)
      problem_(k, "missing: the posting of a word of " + d.fqn + std::string(repair));
    else if (**v != encode_posting(terms))
      problem_(k, "posting differs from the document of " + d.fqn + std::string(repair));
  }
  for (const auto& n : name_entries(d)) {
    ++expected_names_;
    auto v = tx_.raw().get(keys::name_entry(n, d.id));
    if (!v) return v.error();
    if (!*v) problem_(keys::name_entry(n, d.id), "missing: typeahead name" + std::string(repair));
  }
  for (const auto& w : name_words(d)) {
    ++expected_name_words_;
    auto v = tx_.raw().get(keys::name_word(w, d.id));
    if (!v) return v.error();
    if (!*v) problem_(keys::name_word(w, d.id), "missing: typeahead word" + std::string(repair));
  }
  for (std::size_t f = 0; f < field_count; ++f)
    if (d.lengths[f] > 0) {
      ++expected_stats_[f].documents;
      expected_stats_[f].length += d.lengths[f];
    }
  ++expected_stats_[field_count].documents;
  return {};
}

Result<void> Checker::finish() {
  if (postings_ != expected_postings_)
    problem_("X", std::to_string(postings_) + " search postings stored, but the documents hold " +
                      std::to_string(expected_postings_) + std::string(repair));
  if (names_ != expected_names_)
    problem_("K", std::to_string(names_) + " typeahead names stored, but the documents have " +
                      std::to_string(expected_names_) + std::string(repair));
  if (name_words_ != expected_name_words_)
    problem_("J", std::to_string(name_words_) + " typeahead words stored, but the documents have " +
                      std::to_string(expected_name_words_) + std::string(repair));
  for (std::size_t f = 0; f <= field_count; ++f) {
    const auto& s = stored_stats_[f];
    const auto& e = expected_stats_[f];
    if (s.documents != e.documents || s.length != e.length)
      problem_(keys::field_stats(f == field_count ? all_documents : static_cast<unsigned>(f), 0),
               "search statistics of field " + std::to_string(f) + " are " +
                   std::to_string(s.documents) + " documents of length " +
                   std::to_string(s.length) + ", but the documents make " +
                   std::to_string(e.documents) + " of length " + std::to_string(e.length) +
                   std::string(repair));
  }
  return {};
}

}  // namespace catalog::engine::search_index

#endif  // CATALOG_IMPL_SEARCH_CHECK_IPP
