#ifndef CATALOG_IMPL_SEARCH_FILTER_IPP
#define CATALOG_IMPL_SEARCH_FILTER_IPP

// Filters (docs/SEMANTICS.md §16 "query_filter"): checked, narrowed by the facet keys (F), and
// tested on each candidate's search document.

#include <catalog/detail/search/query_parts.hpp>

#include <algorithm>
#include <iterator>
#include <string>

namespace catalog::engine::search_query {

namespace {

struct NamedValueField {
  std::string_view name;
  ValueField field;
};
constexpr NamedValueField filter_fields[] = {
    {"entityType", ValueField::entity_type},
    {"owners.id", ValueField::owners_id},
    {"owners.name", ValueField::owners_name},
    {"owners.displayName", ValueField::owners_display_name},
    {"tags.tagFQN", ValueField::tags},
    {"domains.id", ValueField::domains_id},
    {"domains.fullyQualifiedName", ValueField::domains_fqn},
    {"service.name", ValueField::service},
    {"glossary.name", ValueField::glossary},
    {"status", ValueField::status},
    {"deleted", ValueField::deleted},
};

/// The F keys' field of a filter field; nullopt for those each Y record holds (entityType,
/// deleted).
std::optional<si::FacetKey> facet_key_of(ValueField field) {
  switch (field) {
  case ValueField::owners_id: return si::FacetKey::owner_id;
  case ValueField::owners_name: return si::FacetKey::owner_name;
  case ValueField::owners_display_name: return si::FacetKey::owner_display_name;
  case ValueField::tags: return si::FacetKey::tag;
  case ValueField::domains_id: return si::FacetKey::domain_id;
  case ValueField::domains_fqn: return si::FacetKey::domain_fqn;
  case ValueField::service: return si::FacetKey::service;
  case ValueField::glossary: return si::FacetKey::glossary;
  case ValueField::status: return si::FacetKey::status;
  case ValueField::entity_type:
  case ValueField::deleted: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ValueField> value_field(std::string_view name) {
  for (const auto& f : filter_fields)
    if (f.name == name) return f.field;
  return std::nullopt;
}

Result<IdSet> filter_ids(Tx& tx, const SearchFilter& f, std::size_t limit) {
  if (f.term) {
    const auto field = value_field(f.term->field);
    const auto key = field ? facet_key_of(*field) : std::nullopt;
    if (!key) return IdSet();
    std::vector<Uuid> ids;
    for (const auto& value : f.term->values) {
      const auto prefix = keys::facet_prefix(si::facet_entry(*key, value));
      auto cursor = tx.raw().scan(storage::prefix_range(prefix), storage::Direction::forward);
      if (!cursor) return cursor.error();
      for (auto& c = *cursor; c->valid();) {
        if (ids.size() >= limit) return IdSet();
        auto k = keys::decode_text_id('F', c->key());
        if (!k) return fail(Errc::storage, "corrupt facet key " + keys::printable(c->key()));
        ids.push_back(k->id);
        if (auto n = c->next(); !n) return n.error();
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return IdSet(std::move(ids));
  }
  // As matches() reads a bool: every must and filter; else any should; must_not narrows nothing.
  IdSet out;
  for (const auto* all : {&f.must, &f.filter})
    for (const auto& c : *all) {
      auto ids = filter_ids(tx, c, limit);
      if (!ids) return ids.error();
      if (!*ids) continue;
      if (!out) {
        out = std::move(*ids);
      } else {
        std::vector<Uuid> both;
        std::set_intersection(out->begin(), out->end(), (*ids)->begin(), (*ids)->end(),
                              std::back_inserter(both));
        *out = std::move(both);
      }
    }
  if (f.must.empty() && f.filter.empty() && !f.should.empty()) {
    std::vector<Uuid> any;
    for (const auto& c : f.should) {
      auto ids = filter_ids(tx, c, limit);
      if (!ids) return ids.error();
      if (!*ids) return IdSet();  // one alternative not narrowed: none is
      any.insert(any.end(), (*ids)->begin(), (*ids)->end());
      if (any.size() > limit) return IdSet();
    }
    std::sort(any.begin(), any.end());
    any.erase(std::unique(any.begin(), any.end()), any.end());
    out = std::move(any);
  }
  return out;
}

bool matches(const SearchFilter& f, const si::RankingView& d, const si::FacetView& v) {
  if (f.term) {
    // check_filter refused every other name.
    const auto field = value_field(f.term->field);
    if (!field) return false;
    bool found = false;
    for_each_value(d, v, *field, [&](std::string_view value) {
      found = found || std::find(f.term->values.begin(), f.term->values.end(), value) !=
                           f.term->values.end();
    });
    return found;
  }
  for (const auto* all : {&f.must, &f.filter})
    for (const auto& c : *all)
      if (!matches(c, d, v)) return false;
  for (const auto& c : f.must_not)
    if (matches(c, d, v)) return false;
  if (f.must.empty() && f.filter.empty() && !f.should.empty())
    return std::any_of(f.should.begin(), f.should.end(),
                       [&](const SearchFilter& c) { return matches(c, d, v); });
  return true;
}

Result<void> check_filter(const SearchFilter& f, std::size_t depth) {
  if (f.term) {
    if (!value_field(f.term->field))
      return fail(Errc::invalid_parameter,
                  "Invalid parameter query_filter: unsupported field " + f.term->field);
    return {};
  }
  // Bools nest up to max_filter_depth deep; a term is a leaf, not a level.
  if (depth > max_filter_depth)
    return fail(Errc::invalid_parameter, "Invalid parameter query_filter: nested deeper than " +
                                             std::to_string(max_filter_depth));
  for (const auto* all : {&f.must, &f.should, &f.must_not, &f.filter})
    for (const auto& c : *all)
      if (auto r = check_filter(c, depth + 1); !r) return r;
  return {};
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_FILTER_IPP
