#ifndef CATALOG_IMPL_UUID_IPP
#define CATALOG_IMPL_UUID_IPP

#include <catalog/uuid.hpp>

#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <pthread.h>
#include <sys/random.h>
#endif

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <system_error>

namespace catalog {

namespace {
// Hex digit values by byte, -1 for anything else. A table, not comparisons: ids are random, so
// a digit-or-letter branch would go either way at random, and every reference parses an id.
constexpr std::array<std::int8_t, 256> hex_values = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int c = '0'; c <= '9'; ++c)
    t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) {
    t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
    t[static_cast<std::size_t>(c - 'a' + 'A')] = static_cast<std::int8_t>(c - 'a' + 10);
  }
  return t;
}();

int hex_digit(char c) { return hex_values[static_cast<unsigned char>(c)]; }
}  // namespace

Result<Uuid> parse_uuid(std::string_view text) {
  auto bad = [&] {
    return fail(Errc::invalid_uuid, "Invalid UUID " + std::string(text.substr(0, 64)) +
                                        ": expected 8-4-4-4-12 hex digits");
  };
  if (text.size() != 36) return bad();
  Uuid id{};
  std::size_t byte = 0;
  for (std::size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return bad();
      ++i;
      continue;
    }
    int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) return bad();
    id.data[byte++] = static_cast<std::uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return id;
}

void format_uuid(const Uuid& id, char (&out)[36]) noexcept {
  static constexpr char digits[] = "0123456789abcdef";
  std::size_t at = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[at++] = '-';
    out[at++] = digits[id.data[i] >> 4];
    out[at++] = digits[id.data[i] & 15];
  }
}

std::string to_string(const Uuid& id) {
  char text[36];
  format_uuid(id, text);
  return std::string(text, sizeof text);
}

namespace detail {

/// Random version 4 UUIDs from the kernel's CSPRNG, 64 per system call, so that a write (every
/// write makes an event id) rarely makes a system call for its ids. A forked child drops the pool
/// (pthread_atfork), so parent and child never hand out the same bytes.
class UuidPool {
public:
  static UuidPool& instance() {
    // Never destroyed: the fork handlers stay registered until the process ends.
    static UuidPool* pool = new UuidPool;
    return *pool;
  }

  Uuid next() {
    std::lock_guard lock(mutex_);
    Uuid u;
    if (!fork_safe_ || (used_ == bytes_.size() && !refill())) {
      // No pool: 16 bytes of their own, read for this id alone.
      if (int error = read_random(u.data, 16); error != 0)
        throw std::system_error(error, std::generic_category(), "catalog: no random source");
    } else {
      std::memcpy(u.data, bytes_.data() + used_, 16);
      used_ += 16;
    }
    u.data[6] = static_cast<std::uint8_t>((u.data[6] & 0x0F) | 0x40);  // version 4
    u.data[8] = static_cast<std::uint8_t>((u.data[8] & 0x3F) | 0x80);  // RFC 4122 variant
    return u;
  }

private:
  UuidPool() {
#if defined(__linux__)
    // Without the handlers a child could repeat its parent's ids: then no pool at all.
    fork_safe_ = ::pthread_atfork([] { instance().mutex_.lock(); },
                                  [] { instance().mutex_.unlock(); },
                                  [] {
                                    auto& pool = instance();
                                    pool.used_ = pool.bytes_.size();
                                    pool.mutex_.unlock();
                                  }) == 0;
#endif
  }

  bool refill() {
    if (read_random(bytes_.data(), bytes_.size()) != 0) return false;
    used_ = 0;
    return true;
  }

  // Fills `out` from the kernel's CSPRNG: getrandom, or /dev/urandom where there is none.
  // Returns 0, or the errno of the last failure (EIO when the device ended early).
  static int read_random(std::uint8_t* out, std::size_t n) {
    std::size_t filled = 0;
#if defined(__linux__)
    while (filled < n) {
      auto got = ::getrandom(out + filled, n - filled, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        break;
      }
      filled += static_cast<std::size_t>(got);
    }
    if (filled == n) return 0;
#endif
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int error = 0;
    for (filled = 0; filled < n;) {
      auto got = ::read(fd, out + filled, n - filled);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        error = got < 0 ? errno : EIO;
        break;
      }
      filled += static_cast<std::size_t>(got);
    }
    ::close(fd);
    return error;
  }

  std::mutex mutex_;
  std::array<std::uint8_t, 64 * 16> bytes_{};
  std::size_t used_ = bytes_.size();
  bool fork_safe_ = false;
};

}  // namespace detail

Uuid random_uuid() { return detail::UuidPool::instance().next(); }

}  // namespace catalog

#endif  // CATALOG_IMPL_UUID_IPP
