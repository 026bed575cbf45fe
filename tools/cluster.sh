#!/usr/bin/env bash
# `make cluster`: the service past one database server, on one machine — a primary and a streaming
# standby (Debian's PostgreSQL, `pg_basebackup -R`, through `cafe database`), two `cafe serve` that
# read from the standby (DATABASE_READ_URLS), two `cafe worker` on the primary, and nginx in front.
# Prints the URL; Ctrl-C stops everything. CLUSTER_DIR holds the data and the logs (kept between
# runs), CLUSTER_PORT the load balancer's port (the API processes take the two after it), CAFE_BIN the
# binary (the release build; ClusterLoginTests runs this script on its debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then default_dir=/var/lib/cafe/cluster; else default_dir=.cafe/cluster; fi
DIR=$(realpath -m "${CLUSTER_DIR:-$default_dir}")
PORT=${CLUSTER_PORT:-8080}
BIN=${CAFE_BIN:-$PWD/.build/release/cafe}
mkdir -p "$DIR"
chmod 755 "$DIR"   # the postgres account must reach the data directories inside
pids=()
cleanup() {
    trap - EXIT INT TERM
    echo "stopping the cluster…"
    kill "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM
start() { local name=$1; shift; "$@" >"$DIR/$name.log" 2>&1 & pids+=($!); }
# wait_for FILE PATTERN: until the log shows the line, or fail after 120 s.
wait_for() {
    for _ in $(seq 1 1200); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "timed out waiting for '$2' in $1:" >&2; tail -20 "$1" >&2; exit 1
}

echo "primary…";  CAFE_DATA_DIR=$DIR/primary start primary "$BIN" database
wait_for "$DIR/primary.log" '^host='
PRIMARY=$(grep -m1 '^host=' "$DIR/primary.log")
echo "standby…";  CAFE_DATA_DIR=$DIR/standby start standby "$BIN" database --standby-of "$PRIMARY"
wait_for "$DIR/standby.log" '^host='
STANDBY=$(grep -m1 '^host=' "$DIR/standby.log")

export DATABASE_URL=$PRIMARY DATABASE_READ_URLS=$STANDBY
# The load balancer is the only trusted proxy: its X-Forwarded-For names each client, so rate limits
# and log-in hold-offs count clients, not the balancer.
export TRUSTED_PROXIES=127.0.0.1
echo "API processes and workers…"
start api1 "$BIN" serve --port $((PORT + 1)) --seed-demo
wait_for "$DIR/api1.log" '"msg":"serving"'
start api2 "$BIN" serve --port $((PORT + 2)) --no-migrate
start worker1 "$BIN" worker
start worker2 "$BIN" worker
wait_for "$DIR/api2.log" '"msg":"serving"'

cat >"$DIR/nginx.conf" <<CONF
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/lb-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $DIR/lb-body;
    proxy_temp_path $DIR/lb-proxy;
    upstream cafe {
        server 127.0.0.1:$((PORT + 1)) max_fails=1 fail_timeout=2s;
        server 127.0.0.1:$((PORT + 2)) max_fails=1 fail_timeout=2s;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$PORT;
        client_max_body_size 6m;
        location / {
            proxy_pass http://cafe;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_set_header Forwarded "";
            proxy_next_upstream error timeout;
        }
    }
}
CONF
echo "load balancer…"
start lb nginx -c "$DIR/nginx.conf" -p "$DIR" -g 'daemon off;'
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "the load balancer does not answer; see $DIR/lb-error.log" >&2; exit 1; }

cat <<DONE

  CafeReview cluster: http://127.0.0.1:$PORT/
    primary  $PRIMARY
    standby  $STANDBY   (public reads; see cafe_db_reads_total on each API's /metrics)
    api      http://127.0.0.1:$((PORT + 1))/  http://127.0.0.1:$((PORT + 2))/   workers: 2
    logs     $DIR/*.log
$(grep -m2 -E 'username: |password: ' "$DIR/api1.log" | sed 's/^ */    demo admin /' || true)
  Ctrl-C stops it.
DONE
wait -n "${pids[@]}"
echo "a process of the cluster exited; see $DIR/*.log" >&2
exit 1
