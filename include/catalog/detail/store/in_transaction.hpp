#ifndef CATALOG_DETAIL_STORE_IN_TRANSACTION_HPP
#define CATALOG_DETAIL_STORE_IN_TRANSACTION_HPP

// Whether this thread is inside a transaction of a Store (Store::Impl::run) or of a
// catalog::admin function. A function of the host's that the library calls there (an edit, a
// log sink, an authorizer, the clock, an admin ProgressFn) and that calls back into a Store would
// otherwise wait for the transaction it is called from (LMDB's writer lock, the memory backend's
// writer turn, PostgreSQL's writers' turn) and never return, or break LMDB's rule of one
// transaction per thread. Such a call is refused instead (docs/SEMANTICS.md §13).

#include <catalog/error.hpp>

namespace catalog::detail {

/// Set while this thread holds a transaction of a Store or of an admin function.
inline thread_local bool in_transaction = false;

/// Marks this thread as inside a transaction (or a host function that may not call a Store) for
/// its lifetime, or until leave(), then restores what was marked before.
class InTransaction {
 public:
  InTransaction() noexcept : was_(in_transaction) { in_transaction = true; }
  ~InTransaction() { leave(); }
  InTransaction(const InTransaction&) = delete;
  InTransaction& operator=(const InTransaction&) = delete;

  /// Restores what was marked before now (once; the destructor then leaves it).
  void leave() noexcept {
    if (inside_) in_transaction = was_, inside_ = false;
  }

 private:
  bool was_;
  bool inside_ = true;
};

/// The error of an operation called from inside a transaction on the same thread.
inline Error nested_transaction() {
  return Error(Errc::internal,
               "a Store operation was called from inside a transaction on the same thread (a "
               "callback the store called called back into a Store); it would wait for itself");
}

}  // namespace catalog::detail

#endif  // CATALOG_DETAIL_STORE_IN_TRANSACTION_HPP
