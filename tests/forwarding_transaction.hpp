// A storage transaction that does what another does, for tests that change one of its calls.
#ifndef CATALOG_TESTS_FORWARDING_TRANSACTION_HPP
#define CATALOG_TESTS_FORWARDING_TRANSACTION_HPP

#include <catalog/storage/backend.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace test {

/// Does what `inner` does: a test's wrapper derives from it and overrides the one call it
/// changes (a slow commit, a read that fails). The calls with defaults in storage::Transaction
/// (get_each, erase_range, prefetch) keep those defaults, which go through the calls below.
class ForwardingTransaction : public catalog::storage::Transaction {
 public:
  explicit ForwardingTransaction(std::unique_ptr<catalog::storage::Transaction> inner)
      : inner_(std::move(inner)) {}
  catalog::Result<std::optional<std::string>> get(std::string_view key) override {
    return inner_->get(key);
  }
  catalog::Result<std::optional<std::string_view>> get_view(std::string_view key) override {
    return inner_->get_view(key);
  }
  catalog::Result<void> put(std::string_view key, std::string_view value) override {
    return inner_->put(key, value);
  }
  catalog::Result<bool> erase(std::string_view key) override { return inner_->erase(key); }
  catalog::Result<std::unique_ptr<catalog::storage::Cursor>> scan(
      const catalog::storage::Range& range, catalog::storage::Direction dir) override {
    return inner_->scan(range, dir);
  }
  catalog::Result<void> commit() override { return inner_->commit(); }

 protected:
  std::unique_ptr<catalog::storage::Transaction> inner_;
};

}  // namespace test

#endif  // CATALOG_TESTS_FORWARDING_TRANSACTION_HPP
