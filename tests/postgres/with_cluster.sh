#!/bin/sh
# Runs a command against the tests' PostgreSQL cluster (cluster.sh):
#
#   with_cluster.sh <state-file> <command> [args...]
#
# Every "@PG_CONNINFO@" in the arguments becomes the cluster's conninfo (libpq keywords, which
# hold spaces: each argument stays one argument). Exits 77 (ctest: skipped) with the fixture's
# reason when the server binaries are absent, and 1 when there is no cluster state.
set -eu
state=$1
shift
status=$(sed -n 's/^status=//p' "$state" 2>/dev/null || true)
if [ "$status" = absent ]; then
  echo "SKIPPED: $(sed -n 's/^reason=//p' "$state")"
  exit 77
fi
if [ "$status" != ready ]; then
  echo "no PostgreSQL cluster state in $state (did the fixture run?)" >&2
  exit 1
fi
conninfo=$(sed -n 's/^conninfo=//p' "$state")
n=$#
i=0
while [ "$i" -lt "$n" ]; do
  arg=$1
  shift
  case $arg in
  *@PG_CONNINFO@*) arg=$(printf '%s\n' "$arg" | sed "s|@PG_CONNINFO@|$conninfo|g") ;;
  esac
  set -- "$@" "$arg"
  i=$((i + 1))
done
exec "$@"
