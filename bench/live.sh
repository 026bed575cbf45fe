#!/usr/bin/env bash
# The live part of `make bench`: one API process holding BENCH_LIVE_STREAMS (10,000) Server-Sent Events
# streams spread over 1,000 cafes and BENCH_LIVE_SOCKETS (1,000) Parse LiveQuery sockets, while
# BENCH_LIVE_RATE (100) comments a second are posted for BENCH_LIVE_SECONDS (20). Prints the delay from
# each post's 201 to its event at every watcher of its cafe (p50, p99), the request process's RSS with
# every watcher open (and its peak, which counts the moment they all opened),
# the feed's statements per change (from /metrics), and the uncached list's rate meanwhile against the
# same posting without watchers (wrk, 4 s each).
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${BENCH_LIVE_STREAMS:-10000}
sockets=${BENCH_LIVE_SOCKETS:-1000}
rate=${BENCH_LIVE_RATE:-100}
seconds=${BENCH_LIVE_SECONDS:-20}
watched_cafes=1000
port=18185
. bench/lib.sh
bench_paths .build/bench-live $port
rm -rf "$work" "$data" && mkdir -p "$work"
ulimit -n 65536 2> /dev/null || ulimit -n "$(ulimit -Hn)"

step "starting cafe serve with room for $((streams + sockets)) watchers"
start_serve $port "$work/serve.log" RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 PAGE_CACHE_BYTES=0 \
    HTTP_CONNECTION_LIMIT=16000 HTTP_CONNECTIONS_PER_ADDRESS=2000 LIVE_MAX_CONNECTIONS=16000 LIVE_MAX_PER_ADDRESS=2000 ${BENCH_LIVE_ENV:-}
request=$(request_process "${pids[-1]}")
step "seeding 20000 cafes and 200000 comments"
"$cafe" seed --cafes 20000 --comments 200000 > /dev/null
psql "$conninfo" -Xq -c "VACUUM ANALYZE"
token=$(sign_up "$base" bencher)
metric() { curl -sf "$base/metrics" | awk -v m="$1" '$1 == m { printf "%.0f", $2 }'; }
list_rate() { wrk -t2 -c16 -d4s "$base/v1/cafes?limit=20" | awk '/Requests\/sec/ { printf "%.0f", $2 }'; }

step "the uncached list while $rate comments a second are posted, no watchers"
python3 bench/cache.py post "$base" "$token" "$watched_cafes" "$rate" 8 > /dev/null &
poster=$!
sleep 2
alone=$(list_rate)
wait "$poster"

step "opening $streams streams and $sockets LiveQuery sockets, then posting $rate comments a second for $seconds s"
reads_before=$(metric cafe_live_feed_reads_total); changes_before=$(metric cafe_live_changes_total)
python3 bench/live.py watch "$base" "$token" --streams "$streams" --sockets "$sockets" --cafes "$watched_cafes" \
    --rate "$rate" --seconds "$seconds" > "$work/live.json" &
watcher=$!
pids+=("$watcher")
until [ "$(metric cafe_live_connections)" -ge $(( (streams + sockets) * 99 / 100 )) ] || ! kill -0 "$watcher" 2> /dev/null; do sleep 1; done
sleep 3
# Who used the cores while the list was measured beside the watchers: the service's request process and the
# load generator that holds the watchers (both share the machine with wrk and PostgreSQL).
server_ticks=$(cpu_ticks "$request"); generator_ticks=$(cpu_ticks "$watcher")
watched=$(list_rate)
server_cpu=$(( ($(cpu_ticks "$request") - server_ticks) * 100 / $(getconf CLK_TCK) / 4 ))
generator_cpu=$(( ($(cpu_ticks "$watcher") - generator_ticks) * 100 / $(getconf CLK_TCK) / 4 ))
# Resident memory while every watcher is open and events flow; the peak also counts the moment they all opened.
rss_open_mb=$(awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$request/status")
wait "$watcher"
reads=$(( $(metric cafe_live_feed_reads_total) - reads_before )); changes=$(( $(metric cafe_live_changes_total) - changes_before ))
rss_mb=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$request/status")

python3 - "$work/live.json" "$alone" "$watched" "$reads" "$changes" "$rss_mb" "$rss_open_mb" "$server_cpu" "$generator_cpu" <<'PY'
import json, sys
live = json.load(open(sys.argv[1]))
alone, watched, reads, changes, peak, rss, server_cpu, generator_cpu = (float(v) for v in sys.argv[2:])
def row(name, value, goal, meets):
    print(f"{name:<58} {value:<34} {goal:<22} {'true' if meets else 'false'}")
print()
print(f"live updates: {live['watchers']} watchers open ({live['failed']} failed: {live['reasons']}), {live['posts']} posts, "
      f"{live['seen']} of {live['expected']} deliveries seen")
row("delay from a post's 201 to its event, p50 / p99", f"{live['p50']:.1f} / {live['p99']:.1f} ms (max {live['max']:.0f})", "p99 <= 100 ms", live['p99'] <= 100)
row("request process RSS with every watcher open", f"{rss:.0f} MB (peak {peak:.0f} MB)", "<= 300 MB", rss <= 300)
row("feed statements per change (this process)", f"{reads / max(changes, 1):.3f} ({reads:.0f} reads, {changes:.0f} changes)", "<= 1", reads <= changes)
row("uncached list with watchers vs without", f"{watched:.0f} vs {alone:.0f} req/s: {watched / alone:.2f}x", ">= 0.9x", watched / alone >= 0.9)
print(f"  meanwhile: the request process {server_cpu:.0f}% of a core, the watchers' load generator {generator_cpu:.0f}%")
row("every delivery seen", f"{live['seen']} of {live['expected']}", "all", live['seen'] == live['expected'])
PY
