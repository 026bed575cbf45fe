#!/usr/bin/env bash
# `bench/sidebyside.sh OTHER_CAFE`: this build and another (`OTHER_CAFE`, e.g. an earlier commit's
# release binary) serve one seeded database at the same time, and each row alternates them round by
# round: this one first, then the other first, and so on. Whole `make bench` runs minutes apart moved
# by more than most changes do on this shared machine (docs/performance.md), while two servers asked
# in alternation share each moment's speed; so a change is judged here by how many rounds it wins.
#
# Prints, per row, each round's req/s, server CPU µs per request (the request process's user and
# system time over the requests wrk counted) and context switches per request for both, and how many
# rounds this build used less CPU and served more. The other build must accept this build's schema (the
# same migrations), or be given its own through MIGRATIONS_DIR, which only it reads. A build whose schema
# this one's migrations have changed under it (a function it calls dropped) gets a database of its own
# with SIDE_SEPARATE=1: the same seed, by the other build, in a second embedded PostgreSQL.
#
#   SIDE_CAFES (20000)  SIDE_COMMENTS (200000)  SIDE_ROUNDS (6)  SIDE_DURATION (4s)  SIDE_CONNECTIONS (64)
#   SIDE_SEPARATE (0)
set -euo pipefail
cd "$(dirname "$0")/.."

other=${1:?usage: bench/sidebyside.sh OTHER_CAFE (another build of cafe to compare with)}
cafes=${SIDE_CAFES:-20000}
comments=${SIDE_COMMENTS:-200000}
rounds=${SIDE_ROUNDS:-6}
duration=${SIDE_DURATION:-4s}
conns=${SIDE_CONNECTIONS:-64}
. bench/lib.sh
bench_paths .build/sidebyside 18380
other_base=http://127.0.0.1:18381
other_migrations=${MIGRATIONS_DIR:-}
unset MIGRATIONS_DIR
rm -rf "$work" "$data" && mkdir -p "$work"

step "starting this build and $other on one embedded database (release, page cache off, no rate limits)"
limits=(RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 PAGE_CACHE_BYTES=0)
start_serve 18380 "$work/this.log" "${limits[@]}"
this_pid=$(request_process "${pids[-1]}")
step "seeding $cafes cafes and $comments comments"
"$cafe" seed --cafes "$cafes" --comments "$comments"
psql "$conninfo" -Xq -c "VACUUM ANALYZE"
this_cafe=$cafe
separate=${SIDE_SEPARATE:-0}
other_data=$(bench_data_dir "$work" other-pgdata)
rm -rf "$other_data"
other_conninfo=$conninfo other_database=(DATABASE_URL="$conninfo")
[ "$separate" = 1 ] && other_conninfo="host=$other_data user=cafe dbname=cafe" other_database=(CAFE_DATA_DIR="$other_data")
other_env=("${other_database[@]}" ${other_migrations:+MIGRATIONS_DIR="$other_migrations"})
cafe=$other start_serve 18381 "$work/other.log" "${limits[@]}" "${other_env[@]}"
if [ "$separate" = 1 ]; then
    step "seeding the other build's own database the same way"
    env "${other_env[@]}" "$other" seed --cafes "$cafes" --comments "$comments"
    psql "$other_conninfo" -Xq -c "VACUUM ANALYZE"
fi
other_pid=$(request_process "${pids[-1]}")
cafe=$this_cafe
busiest=$(psql "$conninfo" -XAtc "SELECT cafe_id FROM cafe_stats ORDER BY comment_sum DESC LIMIT 1")
# The comments row reads a full page of 100 from both databases.
full=$(psql "$other_conninfo" -XAtc "SELECT count(*) > 100 FROM comments WHERE cafe_id = $busiest")
[ "$full" = t ] || { echo "cafe $busiest has no full page of comments in the other build's database" >&2; exit 1; }

# compare NAME PATH [wrk script [the other's wrk script]]: the rounds of one row, then its tally.
compare() {
    local name=$1 path=$2 script=${3:-} other_script=${4:-${3:-}} i this that this_wins=0 more=0
    step "$name: $rounds rounds of $duration each, alternating which goes first"
    wrk -t2 -c"$conns" -d1s ${script:+-s "$script"} "$base$path" > /dev/null
    wrk -t2 -c"$conns" -d1s ${other_script:+-s "$other_script"} "$other_base$path" > /dev/null   # warm-up
    for i in $(seq 1 "$rounds"); do
        if (( i % 2 )); then
            this=$(cpu_pid=$this_pid wrk_run "$base$path" $script); that=$(cpu_pid=$other_pid wrk_run "$other_base$path" $other_script)
        else
            that=$(cpu_pid=$other_pid wrk_run "$other_base$path" $other_script); this=$(cpu_pid=$this_pid wrk_run "$base$path" $script)
        fi
        read -r this_rps _ _ this_cpu this_sw <<< "$this"
        read -r that_rps _ _ that_cpu that_sw <<< "$that"
        [ "$(echo "$this_cpu < $that_cpu" | bc)" = 1 ] && this_wins=$((this_wins + 1))
        (( this_rps > that_rps )) && more=$((more + 1))
        printf '  round %d: this %6d req/s %7.1f µs %5.2f switches   other %6d req/s %7.1f µs %5.2f switches\n' \
            "$i" "$this_rps" "$this_cpu" "$this_sw" "$that_rps" "$that_cpu" "$that_sw"
    done
    printf '%s: this build used less CPU per request in %d of %d rounds and served more in %d\n' "$name" "$this_wins" "$rounds" "$more"
}

compare "trivial JSON endpoint" "/healthz"
compare "list newest 20" "/v1/cafes?limit=20"
compare "search, rare 2-char keyword" "/v1/cafes?q=%E8%95%8E%E9%BA%A6"
compare "comments of a cafe (100)" "/v1/cafes/$busiest/comments?limit=100"
compare "one cafe" "/v1/cafes/$busiest"

# One session per database posts through each server.
write_post_lua "$work/post.lua" "$(sign_up "$base" sidebyside)" "$cafes"
other_post=$work/post.lua
if [ "$separate" = 1 ]; then
    other_post=$work/other-post.lua
    write_post_lua "$other_post" "$(sign_up "$other_base" sidebyside)" "$cafes"
fi
compare "post a comment" "/v1/cafes/1/comments" "$work/post.lua" "$other_post"
