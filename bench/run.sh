#!/usr/bin/env bash
# `make bench`: measures the service against references taken in the same run on the same data,
# and prints one table (also .build/bench/latest.json). Every figure is a ratio because this
# machine is shared: absolute numbers drift from run to run, ratios much less.
#
#   BENCH_CAFES (200000)  BENCH_COMMENTS (2000000)  BENCH_CONNECTIONS (64)
#   BENCH_ROUNDS (3) rounds of BENCH_DURATION (4s) per side: the service and its reference alternate, and
#   a row's ratio is the median of its rounds' ratios (a reference measured minutes apart moved by half here)
#   BENCH_REFLECT (100: comments timed from the worker's pass to the cached page)
set -euo pipefail
cd "$(dirname "$0")/.."

port=18180
cached_port=18181
nginx_port=18190
reflect=${BENCH_REFLECT:-100}
. bench/lib.sh
bench_sizes
bench_paths .build/bench $port
cleanup_more() { [ -f "$work/nginx/nginx.pid" ] && nginx -c "$PWD/$work/nginx/nginx.conf" -s stop 2>/dev/null || true; }

rm -rf "$work" "$data" && mkdir -p "$work/nginx/html"

step "starting cafe serve (release, embedded PostgreSQL)"
# wrk posts from one address as fast as it can: per-address rate limits off for the measurement.
# This server has no page cache: its rows measure the work itself (the cached rows use a second one).
start_serve $port "$work/serve.log" RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 PAGE_CACHE_BYTES=0
serve_pid=${pids[-1]}
# Its request process: the one whose CPU per request each row reports.
cpu_pid=$(request_process "$serve_pid")

step "seeding $cafes cafes and $comments comments"
seed_started=$(date +%s.%N)
"$cafe" seed --cafes "$cafes" --comments "$comments"
seed_seconds=$(printf '%.1f' "$(echo "$(date +%s.%N) - $seed_started" | bc)")
psql "$conninfo" -Xq -c "VACUUM ANALYZE"

token=$(sign_up "$base" bencher)
busiest=$(psql "$conninfo" -XAtc "SELECT cafe_id FROM cafe_stats ORDER BY comment_sum DESC LIMIT 1")

# --- measuring helpers -------------------------------------------------------------------------
rows=()
# row NAME UNIT VALUE REFERENCE GOAL_TEXT MEETS ["CPU SWITCHES": the request process's CPU µs and context
# switches per request]
row() { rows+=("$1|$2|$3|$4|$5|$6|${7:--}"); }

# paired "REFERENCE COMMAND" TARGET [wrk script] -> "reference rps p50 p99 cpu ratio switches": $rounds rounds of
# the reference (a command and its arguments, printing its rate) and wrk against TARGET, alternating which goes first;
# each a median over the rounds, the ratio the median of the rounds' own ratios.
paired() {
    local reference=$1 target=$2 script=${3:-} i ref api rps p50 p99 cpu sw refs=() rpss=() p50s=() p99s=() cpus=() sws=() ratios=()
    for i in $(seq 1 "$rounds"); do
        if (( i % 2 )); then
            ref=$($reference); api=$(wrk_run "$target" $script)
        else
            api=$(wrk_run "$target" $script); ref=$($reference)
        fi
        read -r rps p50 p99 cpu sw <<< "$api"
        refs+=("$ref"); rpss+=("$rps"); p50s+=("$p50"); p99s+=("$p99"); cpus+=("$cpu"); sws+=("$sw"); ratios+=("$(ratio "$rps" "$ref")")
    done
    echo "$(median "${refs[@]}") $(median "${rpss[@]}") $(median "${p50s[@]}") $(median "${p99s[@]}") $(median "${cpus[@]}") $(median "${ratios[@]}") $(median "${sws[@]}")"
}

# --- 1. trivial JSON endpoint vs nginx -----------------------------------------------------------
step "HTTP: /healthz vs nginx serving the same bytes"
curl -s "$base/healthz" > "$work/nginx/html/healthz"
cat > "$work/nginx/nginx.conf" <<NGINX
worker_processes 2;
pid $PWD/$work/nginx/nginx.pid;
error_log $PWD/$work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  default_type application/json;
  keepalive_requests 1000000;
  gzip_static on;   # a file's .gz beside it, sent as it is to a client that takes gzip
  server { listen 127.0.0.1:$nginx_port; root $PWD/$work/nginx/html; }
}
NGINX
nginx -c "$PWD/$work/nginx/nginx.conf"
nginx_rate() { cpu_pid= wrk_run "http://127.0.0.1:$nginx_port/$1" ${2:-} | cut -d' ' -f1; }
read -r ng_rps api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "nginx_rate healthz" "$base/healthz")"
row "HTTP: trivial JSON endpoint" "req/s" "$api_rps" "$ng_rps (nginx)" "ratio $r, goal >= 0.95" "$(ge "$r" 0.95)" "$api_cpu $api_sw"

# --- 2. list newest 20 ---------------------------------------------------------------------------
step "list newest 20 vs the same SQL in pgbench"
cat > "$work/newest.sql" <<'SQL'
SELECT c.id, c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, coalesce(s.comment_sum, 0), coalesce(s.comment_amount, 0), c.created_at, c.updated_at,
       s.stars_1, s.stars_2, s.stars_3, coalesce(s.rating_score_0, -1)::float8::text,
       ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text,
       cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())::int,
       cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())
FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id ORDER BY s.created_at DESC, s.cafe_id DESC LIMIT 21;
SQL
read -r pg api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "pgbench_run $work/newest.sql" "$base/v1/cafes?limit=20")"
row "list newest 20" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$pg (pgbench)" "ratio $r, goal >= 0.6" "$(ge "$r" 0.6)" "$api_cpu $api_sw"
plain_cpu=$api_cpu
# The same page asked for gzipped: what compressing an uncached page costs, in the request process's CPU.
read -r pg api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "pgbench_run $work/newest.sql" "$base/v1/cafes?limit=20" bench/gzip.lua)"
gzip_cost=$(printf '%.1f' "$(echo "$api_cpu - $plain_cpu" | bc)")
# No goal of its own: it says what compressing costs an uncached page (the cached row below has the goal).
row "list newest 20, gzip" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms; compressing: +$gzip_cost µs a page)" "$api_rps" "$pg (pgbench)" "ratio $r, what gzip costs" "true" "$api_cpu $api_sw"

# --- 3. rare 2-character Japanese keyword --------------------------------------------------------
step "search for a rare 2-character keyword (蕎麦) vs the same SQL, and vs ILIKE"
cat > "$work/search.sql" <<'SQL'
SELECT c.id, c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, coalesce(s.comment_sum, 0), coalesce(s.comment_amount, 0), c.created_at, c.updated_at,
       ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text,
       cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())::int,
       cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())
FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id
WHERE s.cafe_id IN (SELECT id FROM cafes WHERE search_grams @> ARRAY['蕎麦'] AND search_text LIKE '%蕎麦%')
ORDER BY s.created_at DESC, s.cafe_id DESC LIMIT 21;
SQL
cat > "$work/ilike.sql" <<'SQL'
SELECT id FROM cafes WHERE name ILIKE '%蕎麦%' OR catch_copy ILIKE '%蕎麦%' OR introduction ILIKE '%蕎麦%' ORDER BY created_at DESC, id DESC LIMIT 21;
SQL
ilike=$(pgbench -n -M prepared -c2 -j2 -T"${duration%s}" -f "$work/ilike.sql" "$conninfo" 2>/dev/null | awk '/^tps/ { printf "%.2f", $3; exit }')
read -r pg api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "pgbench_run $work/search.sql" "$base/v1/cafes?q=%E8%95%8E%E9%BA%A6")"
row "search, rare 2-char keyword" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$pg (pgbench)" "ratio $r, goal >= 0.6" "$(ge "$r" 0.6)" "$api_cpu $api_sw"
r=$(ratio "$api_rps" "$ilike"); row "search vs plain ILIKE" "req/s" "$api_rps" "$ilike (ILIKE, 2 clients)" "ratio $r, goal >= 50" "$(ge "$r" 50)" "$api_cpu $api_sw"

# --- 4. comments of a cafe -----------------------------------------------------------------------
step "comments of the busiest cafe (100) vs the same SQL"
cat > "$work/comments.sql" <<SQL
SELECT m.id, m.cafe_id, m.user_id, u.username, m.detail, m.star, m.image_id, m.created_at, m.updated_at, m.helpful_count,
       m.reply_text, m.reply_created_at, m.reply_updated_at
FROM comments m JOIN users u ON u.id = m.user_id WHERE m.cafe_id = $busiest ORDER BY m.created_at DESC, m.id DESC LIMIT 101;
SQL
read -r pg api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "pgbench_run $work/comments.sql" "$base/v1/cafes/$busiest/comments?limit=100")"
row "comments of a cafe (100)" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$pg (pgbench)" "ratio $r, goal >= 0.6" "$(ge "$r" 0.6)" "$api_cpu $api_sw"

# --- 5. post a comment ---------------------------------------------------------------------------
step "post a comment (logged in) vs the same INSERT (comment + outbox trigger)"
write_post_lua "$work/post.lua" "$token" "$cafes"
user_id=$(psql "$conninfo" -XAtc "SELECT id FROM users WHERE username = 'bencher'")
cat > "$work/post.sql" <<SQL
\set cafe random(1, $cafes)
INSERT INTO comments (cafe_id, user_id, detail, star) VALUES (:cafe, $user_id, 'ベンチマークの投稿', 2) RETURNING id, created_at;
SQL
read -r pg api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(paired "pgbench_run $work/post.sql" "$base/v1/cafes/1/comments" "$work/post.lua")"
row "post a comment" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$pg (pgbench)" "ratio $r, goal >= 1.0" "$(ge "$r" 1.0)" "$api_cpu $api_sw"
rss_kb=$(awk '/VmHWM/ { print $2 }' "/proc/$cpu_pid/status")

# --- 6. full recompute ---------------------------------------------------------------------------
step "full aggregate recompute: reconcile vs the single GROUP BY UPDATE"
"$cafe" worker --once > /dev/null      # drain what the post scenario enqueued
reference=$(psql "$conninfo" -Xq <<'SQL' | awk '/^Time:/ { printf "%.3f", $2 / 1000 }'
\timing on
UPDATE cafe_stats s SET comment_sum = a.n, comment_amount = a.total, stars_1 = a.n1, stars_2 = a.n2, stars_3 = a.n3
FROM (SELECT cafe_id, count(*)::int AS n, sum(star)::int AS total, count(*) FILTER (WHERE star = 1)::int AS n1,
             count(*) FILTER (WHERE star = 2)::int AS n2, count(*) FILTER (WHERE star = 3)::int AS n3
      FROM comments GROUP BY cafe_id) a WHERE s.cafe_id = a.cafe_id;
SQL
)
started=$(date +%s.%N)
"$cafe" worker --reconcile > /dev/null
reconcile=$(printf '%.3f' "$(echo "$(date +%s.%N) - $started" | bc)")
r=$(ratio "$reconcile" "$reference"); row "full aggregate recompute (reconcile)" "s" "$reconcile" "$reference (single UPDATE)" "ratio $r, goal <= 1.3" "$(le "$r" 1.3)"

# --- 7. incremental pass -------------------------------------------------------------------------
step "incremental pass after 1,000 comments on 1,000 cafes, in a running worker (median of 3)"
# Timed as production runs it: a worker that is already up (a fresh `cafe worker --once` also pays
# for its connections and catalog caches). Its first pass (anything left over) warms it up; each
# round then commits 1,000 comments in one statement and waits for the pass that drained them.
"$cafe" worker --interval 0.2 > "$work/worker.log" 2>&1 &
pids+=("$!")
passes=()
for round in 0 1 2 3; do
    before=$(psql "$conninfo" -XAtc "SELECT coalesce(max(id), 0) FROM job_runs WHERE kind = 'pass'")
    psql "$conninfo" -Xqc "INSERT INTO comments (cafe_id, user_id, detail, star) SELECT id, $user_id, 'bench', 3 FROM cafes ORDER BY random() LIMIT 1000"
    for _ in $(seq 1 100); do
        ms=$(psql "$conninfo" -XAtc "SELECT round(extract(epoch FROM finished_at - started_at) * 1000) FROM job_runs WHERE kind = 'pass' AND id > $before AND outbox_rows >= 1000 AND error IS NULL ORDER BY id LIMIT 1")
        [ -n "$ms" ] && break
        sleep 0.1
    done
    [ "$round" = 0 ] || passes+=("${ms:?the running worker recorded no pass}")
done
pass_ms=$(printf '%s\n' "${passes[@]}" | sort -n | sed -n 2p)
row "incremental pass, 1,000 dirty cafes (a running worker, median of 3: ${passes[*]})" "ms" "$pass_ms" "-" "goal <= 100" "$(le "$pass_ms" 100)"

# --- 8. the page cache under writes --------------------------------------------------------------
step "cached list vs nginx serving the same bytes, while 50 comments a second are posted"
# A second request process on the same database with the page cache on (the default); the worker
# started for the incremental pass keeps running.
start_serve $cached_port "$work/serve-cached.log" DATABASE_URL="$conninfo" RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0
cached=http://127.0.0.1:$cached_port
cached_cpu_pid=$(request_process "${pids[-1]}")
curl -sf "$cached/v1/cafes?limit=20" > "$work/nginx/html/list.json"
python3 bench/cache.py post "$cached" "$token" "$cafes" 50 $(( 2 * rounds * ${duration%s} + 4 )) > "$work/posted" &
poster=$!
sleep 1
read -r ng_rps api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(cpu_pid=$cached_cpu_pid paired "nginx_rate list.json" "$cached/v1/cafes?limit=20")"
wait "$poster"
row "cached list newest 20, 50 posts/s" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$ng_rps (nginx)" "ratio $r, goal >= 0.8" "$(ge "$r" 0.8)" "$api_cpu $api_sw"

step "cached list gzipped vs nginx serving the same gzip bytes (gzip_static)"
curl -sf -H 'Accept-Encoding: gzip' "$cached/v1/cafes?limit=20" > "$work/nginx/html/list.json.gz"
read -r ng_rps api_rps api_p50 api_p99 api_cpu r api_sw <<< "$(cpu_pid=$cached_cpu_pid paired "nginx_rate list.json bench/gzip.lua" "$cached/v1/cafes?limit=20" bench/gzip.lua)"
row "cached list newest 20, gzip" "req/s (p50 ${api_p50} ms, p99 ${api_p99} ms)" "$api_rps" "$ng_rps (nginx gzip_static)" "ratio $r, goal >= 0.8" "$(ge "$r" 0.8)" "$api_cpu $api_sw"

step "a new comment in the cached page after the worker's pass ($reflect comments)"
read -r lag_p50 lag_p99 <<< "$(python3 bench/cache.py reflect "$cached" "$base" "$token" "$busiest" "$reflect")"
row "cached page behind the database (p99)" "ms (p50 $lag_p50 ms)" "$lag_p99" "-" "goal <= 100" "$(le "$lag_p99" 100)"

# --- 9. memory -----------------------------------------------------------------------------------
rss_mb=$(printf '%.1f' "$(echo "scale=3; $rss_kb / 1024" | bc)")
row "memory: peak RSS of cafe serve under load" "MB" "$rss_mb" "-" "goal <= 150" "$(le "$rss_mb" 150)"

# --- report --------------------------------------------------------------------------------------
cores=$(nproc); mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
echo
echo "CafeReview bench — $(date -u +%Y-%m-%dT%H:%MZ) — $cores cores ($cpu), $mem — $cafes cafes, $comments comments (seeded in ${seed_seconds%.*} s)"
echo "Server, PostgreSQL and load generator share these $cores cores; both sides of a ratio use $conns connections."
printf '%-42s %-38s %12s %-26s %-26s %-6s %-22s %s\n' scenario unit value reference ratio meets 'server CPU µs/request' 'switches/request'
for r in "${rows[@]}"; do
    IFS='|' read -r name unit value reference goal meets cpu <<< "$r"
    read -r cpu_us switches <<< "$cpu"
    printf '%-42s %-38s %12s %-26s %-26s %-6s %-22s %s\n' "$name" "$unit" "$value" "$reference" "$goal" "$meets" "$cpu_us" "${switches:--}"
done

json=$work/latest.json
{
    printf '{"machine":{"date":"%s","cores":%s,"cpu":"%s","memory":"%s","cafes":%s,"comments":%s,"seedSeconds":%s,"connections":%s,"note":"server, database and load generator share the cores"},"scenarios":[' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$cores" "$cpu" "$mem" "$cafes" "$comments" "$seed_seconds" "$conns"
    first=1
    for r in "${rows[@]}"; do
        IFS='|' read -r name unit value reference goal meets cpu <<< "$r"
        cpunum=$(echo "$cpu" | awk '{ print ($1 ~ /^[0-9.]+$/) ? $1 : "null" }')
        switchnum=$(echo "$cpu" | awk '{ print ($2 ~ /^[0-9.]+$/) ? $2 : "null" }')
        refnum=$(echo "$reference" | awk '{ print ($1 ~ /^[0-9.]+$/) ? $1 : "null" }')
        rationum=$(echo "$goal" | awk '$1 == "ratio" { gsub(",", "", $2); print $2; exit } { print "null" }')
        [ $first = 1 ] || printf ','
        first=0
        printf '{"name":"%s","unit":"%s","value":%s,"reference":%s,"ratio":%s,"goal":"%s","meets":%s,"serverCPUMicrosPerRequest":%s,"serverContextSwitchesPerRequest":%s}' \
            "$name" "$unit" "$value" "$refnum" "$rationum" "${goal#*, }" "$meets" "$cpunum" "$switchnum"
    done
    printf ']}\n'
} > "$json"
if command -v python3 > /dev/null; then python3 -m json.tool "$json" > /dev/null || { echo "invalid JSON in $json" >&2; exit 1; }; fi
echo "written: $json"
