# Shared by the bench scripts (sourced): progress lines, clean-up of what a script started, wrk's
# latencies in milliseconds, and starting `cafe serve` on the script's own embedded database.

# bench_sizes: the dataset and the measuring of the scripts that compare with pgbench (bench/run.sh,
# bench/reviews.sh): BENCH_CAFES, BENCH_COMMENTS, and per side BENCH_ROUNDS rounds of BENCH_DURATION with
# BENCH_CONNECTIONS, as $cafes, $comments, $rounds, $duration and $conns.
bench_sizes() {
    cafes=${BENCH_CAFES:-200000}
    comments=${BENCH_COMMENTS:-2000000}
    duration=${BENCH_DURATION:-4s}
    rounds=${BENCH_ROUNDS:-3}
    conns=${BENCH_CONNECTIONS:-64}
}

# bench_paths WORK PORT: the script's working directory (its embedded cluster in WORK/pgdata) and
# the server's address, as $work, $data, $cafe, $conninfo and $base. BENCH_CAFE names another build
# of `cafe` to measure (an earlier commit's, for a side-by-side run; with MIGRATIONS_DIR its migrations).
bench_paths() {
    work=$1
    data=$(bench_data_dir "$work" pgdata)
    cafe=${BENCH_CAFE:-.build/release/cafe}
    export LOG_LEVEL=warning CAFE_DATA_DIR=$data
    conninfo="host=$data user=cafe dbname=cafe"
    base=http://127.0.0.1:$2
}

# bench_data_dir WORK NAME: where an embedded cluster of the script goes: WORK/NAME in the checkout, or,
# as root in a checkout the postgres account cannot enter (a clone under /root), beside the service's own
# (`cafe serve` does the same): /var/lib/cafe/bench-<hash of the checkout's path>/NAME.
bench_data_dir() {
    if [ "$(id -u)" = 0 ] && ! setpriv --reuid=postgres --regid=postgres --init-groups -- test -x "$PWD" 2>/dev/null; then
        local dir=/var/lib/cafe/bench-$(printf %s "$PWD" | sha256sum | cut -c1-12)
        mkdir -p "$dir" && chmod 755 /var/lib/cafe "$dir"
        echo "$dir/$2"
    else
        echo "$PWD/$1/$2"
    fi
}

step() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

# Background processes to stop on exit: `pids+=("$!")` after starting one.
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    if declare -F cleanup_more > /dev/null; then cleanup_more; fi
    wait 2>/dev/null || true
}
trap cleanup EXIT

# A wrk latency ("812.00us", "3.21ms", "1.02s") in milliseconds.
to_ms() { awk '{ v=$1; if (v ~ /us$/) { sub(/us$/, "", v); v/=1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v*=1000 }; printf "%.2f", v }'; }

# The request process (`cafe serve --listen-fd 3`) under the supervisor SUPERVISOR_PID.
request_process() { pgrep -P "$1" -f -- '--listen-fd' | head -1; }

# CPU time (user + system, all threads, in clock ticks) PID has used so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Context switches (voluntary and not, every thread) PID's threads have made so far: a thread that waits
# for PostgreSQL or for work is switched out, and on a virtual machine a switch costs what thousands of
# instructions do (docs/performance.md, "How it is measured").
context_switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'; }

# wrk_run TARGET [script] -> "rps p50 p99 cpu switches" with $conns connections for $duration. cpu is the
# microseconds of CPU the process $cpu_pid (when set) spent per request answered, from /proc, and
# switches its threads' context switches per request.
wrk_run() {
    local out before=0 after=0 switched=0 cpu=- switches=-
    [ -n "${cpu_pid:-}" ] && before=$(cpu_ticks "$cpu_pid") && switched=$(context_switches "$cpu_pid")
    out=$(wrk -t2 -c"$conns" -d"$duration" --latency ${2:+-s "$2"} "$1")
    if [ -n "${cpu_pid:-}" ]; then
        after=$(cpu_ticks "$cpu_pid")
        switched=$(( $(context_switches "$cpu_pid") - switched ))
        cpu=$(echo "$out" | awk -v t=$(( after - before )) -v hz="$(getconf CLK_TCK)" '/requests in/ { printf "%.1f", t / hz * 1e6 / $1 }')
        switches=$(echo "$out" | awk -v s=$switched '/requests in/ { printf "%.2f", s / $1 }')
    fi
    echo "$(echo "$out" | awk '/Requests\/sec/ { printf "%.0f", $2 }') $(echo "$out" | awk '$1 == "50%" { print $2 }' | to_ms) $(echo "$out" | awk '$1 == "99%" { print $2 }' | to_ms) $cpu $switches"
}

# start_serve PORT LOG [VAR=value …]: $cafe serve (see bench_paths) on $CAFE_DATA_DIR, without the worker,
# with the given environment; returns once /readyz answers (or prints the log and fails).
start_serve() {
    local port=$1 log=$2
    shift 2
    env "$@" "$cafe" serve --port "$port" --no-worker > "$log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && return 0; sleep 0.5; done
    cat "$log"
    return 1
}

# serve_seeded PORT: a fresh $work and cluster, `cafe serve` on PORT measuring the service alone (no rate
# limits, no page cache; its request process as $cpu_pid), seeded with $cafes cafes and $comments comments
# in $seed_seconds.
serve_seeded() {
    rm -rf "$work" "$data" && mkdir -p "$work"
    step "starting cafe serve (release, embedded PostgreSQL)"
    start_serve "$1" "$work/serve.log" RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 PAGE_CACHE_BYTES=0
    cpu_pid=$(request_process "${pids[-1]}")
    step "seeding $cafes cafes and $comments comments"
    local started
    started=$(date +%s.%N)
    "$cafe" seed --cafes "$cafes" --comments "$comments" > /dev/null
    seed_seconds=$(printf '%.0f' "$(echo "$(date +%s.%N) - $started" | bc)")
}

# sign_up BASE USERNAME: a new account's session token (the password is the bench's own).
sign_up() {
    curl -sf -X POST "$1/v1/users" -H 'Content-Type: application/json' \
        -d "{\"username\":\"$2\",\"password\":\"bench password\"}" | sed -E 's/.*"sessionToken":"([^"]+)".*/\1/'
}

# write_post_lua FILE TOKEN CAFES: a wrk script posting a comment as TOKEN to a random one of CAFES cafes.
write_post_lua() {
    cat > "$1" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $2"
wrk.body = '{"detail":"ベンチマークの投稿","star":2}'
request = function()
  return wrk.format(nil, "/v1/cafes/" .. math.random(1, $3) .. "/comments")
end
LUA
}

# pgbench_run SCRIPT -> its rate (transactions a second) with $conns clients for $duration.
pgbench_run() {
    pgbench -n -M prepared -c"$conns" -j2 -T"${duration%s}" -f "$1" "$conninfo" 2>/dev/null | awk '/^tps/ { printf "%.0f", $3; exit }'
}
ratio() { printf '%.3f' "$(echo "scale=6; $1 / $2" | bc)"; }
ge() { [ "$(echo "$1 >= $2" | bc)" = 1 ] && echo true || echo false; }
le() { [ "$(echo "$1 <= $2" | bc)" = 1 ] && echo true || echo false; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one_client URL [SECONDS] -> p99 in ms of one client reading URL back to back for SECONDS (default
# $duration); further wrk arguments (headers) after SECONDS.
one_client() {
    local url=$1 seconds=${2:-${duration%s}}
    shift $(( $# > 1 ? 2 : 1 ))
    wrk -t1 -c1 -d"${seconds}s" --latency "$@" "$url" | awk '$1 == "99%" { print $2 }' | to_ms
}

# paired_sql SQL_FILE TARGET [script] -> "pgbench service ratio": medians of $rounds alternating rounds of
# pgbench running SQL_FILE and wrk reading TARGET, each with $conns connections.
paired_sql() {
    local i ref api refs=() apis=() ratios=()
    for i in $(seq 1 "$rounds"); do
        ref=$(pgbench_run "$1"); api=$(wrk_run "$2" "${3:-}" | cut -d' ' -f1)
        refs+=("$ref"); apis+=("$api"); ratios+=("$(ratio "$api" "$ref")")
    done
    echo "$(median "${refs[@]}") $(median "${apis[@]}") $(median "${ratios[@]}")"
}
