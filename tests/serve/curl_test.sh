#!/usr/bin/env bash
# catalog-serve driven with curl over 127.0.0.1 (ctest: catalog_serve_curl).
#
#   tests/serve/curl_test.sh <path to catalog-serve> [store options...]
#
# The store options (e.g. --store postgresql:<conninfo> --postgres-schema <name>) go to
# catalog-serve; without them it serves a memory store.
#
# Signs its own HS256 tokens with openssl, starts the server on a free port, and walks through
# the REST surface (REST.md) as an HTTP client sees it: 401 without a token; users, an ML model
# service and a model; follow and vote; a glossary with a term, soft delete and restore; list
# pages; a domain patched with ETag / If-Match; versions; 403 for a non-admin create; 404, 405,
# 204; a body over 8 MiB and one over 1 MiB (Expect: 100-continue); keep-alive (also after a
# HEAD, answered as GET without the body); search, typeahead and facets; the operator's routes (GET /healthz for anyone, GET
# /metrics for admins, in the Prometheus text format) and the access log, one line per request;
# a bad --bind; and SIGTERM while an upload is in flight and an idle connection is open: the upload
# gets its 201 and the server exits 0. Every step checks the HTTP status; the first mismatch
# prints the response and exits 1. Needs bash, curl, openssl, sed, grep, perl; no jq. Exit 77
# (ctest: skipped) when curl or openssl is missing.

set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 <catalog-serve> [store options...]" >&2
  exit 2
fi
SERVE=$1
shift
STORE_OPTIONS=("$@")
# shellcheck source=tests/serve/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
serve_test_setup curl openssl

# --version prints the program and the library's version and exits 0, serving nothing.
version=$("$SERVE" --version) || fail "catalog-serve --version exited $?"
[[ $version =~ ^catalog-serve\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "catalog-serve --version: $version"
step() { echo "== $*"; }

# A --bind that is not an address is a bad command line: exit 2, one line naming the flag.
rc=0
"$SERVE" --bind not-an-address --port 0 >"$TMP/bind_out" 2>"$TMP/bind_err" || rc=$?
[[ $rc -eq 2 ]] || fail "catalog-serve --bind not-an-address exited $rc, not 2"
grep -q -- '--bind: not an IPv4 or IPv6 address: not-an-address' "$TMP/bind_err" ||
  fail "catalog-serve --bind not-an-address said: $(cat "$TMP/bind_err")"
# An IPv6 zone that names no interface is one too (asio would read it as zone 0).
rc=0
"$SERVE" --bind '::1%no-such-if9' --port 0 >"$TMP/bind_out" 2>"$TMP/bind_err" || rc=$?
[[ $rc -eq 2 ]] || fail "catalog-serve --bind ::1%no-such-if9 exited $rc, not 2"
grep -q -- "--bind: no network interface named 'no-such-if9' (the zone of ::1%no-such-if9)" \
  "$TMP/bind_err" || fail "catalog-serve --bind ::1%no-such-if9 said: $(cat "$TMP/bind_err")"
# An IPv6 address in brackets, as the listening line writes it, is that address: the server
# listens on it (or, on a machine without IPv6, cannot: exit 1, not a bad command line).
"$SERVE" --bind '[::1]' --port 0 --store "lmdb:$TMP/bracketed" >"$TMP/bind_out" \
  2>"$TMP/bind_err" &
bracketed=$!
SERVER_PID=$bracketed  # killed at exit if a check fails
for _ in $(seq 100); do
  [[ -s $TMP/bind_out ]] || ! kill -0 "$bracketed" 2>/dev/null && break
  sleep 0.1
done
if kill -0 "$bracketed" 2>/dev/null; then
  grep -q '^listening on \[::1\]:[0-9]*$' "$TMP/bind_out" ||
    fail "catalog-serve --bind [::1] printed: $(cat "$TMP/bind_out")"
  kill -TERM "$bracketed"
  wait "$bracketed" || fail "catalog-serve --bind [::1] did not stop cleanly"
else
  rc=0
  wait "$bracketed" || rc=$?
  [[ $rc -eq 1 ]] && grep -q "cannot listen on \[::1\]" "$TMP/bind_err" ||
    fail "catalog-serve --bind [::1] exited $rc: $(cat "$TMP/bind_err")"
fi
SERVER_PID=
# An access log that cannot be opened says why.
rc=0
"$SERVE" --access-log "$TMP/no/such/dir/access.log" --port 0 >"$TMP/bind_out" \
  2>"$TMP/bind_err" || rc=$?
[[ $rc -eq 2 ]] || fail "catalog-serve --access-log in a missing directory exited $rc, not 2"
grep -q -- "--access-log: cannot open $TMP/no/such/dir/access.log: No such file or directory" \
  "$TMP/bind_err" || fail "catalog-serve --access-log in a missing directory said: $(cat "$TMP/bind_err")"
rc=0
"$SERVE" --threads 0 --port 0 >"$TMP/bind_out" 2>"$TMP/bind_err" || rc=$?
[[ $rc -eq 2 ]] || fail "catalog-serve --threads 0 exited $rc, not 2"
grep -q -- '--threads: 0 is not an integer from 1 to 256' "$TMP/bind_err" ||
  fail "catalog-serve --threads 0 said: $(cat "$TMP/bind_err")"

# ---- tokens: HS256 signed here ----

SECRET=$(openssl rand -hex 24)  # 48 bytes of text; the file holds exactly these bytes
printf '%s' "$SECRET" >"$TMP/secret"
jwt() { hs256_jwt "$SECRET" "$1"; }  # jwt <claims JSON>
EXP=$(($(date +%s) + 3600))
token_of() { jwt "{\"email\":\"$1@example.com\",\"exp\":$EXP}"; }
ADMIN=$(token_of admin)
ALICE=$(token_of alice)

# ---- a store written before search: indexed on open, and said on stderr ----

FIXTURES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)
"$FIXTURES/lmdb_store.sh" "$FIXTURES/store_schema2.pairs" "$TMP/old" ||
  fail "mdb_load could not write the fixture's store"
"$SERVE" --port 0 --bind 127.0.0.1 --jwt-hs256-secret-file "$TMP/secret" --store "lmdb:$TMP/old" \
  >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
wait_for_port
grep -qF "catalog-serve: building the search index (version " "$TMP/stderr" ||
  fail "catalog-serve did not say that it built the search index"
grep -qF "catalog-serve: built the search index: " "$TMP/stderr" ||
  fail "catalog-serve did not say that the search index was built"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=
rm -f "$TMP/stdout" "$TMP/stderr"

# ---- the server ----

"$SERVE" --port 0 --bind 127.0.0.1 --threads 3 --admin admin --jwt-hs256-secret-file "$TMP/secret" \
  --access-log "$TMP/access.log" "${STORE_OPTIONS[@]}" >"$TMP/stdout" 2>"$TMP/stderr" &
SERVER_PID=$!
wait_for_port
BASE=http://127.0.0.1:$PORT
echo "catalog-serve listening on port $PORT"

# ---- helpers ----

# call <expected status> <token|-> <method> <path> [curl arguments...]
# Leaves the body in $BODY (and $TMP/body), the headers in $TMP/headers.
call() {
  local want=$1 token=$2 method=$3 path=$4 got
  shift 4
  local auth=()
  [[ $token != - ]] && auth=(-H "Authorization: Bearer $token")
  rm -f "$TMP/body" "$TMP/headers"
  got=$(curl -sS -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X "$method" \
    "${auth[@]}" "$@" "$BASE$path") || fail "curl failed: $method $path"
  BODY=$(cat "$TMP/body")
  [[ $got == "$want" ]] || fail "$method $path: expected HTTP $want, got $got"
}
# Checks that the last body contains a literal string.
expect_body() {
  grep -qF -- "$1" "$TMP/body" || fail "the response body lacks $1"
}
# Checks that the last response has a header line (case-insensitive name, exact value).
expect_header() {
  tr -d '\r' <"$TMP/headers" | grep -qix -- "$1: $2" || fail "the response lacks the header '$1: $2'"
}
# The id of the entity in the last body (the catalog writes "id" first).
entity_id() { sed -n 's/^{"id":"\([0-9a-f-]*\)".*/\1/p' "$TMP/body"; }
# The paging cursor named $1 (after / before) of the last list body, or nothing.
cursor() { grep -o "\"$1\":\"[^\"]*\"" "$TMP/body" | sed 's/.*:"\(.*\)"/\1/' || true; }

post() {  # post <expected> <token> <path> <JSON body>
  call "$1" "$2" POST "$3" -H 'Content-Type: application/json' --data-binary "$4"
}
put() {  # put <expected> <token> <path> <JSON body>
  call "$1" "$2" PUT "$3" -H 'Content-Type: application/json' --data-binary "$4"
}

# ---- the scenario ----

step "401 without a token, with a bad token, with a token signed by another key"
call 401 - GET /v1/glossaries
expect_body '"errorType":"UNAUTHORIZED"'
expect_header WWW-Authenticate Bearer
call 401 not-a-jwt GET /v1/glossaries
OTHER=$(SECRET=$(openssl rand -hex 24) token_of admin)
call 401 "$OTHER" GET /v1/glossaries

step "users (as admin)"
post 201 "$ADMIN" /v1/users '{"name":"alice","email":"alice@example.com","displayName":"Alice"}'
ALICE_ID=$(entity_id)
[[ -n $ALICE_ID ]] || fail "no id in the created user"
expect_body '"isAdmin":false'
post 201 "$ADMIN" /v1/users '{"name":"bob","email":"bob@example.com"}'
post 409 "$ADMIN" /v1/users '{"name":"bob","email":"bob@example.com"}'
expect_body '"errorType":"CONFLICT"'

step "an ML model service and a model"
post 201 "$ADMIN" /v1/services/mlmodelServices '{"name":"mlflow_prod","serviceType":"Mlflow"}'
post 201 "$ADMIN" /v1/mlmodels \
  '{"name":"churn","service":"mlflow_prod","algorithm":"XGBoost","target":"churned"}'
MODEL_ID=$(entity_id)
expect_body '"fullyQualifiedName":"mlflow_prod.churn"'
expect_header ETag '"0.1"'
expect_header Content-Type application/json

step "follow and vote (as alice: everyone may)"
put 200 "$ALICE" "/v1/mlmodels/$MODEL_ID/followers" "\"$ALICE_ID\""
expect_body "\"followers\":[{\"id\":\"$ALICE_ID\""
put 200 "$ALICE" "/v1/mlmodels/$MODEL_ID/vote" '{"updatedVoteType":"votedUp"}'
expect_body '"upVotes":1'
expect_body '"version":0.1'  # follow and vote make no version
put 400 "$ALICE" "/v1/mlmodels/$MODEL_ID/vote" '{"updatedVoteType":"sideways"}'

step "403: a non-admin may not create"
post 403 "$ALICE" /v1/glossaries '{"name":"Alices","description":"refused"}'
expect_body '"errorType":"FORBIDDEN"'

step "a glossary with a term"
post 201 "$ADMIN" /v1/glossaries '{"name":"Business","description":"Business terms"}'
GLOSSARY_ID=$(entity_id)
post 201 "$ADMIN" /v1/glossaryTerms '{"glossary":"Business","name":"Revenue","description":"Money in"}'
TERM_ID=$(entity_id)
expect_body '"fullyQualifiedName":"Business.Revenue"'
post 201 "$ADMIN" /v1/glossaries '{"name":"Finance","description":"Finance terms"}'

step "soft delete (recursive) and restore"
call 400 "$ADMIN" DELETE "/v1/glossaries/$GLOSSARY_ID"
expect_body 'is not empty'
call 200 "$ADMIN" DELETE "/v1/glossaries/$GLOSSARY_ID?recursive=true"
expect_body '"deleted":true'
expect_body '"version":0.2'
call 404 "$ADMIN" GET "/v1/glossaryTerms/$TERM_ID"
call 200 "$ADMIN" GET "/v1/glossaryTerms/$TERM_ID?include=deleted"
put 200 "$ADMIN" /v1/glossaries/restore "{\"id\":\"$GLOSSARY_ID\"}"
expect_body '"deleted":false'
expect_body '"version":0.3'
call 200 "$ADMIN" GET "/v1/glossaryTerms/$TERM_ID"

step "list pages: limit=1, then follow after"
call 200 "$ALICE" GET '/v1/glossaries?limit=1'
expect_body '"name":"Business"'
expect_body '"total":2'
AFTER=$(cursor after)
[[ -n $AFTER ]] || fail "the first page has no after cursor"
call 200 "$ALICE" GET "/v1/glossaries?limit=1&after=$AFTER"
expect_body '"name":"Finance"'
[[ -z $(cursor after) ]] || fail "the last page has an after cursor"
[[ -n $(cursor before) ]] || fail "the second page has no before cursor"
call 400 "$ALICE" GET '/v1/glossaries?limit=abc'

step "patch a domain by name with ETag / If-Match"
post 201 "$ADMIN" /v1/domains '{"name":"Marketing","domainType":"Aggregate","description":"Ads"}'
ETAG=$(tr -d '\r' <"$TMP/headers" | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[[ $ETAG == '"0.1"' ]] || fail "ETag after create is '$ETAG', not \"0.1\""
PATCH=(-H 'Content-Type: application/merge-patch+json' --data-binary '{"description":"Campaigns"}')
call 200 "$ADMIN" PATCH /v1/domains/name/Marketing -H "If-Match: $ETAG" "${PATCH[@]}"
expect_body '"description":"Campaigns"'
expect_header ETag '"0.2"'
call 409 "$ADMIN" PATCH /v1/domains/name/Marketing -H "If-Match: $ETAG" "${PATCH[@]}"
expect_body '"errorType":"CONFLICT"'
call 400 "$ADMIN" PATCH /v1/domains/name/Marketing -H 'Content-Type: text/plain' \
  --data-binary '{"description":"x"}'

step "versions"
call 200 "$ALICE" GET "/v1/glossaries/$GLOSSARY_ID/versions"
expect_body '"entityType":"glossary"'
for v in 0.3 0.2 0.1; do expect_body "\\\"version\\\":$v"; done
call 200 "$ALICE" GET "/v1/glossaries/$GLOSSARY_ID/versions/0.2"
expect_body '"version":0.2'
expect_body '"deleted":true'
call 404 "$ALICE" GET "/v1/glossaries/$GLOSSARY_ID/versions/0.9"
call 400 "$ALICE" GET "/v1/glossaries/$GLOSSARY_ID/versions/abc"

step "search: each write found by the next query; typeahead; facets; a bad parameter"
call 200 "$ALICE" GET '/v1/search/query?q=churn&index=mlmodel'
expect_body '"total":{"value":1,"relation":"eq"}'
expect_body '"_index":"mlmodel_search_index"'
expect_body '"highlight":{"name":["<span class=\"text-highlighter\">churn</span>"]}'
post 201 "$ADMIN" /v1/glossaryTerms '{"glossary":"Finance","name":"Margin","description":"Profit share"}'
MARGIN_ID=$(entity_id)
call 200 "$ALICE" GET '/v1/search/query?q=profit'
expect_body '"total":{"value":1,"relation":"eq"}'
expect_body '"name":"Margin"'
expect_body '{"key":"glossaryTerm","doc_count":1}'
call 200 "$ADMIN" DELETE "/v1/glossaryTerms/$MARGIN_ID"
call 200 "$ALICE" GET '/v1/search/query?q=profit'
expect_body '"total":{"value":0,"relation":"eq"}'
call 200 "$ALICE" GET '/v1/search/query?q=profit&deleted=true'
expect_body '"name":"Margin"'
call 200 "$ALICE" GET '/v1/search/suggest?q=Mar'  # domains are not in "all"; Margin is deleted
expect_body '"options":[]'
call 200 "$ALICE" GET '/v1/search/suggest?q=Mar&index=domain'
expect_body '"options":[{"text":"Marketing","_index":"domain_search_index"'
call 200 "$ALICE" GET '/v1/search/aggregate?field=service.name&q=churn'
expect_body '{"aggregations":{"service.name":{"buckets":[{"key":"mlflow_prod","doc_count":1}]}}}'
call 200 "$ALICE" GET '/v1/search/query?q=%22churn%20%2B%26%5B%5D%20-'
call 400 "$ALICE" GET '/v1/search/query?q=churn&size=10001'
expect_body '"errorType":"BAD_REQUEST"'
call 401 - GET '/v1/search/query?q=churn'

step "404 unknown path, 405 with Allow, 204 for a hard delete"
call 404 "$ALICE" GET /v1/nothing
call 405 "$ALICE" DELETE /v1/glossaries
grep -qi '^Allow: ' "$TMP/headers" || fail "405 without an Allow header"
post 201 "$ADMIN" /v1/glossaryTerms '{"glossary":"Business","name":"Scratch","description":"x"}'
call 204 "$ADMIN" DELETE "/v1/glossaryTerms/$(entity_id)?hardDelete=true"
[[ ! -s $TMP/body ]] || fail "204 with a body"
grep -qi '^Content-Length:' "$TMP/headers" && fail "204 with a Content-Length"

step "bodies: over 8 MiB is 400 (401 first without a token); 1.5 MiB (Expect: 100-continue) is served"
head -c $((8 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$TMP/huge"
call 400 "$ADMIN" POST /v1/glossaries -H 'Content-Type: application/json' \
  --data-binary "@$TMP/huge"
expect_body 'Request body is larger than 8388608 bytes'
call 401 - POST /v1/glossaries -H 'Content-Type: application/json' --data-binary "@$TMP/huge"
expect_body '"errorType":"UNAUTHORIZED"'
# Chunked, the length is not known before: the body is counted as it comes.
call 400 "$ADMIN" POST /v1/glossaries -H 'Content-Type: application/json' \
  -H 'Transfer-Encoding: chunked' --data-binary "@$TMP/huge"
expect_body 'Request body is larger than 8388608 bytes'
{
  printf '{"name":"Big","description":"'
  head -c $((1536 * 1024)) /dev/zero | tr '\0' 'd'
  printf '"}'
} >"$TMP/big"
call 201 "$ADMIN" POST /v1/glossaries -H 'Content-Type: application/json' \
  --data-binary "@$TMP/big"
expect_body '"name":"Big"'

step "keep-alive: two requests, one connection; also after a HEAD"
got=$(curl -sS -H "Authorization: Bearer $ALICE" -o /dev/null -o /dev/null \
  -w '%{http_code} %{num_connects}\n' "$BASE/v1/glossaries" "$BASE/v1/mlmodels/$MODEL_ID")
[[ $got == $'200 1\n200 0' ]] || fail "keep-alive: expected '200 1' then '200 0', got: $got"
# HEAD is GET without the body (RFC 9110 9.3.2): GET's status and Content-Length, no body, and
# the next answer on the connection is intact.
got=$(curl -sS -H "Authorization: Bearer $ALICE" -I -o "$TMP/head" -w '%{http_code} %{num_connects}\n' \
  "$BASE/v1/mlmodels/$MODEL_ID" --next -H "Authorization: Bearer $ALICE" -o "$TMP/body" \
  -w '%{http_code} %{num_connects}\n' "$BASE/v1/mlmodels/$MODEL_ID")
[[ $got == $'200 1\n200 0' ]] || fail "HEAD then GET: expected '200 1' then '200 0', got: $got"
expect_body '"name":"churn"'
head_length=$(grep -i '^content-length:' "$TMP/head" | tr -d '\r' | awk '{print $2}')
[[ $head_length == "$(wc -c <"$TMP/body")" ]] ||
  fail "HEAD's Content-Length $head_length is not the GET body's $(wc -c <"$TMP/body") bytes"
got=$(curl -sS -H "Authorization: Bearer $ALICE" -I -o /dev/null -w '%{http_code}' "$BASE/v1/nowhere")
[[ $got == 404 ]] || fail "HEAD of an unknown path: expected 404, got $got"

step "the operator's routes: /healthz for anyone, /metrics for admins only"
call 200 - GET /healthz
[[ $BODY == '{"status":"ok"}' ]] || fail "GET /healthz: $BODY"
got=$(curl -sS -I -o /dev/null -w '%{http_code}' "$BASE/healthz")
[[ $got == 200 ]] || fail "HEAD /healthz: expected 200, got $got"
call 405 - POST /healthz
expect_header Allow 'GET, HEAD'
expect_body 'Method POST not allowed; allowed: GET, HEAD'  # the Api's words
call 401 - GET /metrics
expect_body '"errorType":"UNAUTHORIZED"'
expect_header WWW-Authenticate Bearer  # the Api's own 401
call 401 not-a-jwt GET /metrics
# The token is read as the Api reads it: "Bearer" in any case.
got=$(curl -sS -o "$TMP/body" -w '%{http_code}' -H "Authorization: bEARER $ADMIN" "$BASE/metrics")
[[ $got == 200 ]] || fail "GET /metrics with 'bEARER': expected 200, got $got"
call 403 "$ALICE" GET /metrics
expect_body '"errorType":"FORBIDDEN"'
call 200 "$ADMIN" GET /metrics
expect_header Content-Type 'text/plain; version=0.0.4; charset=utf-8'
expect_body '# TYPE catalog_operations_total counter'
# Users alice and bob, the service, the model, the glossaries... were created: counted as such.
grep -Eq '^catalog_operations_total\{operation="create",outcome="ok"\} [1-9][0-9]*$' "$TMP/body" ||
  fail "the metrics count no successful create"
grep -Eq '^catalog_operations_total\{operation="create",outcome="conflict"\} [1-9][0-9]*$' "$TMP/body" ||
  fail "the metrics count no create refused as a conflict (bob, twice)"
# The search routes ran above: each its own operation.
for op in search suggest aggregate; do
  grep -Eq "^catalog_operations_total\\{operation=\"$op\",outcome=\"ok\"\\} [1-9][0-9]*\$" "$TMP/body" ||
    fail "the metrics count no successful $op"
done
grep -Eq '^catalog_http_requests_total\{status="401"\} [1-9][0-9]*$' "$TMP/body" ||
  fail "the metrics count no 401"
grep -Eq '^catalog_commit_seconds_count [1-9][0-9]*$' "$TMP/body" || fail "the metrics count no commit"
expect_body 'catalog_http_connections '
# Response bytes count what was sent: the /metrics body above, and nothing for HEAD requests.
bytes_of() { sed -n 's/^catalog_http_response_bytes_total \([0-9]*\)$/\1/p' "$1"; }
first_bytes=$(bytes_of "$TMP/body")
first_size=$(wc -c <"$TMP/body")
for _ in 1 2 3; do curl -sS -I -o /dev/null "$BASE/healthz"; done
call 200 "$ADMIN" GET /metrics
[[ $(($(bytes_of "$TMP/body") - first_bytes)) -eq $first_size ]] ||
  fail "response bytes grew by $(($(bytes_of "$TMP/body") - first_bytes)), not the $first_size of the /metrics body"

step "the access log: one line per request, time peer method target status bytes milliseconds"
# A raw byte is logged \xHH, a target's own %XX as sent, a backslash as \x5C: no two alike.
for target in $'/v1/raw\xff' '/v1/pct%FF' '/v1/back\slash'; do
  exec 3<>"/dev/tcp/127.0.0.1/$PORT"
  printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$target" >&3
  cat <&3 >/dev/null
  exec 3<&-
done
# A client that resets its connection right after its request (SO_LINGER 0, by perl-base) is
# logged with its address too, which the server has from accept, not from the reset socket.
perl -MSocket -MIO::Socket::INET -e '
  for my $i (1 .. 50) {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ARGV[0]", Proto => "tcp") or die "$!";
    print $s "GET /healthz?reset=$i HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    setsockopt($s, SOL_SOCKET, SO_LINGER, pack("ii", 1, 0)) or die "$!";
    close $s;
  }' "$PORT"
for _ in $(seq 50); do
  [[ $(grep -c 'GET /healthz?reset=50 ' "$TMP/access.log") -eq 1 ]] && break
  sleep 0.1
done
grep -q ' GET /healthz?reset=' "$TMP/access.log" || fail "no request of a client that reset was logged"
! grep -q ' - GET /healthz?reset=' "$TMP/access.log" ||
  fail "a client that reset its connection is logged without its address"
call 200 - GET /healthz  # its line follows theirs
grep -qF ' GET /v1/raw\xFF 4' "$TMP/access.log" || fail "a raw byte is not logged as \\xFF"
grep -qF ' GET /v1/pct%FF 4' "$TMP/access.log" || fail "a target's %FF is not logged as sent"
grep -qF ' GET /v1/back\x5Cslash 4' "$TMP/access.log" || fail "a backslash is not logged as \\x5C"
# A request that never parsed (a malformed message) has "-" for its method and target.
# The line of a request is written once its answer is: the /metrics answer above is the last.
line_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z 127\.0\.0\.1:[0-9]+ ([A-Z]+|-) [^ ]+ [0-9]{3} [0-9]+ [0-9]+\.[0-9]{3}$'
bad=$(grep -Ecv "$line_re" "$TMP/access.log" || true)
[[ $bad -eq 0 ]] || fail "access log lines not in the format: $(grep -Ev "$line_re" "$TMP/access.log" | head -3)"
grep -Eq ' GET /v1/glossaries 401 [0-9]+ ' "$TMP/access.log" || fail "no 401 GET /v1/glossaries logged"
grep -Eq ' POST /v1/users 409 [0-9]+ ' "$TMP/access.log" || fail "no 409 POST /v1/users logged"
grep -Eq ' GET /healthz 200 15 ' "$TMP/access.log" || fail "no GET /healthz logged with its 15 bytes"
grep -Eq ' HEAD /healthz 200 ' "$TMP/access.log" || fail "no HEAD /healthz logged"

step "response bytes count what reached the client: an answer cut short counts as logged"
{
  printf '{"name":"Huge","description":"'
  head -c $((6 * 1024 * 1024)) /dev/zero | tr '\0' 'h'
  printf '"}'
} >"$TMP/huge_entity"
call 201 "$ADMIN" POST /v1/glossaries -H 'Content-Type: application/json' \
  --data-binary "@$TMP/huge_entity"
# Waits until the access log has a line with the fixed string $1, then prints its bytes.
logged_bytes() {
  for _ in $(seq 100); do
    grep -qF "$1" "$TMP/access.log" && break
    sleep 0.05
  done
  grep -F "$1" "$TMP/access.log" | tail -1 | awk '{print $(NF-1)}'
}
call 200 "$ADMIN" GET '/metrics?cut=before'
before_bytes=$(bytes_of "$TMP/body")
before_size=$(logged_bytes ' GET /metrics?cut=before 200 ')
# A client with a 4 KiB receive buffer reads 1,000 bytes of the 6 MiB answer and resets: the
# kernel's buffers hold at most about 4 MiB of it, so the write fails part way.
perl -MSocket -e '
  socket(my $s, PF_INET, SOCK_STREAM, 0) or die "$!";
  setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack("i", 4096)) or die "$!";
  connect($s, sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "$!";
  syswrite($s, "GET /v1/glossaries/name/Huge?cut=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n" .
               "Authorization: Bearer $ARGV[1]\r\n\r\n");
  my $got = 0;
  while ($got < 1000) { my $n = sysread($s, my $buf, 1000 - $got) or die "$!"; $got += $n; }
  sleep 1;
  setsockopt($s, SOL_SOCKET, SO_LINGER, pack("ii", 1, 0)) or die "$!";
  close $s;' "$PORT" "$ADMIN"
cut_bytes=$(logged_bytes ' GET /v1/glossaries/name/Huge?cut=1 200 ')
[[ -n $cut_bytes && $cut_bytes -lt $((6 * 1024 * 1024)) ]] ||
  fail "the answer cut short is logged with ${cut_bytes:-no} bytes, not fewer than its 6 MiB"
call 200 "$ADMIN" GET '/metrics?cut=after'
[[ $(($(bytes_of "$TMP/body") - before_bytes)) -eq $((before_size + cut_bytes)) ]] ||
  fail "response bytes grew by $(($(bytes_of "$TMP/body") - before_bytes)), not the $before_size of the first /metrics and the $cut_bytes logged of the answer cut short"

step "SIGHUP reopens the access log, moved away as logrotate does"
mv "$TMP/access.log" "$TMP/access.log.1"
call 200 - GET '/healthz?before=hup'  # still written to the file moved away
# A request's line is written once its answer is, which may come after curl has it.
for _ in $(seq 100); do
  grep -qF ' GET /healthz?before=hup 200 ' "$TMP/access.log.1" && break
  sleep 0.05
done
kill -HUP "$SERVER_PID"
for _ in $(seq 100); do
  grep -qF 'SIGHUP: reopened the access log' "$TMP/stderr" && break
  sleep 0.1
done
grep -qF "catalog-serve: SIGHUP: reopened the access log $TMP/access.log" "$TMP/stderr" ||
  fail "no word of the access log reopened on SIGHUP"
call 200 - GET '/healthz?after=hup'
for _ in $(seq 100); do
  grep -qF ' GET /healthz?after=hup 200 ' "$TMP/access.log" 2>/dev/null && break
  sleep 0.05
done
kill -0 "$SERVER_PID" || fail "catalog-serve ended on SIGHUP"
grep -qF ' GET /healthz?before=hup 200 ' "$TMP/access.log.1" ||
  fail "the line before SIGHUP is not in the file moved away"
grep -qF ' GET /healthz?after=hup 200 ' "$TMP/access.log" ||
  fail "the line after SIGHUP is not in the reopened file"
[[ $(wc -l <"$TMP/access.log") -eq 1 ]] || fail "the reopened file holds more than its one line"

step "SIGTERM during an upload, an idle connection open: the upload is answered, exit 0"
sed 's/"Big"/"Slow"/' "$TMP/big" >"$TMP/slow"
curl -sS -o "$TMP/slow_body" -w '%{http_code}' --limit-rate 512K -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/json' --data-binary "@$TMP/slow" "$BASE/v1/glossaries" \
  >"$TMP/slow_status" 2>&1 &
SLOW_PID=$!
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
sleep 1  # the upload takes 3 s: its headers are in, its body is still coming
kill -TERM "$SERVER_PID"
wait "$SLOW_PID" || fail "the upload in flight failed: $(cat "$TMP/slow_status")"
[[ $(cat "$TMP/slow_status") == 201 ]] ||
  fail "the upload in flight got $(cat "$TMP/slow_status"), not 201: $(head -c 300 "$TMP/slow_body")"
stopped 10 "SIGTERM during an upload"
exec 3<&-

echo "PASS: catalog-serve answered every request as expected and stopped cleanly"
