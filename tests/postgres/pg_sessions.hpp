// Sessions of the test cluster seen from a session of their own: how a test plays a server that
// ends a store's sessions (a restart, a failover). No Catch2 assertions here, so these may run
// inside a store's callback or off the main thread.
#ifndef CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP
#define CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP

#include "pg_support.hpp"

#include <libpq-fe.h>

#include <chrono>
#include <string>
#include <thread>

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

// Ends the sessions whose application_name is `app` (pg_terminate_backend), and waits until
// they are gone, at most 5 s: terminating is asynchronous.
inline void end_sessions(const std::string& app) {
  const std::string of_app = " FROM pg_stat_activity WHERE application_name = '" + app + "'";
  first_value("SELECT count(pg_terminate_backend(pid))" + of_app);
  for (int i = 0; i < 500 && first_value("SELECT count(*)" + of_app) != "0"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace test::pg

#endif  // CATALOG_TESTS_POSTGRES_PG_SESSIONS_HPP
