#!/usr/bin/env bash
# The photo rows of `make bench`, each against a reference measured in the same run:
#   1. making the 640-wide WebP of a 12-megapixel JPEG: the service's time per photo (the first
#      `GET ?w=640` with `Accept: image/webp`, which makes it from the stored photo) vs `vipsthumbnail`
#      on the uploaded file, both one at a time;
#   2. a cached size served (a public photo's 320-wide WebP, page cache hit) vs nginx serving the same bytes;
#   3. the photo wall's first page: bytes of the images the web client loads (its srcset at 240 px) vs the originals;
#   4. 8 concurrent uploads of 24-megapixel JPEGs: the cafe list's p99 meanwhile vs unloaded, and the
#      request process's peak RSS (VmHWM).
#   BENCH_PHOTOS (6 photos for row 1), BENCH_DURATION (10s), BENCH_CONNECTIONS (64)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${BENCH_DURATION:-10s}
conns=${BENCH_CONNECTIONS:-64}
photos=${BENCH_PHOTOS:-6}
port=18280
nginx_port=18290
. bench/lib.sh
bench_paths .build/bench-photos $port
cleanup_more() { [ -f "$work/nginx/nginx.pid" ] && nginx -c "$PWD/$work/nginx/nginx.conf" -s stop 2>/dev/null || true; }
rm -rf "$work" "$data" && mkdir -p "$work/nginx/html" "$work/in"

# Phone-like photos: a smooth scene (gradients) with sensor-like noise, as a camera's JPEG at Q 90.
make_photo() {   # WIDTH HEIGHT SEED OUT
    local w=$1 h=$2 seed=$3 out=$4
    local t=$work/in/t$seed
    vips xyz "$t-xy.v" "$w" "$h"
    vips extract_band "$t-xy.v" "$t-x.v" 0; vips extract_band "$t-xy.v" "$t-y.v" 1
    vips linear "$t-x.v" "$t-r.v" "$(echo "scale=8; 200 / $w" | bc)" "$((seed * 7 % 40))"
    vips linear "$t-y.v" "$t-g.v" "$(echo "scale=8; 160 / $h" | bc)" 30
    vips gaussnoise "$t-n.v" "$w" "$h" --mean 0 --sigma 10
    # Structure at every scale a thumbnail keeps: coarse noise blown up into soft shapes.
    vips gaussnoise "$t-s.v" "$((w / 40))" "$((h / 40))" --mean 110 --sigma 45
    vips resize "$t-s.v" "$t-b.v" 40 --kernel linear
    vips add "$t-b.v" "$t-n.v" "$t-m.v"
    vips bandjoin "$t-r.v $t-g.v $t-m.v" "$t-c.v"
    vips cast "$t-c.v" "$t-u.v" uchar
    vips copy "$t-u.v" "$out[Q=90]"
    rm -f "$t"-*.v
}
step "making $photos 12-megapixel and 8 24-megapixel JPEGs"
for i in $(seq 1 "$photos"); do make_photo 4000 3000 "$i" "$work/in/p12-$i.jpg"; done
for i in $(seq 1 8); do make_photo 6000 4000 "$((i + 50))" "$work/in/p24-$i.jpg"; done

step "starting cafe serve (release, embedded PostgreSQL, page cache on)"
start_serve $port "$work/serve.log" RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 UPLOAD_QUOTA_BYTES=0
# `cafe serve` supervises a request process (`--listen-fd`): that one's memory is what is measured.
request_pid() { pgrep -P "${pids[-1]}" -f -- "--listen-fd" | head -1; }
"$cafe" seed --cafes 2000 --comments 2000 > /dev/null
token=$(sign_up "$base" bencher)
cafe_id=$(curl -sf "$base/v1/cafes?limit=1" | sed -E 's/.*"id":"([0-9]+)".*/\1/; s/^.*\[\{"id":"([0-9]+)".*$/\1/' | head -c 20)
upload() { curl -sf ${from:+--interface "$from"} -X POST "$base/v1/files" -H "Authorization: Bearer $token" -H 'Content-Type: image/jpeg' --data-binary "@$1" | sed -E 's/.*"id":"([0-9]+)".*/\1/'; }
comment_with() { curl -sf -o /dev/null -X POST "$base/v1/cafes/$cafe_id/comments" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d "{\"detail\":\"photo\",\"star\":3,\"imageId\":\"$1\"}"; }
now() { date +%s.%N; }
rows=(); uploaders=()
row() { rows+=("$1|$2|$3|$4|$5|$6"); }

# --- 1. the 640 WebP -----------------------------------------------------------------------------
step "640-wide WebP of a 12-megapixel JPEG: the service vs vipsthumbnail"
ids=(); upload_seconds=0
for i in $(seq 1 "$photos"); do
    t0=$(now); id=$(upload "$work/in/p12-$i.jpg"); upload_seconds=$(echo "$upload_seconds + $(now) - $t0" | bc)
    comment_with "$id"; ids+=("$id")
done
t0=$(now)
for id in "${ids[@]}"; do curl -sf -o /dev/null -H 'Accept: image/webp' "$base/v1/files/$id?w=640"; done
service_ms=$(echo "scale=1; ($(now) - $t0) * 1000 / $photos" | bc)
# One vipsthumbnail process for all the files, so its start-up is not counted against it per photo.
t0=$(now)
vipsthumbnail "$work"/in/p12-*.jpg --size 640x -o "$PWD/$work/in/thumb-%s.webp[Q=80,strip]"
vips_ms=$(echo "scale=1; ($(now) - $t0) * 1000 / $photos" | bc)
[ "$(ls "$work"/in/thumb-*.webp | wc -l)" = "$photos" ] || { echo "vipsthumbnail made no thumbnails"; exit 1; }
upload_ms=$(echo "scale=0; $upload_seconds * 1000 / $photos" | bc)
r=$(ratio "$service_ms" "$vips_ms")
row "photo: 640 WebP of a 12 MP JPEG (first request)" "ms per photo (upload+clean ${upload_ms} ms)" "$service_ms" "$vips_ms (vipsthumbnail)" "ratio $r, goal <= 1.2" "$(le "$r" 1.2)"

# --- 2. a cached size -----------------------------------------------------------------------------
step "a cached size vs nginx serving the same bytes"
url="$base/v1/files/${ids[0]}?w=320"
curl -sf -H 'Accept: image/webp' "$url" > "$work/nginx/html/size.webp"
curl -sf -o /dev/null -H 'Accept: image/webp' "$url"
cat > "$work/nginx/nginx.conf" <<NGINX
worker_processes 2;
pid $PWD/$work/nginx/nginx.pid;
error_log $PWD/$work/nginx/error.log;
events { worker_connections 4096; }
http { access_log off; sendfile on; keepalive_requests 1000000;
  server { listen 127.0.0.1:$nginx_port; root $PWD/$work/nginx/html; } }
NGINX
nginx -c "$PWD/$work/nginx/nginx.conf"
cat > "$work/webp.lua" <<'LUA'
wrk.headers["Accept"] = "image/webp"
LUA
read -r api_rps _ api_p99 _ <<< "$(wrk_run "$url" "$work/webp.lua")"
read -r ng_rps _ _ _ <<< "$(wrk_run "http://127.0.0.1:$nginx_port/size.webp")"
r=$(ratio "$api_rps" "$ng_rps")
row "photo: a cached 320 WebP served" "req/s (p99 ${api_p99} ms, $(stat -c %s "$work/nginx/html/size.webp") B)" "$api_rps" "$ng_rps (nginx)" "ratio $r, goal >= 0.8" "$(ge "$r" 0.8)"

# --- 3. the photo wall's first page ---------------------------------------------------------------
step "the photo wall's first page: what the web client loads vs the originals"
# The wall's photos are the bench's uploads; the web client's srcset at 240 px on a 1x screen picks w=320.
originals=0; loaded=0
for i in $(seq 1 "$photos"); do
    originals=$((originals + $(stat -c %s "$work/in/p12-$i.jpg")))
    loaded=$((loaded + $(curl -sf -H 'Accept: image/webp' "$base/v1/files/${ids[$((i - 1))]}?w=320" | wc -c)))
done
pct=$(echo "scale=2; $loaded * 100 / $originals" | bc)
row "photo wall first page: image bytes loaded" "bytes ($photos photos)" "$loaded" "$originals (originals)" "$pct %, goal <= 5 %" "$(le "$pct" 5)"

# --- 4. 8 concurrent 24 MP uploads ------------------------------------------------------------------
step "the cafe list's p99 unloaded, then while 8 clients upload 24-megapixel JPEGs without pause"
# Logged in, so the page cache does not answer: each request is the list query and its rendering.
cat > "$work/auth.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $token"
LUA
list="$base/v1/cafes?limit=20"
conns=8 duration=3s wrk_run "$list" "$work/auth.lua" > /dev/null   # warm: connections, prepared statements
read -r _ _ idle_p99 _ <<< "$(conns=8 duration=6s wrk_run "$list" "$work/auth.lua")"
touch "$work/uploading"
# Eight people on eight addresses (the limits on bodies in flight are per client), each uploading one photo
# after another (an account's uploads are decoded one at a time), and waiting a second after a refusal as a
# client that reads Retry-After does.
for i in $(seq 1 8); do
    uploader=$(sign_up "$base" "uploader$i")
    ( while [ -f "$work/uploading" ]; do token=$uploader from=127.0.0.$((20 + i)) upload "$work/in/p24-$i.jpg" > /dev/null || sleep 1; done ) &
    uploaders+=("$!")
done
sleep 1
read -r _ _ busy_p99 _ <<< "$(conns=8 duration=6s wrk_run "$list" "$work/auth.lua")"
rm -f "$work/uploading"
wait "${uploaders[@]}"
uploaded=$(psql "$conninfo" -XAtc "SELECT count(*) FROM files WHERE width = 2560 AND height = 1707")
peak_kb=$(awk '/VmHWM/ { print $2 }' "/proc/$(request_pid)/status")
peak_mb=$(echo "scale=0; $peak_kb / 1024" | bc)
# The photo helpers (`cafe photo-codec`, children of the request process) decode: their peak, the largest one's.
helper_kb=0
for pid in $(pgrep -P "$(request_pid)" -f photo-codec); do
    kb=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status"); [ "$kb" -gt "$helper_kb" ] && helper_kb=$kb
done
helper_mb=$(echo "scale=0; $helper_kb / 1024" | bc)
r=$(ratio "$busy_p99" "$idle_p99")
row "cafe list p99 while 8 clients upload 24 MP" "ms ($uploaded uploads, peak RSS ${peak_mb} MB + helper ${helper_mb} MB)" "$busy_p99" "$idle_p99 (unloaded)" "ratio $r, goal <= 3; RSS <= 400" "$( [ "$(le "$r" 3)" = true ] && [ "$((peak_mb + helper_mb))" -le 400 ] && echo true || echo false)"

printf '\n%-48s %-44s %10s %-26s %-24s %s\n' scenario unit value reference ratio meets
for line in "${rows[@]}"; do
    IFS='|' read -r name unit value reference goal meets <<< "$line"
    printf '%-48s %-44s %10s %-26s %-24s %s\n' "$name" "$unit" "$value" "$reference" "$goal" "$meets"
done
