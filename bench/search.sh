#!/usr/bin/env bash
# Search latency through the HTTP API: keywords of 1, 2, 3 and 6 characters, common and rare, and a
# two-keyword query, first page under each sort; p50/p99 from wrk. Reference in the same run: the
# same rare 1–2-character searches as a plain ILIKE over the table (what the original app did).
#
#   bench/search.sh http://127.0.0.1:8080 "host=/path/to/pgdata user=cafe dbname=cafe"
#
# Expects data from `cafe seed --cafes N` (its phrase pool makes の, 珈琲, ケーキ, チーズケーキ common
# and 鰻, 蕎麦, ガレッ, ホットサンド rare: one cafe in 25,000; 珈琲 and ジャズ occur together in ~2%;
# every cafe names one city, so 渋谷 and 京都 never do: the worst case, two common keywords whose
# combination is empty). Two more classes: a number (every cafe's introduction ends in "No.<n>", so
# each digit pair is common while "54321" matches a few dozen cafes), and three common keywords that
# rarely meet (three of the 30 phrases, ~13% each), and three English words of two such phrases (open
# late vegan: every English bigram is common, ~1.3% together); a 3-digit number (~0.5% of cafes: past the
# bitmaps' candidate list, short of what a walk of 4,000 rows fills); eight common keywords.
#
# The server must run without its page cache (PAGE_CACHE_BYTES=0): a cached page measures memory,
# not the search (the script stops if an answer says X-Cache).
#
# Each case runs twice: one client at a time (the latency of the query itself: the goal of p99 ≤ 10 ms
# is judged here) and four at once (wrk, server and PostgreSQL then queue for this machine's 2 cores).
set -euo pipefail
base=${1:?base URL}
conninfo=${2:?libpq connection string}
duration=${BENCH_DURATION:-3s}

urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
. "$(dirname "$0")/lib.sh"

if curl -sI "$base/v1/cafes" | grep -qi '^x-cache:'; then
    echo "the server answers from its page cache: start it with PAGE_CACHE_BYTES=0 to measure the search" >&2
    exit 1
fi
printf '%-14s %-12s %-8s %8s %18s %18s %9s\n' case keyword sort matches "c1 p50/p99 ms" "c4 p50/p99 ms" "c4 req/s"
for spec in "1-char common:の" "1-char rare:鰻" "2-char common:珈琲" "2-char rare:蕎麦" "3-char common:ケーキ" \
            "3-char rare:ガレッ" "6-char common:チーズケーキ" "6-char rare:ホットサンド" "two keywords:珈琲 ジャズ" \
            "two disjoint:渋谷 京都" "number:54321" "3-digit number:432" "three rare-met:抹茶ラテ 焼き菓子 昭和レトロ" \
            "three English:open late vegan" \
            "eight keywords:京都 珈琲 ジャズ 窓際 モーニング ナポリタン 焼き菓子 No.1"; do
    name=${spec%%:*}; keyword=${spec#*:}
    matches=$(echo "SELECT count(*) FROM cafes WHERE search_text LIKE ALL (SELECT cafe_like_pattern(k) FROM unnest(string_to_array(:'kw', ' ')) k)" \
        | psql "$conninfo" -XAtq -v kw="$keyword")
    for sort in newest rating popular; do
        url="$base/v1/cafes?q=$(urlencode "$keyword")&sort=$sort"
        # Warm-up: the embedded server starts with empty shared buffers, and a case's first walk
        # of an order reads its pages from the kernel (a 250 ms first request at 1M cafes).
        for _ in 1 2 3; do curl -s -o /dev/null "$url"; done
        latencies=()
        for clients in 1 4; do
            out=$(wrk -t1 -c$clients -d"$duration" --latency "$url")
            p50=$(echo "$out" | awk '$1 == "50%" { print $2 }' | to_ms)
            p99=$(echo "$out" | awk '$1 == "99%" { print $2 }' | to_ms)
            latencies+=("$p50 / $p99")
            rps=$(echo "$out" | awk '/Requests\/sec/ { printf "%.0f", $2 }')
        done
        printf '%-14s %-12s %-8s %8s %18s %18s %9s\n' "$name" "$keyword" "$sort" "$matches" "${latencies[0]}" "${latencies[1]}" "$rps"
    done
done

echo
echo "reference: plain ILIKE over the table, newest first (median of 5 runs)"
for keyword in 鰻 蕎麦; do
    times=$(for _ in 1 2 3 4 5; do
        psql "$conninfo" -Xq -v kw="$keyword" <<'SQL' | awk '/^Time:/ { print $2 }'
\timing on
SELECT id FROM cafes WHERE name ILIKE '%' || :'kw' || '%' OR catch_copy ILIKE '%' || :'kw' || '%' OR introduction ILIKE '%' || :'kw' || '%'
ORDER BY created_at DESC, id DESC LIMIT 21;
SQL
    done | sort -n)
    median=$(echo "$times" | sed -n 3p)
    printf '%-10s ILIKE median %8.2f ms\n' "$keyword" "$median"
done
