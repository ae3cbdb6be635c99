// Test helpers for tests that run a Store in child processes (crash and concurrency tests):
// forking a child that reports to the parent through a pipe, one line at a time; reading those
// lines; seeded randomness; numbers from the environment; and calling a typed Store operation
// for a Kind known only at run time.
//
// fork() and threads: fork only from a process that runs one thread, and let each child open
// its own Store after the fork (a child must not use its parent's LMDB environment).
#ifndef CATALOG_TESTS_CHILD_PROCESS_HPP
#define CATALOG_TESTS_CHILD_PROCESS_HPP

#include <catalog/entities.hpp>
#include <catalog/kind.hpp>

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace test {

/// The unsigned number in environment variable `name`, or `fallback` when it is unset, empty or
/// not a number.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const auto value = std::strtoull(text, &end, 10);
  return *end == '\0' ? value : fallback;
}

/// Seeded randomness with the few draws the tests need. Not thread-safe: one per thread.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  /// A number in [0, n); 0 when n is 0.
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(engine_() % n); }
  bool percent(std::size_t p) { return below(100) < p; }
  /// REQUIRES: `from` is not empty.
  template <class T>
  const T& pick(const std::vector<T>& from) {
    return from[below(from.size())];
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

/// Writes one line to the parent. A write of at most PIPE_BUF bytes to a pipe is atomic: lines
/// of several threads never interleave, and a killed child leaves whole lines or none.
inline void say(int fd, std::string line) {
  if (line.size() > 4000) line.resize(4000);
  line += '\n';
  while (::write(fd, line.data(), line.size()) < 0 && errno == EINTR) {
  }
}

/// A child process and the parent's end of its pipe.
struct Proc {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;  // a line not yet complete
};

/// Forks a child that runs `body(fd)` (fd: its end of the pipe) and leaves with its result
/// through _exit, so that nothing of the test runner runs twice. The child first closes every
/// pipe end in `parent_fds` (the parent's ends of other children's pipes), so each pipe ends
/// exactly when its own child is gone; the new read end is added to `parent_fds`.
template <class Body>
Proc spawn(std::vector<int>& parent_fds, Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    for (int fd : parent_fds) ::close(fd);
    int code = 97;
    try {
      code = body(fds[1]);
    } catch (const std::exception& e) {
      say(fds[1], std::string("X exception: ") + e.what());
      code = 98;
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  parent_fds.push_back(fds[0]);
  return {pid, fds[0], {}};
}

/// Reads what the child wrote so far (blocking until something or end of file) and returns the
/// complete lines; `open` becomes false at end of file.
inline std::vector<std::string> pump(Proc& p, bool& open) {
  char chunk[8192];
  const auto n = ::read(p.fd, chunk, sizeof chunk);
  if (n < 0 && errno == EINTR) return {};
  open = n > 0;
  if (n > 0) p.buffer.append(chunk, static_cast<std::size_t>(n));
  std::vector<std::string> lines;
  for (std::size_t nl; (nl = p.buffer.find('\n')) != std::string::npos;) {
    lines.push_back(p.buffer.substr(0, nl));
    p.buffer.erase(0, nl + 1);
  }
  return lines;
}

/// Closes the parent's end of the pipe and waits for the child; returns its wait status.
inline int reap(Proc& p, std::vector<int>& parent_fds) {
  ::close(p.fd);
  parent_fds.erase(std::find(parent_fds.begin(), parent_fds.end(), p.fd));
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// "exit 3", "signal 9": a wait status for messages.
inline std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

/// Calls `f(std::type_identity<E>{})` with the entity type E of `kind`, so that a typed Store
/// operation can be called for a kind chosen at run time. Every branch must return one type.
template <class F>
auto typed(catalog::Kind kind, F&& f) {
  using namespace catalog;
  switch (kind) {
  case Kind::user: return f(std::type_identity<User>{});
  case Kind::team: return f(std::type_identity<Team>{});
  case Kind::policy: return f(std::type_identity<Policy>{});
  case Kind::mlmodel_service: return f(std::type_identity<MlModelService>{});
  case Kind::search_service: return f(std::type_identity<SearchService>{});
  case Kind::mlmodel: return f(std::type_identity<MlModel>{});
  case Kind::glossary: return f(std::type_identity<Glossary>{});
  case Kind::glossary_term: return f(std::type_identity<GlossaryTerm>{});
  case Kind::domain: return f(std::type_identity<Domain>{});
  case Kind::search_index: return f(std::type_identity<SearchIndex>{});
  }
  return f(std::type_identity<User>{});
}

}  // namespace test

#endif  // CATALOG_TESTS_CHILD_PROCESS_HPP
