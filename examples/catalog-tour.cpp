// catalog-tour: the first program to run. It opens (or creates) an LMDB catalog in
// ./catalog-data (or the store `--store` names: options.hpp, e.g. `--store
// postgresql:<conninfo>`) and walks through what the library does, one line per step:
//   1-5. creating users, a team, services, ML models, a glossary with nested terms (one with a
//        dot in its name), domains and search indexes; on a second run each is found instead
//        (a create that answers CONFLICT means "already there": see ensure<E> below);
//   6.   soft-deleting a glossary with its terms, restoring it, hard-deleting a term;
//   7.   patching a domain (JSON Merge Patch) and a team (JSON Patch), and the team's history;
//   8.   following and voting on an ML model;
//   9.   paging through the search indexes of one service, two at a time;
//   10.  a user refused by policy (403) and the owner allowed;
//   11.  searching: a ranked query with facets and highlights, a typeahead, and a soft delete
//        that the next search no longer finds (docs/SEMANTICS.md §16);
//   12.  counting what the catalog holds.
// Every operation returns a catalog::Result<T>: a value, or an Error with a kind (the HTTP
// class: NOT_FOUND, CONFLICT, ...) and a message. Run it twice: the second run finds the data.

#include <catalog/fqn.hpp>
#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include "options.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace catalog;

namespace {

// An unexpected failure: what the tour was doing and the library's error. main() prints it.
struct TourFailure {
  std::string doing;
  Error error;
};

// The value of `r`, or a TourFailure naming what failed.
template <class T>
T need(Result<T> r, std::string_view doing) {
  if (!r) throw TourFailure{std::string(doing), r.error()};
  return std::move(*r);
}

int created = 0, found = 0;

// Creates an entity, or finds it when a previous run created it: a create whose FQN is taken
// fails with CONFLICT ("Entity already exists"), and the entity is then read by its FQN.
// Something a crashed run left soft-deleted is restored. Returns the entity with all fields.
template <class E>
Result<E> ensure(Store& store, const Principal& admin, const typename E::create_type& request,
                 const std::string& fqn) {
  std::string_view type = type_name(E::kind);
  auto made = store.create<E>(admin, request);
  if (made) {
    ++created;
    std::cout << "  + created " << type << ' ' << made->fully_qualified_name << '\n';
    return made;
  }
  if (made.error().code() != Errc::already_exists) return made.error();  // kind() is conflict
  GetOptions everything;  // all fields, live or soft-deleted
  everything.fields = {"*"};
  everything.include = Include::all;
  auto got = store.get<E>(admin, EntityKey::by_fqn(fqn), everything);
  if (!got) return got.error();
  ++found;
  if (got->deleted) {
    std::cout << "  ~ found   " << type << ' ' << fqn << " soft-deleted: restoring it\n";
    return store.restore<E>(admin, got->id);
  }
  std::cout << "  = found   " << type << ' ' << fqn << " (already there)\n";
  return got;
}

void heading(std::string_view title) { std::cout << "\n== " << title << " ==\n"; }

// The name of a reference the catalog filled in, or "-" when there is none.
std::string name_of(const std::optional<EntityReference>& ref) {
  return ref ? ref->name.value_or(to_string(ref->id)) : "-";
}

std::string names(const std::vector<EntityReference>& refs) {
  std::string out;
  for (const auto& r : refs) out += (out.empty() ? "" : ", ") + r.name.value_or(to_string(r.id));
  return out.empty() ? "(none)" : out;
}

// "description updated" or "created" for one history entry.
std::string summary(const std::optional<ChangeDescription>& cd) {
  if (!cd) return "created";
  std::string out;
  auto add = [&](const std::vector<FieldChange>& changes, std::string_view verb) {
    for (const auto& c : changes)
      out += (out.empty() ? "" : ", ") + c.name + ' ' + std::string(verb);
  };
  add(cd->fields_added, "added");
  add(cd->fields_updated, "updated");
  add(cd->fields_deleted, "deleted");
  return (out.empty() ? std::string("no field changes") : out) + " (from " +
         cd->previous_version.to_string() + ")";
}

// Options that find soft-deleted entities too (the default finds live ones only).
GetOptions live_or_deleted() {
  GetOptions options;
  options.include = Include::all;
  return options;
}

// Prints whether each term is deleted, reading soft-deleted ones too.
void show_terms(Store& store, const Principal& admin, const std::vector<std::string>& fqns) {
  for (const auto& fqn : fqns) {
    auto t = need(store.get<GlossaryTerm>(admin, EntityKey::by_fqn(fqn), live_or_deleted()),
                  "reading term " + fqn);
    std::cout << "    " << fqn << ": deleted=" << std::boolalpha << t.deleted << ", version "
              << t.version.to_string() << '\n';
  }
}

// The other of two texts: each run changes the description, so each run makes a new version.
std::string toggle(const std::optional<std::string>& current, std::string a, std::string b) {
  return current == a ? b : a;
}

SearchIndexField field(std::string name, std::string type) {
  SearchIndexField f;
  f.name = std::move(name);
  f.data_type = std::move(type);
  return f;
}

// How many live entities of a kind there are: a page of limit 0 still carries the total.
template <class E>
std::int64_t total(Store& store, const Principal& admin) {
  ListOptions count_only;
  count_only.limit = 0;
  return need(store.list<E>(admin, count_only), "counting").total;
}

CreateService service(std::string name, std::string type) {
  CreateService s;
  s.name = std::move(name);
  s.service_type = std::move(type);
  return s;
}

int run(catalog_examples::Options o) {
  if (!o.store_given) o.lmdb_dir = "catalog-data";
  o.store.admins.push_back("admin");  // created as an admin user on first open
  o.store.log = catalog_examples::stderr_log("catalog-tour");
  const bool existed = o.lmdb_dir && std::filesystem::exists(*o.lmdb_dir);
  const auto where = o.lmdb_dir ? "./" + o.lmdb_dir->string() : catalog_examples::describe_store(o);
  const bool lmdb = o.lmdb_dir.has_value();
  auto store = need(catalog_examples::open_store(std::move(o)), "opening " + where);
  auto admin = need(store.principal("admin"), "getting the admin principal");
  if (!lmdb)
    std::cout << "Opened the catalog in " << where << '\n';
  else
    std::cout << (existed ? "Opened the catalog in " + where + " (a previous run created it)\n"
                          : "Created a new catalog in " + where + "\n");
  std::cout << "Acting as " << admin.name << " (admin: " << std::boolalpha << admin.is_admin
            << ")\n";

  heading("1. Users and teams");
  std::vector<User> users;
  for (std::string name : {"alice", "bob", "carol"}) {
    CreateUser req;
    req.name = name;
    req.email = name + "@example.com";
    users.push_back(need(ensure<User>(store, admin, req, name), "ensuring user " + name));
  }
  const User &alice = users[0], &bob = users[1];
  CreateTeam team_req;
  team_req.name = "data-science";
  team_req.team_type = TeamType::group;
  team_req.description = "Builds the models";
  team_req.users = {alice.id, bob.id};
  auto team = need(ensure<Team>(store, admin, team_req, "data-science"), "ensuring the team");
  std::cout << "    team " << team.name << " (Group) members: " << names(team.users) << '\n';

  heading("2. Services and ML models");
  auto mlflow = need(ensure<MlModelService>(store, admin, service("mlflow", "Mlflow"), "mlflow"),
                     "ensuring the ML model service");
  for (auto [name, type] :
       {std::pair{"elasticsearch", "ElasticSearch"}, {"opensearch", "OpenSearch"}})
    need(ensure<SearchService>(store, admin, service(name, type), name),
         std::string("ensuring search service ") + name);
  CreateMlModel model_req;  // a model names its service by FQN
  model_req.name = "churn";
  model_req.service = mlflow.fully_qualified_name;
  model_req.algorithm = "XGBoost";
  model_req.ml_features.resize(2);
  model_req.ml_features[0].name = "tenure";
  model_req.ml_features[1].name = "plan";
  model_req.ml_features[1].data_type = FeatureDataType::categorical;
  auto churn = need(ensure<MlModel>(store, admin, model_req, fqn::append("mlflow", "churn")),
                    "ensuring the churn model");
  model_req.name = "forecast";
  model_req.algorithm = "Prophet";
  model_req.ml_features.clear();
  need(ensure<MlModel>(store, admin, model_req, fqn::append("mlflow", "forecast")),
       "ensuring the forecast model");
  std::cout << "    " << churn.fully_qualified_name << ": " << churn.algorithm << ", "
            << churn.ml_features.size() << " features, service " << name_of(churn.service) << '\n';

  heading("3. A glossary with nested terms");
  CreateGlossary glossary_req;
  glossary_req.name = "Business";
  glossary_req.description = "Words the business uses";
  auto glossary =
      need(ensure<Glossary>(store, admin, glossary_req, "Business"), "ensuring the glossary");
  // {parent FQN (empty for a root term), name}. fqn::append quotes a name with a dot.
  std::vector<std::pair<std::string, std::string>> terms = {{"", "Revenue"},
                                                            {"Business.Revenue", "v1.0"},
                                                            {"", "Customer"},
                                                            {"Business.Customer", "Churn"}};
  std::vector<std::string> term_fqns;
  for (const auto& [parent, name] : terms) {
    CreateGlossaryTerm req;
    req.glossary = "Business";
    if (!parent.empty()) req.parent = parent;
    req.name = name;
    req.description = "The " + name + " term";
    term_fqns.push_back(fqn::append(parent.empty() ? "Business" : parent, name));
    need(ensure<GlossaryTerm>(store, admin, req, term_fqns.back()), "ensuring term " + name);
  }
  // Any quoting of an FQN finds the entity: it is made canonical first.
  auto dotted =
      need(store.get<GlossaryTerm>(admin, EntityKey::by_fqn(R"("Business"."Revenue"."v1.0")")),
           "reading the dotted term");
  std::cout << "    \"Business\".\"Revenue\".\"v1.0\" finds " << dotted.fully_qualified_name
            << " (parent " << name_of(dotted.parent) << ")\n";

  heading("4. Domains");
  CreateDomain domain_req;
  domain_req.name = "Sales";
  domain_req.domain_type = DomainType::aggregate;
  domain_req.description = "Everything about selling";
  auto sales = need(ensure<Domain>(store, admin, domain_req, "Sales"), "ensuring domain Sales");
  domain_req.name = "EMEA";
  domain_req.domain_type = DomainType::source_aligned;
  domain_req.description = "Sales in Europe";
  domain_req.parent = "Sales";
  domain_req.experts = {"carol"};  // experts are named by user name
  auto sub =
      need(ensure<Domain>(store, admin, domain_req, "Sales.EMEA"), "ensuring sub-domain EMEA");
  std::cout << "    " << sub.fully_qualified_name << " has parent " << name_of(sub.parent)
            << " and experts " << names(sub.experts) << '\n';

  heading("5. Search indexes");
  CreateSearchIndex index_req;
  index_req.service = "elasticsearch";
  index_req.fields = {field("id", "KEYWORD"), field("body", "TEXT")};
  for (std::string name : {"customers", "invoices", "logs", "orders", "products"}) {
    index_req.name = name;
    need(ensure<SearchIndex>(store, admin, index_req, fqn::append("elasticsearch", name)),
         "ensuring index " + name);
  }
  // The same name in another service is another entity: FQNs differ.
  index_req.service = "opensearch";
  index_req.name = "customers";
  need(ensure<SearchIndex>(store, admin, index_req, "opensearch.customers"),
       "ensuring opensearch.customers");

  heading("6. Soft delete, restore, hard delete");
  DeleteOptions recursive;  // soft by default; recursive takes the terms along
  recursive.recursive = true;
  auto gone = need(store.remove<Glossary>(admin, glossary.id, recursive), "soft-deleting Business");
  std::cout << "  soft-deleted glossary Business with its terms (version "
            << (gone ? gone->version.to_string() : "?") << "):\n";
  show_terms(store, admin, term_fqns);
  auto hidden = store.get<GlossaryTerm>(admin, EntityKey::by_fqn("Business.Revenue"));
  if (!hidden) std::cout << "  a plain get now answers " << hidden.error() << '\n';
  auto back = need(store.restore<Glossary>(admin, glossary.id), "restoring Business");
  std::cout << "  restored glossary Business (version " << back.version.to_string()
            << "); its terms came back:\n";
  show_terms(store, admin, term_fqns);
  CreateGlossaryTerm scratch_req;
  scratch_req.glossary = "Business";
  scratch_req.name = "Scratch";
  scratch_req.description = "Made to be deleted";
  auto scratch = need(ensure<GlossaryTerm>(store, admin, scratch_req, "Business.Scratch"),
                      "ensuring the scratch term");
  DeleteOptions hard_delete;
  hard_delete.hard_delete = true;
  auto hard =
      need(store.remove<GlossaryTerm>(admin, scratch.id, hard_delete), "hard-deleting Scratch");
  std::cout << "  hard-deleted Business.Scratch: "
            << (hard ? "still returned?!" : "nothing returned, nothing to restore") << '\n';
  auto none = store.get<GlossaryTerm>(admin, scratch.id, live_or_deleted());
  if (!none) std::cout << "  even with include=all: " << none.error() << '\n';
  // Deleting by FQN works the same way; a second glossary shows it, with its version history.
  CreateGlossary drafts_req;
  drafts_req.name = "Drafts";
  drafts_req.description = "Made to be deleted by name";
  auto drafts = need(ensure<Glossary>(store, admin, drafts_req, "Drafts"), "ensuring Drafts");
  auto soft = need(store.remove<Glossary>(admin, EntityKey::by_fqn("Drafts")),
                   "soft-deleting Drafts by FQN");
  auto drafts_history = need(store.history<Glossary>(admin, drafts.id), "Drafts history");
  std::cout << "  soft-deleted glossary Drafts by its FQN: version " << soft->version
            << ", history has " << drafts_history.versions.size() << " versions\n";
  need(store.remove<Glossary>(admin, EntityKey::by_fqn("Drafts"), hard_delete),
       "hard-deleting Drafts by FQN");
  std::cout << "  hard-deleted it by FQN too: its history is gone with it ("
            << store.history<Glossary>(admin, drafts.id).error() << ")\n";

  heading("7. Patches and version history");
  // JSON Merge Patch (an object): only the members given change. expected_version makes the
  // patch fail with CONFLICT if someone changed the domain since it was read.
  boost::json::object merge{{"description", toggle(sales.description, "Everything about selling",
                                                   "Selling, renewals and upsell")}};
  PatchOptions if_unchanged;
  if_unchanged.expected_version = sales.version;
  auto patched = need(store.patch<Domain>(admin, sales.id, merge, if_unchanged),
                      "merge-patching domain Sales");
  std::cout << "  merge-patched domain Sales: version " << sales.version.to_string() << " -> "
            << patched.version.to_string() << ", description \"" << patched.description.value_or("")
            << "\"\n";
  // JSON Patch (an array of operations): test the current value, then replace it.
  auto next = toggle(team.description, "Builds the models", "Builds and runs the models");
  boost::json::array ops{
      boost::json::object{
          {"op", "test"}, {"path", "/description"}, {"value", team.description.value_or("")}},
      boost::json::object{{"op", "replace"}, {"path", "/description"}, {"value", next}}};
  auto team2 = need(store.patch<Team>(admin, team.id, ops), "JSON-patching team data-science");
  std::cout << "  JSON-patched team data-science: version " << team.version.to_string() << " -> "
            << team2.version.to_string() << ", description \"" << team2.description.value_or("")
            << "\"\n";
  auto history = need(store.history<Team>(admin, team.id), "reading the team's history");
  std::cout << "  history of " << history.entity_type
            << " data-science: " << history.versions.size() << " versions, newest first\n";
  for (std::size_t i = 0; i < history.versions.size(); ++i) {
    if (i == 4) {
      std::cout << "    ... and " << history.versions.size() - i << " older\n";
      break;
    }
    const Team& old = history.versions[i];  // each version is the entity as it was
    std::cout << "    " << old.version.to_string() << ": " << summary(old.change_description)
              << '\n';
    if (i == 0 && old.change_description)
      std::cout << "      changeDescription " << *old.change_description << '\n';
  }
  auto first = need(store.version<Team>(admin, team.id, "0.1"), "reading version 0.1 of the team");
  std::cout << "  version 0.1 said: \"" << first.description.value_or("") << "\"\n";

  heading("8. Following and voting");
  auto followed =
      need(store.follow<MlModel>(admin, churn.id, alice.id), "adding alice as a follower");
  std::cout << "  alice follows " << followed.fully_qualified_name
            << "; followers: " << names(followed.followers) << '\n';
  auto alice_p = need(store.principal("alice"), "getting alice's principal");
  auto bob_p = need(store.principal("bob"), "getting bob's principal");
  need(store.vote<MlModel>(alice_p, churn.id, VoteType::voted_up), "alice voting");
  auto voted = need(store.vote<MlModel>(bob_p, churn.id, VoteType::voted_down), "bob voting");
  Votes votes = voted.votes.value_or(Votes{});
  std::cout << "  alice voted up, bob voted down: " << votes.up_votes << " up ("
            << names(votes.up_voters) << "), " << votes.down_votes << " down ("
            << names(votes.down_voters) << ")\n";

  auto unfollowed =
      need(store.unfollow<MlModel>(admin, churn.id, alice.id), "removing alice as a follower");
  std::cout << "  alice unfollows it again; followers: "
            << (unfollowed.followers.empty() ? "none" : names(unfollowed.followers)) << '\n';
  need(store.follow<MlModel>(alice_p, churn.id, alice.id), "alice following it herself");

  heading("9. Paging through the indexes of one service");
  ListOptions paging;
  paging.limit = 2;
  paging.service = "elasticsearch";  // the service's FQN
  for (int n = 1;; ++n) {
    auto page = need(store.list<SearchIndex>(admin, paging), "listing search indexes");
    std::string line;
    for (const auto& index : page.data)
      line += (line.empty() ? "" : ", ") + index.fully_qualified_name;
    std::cout << "  page " << n << " (" << page.data.size() << " of " << page.total << "): " << line
              << '\n';
    if (!page.after) break;
    std::cout << "    next: after=" << *page.after << '\n';
    paging.after = page.after;
  }
  auto all_customers = need(store.list<SearchIndex>(admin), "listing all search indexes");
  std::cout << "  over all services, " << all_customers.total
            << " indexes; the two named customers:";
  for (const auto& index : all_customers.data)
    if (index.name == "customers") std::cout << ' ' << index.fully_qualified_name;
  std::cout << '\n';

  // Extra fields on request, and which deletion states to see (docs/SEMANTICS.md §8).
  ListOptions glossaries;
  glossaries.fields = {"owners", "reviewers", "termCount"};
  glossaries.include = Include::all;
  for (const auto& g : need(store.list<Glossary>(admin, glossaries), "listing glossaries").data)
    std::cout << "  glossary " << g.name << ": " << g.term_count.value_or(0)
              << " terms, deleted=" << (g.deleted ? "true" : "false") << '\n';
  ListOptions domains;
  domains.fields = {"children", "experts"};
  for (const auto& d : need(store.list<Domain>(admin, domains), "listing domains").data)
    std::cout << "  domain " << d.fully_qualified_name << ": children "
              << (d.children.empty() ? "none" : names(d.children)) << ", experts "
              << (d.experts.empty() ? "none" : names(d.experts)) << '\n';

  heading("10. Who may do what");
  // Policies (docs/SEMANTICS.md §12): only admins create; owners may do everything to what they
  // own; everyone else may view, follow and vote. carol does not own the term; bob does.
  CreateGlossaryTerm owned_request;
  owned_request.glossary = "Business";
  owned_request.name = "Owned";
  owned_request.description = "A term bob owns, made anew each run";
  owned_request.owners = {EntityReference{bob_p.id, "user"}};
  auto owned = need(ensure<GlossaryTerm>(store, admin, owned_request, "Business.Owned"),
                    "creating a term owned by bob");
  auto carol_p = need(store.principal("carol"), "getting carol's principal");
  DeleteOptions for_good;
  for_good.hard_delete = true;
  auto refused = store.remove<GlossaryTerm>(carol_p, owned.id, for_good);
  if (refused) throw TourFailure{"checking that carol may not delete bob's term", Error()};
  std::cout << "  carol deletes " << owned.fully_qualified_name << ": " << refused.error() << '\n';
  need(store.remove<GlossaryTerm>(bob_p, owned.id, for_good), "bob deleting his own term");
  std::cout << "  bob (its owner) deletes it: done, it is gone\n";

  heading("11. Search");
  // The index is written by the same transaction as every write: nothing to refresh.
  SearchRequest query;
  query.q = "churn";
  auto hits = need(store.search(admin, query), "searching for churn");
  std::cout << "  q=churn: " << hits.total << " hits\n";
  for (const auto& h : hits.hits) {
    std::cout << "    " << h.index << ' '
              << std::visit([](const auto& e) { return e.fully_qualified_name; }, h.entity)
              << " score " << h.score;
    for (const auto& [field, texts] : h.highlight) std::cout << "  " << field << ": " << texts[0];
    std::cout << '\n';
  }
  for (const auto& facet : hits.aggregations)
    if (facet.field == "entityType")
      for (const auto& b : facet.buckets)
        std::cout << "    facet entityType " << b.key << ": " << b.doc_count << '\n';
  auto typed = need(store.suggest(admin, "cust"), "typeahead for cust");
  std::cout << "  typeahead \"cust\":";
  for (const auto& s : typed)
    std::cout << ' '
              << std::visit([](const auto& e) { return e.fully_qualified_name; }, s.entity)
              << " (" << s.index << ')';
  std::cout << '\n';
  CreateGlossaryTerm fleeting_req;
  fleeting_req.glossary = "Business";
  fleeting_req.name = "Fleeting";
  fleeting_req.description = "An ephemeral term, soft-deleted each run";
  auto fleeting = need(ensure<GlossaryTerm>(store, admin, fleeting_req, "Business.Fleeting"),
                       "ensuring Business.Fleeting");
  SearchRequest ephemeral;
  ephemeral.q = "ephemeral";
  std::cout << "  q=ephemeral: " << need(store.search(admin, ephemeral), "searching").total
            << " hit before the soft delete, ";
  need(store.remove<GlossaryTerm>(admin, fleeting.id), "soft-deleting Business.Fleeting");
  std::cout << need(store.search(admin, ephemeral), "searching again").total << " after it";
  ephemeral.deleted = true;
  std::cout << " (" << need(store.search(admin, ephemeral), "searching deleted").total
            << " with deleted=true)\n";

  heading("12. Summary");
  std::cout << "  users " << total<User>(store, admin) << ", teams " << total<Team>(store, admin)
            << ", ML model services " << total<MlModelService>(store, admin) << ", ML models "
            << total<MlModel>(store, admin) << ", search services "
            << total<SearchService>(store, admin) << ",\n  search indexes "
            << total<SearchIndex>(store, admin) << ", glossaries " << total<Glossary>(store, admin)
            << ", glossary terms " << total<GlossaryTerm>(store, admin) << ", domains "
            << total<Domain>(store, admin) << '\n';
  std::cout << "  this run created " << created << " entities and found " << found
            << " already there (Business.Scratch and Business.Owned are made anew each run, to be hard-deleted)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Walks through the catalog in ./catalog-data (LMDB), or in the store named. Run it "
               "twice.",
               "catalog-tour");
  catalog_examples::add_standard_flags(app);
  catalog_examples::StoreFlags flags(
      app, "lmdb:<dir> (the default: lmdb:catalog-data), memory or postgresql:<conninfo>");
  catalog_examples::Options options;
  if (auto status = catalog_examples::parse(app, argc, argv, [&] { options = flags.options(); }))
    return *status;
  try {
    return run(std::move(options));
  } catch (const TourFailure& f) {
    std::cerr << "catalog-tour: failed while " << f.doing << ": " << f.error.message() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "catalog-tour: failed: " << e.what() << '\n';
  }
  return 1;
}
