#ifndef CATALOG_EXAMPLES_WRITE_WHOLE_HPP
#define CATALOG_EXAMPLES_WRITE_WHOLE_HPP

// How the tools write a line that must not mix with another thread's (the access log, the store's
// log on stderr).

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

namespace catalog_examples {

// Writes all of `bytes` to `fd`, again after a short write or an interrupted one. Returns false
// when the descriptor refuses (a full disk, a pipe without a reader: the rest is lost). A caller
// that shares `fd` between threads holds its own lock around the call: a write(2) to a pipe is
// atomic only up to PIPE_BUF (4 KiB), and a short write would leave part of a line for another
// thread's line to follow.
inline bool write_whole(int fd, std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    const ::ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace catalog_examples

#endif  // CATALOG_EXAMPLES_WRITE_WHOLE_HPP
