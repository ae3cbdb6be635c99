#!/usr/bin/env bash
# The systemd unit of catalog-serve, run as systemd would run it (ctest: catalog_serve_unit).
#
#   tests/serve/unit_test.sh <path to catalog-serve> <catalog-serve.service> <catalog-serve.default>
#
# 1. `systemd-analyze verify` finds nothing to say of the unit (an unknown key or section, a bad
#    value), with catalog-serve at the built path; skipped without systemd-analyze.
# 2. The credential the unit loads is the one its command line reads, and exit status 2 (a
#    refused command line) is not restarted.
# 3. The unit's ExecStart, expanded here as systemd expands it (what systemd itself does with
#    ${CREDENTIALS_DIRECTORY} and $CATALOG_SERVE_OPTIONS is not run: that needs systemd as
#    PID 1), with $CATALOG_SERVE_OPTIONS from the example options file (the port
#    made 0, an admin added as docs/DEPLOY.md says) and the state and credentials directories
#    moved to a temp directory, starts a server that answers /healthz to anyone, a write and
#    /metrics to the admin, logs each request to standard output (the journal), keeps the store
#    in the state directory across a restart, and exits 0 on SIGTERM.
# 4. A bad option in the options file exits 2.
# Needs bash, curl, openssl, sed, grep. Exit 77 (ctest: skipped) when curl or openssl is missing.

set -euo pipefail

if [[ $# -ne 3 || ! -x $1 || ! -f $2 || ! -f $3 ]]; then
  echo "usage: $0 <catalog-serve> <catalog-serve.service> <catalog-serve.default>" >&2
  exit 2
fi
SERVE=$(realpath "$1")
UNIT=$2
DEFAULTS=$3
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_test_setup curl openssl

# setting KEY: the value of the unit's one KEY= line. Called inside $(...), so a unit without
# exactly one says so on stderr and ends the script there.
setting() {
  local lines
  lines=$(grep -E "^$1=" "$UNIT" || true)
  if [[ $(grep -c . <<<"$lines") -ne 1 || -z $lines ]]; then
    echo "FAIL: the unit has not exactly one $1= line" >&2
    exit 1
  fi
  printf '%s' "${lines#*=}"
}

# ---- 1. systemd's own check ----

if command -v systemd-analyze >/dev/null; then
  sed "s|^ExecStart=catalog-serve |ExecStart=$SERVE |" "$UNIT" >"$TMP/catalog-serve.service"
  systemd-analyze verify --man=no "$TMP/catalog-serve.service" >"$TMP/verify" 2>&1 ||
    fail "systemd-analyze verify exited $?: $(cat "$TMP/verify")"
  [[ ! -s $TMP/verify ]] || fail "systemd-analyze verify says: $(cat "$TMP/verify")"
  echo "systemd-analyze verify: nothing to say"
else
  echo "systemd-analyze is not installed: the unit's syntax is not checked"
fi

# ---- 2. the settings that must agree ----

exec_start=$(setting ExecStart)
credential=$(setting LoadCredential)
name=${credential%%:*}
[[ ${credential#*:} == /etc/catalog/jwt-hs256-secret ]] ||
  fail "the credential comes from ${credential#*:}, docs/DEPLOY.md says /etc/catalog/jwt-hs256-secret"
[[ $exec_start == *"--jwt-hs256-secret-file \${CREDENTIALS_DIRECTORY}/$name "* ]] ||
  fail "ExecStart does not read the credential $name: $exec_start"
[[ $exec_start == "catalog-serve "* ]] || fail "ExecStart does not start catalog-serve: $exec_start"
[[ $(setting StateDirectory) == catalog && $exec_start == *" --store lmdb:/var/lib/catalog "* ]] ||
  fail "the store is not the state directory /var/lib/catalog"
[[ $(setting RestartPreventExitStatus) == 2 ]] || fail "exit status 2 would be restarted"
[[ $(setting EnvironmentFile) == -/etc/default/catalog-serve ]] ||
  fail "the options file is not the optional /etc/default/catalog-serve"

# ---- 3. the command line, as systemd expands it ----

# The options file is systemd's KEY="value" form, which bash reads alike.
options=$(unset CATALOG_SERVE_OPTIONS; source "$DEFAULTS"; printf '%s' "${CATALOG_SERVE_OPTIONS-}")
[[ $options == *"--port 8585"* ]] || fail "the example options do not name the port: $options"
options="${options/--port 8585/--port 0} --admin admin"

SECRET=unit-test-secret-0123456789abcdef
mkdir -m 0700 "$TMP/state" "$TMP/credentials"
printf '%s' "$SECRET" >"$TMP/credentials/$name"
command_line=${exec_start/#catalog-serve /$SERVE }
command_line=${command_line//\/var\/lib\/catalog/$TMP/state}
command_line=${command_line//\$\{CREDENTIALS_DIRECTORY\}/$TMP/credentials}
command_line=${command_line//\$CATALOG_SERVE_OPTIONS/$options}
[[ $command_line != *'$'* ]] || fail "ExecStart uses a variable this test does not know: $command_line"
read -r -a argv <<<"$command_line"
echo "running: ${argv[*]}"

ADMIN=$(hs256_jwt "$SECRET" '{"sub":"admin","exp":4102444800}')
start() {
  (umask 0077 && exec "${argv[@]}") >"$TMP/stdout" 2>"$TMP/stderr" &
  SERVER_PID=$!
  wait_for_port
  BASE=http://127.0.0.1:$PORT
}
stop() {
  kill -TERM "$SERVER_PID"
  local rc=0
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=
  [[ $rc -eq 0 ]] || fail "catalog-serve exited $rc after SIGTERM, not 0"
}
# expect STATUS CURL-ARGS...: the request answers STATUS.
expect() {
  local want=$1 got
  shift
  got=$(curl -sS -o "$TMP/body" -w '%{http_code}' --max-time 10 "$@") || got=000
  [[ $got == "$want" ]] || fail "curl $*: status $got, expected $want"
}

start
expect 200 "$BASE/healthz"
expect 201 -X POST -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  --data '{"name":"deployed","description":"made through the unit"}' "$BASE/v1/glossaries"
expect 200 -H "Authorization: Bearer $ADMIN" "$BASE/metrics"
expect 401 "$BASE/metrics"
grep -q ' GET /healthz 200 ' "$TMP/stdout" || fail "no access log line for /healthz: $(cat "$TMP/stdout")"
grep -q ' POST /v1/glossaries 201 ' "$TMP/stdout" || fail "no access log line for the create"
[[ -f $TMP/state/data.mdb ]] || fail "the store is not in the state directory: $(ls "$TMP/state")"
stop

# A restart serves the same store.
start
expect 200 -H "Authorization: Bearer $ADMIN" "$BASE/v1/glossaries/name/deployed"
grep -q '"name":"deployed"' "$TMP/body" || fail "the glossary made before the restart is gone"
stop
echo "the unit's command line serves the state directory, logs each request and stops on SIGTERM"

# ---- 4. a bad option is exit 2, which the unit does not restart ----

bad=("${argv[@]/--admin/--bogus-option}")
rc=0
timeout 10 "${bad[@]}" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
[[ $rc -eq 2 ]] || fail "a bad option in the options file exited $rc, not 2"
grep -q -- "--bogus-option" "$TMP/stderr" || fail "the bad option is not named: $(cat "$TMP/stderr")"
echo "PASS"
