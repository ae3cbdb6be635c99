#ifndef CATALOG_IMPL_ENGINE_VALIDATE_IPP
#define CATALOG_IMPL_ENGINE_VALIDATE_IPP

#include <catalog/detail/engine/validate.hpp>

#include <catalog/fqn.hpp>
#include <catalog/json.hpp>
#include <catalog/policy.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <iterator>
#include <type_traits>
#include <variant>

namespace catalog::engine {

namespace json = boost::json;

Result<void> validate_email(std::string_view email, std::string_view field) {
  auto bad = [&](const char* why) {
    return fail(Errc::invalid_value, "Invalid " + std::string(field) + " " +
                                         std::string(email.substr(0, 130)) + ": " + why);
  };
  if (email.size() < 6 || email.size() > 127) return bad("must be 6 to 127 characters");
  auto at = email.find('@');
  if (at == std::string_view::npos || email.find('@', at + 1) != std::string_view::npos || at == 0)
    return bad("must contain exactly one @");
  auto dot = email.find('.', at + 1);
  if (dot == std::string_view::npos || dot == at + 1 || dot + 1 == email.size())
    return bad("needs a domain with a dot after @");
  for (char c : email)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
      return bad("must not contain whitespace");
  return {};
}

Result<std::vector<TagLabel>> normalized_tags(const std::vector<TagLabel>& tags) {
  std::vector<TagLabel> sorted;
  for (auto t : tags) {
    auto chars = std::count_if(t.tag_fqn.begin(), t.tag_fqn.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    });
    if (chars < 1 || chars > 128)
      return fail(Errc::invalid_value, "Invalid tag " + t.tag_fqn.substr(0, 140) +
                                           ": tagFQN must be 1 to 128 characters");
    if (!t.source) t.source = TagSource::classification;
    if (!t.label_type) t.label_type = LabelType::manual;
    if (!t.state) t.state = TagState::confirmed;
    sorted.push_back(std::move(t));
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const TagLabel& a, const TagLabel& b) { return a.tag_fqn < b.tag_fqn; });
  sorted.erase(
      std::unique(sorted.begin(), sorted.end(),
                  [](const TagLabel& a, const TagLabel& b) { return a.tag_fqn == b.tag_fqn; }),
      sorted.end());
  return sorted;
}

Result<json::array> normalize_tags(const std::vector<TagLabel>& tags) {
  auto sorted = normalized_tags(tags);
  if (!sorted) return sorted.error();
  json::array out;
  for (const auto& t : *sorted) out.push_back(detail::to_json(t));
  return out;
}

namespace {
constexpr std::string_view index_data_types[] = {"NUMBER",
                                                 "TEXT",
                                                 "BINARY",
                                                 "TIMESTAMP",
                                                 "TIMESTAMPZ",
                                                 "TIME",
                                                 "DATE",
                                                 "DATETIME",
                                                 "KEYWORD",
                                                 "ARRAY",
                                                 "OBJECT",
                                                 "FLATTENED",
                                                 "NESTED",
                                                 "JOIN",
                                                 "RANGE",
                                                 "IP",
                                                 "VERSION",
                                                 "MURMUR3",
                                                 "AGGREGATE_METRIC_DOUBLE",
                                                 "HISTOGRAM",
                                                 "ANNOTATED-TEXT",
                                                 "COMPLETION",
                                                 "SEARCH_AS_YOU_TYPE",
                                                 "DENSE_VECTOR",
                                                 "RANK_FEATURE",
                                                 "RANK_FEATURES",
                                                 "GEO_POINT",
                                                 "GEO_SHAPE",
                                                 "POINT",
                                                 "SHAPE",
                                                 "PERCOLATOR",
                                                 "BOOLEAN",
                                                 "CONSTANT_KEYWORD",
                                                 "WILDCARD",
                                                 "LONG",
                                                 "INTEGER",
                                                 "SHORT",
                                                 "BYTE",
                                                 "DOUBLE",
                                                 "FLOAT",
                                                 "HALF_FLOAT",
                                                 "SCALED_FLOAT",
                                                 "UNSIGNED_LONG",
                                                 "UNKNOWN"};
}  // namespace

Result<void> validate_index_fields(const std::vector<SearchIndexField>& fields) {
  for (const auto& f : fields) {
    if (f.name.empty())
      return fail(Errc::invalid_value, "Invalid search index field: name must not be empty");
    if (std::find(std::begin(index_data_types), std::end(index_data_types), f.data_type) ==
        std::end(index_data_types))
      return fail(Errc::invalid_value, "Invalid dataType " + f.data_type.substr(0, 64) +
                                           " of search index field " + f.name);
    if (f.children)
      if (auto r = validate_index_fields(*f.children); !r) return r.error();
  }
  return {};
}

Result<void> validate_uri(std::string_view uri, std::string_view field) {
  auto bad = [&] {
    return fail(Errc::invalid_value, "Invalid " + std::string(field) + " " +
                                         std::string(uri.substr(0, 200)) +
                                         ": expected a URI such as http://host:port");
  };
  auto colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0) return bad();
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(uri[0])) return bad();
  for (std::size_t i = 1; i < colon; ++i) {
    char c = uri[i];
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return bad();
  }
  for (char c : uri)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F) return bad();
  return {};
}

Result<void> validate_source_hash(std::string_view hash) {
  if (hash.empty() || hash.size() > 32)
    return fail(Errc::invalid_value, "Invalid sourceHash: must be 1 to 32 characters");
  return {};
}

namespace {
void dedupe(std::vector<Record>& rs) {
  std::vector<Record> out;
  for (auto& r : rs)
    if (std::none_of(out.begin(), out.end(), [&](const Record& o) { return o.id == r.id; }))
      out.push_back(std::move(r));
  rs = std::move(out);
}
}  // namespace

Result<std::vector<Record>> resolve_owners(Tx& tx, const std::vector<EntityReference>& refs) {
  std::vector<Record> out;
  for (const auto& ref : refs) {
    auto kind = kind_from_type(ref.type);
    if (!kind || !info(*kind).may_own)
      return fail(Errc::invalid_value,
                  "Invalid owner type " + ref.type.substr(0, 64) + ": owners are users or teams");
    auto r = tx.live_by_id(*kind, ref.id);
    if (!r) return r.error();
    if (const auto* rule = info(*kind).owner_rule) {
      auto t = r->member(rule->field);
      if (!t || !t->is_string() || t->get_string() != rule->value)
        return fail(Errc::invalid_value,
                    std::string(rule->what) + " " + std::string(r->name()) + " of type " +
                        (t && t->is_string() ? std::string(t->get_string()) : std::string("?")) +
                        " " + std::string(rule->refusal));
    }
    out.push_back(std::move(*r));
  }
  dedupe(out);
  return out;
}

Result<void> check_ref_types(Kind target, const std::vector<EntityReference>& refs,
                             std::string_view field) {
  for (const auto& ref : refs)
    if (ref.type != type_name(target))
      return fail(Errc::invalid_value, "Invalid " + std::string(field) + " type " +
                                           ref.type.substr(0, 64) + ": must be " +
                                           std::string(type_name(target)));
  return {};
}

Result<std::vector<Record>> resolve_refs(Tx& tx, Kind target,
                                         const std::vector<EntityReference>& refs,
                                         std::string_view field) {
  if (auto typed = check_ref_types(target, refs, field); !typed) return typed.error();
  std::vector<Record> out;
  for (const auto& ref : refs) {
    auto r = tx.live_by_id(target, ref.id);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  dedupe(out);
  return out;
}

Result<std::vector<Record>> resolve_ids(Tx& tx, Kind kind, const std::vector<Uuid>& ids) {
  std::vector<Record> out;
  for (const auto& id : ids) {
    auto r = tx.live_by_id(kind, id);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  dedupe(out);
  return out;
}

Result<std::vector<Record>> resolve_fqns(Tx& tx, Kind kind, const std::vector<std::string>& fqns) {
  std::vector<Record> out;
  for (const auto& f : fqns) {
    auto r = tx.live_by_fqn(kind, f);
    if (!r) return r.error();
    out.push_back(std::move(*r));
  }
  dedupe(out);
  return out;
}

Result<void> check_team_parent_count(TeamType type, std::size_t parents) {
  switch (type) {
  case TeamType::division:
    if (parents != 1)
      return fail(Errc::team_rule, "Team of type Division must have exactly one parent");
    return {};
  case TeamType::business_unit:
    if (parents != 1)
      return fail(Errc::team_rule, "Team of type BusinessUnit must have exactly one parent");
    return {};
  case TeamType::organization:
    if (parents != 0) return fail(Errc::team_rule, "Team of type Organization can't have parents");
    return {};
  case TeamType::group:
  case TeamType::department: return {};
  }
  return {};
}

Result<void> check_team_parent_count(TeamType type, std::vector<Uuid> parent_ids) {
  std::sort(parent_ids.begin(), parent_ids.end());
  parent_ids.erase(std::unique(parent_ids.begin(), parent_ids.end()), parent_ids.end());
  return check_team_parent_count(type, parent_ids.size());
}

Result<void> check_team_rules(TeamType type, const std::vector<Record>& parents,
                              const std::vector<Record>& children) {
  auto type_of = [](const Record& r) {
    const auto* team = std::get_if<Team>(&r.value);
    return team ? team->team_type : TeamType::group;
  };
  auto name = [](TeamType t) { return std::string(detail::enum_name(t)); };
  auto allowed = [&](std::initializer_list<TeamType> ok) -> Result<void> {
    for (const auto& p : parents)
      if (std::find(ok.begin(), ok.end(), type_of(p)) == ok.end())
        return fail(Errc::team_rule, "Team of type " + name(type) +
                                         " can't have a parent of type " + name(type_of(p)) + " (" +
                                         std::string(p.name()) + ")");
    return {};
  };
  switch (type) {
  case TeamType::group:
    if (!children.empty())
      return fail(Errc::team_rule, "Team of type Group can't have child teams");
    [[fallthrough]];
  case TeamType::department:
    return allowed({TeamType::department, TeamType::division, TeamType::business_unit,
                    TeamType::organization});
  case TeamType::division:
    if (auto counted = check_team_parent_count(type, parents.size()); !counted) return counted;
    return allowed({TeamType::division, TeamType::business_unit, TeamType::organization});
  case TeamType::business_unit:
    if (auto counted = check_team_parent_count(type, parents.size()); !counted) return counted;
    return allowed({TeamType::business_unit, TeamType::organization});
  case TeamType::organization: return check_team_parent_count(type, parents.size());
  }
  return {};
}

namespace {

Result<void> check_tags(const std::vector<TagLabel>& tags) {
  if (auto n = normalized_tags(tags); !n) return n.error();
  return {};
}

Result<void> check_values(const EntityBase&) { return {}; }

Result<void> check_values(const User& e) { return validate_email(e.email); }

Result<void> check_values(const Team& e) {
  if (e.email) return validate_email(*e.email);
  return {};
}

Result<void> check_values(const Policy& e) { return policy::validate_rules(e.rules); }

Result<void> check_values(const ServiceBase& e) {
  if (e.service_type.empty())
    return fail(Errc::invalid_value, "Invalid serviceType: must not be empty");
  return check_tags(e.tags);
}

Result<void> check_values(const MlModel& e) {
  if (e.server)
    if (auto u = validate_uri(*e.server, wire::server()); !u) return u.error();
  return check_tags(e.tags);
}

Result<void> check_values(const Glossary& e) { return check_tags(e.tags); }

Result<void> check_values(const GlossaryTerm& e) {
  for (const auto& s : e.synonyms)
    if (s.empty()) return fail(Errc::invalid_value, "Invalid synonym: must not be empty");
  return check_tags(e.tags);
}

Result<void> check_values(const SearchIndex& e) {
  if (auto v = validate_index_fields(e.fields); !v) return v.error();
  if (e.source_hash)
    if (auto v = validate_source_hash(*e.source_hash); !v) return v.error();
  return check_tags(e.tags);
}

}  // namespace

Result<void> check_stored_tags(const Record& r) {
  return std::visit(
      [](const auto& e) -> Result<void> {
        if constexpr (requires { e.tags; }) {
          auto normalized = normalize_tags(e.tags);
          if (!normalized) return normalized.error();
          json::array given;
          for (const auto& t : e.tags) given.push_back(detail::to_json(t));
          if (given != *normalized)
            return fail(Errc::invalid_value,
                        "Invalid tags: not as the catalog stores them (each tagFQN once, in "
                        "order, with source, labelType and state)");
        }
        return {};
      },
      r.value);
}

Result<void> check_entity_name(const AnyEntity& entity) {
  return std::visit([](const auto& e) { return fqn::validate_name(e.name); }, entity);
}

Result<void> check_field_values(const AnyEntity& entity) {
  return std::visit([](const auto& e) { return check_values(e); }, entity);
}

Result<void> check_entity_values(const AnyEntity& entity) {
  if (auto n = check_entity_name(entity); !n) return n.error();
  return check_field_values(entity);
}

Result<void> check_entity_values(const Record& r) { return check_entity_values(r.value); }

Result<std::vector<Uuid>> containment_path(Tx& tx, const Uuid& top, const Uuid& bottom) {
  // Breadth first up from `bottom`; `below[x]` is the entity x was reached from.
  std::map<Uuid, Uuid> below{{bottom, bottom}};
  std::deque<Uuid> queue{bottom};
  while (!queue.empty()) {
    const Uuid at = queue.front();
    queue.pop_front();
    if (at == top) {
      std::vector<Uuid> path{at};
      for (Uuid x = at; x != bottom;) path.push_back(x = below.at(x));
      return path;
    }
    auto parents = tx.edges(at, Rel::contains, true);
    if (!parents) return parents.error();
    for (const auto& p : *parents)
      if (below.emplace(p.other, at).second) queue.push_back(p.other);
  }
  return std::vector<Uuid>{};
}

Result<std::string> cycle_text(Tx& tx, const std::vector<Uuid>& path) {
  std::string out;
  for (const auto& id : path) {
    auto r = tx.find(id);
    if (!r) return r.error();
    out += (*r ? std::string((*r)->fqn()) : to_string(id)) + " > ";
  }
  auto first = tx.find(path.front());
  if (!first) return first.error();
  out += *first ? std::string((*first)->fqn()) : to_string(path.front());
  return out;
}

Result<std::optional<std::string>> team_cycle(Tx& tx, const Uuid& team,
                                              const std::vector<Uuid>& parents) {
  for (const auto& p : parents) {
    auto path = containment_path(tx, team, p);
    if (!path) return path.error();
    if (path->empty()) continue;
    auto text = cycle_text(tx, *path);
    if (!text) return text.error();
    return std::optional<std::string>(std::move(*text));
  }
  return std::optional<std::string>();
}

Result<void> check_limits(const json::value& v, std::size_t max_depth, std::size_t max_bytes,
                          std::string_view what) {
  auto extent = catalog::json::measure(v, max_bytes);
  if (extent.bytes > max_bytes)
    return fail(Errc::too_large, std::string(what) + " is larger than " +
                                     std::to_string(max_bytes) + " bytes");
  if (extent.depth > max_depth)
    return fail(Errc::too_deep,
                std::string(what) + " nests deeper than " + std::to_string(max_depth));
  // What no JSON text parses to (docs/SEMANTICS.md §15): text that is not UTF-8 would be stored
  // as no record can be read back, a number that is not finite as null.
  if (!extent.i_json)
    return fail(Errc::invalid_json, std::string(what) +
                                        " holds text that is not UTF-8 or a number that is "
                                        "not finite");
  return {};
}

bool patched_members_read(Kind kind, const json::object& before, const json::object& after) {
  const detail::Layout& layout = layout_of(kind);
  std::size_t kept = 0;  // members of `before` that `after` still has
  std::size_t position = 0;
  for (const auto& kv : after) {
    const auto* was = find_aligned(before, position++, kv.key());
    if (was) ++kept;
    if (was && *was == kv.value()) continue;
    auto at = layout.table.find(kv.key());
    if (!at) return false;
    if (!layout.fields[*at].ops->set_from_json(kv.value(), nullptr, detail::quiet_path))
      return false;
  }
  return kept == before.size();  // a removed member may be a required one: read it whole
}

}  // namespace catalog::engine

#endif  // CATALOG_IMPL_ENGINE_VALIDATE_IPP
