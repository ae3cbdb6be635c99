#!/usr/bin/env bash
# catalog-serve goes on answering while a write waits (ctest: catalog_serve_writer_turn_postgres).
#
#   tests/serve/writer_turn_test.sh <catalog-serve> <conninfo>
#
# Another session holds the writers' turn of the catalog's PostgreSQL schema (psql, LOCK TABLE
# ... writer_turn IN EXCLUSIVE MODE, as another host's write transaction does), and catalog-serve
# runs with --threads 1. A create then waits for the turn; meanwhile the server accepts new
# connections and answers GET /healthz, a read of the catalog, a read on the connection the
# create came from's neighbour, and GET /metrics, which counts the create's PostgreSQL session as
# busy. When the turn is given back, the create gets its 201. Before
# writes ran on workers of their own, the one thread waited inside the create and nothing else
# was answered. Exit 77 (ctest: skipped) when curl, openssl or psql is missing. psql is the
# cluster's (PG_BIN, as tests/postgres/cluster.sh), else the one on PATH.

set -euo pipefail

if [[ $# -lt 2 || ! -x $1 ]]; then
  echo "usage: $0 <catalog-serve> <conninfo>" >&2
  exit 2
fi
SERVE=$1
CONNINFO=$2
SCHEMA=writer_turn
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PSQL=${PG_BIN:-/usr/lib/postgresql/15/bin}/psql
[[ -x $PSQL ]] || PSQL=psql
serve_test_setup curl openssl "$PSQL"
HOLDER_PID=
CREATE_PID=
sql() { "$PSQL" "$CONNINFO" -XtAq -v ON_ERROR_STOP=1 -c "$1"; }
cleanup_all() {
  { exec 3>&-; } 2>/dev/null || true
  [[ -n $HOLDER_PID ]] && kill "$HOLDER_PID" 2>/dev/null || true
  [[ -n $CREATE_PID ]] && kill "$CREATE_PID" 2>/dev/null || true
  serve_test_cleanup
  sql "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true
}
trap cleanup_all EXIT

sql "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1

SECRET=$(openssl rand -hex 24)
printf '%s' "$SECRET" >"$TMP/secret"
ADMIN=$(hs256_jwt "$SECRET" "{\"email\":\"admin@example.com\",\"exp\":$(($(date +%s) + 3600))}")

"$SERVE" --port 0 --bind 127.0.0.1 --threads 1 --admin admin --jwt-hs256-secret-file "$TMP/secret" \
  --store "postgresql:$CONNINFO" --postgres-schema "$SCHEMA" >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
wait_for_port
BASE=http://127.0.0.1:$PORT

# get <expected status> <path> [curl arguments...]: a GET on a new connection, which must be
# answered within 10 s.
get() {
  local status
  status=$(curl -sS --max-time 10 -o "$TMP/body" -w '%{http_code}' "${@:3}" "$BASE$2") ||
    fail "GET $2: no answer within 10 s"
  [[ $status == "$1" ]] || fail "GET $2: status $status, expected $1"
}
get 200 /v1/glossaries -H "Authorization: Bearer $ADMIN"

# The turn, held by another session until this script says so.
mkfifo "$TMP/holder_in"
"$PSQL" "$CONNINFO" -XtAq -v ON_ERROR_STOP=1 <"$TMP/holder_in" >"$TMP/holder_out" 2>&1 &
HOLDER_PID=$!
exec 3>"$TMP/holder_in"
echo "BEGIN; LOCK TABLE $SCHEMA.writer_turn IN EXCLUSIVE MODE; SELECT 'held';" >&3
for _ in $(seq 100); do
  grep -qx held "$TMP/holder_out" 2>/dev/null && break
  sleep 0.1
done
grep -qx held "$TMP/holder_out" || fail "psql did not take the writers' turn: $(cat "$TMP/holder_out")"

# A create, which waits for the turn.
curl -sS --max-time 50 -o "$TMP/create_body" -w '%{http_code}' -X POST \
  -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  --data '{"name":"while_waiting","description":"made after the turn came back"}' \
  "$BASE/v1/glossaries" >"$TMP/create_status" 2>&1 &
CREATE_PID=$!
waiting=0
for _ in $(seq 200); do
  waiting=$(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE \"$SCHEMA\".writer_turn %'")
  [[ $waiting == 1 ]] && break
  sleep 0.05
done
[[ $waiting == 1 ]] || fail "the create did not wait for the writers' turn"

# Meanwhile the one thread answers: new connections, the server's own route, and reads.
get 200 /healthz
get 200 /v1/glossaries -H "Authorization: Bearer $ADMIN"
grep -q '"data":\[\]' "$TMP/body" || fail "a read saw the waiting create: $(cat "$TMP/body")"
get 404 /v1/glossaries/name/while_waiting -H "Authorization: Bearer $ADMIN"
kill -0 "$CREATE_PID" 2>/dev/null || fail "the create ended while the turn was held: $(cat "$TMP/create_status")"
# /metrics says what the PostgreSQL sessions are doing: the waiting create holds one.
get 200 /metrics -H "Authorization: Bearer $ADMIN"
grep -Eq '^catalog_postgres_round_trips_total [1-9][0-9]*$' "$TMP/body" ||
  fail "/metrics: no PostgreSQL round trips: $(cat "$TMP/body")"
grep -Eq '^catalog_postgres_commits_checked_total 0$' "$TMP/body" ||
  fail "/metrics: commits asked for on a new session, with no connection lost: $(grep postgres "$TMP/body")"
busy=$(sed -n 's/^catalog_postgres_connections{state="busy"} //p' "$TMP/body")
[[ -n $busy && $busy -ge 1 ]] || fail "/metrics: no busy PostgreSQL session beside the waiting create: $(grep postgres "$TMP/body")"

# The turn comes back: the create is answered.
echo "COMMIT;" >&3
exec 3>&-
wait "$HOLDER_PID" || true
HOLDER_PID=
wait "$CREATE_PID" || fail "the create failed: $(cat "$TMP/create_status")"
CREATE_PID=
[[ $(cat "$TMP/create_status") == 201 ]] ||
  fail "the create: status $(cat "$TMP/create_status"), expected 201: $(cat "$TMP/create_body")"
get 200 /v1/glossaries/name/while_waiting -H "Authorization: Bearer $ADMIN"

# SIGTERM ends it cleanly.
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "catalog-serve exited $? after SIGTERM"
SERVER_PID=
echo "PASS"
