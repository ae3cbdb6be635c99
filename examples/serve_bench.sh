#!/usr/bin/env bash
# catalog-serve's GET throughput against nginx serving the same bytes, in one run on one machine
# (BENCHMARKS.md, "catalog-serve against nginx"). Not a test: figures only.
#
#   examples/serve_bench.sh <catalog-serve> [seconds per run, default 10]
#
# Needs wrk, nginx, curl and openssl. catalog-serve (build it Release) serves an LMDB store in a
# temporary directory holding one ML model; the body of GET /v1/mlmodels/name/<fqn> is saved and
# nginx serves that file. wrk -t2 -c16 then measures, alternating the two servers:
#   plain HTTP, no access log;  plain HTTP with the access log;  HTTPS (TLS) with the access log.
# Each server logs to a file in the temporary directory when its log is on.
set -euo pipefail
SERVE=$1
SECONDS_PER_RUN=${2:-10}
for tool in wrk nginx curl openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install wrk nginx)"; exit 2; }
done
TMP=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
SECRET=$(openssl rand -hex 24)
printf '%s' "$SECRET" >"$TMP/secret"
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
header=$(printf '%s' '{"alg":"HS256","typ":"JWT"}' | b64url)
payload=$(printf '%s' "{\"email\":\"admin@example.com\",\"exp\":$(($(date +%s) + 86400))}" | b64url)
TOKEN="$header.$payload.$(printf '%s' "$header.$payload" |
  openssl dgst -sha256 -mac HMAC -macopt "key:$SECRET" -binary | b64url)"

start_serve() {  # start_serve <name> <flags...>: sets PORT
  "$SERVE" --port 0 --store "lmdb:$TMP/store" --admin admin --jwt-hs256-secret-file "$TMP/secret" \
    "${@:2}" >"$TMP/$1.out" 2>"$TMP/$1.err" &
  PIDS+=($!)
  SERVE_PID=$!
  PORT=
  for _ in $(seq 100); do
    PORT=$(sed -n '1s/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$TMP/$1.out")
    [[ -n $PORT ]] && return
    sleep 0.1
  done
  echo "catalog-serve did not start: $(cat "$TMP/$1.err")"
  exit 1
}
stop_serve() { kill "$SERVE_PID"; wait "$SERVE_PID" || true; }

start_serve setup
AUTH=(-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json')
curl -sf "${AUTH[@]}" -d '{"name":"mlflow_prod","serviceType":"Mlflow"}' \
  "http://127.0.0.1:$PORT/v1/services/mlmodelServices" >/dev/null
curl -sf "${AUTH[@]}" -d '{"name":"churn","service":"mlflow_prod","algorithm":"XGBoost","target":"churned","description":"Predicts which customers leave"}' \
  "http://127.0.0.1:$PORT/v1/mlmodels" >/dev/null
TARGET=/v1/mlmodels/name/mlflow_prod.churn
curl -sf "${AUTH[@]}" -o "$TMP/model.json" "http://127.0.0.1:$PORT$TARGET"
stop_serve
mkdir -p "$TMP/www/v1/mlmodels/name"
cp "$TMP/model.json" "$TMP/www$TARGET"
echo "body: $(wc -c <"$TMP/model.json") bytes; machine: $(nproc) cores, $(uname -r)"

NGINX_PORT=18480
NGINX_TLS_PORT=18443
cat >"$TMP/nginx.conf" <<CONF
worker_processes 2;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log;
events { worker_connections 1024; }
http {
  default_type application/json;
  access_log off;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $TMP/www;
    location /logged/ { alias $TMP/www/; access_log $TMP/nginx-access.log; }
  }
  server {
    listen 127.0.0.1:$NGINX_TLS_PORT ssl;
    ssl_certificate $TMP/cert.pem;
    ssl_certificate_key $TMP/key.pem;
    root $TMP/www;
    access_log $TMP/nginx-tls-access.log;
  }
}
CONF
nginx -c "$TMP/nginx.conf" -p "$TMP"
trap 'nginx -c "$TMP/nginx.conf" -p "$TMP" -s stop 2>/dev/null || true; cleanup' EXIT

rps() {  # rps <url> [wrk args]: requests per second
  wrk -t2 -c16 -d"${SECONDS_PER_RUN}s" "$@" | awk '/Requests\/sec/ {print $2}'
}
for mode in plain logged tls; do
  case $mode in
    plain) flags=(); scheme=http; nginx_url="http://127.0.0.1:$NGINX_PORT$TARGET" ;;
    logged) flags=(--access-log "$TMP/serve-access.log"); scheme=http
            nginx_url="http://127.0.0.1:$NGINX_PORT/logged$TARGET" ;;
    tls) flags=(--access-log "$TMP/serve-access.log" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem")
         scheme=https; nginx_url="https://127.0.0.1:$NGINX_TLS_PORT$TARGET" ;;
  esac
  for round in 1 2; do
    n=$(rps "$nginx_url")
    start_serve "$mode" "${flags[@]}"
    c=$(rps "$scheme://127.0.0.1:$PORT$TARGET" -H "Authorization: Bearer $TOKEN")
    stop_serve
    ratio=$(awk -v c="$c" -v n="$n" 'BEGIN { printf "%.2f", c / n }')
    echo "$mode round $round: nginx $n/s, catalog-serve $c/s, ratio $ratio"
  done
done
