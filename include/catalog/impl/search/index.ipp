#ifndef CATALOG_IMPL_SEARCH_INDEX_IPP
#define CATALOG_IMPL_SEARCH_INDEX_IPP

// The search index kept by every write (docs/SEARCH_INDEX.md): building an entity's document,
// its codec, and the update that writes only the keys whose bytes change.

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/search/index.hpp>

#include <catalog/detail/engine/reference_sort.hpp>
#include <catalog/detail/json_mapping.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <map>
#include <optional>
#include <set>

namespace catalog::engine::search_index {

namespace {

// ---- building ----

/// Counts the words of a document's fields into its terms and lengths.
class TermCounter {
 public:
  explicit TermCounter(bool analyse) : analyse_(analyse) {}
  void add(Field field, std::string_view text, std::vector<FieldText>* texts) {
    if (text.empty()) return;
    if (texts) texts->push_back(FieldText{field, std::string(text)});
    if (!analyse_) return;
    // The words stay here until finish(): occurrences are views of them, so a word that occurs
    // again costs a view, not a string.
    auto& words = analysed_.emplace_back(search::words(text));
    lengths_[static_cast<std::size_t>(field)] += static_cast<std::uint32_t>(words.size());
    for (const auto& w : words) {
      for (const auto& p : w.parts)
        if (p != w.whole) count(p, field);
      count(w.whole, field);
    }
  }
  /// The terms sorted by (word, field), one per pair, with the stems of the stemmed fields'
  /// words. A word's stem is taken once per field however often the word occurs, and counts
  /// every occurrence of every word with that stem.
  Document finish(Document d) {
    std::sort(seen_.begin(), seen_.end());
    std::vector<Term> terms;
    for (std::size_t i = 0; i < seen_.size();) {
      std::size_t end = i + 1;
      while (end < seen_.size() && seen_[end] == seen_[i]) ++end;
      terms.push_back(Term{std::string(seen_[i].first), seen_[i].second,
                           static_cast<std::uint32_t>(end - i)});
      i = end;
    }
    const std::size_t words = terms.size();
    for (std::size_t i = 0; i < words; ++i) {
      const Term& t = terms[i];
      if (!stemmed(t.field)) continue;
      auto s = search::stem(t.word);
      if (s == t.word) continue;
      s.insert(s.begin(), stem_marker);
      terms.push_back(Term{std::move(s), t.field, t.count});
    }
    merge(terms, words);
    std::inplace_merge(terms.begin(), terms.begin() + static_cast<std::ptrdiff_t>(words),
                       terms.end(), before);
    d.terms = std::move(terms);
    d.lengths = lengths_;
    return d;
  }

 private:
  static bool before(const Term& a, const Term& b) {
    return std::tie(a.word, a.field) < std::tie(b.word, b.field);
  }
  /// Sorts terms[from..] and adds up the counts of equal (word, field) pairs there.
  static void merge(std::vector<Term>& terms, std::size_t from) {
    const auto first = terms.begin() + static_cast<std::ptrdiff_t>(from);
    std::sort(first, terms.end(), before);
    auto out = first;
    for (auto in = first; in != terms.end(); ++in) {
      if (out != first && out[-1].word == in->word && out[-1].field == in->field)
        out[-1].count += in->count;
      else {
        if (out != in) *out = std::move(*in);
        ++out;
      }
    }
    terms.erase(out, terms.end());
  }
  void count(const std::string& word, Field field) {
    if (!word.empty()) seen_.emplace_back(word, field);
  }
  bool analyse_;
  std::deque<std::vector<search::Word>> analysed_;  // a deque: its elements never move
  std::vector<std::pair<std::string_view, Field>> seen_;  // every occurrence
  std::array<std::uint32_t, field_count> lengths_{};
};

void add_columns(TermCounter& c, const std::vector<SearchIndexField>& fields,
                 std::vector<FieldText>* texts) {
  for (const auto& f : fields) {
    c.add(Field::columns, f.name, texts);
    if (f.description) c.add(Field::column_descriptions, *f.description, texts);
    if (f.children) add_columns(c, *f.children, texts);
  }
}

Result<std::vector<EntityReference>> referenced(Tx& tx, const Uuid& id, Rel rel, bool reverse) {
  auto edges = tx.edges(id, rel, reverse);
  if (!edges) return edges.error();
  return typed_references(tx, *edges);
}

Result<std::string> container_name(Tx& tx, const std::optional<Uuid>& id) {
  if (!id) return std::string();
  auto c = tx.find(*id);
  if (!c) return c.error();
  return *c ? std::string((*c)->name()) : std::string();
}

// ---- bytes ----

class Writer {
 public:
  void number(std::uint64_t v) {
    while (v >= 0x80) {
      out += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out += static_cast<char>(v);
  }
  void signed_number(std::int64_t v) {
    number((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void text(std::string_view s) {
    number(s.size());
    out += s;
  }
  void id(const Uuid& u) { out.append(reinterpret_cast<const char*>(u.data), sizeof u.data); }
  std::string out;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool number(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      const auto b = static_cast<unsigned char>(in_.front());
      in_.remove_prefix(1);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  template <class T>
  bool small(T& v, std::uint64_t max) {
    std::uint64_t n = 0;
    if (!number(n) || n > max) return false;
    v = static_cast<T>(n);
    return true;
  }
  bool signed_number(std::int64_t& v) {
    std::uint64_t n = 0;
    if (!number(n)) return false;
    v = static_cast<std::int64_t>(n >> 1) ^ -static_cast<std::int64_t>(n & 1);
    return true;
  }
  bool text(std::string& s) {
    std::uint64_t n = 0;
    if (!number(n) || n > in_.size()) return false;
    s.assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  bool id(Uuid& u) {
    if (in_.size() < sizeof u.data) return false;
    std::memcpy(u.data, in_.data(), sizeof u.data);
    in_.remove_prefix(sizeof u.data);
    return true;
  }
  bool done() const { return in_.empty(); }
  /// Where the reader stands in `all`, the bytes it was made with.
  std::size_t position(std::string_view all) const {
    return static_cast<std::size_t>(in_.data() - all.data());
  }
  bool view(std::string_view& s) {
    std::uint64_t n = 0;
    if (!number(n) || n > in_.size()) return false;
    s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view in_;
};

constexpr std::uint64_t format = 2;  // the layout of encode()'s and encode_terms()'s bytes

}  // namespace

namespace {

/// What a document takes from other entities (owners, domains, votes, the service or glossary):
/// read in the transaction, so that the rest of a document is made from values alone.
struct Related {
  std::vector<Owner> owners;
  std::vector<std::pair<Uuid, std::string>> domains;  // id, FQN
  std::int64_t up_votes = 0;
  std::string service;   // ML models, search indexes
  std::string glossary;  // glossary terms
};

Result<Related> read_related(Tx& tx, const Record& r) {
  Related out;
  auto owners = referenced(tx, r.id, Rel::owns, true);
  if (!owners) return owners.error();
  for (const auto& o : *owners)
    out.owners.push_back(Owner{o.id, o.name.value_or(""), o.display_name.value_or("")});
  auto domains = referenced(tx, r.id, Rel::domain, false);
  if (!domains) return domains.error();
  for (const auto& dm : *domains) out.domains.emplace_back(dm.id, dm.fully_qualified_name.value_or(""));
  auto votes = tx.edges(r.id, Rel::votes, true);
  if (!votes) return votes.error();
  out.up_votes =
      std::count_if(votes->begin(), votes->end(), [](const Edge& e) { return e.data == "u"; });
  if (r.kind == Kind::mlmodel || r.kind == Kind::search_index) {
    auto s = container_name(tx, r.container);
    if (!s) return s.error();
    out.service = std::move(*s);
  }
  if (r.kind == Kind::glossary_term) {
    auto g = container_name(tx, r.glossary);
    if (!g) return g.error();
    out.glossary = std::move(*g);
  }
  return out;
}

/// The document of a searched record, from its values alone (`related` null: without what other
/// entities give it). Touches no transaction: a reindex makes documents on another thread.
Document make_document(const Record& r, Related* related, std::vector<FieldText>* texts,
                       bool analyse) {
  Document d;
  d.analyzer = search::analyzer_version;
  d.kind = r.kind;
  d.id = r.id;
  d.deleted = r.deleted();
  const auto& base = r.base();
  d.name = base.name;
  d.display_name = base.display_name.value_or("");
  d.fqn = base.fully_qualified_name;
  d.updated_at = base.updated_at;
  TermCounter c(analyse);
  c.add(Field::name, d.name, texts);
  c.add(Field::display_name, d.display_name, texts);
  c.add(Field::fqn, d.fqn, texts);
  if (base.description) c.add(Field::description, *base.description, texts);

  if (related) {
    d.owners = std::move(related->owners);
    for (const auto& o : d.owners) {
      c.add(Field::owner, o.name, texts);
      c.add(Field::owner, o.display_name, texts);
    }
    d.domains = std::move(related->domains);
    for (const auto& dm : d.domains) c.add(Field::domain, dm.second, texts);
    d.up_votes = related->up_votes;
    if (r.kind == Kind::mlmodel || r.kind == Kind::search_index) {
      d.service = std::move(related->service);
      c.add(Field::service, d.service, texts);
    }
    if (r.kind == Kind::glossary_term) {
      d.glossary = std::move(related->glossary);
      c.add(Field::glossary, d.glossary, texts);
    }
  }

  auto add_tags = [&](const std::vector<TagLabel>& tags) {
    for (const auto& t : tags) {
      d.tags.push_back(t.tag_fqn);
      c.add(Field::tags, t.tag_fqn, texts);
    }
  };
  std::visit(
      [&](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, User>) {
          c.add(Field::email, e.email, texts);
        } else if constexpr (std::is_same_v<E, MlModel>) {
          for (const auto& f : e.ml_features) {
            c.add(Field::columns, f.name, texts);
            if (f.description) c.add(Field::column_descriptions, *f.description, texts);
          }
          add_tags(e.tags);
        } else if constexpr (std::is_same_v<E, SearchIndex>) {
          add_columns(c, e.fields, texts);
          add_tags(e.tags);
        } else if constexpr (std::is_same_v<E, GlossaryTerm>) {
          for (const auto& s : e.synonyms) c.add(Field::synonyms, s, texts);
          if (e.status) d.status = std::string(detail::enum_name(*e.status));
          add_tags(e.tags);
        } else if constexpr (std::is_same_v<E, Glossary> || std::is_same_v<E, MlModelService> ||
                             std::is_same_v<E, SearchService>) {
          add_tags(e.tags);
        }
      },
      r.value);
  return c.finish(std::move(d));
}

}  // namespace

Result<std::optional<Document>> build(Tx& tx, const Record& r, std::vector<FieldText>* texts,
                                      bool analyse, bool related) {
  if (!searched(r.kind)) return std::optional<Document>();
  if (!related) return std::optional<Document>(make_document(r, nullptr, texts, analyse));
  auto rel = read_related(tx, r);
  if (!rel) return rel.error();
  return std::optional<Document>(make_document(r, &*rel, texts, analyse));
}

std::string encode(const Document& d) {
  Writer w;
  w.number(format);
  w.number(d.analyzer);
  w.number(static_cast<std::uint64_t>(d.kind));
  w.id(d.id);
  w.number(d.deleted ? 1 : 0);
  w.text(d.name);
  w.text(d.display_name);
  w.text(d.fqn);
  w.signed_number(d.updated_at);
  w.signed_number(d.up_votes);
  w.text(d.status);
  w.text(d.service);
  w.text(d.glossary);
  w.number(d.owners.size());
  for (const auto& o : d.owners) {
    w.id(o.id);
    w.text(o.name);
    w.text(o.display_name);
  }
  w.number(d.tags.size());
  for (const auto& t : d.tags) w.text(t);
  w.number(d.domains.size());
  for (const auto& [id, fqn] : d.domains) {
    w.id(id);
    w.text(fqn);
  }
  for (auto l : d.lengths) w.number(l);
  return std::move(w.out);
}

std::string encode_terms(const Document& d) {
  Writer w;
  w.number(format);
  w.number(d.terms.size());
  for (const auto& t : d.terms) {
    w.text(t.word);
    w.number(static_cast<std::uint64_t>(t.field));
    w.number(t.count);
  }
  return std::move(w.out);
}

namespace {

/// Reads the facet values of a search document (status, service, glossary, then its owners, tags
/// and domains) as views into its bytes, handing each to `to`: what decode_document copies, and
/// skips for a candidate's ranking, and decode_facets keeps as views. False when the bytes are
/// not that.
template <class To>
bool read_facets(Reader& r, std::size_t limit, To&& to) {
  std::string_view status, service, glossary;
  std::uint64_t n = 0;
  if (!r.view(status) || !r.view(service) || !r.view(glossary)) return false;
  to.texts(status, service, glossary);
  if (!r.small(n, limit)) return false;
  to.owners(n);
  for (std::size_t i = 0; i < n; ++i) {
    Uuid id{};
    std::string_view name, display_name;
    if (!r.id(id) || !r.view(name) || !r.view(display_name)) return false;
    to.owner(i, id, name, display_name);
  }
  if (!r.small(n, limit)) return false;
  to.tags(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view tag;
    if (!r.view(tag)) return false;
    to.tag(i, tag);
  }
  if (!r.small(n, limit)) return false;
  to.domains(n);
  for (std::size_t i = 0; i < n; ++i) {
    Uuid id{};
    std::string_view fqn;
    if (!r.id(id) || !r.view(fqn)) return false;
    to.domain(i, id, fqn);
  }
  return true;
}

/// read_facets into a FacetView (views) or a Document (copies).
struct FacetsInto {
  FacetView* view = nullptr;
  Document* doc = nullptr;
  void texts(std::string_view status, std::string_view service, std::string_view glossary) {
    if (view) view->status = status, view->service = service, view->glossary = glossary;
    if (doc) doc->status = status, doc->service = service, doc->glossary = glossary;
  }
  void owners(std::size_t n) {
    if (view) view->owners.resize(n);
    if (doc) doc->owners.resize(n);
  }
  void owner(std::size_t i, const Uuid& id, std::string_view name, std::string_view display) {
    if (view) view->owners[i] = FacetView::Owner{id, name, display};
    if (doc) doc->owners[i] = Owner{id, std::string(name), std::string(display)};
  }
  void tags(std::size_t n) {
    if (view) view->tags.resize(n);
    if (doc) doc->tags.resize(n);
  }
  void tag(std::size_t i, std::string_view tag) {
    if (view) view->tags[i] = tag;
    if (doc) doc->tags[i] = tag;
  }
  void domains(std::size_t n) {
    if (view) view->domains.resize(n);
    if (doc) doc->domains.resize(n);
  }
  void domain(std::size_t i, const Uuid& id, std::string_view fqn) {
    if (view) view->domains[i] = {id, fqn};
    if (doc) doc->domains[i] = {id, std::string(fqn)};
  }
};

}  // namespace

bool decode_ranking(std::string_view bytes, RankingView& out) {
  Reader r(bytes);
  std::uint64_t f = 0, kind = 0, deleted = 0;
  if (!r.number(f) || f != format || !r.small(out.analyzer, 0xffffffff) ||
      !r.small(kind, std::size(all_kinds) - 1) || !r.id(out.id) || !r.small(deleted, 1) ||
      !r.view(out.name) || !r.view(out.display_name) || !r.view(out.fqn) ||
      !r.signed_number(out.updated_at) || !r.signed_number(out.up_votes))
    return false;
  out.kind = all_kinds[kind];
  out.deleted = deleted != 0;
  const std::size_t facets_at = r.position(bytes);
  if (!read_facets(r, bytes.size(), FacetsInto{})) return false;
  out.facets = bytes.substr(facets_at, r.position(bytes) - facets_at);
  for (auto& l : out.lengths)
    if (!r.small(l, 0xffffffff)) return false;
  return r.done();
}

Result<Document> decode_document(std::string_view bytes, Part part) {
  RankingView v;
  if (!decode_ranking(bytes, v)) return fail(Errc::storage, "corrupt search document");
  Document d;
  d.analyzer = v.analyzer;
  d.kind = v.kind;
  d.id = v.id;
  d.deleted = v.deleted;
  d.name = v.name;
  d.display_name = v.display_name;
  d.fqn = v.fqn;
  d.updated_at = v.updated_at;
  d.up_votes = v.up_votes;
  d.lengths = v.lengths;
  if (part == Part::all) {
    Reader r(v.facets);
    if (!read_facets(r, v.facets.size(), FacetsInto{nullptr, &d}))
      return fail(Errc::storage, "corrupt search document");
  }
  return d;
}

Result<void> decode_terms(std::string_view bytes, Document& d) {
  Reader r(bytes);
  std::uint64_t f = 0, n = 0;
  auto bad = [] { return fail(Errc::storage, "corrupt search terms"); };
  if (!r.number(f) || f != format || !r.small(n, bytes.size())) return bad();
  d.terms.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = d.terms[i];
    if (!r.text(t.word) || !r.small(t.field, field_count - 1) || !r.small(t.count, 0xffffffff))
      return bad();
    // Sorted by (word, field), each pair once: what build makes and postings() groups.
    if (i > 0 && !(std::tie(d.terms[i - 1].word, d.terms[i - 1].field) < std::tie(t.word, t.field)))
      return bad();
  }
  if (!r.done()) return bad();
  return {};
}

bool decode_facets(std::string_view bytes, FacetView& out) {
  Reader r(bytes);
  return read_facets(r, bytes.size(), FacetsInto{&out, nullptr}) && r.done();
}

std::vector<std::span<const Term>> postings(const Document& d) {
  std::vector<std::span<const Term>> out;
  const Term* const terms = d.terms.data();
  for (std::size_t i = 0, n = d.terms.size(); i < n;) {
    std::size_t end = i + 1;
    while (end < n && terms[end].word == terms[i].word) ++end;
    out.emplace_back(terms + i, end - i);
    i = end;
  }
  return out;
}

std::string encode_posting(std::span<const Term> terms,
                           const std::array<std::uint32_t, field_count>& lengths) {
  Writer w;
  for (const auto& t : terms) {
    w.number(static_cast<std::uint64_t>(t.field));
    w.number(t.count);
    w.number(length_class(lengths[static_cast<std::size_t>(t.field)]));
  }
  return std::move(w.out);
}

bool decode_posting(std::string_view bytes, std::vector<PostingField>& out) {
  out.clear();
  Reader r(bytes);
  while (!r.done()) {
    PostingField f;
    if (!r.small(f.field, field_count - 1) || !r.small(f.count, 0xffffffff) ||
        !r.small(f.length_class, length_class(0xffffffffu)))
      return false;
    out.push_back(f);
  }
  return !out.empty();
}

std::vector<std::string> name_entries(const Document& d) {
  std::vector<std::string> out;
  for (const auto* s : {&d.name, &d.display_name})
    if (!s->empty()) out.push_back(search::fold(*s));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::erase_if(out, [](const std::string& s) { return s.empty(); });
  for (auto& s : out) std::replace(s.begin(), s.end(), '\0', ' ');
  return out;
}

std::string facet_entry(FacetKey field, std::string_view value) {
  std::string entry(1, static_cast<char>(field));
  entry += value;
  std::replace(entry.begin() + 1, entry.end(), '\0', ' ');
  entry.resize(keys::cut_search_text(entry).size());
  return entry;
}

std::vector<std::string> facet_entries(const Document& d) {
  std::vector<std::string> out;
  for (const auto& o : d.owners) {
    out.push_back(facet_entry(FacetKey::owner_id, to_string(o.id)));
    out.push_back(facet_entry(FacetKey::owner_name, o.name));
    out.push_back(facet_entry(FacetKey::owner_display_name,
                              o.display_name.empty() ? o.name : o.display_name));
  }
  for (const auto& t : d.tags) out.push_back(facet_entry(FacetKey::tag, t));
  for (const auto& [id, fqn] : d.domains) {
    out.push_back(facet_entry(FacetKey::domain_id, to_string(id)));
    out.push_back(facet_entry(FacetKey::domain_fqn, fqn));
  }
  if (!d.service.empty()) out.push_back(facet_entry(FacetKey::service, d.service));
  if (!d.glossary.empty()) out.push_back(facet_entry(FacetKey::glossary, d.glossary));
  if (!d.status.empty()) out.push_back(facet_entry(FacetKey::status, d.status));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> name_words(const Document& d) {
  std::vector<std::string> out;
  for (const auto* s : {&d.name, &d.display_name})
    for (const auto& w : search::words(*s)) {
      out.push_back(w.whole);
      for (const auto& p : w.parts) out.push_back(p);
    }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

/// Index writes gathered, then made at once in key order (docs/SEARCH_INDEX.md, "Writing").
/// Index keys begin with a word or a name, so an entity's keys are spread over the whole index;
/// the keys of many entities in order fall on the same pages one after another, where LMDB often
/// finds the next without descending from the root, and on pages still in cache. Each key is
/// written at most once (an entity's keys hold its id, and an update visits each entity once);
/// the field statistics, shared by all, are summed and written once per key. Gathering and
/// sorting touch no transaction: a reindex does them on another thread.
class WriteBuffer {
 public:
  Result<void> put(std::string_view key, std::string_view value) {
    add(key, value, false);
    return {};
  }
  Result<void> erase(std::string_view key) {
    add(key, {}, true);
    return {};
  }
  void add_field_stats(unsigned field, unsigned shard, std::int64_t documents,
                       std::int64_t length) {
    if (documents == 0 && length == 0) return;
    auto& s = stats_[{field, shard}];
    s.first += documents;
    s.second += length;
  }
  std::size_t bytes() const { return bytes_.size(); }

  /// Puts the writes in key order, and in the order made where keys are equal (as written one by
  /// one). What is sorted is 24 bytes a write: the key's first 16 bytes (a tag and most of a
  /// word) and its position; whole keys are compared only where those tie.
  void sort() {
    order_.clear();
    order_.reserve(writes_.size());
    for (std::size_t i = 0; i < writes_.size(); ++i) order_.push_back({name_head(key(i)), i});
    sort_references(order_, [&](const HeadKey& a, const HeadKey& b) {
      const int c = key(a.index).compare(key(b.index));
      return c != 0 ? c < 0 : a.index < b.index;
    });
  }

  /// Applies the statistics' sums to their stored values, then every write in the order sort()
  /// gave, and empties the buffer.
  Result<void> write_to(storage::Transaction& txn) {
    for (const auto& [at, delta] : stats_)
      if (auto s = apply_stats(txn, at.first, at.second, delta.first, delta.second); !s) return s;
    stats_.clear();
    // The writes are visited out of the order they were made in: each one's bytes are asked for
    // a little ahead, so that they arrive before LMDB copies them.
    constexpr std::size_t ahead = 8;
    for (std::size_t i = 0; i < order_.size(); ++i) {
      if (i + ahead < order_.size())
        __builtin_prefetch(bytes_.data() + writes_[order_[i + ahead].index].at);
      const std::size_t w = order_[i].index;
      if (writes_[w].erase) {
        if (auto e = txn.erase(key(w)); !e) return e.error();
      } else if (auto p = txn.put(key(w), value(w)); !p) {
        return p.error();
      }
    }
    writes_.clear();
    bytes_.clear();
    order_.clear();
    return {};
  }

 private:
  // A write's key and then its value, at `at` in bytes_.
  struct Write {
    std::size_t at;
    std::uint32_t key_size;
    std::uint32_t value_size;
    bool erase;
  };

  void add(std::string_view k, std::string_view v, bool erase) {
    writes_.push_back({bytes_.size(), static_cast<std::uint32_t>(k.size()),
                       static_cast<std::uint32_t>(v.size()), erase});
    bytes_.append(k);
    bytes_.append(v);
  }
  std::string_view key(std::size_t i) const {
    return std::string_view(bytes_).substr(writes_[i].at, writes_[i].key_size);
  }
  std::string_view value(std::size_t i) const {
    return std::string_view(bytes_).substr(writes_[i].at + writes_[i].key_size,
                                           writes_[i].value_size);
  }

  static Result<void> apply_stats(storage::Transaction& txn, unsigned field, unsigned shard,
                                  std::int64_t documents, std::int64_t length) {
    if (documents == 0 && length == 0) return {};
    const auto key = keys::field_stats(field, shard);
    auto v = txn.get(key);
    if (!v) return v.error();
    std::int64_t d = 0, l = 0;
    if (*v) {
      if ((*v)->size() != 16)
        return fail(Errc::storage, "corrupt search statistic " + keys::printable(key));
      d = static_cast<std::int64_t>(keys::decode_u64((*v)->substr(0, 8)));
      l = static_cast<std::int64_t>(keys::decode_u64((*v)->substr(8)));
    }
    d += documents;
    l += length;
    if (d == 0 && l == 0) {
      if (auto e = txn.erase(key); !e) return e.error();
      return {};
    }
    return txn.put(key, keys::encode_u64(static_cast<std::uint64_t>(d)) +
                            keys::encode_u64(static_cast<std::uint64_t>(l)));
  }

  std::vector<Write> writes_;
  std::string bytes_;  // every write's key and value, one after another
  std::vector<HeadKey> order_;
  std::map<std::pair<unsigned, unsigned>, std::pair<std::int64_t, std::int64_t>> stats_;
};

/// The writes of one update into its transaction, written out every `limit` bytes, so that a
/// large update (a recursive delete of many entities) holds bounded memory.
class IndexWrites {
 public:
  explicit IndexWrites(storage::Transaction& txn) : txn_(txn) {}
  Result<void> put(std::string_view key, std::string_view value) {
    (void)buffer_.put(key, value);
    return buffer_.bytes() >= limit ? flush() : Result<void>();
  }
  Result<void> erase(std::string_view key) {
    (void)buffer_.erase(key);
    return buffer_.bytes() >= limit ? flush() : Result<void>();
  }
  void add_field_stats(unsigned field, unsigned shard, std::int64_t documents,
                       std::int64_t length) {
    buffer_.add_field_stats(field, shard, documents, length);
  }
  Result<void> flush() {
    buffer_.sort();
    return buffer_.write_to(txn_);
  }

 private:
  static constexpr std::size_t limit = std::size_t{8} << 20;  // bytes of keys and values
  storage::Transaction& txn_;
  WriteBuffer buffer_;
};

/// Writes the difference between two sets of `text 0x00 id` keys of one family.
template <class Out, class KeyOf>
Result<void> write_set_difference(Out& out, const std::vector<std::string>& before,
                                  const std::vector<std::string>& after, KeyOf key_of) {
  for (const auto& s : before)
    if (!std::binary_search(after.begin(), after.end(), s))
      if (auto e = out.erase(key_of(s)); !e) return e.error();
  for (const auto& s : after)
    if (!std::binary_search(before.begin(), before.end(), s))
      if (auto p = out.put(key_of(s), ""); !p) return p.error();
  return {};
}

/// What update_document reads of one entity in the transaction: its stored document and terms,
/// its record, and what other entities give its document.
struct Indexed {
  Uuid id{};
  std::optional<std::string> stored, stored_terms;  // Y, T
  std::optional<Record> record;                      // nullopt: none (hard-deleted)
  Related related;
};

/// Adds the bytes of the entity's stored record to `bytes`.
Result<Indexed> read_indexed(Tx& tx, const Uuid& id, std::size_t& bytes) {
  Indexed in;
  in.id = id;
  auto& txn = tx.raw();
  auto stored = txn.get(keys::search_doc(id));
  if (!stored) return stored.error();
  in.stored = std::move(*stored);
  auto stored_terms = txn.get(keys::search_terms(id));
  if (!stored_terms) return stored_terms.error();
  in.stored_terms = std::move(*stored_terms);
  auto r = tx.find(id, bytes);
  if (!r) return r.error();
  in.record = std::move(*r);
  if (in.record && searched(in.record->kind)) {
    auto rel = read_related(tx, *in.record);
    if (!rel) return rel.error();
    in.related = std::move(*rel);
  }
  return in;
}

/// Brings the index of one entity to what it now is, whatever its state, through `out`, from
/// what read_indexed read (consumed); true when a user or team changed what its owned entities
/// show of it. Touches no transaction.
template <class Out>
Result<bool> write_document(Out& out, Indexed& in) {
  const Uuid& id = in.id;
  const auto& stored = in.stored;
  const auto& stored_terms = in.stored_terms;
  std::optional<Document> old;
  // A document that does not decode is replaced whole: its postings, statistics and typeahead
  // keys cannot be known, and verify reports what it left behind. One whose terms are missing or
  // do not decode gives its statistics and names; only its postings are unknown.
  bool old_terms = false;
  if (stored) {
    auto d = decode_document(*stored);
    if (d) {
      old_terms = stored_terms && decode_terms(*stored_terms, *d);
      if (!old_terms) d->terms.clear();
      old = std::move(*d);
    }
  }
  std::optional<Document> now;
  if (in.record && searched(in.record->kind))
    now = make_document(*in.record, &in.related, nullptr, true);
  if (old == now && (old ? old_terms : !stored && !stored_terms)) return false;
  const auto shard = keys::search_shard(id);
  // Postings: only the words whose (field, count) pairs differ. A word's document frequency is
  // the length of its postings, which a query reads whole: no shared count to keep.
  using Words = std::vector<std::span<const Term>>;
  const Words before = old && old_terms ? postings(*old) : Words();
  const Words after = now ? postings(*now) : Words();
  const auto word = [](std::span<const Term> t) -> const std::string& { return t.front().word; };
  // A word's posting holds the length class of each of its fields: where a field's class
  // changed, the postings of its words are written again, changed counts or not.
  std::array<bool, field_count> reclassed{};
  if (old && now)
    for (std::size_t f = 0; f < field_count; ++f)
      reclassed[f] = length_class(old->lengths[f]) != length_class(now->lengths[f]);
  const auto moved = [&](std::span<const Term> t) {
    return std::any_of(t.begin(), t.end(), [&](const Term& x) {
      return reclassed[static_cast<std::size_t>(x.field)];
    });
  };
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && word(*b) < word(*a))) {
      if (auto e = out.erase(keys::posting(word(*b), id)); !e) return e.error();
      ++b;
    } else if (b == before.end() || word(*a) < word(*b)) {
      if (auto p = out.put(keys::posting(word(*a), id), encode_posting(*a, now->lengths)); !p)
        return p.error();
      ++a;
    } else {
      if (!std::equal(a->begin(), a->end(), b->begin(), b->end()) || moved(*a))
        if (auto p = out.put(keys::posting(word(*a), id), encode_posting(*a, now->lengths)); !p)
          return p.error();
      ++a;
      ++b;
    }
  }
  // Field statistics.
  for (std::size_t f = 0; f < field_count; ++f) {
    const std::int64_t lb = old ? old->lengths[f] : 0, la = now ? now->lengths[f] : 0;
    out.add_field_stats(static_cast<unsigned>(f), shard, (la > 0 ? 1 : 0) - (lb > 0 ? 1 : 0),
                        la - lb);
  }
  out.add_field_stats(all_documents, shard, (now ? 1 : 0) - (old ? 1 : 0), 0);
  // Typeahead keys, made of the names alone.
  if (!old || !now || old->name != now->name || old->display_name != now->display_name) {
    const std::vector<std::string> none;
    if (auto k = write_set_difference(
            out, old ? name_entries(*old) : none, now ? name_entries(*now) : none,
            [&](const std::string& s) { return keys::name_entry(s, id); });
        !k)
      return k.error();
    if (auto j = write_set_difference(
            out, old ? name_words(*old) : none, now ? name_words(*now) : none,
            [&](const std::string& s) { return keys::name_word(s, id); });
        !j)
      return j.error();
  }
  // Facet keys, where the facet values changed.
  if (!old || !now || old->owners != now->owners || old->tags != now->tags ||
      old->domains != now->domains || old->service != now->service ||
      old->glossary != now->glossary || old->status != now->status) {
    const std::vector<std::string> none;
    if (auto f = write_set_difference(out, old ? facet_entries(*old) : none,
                                      now ? facet_entries(*now) : none,
                                      [&](const std::string& s) { return keys::facet(s, id); });
        !f)
      return f.error();
  }
  // The document and its terms, each where its bytes changed.
  if (now) {
    if (auto y = encode(*now); !stored || *stored != y)
      if (auto p = out.put(keys::search_doc(id), std::move(y)); !p) return p.error();
    if (!old_terms || old->terms != now->terms)
      if (auto p = out.put(keys::search_terms(id), encode_terms(*now)); !p) return p.error();
  } else {
    if (stored)
      if (auto e = out.erase(keys::search_doc(id)); !e) return e.error();
    if (stored_terms)
      if (auto e = out.erase(keys::search_terms(id)); !e) return e.error();
  }
  const bool owner_kind = (old   ? old->kind
                           : now ? now->kind
                                 : Kind::policy) == Kind::user ||
                          (old   ? old->kind
                           : now ? now->kind
                                 : Kind::policy) == Kind::team;
  return owner_kind && old && now &&
         (old->name != now->name || old->display_name != now->display_name);
}

Result<bool> update_document(Tx& tx, IndexWrites& out, const Uuid& id) {
  std::size_t bytes = 0;
  auto in = read_indexed(tx, id, bytes);
  if (!in) return in.error();
  return write_document(out, *in);
}

/// The writes of some entities' documents, in key order: what a reindex's other thread makes.
WriteBuffer write_documents(std::vector<Indexed> in) {
  WriteBuffer out;
  for (auto& x : in) (void)write_document(out, x);  // a WriteBuffer's writes do not fail
  out.sort();
  return out;
}

/// A thread that makes the writes of a reindex's parts (write_documents), one part at a time,
/// beside the transaction's thread: one thread for a whole step, so that its stemmer's memory and
/// its allocator's arena serve every part. On one core, or where no thread can be started, parts
/// are made where they are given.
class PartMaker {
 public:
  PartMaker() {
    if (std::thread::hardware_concurrency() == 1) return;
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
    }
  }
  PartMaker(const PartMaker&) = delete;
  PartMaker& operator=(const PartMaker&) = delete;
  ~PartMaker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  /// Starts making a part's writes; the part given before must have been taken.
  void give(std::vector<Indexed> in) {
    if (!thread_.joinable()) {
      out_ = write_documents(std::move(in));
      made_ = true;
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_ = std::move(in);
      given_ = true;
    }
    changed_.notify_all();
  }
  /// The writes of the part given last, once made (what making it threw is thrown here).
  WriteBuffer take() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return made_; });
    made_ = false;
    if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    return std::move(out_);
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || given_; });
      if (stop_) return;
      auto in = std::move(in_);
      given_ = false;
      lock.unlock();
      WriteBuffer out;
      std::exception_ptr failed;
      try {
        out = write_documents(std::move(in));
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      out_ = std::move(out);
      failed_ = failed;
      made_ = true;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Indexed> in_;
  WriteBuffer out_;
  std::exception_ptr failed_;
  bool given_ = false, made_ = false, stop_ = false;
  std::thread thread_;  // last: started once the members it reads are
};

}  // namespace

Result<void> update(Tx& tx) {
  IndexWrites out(tx.raw());
  std::set<Uuid> done;
  auto pending = tx.take_touched();
  while (!pending.empty()) {
    std::sort(pending.begin(), pending.end());
    pending.erase(std::unique(pending.begin(), pending.end()), pending.end());
    std::vector<Uuid> next;
    for (const auto& id : pending) {
      if (!done.insert(id).second) continue;
      auto changed = update_document(tx, out, id);
      if (!changed) return changed.error();
      if (*changed) {  // what its owned entities show of their owner changed
        auto owned = tx.edges(id, Rel::owns, false);
        if (!owned) return owned.error();
        for (const auto& e : *owned) next.push_back(e.other);
      }
    }
    // Nothing above touches the Tx's own list; a later write (none here) would.
    pending = std::move(next);
  }
  return out.flush();
}

std::string reindex_progress(const Uuid& last) {
  return keys::id_bytes(last) + keys::encode_u64(index_version);
}

std::optional<Uuid> decode_reindex_progress(std::string_view bytes) {
  if (bytes.size() != 24 || keys::decode_u64(bytes.substr(16)) != index_version)
    return std::nullopt;
  return keys::id_from_bytes(bytes.substr(0, 16));
}

Result<bool> current(Tx& tx) {
  auto v = tx.raw().get(keys::meta(analyzer_meta));
  if (!v) return v.error();
  if (!*v || (*v)->size() != 8 || keys::decode_u64(**v) != index_version) return false;
  auto r = tx.raw().get(keys::meta(reindex_meta));
  if (!r) return r.error();
  return !r->has_value();
}

Result<bool> clear_step(Tx& tx, std::size_t batch) {
  std::uint64_t erased = 0;
  for (char tag : families) {
    auto e = tx.raw().erase_range(storage::prefix_range(std::string(1, tag)), batch - erased);
    if (!e) return e.error();
    erased += *e;
    if (erased >= batch) break;
  }
  return erased > 0;
}

Result<std::optional<Uuid>> index_step(Tx& tx, const std::optional<Uuid>& after, std::size_t batch,
                                       std::uint64_t& indexed) {
  auto range = storage::prefix_range(std::string(1, keys::entity_tag));
  if (after) range.begin = keys::entity(*after) + '\0';
  std::vector<Uuid> ids;
  {
    auto cursor = tx.raw().scan(range, storage::Direction::forward);
    if (!cursor) return cursor.error();
    for (auto& c = *cursor; c->valid() && ids.size() < batch;) {
      if (auto id = keys::decode_entity(c->key())) ids.push_back(*id);
      if (auto n = c->next(); !n) return n.error();
    }
  }
  // Two threads, in turn over parts of the batch (docs/SEARCH_INDEX.md, "Writing"): this one
  // reads a part's entities and writes the keys of the part before, while the other makes the
  // part's documents and their writes in key order (analysis and sorting). The writes are those
  // of update_document, one entity at a time. A part ends at reindex_part_bytes of records, so
  // that large entities hold bounded memory.
  const std::size_t part = std::clamp<std::size_t>((batch + reindex_parts - 1) / reindex_parts, 1,
                                                   reindex_part_limit);
  PartMaker maker;
  bool making = false;  // a part given and not yet taken
  for (std::size_t next = 0; next < ids.size();) {
    std::vector<Indexed> in;
    std::size_t bytes = 0;
    while (next < ids.size() && in.size() < part && bytes < reindex_part_bytes) {
      auto x = read_indexed(tx, ids[next++], bytes);
      if (!x) return x.error();
      in.push_back(std::move(*x));
    }
    indexed += in.size();
    // A part's writes follow the part before's, so that the last write of a key wins as it
    // would one entity at a time (an entity's keys are its own; the statistics are sums).
    std::optional<WriteBuffer> before;
    if (making) before = maker.take();
    maker.give(std::move(in));
    making = true;
    if (before)
      if (auto w = before->write_to(tx.raw()); !w) return w.error();
  }
  if (making)
    if (auto w = maker.take().write_to(tx.raw()); !w) return w.error();
  if (ids.empty()) return std::optional<Uuid>();
  return std::optional<Uuid>(ids.back());
}

Result<std::uint64_t> rebuild(Tx& tx) {
  while (true) {
    auto more = clear_step(tx, 100000);
    if (!more) return more.error();
    if (!*more) break;
  }
  std::uint64_t indexed = 0;
  std::optional<Uuid> after;
  while (true) {
    auto last = index_step(tx, after, 100000, indexed);
    if (!last) return last.error();
    if (!*last) break;
    after = *last;
  }
  if (auto p = tx.raw().put(keys::meta(analyzer_meta), keys::encode_u64(index_version));
      !p)
    return p.error();
  if (auto e = tx.raw().erase(keys::meta(reindex_meta)); !e) return e.error();
  return indexed;
}

Result<std::array<FieldStats, field_count + 1>> field_stats(Tx& tx) {
  std::array<FieldStats, field_count + 1> out{};
  auto cursor = tx.raw().scan(storage::prefix_range("G"), storage::Direction::forward);
  if (!cursor) return cursor.error();
  for (auto& c = *cursor; c->valid();) {
    auto k = keys::decode_field_stats(c->key());
    if (!k || c->value().size() != 16 || (k->field >= field_count && k->field != all_documents))
      return fail(Errc::storage, "corrupt search statistic " + keys::printable(c->key()));
    auto& s = out[k->field == all_documents ? field_count : k->field];
    s.documents += static_cast<std::int64_t>(keys::decode_u64(c->value().substr(0, 8)));
    s.length += static_cast<std::int64_t>(keys::decode_u64(c->value().substr(8)));
    if (auto n = c->next(); !n) return n.error();
  }
  return out;
}

}  // namespace catalog::engine::search_index

#endif  // CATALOG_IMPL_SEARCH_INDEX_IPP
