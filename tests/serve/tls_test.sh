#!/usr/bin/env bash
# catalog-serve over TLS (ctest: catalog_serve_tls).
#
#   tests/serve/tls_test.sh <path to catalog-serve>
#
# Makes a self-signed certificate for 127.0.0.1 with openssl, then checks: the TLS flags go
# together and a key that is not the certificate's, or a file that is not there, is a bad command
# line (exit 2), as is a key of another type (RSA beside an EC certificate); the server answers HTTPS (GET /healthz, an authenticated create and read, two
# requests on one kept-alive connection) and only HTTPS (a plain HTTP request gets no answer, and
# the server goes on); the access log has the lines; SIGTERM ends it with 0. Exit 77 (skipped)
# when curl or openssl is missing.
set -euo pipefail

[[ $# -eq 1 && -x $1 ]] || { echo "usage: $0 <catalog-serve>" >&2; exit 2; }
SERVE=$1
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_test_setup curl openssl
step() { echo "== $*"; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TMP/other.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/rsa.pem" 2>/dev/null

step "bad TLS command lines exit 2 with one line naming the flag"
bad() {  # bad <text the error must hold> <flags...>
  local want=$1 rc=0
  shift
  "$SERVE" --port 0 "$@" >/dev/null 2>"$TMP/err" || rc=$?
  [[ $rc -eq 2 ]] || fail "catalog-serve $* exited $rc, not 2"
  grep -qF -- "$want" "$TMP/err" || fail "catalog-serve $*: said $(cat "$TMP/err"), not $want"
}
bad "--tls-cert and --tls-key go together" --tls-cert "$TMP/cert.pem"
bad "--tls-cert and --tls-key go together" --tls-key "$TMP/key.pem"
bad "--tls-cert: cannot load $TMP/missing.pem" --tls-cert "$TMP/missing.pem" --tls-key "$TMP/key.pem"
bad "--tls-key: cannot use $TMP/other.pem: key values mismatch" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/other.pem"
# A key of another type loads beside the certificate (OpenSSL keeps one per type), and every
# handshake would fail: refused too.
bad "--tls-key: $TMP/rsa.pem is not the private key of $TMP/cert.pem" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/rsa.pem"

SECRET=$(openssl rand -hex 24)
printf '%s' "$SECRET" >"$TMP/secret"
ADMIN=$(hs256_jwt "$SECRET" "{\"email\":\"admin@example.com\",\"exp\":$(($(date +%s) + 3600))}")

step "the server over TLS"
"$SERVE" --port 0 --admin admin --jwt-hs256-secret-file "$TMP/secret" \
  --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --access-log "$TMP/access.log" \
  >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
wait_for_port
BASE=https://127.0.0.1:$PORT
CURL=(curl -sS --cacert "$TMP/cert.pem")

got=$("${CURL[@]}" -o "$TMP/body" -w '%{http_code}' "$BASE/healthz") || fail "HTTPS GET /healthz failed"
[[ $got == 200 && $(cat "$TMP/body") == '{"status":"ok"}' ]] || fail "GET /healthz: $got $(cat "$TMP/body")"
got=$("${CURL[@]}" -o "$TMP/body" -w '%{http_code}' -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/json' --data-binary '{"name":"Secure","description":"Over TLS"}' \
  "$BASE/v1/glossaries") || fail "HTTPS POST failed"
[[ $got == 201 ]] || fail "POST /v1/glossaries over TLS: $got $(cat "$TMP/body")"
got=$("${CURL[@]}" -H "Authorization: Bearer $ADMIN" -o /dev/null -o "$TMP/body" \
  -w '%{http_code} %{num_connects}\n' "$BASE/v1/glossaries" "$BASE/v1/glossaries/name/Secure")
[[ $got == $'200 1\n200 0' ]] || fail "two requests over one TLS connection: $got"
grep -qF '"description":"Over TLS"' "$TMP/body" || fail "GET by name over TLS: $(cat "$TMP/body")"

step "plain HTTP to the TLS port gets no HTTP answer, and the server goes on"
rc=0
curl -sS -m 5 -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null || rc=$?
[[ $rc -ne 0 ]] || fail "a plain HTTP request to the TLS port was answered"
got=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "$BASE/healthz") || fail "HTTPS after plain HTTP failed"
[[ $got == 200 ]] || fail "GET /healthz after a plain HTTP attempt: $got"

step "the access log has the TLS requests"
grep -Eq ' POST /v1/glossaries 201 [0-9]+ ' "$TMP/access.log" || fail "no POST logged: $(cat "$TMP/access.log")"
[[ $(grep -c ' GET /healthz 200 15 ' "$TMP/access.log") -eq 2 ]] || fail "GET /healthz not logged twice"

step "SIGTERM: exit 0"
kill -TERM "$SERVER_PID"
stopped 30 "SIGTERM"
echo "PASS: catalog-serve spoke TLS and only TLS"
