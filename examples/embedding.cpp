// The README's embedding example, compiled so it stays true: open, authenticate, follow, list,
// patch. It keeps its store in ./embedding-data.
#include <catalog/store.hpp>
#include <iostream>

int main() {
  using namespace catalog;
  StoreOptions options;
  options.admins = {"admin"};                                       // created on open
  options.jwt.hs256_keys = {{std::string(32, 'k'), std::nullopt}};  // your IdP's secret
  auto store = Store::open_lmdb("embedding-data", options).value();
  auto admin = store.principal("admin").value();  // or store.authenticate(bearer_token)

  (void)store.create<MlModelService>(admin, CreateService{"mlflow", "Mlflow"});
  auto model = store.create<MlModel>(admin, CreateMlModel{"churn", "mlflow", "xgboost"});
  if (!model) model = store.get<MlModel>(admin, EntityKey::by_fqn("mlflow.churn"));

  auto followed = store.follow<MlModel>(admin, model->id, admin.id).value();
  ListOptions page;
  page.limit = 10;
  for (const auto& m : store.list<MlModel>(admin, page).value().data) std::cout << m.name << '\n';
  auto patched = store.patch<MlModel>(admin, model->id,
                                      json::parse(R"({"description":"Who leaves"})").value());
  if (!patched) return std::cerr << patched.error() << '\n', 1;  // e.g. CONFLICT, FORBIDDEN
  std::cout << "now at version " << patched->version << '\n';
}
