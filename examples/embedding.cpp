// The README's embedding example, compiled so it stays true: open, authenticate, follow, list,
// patch. Run it with a store directory; it prints one line per step.
#include <catalog/store.hpp>

#include <iostream>

int main(int argc, char** argv) {
  using namespace catalog;
  StoreOptions options;
  options.admins = {"admin"};                                       // created on open
  options.jwt.hs256_keys = {{std::string(32, 'k'), std::nullopt}};  // your IdP's secret
  auto store = Store::open_lmdb(argc > 1 ? argv[1] : "embedding-data", options).value();
  auto admin = store.principal("admin").value();  // or store.authenticate(bearer_token)

  CreateService service{"mlflow", "Mlflow"};
  if (auto s = store.create<MlModelService>(admin, service);
      !s && s.error().kind() != ErrorKind::conflict)
    return std::cerr << s.error() << '\n', 1;
  CreateMlModel request{"churn", "mlflow", "xgboost"};
  auto model = store.create<MlModel>(admin, request);
  if (!model) model = store.get<MlModel>(admin, EntityKey::by_fqn("mlflow.churn"));

  auto followed = store.follow<MlModel>(admin, model->id, admin.id).value();
  std::cout << followed.fully_qualified_name << " has " << followed.followers.size()
            << " follower\n";

  ListOptions page;
  page.limit = 10;
  for (const auto& m : store.list<MlModel>(admin, page).value().data) std::cout << m.name << '\n';

  auto patched = store.patch<MlModel>(admin, model->id,
                                      json::parse(R"({"description":"Who leaves"})").value());
  if (!patched) return std::cerr << patched.error() << '\n', 1;  // e.g. CONFLICT, FORBIDDEN
  std::cout << "now at version " << patched->version << '\n';
}
