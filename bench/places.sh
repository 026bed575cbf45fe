#!/usr/bin/env bash
# Finding a cafe, the last step of `make bench`, on its own server and data (BENCH_CAFES, BENCH_COMMENTS as
# bench/run.sh; the seed puts every cafe within 10 km of one of eight cities' centres): the seed's time,
# then nearest first from Shibuya's centre (20 within 2 km), the same open now, the same with a keyword,
# and `$nearSphere` through /parse — each the p99 of one client, and the rate with BENCH_CONNECTIONS
# against pgbench running the statement the service sends.
set -euo pipefail
cd "$(dirname "$0")/.."
port=18187
. bench/lib.sh
bench_sizes
bench_paths .build/bench-places $port
serve_seeded $port
psql "$conninfo" -Xq -c "VACUUM ANALYZE"
slot=$(( $(psql "$conninfo" -XAtc "SELECT generation FROM rating_prior") % 2 ))

latitude=35.6595 longitude=139.7005
point="ST_SetSRID(ST_MakePoint($longitude, $latitude), 4326)::geography"
in_radius=$(psql "$conninfo" -XAtc "SELECT count(*) FROM cafes WHERE ST_DWithin(location, $point, 2000, false)")
open_now=$(psql "$conninfo" -XAtc "SELECT count(*) FROM cafes c WHERE ST_DWithin(location, $point, 2000, false)
    AND cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())")

# near_sql FILE [CONDITION]: the statement of `NearListing` for 20 within 2 km, with CONDITION in its walk.
near_sql() {
    cat > "$1" <<SQL
SELECT int8send(c.id) || int8send(s.comment_sum::bigint) || int8send(s.comment_amount::bigint) || timestamptz_send(c.created_at)
       || timestamptz_send(c.updated_at) || int8send(s.stars_1::bigint) || int8send(s.stars_2::bigint) || int8send(s.stars_3::bigint),
       c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date,
       CASE WHEN c.image_id IS NOT NULL THEN (SELECT f.width::bigint << 32 | f.height FROM files f WHERE f.id = c.image_id) END,
       coalesce(s.rating_score_$slot, -1)::float8::text,
       ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text,
       cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())::int,
       cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now()),
       round(n.distance::numeric, 2)::text, n.distance::text
FROM (SELECT c.id, (c.location <-> $point) AS distance FROM cafes c
      WHERE c.archived_at IS NULL AND ST_DWithin(c.location, $point, 2000::float8, false) ${2:-}
      ORDER BY (c.location <-> $point) FETCH FIRST 21 ROWS WITH TIES) n
JOIN cafes c ON c.id = n.id JOIN cafe_stats s ON s.cafe_id = c.id
ORDER BY n.distance, c.id LIMIT 21;
SQL
}
near_url="$base/v1/cafes?near=$latitude,$longitude&limit=20"

step "nearest first from Shibuya's centre, 20 within 2 km ($in_radius cafes there), vs the same statement"
near_sql "$work/near.sql"
near_p99=$(one_client "$near_url")
read -r near_pg near_api near_ratio <<< "$(paired_sql "$work/near.sql" "$near_url")"

step "the same, open now ($open_now of them are)"
near_sql "$work/open.sql" "AND cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())"
open_p99=$(one_client "$near_url&openNow=true")
read -r open_pg open_api open_ratio <<< "$(paired_sql "$work/open.sql" "$near_url&openNow=true")"

step "the same with a keyword (珈琲)"
near_sql "$work/keyword.sql" "AND c.search_text LIKE ALL (ARRAY['%珈琲%'])"
keyword_url="$near_url&q=%E7%8F%88%E7%90%B2"
keyword_p99=$(one_client "$keyword_url")
read -r keyword_pg keyword_api keyword_ratio <<< "$(paired_sql "$work/keyword.sql" "$keyword_url")"

step "\$nearSphere through /parse (20 within 2 km), vs the same statement"
cat > "$work/parse.lua" <<'LUA'
wrk.headers["X-Parse-Application-Id"] = "cafe"
LUA
where=$(python3 -c 'import sys, urllib.parse, json; print(urllib.parse.quote(json.dumps({"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": float(sys.argv[1]), "longitude": float(sys.argv[2])}, "$maxDistanceInKilometers": 2}})))' "$latitude" "$longitude")
parse_url="$base/parse/classes/CafeMaster?where=$where&limit=20"
cat > "$work/parse.sql" <<SQL
SELECT c.id, c.name, c.catch_copy, c.introduction, c.image_id, c.publish_date, coalesce(s.comment_sum, 0), coalesce(s.comment_amount, 0),
       c.created_at, c.updated_at, CASE WHEN c.image_id IS NOT NULL THEN (SELECT f.width::bigint << 32 | f.height FROM files f WHERE f.id = c.image_id) END,
       coalesce(s.stars_1, 0), coalesce(s.stars_2, 0), coalesce(s.stars_3, 0),
       (CASE WHEN (SELECT generation % 2 FROM rating_prior) = 0 THEN s.rating_score_0 ELSE s.rating_score_1 END)::float8,
       ST_Y(c.location::geometry)::numeric::text, ST_X(c.location::geometry)::numeric::text, c.address, c.time_zone, c.opening_hours::text,
       cafe_open_at(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())::int,
       cafe_next_change(c.opening_hours, c.opening_week, c.opening_exceptions, c.time_zone, now())
FROM cafes c JOIN cafe_stats s ON s.cafe_id = c.id
WHERE c.location IS NOT NULL AND ST_DWithin(c.location, $point, 2000::float8, false)
ORDER BY c.location <-> $point ASC LIMIT 20 OFFSET 0;
SQL
parse_p99=$(one_client "$parse_url" "${duration%s}" -s "$work/parse.lua")
read -r parse_pg parse_api parse_ratio <<< "$(paired_sql "$work/parse.sql" "$parse_url" "$work/parse.lua")"

python3 - "$cafes" "$comments" "$seed_seconds" "$near_p99" "$near_pg" "$near_api" "$near_ratio" "$open_p99" "$open_pg" "$open_api" \
    "$open_ratio" "$keyword_p99" "$keyword_pg" "$keyword_api" "$keyword_ratio" "$parse_p99" "$parse_pg" "$parse_api" "$parse_ratio" <<'PY'
import sys
v = [float(x) for x in sys.argv[1:]]
cafes, comments, seed_s = v[:3]
def row(name, value, goal, meets):
    print(f"{name:<56} {value:<40} {goal:<14} {'true' if meets else 'false'}")
print()
print(f"finding a cafe at {cafes:.0f} cafes / {comments:.0f} comments")
row("seed", f"{seed_s:.0f} s", "< 300 s", seed_s < 300)
for i, name in enumerate(["near= (20 within 2 km)", "near= + openNow", "near= + a keyword", "$nearSphere through /parse"]):
    p99, pg, api, ratio = v[3 + 4 * i: 7 + 4 * i]
    row(f"{name}: p99, 1 client", f"{p99:.2f} ms", "<= 10 ms", p99 <= 10)
    row("  rate against pgbench of its statement", f"{api:.0f} vs {pg:.0f} req/s: {ratio:.2f}x", ">= 0.6x", ratio >= 0.6)
PY
