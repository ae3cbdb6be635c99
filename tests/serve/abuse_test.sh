#!/usr/bin/env bash
# catalog-serve against hostile clients (ctest: catalog_serve_abuse).
#
#   tests/serve/abuse_test.sh <path to catalog-serve>
#
# 1. Request smuggling (RFC 9112 6.1, 6.3): over one raw connection, a request whose
#    Transfer-Encoding is not exactly `chunked` (`xchunked`, `chunked, identity`, `chunked,
#    chunked`, an HTTP/1.0 request with one, or one with a Content-Length beside it) carries a
#    complete second request (an admin's POST that creates a glossary) where its body would be.
#    The answer must be exactly one 400 in the catalog's error shape, the server must close the
#    connection, and the smuggled glossary must not exist. A plain chunked request still works.
#    A request that announces a body but has no valid token is answered 401 before any of the
#    body is read (no 100 Continue either), and the connection closed: a client without a
#    token cannot make the server hold bodies.
#    The server's own routes (/healthz, /metrics) take no body: answered from the header. A
#    chunk line or trailer without end is a 400 once the read buffer is full, and an HTTP/1.1
#    request needs exactly one Host. A chunked body's trailer fields are dropped (a second
#    Authorization or an If-Match there changes nothing), and an HTTP/1.0 client is never sent
#    100 Continue.
# 2. Out of file descriptors: catalog-serve runs with `ulimit -n 64` while this script holds 100
#    idle connections, so accept fails with EMFILE. Over 2 s of that its CPU time (from
#    /proc/<pid>/stat) must stay under 20% of the wall time (a spin on accept uses a whole
#    thread), and once the idle connections close it must answer again.
#
# Needs bash (/dev/tcp), curl, openssl, timeout, getconf, /proc. Exit 77 (ctest: skipped) when
# one is missing. The first failed check prints what came back and exits 1.

set -euo pipefail

if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 <catalog-serve>" >&2
  exit 2
fi
SERVE=$1
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_test_setup curl openssl timeout getconf
[[ -r /proc/self/stat ]] || { echo "SKIP: no /proc"; exit 77; }
step() { echo "== $*"; }

# ---- an admin token, HS256 signed here ----

SECRET=$(openssl rand -hex 24)
printf '%s' "$SECRET" >"$TMP/secret"
jwt() { hs256_jwt "$SECRET" "$1"; }  # jwt <claims JSON>
ADMIN=$(jwt "{\"email\":\"admin@example.com\",\"exp\":$(($(date +%s) + 3600))}")

# ---- bad command lines: one line saying what is wrong, exit 2, never an abort ----

step "bad command lines: a message and exit 2"
for args in "--jwt-hs256-secret-file $TMP" "--jwt-rs256-public-key-file $TMP" "--port 70000" \
  "--bogus"; do
  rc=0
  # shellcheck disable=SC2086
  "$SERVE" $args >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
  [[ $rc -eq 2 ]] || fail "catalog-serve $args: exit $rc, expected 2 ($(cat "$TMP/bad.err"))"
  [[ $(head -n 1 "$TMP/bad.err") == "catalog-serve: "* ]] ||
    fail "catalog-serve $args: stderr does not say what is wrong: $(cat "$TMP/bad.err")"
  ! grep -q "usage:" "$TMP/bad.err" || fail "catalog-serve $args printed the whole usage"
done
grep -q "is not a file" <("$SERVE" --jwt-hs256-secret-file "$TMP" 2>&1) ||
  fail "a directory as the secret file is not named as such"

# ---- the server, with at most 64 file descriptors ----

FD_LIMIT=64
(ulimit -n "$FD_LIMIT" && exec "$SERVE" --port 0 --admin admin \
  --jwt-hs256-secret-file "$TMP/secret") >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!  # the subshell execs, so this is catalog-serve's pid
wait_for_port
BASE=http://127.0.0.1:$PORT
echo "catalog-serve listening on port $PORT with at most $FD_LIMIT file descriptors"

# status <path>: the HTTP status of an admin's GET (000 when nothing answered in 10 s).
status() {
  curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $ADMIN" \
    "$BASE$1" 2>/dev/null || true
}

# ---- 1. request smuggling ----

# The request hidden in a body: an admin creating the glossary named $1.
smuggled() {
  local json="{\"name\":\"$1\",\"description\":\"smuggled\"}"
  printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$ADMIN"
  printf 'Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' "${#json}" "$json"
}

# raw <seconds>: sends $TMP/request over one new connection and reads until the server closes
# it, for at most <seconds>. Leaves what came back in $TMP/raw and the reader's exit status in
# $RAW_STATUS (0: the server closed the connection; 124: it was still open at the end).
raw() {
  local fd
  exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
  cat "$TMP/request" >&"$fd"
  RAW_STATUS=0
  timeout "$1" cat <&"$fd" >"$TMP/raw" || RAW_STATUS=$?
  exec {fd}>&-
}

# answered <seconds> <status> <what> [open|closed]: sends $TMP/request (raw) and fails unless the
# first line back starts with <status> (`HTTP/1.1 201`; `HTTP/1.[01]` for either version) and,
# when asked, the connection is still open at the end, or was closed by the server. What came
# back stays in $TMP/raw for more checks.
answered() {
  raw "$1"
  head -n 1 "$TMP/raw" | grep -q "^${2//./\\.} " ||
    fail "$3: not answered $2: $(head -n 1 "$TMP/raw")"
  case ${4:-} in
    open) [[ $RAW_STATUS -eq 124 ]] || fail "$3: the connection was closed after the answer" ;;
    closed) [[ $RAW_STATUS -eq 0 ]] || fail "$3: the connection was not closed after the answer" ;;
  esac
}

# smuggle <name> <request line> <header lines...>: the outer request with those headers and the
# smuggled creation of glossary <name> as its body; expects one 400, a close, and no glossary.
smuggle() {
  local name=$1 line=$2
  shift 2
  {
    printf '%s\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$line" "$ADMIN"
    printf '%s\r\n' "$@"
    printf '\r\n'
    smuggled "$name"
  } >"$TMP/request"
  answered 5 'HTTP/1.[01] 400' "$*" closed
  local answers
  answers=$(grep -ao 'HTTP/1\.[01] [0-9][0-9][0-9] ' "$TMP/raw" | wc -l)
  [[ $answers -eq 1 ]] || fail "$*: expected one answer, got $answers"
  grep -qF '{"code":400,"errorType":"BAD_REQUEST","message":"' "$TMP/raw" ||
    fail "$*: the 400 is not in the catalog's error shape"
  rm -f "$TMP/raw"
  local got
  got=$(status "/v1/glossaries/name/$name")
  [[ $got == 404 ]] || fail "$*: the smuggled request was executed (glossary $name: $got)"
}

step "smuggling: Transfer-Encoding not exactly chunked gets one 400 and a close"
smuggle S1 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: xchunked'
smuggle S2 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: chunked, identity'
smuggle S3 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: chunked, chunked'
smuggle S4 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: identity'
smuggle S5 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: xchunked' 'Content-Length: 0'
smuggle S6 'GET /v1/glossaries HTTP/1.1' 'Content-Length: 0' 'Transfer-Encoding: chunked'
smuggle S7 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: chunked' 'Content-Length: 0'
smuggle S8 'GET /v1/glossaries HTTP/1.1' 'Transfer-Encoding: identity' 'Transfer-Encoding: chunked'
smuggle S9 'GET /v1/glossaries HTTP/1.0' 'Transfer-Encoding: chunked'

step "a plain chunked request is still served, and the connection stays open"
json='{"name":"Chunked","description":"sent in chunks"}'
{
  printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$ADMIN"
  printf 'Content-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n'
  printf '%x\r\n%s\r\n0\r\n\r\n' "${#json}" "$json"
} >"$TMP/request"
answered 1 'HTTP/1.1 201' "a well-formed chunked create" open
rm -f "$TMP/raw"
[[ $(status /v1/glossaries/name/Chunked) == 200 ]] || fail "the chunked create left no glossary"

step "a chunked body's trailer fields are dropped: they change nothing the header decided"
# A second Authorization in the trailer (merged, it would be 401 "More than one Authorization
# header"), then an If-Match in the trailer of a patch (merged, 409).
json='{"name":"Trailered","description":"sent with a trailer"}'
{
  printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$ADMIN"
  printf 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
  printf '%x\r\n%s\r\n0\r\nAuthorization: Bearer not-a-token\r\nX-Note: 1\r\n\r\n' "${#json}" "$json"
} >"$TMP/request"
answered 1 'HTTP/1.1 201' "a chunked create with a trailer" open
rm -f "$TMP/raw"
json='{"description":"patched with a trailer"}'
{
  printf 'PATCH /v1/glossaries/name/Trailered HTTP/1.1\r\nHost: 127.0.0.1\r\n'
  printf 'Authorization: Bearer %s\r\nContent-Type: application/merge-patch+json\r\n' "$ADMIN"
  printf 'Transfer-Encoding: chunked\r\n\r\n'
  printf '%x\r\n%s\r\n0\r\nIf-Match: "7.7"\r\n\r\n' "${#json}" "$json"
} >"$TMP/request"
answered 1 'HTTP/1.1 200' "a chunked patch with If-Match in its trailer"
grep -qF '"description":"patched with a trailer"' "$TMP/raw" || fail "the patch was not applied"
rm -f "$TMP/raw"

step "an HTTP/1.0 request's Expect: 100-continue is ignored: no 1xx answer (RFC 9110 10.1.1)"
json='{"name":"OldClient","description":"HTTP/1.0"}'
{
  printf 'POST /v1/glossaries HTTP/1.0\r\nAuthorization: Bearer %s\r\n' "$ADMIN"
  printf 'Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n%s' \
    "${#json}" "$json"
} >"$TMP/request"
answered 5 'HTTP/1.0 201' "an HTTP/1.0 create with Expect: 100-continue"
! grep -aq ' 100 Continue' "$TMP/raw" || fail "an HTTP/1.0 client was sent 100 Continue"
rm -f "$TMP/raw"

step "a body is read only for a valid token: 401 at once, the body left unsent, and a close"
# headers_only <authorization header line or empty> <extra header line or empty>: a POST that
# announces a body of 8,000,000 bytes and sends none of it.
headers_only() {
  {
    printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\n'
    [[ -n $1 ]] && printf '%s\r\n' "$1"
    [[ -n $2 ]] && printf '%s\r\n' "$2"
    printf 'Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n'
  } >"$TMP/request"
}
for auth in "" "Authorization: Bearer not-a-token" "Authorization: Basic YTpi"; do
  for expect in "" "Expect: 100-continue"; do
    headers_only "$auth" "$expect"
    # Not 401 at once: the server waits for the body, or said 100 Continue.
    answered 5 'HTTP/1.1 401' "'$auth' '$expect' with the body unsent" closed
    grep -qF '{"code":401,"errorType":"UNAUTHORIZED","message":"' "$TMP/raw" ||
      fail "'$auth' '$expect': the 401 is not in the catalog's error shape"
    rm -f "$TMP/raw"
  done
done
# A client that sends its whole body at once (no Expect) still reads the 401: the server drops
# what it did not read before closing, rather than resetting the connection under the answer.
head -c 6000000 /dev/zero | tr '\0' 'x' >"$TMP/big_body"
for i in 1 2 3; do
  got=$(curl -sS -o "$TMP/body" -w '%{http_code}' --max-time 20 -H 'Expect:' \
    -H 'Content-Type: application/json' --data-binary @"$TMP/big_body" \
    "$BASE/v1/glossaries" 2>"$TMP/curl.err") || got="curl failed: $(cat "$TMP/curl.err")"
  [[ $got == 401 ]] || fail "a 6 MB body sent without a token, try $i: $got, not the 401"
done
rm -f "$TMP/big_body" "$TMP/body"
# With a valid token the server waits for the body, as before (Expect: 100-continue: 100 first).
headers_only "Authorization: Bearer $ADMIN" "Expect: 100-continue"
answered 1 'HTTP/1.1 100' "with a valid token, a body awaited" open
rm -f "$TMP/raw"

step "the server's own routes take no body: answered from the header alone, and a close"
# own_route <request line> <extra header line or empty> <expected status>: announces a body of
# 8,000,000 bytes and sends none of it.
own_route() {
  {
    printf '%s\r\nHost: 127.0.0.1\r\n' "$1"
    [[ -n $2 ]] && printf '%s\r\n' "$2"
    printf 'Expect: 100-continue\r\nContent-Length: 8000000\r\n\r\n'
  } >"$TMP/request"
  answered 5 "HTTP/1.1 $3" "$1 '$2' with a body unsent" closed
  rm -f "$TMP/raw"
}
own_route 'POST /healthz HTTP/1.1' '' 405
own_route 'GET /healthz HTTP/1.1' '' 200
own_route 'GET /metrics HTTP/1.1' '' 401
own_route 'PUT /metrics HTTP/1.1' '' 401  # authentication first, as the Api's routes
own_route 'PUT /metrics HTTP/1.1' "Authorization: Bearer $ADMIN" 405
own_route 'GET /metrics HTTP/1.1' "Authorization: Bearer $ADMIN" 200

step "a chunk line or trailer that never ends is a 400 once the read buffer is full, not memory"
# 1 MiB of a chunk extension, then of a trailer field: the answer comes before the end.
for shape in ext trailer; do
  {
    printf 'POST /v1/glossaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n' "$ADMIN"
    printf 'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
    if [[ $shape == ext ]]; then printf '1;e='; else printf '1\r\na\r\n0\r\nX-T: '; fi
    head -c 1048576 /dev/zero | tr '\0' 'a'
  } >"$TMP/request"
  answered 10 'HTTP/1.1 400' "an endless chunk $shape" closed
  rm -f "$TMP/raw"
done

step "an HTTP/1.1 request without a Host, or with two, is 400 (RFC 9112 3.2)"
for hosts in "" 'Host: a\r\nHost: b\r\n'; do
  printf "GET /healthz HTTP/1.1\r\n${hosts}\r\n" >"$TMP/request"
  answered 5 'HTTP/1.1 400' "Host lines '$hosts'"
  rm -f "$TMP/raw"
done
printf 'GET /healthz HTTP/1.0\r\n\r\n' >"$TMP/request"
answered 5 'HTTP/1.0 200' "an HTTP/1.0 request without Host"
rm -f "$TMP/raw"

# ---- 2. out of file descriptors ----

# cpu_ticks: catalog-serve's user + system time so far, in clock ticks (fields 14 and 15 of
# /proc/<pid>/stat; the fields after the command name start at 3).
cpu_ticks() {
  local stat fields
  stat=$(<"/proc/$SERVER_PID/stat")
  read -ra fields <<<"${stat##*) }"
  echo $((fields[11] + fields[12]))
}
open_fds() { find "/proc/$SERVER_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }

step "100 idle connections against $FD_LIMIT descriptors: the longest idle go, a new client is served"
IDLE=()
for _ in $(seq 100); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
  IDLE+=("$fd")
done
sleep 0.5  # the server has met EMFILE and closed idle connections to accept the rest
# Every idle connection is still held open by this script: without shedding, the server would
# keep its descriptors for the whole idle timeout and a new client would wait for it.
got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $ADMIN" \
  "$BASE/v1/glossaries" 2>&1) || true
[[ $got == 200 ]] || fail "a new client while 100 idle connections are held got: $got"
grep -q "longest idle connections" "$TMP/stderr" ||
  fail "catalog-serve did not say it closed idle connections"
ticks0=$(cpu_ticks)
wall0=$(date +%s%N)
sleep 2
ticks1=$(cpu_ticks)
wall1=$(date +%s%N)
hz=$(getconf CLK_TCK)
cpu_ms=$(((ticks1 - ticks0) * 1000 / hz))
wall_ms=$(((wall1 - wall0) / 1000000))
echo "catalog-serve used ${cpu_ms} ms of CPU in ${wall_ms} ms with the idle connections held"
[[ $((cpu_ms * 5)) -lt $wall_ms ]] ||
  fail "catalog-serve spins with idle connections held: ${cpu_ms} ms of CPU in ${wall_ms} ms"

step "the idle connections close: the server answers again"
for fd in "${IDLE[@]}"; do exec {fd}>&-; done
got=$(status /v1/glossaries)
[[ $got == 200 ]] || fail "after the idle connections closed, GET /v1/glossaries got $got"

kill -TERM "$SERVER_PID"
stopped 30 "SIGTERM"

echo "PASS: no smuggled request ran, and idle connections did not keep a new client out"
