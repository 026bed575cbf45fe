#!/usr/bin/env bash
# `make fuzz`: schemathesis (from PyPI, in a local virtual environment) against /openapi.json of a
# freshly started `cafe serve` on its own embedded database: every operation, anonymously, as a
# user and as an admin. Passes only with zero 5xx answers and zero answers the document does not
# describe (status, content type, headers, body schema). FUZZ_SECONDS bounds each of the three
# runs (default 150: with start-up, under 10 minutes in all). Then tools/http_fuzz.py, raw sockets.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-150}
source tools/lib.sh
venv=.build/fuzz-venv
schemathesis=4.32.5
python_venv "$venv" "schemathesis==$schemathesis" "'$venv/bin/st' --version | grep -q '$schemathesis'"

export RATE_LIMIT_READS=0 RATE_LIMIT_WRITES=0 RATE_LIMIT_LOGINS=0 RATE_LIMIT_MAILS=0
start_cafe_serve

token_for() {  # username, admin? → a session token
    local name=$1
    local flags=()
    [[ "$2" == admin ]] && flags=(--admin)
    echo "correct horse battery" | .build/debug/cafe admin create-user --username "$name" --password-stdin "${flags[@]}" > /dev/null
    curl -s -X POST "$base/v1/sessions" -H 'Content-Type: application/json' \
        -d "{\"username\":\"$name\",\"password\":\"correct horse battery\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionToken"])'
}
user=$(token_for fuzz_user user)
admin=$(token_for fuzz_admin admin)
# Something to point at: a cafe with a comment.
cafe=$(curl -s -X POST "$base/v1/cafes" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    -d '{"name":"Fuzz","catchCopy":"","introduction":"珈琲"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
comment=$(curl -s -X POST "$base/v1/cafes/$cafe/comments" -H "Authorization: Bearer $user" -H 'Content-Type: application/json' \
    -d '{"detail":"x","star":2}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

# One worker: with two, hypothesis parses lambdas' sources from two threads at once and CPython 3.11's
# parser can fail ("AST constructor recursion depth mismatch"), a fuzzer error, not a finding.
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance
failed=0
run() {  # label, extra schemathesis arguments…
    local label=$1; shift
    echo "==> schemathesis: $label (${seconds}s)"
    "$venv/bin/st" run "$base/openapi.json" --checks "$checks" --max-time "$seconds" --workers 1 \
        --seed 1 --no-color --suppress-health-check all --warnings off \
        --report junit --report-junit-path ".build/fuzz-$label.xml" "$@" || failed=1
}
run anonymous
run user -H "Authorization: Bearer $user" -H "X-Parse-Application-Id: cafe" -H "X-Parse-Session-Token: $user"
run admin -H "Authorization: Bearer $admin" -H "X-Parse-Application-Id: cafe" -H "X-Parse-Session-Token: $admin"

# Our own raw-HTTP fuzzer: what schemathesis never sends (broken framing, separator-only and
# non-UTF-8 headers, hostile JSON, byte flips). FUZZ_RAW_REQUESTS requests (default 50,000).
# Tokens are base64url and may start with "-": passed as --name=value, or argparse takes them for options.
"$venv/bin/python" tools/http_fuzz.py --port "$port" --requests "${FUZZ_RAW_REQUESTS:-50000}" --jobs 4 \
    --user-token="$user" --admin-token="$admin" --cafe "$cafe" --comment "$comment" \
    || { failed=1; { echo "==> the server log's last lines:"; tail -n 40 "$work/serve.log" | cut -c1-400; } >&2; }

# Every fuzzer's connection is closed on its side by now: the server must have closed them all within
# seconds (a connection it kept would hold a slot of the client's address until a timeout).
open_connections() { curl -s "$base/metrics" | awk '$1 == "cafe_http_connections_open" { print $2 }'; }
for _ in $(seq 1 20); do open=$(open_connections); [[ "${open:-0}" -le 1 ]] && break; sleep 0.25; done
if [[ "${open:-0}" -gt 1 ]]; then
    echo "==> $open connections still open 5 s after the fuzzers closed theirs" >&2; failed=1
fi

# The supervisor restarts a request process that dies, so a crash shows only here.
if grep -q '"request process died' "$work/serve.log"; then
    { echo "==> the request process crashed:"; grep -B5 '"request process died' "$work/serve.log" | head -40; } >&2; failed=1
fi
if grep -q '"level":"error"' "$work/serve.log"; then
    { echo "==> errors in the server log:"; grep '"level":"error"' "$work/serve.log" | head -20; } >&2; failed=1
fi
exit $failed
