#!/usr/bin/env bash
# `bench/instructions.sh [OTHER_CAFE]`: the instructions the request process executes per answer, for
# each row of `make bench` that reads, counted by callgrind: this build, and another (an earlier commit's
# release binary) on the same seeded database when given. A count of instructions hardly drifts with
# the machine as time does (two runs of one build agreed within 0.6% on every row but the rare search,
# within 3%, where its CPU time per request moved by ±10% between rounds), so it shows changes of a few
# percent that `bench/sidebyside.sh` cannot tell from noise. It does not see what an instruction costs: system calls,
# context switches, cache misses and copies (`rep movs` and `rep stos` count once per byte here) are
# measured in time, by `make bench` and `bench/sidebyside.sh`.
#
# One keep-alive client (`wrk -c1`) asks each page for INSTR_SECONDS under callgrind, after a warm-up.
#
#   INSTR_CAFES (20000)  INSTR_COMMENTS (200000)  INSTR_SECONDS (10)
set -euo pipefail
cd "$(dirname "$0")/.."

other=${1:-}
cafes=${INSTR_CAFES:-20000}
comments=${INSTR_COMMENTS:-200000}
seconds=${INSTR_SECONDS:-10}
. bench/lib.sh
bench_paths .build/instructions 18390
rm -rf "$work" "$data" && mkdir -p "$work"
tools/ensure-packages valgrind wrk bc curl postgresql-client

step "seeding $cafes cafes and $comments comments (this build, embedded database)"
start_serve 18390 "$work/seed.log" RATE_LIMIT_READS=0
"$cafe" seed --cafes "$cafes" --comments "$comments"
psql "$conninfo" -Xq -c "VACUUM ANALYZE"
busiest=$(psql "$conninfo" -XAtc "SELECT cafe_id FROM cafe_stats ORDER BY comment_sum DESC LIMIT 1")

rows=("trivial JSON endpoint|/healthz|0"
      "list newest 20|/v1/cafes?limit=20|0"
      "search, rare 2-char keyword|/v1/cafes?q=%E8%95%8E%E9%BA%A6|0"
      "comments of a cafe (100)|/v1/cafes/$busiest/comments?limit=100|0"
      "cached list newest 20|/v1/cafes?limit=20|64")
# The rows each server counts (one without the page cache, one with it), as indexes into `rows`, in the
# order `measure` counts them.
uncached=(); cached=()
for i in "${!rows[@]}"; do
    if [ "${rows[$i]##*|}" = 0 ]; then uncached+=("$i"); else cached+=("$i"); fi
done
paths() { local i; for i in "$@"; do IFS='|' read -r _ path _ <<< "${rows[$i]}"; echo "$path"; done; }

# count BINARY NAME PORT CACHE_MB PATH...: instructions per request of each PATH, a line each in
# $work/NAME.counts.
# The binary is run as a copy without its debug information, which valgrind 3.19 cannot read from
# Swift 6's DWARF 5.
count() {
    local binary=$1 name=$2 port=$3 cache=$4 dir server request path out n ir dump
    shift 4
    dir=$PWD/$work/$name-$cache
    mkdir -p "$dir"
    cp "$binary" "$dir/cafe" && strip -g "$dir/cafe"
    env RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 PAGE_CACHE_BYTES=$((cache << 20)) DATABASE_URL="$conninfo" \
        valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/callgrind.%p" \
        "$dir/cafe" serve --port "$port" --no-worker > "$dir/serve.log" 2>&1 &
    server=$!
    pids+=("$server")
    for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.5; done
    request=$(pgrep -f -- "$dir/cafe serve --listen-fd" | head -1)
    [ -n "$request" ] || { cat "$dir/serve.log" >&2; return 1; }
    for path in "$@"; do
        wrk -t1 -c1 -d1s "http://127.0.0.1:$port$path" > /dev/null   # warm-up (and, cached, fills the page)
        callgrind_control -z "$request" > /dev/null
        out=$(wrk -t1 -c1 -d"${seconds}s" "http://127.0.0.1:$port$path")
        callgrind_control -d "$request" > /dev/null
        n=$(echo "$out" | awk '/requests in/ { print $1 }')
        dump=$(ls -t "$dir"/callgrind."$request"* | head -1)
        ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")
        echo $(( ir / n )) >> "$work/$name.counts"
        echo "$path: $n requests, $ir instructions" >> "$work/$name.requests"
    done
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
}

# measure BINARY NAME PORT: $work/NAME.counts, a count per row, uncached rows first.
measure() {
    local binary=$1 name=$2 port=$3 list
    mapfile -t list < <(paths "${uncached[@]}")
    count "$binary" "$name" "$port" 0 "${list[@]}"
    mapfile -t list < <(paths "${cached[@]}")
    count "$binary" "$name" "$((port + 1))" 64 "${list[@]}"
}

step "counting this build ($cafe) under callgrind, ${seconds}s per page"
measure "$cafe" this 18391
mapfile -t this < "$work/this.counts"
if [ -n "$other" ]; then
    step "counting $other under callgrind, ${seconds}s per page"
    measure "$other" other 18393
    mapfile -t that < "$work/other.counts"
fi

printf '\n%-32s %14s' "instructions per request" "this build"
[ -n "$other" ] && printf ' %14s %8s' "other" "change"
printf '\n'
j=0
for i in "${uncached[@]}" "${cached[@]}"; do
    IFS='|' read -r name _ _ <<< "${rows[$i]}"
    printf '%-32s %14s' "$name" "${this[$j]}"
    [ -n "$other" ] && printf ' %14s %7.1f%%' "${that[$j]}" "$(echo "scale=4; (${this[$j]} - ${that[$j]}) * 100 / ${that[$j]}" | bc)"
    printf '\n'
    j=$((j + 1))
done
