#ifndef CATALOG_IMPL_SEARCH_ORDER_IPP
#define CATALOG_IMPL_SEARCH_ORDER_IPP

// The order of matches (docs/SEMANTICS.md §16 "Sorting"): by score or a sort field in its
// direction, then name and id; a hit's sort values and search_after's comparison.

#include <catalog/detail/search/query_parts.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <variant>

namespace catalog::engine::search_query {

Result<Order> order_of(const SearchRequest& r, bool has_words) {
  Order o;
  const auto& f = r.sort_field;
  if (f.empty())
    o.field = has_words ? SortField::score : SortField::name;
  else if (f == "_score")
    o.field = SortField::score;
  else if (f == "name.keyword" || f == "name")
    o.field = SortField::name;
  else if (f == "displayName.keyword" || f == "displayName")
    o.field = SortField::display_name;
  else if (f == "updatedAt")
    o.field = SortField::updated_at;
  else if (f == "votes.upVotes")
    o.field = SortField::up_votes;
  else
    return fail(Errc::invalid_parameter, "Invalid parameter sort_field: " + f);
  if (r.sort_order.empty())
    o.descending = o.field == SortField::score;
  else if (r.sort_order == "asc" || r.sort_order == "desc")
    o.descending = r.sort_order == "desc";
  else
    return fail(Errc::invalid_parameter, "Invalid parameter sort_order: " + r.sort_order);
  return o;
}

std::vector<SortValue> sort_values(const Match& m, SortField f) {
  const auto& d = *m.doc;
  switch (f) {
  case SortField::score:
    return {std::int64_t{m.exact}, m.matched, m.score, std::string(d.name), to_string(d.id)};
  case SortField::name: return {std::string(d.name), to_string(d.id)};
  case SortField::display_name: return {std::string(d.display_name), to_string(d.id)};
  case SortField::updated_at: return {d.updated_at, to_string(d.id)};
  case SortField::up_votes: return {d.up_votes, to_string(d.id)};
  }
  return {};
}

namespace {

/// Compares sort values: numbers as numbers, strings as strings (by the sort's shape, the
/// values at one position are of one type).
int compare_value(const SortValue& a, const SortValue& b) {
  auto number = [](const SortValue& v) -> std::optional<double> {
    if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  };
  auto na = number(a), nb = number(b);
  if (na && nb) return *na < *nb ? -1 : *na > *nb ? 1 : 0;
  if (auto* sa = std::get_if<std::string>(&a), *sb = std::get_if<std::string>(&b); sa && sb)
    return sa->compare(*sb) < 0 ? -1 : sa->compare(*sb) > 0 ? 1 : 0;
  return 0;
}

/// The order of matches: by the sort field in its direction, then name and id ascending (what
/// `before` says of their sort values, without making them).
bool ranked_before(const Match& x, const Match& y, const Order& o) {
  const auto& a = *x.doc;
  const auto& b = *y.doc;
  auto directed = [&](auto u, auto v) -> int {
    if (u == v) return 0;
    const bool less = u < v;
    return (less != o.descending) ? -1 : 1;
  };
  int c = 0;
  switch (o.field) {
  case SortField::score:
    c = directed(std::int64_t{x.exact}, std::int64_t{y.exact});
    if (!c) c = directed(x.matched, y.matched);
    if (!c) c = directed(x.score, y.score);
    break;
  case SortField::name: c = directed(std::string_view(a.name), std::string_view(b.name)); break;
  case SortField::display_name:
    c = directed(std::string_view(a.display_name), std::string_view(b.display_name));
    break;
  case SortField::updated_at: c = directed(a.updated_at, b.updated_at); break;
  case SortField::up_votes: c = directed(a.up_votes, b.up_votes); break;
  }
  if (c) return c < 0;
  if (o.field == SortField::score && a.name != b.name) return a.name < b.name;
  return a.id < b.id;  // byte order is the order of the text form
}

}  // namespace

bool before(const std::vector<SortValue>& a, const std::vector<SortValue>& b, const Order& o) {
  const std::size_t keys = a.size() - (o.field == SortField::score ? 2 : 1);  // ranked positions
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int c = compare_value(a[i], b[i]);
    if (c == 0) continue;
    if (i < keys && o.descending) c = -c;
    return c < 0;
  }
  return false;
}

/// Puts the best `n` matches in the order first (as a set, in no particular order).
void select_best(std::vector<Match>& matches, std::size_t n, const Order& o) {
  if (matches.size() <= n) return;
  std::nth_element(matches.begin(), matches.begin() + static_cast<std::ptrdiff_t>(n), matches.end(),
                   [&](const Match& x, const Match& y) { return ranked_before(x, y, o); });
}

/// Orders the first `n` of `[first, last)` as the order ranks them: the best `n` of the range,
/// in order.
void order_first(std::vector<Match>::iterator first, std::vector<Match>::iterator last,
                 std::size_t n, const Order& o) {
  const auto size = static_cast<std::size_t>(last - first);
  std::partial_sort(first, first + static_cast<std::ptrdiff_t>(std::min(n, size)), last,
                    [&](const Match& x, const Match& y) { return ranked_before(x, y, o); });
}

}  // namespace catalog::engine::search_query

#endif  // CATALOG_IMPL_SEARCH_ORDER_IPP
