# Shared by the scripts that run a real server for an outside tool (fuzz.sh, browser-tests.sh).
# Source it from the repository root.

# python_venv DIR REQUIREMENT CHECK: a virtual environment in DIR with REQUIREMENT installed from
# PyPI, unless CHECK (a command) already succeeds.
python_venv() {
    local venv=$1 requirement=$2 check=$3
    eval "$check" >/dev/null 2>&1 && return 0
    echo "==> installing $requirement into $venv"
    # Debian's own python3 needs python3-venv for this; a python3 from elsewhere has it built in.
    python3 -m venv "$venv" 2>/dev/null || { tools/ensure-packages python3-venv && rm -rf "$venv" && python3 -m venv "$venv"; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$requirement"
}

# start_cafe_serve ARGS...: `cafe serve --port 0 ARGS` on a fresh embedded database in a temporary
# directory under /tmp (the postgres account must reach it even when the checkout is under /root).
# Sets `work`, `serve` (its pid), `port` and `base`; stops it and removes the directory on exit.
start_cafe_serve() {
    work=$(mktemp -d /tmp/cafe-tool.XXXXXX)
    chmod 755 "$work"
    # `also_stop`: pids of helpers the caller started (a test SMTP server), stopped with it.
    trap '[[ -n "${serve:-}" ]] && kill "$serve" 2>/dev/null && wait "$serve" 2>/dev/null; [[ -n "${also_stop:-}" ]] && kill $also_stop 2>/dev/null; rm -rf "$work"' EXIT
    export CAFE_DATA_DIR="$work/pgdata"
    echo "==> starting cafe serve $* on a fresh embedded database"
    LOG_LEVEL=info .build/debug/cafe serve --port 0 "$@" > "$work/serve.log" 2>&1 &
    serve=$!
    port=
    for _ in $(seq 1 120); do
        port=$(grep -o '"url":"http://127.0.0.1:[0-9]*' "$work/serve.log" | grep -o '[0-9]*$' || true)
        [[ -n "$port" ]] && break
        kill -0 "$serve" 2>/dev/null || { cat "$work/serve.log"; exit 1; }
        sleep 0.5
    done
    [[ -n "$port" ]] || { echo "cafe serve did not start"; cat "$work/serve.log"; exit 1; }
    base="http://127.0.0.1:$port"
}
