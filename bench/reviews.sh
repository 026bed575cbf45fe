#!/usr/bin/env bash
# The review readers' part of `make bench`, on its own server and data (BENCH_CAFES, BENCH_COMMENTS as
# bench/run.sh; the busiest cafe's comments get up to 300 helpful votes each):
#   - the busiest cafe's comments most helpful first (20) and the cafe list in rating order (20): p99 with
#     one client, and the rate with BENCH_CONNECTIONS against pgbench running the same statement;
#   - a full refresh of the rating scores (RATING_PRIOR_WEIGHT changed), its time, and the rating list's
#     p99 with one client meanwhile against the same unloaded;
#   - BENCH_VOTE_RATE (100) helpful votes and BENCH_VOTE_POSTS (50) comments a second for
#     BENCH_VOTE_SECONDS (20) with a running worker: its passes' time (the cafes' and the votes' of a
#     tick together) and the delay from each vote's 201 to the count that shows it.
set -euo pipefail
cd "$(dirname "$0")/.."
vote_rate=${BENCH_VOTE_RATE:-100}
post_rate=${BENCH_VOTE_POSTS:-50}
vote_seconds=${BENCH_VOTE_SECONDS:-20}
port=18186
. bench/lib.sh
bench_sizes
bench_paths .build/bench-reviews $port
serve_seeded $port
busiest=$(psql "$conninfo" -XAtc "SELECT cafe_id FROM cafe_stats ORDER BY comment_sum DESC LIMIT 1")
step "helpful votes on the busiest cafe's $(psql "$conninfo" -XAtc "SELECT comment_sum FROM cafe_stats WHERE cafe_id = $busiest") comments"
psql "$conninfo" -Xq <<SQL
INSERT INTO users (username, password_hash) SELECT 'voter' || g, 'not a password' FROM generate_series(1, 300) g;
INSERT INTO helpful_votes (comment_id, user_id)
SELECT m.id, u.id FROM comments m JOIN users u ON u.username LIKE 'voter%'
WHERE m.cafe_id = $busiest AND (hashint8(m.id * 1000 + u.id) & 1023) < (hashint8(m.id) & 1023) / 4;
SQL
"$cafe" worker --once > /dev/null
generation() { psql "$conninfo" -XAtc "SELECT generation FROM rating_prior"; }
psql "$conninfo" -Xq -c "VACUUM ANALYZE"

slot=$(( $(generation) % 2 ))

step "the busiest cafe's comments, most helpful first (20), vs the same statement"
cat > "$work/helpful.sql" <<SQL
SELECT m.id, m.cafe_id, m.user_id, u.username, m.detail, m.star, m.image_id, m.created_at, m.updated_at, m.helpful_count,
       m.reply_text, m.reply_created_at, m.reply_updated_at
FROM comments m JOIN users u ON u.id = m.user_id WHERE m.cafe_id = $busiest
ORDER BY m.helpful_count DESC, m.created_at DESC, m.id DESC LIMIT 21;
SQL
helpful_url="$base/v1/cafes/$busiest/comments?sort=helpful&limit=20"
helpful_p99=$(one_client "$helpful_url")
read -r helpful_pg helpful_api helpful_ratio <<< "$(paired_sql "$work/helpful.sql" "$helpful_url")"

step "the cafe list in rating order (20) vs the same statement"
cat > "$work/rating.sql" <<SQL
SELECT c.id, c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, s.comment_sum, s.comment_amount, c.created_at, c.updated_at,
       s.stars_1, s.stars_2, s.stars_3, coalesce(s.rating_score_$slot, -1)::float8::text,
       ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text,
       cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())::int,
       cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())
FROM cafe_stats s JOIN cafes c ON c.id = s.cafe_id
ORDER BY coalesce(s.rating_score_$slot, -1) DESC, s.comment_sum DESC, s.created_at DESC, s.cafe_id DESC LIMIT 21;
SQL
rating_url="$base/v1/cafes?sort=rating&limit=20"
rating_p99=$(one_client "$rating_url")
read -r rating_pg rating_api rating_ratio <<< "$(paired_sql "$work/rating.sql" "$rating_url")"

step "a full refresh of the rating scores (RATING_PRIOR_WEIGHT 5 -> 6), the rating list read by one client meanwhile"
psql "$conninfo" -Xqc "UPDATE rating_prior SET flipped_at = now() - interval '1 hour'"
before=$(generation)
refresh_started=$(date +%s.%N)
RATING_PRIOR_WEIGHT=6 "$cafe" worker --interval 1 > "$work/worker.log" 2>&1 &
pids+=("$!")
until psql "$conninfo" -XAtc "SELECT refreshed_through IS NOT NULL FROM rating_prior" | grep -q t; do sleep 0.2; done
# One client for 30 s of the refresh (all of it at the bench's size), then its end is waited for.
during_p99=$(one_client "$rating_url" 30)
while [ "$(generation)" = "$before" ]; do sleep 0.5; done
refresh_seconds=$(printf '%.1f' "$(echo "$(date +%s.%N) - $refresh_started" | bc)")

step "$vote_rate helpful votes and $post_rate comments a second for $vote_seconds s, the worker running"
token=$(sign_up "$base" bencher)
: > "$work/tokens"
for i in $(seq 1 100); do sign_up "$base" "reader$i" >> "$work/tokens"; echo >> "$work/tokens"; done
psql "$conninfo" -XAtc "SELECT id FROM comments WHERE cafe_id <> $busiest AND helpful_count = 0 ORDER BY random() LIMIT $(( vote_rate * vote_seconds ))" > "$work/targets"
since=$(psql "$conninfo" -XAtc "SELECT now()")
python3 bench/cache.py post "$base" "$token" "$cafes" "$post_rate" "$vote_seconds" > /dev/null &
poster=$!
python3 bench/reviews.py votes "$base" "$conninfo" "$work/tokens" "$work/targets" "$vote_rate" "$vote_seconds" > "$work/votes.json"
wait "$poster"
# A tick's passes: the cafes' pass and the votes' pass that follows it (by one worker, back to back).
psql "$conninfo" -XAt -F' ' -c "SELECT kind, extract(epoch FROM started_at), extract(epoch FROM finished_at)
    FROM job_runs WHERE kind IN ('pass', 'votes') AND started_at >= '$since' ORDER BY started_at" > "$work/passes"

python3 - "$work/votes.json" "$work/passes" "$helpful_p99" "$helpful_pg" "$helpful_api" "$helpful_ratio" "$rating_p99" "$rating_pg" \
    "$rating_api" "$rating_ratio" "$refresh_seconds" "$during_p99" "$cafes" "$comments" "$seed_seconds" <<'PY'
import json, sys
votes = json.load(open(sys.argv[1]))
runs = [line.split() for line in open(sys.argv[2]) if line.strip()]
ticks, i = [], 0
while i < len(runs):
    kind, start, end = runs[i][0], float(runs[i][1]), float(runs[i][2])
    if kind == "pass" and i + 1 < len(runs) and runs[i + 1][0] == "votes" and float(runs[i + 1][1]) - end < 0.5:
        ticks.append((float(runs[i + 1][2]) - start) * 1000); i += 2
    else:
        ticks.append((end - start) * 1000); i += 1
ticks.sort()
tick_p99 = ticks[min(len(ticks) - 1, int(0.99 * len(ticks)))] if ticks else float("nan")
(helpful_p99, helpful_pg, helpful_api, helpful_ratio, rating_p99, rating_pg, rating_api, rating_ratio, refresh_s, during_p99,
 cafes, comments, seed_s) = (float(v) for v in sys.argv[3:])
def row(name, value, goal, meets):
    print(f"{name:<62} {value:<40} {goal:<22} {'true' if meets else 'false'}")
print()
print(f"review readers at {cafes:.0f} cafes / {comments:.0f} comments (seeded in {seed_s:.0f} s)")
row("busiest cafe's comments, most helpful first: p99, 1 client", f"{helpful_p99:.2f} ms", "<= 10 ms", helpful_p99 <= 10)
row("  the same, rate against pgbench", f"{helpful_api:.0f} vs {helpful_pg:.0f} req/s: {helpful_ratio:.2f}x", ">= 0.6x", helpful_ratio >= 0.6)
row("cafe list, rating order: p99, 1 client", f"{rating_p99:.2f} ms", "<= 10 ms", rating_p99 <= 10)
row("  the same, rate against pgbench", f"{rating_api:.0f} vs {rating_pg:.0f} req/s: {rating_ratio:.2f}x", ">= 0.6x", rating_ratio >= 0.6)
row("full rating score refresh", f"{refresh_s:.1f} s", "-", True)
row("  rating list p99 meanwhile (1 client, 30 s) vs unloaded", f"{during_p99:.2f} vs {rating_p99:.2f} ms: {during_p99 / rating_p99:.2f}x", "<= 2x", during_p99 <= 2 * rating_p99)
row("worker tick (cafes' pass + votes' pass) while votes flow, p99", f"{tick_p99:.1f} ms (max {ticks[-1] if ticks else float('nan'):.1f}, {len(ticks)} ticks)", "<= 100 ms", tick_p99 <= 100)
row("delay from a vote's 201 to its count, p50 / p99", f"{votes['p50']:.0f} / {votes['p99']:.0f} ms (max {votes['max']:.0f})", "p99 <= 2000 ms", votes['p99'] <= 2000)
row("every vote counted", f"{votes['created']} of {votes['votes']} votes 201, {votes['unseen']} unseen", "all", votes['unseen'] == 0 and votes['created'] == votes['votes'])
PY
