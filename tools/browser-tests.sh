#!/usr/bin/env bash
# The browser tests of the web client (part of `make test`): headless Chromium (Debian's chromium
# and chromium-driver) driven by selenium (from PyPI, in .build/browser-venv) against a real
# `cafe serve --seed-demo` on a fresh embedded database, worker included. Screenshots of the cafe
# list and a cafe page go to .build/screenshots (docs/screenshots has the ones the README shows).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/lib.sh
venv=.build/browser-venv
selenium=4.27.1
python_venv "$venv" "selenium==$selenium" \
    "'$venv/bin/python' -c \"import selenium, sys; sys.exit(selenium.__version__ != '$selenium')\""

start_cafe_serve --seed-demo
echo "==> browser tests against $base"
"$venv/bin/python" Tests/Browser/web_client_test.py --base "$base" --screenshots .build/screenshots --admin-file "$work/demo-admin.txt" \
    || { echo "--- server log"; tail -50 "$work/serve.log"; exit 1; }
