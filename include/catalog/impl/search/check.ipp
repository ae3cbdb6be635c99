#ifndef CATALOG_IMPL_SEARCH_CHECK_IPP
#define CATALOG_IMPL_SEARCH_CHECK_IPP

#include <catalog/detail/search/check.hpp>


namespace catalog::engine::search_index {

namespace {
constexpr std::string_view repair = " (catalog-admin reindex rebuilds the index)";

/// Calls f(key, value) for each posting (X), typeahead name (K) and word (J) and facet (F) key
/// `d` makes.
template <class F>
void each_key(const Document& d, F&& f) {
  for (const auto& terms : postings(d))
    f(keys::posting(terms.front().word, d.id), encode_posting(terms, d.lengths));
  for (const auto& n : name_entries(d)) f(keys::name_entry(n, d.id), std::string());
  for (const auto& w : name_words(d)) f(keys::name_word(w, d.id), std::string());
  for (const auto& e : facet_entries(d)) f(keys::facet(e, d.id), std::string());
}

/// The entity `id` as Tx::find reads it, but with a record that does not decode (reported under
/// its own key by verify's pass over the entities) told apart from a read that fails: the first
/// is `undecodable`, the second the error, which ends the check as any failed read does rather
/// than reading as damage to the index.
struct EntityRead {
  std::optional<Record> record;
  bool undecodable = false;
};
Result<EntityRead> find_entity(Tx& tx, const Uuid& id) {
  auto bytes = tx.raw().get_view(keys::entity(id));
  if (!bytes) return bytes.error();
  EntityRead found;
  if (!*bytes) return found;
  if (!decode(**bytes, found.record.emplace())) {
    found.record.reset();
    found.undecodable = true;
  }
  return found;
}
}  // namespace

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

void Checker::Digest::add(std::string_view key, std::string_view value) {
  // Two independent 64-bit hashes of the pair (FNV-1a and a multiply-xorshift mix), summed:
  // addition makes the digest independent of the order the pairs come in.
  std::uint64_t f = 0xcbf29ce484222325u, m = 0x9e3779b97f4a7c15u;
  const auto byte = [&](unsigned char c) {
    f = (f ^ c) * 0x100000001b3u;
    m = (m ^ c) * 0xff51afd7ed558ccdu;
    m ^= m >> 29;
  };
  for (std::size_t n = key.size(), i = 0; i < 4; ++i, n >>= 8)  // the key's length first: the
    byte(static_cast<unsigned char>(n & 0xff));                    // pair's bytes are unambiguous
  for (unsigned char c : key) byte(c);
  for (unsigned char c : value) byte(c);
  ++count;
  a += f;
  b += m ^ (m >> 32);
}

Checker::Digest& Checker::expected(char tag) {
  switch (tag) {
  case 'X': return expected_postings_;
  case 'K': return expected_names_;
  case 'J': return expected_name_words_;
  case 'F':
  default: return expected_facets_;  // each_key makes only these four families
  }
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
    (key[0] == 'K' ? names_ : name_words_).add(key, value);
    return {};
  case 'F':
    if (!keys::decode_text_id('F', key) || !value.empty()) problem_(key, "malformed facet key");
    facets_.add(key, value);
    return {};
  case 'X': {
    postings_.add(key, value);
    std::vector<PostingField> counts;
    if (!keys::decode_text_id('X', key) || !decode_posting(value, counts))
      problem_(key, "malformed search posting");
    return {};
  }
  case 'T':
    // The terms of a document as index versions 2 to 5 kept them: a reindex clears them.
    ++stale_terms_;
    return {};
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
  auto r = find_entity(tx_, *id);
  if (!r) return r.error();
  if (r->undecodable) return {};
  if (!r->record) {
    problem_(key, "search document of a missing entity" + std::string(repair));
    return {};
  }
  auto built = build(tx_, *r->record, nullptr);
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
  // The stored document is the one the entity makes: the keys it makes are what must be stored.
  each_key(d, [&](const std::string& k, const std::string& v) { expected(k[0]).add(k, v); });
  for (std::size_t f = 0; f < field_count; ++f)
    if (d.lengths[f] > 0) {
      ++expected_stats_[f].documents;
      expected_stats_[f].length += d.lengths[f];
    }
  ++expected_stats_[field_count].documents;
  return {};
}

Result<void> Checker::name_differences() {
  // Each document that matched its entity in the scan, found again by a scan of the Y keys (the
  // same read transaction): verify's memory stays independent of the store's size.
  auto one = [&](std::string_view key, std::string_view value) -> Result<void> {
    auto id = keys::decode_search_doc(key);
    if (!id) return {};
    auto r = find_entity(tx_, *id);
    if (!r) return r.error();
    if (!r->record) return {};
    auto built = build(tx_, *r->record, nullptr);
    if (!built) return built.error();
    if (!*built || encode(**built) != value) return {};
    const auto& d = **built;
    Result<void> read;
    each_key(d, [&](const std::string& k, const std::string& expected) {
      if (!read) return;
      auto v = tx_.raw().get(k);
      if (!v) {
        read = v.error();
        return;
      }
      if (k[0] == 'X' && !*v)
        problem_(k, "missing: the posting of a word of " + d.fqn + std::string(repair));
      else if (k[0] == 'X' && **v != expected)
        problem_(k, "posting differs from the document of " + d.fqn + std::string(repair));
      else if (!*v && k[0] == 'F')
        problem_(k, "missing: a facet key of " + d.fqn + std::string(repair));
      else if (!*v)
        problem_(k, std::string("missing: typeahead ") + (k[0] == 'K' ? "name" : "word") +
                        std::string(repair));
    });
    return read;
  };
  auto cursor = tx_.raw().scan(storage::prefix_range("Y"), storage::Direction::forward);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid();) {
    if (auto o = one(c->key(), c->value()); !o) return o.error();
    if (auto n = c->next(); !n) return n.error();
  }
  return {};
}

Result<void> Checker::finish() {
  if (postings_ != expected_postings_ || names_ != expected_names_ ||
      name_words_ != expected_name_words_ || facets_ != expected_facets_)
    if (auto n = name_differences(); !n) return n.error();
  // Counts that differ mean keys no document makes (not named: nothing says whose they were).
  // With equal counts, different digests mean a key missing or different, named above.
  if (postings_.count != expected_postings_.count)
    problem_("X", std::to_string(postings_.count) + " search postings stored, but the documents " +
                      "hold " + std::to_string(expected_postings_.count) + std::string(repair));
  if (names_.count != expected_names_.count)
    problem_("K", std::to_string(names_.count) + " typeahead names stored, but the documents " +
                      "have " + std::to_string(expected_names_.count) + std::string(repair));
  if (name_words_.count != expected_name_words_.count)
    problem_("J", std::to_string(name_words_.count) + " typeahead words stored, but the " +
                      "documents have " + std::to_string(expected_name_words_.count) +
                      std::string(repair));
  if (facets_.count != expected_facets_.count)
    problem_("F", std::to_string(facets_.count) + " facet keys stored, but the documents make " +
                      std::to_string(expected_facets_.count) + std::string(repair));
  if (stale_terms_ != 0)
    problem_("T", std::to_string(stale_terms_) + " search term records of an index version " +
                      "before 6 stored" + std::string(repair));
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
