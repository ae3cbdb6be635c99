#ifndef CATALOG_ENTITIES_HPP
#define CATALOG_ENTITIES_HPP

// Plain structs for every entity kind of docs/SEMANTICS.md §1 with the fields of docs/SEMANTICS.md
// §2, the shapes inside them (references, tags, votes, change descriptions) and the create requests
// of docs/REST.md. Their JSON form is the generic mapping of detail/json_mapping.hpp: camelCase
// names, absent optionals omitted, enumerations checked.

#include <catalog/detail/json_mapping.hpp>
#include <catalog/json.hpp>
#include <catalog/kind.hpp>
#include <catalog/uuid.hpp>
#include <catalog/version.hpp>

#include <boost/describe/class.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace catalog {

// ---- enumerations ----

enum class DomainType { source_aligned, consumer_aligned, aggregate };
enum class TeamType { group, department, division, business_unit, organization };
enum class TermStatus { draft, in_review, approved, deprecated, rejected };
enum class IndexType { index, index_template };
enum class TagSource { classification, glossary };
enum class LabelType { manual, propagated, automated, derived };
enum class TagState { suggested, confirmed };
enum class FeatureDataType { numerical, categorical };
enum class VoteType { voted_up, voted_down, un_voted };
enum class Effect { allow, deny };

}  // namespace catalog

namespace catalog::detail {
#define CATALOG_ENUM_NAMES_(E, N, ...)                                                     \
  template <>                                                                              \
  struct EnumNames<E> {                                                                    \
    static constexpr std::array<std::pair<E, std::string_view>, N> values{{__VA_ARGS__}}; \
  };
CATALOG_ENUM_NAMES_(DomainType, 3, {DomainType::source_aligned, "Source-aligned"},
                    {DomainType::consumer_aligned, "Consumer-aligned"},
                    {DomainType::aggregate, "Aggregate"})
CATALOG_ENUM_NAMES_(TeamType, 5, {TeamType::group, "Group"}, {TeamType::department, "Department"},
                    {TeamType::division, "Division"},
                    {TeamType::business_unit, "BusinessUnit"},
                    {TeamType::organization, "Organization"})
CATALOG_ENUM_NAMES_(TermStatus, 5, {TermStatus::draft, "Draft"},
                    {TermStatus::in_review, "In Review"}, {TermStatus::approved, "Approved"},
                    {TermStatus::deprecated, "Deprecated"}, {TermStatus::rejected, "Rejected"})
CATALOG_ENUM_NAMES_(IndexType, 2, {IndexType::index, "Index"},
                    {IndexType::index_template, "IndexTemplate"})
CATALOG_ENUM_NAMES_(TagSource, 2, {TagSource::classification, "Classification"},
                    {TagSource::glossary, "Glossary"})
CATALOG_ENUM_NAMES_(LabelType, 4, {LabelType::manual, "Manual"},
                    {LabelType::propagated, "Propagated"}, {LabelType::automated, "Automated"},
                    {LabelType::derived, "Derived"})
CATALOG_ENUM_NAMES_(TagState, 2, {TagState::suggested, "Suggested"},
                    {TagState::confirmed, "Confirmed"})
CATALOG_ENUM_NAMES_(FeatureDataType, 2, {FeatureDataType::numerical, "numerical"},
                    {FeatureDataType::categorical, "categorical"})
CATALOG_ENUM_NAMES_(VoteType, 3, {VoteType::voted_up, "votedUp"},
                    {VoteType::voted_down, "votedDown"}, {VoteType::un_voted, "unVoted"})
CATALOG_ENUM_NAMES_(Effect, 2, {Effect::allow, "allow"}, {Effect::deny, "deny"})
#undef CATALOG_ENUM_NAMES_
}  // namespace catalog::detail

namespace catalog {

// ---- shapes ----

/// A reference to another entity, built when read: current name and deletion state.
/// On input only `id` and `type` are needed.
struct EntityReference {
  Uuid id{};
  std::string type{};
  std::optional<std::string> name{};
  std::optional<std::string> fully_qualified_name{};
  std::optional<std::string> display_name{};
  std::optional<bool> deleted{};
  static constexpr std::array<std::string_view, 2> required_members{"id", "type"};
};
BOOST_DESCRIBE_STRUCT(EntityReference, (),
                      (id, type, name, fully_qualified_name, display_name, deleted))

/// A classification or glossary tag. `tagFQN` is stored as given (1 to 128 characters).
struct TagLabel {
  std::string tag_fqn{};
  std::optional<TagSource> source{};       // Default when absent: Classification
  std::optional<LabelType> label_type{};   // Default when absent: Manual
  std::optional<TagState> state{};         // Default when absent: Confirmed
  std::optional<std::string> description{};
  static constexpr std::array<std::string_view, 1> required_members{"tagFQN"};
};
BOOST_DESCRIBE_STRUCT(TagLabel, (), (tag_fqn, source, label_type, state, description))

struct Votes {
  std::int64_t up_votes = 0;
  std::int64_t down_votes = 0;
  std::vector<EntityReference> up_voters{};
  std::vector<EntityReference> down_voters{};
};
BOOST_DESCRIBE_STRUCT(Votes, (), (up_votes, down_votes, up_voters, down_voters))

struct FieldChange {
  std::string name{};
  std::optional<boost::json::value> old_value{};
  std::optional<boost::json::value> new_value{};
};
BOOST_DESCRIBE_STRUCT(FieldChange, (), (name, old_value, new_value))

struct ChangeDescription {
  std::vector<FieldChange> fields_added{};
  std::vector<FieldChange> fields_updated{};
  std::vector<FieldChange> fields_deleted{};
  Version previous_version;
};
BOOST_DESCRIBE_STRUCT(ChangeDescription, (),
                      (fields_added, fields_updated, fields_deleted, previous_version))

struct MlFeature {
  std::string name{};
  FeatureDataType data_type = FeatureDataType::numerical;
  std::optional<std::string> description{};
  std::optional<std::string> feature_algorithm{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "dataType"};
};
BOOST_DESCRIBE_STRUCT(MlFeature, (), (name, data_type, description, feature_algorithm))

struct MlHyperParameter {
  std::string name{};
  std::string value{};
  std::optional<std::string> description{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "value"};
};
BOOST_DESCRIBE_STRUCT(MlHyperParameter, (), (name, value, description))

/// A field of a search index; `dataType` is one of the docs/SEMANTICS.md §2 list (checked by the
/// catalog).
struct SearchIndexField {
  std::string name{};
  std::string data_type{};
  std::optional<std::string> data_type_display{};
  std::optional<std::string> description{};
  std::optional<std::string> display_name{};
  std::optional<std::vector<SearchIndexField>> children{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "dataType"};
};
BOOST_DESCRIBE_STRUCT(SearchIndexField, (),
                      (name, data_type, data_type_display, description, display_name, children))

/// A policy rule; `condition` is from the closed grammar of S12.
struct PolicyRule {
  std::string name{};
  Effect effect = Effect::allow;
  std::vector<std::string> resources{};
  std::vector<std::string> operations{};
  std::optional<std::string> condition{};
  std::optional<std::string> description{};
  static constexpr std::array<std::string_view, 4> required_members{"name", "effect", "resources",
                                                                    "operations"};
};
BOOST_DESCRIBE_STRUCT(PolicyRule, (),
                      (name, effect, resources, operations, condition, description))

// ---- entities ----

/// Fields every entity has (docs/SEMANTICS.md §2).
struct EntityBase {
  Uuid id{};
  std::string name{};
  std::string fully_qualified_name{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  Version version;
  std::int64_t updated_at = 0;
  std::string updated_by{};
  std::optional<std::string> href{};
  bool deleted = false;
  std::optional<ChangeDescription> change_description{};
};
BOOST_DESCRIBE_STRUCT(EntityBase, (),
                      (id, name, fully_qualified_name, display_name, description, version,
                       updated_at, updated_by, href, deleted, change_description))

struct CreateUser;
struct CreateTeam;
struct CreatePolicy;
struct CreateService;
struct CreateMlModel;
struct CreateGlossary;
struct CreateGlossaryTerm;
struct CreateDomain;
struct CreateSearchIndex;

struct User : EntityBase {
  static constexpr Kind kind = Kind::user;
  using create_type = CreateUser;
  std::string email{};
  bool is_admin = false;
  bool is_bot = false;
  std::vector<EntityReference> teams{};
  std::vector<EntityReference> follows{};
  std::vector<EntityReference> owns{};
  std::vector<EntityReference> domains{};
};
BOOST_DESCRIBE_STRUCT(User, (EntityBase), (email, is_admin, is_bot, teams, follows, owns, domains))
template <>
struct KindTraits<User> {
  static constexpr std::string_view extras[] = {"teams", "follows", "owns", "domains"};
  static constexpr RelationField relations[] = {
      {"teams", Relation::member, true, {Kind::team}},
      {"follows",
       Relation::follows,
       false,
       {Kind::mlmodel, Kind::glossary, Kind::glossary_term, Kind::domain, Kind::search_index}},
      {"owns",
       Relation::owns,
       false,
       {Kind::team, Kind::policy, Kind::mlmodel_service, Kind::search_service, Kind::mlmodel,
        Kind::glossary, Kind::glossary_term, Kind::domain, Kind::search_index}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  static constexpr std::string_view required[] = {"email"};
  static constexpr std::string_view admin_only[] = {"isAdmin", "isBot"};
  static constexpr std::string_view checked_fields[] = {"email"};
  static constexpr KindInfo info{.kind = User::kind,
                                 .type = "user",
                                 .collection = "users",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .admin_only = admin_only,
                                 .checked_fields = checked_fields,
                                 .may_own = true,
                                 .principal = true};
};

struct Team : EntityBase {
  static constexpr Kind kind = Kind::team;
  using create_type = CreateTeam;
  TeamType team_type = TeamType::group;
  std::optional<std::string> email{};
  bool is_joinable = true;
  std::vector<EntityReference> parents{};
  std::vector<EntityReference> users{};
  std::vector<EntityReference> owners{};
  std::vector<EntityReference> domains{};
  std::vector<EntityReference> children{};
  std::vector<EntityReference> policies{};
  std::optional<std::int64_t> user_count{};
  std::optional<std::int64_t> children_count{};
};
BOOST_DESCRIBE_STRUCT(Team, (EntityBase),
                      (team_type, email, is_joinable, parents, users, owners, domains, children,
                       policies, user_count, children_count))
template <>
struct KindTraits<Team> {
  static constexpr std::string_view extras[] = {"parents",   "users",        "owners",
                                                "domains",   "children",     "policies",
                                                "userCount", "childrenCount"};
  static constexpr RelationField relations[] = {
      {"parents", Relation::contains, true, {Kind::team}},
      {"users", Relation::member, false, {Kind::user}},
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"children", Relation::contains, false, {Kind::team}},
      {"policies", Relation::policy, false, {Kind::policy}}};
  static constexpr std::string_view required[] = {"teamType"};
  static constexpr std::string_view rule_fields[] = {"teamType", "parents"};
  static constexpr CountField counts[] = {{"userCount", Relation::member, false},
                                          {"childrenCount", Relation::contains, false}};
  static constexpr OwnerRule owner_rule{"Team", "teamType", "Group",
                                        "cannot own entities: only Group teams can"};
  static constexpr std::string_view checked_fields[] = {"email"};
  static constexpr KindInfo info{.kind = Team::kind,
                                 .type = "team",
                                 .collection = "teams",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .rule_fields = rule_fields,
                                 .checked_fields = checked_fields,
                                 .counts = counts,
                                 .containers = {Kind::team},
                                 .may_own = true,
                                 .owner_rule = &owner_rule,
                                 .members_own = true,
                                 .domain_by_fqn = true};
};

struct Policy : EntityBase {
  static constexpr Kind kind = Kind::policy;
  using create_type = CreatePolicy;
  std::vector<PolicyRule> rules{};
  bool enabled = true;
  std::vector<EntityReference> owners{};
  std::vector<EntityReference> teams{};
};
BOOST_DESCRIBE_STRUCT(Policy, (EntityBase), (rules, enabled, owners, teams))
template <>
struct KindTraits<Policy> {
  static constexpr std::string_view extras[] = {"owners", "teams"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"teams", Relation::policy, true, {Kind::team}}};
  static constexpr std::string_view read_only[] = {"teams"};  // a team names its policies
  static constexpr std::string_view required[] = {"rules"};
  static constexpr std::string_view checked_fields[] = {"rules"};
  static constexpr KindInfo info{.kind = Policy::kind,
                                 .type = "policy",
                                 .collection = "policies",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .read_only = read_only,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

/// Fields of both service kinds.
struct ServiceBase : EntityBase {
  std::string service_type{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<EntityReference> domains{};
};
BOOST_DESCRIBE_STRUCT(ServiceBase, (EntityBase), (service_type, owners, tags, domains))
/// What both service kinds share.
struct ServiceTraits {
  static constexpr std::string_view extras[] = {"owners", "tags", "domains"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  static constexpr std::string_view required[] = {"serviceType"};
};

struct MlModelService : ServiceBase {
  static constexpr Kind kind = Kind::mlmodel_service;
  using create_type = CreateService;
};
BOOST_DESCRIBE_STRUCT(MlModelService, (ServiceBase), ())
template <>
struct KindTraits<MlModelService> : ServiceTraits {
  static constexpr std::string_view checked_fields[] = {"serviceType", "tags"};
  static constexpr KindInfo info{.kind = MlModelService::kind,
                                 .type = "mlmodelService",
                                 .collection = "services/mlmodelServices",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

struct SearchService : ServiceBase {
  static constexpr Kind kind = Kind::search_service;
  using create_type = CreateService;
};
BOOST_DESCRIBE_STRUCT(SearchService, (ServiceBase), ())
template <>
struct KindTraits<SearchService> : ServiceTraits {
  static constexpr std::string_view checked_fields[] = {"serviceType", "tags"};
  static constexpr KindInfo info{.kind = SearchService::kind,
                                 .type = "searchService",
                                 .collection = "services/searchServices",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

struct MlModel : EntityBase {
  static constexpr Kind kind = Kind::mlmodel;
  using create_type = CreateMlModel;
  std::string algorithm{};
  std::optional<EntityReference> service{};
  std::optional<std::string> service_type{};
  std::optional<std::string> target{};
  std::optional<std::string> server{};
  std::vector<MlFeature> ml_features{};
  std::vector<MlHyperParameter> ml_hyper_parameters{};
  std::vector<EntityReference> owners{};
  std::vector<EntityReference> followers{};
  std::optional<Votes> votes{};
  std::vector<TagLabel> tags{};
  std::vector<EntityReference> domains{};
  std::optional<boost::json::object> extension{};
};
BOOST_DESCRIBE_STRUCT(MlModel, (EntityBase),
                      (algorithm, service, service_type, target, server, ml_features,
                       ml_hyper_parameters, owners, followers, votes, tags, domains, extension))
template <>
struct KindTraits<MlModel> {
  static constexpr std::string_view extras[] = {"owners", "followers", "votes",
                                                "tags",   "domains",   "extension"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"followers", Relation::follows, true, {Kind::user}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  static constexpr std::string_view read_only[] = {"serviceType"};  // the service's
  static constexpr std::string_view required[] = {"algorithm"};
  static constexpr std::string_view major_fields[] = {"algorithm", "server", "target"};
  static constexpr std::string_view checked_fields[] = {"server", "tags"};
  static constexpr KindInfo info{.kind = MlModel::kind,
                                 .type = "mlmodel",
                                 .collection = "mlmodels",
                                 .extra_fields = extras,
                                 .has_followers = true,
                                 .has_votes = true,
                                 .relations = relations,
                                 .read_only = read_only,
                                 .required = required,
                                 .major_fields = major_fields,
                                 .checked_fields = checked_fields,
                                 .service = Kind::mlmodel_service,
                                 .placement = Placement::in_container,
                                 .containers = {Kind::mlmodel_service},
                                 .container_field = "service",
                                 .container_type = "serviceType"};
};

struct Glossary : EntityBase {
  static constexpr Kind kind = Kind::glossary;
  using create_type = CreateGlossary;
  bool mutually_exclusive = false;
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<EntityReference> domains{};
  std::vector<EntityReference> reviewers{};
  std::vector<EntityReference> followers{};
  std::optional<Votes> votes{};
  std::optional<std::int64_t> term_count{};
};
BOOST_DESCRIBE_STRUCT(Glossary, (EntityBase),
                      (mutually_exclusive, owners, tags, domains, reviewers, followers, votes,
                       term_count))
template <>
struct KindTraits<Glossary> {
  static constexpr std::string_view extras[] = {"owners",    "tags",  "domains",  "reviewers",
                                                "followers", "votes", "termCount"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"reviewers", Relation::reviews, false, {Kind::user}},
      {"followers", Relation::follows, true, {Kind::user}}};
  static constexpr CountField counts[] = {{"termCount", Relation::contains, true}};
  static constexpr std::string_view checked_fields[] = {"tags"};
  static constexpr KindInfo info{.kind = Glossary::kind,
                                 .type = "glossary",
                                 .collection = "glossaries",
                                 .extra_fields = extras,
                                 .has_followers = true,
                                 .has_votes = true,
                                 .relations = relations,
                                 .checked_fields = checked_fields,
                                 .counts = counts,
                                 .glossary_root = true};
};

struct GlossaryTerm : EntityBase {
  static constexpr Kind kind = Kind::glossary_term;
  using create_type = CreateGlossaryTerm;
  std::optional<EntityReference> glossary{};
  std::optional<EntityReference> parent{};
  std::vector<std::string> synonyms{};
  std::optional<TermStatus> status{};
  bool mutually_exclusive = false;
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<EntityReference> children{};
  std::vector<EntityReference> reviewers{};
  std::vector<EntityReference> related_terms{};
  std::vector<EntityReference> followers{};
  std::optional<Votes> votes{};
  std::vector<EntityReference> domains{};
};
BOOST_DESCRIBE_STRUCT(GlossaryTerm, (EntityBase),
                      (glossary, parent, synonyms, status, mutually_exclusive, owners, tags,
                       children, reviewers, related_terms, followers, votes, domains))
template <>
struct KindTraits<GlossaryTerm> {
  static constexpr std::string_view extras[] = {
      "owners", "tags", "children", "reviewers", "relatedTerms", "followers", "votes", "domains"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"children", Relation::contains, false, {Kind::glossary_term}},
      {"reviewers", Relation::reviews, false, {Kind::user}},
      {"relatedTerms", Relation::related, false, {Kind::glossary_term}},
      {"followers", Relation::follows, true, {Kind::user}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  static constexpr std::string_view checked_fields[] = {"synonyms", "tags"};
  static constexpr KindInfo info{.kind = GlossaryTerm::kind,
                                 .type = "glossaryTerm",
                                 .collection = "glossaryTerms",
                                 .extra_fields = extras,
                                 .has_followers = true,
                                 .has_votes = true,
                                 .relations = relations,
                                 .checked_fields = checked_fields,
                                 .placement = Placement::in_container,
                                 .containers = {Kind::glossary, Kind::glossary_term},
                                 .container_field = "parent",
                                 .in_glossary = true};
};

struct SearchIndex : EntityBase {
  static constexpr Kind kind = Kind::search_index;
  using create_type = CreateSearchIndex;
  std::optional<EntityReference> service{};
  std::optional<std::string> service_type{};
  std::vector<SearchIndexField> fields{};
  IndexType index_type = IndexType::index;
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<EntityReference> domains{};
  std::vector<EntityReference> followers{};
  std::optional<Votes> votes{};
  std::optional<boost::json::object> extension{};
  std::optional<std::string> source_hash{};
};
BOOST_DESCRIBE_STRUCT(SearchIndex, (EntityBase),
                      (service, service_type, fields, index_type, owners, tags, domains,
                       followers, votes, extension, source_hash))
template <>
struct KindTraits<SearchIndex> {
  static constexpr std::string_view extras[] = {"followers", "votes", "extension", "sourceHash"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"followers", Relation::follows, true, {Kind::user}}};
  static constexpr std::string_view read_only[] = {"serviceType"};  // the service's
  static constexpr std::string_view required[] = {"fields"};
  static constexpr std::string_view checked_fields[] = {"fields", "sourceHash", "tags"};
  static constexpr KindInfo info{.kind = SearchIndex::kind,
                                 .type = "searchIndex",
                                 .collection = "searchIndexes",
                                 .extra_fields = extras,
                                 .has_followers = true,
                                 .has_votes = true,
                                 .relations = relations,
                                 .read_only = read_only,
                                 .required = required,
                                 .checked_fields = checked_fields,
                                 .service = Kind::search_service,
                                 .placement = Placement::in_container,
                                 .containers = {Kind::search_service},
                                 .container_field = "service",
                                 .container_type = "serviceType"};
};

struct Domain : EntityBase {
  static constexpr Kind kind = Kind::domain;
  using create_type = CreateDomain;
  DomainType domain_type = DomainType::aggregate;
  std::optional<EntityReference> parent{};
  std::vector<EntityReference> owners{};
  std::vector<EntityReference> children{};
  std::vector<EntityReference> experts{};
  std::vector<EntityReference> followers{};
};
BOOST_DESCRIBE_STRUCT(Domain, (EntityBase),
                      (domain_type, parent, owners, children, experts, followers))
template <>
struct KindTraits<Domain> {
  static constexpr std::string_view extras[] = {"owners", "children", "experts", "followers"};
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"children", Relation::contains, false, {Kind::domain}},
      {"experts", Relation::expert, false, {Kind::user}},
      {"followers", Relation::follows, true, {Kind::user}}};
  static constexpr std::string_view required[] = {"domainType"};
  static constexpr KindInfo info{.kind = Domain::kind,
                                 .type = "domain",
                                 .collection = "domains",
                                 .extra_fields = extras,
                                 .has_followers = true,
                                 .relations = relations,
                                 .required = required,
                                 .placement = Placement::optional_container,
                                 .containers = {Kind::domain},
                                 .container_field = "parent"};
};

/// Every entity struct, in the order of `Kind` (kind_traits.hpp checks it).
using entity_types = boost::mp11::mp_list<User, Team, Policy, MlModelService, SearchService,
                                          MlModel, Glossary, GlossaryTerm, Domain, SearchIndex>;
/// An entity of any kind: alternative i is the struct of `Kind` i.
using AnyEntity = boost::mp11::mp_rename<entity_types, std::variant>;

// ---- create requests (docs/REST.md "Create request shapes") ----
// Containers are named by FQN; users, teams and policies by id; domain experts by user name.

struct CreateUser {
  std::string name{};
  std::string email{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  std::optional<bool> is_admin{};
  std::optional<bool> is_bot{};
  std::vector<Uuid> teams{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "email"};
};
BOOST_DESCRIBE_STRUCT(CreateUser, (),
                      (name, email, display_name, description, is_admin, is_bot, teams))

struct CreateTeam {
  std::string name{};
  std::optional<TeamType> team_type{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  std::optional<std::string> email{};
  std::optional<bool> is_joinable{};
  std::vector<Uuid> parents{};
  std::vector<Uuid> users{};
  std::vector<Uuid> policies{};
  std::vector<EntityReference> owners{};
  std::vector<std::string> domains{};
  static constexpr std::array<std::string_view, 1> required_members{"name"};
};
BOOST_DESCRIBE_STRUCT(CreateTeam, (),
                      (name, team_type, display_name, description, email, is_joinable, parents,
                       users, policies, owners, domains))

struct CreatePolicy {
  std::string name{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  std::optional<bool> enabled{};
  std::vector<PolicyRule> rules{};
  std::vector<EntityReference> owners{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "rules"};
};
BOOST_DESCRIBE_STRUCT(CreatePolicy, (), (name, display_name, description, enabled, rules, owners))

struct CreateService {
  std::string name{};
  std::string service_type{};
  std::optional<std::string> description{};
  std::optional<std::string> display_name{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<std::string> domains{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "serviceType"};
};
BOOST_DESCRIBE_STRUCT(CreateService, (),
                      (name, service_type, description, display_name, owners, tags, domains))

struct CreateMlModel {
  std::string name{};
  std::string service{};
  std::string algorithm{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  std::optional<std::string> target{};
  std::optional<std::string> server{};
  std::vector<MlFeature> ml_features{};
  std::vector<MlHyperParameter> ml_hyper_parameters{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<std::string> domains{};
  std::optional<boost::json::object> extension{};
  static constexpr std::array<std::string_view, 3> required_members{"name", "service",
                                                                    "algorithm"};
};
BOOST_DESCRIBE_STRUCT(CreateMlModel, (),
                      (name, service, algorithm, display_name, description, target, server,
                       ml_features, ml_hyper_parameters, owners, tags, domains, extension))

struct CreateGlossary {
  std::string name{};
  std::string description{};
  std::optional<std::string> display_name{};
  std::vector<EntityReference> reviewers{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::optional<bool> mutually_exclusive{};
  std::vector<std::string> domains{};
  static constexpr std::array<std::string_view, 2> required_members{"name", "description"};
};
BOOST_DESCRIBE_STRUCT(CreateGlossary, (),
                      (name, description, display_name, reviewers, owners, tags,
                       mutually_exclusive, domains))

struct CreateGlossaryTerm {
  std::string glossary{};
  std::optional<std::string> parent{};
  std::string name{};
  std::string description{};
  std::optional<std::string> display_name{};
  std::vector<std::string> synonyms{};
  std::vector<std::string> related_terms{};
  std::vector<EntityReference> reviewers{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::optional<bool> mutually_exclusive{};
  static constexpr std::array<std::string_view, 3> required_members{"glossary", "name",
                                                                    "description"};
};
BOOST_DESCRIBE_STRUCT(CreateGlossaryTerm, (),
                      (glossary, parent, name, description, display_name, synonyms,
                       related_terms, reviewers, owners, tags, mutually_exclusive))

struct CreateDomain {
  std::string name{};
  DomainType domain_type = DomainType::aggregate;
  std::string description{};
  std::optional<std::string> display_name{};
  std::optional<std::string> parent{};
  std::vector<std::string> experts{};
  std::vector<EntityReference> owners{};
  static constexpr std::array<std::string_view, 3> required_members{"name", "domainType",
                                                                    "description"};
};
BOOST_DESCRIBE_STRUCT(CreateDomain, (),
                      (name, domain_type, description, display_name, parent, experts, owners))

struct CreateSearchIndex {
  std::string name{};
  std::string service{};
  std::vector<SearchIndexField> fields{};
  std::optional<std::string> display_name{};
  std::optional<std::string> description{};
  std::optional<IndexType> index_type{};
  std::vector<EntityReference> owners{};
  std::vector<TagLabel> tags{};
  std::vector<std::string> domains{};
  std::optional<boost::json::object> extension{};
  std::optional<std::string> source_hash{};
  static constexpr std::array<std::string_view, 3> required_members{"name", "service", "fields"};
};
BOOST_DESCRIBE_STRUCT(CreateSearchIndex, (),
                      (name, service, fields, display_name, description, index_type, owners,
                       tags, domains, extension, source_hash))

/// The JSON form of any entity, shape or create request.
template <detail::Described T>
boost::json::value to_json(const T& value) {
  return detail::to_json(value);
}

/// Writes the JSON form (for logs and test output).
template <class Ostream, detail::Described T>
auto operator<<(Ostream& os, const T& value) -> decltype(os << std::string_view()) {
  return os << std::string_view(json::serialize(detail::to_json(value)));
}

/// Reads `T` from JSON strictly. Errors: bad_request (invalid_request for unknown, missing or
/// wrong-typed members; invalid_value for a value outside its enumeration), naming the member.
template <class T>
Result<T> from_json(const boost::json::value& v) {
  T out{};
  auto r = detail::from_json(v, out, "");
  if (!r) return r.error();
  return out;
}

}  // namespace catalog

#endif  // CATALOG_ENTITIES_HPP
