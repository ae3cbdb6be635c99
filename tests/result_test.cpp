// catalog::Result (error.hpp) and the member table of described structs
// (detail::fields, json_mapping.hpp): the two pieces every conversion and every operation's
// answer go through.
#include <catalog/detail/json_mapping.hpp>
#include <catalog/detail/json_text.hpp>
#include <catalog/entities.hpp>
#include <catalog/error.hpp>

#include <catch2/catch.hpp>

#include <boost/json/parse.hpp>
#include <boost/mp11/algorithm.hpp>

#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

using namespace catalog;

namespace {

Result<std::vector<std::string>> names(bool ok) {
  if (!ok) return fail(Errc::not_found, "no names");
  return std::vector<std::string>{"a", "bb", std::string(100, 'c')};
}

struct Counted {
  static inline int alive = 0;
  int v = 0;
  Counted() { ++alive; }
  explicit Counted(int x) : v(x) { ++alive; }
  Counted(const Counted& o) : v(o.v) { ++alive; }
  Counted(Counted&& o) noexcept : v(o.v) { ++alive; }
  Counted& operator=(const Counted&) = default;
  ~Counted() { --alive; }
};

}  // namespace

TEST_CASE("a Result holds a value or an error", "[result]") {
  Result<std::string> ok = std::string("x");
  REQUIRE(ok);
  CHECK(ok.has_value());
  CHECK_FALSE(ok.has_error());
  CHECK(*ok == "x");
  CHECK(ok->size() == 1);
  CHECK(ok.value() == "x");
  CHECK(ok.error() == Error());  // a success's error is the default one

  Result<std::string> bad = fail(Errc::already_exists, "taken");
  REQUIRE_FALSE(bad);
  CHECK(bad.has_error());
  CHECK(bad.error().kind() == ErrorKind::conflict);
  CHECK(bad.error().message() == "taken");
  // What the exception carries: codec_test, "errors: kinds and type names".
  CHECK_THROWS_AS(bad.value(), Exception);

  Result<void> done;
  CHECK(done);
  CHECK_NOTHROW(done.value());
  Result<void> refused = fail(Errc::forbidden, "no");
  CHECK_FALSE(refused);
  CHECK(refused.error().kind() == ErrorKind::forbidden);
  CHECK_THROWS_AS(refused.value(), Exception);
  CHECK(done == Result<void>());
  CHECK_FALSE(done == refused);

  Result<int> zero = {};  // `return {};` is a default value
  CHECK(*zero == 0);
  Result<std::string> made(std::in_place, 3, 'z');
  CHECK(*made == "zzz");
  // The tag makes the value from the arguments after it: an empty optional here, not an
  // optional made from the tag.
  // A leading std::in_place is always the tag: never handed on to T's own constructor.
  static_assert(std::is_constructible_v<std::optional<std::vector<int>>, std::in_place_t, int, int>);
  static_assert(
      !std::is_constructible_v<Result<std::optional<std::vector<int>>>, std::in_place_t, int, int>);
  Result<std::optional<int>> nothing(std::in_place);
  REQUIRE(nothing);
  CHECK_FALSE(nothing->has_value());
  Result<std::string> explicit_made(std::string_view("view"));
  CHECK(*explicit_made == "view");
}

// Whether value() and * are callable on an R.
template <class R>
concept has_value_of = requires(R&& r) {
  std::forward<R>(r).value();
  *std::forward<R>(r);
};

TEST_CASE("a temporary Result's value outlives it", "[result]") {
  // value() and * of an rvalue return the value itself, so these loops do not dangle.
  static_assert(!std::is_reference_v<decltype(names(true).value())>);
  static_assert(!std::is_reference_v<decltype(*names(true))>);
  static_assert(!std::is_reference_v<decltype(names(false).error())>);
  static_assert(std::is_reference_v<decltype(std::declval<Result<int>&>().value())>);
  // A const temporary's value could neither be moved out nor outlive it: refused.
  static_assert(has_value_of<Result<int>&&> && has_value_of<const Result<int>&>);
  static_assert(!has_value_of<const Result<int>&&>);
  std::size_t total = 0;
  for (const auto& n : names(true).value()) total += n.size();
  CHECK(total == 103);
  total = 0;
  for (const auto& n : *names(true)) total += n.size();
  CHECK(total == 103);
  CHECK_THROWS_AS(names(false).value(), Exception);
  const Error& e = names(false).error();  // by value for an rvalue: bound, not dangling
  CHECK(e.message() == "no names");
}

TEST_CASE("copies, moves and assignments keep values and errors, and destroy each once",
          "[result]") {
  {
    Result<Counted> a(std::in_place, 1);
    Result<Counted> b = fail(Errc::invalid_request, "bad");
    CHECK(Counted::alive == 1);
    Result<Counted> c = a;  // copy of a value
    CHECK(Counted::alive == 2);
    c = b;  // value replaced by an error
    CHECK(Counted::alive == 1);
    CHECK(c.error().message() == "bad");
    c = a;  // error replaced by a value
    CHECK(Counted::alive == 2);
    CHECK(c->v == 1);
    c = std::move(b);
    CHECK(Counted::alive == 1);
    CHECK(c.error().message() == "bad");
    Result<Counted> d = std::move(a);
    CHECK(d->v == 1);
    auto& same = d;
    d = same;  // self-assignment keeps it
    CHECK(d->v == 1);
  }
  CHECK(Counted::alive == 0);

  Result<std::unique_ptr<int>> owner = std::make_unique<int>(7);  // move-only values
  Result<std::unique_ptr<int>> moved = std::move(owner);
  CHECK(**moved == 7);
  Result<std::unique_ptr<int>> empty = fail(Errc::not_found, "gone");
  empty = std::move(moved);
  CHECK(**empty == 7);

  Result<std::optional<int>> wide = Result<int>(5);  // a value that converts
  CHECK(**wide == 5);
  Result<std::optional<int>> wide_error = Result<int>(fail(Errc::too_large, "big"));
  CHECK(wide_error.error().code() == Errc::too_large);
  CHECK(Result<int>(3) == Result<int>(3));
  CHECK_FALSE(Result<int>(3) == Result<int>(4));
}

namespace {

// Every member of E: the table's entry at its position has its wire name (camel_name of the
// described name), its address in `e`, and the operations of its type.
template <class E>
void check_table(const E& e) {
  auto fields = detail::fields<E>();
  REQUIRE(fields.size() == boost::mp11::mp_size<detail::members_of<E>>::value);
  std::size_t i = 0;
  boost::mp11::mp_for_each<detail::members_of<E>>([&](auto member) {
    using F = std::remove_cvref_t<decltype(e.*member.pointer)>;
    INFO(member.name);
    CHECK(fields[i].name == detail::camel_name(member.name));
    CHECK(fields[i].in(&e) == &(e.*member.pointer));
    CHECK(fields[i].ops == &detail::field_ops<F>);
    CHECK(detail::member_position<E>(fields[i].name) == i);
    ++i;
  });
}

}  // namespace

TEST_CASE("the member table of every entity and shape points at its members", "[mapping]") {
  // Entities inherit EntityBase (services through ServiceBase too): offsets cross the bases.
  boost::mp11::mp_for_each<entity_types>([](auto e) { check_table(e); });
  check_table(TagLabel{});
  check_table(EntityReference{});
  check_table(ChangeDescription{});
  check_table(CreateMlModel{});
}

TEST_CASE("the member table lists a struct's members in order, with their wire names",
          "[result][mapping]") {
  auto fields = detail::fields<TagLabel>();
  REQUIRE(fields.size() == boost::mp11::mp_size<detail::members_of<TagLabel>>::value);
  CHECK(fields[0].name == detail::member_name<&TagLabel::tag_fqn>());
  CHECK(fields[0].name == "tagFQN");
  for (std::size_t i = 0; i < fields.size(); ++i)
    CHECK(detail::member_position<TagLabel>(fields[i].name) == i);

  // A member's address, and its conversions through the table, agree with the struct's own.
  MlModel m;
  m.algorithm = "forest";
  const auto at = detail::member_position<MlModel>(detail::member_name<&MlModel::algorithm>());
  REQUIRE(at);
  const auto& algorithm = detail::fields<MlModel>()[*at];
  CHECK(algorithm.in(&m) == &m.algorithm);
  CHECK(algorithm.ops->to_json(algorithm.in(&m)) == boost::json::value("forest"));
  CHECK(algorithm.ops->present(algorithm.in(&m)));

  // set_from_json leaves the member as it was when the value does not convert.
  auto good = boost::json::parse(R"("tree")");
  REQUIRE(algorithm.ops->set_from_json(good, algorithm.in(&m), "algorithm"));
  CHECK(m.algorithm == "tree");
  auto bad = boost::json::parse("5");
  auto refused = algorithm.ops->set_from_json(bad, algorithm.in(&m), "algorithm");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code() == Errc::invalid_request);
  CHECK(m.algorithm == "tree");

  // An optional member: absent is not present, and renders as null when asked.
  const auto& description =
      detail::fields<MlModel>()[*detail::member_position<MlModel>("description")];
  CHECK(description.ops->optional);
  CHECK_FALSE(description.ops->present(description.in(&m)));
  CHECK(description.ops->to_json(description.in(&m)).is_null());
  std::string text;
  detail::text_fields<MlModel>()[*detail::member_position<MlModel>("description")]->write(
      text, description.in(&m));
  CHECK(text == "null");
}
