#!/usr/bin/env bash
# Runs a test command (`make test`'s `swift test`) with its output line-buffered, so a log always shows
# the test that is running, and with a watchdog: a run that prints nothing for TEST_HANG_SECONDS
# (default 600; the slowest test takes under a minute) is hung. Then it prints what runs — the
# process tree and, where gdb is installed, every thread's stack of the test process — and stops the
# run with status 124, instead of waiting out CI's time limit with nothing to show for it.
set -uo pipefail
limit=${TEST_HANG_SECONDS:-600}
[[ $limit =~ ^[0-9]+$ ]] && (( limit > 0 )) || { echo "TEST_HANG_SECONDS must be a positive number of seconds" >&2; exit 64; }
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT

# tee copies every line the command prints into $stamp as well: its modification time is when the run last spoke.
stdbuf -oL -eL "$@" 2>&1 | tee "$stamp" &
runner=$!

# The processes under this run (pid and parent pairs from ps): only they are examined and stopped.
descendants() {
    ps -eo pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 } END {
        for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root && p != root) print p } }'
}

while kill -0 "$runner" 2>/dev/null; do
    sleep 5
    silent=$(( $(date +%s) - $(stat -c %Y "$stamp") ))
    (( silent < limit )) && continue
    echo "==> tools/run-tests.sh: nothing printed for ${silent} s; the run is hung. What runs:"
    ps -eo pid,ppid,etimes,stat,args --forest | cut -c1-240
    mine=$(descendants $$)
    for pid in $mine; do
        [[ $(ps -o args= -p "$pid" 2>/dev/null) == *PackageTests.xctest* ]] || continue
        if command -v gdb >/dev/null 2>&1; then
            echo "==> threads of the test process $pid"
            timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt 30' 2>/dev/null | grep -E '^(Thread|#)' | cut -c1-240
        fi
    done
    kill -KILL $mine 2>/dev/null
    wait "$runner" 2>/dev/null
    exit 124
done
wait "$runner"
