#!/usr/bin/env python3
"""bench/backup.sh: what backups cost and what they promise, on the bench database (200,000 cafes and
2,000,000 comments by default), with the service's own commands:

1. the list's rate and p99 while a full backup runs, against the same list without one, alternated;
2. restore time (`cafe restore --latest --into` a new directory: pgBackRest's restore, the replay, the
   migrations check, the full reconcile and the photo check) from a directory repository, with the
   database's and the repository's sizes;
3. the recovery point: writers post comments, the primary is SIGKILLed and its data directory thrown
   away (a lost disk), `cafe restore --latest` brings back what the archive holds: the oldest
   acknowledged write missing, in seconds before the crash (the goal: at most BACKUP_MAX_LOSS);
4. the restored database backed up to an S3 repository (SeaweedFS over TLS on loopback) and restored
   from it into a new directory, as on a new machine.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from backup_drill import ObjectStore, Service as DrillService, request  # noqa: E402


def wrk(port, seconds, connections):
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", f"http://127.0.0.1:{port}/v1/cafes?limit=20"],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    value, unit = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)$", out, re.M).groups()
    return rate, float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]


def size(path):
    return int(subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout.split()[0])


def gigabytes(n):
    return f"{n / 1e9:.2f} GB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--cafe", required=True)
    parser.add_argument("--cafes", type=int, default=200_000)
    parser.add_argument("--comments", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--write-seconds", type=int, default=90)
    args = parser.parse_args()
    root = args.dir
    store = ObjectStore(f"{root}/seaweedfs")
    live = f"{root}/pgdata"
    base = {"MIGRATIONS_DIR": os.path.abspath("migrations"), "LOG_LEVEL": "warning", "PAGE_CACHE_BYTES": "0",
            "RATE_LIMIT_WRITES": "0", "RATE_LIMIT_READS": "0", "RATE_LIMIT_LOGINS": "0", **store.environment()}
    s3 = {**base, "BACKUP_REPO": "s3://drill/bench"}
    log = f"{root}/service.log"
    started_services = []

    def Service(cafe, data, environment, log):   # every service started is stopped at the end, however it ends
        service = DrillService(cafe, data, environment, log)
        started_services.append(service)
        return service

    try:
        print(f"==> seeding {args.cafes} cafes and {args.comments} comments", flush=True)
        service = Service(args.cafe, live, base, log)
        started = time.time()
        service.command("seed", "--cafes", str(args.cafes), "--comments", str(args.comments))
        service.sql("VACUUM ANALYZE")
        database = int(service.sql("SELECT pg_database_size('cafe')"))
        print(f"    seeded in {time.time() - started:.0f} s; database {gigabytes(database)}", flush=True)

        print(f"==> the list (GET /v1/cafes, page cache off, 16 connections) without and during a full backup, {args.rounds} rounds", flush=True)
        ratios, backups = [], []
        for n in range(args.rounds):
            alone = wrk(service.port, args.seconds, 16)
            backup = subprocess.Popen([args.cafe, "backup", "now", "--full"], env=service.environment, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
            began = time.time()
            time.sleep(1.5)
            during = wrk(service.port, args.seconds, 16)
            overlapped = backup.poll() is None
            backup.wait()
            backups.append(time.time() - began)
            ratios.append((during[0] / alone[0], during[1] / alone[1]))
            print(f"    round {n + 1}: alone {alone[0]:.0f}/s p99 {alone[1]:.1f} ms; during {during[0]:.0f}/s p99 {during[1]:.1f} ms "
                  f"-> rate {ratios[-1][0]:.2f}x, p99 {ratios[-1][1]:.2f}x; the backup took {backups[-1]:.0f} s"
                  + ("" if overlapped else " (and ended inside the window)"), flush=True)
        service.stop()
        directory_repo = f"{root}/backups"

        print("==> restore --latest from the directory repository into a new directory", flush=True)
        _, seconds = service.command("restore", "--latest", "--into", f"{root}/restored-directory")
        directory_restore = seconds
        print(f"    {seconds:.0f} s (repository {gigabytes(size(directory_repo))})", flush=True)

        print(f"==> the recovery point: writers for {args.write_seconds} s, then the primary is killed and its disk lost", flush=True)
        service = Service(args.cafe, live, base, log)
        status, data = request(service.port, "GET", "/v1/cafes?limit=8")
        cafes = [c["id"] for c in json.loads(data)["items"]]
        acknowledged, lock, stop = [], threading.Lock(), threading.Event()

        def writer(token, number):
            n = 0
            while not stop.is_set():
                status, data = request(service.port, "POST", f"/v1/cafes/{cafes[(number + n) % len(cafes)]}/comments",
                                       {"detail": f"recovery point {number}-{n}", "star": n % 3 + 1}, token)
                if status == 201:
                    with lock:
                        acknowledged.append((time.time(), json.loads(data)["id"]))
                n += 1

        tokens = [json.loads(request(service.port, "POST", "/v1/users", {"username": f"rpo_{i}", "password": "bench password"})[1])["sessionToken"]
                  for i in range(4)]
        threads = [threading.Thread(target=writer, args=(t, i)) for i, t in enumerate(tokens)]
        for t in threads:
            t.start()
        time.sleep(args.write_seconds)
        with open(f"{live}/postmaster.pid") as f:
            postmaster = int(f.readline())
        os.kill(postmaster, signal.SIGKILL)
        crashed = time.time()
        subprocess.run(["pkill", "-KILL", "-P", str(service.process.pid)])
        service.process.kill()
        service.process.wait()
        stop.set()
        for t in threads:
            t.join()
        os.rename(live, f"{live}.lost")
        _, seconds = service.command("restore", "--latest", "--into", f"{root}/after-crash")
        restored = Service(args.cafe, f"{root}/after-crash", base, log)
        ids = set(restored.sql("SELECT id FROM comments WHERE detail LIKE 'recovery point %'").split())
        restored.stop()
        before = [a for a in acknowledged if a[0] <= crashed]
        missing = [a for a in before if a[1] not in ids]
        point = crashed - min(a[0] for a in missing) if missing else 0.0
        print(f"    {len(before)} writes acknowledged before the crash, {len(missing)} missing after restore --latest ({seconds:.0f} s); "
              f"the oldest missing was acknowledged {point:.1f} s before the crash (BACKUP_MAX_LOSS 60 s)", flush=True)

        print("==> a full backup to S3 (SeaweedFS over TLS), then restore --latest from it into a new directory", flush=True)
        service = Service(args.cafe, f"{root}/after-crash", s3, log)
        _, s3_backup = service.command("backup", "now", "--full")
        service.stop()
        _, s3_restore = service.command("restore", "--latest", "--into", f"{root}/restored-s3")
        print(f"    backup {s3_backup:.0f} s, restore {s3_restore:.0f} s (bucket {gigabytes(size(f'{root}/seaweedfs/data'))} on disk)", flush=True)

        rate = sorted(r[0] for r in ratios)[len(ratios) // 2]
        p99 = sorted(r[1] for r in ratios)[len(ratios) // 2]
        print("\nbackups at", f"{args.cafes} cafes / {args.comments} comments, database {gigabytes(database)}:")
        print(f"  the list during a full backup:  rate {rate:.2f}x, p99 {p99:.2f}x (medians of {args.rounds} rounds; goal >= 0.8x, <= 2x)")
        print(f"  a full backup:                  {min(backups):.0f}-{max(backups):.0f} s to a directory, {s3_backup:.0f} s to S3")
        print(f"  restore --latest:               {directory_restore:.0f} s from a directory, {s3_restore:.0f} s from S3 (goal <= 300 s)")
        print(f"  recovery point after a lost disk: {point:.1f} s ({len(missing)} of {len(before)} acknowledged writes; goal <= 60 s)")
    finally:
        for service in started_services:
            if service.process.poll() is None:
                service.process.terminate()
                service.process.wait(timeout=60)
        store.process.terminate()


if __name__ == "__main__":
    main()
