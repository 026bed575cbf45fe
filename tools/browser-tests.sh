#!/usr/bin/env bash
# The browser tests of the web client (part of `make test`): headless Chromium (Debian's chromium
# and chromium-driver) driven by selenium (from PyPI, in .build/browser-venv) against a real
# `cafe serve --seed-demo` on a fresh embedded database, worker included. Screenshots of the cafe
# list and a cafe page go to .build/screenshots (docs/screenshots has the ones the README shows). The
# worker's mail goes to a test SMTP server the script starts (tools/test-smtp-server.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/lib.sh
venv=.build/browser-venv
selenium=4.27.1
python_venv "$venv" "selenium==$selenium" \
    "'$venv/bin/python' -c \"import selenium, sys; sys.exit(selenium.__version__ != '$selenium')\""

# A real SMTP server (aiosmtpd, as `make test` installs it) that the served worker delivers to; the
# story reads the reset and verification mails it receives from $mail.
mail=$(mktemp -d /tmp/cafe-mail.XXXXXX)
smtp_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 tools/test-smtp-server.py --dir "$mail" --port "$smtp_port" > "$mail/server.log" 2>&1 &
also_stop=$!
for _ in $(seq 1 50); do grep -q ready "$mail/server.log" && break; sleep 0.2; done
grep -q ready "$mail/server.log" || { cat "$mail/server.log"; kill "$also_stop"; exit 1; }
export SMTP_URL="smtp://127.0.0.1:$smtp_port"
start_cafe_serve --seed-demo
echo "==> browser tests against $base (mail to $SMTP_URL)"
"$venv/bin/python" Tests/Browser/web_client_test.py --base "$base" --screenshots .build/screenshots --admin-file "$work/demo-admin.txt" \
    --mail-dir "$mail" || { echo "--- server log"; tail -50 "$work/serve.log"; exit 1; }
