// What catalog-serve adds around rest::Api for whoever runs it: an access log, its own counters,
// and two routes of its own, GET /healthz (no authentication) and GET /metrics (the Prometheus
// text format, admins only). Nothing here is the catalog's: a host with its own server keeps
// its own of these, reading Store::counters() for the store's part.
#ifndef CATALOG_EXAMPLES_SERVE_HOST_HPP
#define CATALOG_EXAMPLES_SERVE_HOST_HPP

#include "write_whole.hpp"

#include <catalog/counters.hpp>
#include <catalog/rest/api.hpp>
#include <catalog/store.hpp>
#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/storage/postgres_backend.hpp>
#endif

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace catalog_examples {

// One line per request, written whole under a lock so that lines from concurrent connections
// never interleave, even in a pipe and past 4 KiB (write_whole.hpp):
// `<time> <peer> <method> <target> <status> <bytes> <milliseconds>`, where
// time is UTC to the millisecond, bytes those of the response body written, and milliseconds
// from the request's header to its answer written.
class AccessLog {
 public:
  // "-" is standard output. Throws std::runtime_error when the file cannot be opened.
  explicit AccessLog(const std::string& path) {
    if (path == "-") {
      fd_ = STDOUT_FILENO;
      return;
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw std::runtime_error("--access-log: cannot open " + path + ": " + std::strerror(errno));
    owned_ = true;
    path_ = path;
  }
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;
  ~AccessLog() {
    if (owned_) ::close(fd_);
  }

  // After the file was moved away (log rotation): opens its path again, and the lines go there.
  // The new file takes the old one's descriptor number (dup3, atomic), so that a line written
  // meanwhile on another thread goes whole to one file or the other. Standard output is kept.
  // Returns what went wrong, or nothing.
  std::optional<std::string> reopen() {
    if (!owned_) return std::nullopt;
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int failed = errno;
      return "cannot open " + path_ + ": " + std::strerror(failed);
    }
    const bool moved = ::dup3(fd, fd_, O_CLOEXEC) >= 0;
    const int saved = errno;
    ::close(fd);
    if (!moved) return "cannot reopen " + path_ + ": " + std::strerror(saved);
    return std::nullopt;
  }

  const std::string& path() const noexcept { return path_; }

  void write(std::string_view peer, std::string_view method, std::string_view target, int status,
             std::size_t bytes, std::chrono::steady_clock::duration took) const {
    std::string line;
    line.reserve(64 + peer.size() + method.size() + target.size());
    append_utc_now(line);
    line += ' ';
    line += peer;
    line += ' ';
    line += method;
    line += ' ';
    // The target as received, with bytes that would break the line (controls, spaces, bytes
    // past ASCII) and the escape's own backslash written \xHH, so that no two targets log alike
    // (a target's own %XX stays as sent).
    for (unsigned char c : target) {
      if (c > 0x20 && c < 0x7f && c != '\\') {
        line += static_cast<char>(c);
      } else {
        constexpr char hex[] = "0123456789ABCDEF";
        line += "\\x";
        line += hex[c >> 4];
        line += hex[c & 0xf];
      }
    }
    // status, bytes and milliseconds; none takes more than 32 characters.
    char number[32];
    auto add = [&](std::to_chars_result r) {
      line += ' ';
      if (r.ec == std::errc()) line.append(number, r.ptr);
    };
    add(std::to_chars(number, number + sizeof number, status));
    add(std::to_chars(number, number + sizeof number, bytes));
    const double ms = std::chrono::duration<double, std::milli>(took).count();
    add(std::to_chars(number, number + sizeof number, ms, std::chars_format::fixed, 3));
    line += '\n';
    // A full disk or a pipe without a reader loses the line, never the request.
    const std::lock_guard lock(mutex_);
    write_whole(fd_, line);
  }

 private:
  // Appends the time now in UTC, to the millisecond: 2026-11-27T17:21:05.042Z. The text up to
  // the second is made once a second per thread.
  static void append_utc_now(std::string& out) {
    const auto now = std::chrono::system_clock::now();
    const auto ms_total =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    const std::int64_t secs = ms_total / 1000;
    const int ms = static_cast<int>(ms_total % 1000);
    thread_local std::int64_t cached_secs = -1;
    thread_local char cached[64];
    if (secs != cached_secs) {
      const auto t = static_cast<std::time_t>(secs);
      std::tm tm{};
      ::gmtime_r(&t, &tm);
      std::snprintf(cached, sizeof cached, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
      cached_secs = secs;
    }
    out += cached;
    out += '.';
    out += static_cast<char>('0' + ms / 100);
    out += static_cast<char>('0' + ms / 10 % 10);
    out += static_cast<char>('0' + ms % 10);
    out += 'Z';
  }

  int fd_ = -1;
  bool owned_ = false;
  mutable std::mutex mutex_;  // one line at a time
  std::string path_;  // of a file, for reopen
};

// Prometheus text exposition, built up one metric (its HELP and TYPE lines) and sample at a time.
struct PrometheusText {
  std::string out;

  void metric(std::string_view name, std::string_view type, std::string_view help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
  }
  // A metric of one sample without labels.
  template <class Value>
  void single(std::string_view name, std::string_view type, std::string_view help, Value value) {
    metric(name, type, help);
    sample(name, "", value);
  }
  template <class Value>
  void sample(std::string_view name, std::string_view labels, Value value) {
    out += name;
    if (!labels.empty()) {
      out += '{';
      out += labels;
      out += '}';
    }
    out += ' ';
    if constexpr (std::is_floating_point_v<Value>) {
      char text[40];
      std::snprintf(text, sizeof text, "%.9g", value);
      out += text;
    } else {
      out += std::to_string(value);
    }
    out += '\n';
  }
};

// The server's own counters: requests by status, response body bytes, open connections.
class ServerCounters {
 public:
  // A request answered with `status`, counted when the answer is made.
  void answered(int status) noexcept {
    const auto i = status >= 100 && status < 600 ? static_cast<std::size_t>(status) : 0;
    by_status_[i].fetch_add(1, std::memory_order_relaxed);
  }
  // `bytes` of a response body written to the socket: all of it, or what was written before
  // the client went away (the access log's bytes).
  void sent(std::size_t bytes) noexcept { bytes_.fetch_add(bytes, std::memory_order_relaxed); }
  void opened() noexcept { connections_.fetch_add(1, std::memory_order_relaxed); }
  void closed() noexcept { connections_.fetch_sub(1, std::memory_order_relaxed); }

  // The Prometheus text exposition of these and of the store's counters.
  std::string prometheus(const catalog::StoreCounters& store) const {
    PrometheusText text;
    text.metric("catalog_operations_total", "counter",
                "Store operations by operation and outcome (ok, or the kind of the error).");
    for (std::size_t op = 0; op < catalog::store_operation_count; ++op) {
      const auto name = catalog::store_operation_name(static_cast<catalog::StoreOperation>(op));
      const auto& counts = store.operations[op];
      text.sample("catalog_operations_total",
                  "operation=\"" + std::string(name) + "\",outcome=\"ok\"", counts.ok);
      for (std::size_t k = 0; k < catalog::error_kind_count; ++k)
        text.sample("catalog_operations_total",
                    "operation=\"" + std::string(name) + "\",outcome=\"" +
                        kind_label(static_cast<catalog::ErrorKind>(k)) + "\"",
                    counts.failed[k]);
    }
    text.metric(
        "catalog_retries_total", "counter",
        "Operations run again: after a full storage map, a conflict with other writers, or a "
        "session the database server ended before the commit.");
    text.sample("catalog_retries_total", "reason=\"map_full\"", store.map_full_retries);
    text.sample("catalog_retries_total", "reason=\"conflict\"", store.conflict_retries);
    text.sample("catalog_retries_total", "reason=\"unavailable\"", store.unavailable_retries);
    text.single("catalog_conflicts_given_up_total", "counter",
                "Operations that gave up after conflicting on every attempt.",
                store.conflicts_given_up);
    text.single("catalog_slow_operations_total", "counter",
                "Operations slower than the store's slow-operation threshold.",
                store.slow_operations);
    text.metric("catalog_commit_seconds", "summary", "Time to commit a write transaction.");
    auto seconds = [](std::chrono::microseconds us) {
      return static_cast<double>(us.count()) / 1e6;
    };
    text.sample("catalog_commit_seconds", "quantile=\"0.5\"", seconds(store.commit_p50));
    text.sample("catalog_commit_seconds", "quantile=\"0.9\"", seconds(store.commit_p90));
    text.sample("catalog_commit_seconds", "quantile=\"0.99\"", seconds(store.commit_p99));
    text.sample("catalog_commit_seconds", "quantile=\"1\"", seconds(store.commit_max));
    text.sample("catalog_commit_seconds_sum", "", seconds(store.commit_total));
    text.sample("catalog_commit_seconds_count", "", store.commits);
    text.metric("catalog_http_requests_total", "counter", "HTTP requests answered, by status.");
    for (std::size_t s = 100; s < by_status_.size(); ++s)
      if (auto n = by_status_[s].load(std::memory_order_relaxed))
        text.sample("catalog_http_requests_total", "status=\"" + std::to_string(s) + "\"", n);
    text.single("catalog_http_response_bytes_total", "counter", "Bytes of response bodies sent.",
                bytes_.load(std::memory_order_relaxed));
    text.single("catalog_http_connections", "gauge", "Connections open now.",
                connections_.load(std::memory_order_relaxed));
    return std::move(text.out);
  }

 private:
  static std::string kind_label(catalog::ErrorKind k) {
    std::string label(catalog::type_name(k));
    for (auto& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return label;
  }

  std::array<std::atomic<std::uint64_t>, 600> by_status_{};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::int64_t> connections_{0};
};

// An error answered by the host itself, in the Api's error shape
// `{"code": status, "errorType": type, "message": message}` (the message escaped as JSON).
inline catalog::rest::Response error_response(int status, std::string_view type,
                                              std::string_view message) {
  catalog::rest::Response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}};
  r.body = boost::json::serialize(
      boost::json::value{{"code", status}, {"errorType", type}, {"message", message}});
  return r;
}

// The backend's own metrics: a PostgreSQL store's round trips, sessions and waits; none for the
// others.
inline std::string backend_prometheus([[maybe_unused]] catalog::Store& store) {
#ifdef CATALOG_EXAMPLES_POSTGRES
  const auto* pg = dynamic_cast<const catalog::storage::PostgresBackend*>(&store.backend());
  if (!pg) return {};
  const auto stats = pg->stats();
  PrometheusText text;
  text.single("catalog_postgres_round_trips_total", "counter",
              "Requests sent to PostgreSQL and waited for.", stats.round_trips);
  text.single("catalog_postgres_connections_opened_total", "counter", "PostgreSQL sessions opened.",
              stats.connections);
  text.metric("catalog_postgres_connections", "gauge",
              "PostgreSQL sessions open now, idle in the pool or in a transaction.");
  text.sample("catalog_postgres_connections", "state=\"idle\"", stats.idle_connections);
  text.sample("catalog_postgres_connections", "state=\"busy\"",
              stats.open_connections - std::min(stats.idle_connections, stats.open_connections));
  text.single("catalog_postgres_connection_waits_total", "counter",
              "Transactions that waited for a session, all of max_connections being in use.",
              stats.waits);
  text.single("catalog_postgres_connect_retries_total", "counter",
              "Session openings the server refused that were tried again (reconnect_wait).",
              stats.connect_retries);
  text.single("catalog_postgres_commits_checked_total", "counter",
              "Write transactions whose COMMIT lost its answer, asked about on a new session "
              "in the same run of the server.",
              stats.commits_checked);
  text.single("catalog_postgres_conflicts_total", "counter",
              "Transactions PostgreSQL failed as serialization conflicts or deadlocks.",
              stats.conflicts);
  text.single("catalog_postgres_writes_alone_total", "counter",
              "Write transactions that ran alone (taking turns, or after conflicts).",
              stats.exclusive);
  return std::move(text.out);
#else
  return {};
#endif
}

// Whether `target` is a path of the server's own routes, /healthz or /metrics.
inline bool own_path(std::string_view target) {
  const auto path = target.substr(0, target.find('?'));
  return path == "/healthz" || path == "/metrics";
}

// The server's own routes, answered before the Api sees the request: GET (or HEAD) /healthz,
// 200 `{"status":"ok"}` for anyone, and GET /metrics for admins (authenticated by the Api: its
// 401 without a valid bearer token, 403 for a user who is not an admin). Other requests:
// nullopt, for the Api.
inline std::optional<catalog::rest::Response> own_route(const catalog::rest::Request& request,
                                                        const catalog::rest::Api& api,
                                                        catalog::Store& store,
                                                        const ServerCounters& counters) {
  if (!own_path(request.target)) return std::nullopt;
  std::string_view path = request.target;
  path = path.substr(0, path.find('?'));
  catalog::rest::Response r;
  auto error = [](int status, std::string_view type, const std::string& message) {
    return error_response(status, type, message);
  };
  // The Api's order (docs/SEMANTICS.md §14): /metrics authenticates first, then the method.
  std::optional<catalog::Principal> who;
  if (path == "/metrics") {
    auto found = api.principal(request);
    if (!found) return catalog::rest::Api::error_response(found.error());
    who = std::move(*found);
  }
  if (request.method != "GET") {
    r = error(405, "METHOD_NOT_ALLOWED",
              "Method " + request.method.substr(0, 32) + " not allowed; allowed: GET, HEAD");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (path == "/healthz") {
    r.headers = {{"Content-Type", "application/json"}};
    r.body = R"({"status":"ok"})";
    return r;
  }
  if (!who->is_admin) return error(403, "FORBIDDEN", "Only admins may read the metrics");
  r.headers = {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"}};
  r.body = counters.prometheus(store.counters()) + backend_prometheus(store);
  return r;
}

}  // namespace catalog_examples

#endif  // CATALOG_EXAMPLES_SERVE_HOST_HPP
