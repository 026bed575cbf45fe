#!/usr/bin/env bash
# `make failover-drill`: `make cluster` (tools/cluster.sh: three PostgreSQL nodes under Patroni in
# synchronous mode, two API processes, two workers, nginx) on a fresh directory, then
# tools/failover_drill.py against it: clients post comments and read pages through nginx while the
# primary node is killed (SIGKILL of its Patroni and its postmaster), a standby is promoted, and the
# old node comes back as a standby. FAILOVER_RUNS (default 3) runs in a row, each killing whichever
# node is primary then. Prints each run's figures; fails if a run loses an acknowledged write, leaves
# the aggregates inexact, answers a 5xx other than 503 with Retry-After, takes more than 30 s to take
# writes again, or the old node does not rejoin.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/cafe-drill.XXXXXX)
chmod 755 "$dir"
port=$(python3 -c 'import random, socket
for _ in range(100):
    base = random.randrange(20000, 40000, 100)
    try:
        for p in list(range(base, base + 3)) + list(range(base + 10, base + 12)) + list(range(base + 21, base + 24)) + list(range(base + 31, base + 34)):
            s = socket.socket(); s.bind(("127.0.0.1", p)); s.close()
        print(base); break
    except OSError:
        pass')
# The drill's clients stand for many people behind one address: no per-client limit applies to them.
RATE_LIMIT_EXEMPT=127.0.0.1 CLUSTER_DIR="$dir" CLUSTER_PORT="$port" tools/cluster.sh > "$dir/cluster.out" 2>&1 &
cluster=$!
trap 'status=$?; kill "$cluster" 2>/dev/null; wait "$cluster" 2>/dev/null || true; rm -rf "$dir"; exit $status' EXIT
for _ in $(seq 1 600); do
    grep -q "Ctrl-C stops it." "$dir/cluster.out" && break
    kill -0 "$cluster" 2>/dev/null || { cat "$dir/cluster.out"; exit 1; }
    sleep 0.2
done
grep -q "Ctrl-C stops it." "$dir/cluster.out" || { echo "the cluster did not start"; cat "$dir/cluster.out"; exit 1; }
database=$(grep -m1 '^    database ' "$dir/cluster.out" | sed 's/^    database //')
echo "==> failover drill: ${FAILOVER_RUNS:-3} runs against http://127.0.0.1:$port/ ($dir)"
python3 tools/failover_drill.py --port "$port" --rest-port $((port + 30)) --dir "$dir" --database "$database" --runs "${FAILOVER_RUNS:-3}"
