#!/usr/bin/env bash
# The browser tests of the web client (part of `make test`): headless Chromium (Debian's chromium
# and chromium-driver) driven by selenium (from PyPI, in .build/browser-venv) against a real
# `cafe serve --seed-demo` on a fresh embedded database, worker included. Screenshots of the cafe
# list and a cafe page go to .build/screenshots (docs/screenshots has the ones the README shows).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/browser-venv
selenium=4.27.1

if ! "$venv/bin/python" -c "import selenium, sys; sys.exit(selenium.__version__ != '$selenium')" 2>/dev/null; then
    echo "==> installing selenium $selenium into $venv"
    python3 -m venv "$venv" 2>/dev/null || { tools/ensure-packages python3-venv && rm -rf "$venv" && python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "selenium==$selenium"
fi

work=$(mktemp -d /tmp/cafe-browser.XXXXXX)
chmod 755 "$work"
cleanup() { [[ -n "${serve:-}" ]] && kill "$serve" 2>/dev/null && wait "$serve" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "==> starting cafe serve --seed-demo on a fresh embedded database"
CAFE_DATA_DIR="$work/pgdata" LOG_LEVEL=info .build/debug/cafe serve --port 0 --seed-demo > "$work/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 120); do
    port=$(grep -o '"url":"http://127.0.0.1:[0-9]*' "$work/serve.log" | grep -o '[0-9]*$' || true)
    [[ -n "$port" ]] && break
    kill -0 "$serve" 2>/dev/null || { cat "$work/serve.log"; exit 1; }
    sleep 0.5
done
[[ -n "${port:-}" ]] || { echo "cafe serve did not start"; cat "$work/serve.log"; exit 1; }

echo "==> browser tests against http://127.0.0.1:$port"
"$venv/bin/python" Tests/Browser/web_client_test.py --base "http://127.0.0.1:$port" --screenshots .build/screenshots \
    || { echo "--- server log"; tail -50 "$work/serve.log"; exit 1; }
