// Sessions of the test cluster seen from a session of their own: how a test plays a server that
// ends a store's sessions (a restart, a failover). No Catch2 assertions here, so these may run
// inside a store's callback or off the main thread.
#ifndef CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP
#define CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP

#include "pg_support.hpp"

#include <libpq-fe.h>

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace test::pg {

// The first column of the first row `text` answers, run on a session of its own; "" if none.
inline std::string first_value(const std::string& text) {
  PGconn* conn = PQconnectdb(conninfo().c_str());
  std::string first;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* r = PQexec(conn, text.c_str());
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0))
      first = PQgetvalue(r, 0, 0);
    PQclear(r);
  }
  PQfinish(conn);
  return first;
}

// Runs `text` on a session of its own (to the database of `where`, by default the tests'); whether
// the server did it.
inline bool run(const std::string& text, const std::string& where = conninfo()) {
  PGconn* conn = PQconnectdb(where.c_str());
  bool done = false;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* r = PQexec(conn, text.c_str());
    done = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
  }
  PQfinish(conn);
  return done;
}

// A role made for one test, with `attributes` ("LOGIN", "LOGIN SUPERUSER"): roles are the
// cluster's, not a schema's, so it is dropped, with what it owns, however the test ends.
class Role {
 public:
  Role(std::string_view prefix, const std::string& attributes)
      : name_(fresh_schema_name(prefix)),
        made_(run("CREATE ROLE \"" + name_ + "\" " + attributes)) {}
  ~Role() {
    run("DROP OWNED BY \"" + name_ + "\"");
    run("DROP ROLE \"" + name_ + "\"");
  }
  Role(const Role&) = delete;
  Role& operator=(const Role&) = delete;

  const std::string& name() const { return name_; }
  bool made() const { return made_; }
  // Lets the role log in, or not (a server refusing new sessions for a while); whether the
  // server did it.
  bool may_log_in(bool yes) const {
    return run("ALTER ROLE \"" + name_ + (yes ? "\" LOGIN" : "\" NOLOGIN"));
  }

 private:
  std::string name_;
  bool made_ = false;
};

// Ends the sessions whose application_name is `app` (pg_terminate_backend), and waits until
// they are gone, at most 5 s: terminating is asynchronous.
inline void end_sessions(const std::string& app) {
  const std::string of_app = " FROM pg_stat_activity WHERE application_name = '" + app + "'";
  first_value("SELECT count(pg_terminate_backend(pid))" + of_app);
  for (int i = 0; i < 500 && first_value("SELECT count(*)" + of_app) != "0"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Shuts down this process's side of every connection it has to the test cluster but the one on
// socket `keep`: a network that fails with no word from the server, which goes on with what it
// was doing. Connections are told by their peer: the cluster's Unix socket (`.s.PGSQL.<port>`),
// or its TCP port when the server is reached over TCP. Returns how many were shut down.
inline int cut_connections(int keep) {
  const std::string tcp = first_value("SELECT inet_server_port()");
  const int port = tcp.empty() ? -1 : std::atoi(tcp.c_str());
  std::vector<int> fds;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(dir))
      if (e->d_name[0] != '.') fds.push_back(std::atoi(e->d_name));
    ::closedir(dir);
  }
  int cut = 0;
  for (int fd : fds) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    if (fd == keep || ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) continue;
    bool cluster = false;
    if (peer.ss_family == AF_UNIX) {
      sockaddr_un un{};
      std::memcpy(&un, &peer, std::min<std::size_t>(length, sizeof un));
      const std::size_t room =
          length > offsetof(sockaddr_un, sun_path) ? length - offsetof(sockaddr_un, sun_path) : 0;
      const std::string_view path(un.sun_path, ::strnlen(un.sun_path, room));
      cluster = path.find(".s.PGSQL.") != std::string_view::npos;
    } else if (peer.ss_family == AF_INET) {
      sockaddr_in in{};
      std::memcpy(&in, &peer, sizeof in);
      cluster = ntohs(in.sin_port) == port;
    } else if (peer.ss_family == AF_INET6) {
      sockaddr_in6 in6{};
      std::memcpy(&in6, &peer, sizeof in6);
      cluster = ntohs(in6.sin6_port) == port;
    }
    if (cluster && ::shutdown(fd, SHUT_RDWR) == 0) ++cut;
  }
  return cut;
}

}  // namespace test::pg

#endif  // CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP
