# Shared by the catalog-serve tests (curl_test.sh, tls_test.sh, abuse_test.sh, unit_test.sh),
# sourced first.

# serve_test_setup TOOL...: skips the test (exit 77, ctest's skip) when a tool is missing; makes
# TMP, a temp directory removed at exit, and SERVER_PID, the server killed at exit when set.
serve_test_setup() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
  done
  TMP=$(mktemp -d)
  SERVER_PID=
  trap serve_test_cleanup EXIT
}
serve_test_cleanup() {
  if [[ -n ${SERVER_PID:-} ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}

# fail TEXT...: ends the test with TEXT and what the last exchange left in TMP: a response's
# headers and body, what came back over a raw connection, the server's stderr.
fail() {
  echo "FAIL: $*"
  [[ -f $TMP/headers ]] && { echo "--- response headers"; cat "$TMP/headers"; }
  [[ -f $TMP/body ]] && { echo "--- response body"; head -c 2000 "$TMP/body"; echo; }
  [[ -f $TMP/raw ]] && { echo "--- what came back"; head -c 2000 "$TMP/raw"; echo; }
  [[ -f $TMP/stderr ]] && { echo "--- server stderr"; cat "$TMP/stderr"; }
  exit 1
}

# wait_for_port: waits (up to 10 s) for the server started as SERVER_PID to print its first line,
# `listening on 127.0.0.1:<port>`, to $TMP/stdout, and sets PORT. Fails the test when the server
# exits first or never prints it. The file may not be there yet: the background shell that
# starts the server opens it, and on a busy machine that can come after the first look.
wait_for_port() {
  PORT=
  for _ in $(seq 100); do
    PORT=$(sed -n '1s/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$TMP/stdout" 2>/dev/null ||
      true)
    [[ -n $PORT ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || fail "catalog-serve exited before listening"
    sleep 0.1
  done
  fail "catalog-serve printed no 'listening on 127.0.0.1:<port>' line"
}

# stopped SECONDS WHAT: after a stop signal, waits up to SECONDS for the server started as
# SERVER_PID to end, and fails the test (naming WHAT) unless it ended in time with exit 0.
stopped() {
  local rc=0
  for _ in $(seq $(($1 * 10))); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$SERVER_PID" 2>/dev/null && fail "$2: catalog-serve still runs $1 s after it"
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=
  [[ $rc -eq 0 ]] || fail "$2: catalog-serve exited with status $rc"
}

# hs256_jwt SECRET CLAIMS: a compact JWT of the claims (JSON text), signed HS256 with SECRET.
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
hs256_jwt() {
  local header payload signature
  header=$(printf '%s' '{"alg":"HS256","typ":"JWT"}' | b64url)
  payload=$(printf '%s' "$2" | b64url)
  signature=$(printf '%s' "$header.$payload" |
    openssl dgst -sha256 -mac HMAC -macopt "key:$1" -binary | b64url)
  printf '%s.%s.%s' "$header" "$payload" "$signature"
}
