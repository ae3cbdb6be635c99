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

/// A domain's `domainType` (docs/SEMANTICS.md §2).
enum class DomainType {
  source_aligned,    ///< `Source-aligned`
  consumer_aligned,  ///< `Consumer-aligned`
  aggregate          ///< `Aggregate`
};

/// A team's `teamType` (docs/SEMANTICS.md §2); the team rules of docs/SEMANTICS.md §9 say which
/// parents each may have.
enum class TeamType {
  group,          ///< `Group`: the only type that may own entities; has no child teams
  department,     ///< `Department`
  division,       ///< `Division`: exactly one parent
  business_unit,  ///< `BusinessUnit`: exactly one parent
  organization    ///< `Organization`: no parent
};

/// A glossary term's `status` (docs/SEMANTICS.md §2).
enum class TermStatus {
  draft,       ///< `Draft`: a new term with reviewers (its own or its glossary's)
  in_review,   ///< `In Review`
  approved,    ///< `Approved`: a new term without reviewers
  deprecated,  ///< `Deprecated`
  rejected     ///< `Rejected`
};

/// A search index's `indexType`.
enum class IndexType {
  index,          ///< `Index`, the default
  index_template  ///< `IndexTemplate`
};

/// Where a tag comes from: a tag label's `source`.
enum class TagSource {
  classification,  ///< `Classification`, the default
  glossary         ///< `Glossary`
};

/// How a tag was applied: a tag label's `labelType`.
enum class LabelType {
  manual,      ///< `Manual`, the default
  propagated,  ///< `Propagated`
  automated,   ///< `Automated`
  derived      ///< `Derived`
};

/// A tag label's `state`.
enum class TagState {
  suggested,  ///< `Suggested`
  confirmed   ///< `Confirmed`, the default
};

/// An ML feature's `dataType`.
enum class FeatureDataType {
  numerical,   ///< `numerical`
  categorical  ///< `categorical`
};

/// A vote (docs/SEMANTICS.md §5), as the REST body's `updatedVoteType` names it.
enum class VoteType {
  voted_up,    ///< `votedUp`
  voted_down,  ///< `votedDown`
  un_voted     ///< `unVoted`: no vote (withdraws one)
};

/// A policy rule's `effect` (docs/SEMANTICS.md §12).
enum class Effect {
  allow,  ///< `allow`: the rule allows its operations
  deny    ///< `deny`: the rule refuses them, whatever allows them
};

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
  Uuid id{};                                          ///< `id`
  std::string type{};                                 ///< `type`: the reference type of its kind
  std::optional<std::string> name{};                  ///< `name`; set when read
  std::optional<std::string> fully_qualified_name{};  ///< `fullyQualifiedName`; set when read
  std::optional<std::string> display_name{};          ///< `displayName`, when the entity has one
  std::optional<bool> deleted{};                      ///< `deleted`; set when read
  /// The members from_json requires: `id` and `type`.
  static constexpr std::array<std::string_view, 2> required_members{"id", "type"};
};
BOOST_DESCRIBE_STRUCT(EntityReference, (),
                      (id, type, name, fully_qualified_name, display_name, deleted))

/// A classification or glossary tag. `tagFQN` is stored as given (1 to 128 characters).
struct TagLabel {
  std::string tag_fqn{};                     ///< `tagFQN`
  std::optional<TagSource> source{};         ///< `source`; default when absent: Classification
  std::optional<LabelType> label_type{};     ///< `labelType`; default when absent: Manual
  std::optional<TagState> state{};           ///< `state`; default when absent: Confirmed
  std::optional<std::string> description{};  ///< `description`
  /// The members from_json requires: `tagFQN`.
  static constexpr std::array<std::string_view, 1> required_members{"tagFQN"};
};
BOOST_DESCRIBE_STRUCT(TagLabel, (), (tag_fqn, source, label_type, state, description))

/// An entity's `votes` (docs/SEMANTICS.md §5), always whole.
struct Votes {
  std::int64_t up_votes = 0;                   ///< `upVotes`: how many voted up
  std::int64_t down_votes = 0;                 ///< `downVotes`: how many voted down
  std::vector<EntityReference> up_voters{};    ///< `upVoters`: who voted up
  std::vector<EntityReference> down_voters{};  ///< `downVoters`: who voted down
};
BOOST_DESCRIBE_STRUCT(Votes, (), (up_votes, down_votes, up_voters, down_voters))

/// One changed top-level member of an entity (docs/SEMANTICS.md §3); the values are plain JSON.
struct FieldChange {
  std::string name{};                             ///< `name`: the member's wire name
  std::optional<boost::json::value> old_value{};  ///< `oldValue`: what was there before, if any
  std::optional<boost::json::value> new_value{};  ///< `newValue`: what is there now, if any
};
BOOST_DESCRIBE_STRUCT(FieldChange, (), (name, old_value, new_value))

/// What a version changed: an entity's `changeDescription` (docs/SEMANTICS.md §3).
struct ChangeDescription {
  std::vector<FieldChange> fields_added{};    ///< `fieldsAdded`: new members, elements gained
  std::vector<FieldChange> fields_updated{};  ///< `fieldsUpdated`: the other changes
  std::vector<FieldChange> fields_deleted{};  ///< `fieldsDeleted`: gone members, elements lost
  Version previous_version;                   ///< `previousVersion`: the version this one follows
};
BOOST_DESCRIBE_STRUCT(ChangeDescription, (),
                      (fields_added, fields_updated, fields_deleted, previous_version))

/// A feature of an ML model: an element of `mlFeatures`.
struct MlFeature {
  std::string name{};                                      ///< `name`
  FeatureDataType data_type = FeatureDataType::numerical;  ///< `dataType`
  std::optional<std::string> description{};                ///< `description`
  std::optional<std::string> feature_algorithm{};          ///< `featureAlgorithm`
  /// The members from_json requires: `name` and `dataType`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "dataType"};
};
BOOST_DESCRIBE_STRUCT(MlFeature, (), (name, data_type, description, feature_algorithm))

/// A hyper-parameter of an ML model: an element of `mlHyperParameters`, all strings.
struct MlHyperParameter {
  std::string name{};                        ///< `name`
  std::string value{};                       ///< `value`
  std::optional<std::string> description{};  ///< `description`
  /// The members from_json requires: `name` and `value`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "value"};
};
BOOST_DESCRIBE_STRUCT(MlHyperParameter, (), (name, value, description))

/// A field of a search index; `dataType` is one of the docs/SEMANTICS.md §2 list (checked by the
/// catalog).
struct SearchIndexField {
  std::string name{};                              ///< `name`: not empty
  std::string data_type{};                         ///< `dataType`
  std::optional<std::string> data_type_display{};  ///< `dataTypeDisplay`
  std::optional<std::string> description{};        ///< `description`
  std::optional<std::string> display_name{};       ///< `displayName`
  /// `children`: nested fields, under the same rules.
  std::optional<std::vector<SearchIndexField>> children{};
  /// The members from_json requires: `name` and `dataType`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "dataType"};
};
BOOST_DESCRIBE_STRUCT(SearchIndexField, (),
                      (name, data_type, data_type_display, description, display_name, children))

/// A policy rule (docs/SEMANTICS.md §12); `condition` is from the closed grammar of §12.
struct PolicyRule {
  std::string name{};                        ///< `name`: not empty
  Effect effect = Effect::allow;             ///< `effect`
  std::vector<std::string> resources{};      ///< `resources`: reference types of kinds, or `all`
  std::vector<std::string> operations{};     ///< `operations`: names (`EditOwners`), or `All`
  std::optional<std::string> condition{};    ///< `condition`: must hold for the rule to match
  std::optional<std::string> description{};  ///< `description`
  /// The members from_json requires: `name`, `effect`, `resources` and `operations`.
  static constexpr std::array<std::string_view, 4> required_members{"name", "effect", "resources",
                                                                    "operations"};
};
BOOST_DESCRIBE_STRUCT(PolicyRule, (),
                      (name, effect, resources, operations, condition, description))

// ---- entities ----

/// Fields every entity has (docs/SEMANTICS.md §2).
struct EntityBase {
  Uuid id{};                                  ///< `id`: chosen by the catalog at creation
  std::string name{};                         ///< `name`: the name rules of docs/SEMANTICS.md §2
  std::string fully_qualified_name{};         ///< `fullyQualifiedName`: the canonical FQN
  std::optional<std::string> display_name{};  ///< `displayName`
  std::optional<std::string> description{};   ///< `description`, Markdown
  Version version;                            ///< `version` (docs/SEMANTICS.md §3)
  std::int64_t updated_at = 0;                ///< `updatedAt`: epoch ms of the last version
  std::string updated_by{};                   ///< `updatedBy`: the user who wrote it
  std::optional<std::string> href{};          ///< `href`: present only with StoreOptions::base_url
  bool deleted = false;                       ///< `deleted`: soft-deleted (docs/SEMANTICS.md §6)
  /// `changeDescription`: absent on 0.1.
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

/// A user (docs/SEMANTICS.md §1, §2); every caller is one (Principal). Fields marked extra are
/// filled by get and list only when `fields` asks for them; writes answer them all.
struct User : EntityBase {
  static constexpr Kind kind = Kind::user;  ///< the kind, Kind::user
  using create_type = CreateUser;           ///< what Store::create takes: CreateUser
  std::string email{};                      ///< `email`: required (docs/SEMANTICS.md §2)
  bool is_admin = false;                    ///< `isAdmin`: only an admin may change it
  bool is_bot = false;                      ///< `isBot`: only an admin may change it
  std::vector<EntityReference> teams{};     ///< `teams`, extra: the teams it is a member of
  std::vector<EntityReference> follows{};   ///< `follows`, extra: what it follows
  std::vector<EntityReference> owns{};      ///< `owns`, extra: what it owns
  std::vector<EntityReference> domains{};   ///< `domains`, extra
};
BOOST_DESCRIBE_STRUCT(User, (EntityBase), (email, is_admin, is_bot, teams, follows, owns, domains))
/// The rules of users, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<User> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"teams", "follows", "owns", "domains"};
  /// What KindInfo::relations points to.
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
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"email"};
  /// What KindInfo::admin_only points to.
  static constexpr std::string_view admin_only[] = {"isAdmin", "isBot"};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"email"};
  /// What info() answers for the kind.
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

/// A team (docs/SEMANTICS.md §1, §2, the team rules of §9). Fields marked extra are filled by get
/// and list only when `fields` asks for them; writes answer them all.
struct Team : EntityBase {
  static constexpr Kind kind = Kind::team;   ///< the kind, Kind::team
  using create_type = CreateTeam;            ///< what Store::create takes: CreateTeam
  TeamType team_type = TeamType::group;      ///< `teamType`: default Group
  std::optional<std::string> email{};        ///< `email`, checked as a user's
  bool is_joinable = true;                   ///< `isJoinable`: default true
  std::vector<EntityReference> parents{};    ///< `parents`, extra: its parent teams
  std::vector<EntityReference> users{};      ///< `users`, extra: its members
  std::vector<EntityReference> owners{};     ///< `owners`, extra: users or Group teams
  std::vector<EntityReference> domains{};    ///< `domains`, extra
  std::vector<EntityReference> children{};   ///< `children`, extra: its child teams
  std::vector<EntityReference> policies{};   ///< `policies`, extra: the policies it attaches
  std::optional<std::int64_t> user_count{};  ///< `userCount`, extra: its number of members
  /// `childrenCount`, extra: its number of child teams.
  std::optional<std::int64_t> children_count{};
};
BOOST_DESCRIBE_STRUCT(Team, (EntityBase),
                      (team_type, email, is_joinable, parents, users, owners, domains, children,
                       policies, user_count, children_count))
/// The rules of teams, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<Team> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"parents",   "users",        "owners",
                                                "domains",   "children",     "policies",
                                                "userCount", "childrenCount"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"parents", Relation::contains, true, {Kind::team}},
      {"users", Relation::member, false, {Kind::user}},
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"children", Relation::contains, false, {Kind::team}},
      {"policies", Relation::policy, false, {Kind::policy}}};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"teamType"};
  /// What KindInfo::rule_fields points to.
  static constexpr std::string_view rule_fields[] = {"teamType", "parents"};
  /// What KindInfo::counts points to.
  static constexpr CountField counts[] = {{"userCount", Relation::member, false},
                                          {"childrenCount", Relation::contains, false}};
  /// What KindInfo::owner_rule points to.
  static constexpr OwnerRule owner_rule{"Team", "teamType", "Group",
                                        "cannot own entities: only Group teams can"};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"email"};
  /// What info() answers for the kind.
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

/// A policy (docs/SEMANTICS.md §12): rules that teams attach. Fields marked extra are filled by get
/// and list only when `fields` asks for them; writes answer them all.
struct Policy : EntityBase {
  static constexpr Kind kind = Kind::policy;  ///< the kind, Kind::policy
  using create_type = CreatePolicy;           ///< what Store::create takes: CreatePolicy
  std::vector<PolicyRule> rules{};            ///< `rules`: required
  /// `enabled`: a disabled policy does not apply; default true.
  bool enabled = true;
  std::vector<EntityReference> owners{};      ///< `owners`, extra
  std::vector<EntityReference> teams{};       ///< `teams`, extra: the teams that attach it
};
BOOST_DESCRIBE_STRUCT(Policy, (EntityBase), (rules, enabled, owners, teams))
/// The rules of policies, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<Policy> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"owners", "teams"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"teams", Relation::policy, true, {Kind::team}}};
  /// What KindInfo::read_only points to: a team names its policies.
  static constexpr std::string_view read_only[] = {"teams"};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"rules"};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"rules"};
  /// What info() answers for the kind.
  static constexpr KindInfo info{.kind = Policy::kind,
                                 .type = "policy",
                                 .collection = "policies",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .read_only = read_only,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

/// Fields of both service kinds. Fields marked extra are filled by get and list only when `fields`
/// asks for them; writes answer them all.
struct ServiceBase : EntityBase {
  std::string service_type{};              ///< `serviceType`: required, any non-empty string
  std::vector<EntityReference> owners{};   ///< `owners`, extra
  std::vector<TagLabel> tags{};            ///< `tags`, extra
  std::vector<EntityReference> domains{};  ///< `domains`, extra
};
BOOST_DESCRIBE_STRUCT(ServiceBase, (EntityBase), (service_type, owners, tags, domains))
/// What both service kinds share.
struct ServiceTraits {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"owners", "tags", "domains"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"serviceType"};
};

/// A service of ML models: their container (docs/SEMANTICS.md §1). Fields marked extra are filled
/// by get and list only when `fields` asks for them; writes answer them all.
struct MlModelService : ServiceBase {
  static constexpr Kind kind = Kind::mlmodel_service;  ///< the kind, Kind::mlmodel_service
  using create_type = CreateService;                   ///< what Store::create takes: CreateService
};
BOOST_DESCRIBE_STRUCT(MlModelService, (ServiceBase), ())
/// The rules of ML model services, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<MlModelService> : ServiceTraits {
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"serviceType", "tags"};
  /// What info() answers for the kind.
  static constexpr KindInfo info{.kind = MlModelService::kind,
                                 .type = "mlmodelService",
                                 .collection = "services/mlmodelServices",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

/// A search service: the container of search indexes (docs/SEMANTICS.md §1). Fields marked extra
/// are filled by get and list only when `fields` asks for them; writes answer them all.
struct SearchService : ServiceBase {
  static constexpr Kind kind = Kind::search_service;  ///< the kind, Kind::search_service
  using create_type = CreateService;                  ///< what Store::create takes: CreateService
};
BOOST_DESCRIBE_STRUCT(SearchService, (ServiceBase), ())
/// The rules of search services, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<SearchService> : ServiceTraits {
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"serviceType", "tags"};
  /// What info() answers for the kind.
  static constexpr KindInfo info{.kind = SearchService::kind,
                                 .type = "searchService",
                                 .collection = "services/searchServices",
                                 .extra_fields = extras,
                                 .relations = relations,
                                 .required = required,
                                 .checked_fields = checked_fields};
};

/// An ML model, in its service (docs/SEMANTICS.md §1, §2). Fields marked extra are filled by get
/// and list only when `fields` asks for them; writes answer them all.
struct MlModel : EntityBase {
  static constexpr Kind kind = Kind::mlmodel;      ///< the kind, Kind::mlmodel
  using create_type = CreateMlModel;               ///< what Store::create takes: CreateMlModel
  /// `algorithm`: required; a change is a major version.
  std::string algorithm{};
  std::optional<EntityReference> service{};        ///< `service`: its service
  std::optional<std::string> service_type{};       ///< `serviceType`: its service's
  std::optional<std::string> target{};             ///< `target`: a change is a major version
  std::optional<std::string> server{};             ///< `server`: a URI; a change is a major version
  std::vector<MlFeature> ml_features{};            ///< `mlFeatures`
  /// `mlHyperParameters`.
  std::vector<MlHyperParameter> ml_hyper_parameters{};
  std::vector<EntityReference> owners{};           ///< `owners`, extra
  std::vector<EntityReference> followers{};        ///< `followers`, extra
  std::optional<Votes> votes{};                    ///< `votes`, extra
  std::vector<TagLabel> tags{};                    ///< `tags`, extra
  std::vector<EntityReference> domains{};          ///< `domains`, extra
  std::optional<boost::json::object> extension{};  ///< `extension`, extra: any JSON object
};
BOOST_DESCRIBE_STRUCT(MlModel, (EntityBase),
                      (algorithm, service, service_type, target, server, ml_features,
                       ml_hyper_parameters, owners, followers, votes, tags, domains, extension))
/// The rules of ML models, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<MlModel> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"owners", "followers", "votes",
                                                "tags",   "domains",   "extension"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"followers", Relation::follows, true, {Kind::user}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  /// What KindInfo::read_only points to: `serviceType` is the service's.
  static constexpr std::string_view read_only[] = {"serviceType"};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"algorithm"};
  /// What KindInfo::major_fields points to.
  static constexpr std::string_view major_fields[] = {"algorithm", "server", "target"};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"server", "tags"};
  /// What info() answers for the kind.
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

/// A glossary: the root of its terms (docs/SEMANTICS.md §1, §2). Fields marked extra are filled by
/// get and list only when `fields` asks for them; writes answer them all.
struct Glossary : EntityBase {
  static constexpr Kind kind = Kind::glossary;  ///< the kind, Kind::glossary
  using create_type = CreateGlossary;           ///< what Store::create takes: CreateGlossary
  bool mutually_exclusive = false;              ///< `mutuallyExclusive`: default false
  std::vector<EntityReference> owners{};        ///< `owners`, extra
  std::vector<TagLabel> tags{};                 ///< `tags`, extra
  std::vector<EntityReference> domains{};       ///< `domains`, extra
  std::vector<EntityReference> reviewers{};     ///< `reviewers`, extra: users
  std::vector<EntityReference> followers{};     ///< `followers`, extra
  std::optional<Votes> votes{};                 ///< `votes`, extra
  /// `termCount`, extra: its terms, nested ones included.
  std::optional<std::int64_t> term_count{};
};
BOOST_DESCRIBE_STRUCT(Glossary, (EntityBase),
                      (mutually_exclusive, owners, tags, domains, reviewers, followers, votes,
                       term_count))
/// The rules of glossaries, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<Glossary> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"owners",    "tags",  "domains",  "reviewers",
                                                "followers", "votes", "termCount"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"reviewers", Relation::reviews, false, {Kind::user}},
      {"followers", Relation::follows, true, {Kind::user}}};
  /// What KindInfo::counts points to.
  static constexpr CountField counts[] = {{"termCount", Relation::contains, true}};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"tags"};
  /// What info() answers for the kind.
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

/// A glossary term, in its glossary or under a parent term (docs/SEMANTICS.md §1, §2). Fields
/// marked extra are filled by get and list only when `fields` asks for them; writes answer them
/// all.
struct GlossaryTerm : EntityBase {
  /// The kind, Kind::glossary_term.
  static constexpr Kind kind = Kind::glossary_term;
  using create_type = CreateGlossaryTerm;        ///< what Store::create takes: CreateGlossaryTerm
  std::optional<EntityReference> glossary{};     ///< `glossary`: its glossary
  /// `parent`: its parent term; absent on a top-level term.
  std::optional<EntityReference> parent{};
  std::vector<std::string> synonyms{};           ///< `synonyms`: none of them empty
  std::optional<TermStatus> status{};            ///< `status`
  bool mutually_exclusive = false;               ///< `mutuallyExclusive`
  std::vector<EntityReference> owners{};         ///< `owners`, extra
  std::vector<TagLabel> tags{};                  ///< `tags`, extra
  std::vector<EntityReference> children{};       ///< `children`, extra: its child terms
  std::vector<EntityReference> reviewers{};      ///< `reviewers`, extra: users
  std::vector<EntityReference> related_terms{};  ///< `relatedTerms`, extra
  std::vector<EntityReference> followers{};      ///< `followers`, extra
  std::optional<Votes> votes{};                  ///< `votes`, extra
  std::vector<EntityReference> domains{};        ///< `domains`, extra
};
BOOST_DESCRIBE_STRUCT(GlossaryTerm, (EntityBase),
                      (glossary, parent, synonyms, status, mutually_exclusive, owners, tags,
                       children, reviewers, related_terms, followers, votes, domains))
/// The rules of glossary terms, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<GlossaryTerm> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {
      "owners", "tags", "children", "reviewers", "relatedTerms", "followers", "votes", "domains"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"children", Relation::contains, false, {Kind::glossary_term}},
      {"reviewers", Relation::reviews, false, {Kind::user}},
      {"relatedTerms", Relation::related, false, {Kind::glossary_term}},
      {"followers", Relation::follows, true, {Kind::user}},
      {"domains", Relation::domain, false, {Kind::domain}}};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"synonyms", "tags"};
  /// What info() answers for the kind.
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

/// A search index, in its service (docs/SEMANTICS.md §1, §2). Fields marked extra are filled by get
/// and list only when `fields` asks for them; writes answer them all.
struct SearchIndex : EntityBase {
  static constexpr Kind kind = Kind::search_index;  ///< the kind, Kind::search_index
  using create_type = CreateSearchIndex;            ///< what Store::create takes: CreateSearchIndex
  std::optional<EntityReference> service{};         ///< `service`: its service, with its `deleted`
  std::optional<std::string> service_type{};        ///< `serviceType`: its service's
  std::vector<SearchIndexField> fields{};           ///< `fields`: required
  IndexType index_type = IndexType::index;          ///< `indexType`: default Index
  std::vector<EntityReference> owners{};            ///< `owners`
  std::vector<TagLabel> tags{};                     ///< `tags`
  std::vector<EntityReference> domains{};           ///< `domains`
  std::vector<EntityReference> followers{};         ///< `followers`, extra
  std::optional<Votes> votes{};                     ///< `votes`, extra
  std::optional<boost::json::object> extension{};   ///< `extension`, extra: any JSON object
  std::optional<std::string> source_hash{};         ///< `sourceHash`, extra: 1 to 32 characters
};
BOOST_DESCRIBE_STRUCT(SearchIndex, (EntityBase),
                      (service, service_type, fields, index_type, owners, tags, domains,
                       followers, votes, extension, source_hash))
/// The rules of search indexes, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<SearchIndex> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"followers", "votes", "extension", "sourceHash"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"domains", Relation::domain, false, {Kind::domain}},
      {"followers", Relation::follows, true, {Kind::user}}};
  /// What KindInfo::read_only points to: `serviceType` is the service's.
  static constexpr std::string_view read_only[] = {"serviceType"};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"fields"};
  /// What KindInfo::checked_fields points to.
  static constexpr std::string_view checked_fields[] = {"fields", "sourceHash", "tags"};
  /// What info() answers for the kind.
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

/// A domain, or a sub-domain under its parent (docs/SEMANTICS.md §1, §2). Fields marked extra are
/// filled by get and list only when `fields` asks for them; writes answer them all.
struct Domain : EntityBase {
  static constexpr Kind kind = Kind::domain;       ///< the kind, Kind::domain
  using create_type = CreateDomain;                ///< what Store::create takes: CreateDomain
  DomainType domain_type = DomainType::aggregate;  ///< `domainType`: required
  /// `parent`: its parent domain; absent on a top-level one.
  std::optional<EntityReference> parent{};
  std::vector<EntityReference> owners{};           ///< `owners`, extra
  std::vector<EntityReference> children{};         ///< `children`, extra: its sub-domains
  std::vector<EntityReference> experts{};          ///< `experts`, extra: users
  std::vector<EntityReference> followers{};        ///< `followers`, extra
};
BOOST_DESCRIBE_STRUCT(Domain, (EntityBase),
                      (domain_type, parent, owners, children, experts, followers))
/// The rules of domains, stated once: `info` and the lists it points to (KindInfo).
template <>
struct KindTraits<Domain> {
  /// What KindInfo::extra_fields points to.
  static constexpr std::string_view extras[] = {"owners", "children", "experts", "followers"};
  /// What KindInfo::relations points to.
  static constexpr RelationField relations[] = {
      {"owners", Relation::owns, true, {Kind::user, Kind::team}},
      {"children", Relation::contains, false, {Kind::domain}},
      {"experts", Relation::expert, false, {Kind::user}},
      {"followers", Relation::follows, true, {Kind::user}}};
  /// What KindInfo::required points to.
  static constexpr std::string_view required[] = {"domainType"};
  /// What info() answers for the kind.
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

/// What Store::create<User> takes: the `users` body of docs/REST.md.
struct CreateUser {
  std::string name{};                         ///< `name`
  std::string email{};                        ///< `email`
  std::optional<std::string> display_name{};  ///< `displayName`
  std::optional<std::string> description{};   ///< `description`
  std::optional<bool> is_admin{};             ///< `isAdmin`: only an admin may set it true
  std::optional<bool> is_bot{};               ///< `isBot`
  std::vector<Uuid> teams{};                  ///< `teams`: ids of the teams it joins
  /// The members from_json requires: `name` and `email`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "email"};
};
BOOST_DESCRIBE_STRUCT(CreateUser, (),
                      (name, email, display_name, description, is_admin, is_bot, teams))

/// What Store::create<Team> takes: the `teams` body of docs/REST.md.
struct CreateTeam {
  std::string name{};                         ///< `name`
  std::optional<TeamType> team_type{};        ///< `teamType`: default Group
  std::optional<std::string> display_name{};  ///< `displayName`
  std::optional<std::string> description{};   ///< `description`
  std::optional<std::string> email{};         ///< `email`
  std::optional<bool> is_joinable{};          ///< `isJoinable`: default true
  std::vector<Uuid> parents{};                ///< `parents`: ids of its parent teams
  std::vector<Uuid> users{};                  ///< `users`: ids of its members
  std::vector<Uuid> policies{};               ///< `policies`: ids of the policies it attaches
  std::vector<EntityReference> owners{};      ///< `owners`: users or Group teams, by reference
  std::vector<std::string> domains{};         ///< `domains`: FQNs of domains
  /// The members from_json requires: `name`.
  static constexpr std::array<std::string_view, 1> required_members{"name"};
};
BOOST_DESCRIBE_STRUCT(CreateTeam, (),
                      (name, team_type, display_name, description, email, is_joinable, parents,
                       users, policies, owners, domains))

/// What Store::create<Policy> takes: the `policies` body of docs/REST.md.
struct CreatePolicy {
  std::string name{};                         ///< `name`
  std::optional<std::string> display_name{};  ///< `displayName`
  std::optional<std::string> description{};   ///< `description`
  std::optional<bool> enabled{};              ///< `enabled`: default true
  std::vector<PolicyRule> rules{};            ///< `rules`
  std::vector<EntityReference> owners{};      ///< `owners`: users or Group teams, by reference
  /// The members from_json requires: `name` and `rules`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "rules"};
};
BOOST_DESCRIBE_STRUCT(CreatePolicy, (), (name, display_name, description, enabled, rules, owners))

/// What Store::create<MlModelService> and Store::create<SearchService> take: the body of
/// docs/REST.md for both service collections.
struct CreateService {
  std::string name{};                         ///< `name`
  std::string service_type{};                 ///< `serviceType`: any non-empty string
  std::optional<std::string> description{};   ///< `description`
  std::optional<std::string> display_name{};  ///< `displayName`
  std::vector<EntityReference> owners{};      ///< `owners`: users or Group teams, by reference
  std::vector<TagLabel> tags{};               ///< `tags`
  std::vector<std::string> domains{};         ///< `domains`: FQNs of domains
  /// The members from_json requires: `name` and `serviceType`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "serviceType"};
};
BOOST_DESCRIBE_STRUCT(CreateService, (),
                      (name, service_type, description, display_name, owners, tags, domains))

/// What Store::create<MlModel> takes: the `mlmodels` body of docs/REST.md.
struct CreateMlModel {
  std::string name{};                              ///< `name`
  std::string service{};                           ///< `service`: the FQN of its ML model service
  std::string algorithm{};                         ///< `algorithm`
  std::optional<std::string> display_name{};       ///< `displayName`
  std::optional<std::string> description{};        ///< `description`
  std::optional<std::string> target{};             ///< `target`
  std::optional<std::string> server{};             ///< `server`: a URI
  std::vector<MlFeature> ml_features{};            ///< `mlFeatures`
  /// `mlHyperParameters`.
  std::vector<MlHyperParameter> ml_hyper_parameters{};
  std::vector<EntityReference> owners{};           ///< `owners`: users or Group teams, by reference
  std::vector<TagLabel> tags{};                    ///< `tags`
  std::vector<std::string> domains{};              ///< `domains`: FQNs of domains
  std::optional<boost::json::object> extension{};  ///< `extension`: any JSON object
  /// The members from_json requires: `name`, `service` and `algorithm`.
  static constexpr std::array<std::string_view, 3> required_members{"name", "service",
                                                                    "algorithm"};
};
BOOST_DESCRIBE_STRUCT(CreateMlModel, (),
                      (name, service, algorithm, display_name, description, target, server,
                       ml_features, ml_hyper_parameters, owners, tags, domains, extension))

/// What Store::create<Glossary> takes: the `glossaries` body of docs/REST.md.
struct CreateGlossary {
  std::string name{};                         ///< `name`
  std::string description{};                  ///< `description`: required
  std::optional<std::string> display_name{};  ///< `displayName`
  std::vector<EntityReference> reviewers{};   ///< `reviewers`: users, by reference
  std::vector<EntityReference> owners{};      ///< `owners`: users or Group teams, by reference
  std::vector<TagLabel> tags{};               ///< `tags`
  std::optional<bool> mutually_exclusive{};   ///< `mutuallyExclusive`: default false
  std::vector<std::string> domains{};         ///< `domains`: FQNs of domains
  /// The members from_json requires: `name` and `description`.
  static constexpr std::array<std::string_view, 2> required_members{"name", "description"};
};
BOOST_DESCRIBE_STRUCT(CreateGlossary, (),
                      (name, description, display_name, reviewers, owners, tags,
                       mutually_exclusive, domains))

/// What Store::create<GlossaryTerm> takes: the `glossaryTerms` body of docs/REST.md.
struct CreateGlossaryTerm {
  std::string glossary{};                     ///< `glossary`: the FQN of its glossary
  /// `parent`: the FQN of its parent term, in that glossary; absent: a top-level term.
  std::optional<std::string> parent{};
  std::string name{};                         ///< `name`
  std::string description{};                  ///< `description`: required
  std::optional<std::string> display_name{};  ///< `displayName`
  std::vector<std::string> synonyms{};        ///< `synonyms`: none of them empty
  std::vector<std::string> related_terms{};   ///< `relatedTerms`: FQNs of terms
  std::vector<EntityReference> reviewers{};   ///< `reviewers`: users, by reference
  std::vector<EntityReference> owners{};      ///< `owners`: users or Group teams, by reference
  std::vector<TagLabel> tags{};               ///< `tags`
  std::optional<bool> mutually_exclusive{};   ///< `mutuallyExclusive`
  /// The members from_json requires: `glossary`, `name` and `description`.
  static constexpr std::array<std::string_view, 3> required_members{"glossary", "name",
                                                                    "description"};
};
BOOST_DESCRIBE_STRUCT(CreateGlossaryTerm, (),
                      (glossary, parent, name, description, display_name, synonyms,
                       related_terms, reviewers, owners, tags, mutually_exclusive))

/// What Store::create<Domain> takes: the `domains` body of docs/REST.md.
struct CreateDomain {
  std::string name{};                              ///< `name`
  DomainType domain_type = DomainType::aggregate;  ///< `domainType`: required
  std::string description{};                       ///< `description`: required
  std::optional<std::string> display_name{};       ///< `displayName`
  /// `parent`: the FQN of its parent domain; absent: a top-level domain.
  std::optional<std::string> parent{};
  std::vector<std::string> experts{};              ///< `experts`: user names
  std::vector<EntityReference> owners{};           ///< `owners`: users or Group teams, by reference
  /// The members from_json requires: `name`, `domainType` and `description`.
  static constexpr std::array<std::string_view, 3> required_members{"name", "domainType",
                                                                    "description"};
};
BOOST_DESCRIBE_STRUCT(CreateDomain, (),
                      (name, domain_type, description, display_name, parent, experts, owners))

/// What Store::create<SearchIndex> takes: the `searchIndexes` body of docs/REST.md.
struct CreateSearchIndex {
  std::string name{};                              ///< `name`
  std::string service{};                           ///< `service`: the FQN of its search service
  std::vector<SearchIndexField> fields{};          ///< `fields`
  std::optional<std::string> display_name{};       ///< `displayName`
  std::optional<std::string> description{};        ///< `description`
  std::optional<IndexType> index_type{};           ///< `indexType`: default Index
  std::vector<EntityReference> owners{};           ///< `owners`: users or Group teams, by reference
  std::vector<TagLabel> tags{};                    ///< `tags`
  std::vector<std::string> domains{};              ///< `domains`: FQNs of domains
  std::optional<boost::json::object> extension{};  ///< `extension`: any JSON object
  std::optional<std::string> source_hash{};        ///< `sourceHash`: 1 to 32 characters
  /// The members from_json requires: `name`, `service` and `fields`.
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

// The conversion tables of this file's structs (detail::layout, json_mapping.hpp) are made once,
// in the library (impl/entity_layouts.ipp): a program that converts an entity, or creates one
// through Store::create, calls them there instead of making them again in each of its files
// (BENCHMARKS.md 13 measures what that saves).
namespace catalog::detail {
#define CATALOG_DETAIL_ENTITY_LAYOUTS_(EXTERN)                             \
  EXTERN template CATALOG_DECL const Layout& layout<EntityReference>();    \
  EXTERN template CATALOG_DECL const Layout& layout<TagLabel>();           \
  EXTERN template CATALOG_DECL const Layout& layout<Votes>();              \
  EXTERN template CATALOG_DECL const Layout& layout<FieldChange>();        \
  EXTERN template CATALOG_DECL const Layout& layout<ChangeDescription>();  \
  EXTERN template CATALOG_DECL const Layout& layout<MlFeature>();          \
  EXTERN template CATALOG_DECL const Layout& layout<MlHyperParameter>();   \
  EXTERN template CATALOG_DECL const Layout& layout<SearchIndexField>();   \
  EXTERN template CATALOG_DECL const Layout& layout<PolicyRule>();         \
  EXTERN template CATALOG_DECL const Layout& layout<EntityBase>();         \
  EXTERN template CATALOG_DECL const Layout& layout<User>();               \
  EXTERN template CATALOG_DECL const Layout& layout<Team>();               \
  EXTERN template CATALOG_DECL const Layout& layout<Policy>();             \
  EXTERN template CATALOG_DECL const Layout& layout<ServiceBase>();        \
  EXTERN template CATALOG_DECL const Layout& layout<MlModelService>();     \
  EXTERN template CATALOG_DECL const Layout& layout<SearchService>();      \
  EXTERN template CATALOG_DECL const Layout& layout<MlModel>();            \
  EXTERN template CATALOG_DECL const Layout& layout<Glossary>();           \
  EXTERN template CATALOG_DECL const Layout& layout<GlossaryTerm>();       \
  EXTERN template CATALOG_DECL const Layout& layout<SearchIndex>();        \
  EXTERN template CATALOG_DECL const Layout& layout<Domain>();             \
  EXTERN template CATALOG_DECL const Layout& layout<CreateUser>();         \
  EXTERN template CATALOG_DECL const Layout& layout<CreateTeam>();         \
  EXTERN template CATALOG_DECL const Layout& layout<CreatePolicy>();       \
  EXTERN template CATALOG_DECL const Layout& layout<CreateService>();      \
  EXTERN template CATALOG_DECL const Layout& layout<CreateMlModel>();      \
  EXTERN template CATALOG_DECL const Layout& layout<CreateGlossary>();     \
  EXTERN template CATALOG_DECL const Layout& layout<CreateGlossaryTerm>(); \
  EXTERN template CATALOG_DECL const Layout& layout<CreateDomain>();       \
  EXTERN template CATALOG_DECL const Layout& layout<CreateSearchIndex>();
CATALOG_DETAIL_ENTITY_LAYOUTS_(extern)
}  // namespace catalog::detail

#endif  // CATALOG_ENTITIES_HPP
