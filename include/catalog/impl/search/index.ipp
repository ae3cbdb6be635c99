#ifndef CATALOG_IMPL_SEARCH_INDEX_IPP
#define CATALOG_IMPL_SEARCH_INDEX_IPP

// The search index's documents (docs/SEARCH_INDEX.md): building an entity's document from its
// record, and the codec of documents, terms and postings. What writes them is index_writes.ipp.

#include <catalog/detail/search/analyzer.hpp>
#include <catalog/detail/search/index.hpp>

#include <catalog/detail/engine/reference_sort.hpp>
#include <catalog/detail/json_mapping.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>

namespace catalog::engine::search_index {

namespace {

// ---- building ----

/// Counts the words of a document's fields into its terms and lengths.
class TermCounter {
 public:
  TermCounter(bool analyse, Analysed* analysed) : analyse_(analyse), shared_(analysed) {}
  void add(Field field, std::string_view text, std::vector<FieldText>* texts) {
    if (text.empty()) return;
    if (texts) texts->push_back(FieldText{field, std::string(text)});
    if (!analyse_) return;
    // The words stay here (or in shared_) until finish(): occurrences are views of them, so a
    // word that occurs again costs a view, not a string.
    const auto& words = analyse(text);
    lengths_[static_cast<std::size_t>(field)] += static_cast<std::uint32_t>(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto& w = words[i];
      const auto* next =
          i + 1 < words.size() && !words[i + 1].whole.empty() ? &words[i + 1] : nullptr;
      // A phrase reads a word whole or, where it splits (customerOrders), as its parts one
      // after another (search::reads_as_parts): each occurrence keeps what may follow it, the
      // next part, or the next word whole or its first part.
      const bool parted = search::reads_as_parts(w);
      for (std::size_t k = 0; k < w.parts.size(); ++k) {
        const auto& p = w.parts[k];
        if (p == w.whole) continue;
        if (parted && k + 1 < w.parts.size())
          count(p, field, true, word_hash(w.parts[k + 1]));
        else if (parted && next)
          count(p, field, true, word_hash(next->whole));
        else
          count(p, field);
      }
      if (next)
        count(w.whole, field, true, word_hash(next->whole));
      else
        count(w.whole, field);
      if (next && search::reads_as_parts(*next)) {
        follow(w.whole, field, word_hash(next->parts.front()));
        if (parted) follow(w.parts.back(), field, word_hash(next->parts.front()));
      }
    }
  }
  /// The terms sorted by (word, field), one per pair, with the stems of the stemmed fields'
  /// words. A word's stem is taken once per field however often the word occurs, and counts
  /// every occurrence of every word with that stem.
  Document finish(Document d) {
    // Sorted, a (word, field)'s occurrences stand together, those followed by a word last, in
    // the order of the hashes of what follows.
    std::sort(seen_.begin(), seen_.end());
    std::vector<Term> terms;
    for (std::size_t i = 0; i < seen_.size();) {
      const Seen& first = seen_[i];
      Term t{std::string(first.word), first.field, 0, {}};
      std::size_t end = i;
      std::uint32_t counted = 0;
      for (; end < seen_.size() && seen_[end].word == first.word && seen_[end].field == first.field;
           ++end) {
        if (seen_[end].followed && (t.next.empty() || t.next.back() != seen_[end].next))
          t.next.push_back(seen_[end].next);
        counted += seen_[end].counted ? 1 : 0;
      }
      t.count = counted;
      terms.push_back(std::move(t));
      i = end;
    }
    const std::size_t words = terms.size();
    for (std::size_t i = 0; i < words; ++i) {
      const Term& t = terms[i];
      if (!stemmed(t.field)) continue;
      auto s = search::stem(t.word);
      if (s == t.word) continue;
      s.insert(s.begin(), stem_marker);
      terms.push_back(Term{std::move(s), t.field, t.count, {}});
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
  /// One occurrence of a word in a field, and the word_hash of a word a phrase may read after
  /// it there; or (not counted) another word that may follow an occurrence counted already.
  struct Seen {
    std::string_view word;
    Field field;
    bool followed;
    std::uint32_t next;
    bool counted;
    friend auto operator<=>(const Seen&, const Seen&) = default;
  };
  void count(const std::string& word, Field field, bool followed = false, std::uint32_t next = 0) {
    if (!word.empty()) seen_.push_back(Seen{word, field, followed, next, true});
  }
  void follow(const std::string& word, Field field, std::uint32_t next) {
    if (!word.empty()) seen_.push_back(Seen{word, field, true, next, false});
  }
  /// The words of `text`: from shared_ when it has them (analysed there the first time), else
  /// analysed into analysed_.
  const std::vector<search::Word>& analyse(std::string_view text) {
    if (!shared_) return analysed_.emplace_back(search::words(text));
    auto it = shared_->find(text);
    if (it == shared_->end()) it = shared_->emplace(std::string(text), search::words(text)).first;
    return it->second;
  }
  bool analyse_;
  Analysed* shared_;
  std::deque<std::vector<search::Word>> analysed_;  // a deque: its elements never move
  std::vector<Seen> seen_;  // every occurrence
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
  /// Four bytes, least significant first.
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  /// Term::next: the count, then each hash.
  void hashes(const std::vector<std::uint32_t>& next) {
    number(next.size());
    for (auto h : next) u32(h);
  }
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
  bool u32(std::uint32_t& v) {
    if (in_.size() < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(in_[i])} << (8 * i);
    in_.remove_prefix(4);
    return true;
  }
  /// What Writer::hashes wrote, appended to `out`; false unless ascending. Null `out`: skipped
  /// (a query that does not need them), their order unchecked.
  bool hashes(std::vector<std::uint32_t>* out) {
    std::uint64_t n = 0;
    if (!number(n) || n > in_.size() / 4) return false;
    if (!out) {
      in_.remove_prefix(4 * n);
      return true;
    }
    std::uint32_t last = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint32_t h = 0;
      if (!u32(h) || (i > 0 && h <= last)) return false;
      last = h;
      out->push_back(h);
    }
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

/// In a posting's field byte: words follow the word in that field.
constexpr std::uint64_t has_next = 0x40;
static_assert(field_count <= has_next);

constexpr std::uint64_t format = 3;  // the layout of encode()'s bytes

}  // namespace

// What this reads, prefetch_indexed (index_writes.ipp) asks for ahead: the two change together.
Result<Related> read_related(Tx& tx, const Record& r) {
  Related out;
  auto owners = referenced(tx, r.id, Rel::owns, true);
  if (!owners) return owners.error();
  for (const auto& o : *owners)
    out.owners.push_back(Owner{o.id, o.name.value_or(""), o.display_name.value_or("")});
  auto domains = referenced(tx, r.id, Rel::domain, false);
  if (!domains) return domains.error();
  for (const auto& dm : *domains)
    out.domains.emplace_back(dm.id, dm.fully_qualified_name.value_or(""));
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

Document make_document(const Record& r, Related* related, std::vector<FieldText>* texts,
                       bool analyse, Analysed* analysed) {
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
  TermCounter c(analyse, analysed);
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

Related related_of(const Document& d) {
  return Related{d.owners, d.domains, d.up_votes, d.service, d.glossary};
}

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
  // Per field: the field (with has_next when words follow it there), the count, the length
  // class, then the following words when there are any.
  Writer w;
  for (const auto& t : terms) {
    w.number(static_cast<std::uint64_t>(t.field) | (t.next.empty() ? 0 : has_next));
    w.number(t.count);
    w.number(length_class(lengths[static_cast<std::size_t>(t.field)]));
    if (!t.next.empty()) w.hashes(t.next);
  }
  return std::move(w.out);
}

bool decode_posting(std::string_view bytes, std::vector<PostingField>& out, PostingNext* next) {
  out.clear();
  Reader r(bytes);
  while (!r.done()) {
    PostingField f;
    std::uint64_t field = 0;
    if (!r.number(field) || (field & ~has_next) > field_count - 1 ||
        !r.small(f.count, 0xffffffff) || !r.small(f.length_class, length_class(0xffffffffu)))
      return false;
    f.field = static_cast<Field>(field & ~has_next);
    if ((field & has_next) && !r.hashes(next ? &next->hashes : nullptr)) return false;
    if (next) next->ends.push_back(static_cast<std::uint32_t>(next->hashes.size()));
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
