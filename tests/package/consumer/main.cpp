// A program built against the installed catalog: opens a store in memory with an admin, creates
// a glossary and reads it back by name and by id. Exits non-zero on any mismatch.
#include <catalog/store.hpp>

#include <iostream>
#include <string>
#include <utility>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "mismatch: " << what << '\n';
    ++failures;
  }
}

void check_glossary(const catalog::Glossary& g, const catalog::Glossary& made,
                    const std::string& how) {
  check(g.id == made.id, how + ": id");
  check(g.name == "Business", how + ": name is " + g.name);
  check(g.fully_qualified_name == "Business",
        how + ": fullyQualifiedName is " + g.fully_qualified_name);
  check(g.description == "Terms the business uses", how + ": description");
  check(g.version == catalog::Version::initial(), how + ": version is " + g.version.to_string());
  check(!g.deleted, how + ": deleted");
  check(g.updated_by == "admin", how + ": updatedBy is " + g.updated_by);
}

}  // namespace

int main() {
  catalog::StoreOptions options;
  options.admins = {"admin"};
  auto store = catalog::Store::in_memory(std::move(options));
  if (!store) {
    std::cerr << "Store::in_memory: " << store.error() << '\n';
    return 1;
  }
  auto admin = store->principal("admin");
  if (!admin) {
    std::cerr << "principal(admin): " << admin.error() << '\n';
    return 1;
  }
  check(admin->is_admin, "admin is an admin");

  catalog::CreateGlossary request;
  request.name = "Business";
  request.description = "Terms the business uses";
  auto made = store->create<catalog::Glossary>(*admin, request);
  if (!made) {
    std::cerr << "create<Glossary>: " << made.error() << '\n';
    return 1;
  }
  check_glossary(*made, *made, "created");

  auto by_name = store->get<catalog::Glossary>(*admin, catalog::EntityKey::by_fqn("Business"));
  if (!by_name) {
    std::cerr << "get<Glossary>(Business): " << by_name.error() << '\n';
    return 1;
  }
  check_glossary(*by_name, *made, "got by name");

  auto by_id = store->get<catalog::Glossary>(*admin, made->id);
  if (!by_id) {
    std::cerr << "get<Glossary>(id): " << by_id.error() << '\n';
    return 1;
  }
  check_glossary(*by_id, *made, "got by id");

  auto again = store->create<catalog::Glossary>(*admin, request);
  check(!again && again.error().kind() == catalog::ErrorKind::conflict,
        "a second create of the same name is a conflict");

  if (failures != 0) return 1;
  std::cout << "catalog consumer: ok\n";
  return 0;
}
