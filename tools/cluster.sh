#!/usr/bin/env bash
# `make cluster`: the service past one database server, on one machine — three PostgreSQL nodes under
# Patroni (one primary, a synchronous standby, a second standby; automatic failover), two `cafe serve`
# that write to whichever node is primary and read from the standbys (DATABASE_READ_URLS), two
# `cafe worker`, and nginx in front. pgBackRest archives the primary's WAL and keeps the backups the
# workers take from a standby (BACKUP_REPO: default backups/ in CLUSTER_DIR, s3://BUCKET[/PREFIX], or off).
# Prints the URL; Ctrl-C stops everything. CLUSTER_DIR holds the data and the logs (kept between
# runs), CLUSTER_PORT the load balancer's port (the API processes take the two after it), CAFE_BIN the
# binary (the release build; ClusterLoginTests runs this script on its debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then default_dir=/var/lib/cafe/cluster; else default_dir=.cafe/cluster; fi
DIR=$(realpath -m "${CLUSTER_DIR:-$default_dir}")
PORT=${CLUSTER_PORT:-8080}
BIN=${CAFE_BIN:-$PWD/.build/release/cafe}
mkdir -p "$DIR"
chmod 755 "$DIR"   # the postgres account must reach the data directories inside
# The processes started, by what they are; they stop in groups (see cleanup).
etcd_pids=() node_pids=() client_pids=()
# Stops what runs in order, each group once the one before it has exited: the database's clients (the
# balancer, the API processes, the workers), then the nodes, then etcd. A Patroni node that stops talks
# to etcd on its way out: stopped all at once, every node's log ended in etcd connection errors and
# retries, and one stop in CI outlasted the 60 s ClusterLoginTests allows it. In this order it takes
# about 5 s here, with none.
any_alive() { local pid; for pid; do kill -0 "$pid" 2>/dev/null && return 0; done; return 1; }
# A process that has not exited 20 s after SIGTERM gets SIGKILL: a Patroni stuck in its bootstrap
# once outlived the script.
stop() {
    (( $# )) || return 0
    kill "$@" 2>/dev/null || true
    for _ in $(seq 1 200); do
        any_alive "$@" || break
        sleep 0.1
    done
    kill -KILL "$@" 2>/dev/null || true
    wait "$@" 2>/dev/null || true
}
cleanup() {
    trap - EXIT INT TERM
    echo "stopping the cluster…"
    stop "${client_pids[@]}"
    # Nodes a failover drill brought back run outside this script's children: Patroni stops its
    # PostgreSQL on SIGTERM.
    pkill -TERM -f "patroni $DIR/node" 2>/dev/null || true
    stop "${node_pids[@]}"
    # …and their PostgreSQL may still be shutting down after Patroni exits: a caller that removes the
    # directory next (the drill) found files appearing under it. Wait for every process started with
    # a path under the nodes' directories (Patroni, postmasters), SIGKILL past 20 s.
    local strays
    strays=$(pgrep -f -- "$DIR/node" || true)
    for _ in $(seq 1 200); do
        [ -n "$strays" ] && any_alive $strays || break
        sleep 0.1
    done
    [ -n "$strays" ] && kill -KILL $strays 2>/dev/null || true
    stop "${etcd_pids[@]}"
    wait 2>/dev/null || true
}
# A signal stops the script too: bash resumes a script after a trap's handler returns, and one stopped
# while it was still starting the cluster went on to start the rest, with nothing left to stop them.
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
# start GROUP NAME COMMAND…: runs it in the background, its output in NAME.log, its pid kept in the
# group's list (etcd, node, or client: the balancer, the API processes and the workers).
start() {
    local group=$1 name=$2
    case $group in etcd | node | client) ;; *) echo "start: no group '$group'" >&2; exit 1 ;; esac
    local -n started=${group}_pids
    shift 2
    "$@" >"$DIR/$name.log" 2>&1 &
    started+=($!)
}
# wait_for FILE PATTERN: until the log shows the line, or fail after 120 s.
wait_for() {
    for _ in $(seq 1 1200); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "timed out waiting for '$2' in $1:" >&2; tail -20 "$1" >&2; exit 1
}

# PostgreSQL under Patroni (Debian's patroni, with one etcd as its DCS): three nodes, synchronous
# replication (`synchronous_mode`: a commit is acknowledged once it is on a second node, so a failover
# loses no acknowledged write), automatic failover, pg_rewind for a node that comes back.
# Patroni runs PostgreSQL, which refuses root: as root, every node runs as the postgres account.
# setpriv and env exec: the pid `start` records is the server's own, so stopping it stops the server.
# Whatever runs as postgres starts in the cluster's directory (`env -C`), which it owns: Patroni's
# bootstrap (Python multiprocessing) changes into its working directory, and a checkout under /root
# is one postgres cannot enter; started there, no node ever became leader.
if [ "$(id -u)" = 0 ]; then AS_DB=(setpriv --reuid=postgres --regid=postgres --init-groups -- env -C "$DIR"); else AS_DB=(env -C "$DIR"); fi
as_db() { "${AS_DB[@]}" "$@"; }
db_owner() { if [ "$(id -u)" = 0 ]; then chown -R postgres "$@"; fi; }
ETCD_PORT=$((PORT + 10)) NODE_PORT=$((PORT + 20)) REST_PORT=$((PORT + 30))
mkdir -p "$DIR/etcd"; db_owner "$DIR/etcd"
echo "etcd…"
start etcd etcd "${AS_DB[@]}" etcd --name cafe-etcd --data-dir "$DIR/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "cafe-etcd=http://127.0.0.1:$((ETCD_PORT + 1))"
wait_for "$DIR/etcd.log" 'ready to serve client requests'
# Continuous archiving and backups (docs/operations.md, "Backups and restore"): one pgBackRest
# configuration for the three nodes, written by the service (`cafe backup configure`). Whichever node is
# primary archives its WAL (archive_command; archive_timeout = BACKUP_MAX_LOSS); a standby fetches from the
# archive what streaming no longer has (restore_command); a node with an empty data directory (new,
# or rejoining after its disk was lost) is built from the repository's newest backup and the archive
# (create_replica_methods), pg_basebackup from the primary only when the repository has none yet. The
# workers take the scheduled backups (BACKUP_CONFIG), reading the files from a standby.
BACKUP_REPO=${BACKUP_REPO:-$DIR/backups}
backup_conf=""
if [ "$BACKUP_REPO" != off ]; then
    backup_nodes=()
    for n in 1 2 3; do backup_nodes+=("$DIR/node$n/data:$((NODE_PORT + n)):$DIR/node$n"); done
    backup_conf=$(env -u DATABASE_URL -u BACKUP_CONFIG BACKUP_REPO="$BACKUP_REPO" "$BIN" backup configure \
        --output "$DIR/pgbackrest/pgbackrest.conf" "${backup_nodes[@]}")
fi
# backup_replica NODE_DIR, backup_parameters NODE_DIR: the node's lines of patroni.yml's `postgresql:`
# and of its `parameters:` (none when off). pgBackRest makes a relative WAL path absolute with pg1-path:
# each node's commands name its own directory.
backup_command() { echo "/usr/bin/pgbackrest --config=$backup_conf --stanza=cafe --pg1-path=$1/data"; }
backup_replica() {
    [ -n "$backup_conf" ] || return 0
    cat <<YML
  create_replica_methods: [pgbackrest, basebackup]
  pgbackrest:
    command: '$(backup_command "$1") --delta --type=standby restore'
    keep_data: true
    no_params: true
  basebackup:
    checkpoint: fast
  recovery_conf:
    restore_command: '$(backup_command "$1") archive-get %f "%p"'
YML
}
backup_parameters() {
    [ -n "$backup_conf" ] || return 0
    cat <<YML
    archive_mode: "on"
    archive_command: '$(backup_command "$1") archive-push %p'
    archive_timeout: ${BACKUP_MAX_LOSS:-60}
YML
}
hosts=""; ports=""
for n in 1 2 3; do
    node=$DIR/node$n
    mkdir -p "$node"; chmod 700 "$node"
    cat >"$node/patroni.yml" <<YML
scope: cafe
name: node$n
restapi:
  listen: 127.0.0.1:$((REST_PORT + n))
  connect_address: 127.0.0.1:$((REST_PORT + n))
etcd3:
  hosts: 127.0.0.1:$ETCD_PORT
bootstrap:
  dcs:
    ttl: ${FAILOVER_TTL:-8}
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: ${SYNCHRONOUS_MODE:-true}
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: "on"
        synchronous_commit: "on"
        max_connections: 200
  initdb:
  - encoding: UTF8
  - locale: C.UTF-8
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$((NODE_PORT + n))
  connect_address: 127.0.0.1:$((NODE_PORT + n))
  data_dir: $node/data
  bin_dir: /usr/lib/postgresql/15/bin
  pgpass: $node/pgpass
  authentication:
    replication: {username: postgres}
    superuser: {username: postgres}
    rewind: {username: postgres}
$(backup_replica "$node")
  parameters:
    unix_socket_directories: $node
$(backup_parameters "$node")
YML
    db_owner "$node"
    echo "node$n…"
    start node "node$n" "${AS_DB[@]}" patroni "$node/patroni.yml"
    hosts+="${hosts:+,}127.0.0.1"; ports+="${ports:+,}$((NODE_PORT + n))"
done
# The leader, once elected, gets the service's database.
leader=""
for _ in $(seq 1 600); do
    for n in 1 2 3; do
        if curl -fs "http://127.0.0.1:$((REST_PORT + n))/primary" >/dev/null 2>&1; then leader=$n; break 2; fi
    done
    sleep 0.2
done
[ -n "$leader" ] || { echo "no leader elected; see $DIR/node*.log" >&2; exit 1; }
until as_db psql -qAt -h 127.0.0.1 -p $((NODE_PORT + leader)) -U postgres -d postgres -c "SELECT 1" >/dev/null 2>&1; do sleep 0.2; done
as_db psql -qAt -h 127.0.0.1 -p $((NODE_PORT + leader)) -U postgres -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'cafe'" | grep -q 1 \
    || as_db psql -q -h 127.0.0.1 -p $((NODE_PORT + leader)) -U postgres -d postgres -c "CREATE DATABASE cafe"
# Every node has it before anything connects (up to 120 s each): libpq gives up on its list of hosts at a
# standby that answers "database does not exist" (it has not replayed the CREATE DATABASE yet) instead
# of trying the next one, and the first API process failed to start that way in CI.
for n in 1 2 3; do
    for _ in $(seq 1 600); do
        as_db psql -qAt -h 127.0.0.1 -p $((NODE_PORT + n)) -U postgres -d cafe -c "SELECT 1" >/dev/null 2>&1 && break
        sleep 0.2
    done
done
# Writes find the primary wherever it is (libpq tries each host, keeps the one that takes writes);
# each node is also listed for the public reads, which go to the ones that are standbys and caught up.
PRIMARY="host=$hosts port=$ports dbname=cafe user=postgres target_session_attrs=read-write connect_timeout=2"
STANDBY=""
for n in 1 2 3; do STANDBY+="${STANDBY:+,}host=127.0.0.1 port=$((NODE_PORT + n)) dbname=cafe user=postgres connect_timeout=2"; done

export DATABASE_URL=$PRIMARY DATABASE_READ_URLS=$STANDBY
# With DATABASE_URL the service reads the deployment's pgBackRest configuration, not BACKUP_REPO. The
# stanza is made before anything writes (until it exists, every archived segment fails); `check` also
# sees a WAL switch arrive in the repository.
if [ -n "$backup_conf" ]; then
    unset BACKUP_REPO; export BACKUP_CONFIG=$backup_conf
    echo "backup repository…"
    "$BIN" backup check >"$DIR/backup-check.log" 2>&1 || { echo "the backup repository refused the cluster:" >&2; tail -5 "$DIR/backup-check.log" >&2; exit 1; }
else
    export BACKUP_REPO=off
fi
# The load balancer is the only trusted proxy: its X-Forwarded-For names each client, so rate limits
# and log-in hold-offs count clients, not the balancer.
export TRUSTED_PROXIES=127.0.0.1
echo "API processes and workers…"
start client api1 "$BIN" serve --port $((PORT + 1)) --seed-demo
wait_for "$DIR/api1.log" '"msg":"serving"'
start client api2 "$BIN" serve --port $((PORT + 2)) --no-migrate
start client worker1 "$BIN" worker
start client worker2 "$BIN" worker
wait_for "$DIR/api2.log" '"msg":"serving"'

# The shipped balancer (deploy/nginx.conf), its body limit derived from the service's.
LB_LISTEN=127.0.0.1:$PORT LB_UPSTREAMS="127.0.0.1:$((PORT + 1)) 127.0.0.1:$((PORT + 2))" LB_DIR=$DIR \
    deploy/nginx-render.sh >"$DIR/nginx.conf"
echo "load balancer…"
start client lb nginx -c "$DIR/nginx.conf" -p "$DIR" -g 'daemon off;'
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null || { echo "the load balancer does not answer; see $DIR/lb-error.log" >&2; exit 1; }

cat <<DONE

  CafeReview cluster: http://127.0.0.1:$PORT/
    database $PRIMARY
    nodes    Patroni: curl http://127.0.0.1:$((REST_PORT + 1))/cluster (node$leader was elected first)
    reads    the standbys among the nodes (see cafe_db_reads_total on each API's /metrics)
    backups  ${backup_conf:-off}${backup_conf:+ (pgBackRest; BACKUP_CONFIG=$backup_conf cafe backup list)}
    api      http://127.0.0.1:$((PORT + 1))/  http://127.0.0.1:$((PORT + 2))/   workers: 2
    logs     $DIR/*.log
$(grep -m2 -E 'username: |password: ' "$DIR/api1.log" | sed 's/^ */    demo admin /' || true)
  Ctrl-C stops it.
DONE
# Runs until a process the cluster cannot do without exits: any but a database node, which may die
# (that is what failover is for).
wait -n "${etcd_pids[@]}" "${client_pids[@]}"
echo "a process of the cluster exited; see $DIR/*.log" >&2
exit 1
