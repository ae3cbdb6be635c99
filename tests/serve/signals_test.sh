#!/usr/bin/env bash
# catalog-serve and the signals a service meets (ctest: catalog_serve_signals).
#
#   tests/serve/signals_test.sh <path to catalog-serve>
#
# 1. SIGHUP before the server listens (a log rotation that comes while a service starts) is
#    ignored: the server goes on, listens and answers. Its access log is a FIFO, whose open
#    waits for a reader: SIGHUP is sent then, when the process ignores it (/proc/<pid>/status,
#    SigIgn) and has not listened yet.
# 2. The reader of the access log going away (`--access-log -` into a pipe whose reader exits)
#    costs the log lines, not the server: no SIGPIPE; the next requests are answered.
# 2b. The access log in a pipe its reader drains slowly: 100 lines of 6 KiB, from requests on four
#    connections at once, come out whole, one line each.
# 3. SIGTERM with a client still sending its request's body (a header that announces 100 bytes,
#    one sent) ends the server after 9 to 20 s, with exit 0: the body has 10 s more to arrive,
#    then the request, which has not begun, is dropped rather than waited for through the read
#    timeout (60 s). (curl_test.sh checks that an upload which does arrive is answered.)
# Also: a short HS256 secret file and a passphrase-protected TLS key are refused with exit 2,
# one line naming the flag and the file.
# Needs bash (/dev/tcp), curl, openssl, /proc. Exit 77 (ctest: skipped) when one is missing.
set -euo pipefail

[[ $# -eq 1 && -x $1 ]] || { echo "usage: $0 <catalog-serve>" >&2; exit 2; }
SERVE=$1
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_test_setup curl openssl
[[ -r /proc/self/status ]] || { echo "SKIP: no /proc"; exit 77; }
step() { echo "== $*"; }

SECRET=$(openssl rand -hex 24)
printf '%s' "$SECRET" >"$TMP/secret"
ADMIN=$(hs256_jwt "$SECRET" "{\"email\":\"admin@example.com\",\"exp\":$(($(date +%s) + 3600))}")

step "keys the server cannot use: exit 2, one line naming the flag and the file"
refused() {  # refused <text the one line must hold> <flags...>
  local want=$1 rc=0
  shift
  "$SERVE" --port 0 "$@" </dev/null >/dev/null 2>"$TMP/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "catalog-serve $*: exit $rc, not 2 ($(cat "$TMP/err"))"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "catalog-serve $*: said more than one line: $(cat "$TMP/err")"
  grep -qF -- "$want" "$TMP/err" || fail "catalog-serve $*: said $(cat "$TMP/err"), not $want"
}
printf 'short' >"$TMP/short"
refused "catalog-serve: --jwt-hs256-secret-file: $TMP/short is shorter than 32 bytes" \
  --jwt-hs256-secret-file "$TMP/short"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
openssl pkey -in "$TMP/key.pem" -aes256 -passout pass:not-for-services -out "$TMP/locked.pem"
refused "catalog-serve: --tls-key: $TMP/locked.pem is encrypted with a passphrase" \
  --jwt-hs256-secret-file "$TMP/secret" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/locked.pem"

# sig_ignored <pid> <signal number>: whether the process ignores the signal now.
sig_ignored() {
  local mask
  mask=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 1
  [[ -n $mask ]] && (((16#$mask >> ($2 - 1)) & 1))
}

step "1. SIGHUP before the server listens is ignored"
# The access log is a FIFO: opening it for writing blocks until a reader opens it, after the
# server set its signals and before it opens the store. The test sends SIGHUP there, then reads
# the FIFO. The server starts with SIGHUP's default action whatever this shell inherited.
mkfifo "$TMP/log.fifo"
env --default-signal=HUP "$SERVE" --port 0 --store "lmdb:$TMP/store-hup" --admin admin \
  --jwt-hs256-secret-file "$TMP/secret" --access-log "$TMP/log.fifo" \
  >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
for _ in $(seq 100); do
  sig_ignored "$SERVER_PID" 1 && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "the server ended before it opened its access log"
  sleep 0.1
done
sig_ignored "$SERVER_PID" 1 || fail "the server does not ignore SIGHUP while it starts"
[[ ! -s $TMP/stdout ]] || fail "the server listens before its access log is open"
kill -HUP "$SERVER_PID"
sleep 0.2
kill -0 "$SERVER_PID" 2>/dev/null || fail "SIGHUP before the server listened ended it"
cat "$TMP/log.fifo" >"$TMP/access.lines" &
READER=$!
wait_for_port
got=$(curl -sS -o "$TMP/body" -w '%{http_code}' "http://127.0.0.1:$PORT/healthz") ||
  fail "no answer after a SIGHUP during the start"
[[ $got == 200 ]] || fail "GET /healthz after a SIGHUP during the start: $got"
kill -TERM "$SERVER_PID"
stopped 10 "SIGTERM after SIGHUP"
wait "$READER" || true
grep -qF ' GET /healthz 200 ' "$TMP/access.lines" || fail "the access log through the FIFO: $(cat "$TMP/access.lines")"

step "2. the access log's reader goes away: no SIGPIPE"
"$SERVE" --port 0 --store "lmdb:$TMP/store-pipe" --jwt-hs256-secret-file "$TMP/secret" \
  --access-log - 2>"$TMP/stderr" > >(head -n 1 >"$TMP/stdout") &
SERVER_PID=$!
wait_for_port
sleep 0.2  # head has read its line and exited: the pipe has no reader
for i in 1 2 3; do
  got=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz") ||
    fail "request $i: no answer once the access log's reader was gone"
  [[ $got == 200 ]] || fail "request $i: $got"
done
kill -0 "$SERVER_PID" 2>/dev/null || fail "the server ended when its access log's reader went away"
kill -TERM "$SERVER_PID"
stopped 10 "SIGTERM without the access log's reader"

step "2b. the access log in a slow pipe: lines past 4 KiB from concurrent requests stay whole"
# The reader (bash's read takes a pipe a byte at a time) is slower than the server, so the pipe
# fills and writes to it come out short; each line, with its target of 6,000 bytes, is longer
# than what a pipe takes in one piece (PIPE_BUF, 4 KiB).
"$SERVE" --port 0 --threads 4 --store "lmdb:$TMP/store-long" --jwt-hs256-secret-file "$TMP/secret" \
  --access-log - 2>"$TMP/stderr" \
  > >(while IFS= read -r l; do printf '%s\n' "$l"; done >"$TMP/stdout") &
SERVER_PID=$!
wait_for_port
long=$(printf '%6000s' '' | tr ' ' 'a')
clients=()
for t in 1 2 3 4; do
  (for i in $(seq 25); do
     curl -sS -o /dev/null "http://127.0.0.1:$PORT/healthz?$t-$i-$long" || exit 1
   done) &
  clients+=($!)
done
for pid in "${clients[@]}"; do wait "$pid" || fail "a request with a long target had no answer"; done
kill -TERM "$SERVER_PID"
stopped 10 "SIGTERM after long lines"
for _ in $(seq 100); do  # what the reader has not written yet
  [[ $(grep -c "$long" "$TMP/stdout") -ge 100 ]] && break
  sleep 0.1
done
line_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z 127\.0\.0\.1:[0-9]+ GET /healthz\?[1-4]-[0-9]+-a{6000} 200 15 [0-9]+\.[0-9]{3}$'
whole=$(grep -Ec "$line_re" "$TMP/stdout" || true)
[[ $whole -eq 100 ]] ||
  fail "$whole of 100 long access log lines came whole through the pipe; $(grep -Evc "$line_re" "$TMP/stdout") lines are not one line"
[[ $(wc -l <"$TMP/stdout") -eq 101 ]] || fail "the access log has $(wc -l <"$TMP/stdout") lines, not 101"

step "3. SIGTERM with a body that never arrives: the server ends after 10 s"
"$SERVE" --port 0 --store "lmdb:$TMP/store-stop" --admin admin \
  --jwt-hs256-secret-file "$TMP/secret" >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
wait_for_port
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{' \
  "$ADMIN" >&3
sleep 0.5  # the server has read the header and waits for the body
stopped=$(date +%s%N)
kill -TERM "$SERVER_PID"
stopped 20 "SIGTERM with a body that never arrives"
exec 3<&-
# The body had its 10 s: the stop did not drop it at once (nor was the request idle).
took_ms=$((($(date +%s%N) - stopped) / 1000000))
((took_ms >= 9000)) || fail "the stop took $took_ms ms: the body was not given its 10 s"
echo "the stop took $took_ms ms"
echo "PASS"
