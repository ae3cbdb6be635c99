// A patch body (merge patch for an object, JSON Patch for an array) applied to the ML model
// mlflow.churn through Store::patch_json, first by bob (no edit rights), then by the admin.
// The body is read as the REST surface reads one (I-JSON, depth 64), and may be up to the body
// limit (8 MiB), so sequences whose result is far deeper or larger than their body are reachable.
// Properties: nothing crashes or exhausts memory; no answer is an internal error; afterwards the
// model, the list of models, its history (every version) and the event feed all still read, and
// Store::verify() is clean.
#include "fuzz_support.hpp"

#include <catalog/json.hpp>
#include <catalog/store.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using catalog::Kind;

template <class R>
void no_internal_error(const R& result, std::string_view what) {
  if (!result && result.error().kind() == catalog::ErrorKind::internal)
    fuzz::fail(what, result.error().message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = catalog::json::parse(text);
  if (!body) return 0;

  static fuzz::WorldCache cache(false);
  auto& world = cache.get();
  auto& store = world.store;
  auto key = catalog::EntityKey::by_fqn("mlflow.churn");

  // Authorization comes before any work the caller controls: bob's patch must be answered
  // (400 or 403, or a no-op) without building what the body asks for.
  no_internal_error(store.patch_json(world.bob, Kind::mlmodel, key, *body),
                    "bob's patch answered an internal error");
  auto patched = store.patch_json(world.admin, Kind::mlmodel, key, *body);
  no_internal_error(patched, "the admin's patch answered an internal error");

  // Whatever was accepted must read back, alone and in every place it shows up. An input that
  // changed nothing left the catalog as it was built, which reads.
  if (!cache.changed()) return 0;
  catalog::GetOptions all_fields;
  all_fields.fields = {"*"};
  auto got = store.get_json(world.admin, Kind::mlmodel, key, all_fields);
  if (!got) fuzz::fail("the model does not read back", got.error().message());
  if (patched && patched->at("version") != got->at("version"))
    fuzz::fail("the model reads back at another version than the patch answered",
               catalog::json::serialize(got->at("version")));

  catalog::ListOptions list;
  list.fields = {"*"};
  auto listed = store.list_json(world.admin, Kind::mlmodel, list);
  if (!listed) fuzz::fail("the list of models does not read", listed.error().message());
  if (listed->data.size() != 1) fuzz::fail("the list of models lost or gained a model");

  auto id = fuzz::must(catalog::parse_uuid(world.model_id), "model id");
  auto history = store.history_json(world.admin, Kind::mlmodel, id);
  if (!history) fuzz::fail("the model's history does not read", history.error().message());
  // Every version the history lists reads on its own. Which numbers exist depends on the patch:
  // a change of algorithm, server or target is major (docs/SEMANTICS.md §3: 0.1 becomes 1.1), so
  // read the numbers the history gives rather than assume 0.2.
  for (const auto& text : history->versions) {
    auto stored = catalog::json::parse(text);
    if (!stored || !stored->is_object() || !stored->as_object().contains("version"))
      fuzz::fail("a version in the model's history is not an entity", text);
    auto number = catalog::json::serialize(stored->as_object().at("version"));
    auto old = store.version_json(world.admin, Kind::mlmodel, id, number);
    if (!old) fuzz::fail("a version the history lists does not read", old.error().message());
  }

  auto events = store.events(world.admin, 0, 100);
  if (!events) fuzz::fail("the event feed does not read", events.error().message());
  fuzz::verify_clean(world);
  cache.reset();
  return 0;
}
