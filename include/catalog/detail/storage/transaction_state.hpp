#ifndef CATALOG_DETAIL_STORAGE_TRANSACTION_STATE_HPP
#define CATALOG_DETAIL_STORAGE_TRANSACTION_STATE_HPP

// What every backend's transaction keeps beside its handle, written once: the mode, the error
// that ended the transaction (every later call returns it, as backend.hpp promises), and the
// open cursors, which must save their position before the transaction writes and be closed
// before it ends.
//
// `Derived` provides `void end() noexcept` (give the handle back; idempotent). `CursorT`
// provides `void save_position()` and `void close() noexcept`.

#include <catalog/error.hpp>
#include <catalog/storage/backend.hpp>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace catalog::storage::detail {

template <class Derived, class CursorT>
class TransactionState {
 public:
  /// Called by a cursor destroyed before its transaction.
  void forget(CursorT* cursor) noexcept {
    cursors_.erase(std::remove(cursors_.begin(), cursors_.end(), cursor), cursors_.end());
  }

 protected:
  explicit TransactionState(Mode mode) : mode_(mode) {}

  /// The error that ended the transaction, as a result; success while it is alive.
  Result<void> alive() const {
    if (dead_) return *dead_;
    return {};
  }

  /// Before any put or erase: refuses in a dead or read-only transaction and for a bad key
  /// (both end it), and lets open cursors save their position.
  Result<void> prepare_write(std::string_view key) {
    if (auto ok = prepare_writes(); !ok) return ok;
    if (auto checked = check_key(key); !checked) return die(checked.error());
    return {};
  }
  /// prepare_write without a key to check: before erase_range.
  Result<void> prepare_writes() {
    if (dead_) return *dead_;
    if (mode_ == Mode::read_only)
      return die(Error(Errc::storage, "write in a read-only transaction"));
    for (CursorT* cursor : cursors_) cursor->save_position();
    return {};
  }

  /// Ends the transaction at once and makes every later call fail with `error`.
  Error die(Error error) {
    static_cast<Derived*>(this)->end();
    dead_ = error;
    return error;
  }

  /// After a successful commit: later calls fail.
  void committed() { dead_ = Error(Errc::storage, "transaction used after commit"); }

  void track(CursorT* cursor) { cursors_.push_back(cursor); }

  /// The open cursors, for a backend that must tell them more than `save_position`.
  const std::vector<CursorT*>& cursors() const noexcept { return cursors_; }

  void close_cursors() noexcept {
    for (CursorT* cursor : cursors_) cursor->close();
    cursors_.clear();
  }

  Mode mode_;
  std::optional<Error> dead_;

 private:
  std::vector<CursorT*> cursors_;
};

}  // namespace catalog::storage::detail

#endif  // CATALOG_DETAIL_STORAGE_TRANSACTION_STATE_HPP
