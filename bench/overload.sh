#!/usr/bin/env bash
# `make overload`: do cheap requests keep flowing while the world is hostile? On 20,000 cafes and
# 200,000 comments (release build, default settings and rate limits), measures /healthz and the
# cafe list alone, then again while ten anonymous clients send the most expensive /parse queries
# and log-in floods hit every spelling of both log-in routes (tools/overload_clients.py, each
# client from its own 127.0.x.y address). Passes when, under attack, /healthz p99 ≤ 25 ms and the
# list keeps ≥ 0.5× its own unloaded rate with p99 ≤ 3× its unloaded p99.
#
# The measuring client (wrk, 127.0.0.1) is RATE_LIMIT_EXEMPT: it stands for many ordinary
# clients; the attackers run under the default limits.
#
#   OVERLOAD_CAFES (20000)  OVERLOAD_COMMENTS (200000)  OVERLOAD_DURATION (10s)  OVERLOAD_CONNECTIONS (16)
set -euo pipefail
cd "$(dirname "$0")/.."

cafes=${OVERLOAD_CAFES:-20000}
comments=${OVERLOAD_COMMENTS:-200000}
duration=${OVERLOAD_DURATION:-10s}
conns=${OVERLOAD_CONNECTIONS:-16}
port=18280
. bench/lib.sh
bench_paths .build/overload $port
rm -rf "$work" "$data" && mkdir -p "$work"

step "starting cafe serve (release, embedded PostgreSQL, default limits; 127.0.0.1 exempt)"
# OVERLOAD_SERVER_ENV: more settings for the server, e.g. "HTTP_THREADS=4 HASH_THREADS=2", to compare.
# The page cache is off: the cheap request measured is the list as the database answers it (a cached
# list would answer from memory and say nothing about queries under attack).
# shellcheck disable=SC2086
start_serve $port "$work/serve.log" RATE_LIMIT_EXEMPT=127.0.0.1 PAGE_CACHE_BYTES=0 ${OVERLOAD_SERVER_ENV:-}

step "seeding $cafes cafes and $comments comments"
"$cafe" seed --cafes "$cafes" --comments "$comments"
psql "$conninfo" -Xq -c "VACUUM ANALYZE"
echo "the admin password" | "$cafe" admin create-user --username admin --password-stdin > /dev/null
busiest=$(psql "$conninfo" -XAtc "SELECT cafe_id FROM cafe_stats ORDER BY comment_sum DESC LIMIT 1")


step "unloaded: /healthz and the cafe list"
wrk -t2 -c"$conns" -d2s "$base/v1/cafes?limit=20" > /dev/null   # warm-up
read -r health_rps _ health_p99 _ <<< "$(wrk_run "$base/healthz")"
read -r list_rps _ list_p99 _ <<< "$(wrk_run "$base/v1/cafes?limit=20")"

step "under attack: ten anonymous expensive /parse clients and sixteen log-in flooders"
# At the lowest CPU priority: the attackers stand for other machines, so their own CPU time (a
# Python process spinning on instant refusals) must not be taken from the server they attack.
nice -n 19 python3 tools/overload_clients.py "$port" "$busiest" > "$work/attack.txt" 2>&1 &
attack_pid=$!
pids+=("$attack_pid")
sleep 3
read -r health_rps_a _ health_p99_a _ <<< "$(wrk_run "$base/healthz")"
read -r list_rps_a _ list_p99_a _ <<< "$(wrk_run "$base/v1/cafes?limit=20")"
kill -TERM "$attack_pid"; wait "$attack_pid" 2>/dev/null || true

ratio=$(echo "scale=2; $list_rps_a / $list_rps" | bc)
p99_ratio=$(echo "scale=2; $list_p99_a / $list_p99" | bc)
verdict() { if [ "$(echo "$1" | bc)" = 1 ]; then echo "✔"; else echo "✘"; fi; }
h=$(verdict "$health_p99_a <= 25"); r=$(verdict "$ratio >= 0.5"); p=$(verdict "$p99_ratio <= 3")

echo
echo "CafeReview overload — $(date -u +%Y-%m-%dT%H:%MZ) — $(nproc) cores — $cafes cafes, $comments comments, wrk -c$conns"
echo
echo "| | alone | under attack | goal |"
echo "|---|---|---|---|"
echo "| /healthz | $health_rps req/s, p99 $health_p99 ms | $health_rps_a req/s, p99 $health_p99_a ms | p99 ≤ 25 ms $h |"
echo "| cafe list (newest 20) | $list_rps req/s, p99 $list_p99 ms | $list_rps_a req/s, p99 $list_p99_a ms | rate ≥ 0.5× ($ratio) $r, p99 ≤ 3× ($p99_ratio) $p |"
echo
echo "What the attackers were answered (status: count):"
sed 's/^/  /' "$work/attack.txt"
[ "$h$r$p" = "✔✔✔" ]
