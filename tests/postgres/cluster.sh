#!/bin/sh
# A private PostgreSQL 15 cluster for the tests, in a fresh directory under /tmp, reachable only
# through a Unix socket in that directory (no TCP port).
#
#   cluster.sh start <state-file>   initdb + pg_ctl start; writes <state-file>
#   cluster.sh stop <state-file>    pg_ctl stop; removes the directory and <state-file>
#
# <state-file> holds `status=ready` and `conninfo=...` (libpq keywords) for the tests, or
# `status=absent` and `reason=...` when the server binaries are not installed: the tests then
# skip, printing the reason. Binaries that are there but fail to start the cluster fail the
# start (and so every test that needs it). The server refuses to run as root: as root, initdb and
# pg_ctl run as the `postgres` user (runuser), who owns the directory.
#
# PG_BIN (default /usr/lib/postgresql/15/bin) names where initdb and pg_ctl are.
set -eu

action=${1:-}
state=${2:-}
if [ -z "$action" ] || [ -z "$state" ]; then
  echo "usage: $0 start|stop <state-file>" >&2
  exit 2
fi
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}

as_server() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$action" in
start)
  mkdir -p "$(dirname "$state")"
  if [ -e "$state" ]; then
    # A cluster left by an interrupted run: stop it first.
    "$0" stop "$state" || true
  fi
  if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    {
      echo "status=absent"
      echo "reason=no PostgreSQL server binaries in $bin (Debian: postgresql-15; cmake/install-deps.sh installs it)"
    } >"$state"
    echo "PostgreSQL server binaries absent in $bin: the tests that need them will skip"
    exit 0
  fi
  dir=$(mktemp -d /tmp/catalog-pg-XXXXXX)
  if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      echo "running as root, and there is no postgres user to run the server as" >&2
      rm -rf "$dir"
      exit 1
    fi
    chown postgres "$dir"
  fi
  # Private to the tests: speed over crash safety (fsync off), room for many connections and
  # for the predicate locks of SERIALIZABLE transactions (the contract and store suites hold
  # many at once; too few and the server widens them to whole pages or the table, which makes
  # independent transactions conflict).
  if ! as_server "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C \
      --no-sync >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    rm -rf "$dir"
    exit 1
  fi
  if ! as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c port=5432 -c fsync=off -c full_page_writes=off -c max_connections=300 -c max_pred_locks_per_transaction=512 -c max_pred_locks_per_page=16" \
      start >"$dir/pg_ctl.log" 2>&1; then
    cat "$dir/pg_ctl.log" "$dir/server.log" >&2 || true
    rm -rf "$dir"
    exit 1
  fi
  {
    echo "status=ready"
    echo "dir=$dir"
    echo "conninfo=host=$dir port=5432 user=postgres dbname=postgres"
  } >"$state"
  echo "PostgreSQL cluster started in $dir (socket only)"
  ;;
stop)
  [ -e "$state" ] || exit 0
  dir=$(sed -n 's/^dir=//p' "$state")
  if [ -n "$dir" ] && [ -d "$dir/data" ]; then
    as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
  fi
  if [ -n "$dir" ]; then
    rm -rf "$dir"
  fi
  rm -f "$state"
  echo "PostgreSQL cluster stopped"
  ;;
*)
  echo "usage: $0 start|stop <state-file>" >&2
  exit 2
  ;;
esac
