#!/usr/bin/env python3
"""`make failover-drill`, on a running `make cluster` (tools/failover-drill.sh starts one): clients
post comments and read pages through nginx while the drill kills the primary node (SIGKILL of its
Patroni and its postmaster: a machine that dies), waits for Patroni to promote the synchronous
standby, brings the old node back (it rejoins as a standby, pg_rewind where needed), and prints what
the clients saw. Several runs in a row, each killing whichever node is primary then. Live watchers (one
event stream per cafe the writers post to, through nginx) reconnect with Last-Event-ID whenever their
stream ends, and must have seen every comment acknowledged on their cafe.
"""
import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time


def request(port, method, path, body=None, token=None, timeout=5, key=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if key:
        headers["Idempotency-Key"] = key
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, data, response.getheader("Retry-After")
    except (OSError, http.client.HTTPException) as error:
        return 0, str(error).encode(), None
    finally:
        connection.close()


class Drill:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.acknowledged = []          # (time, comment id)
        self.writes = []                # (time, status, retry_after)
        self.reads = []                 # (time, status, retry_after)
        self.stop = threading.Event()
        self.read_refusals = {}
        self.live_seen = {}             # cafe -> comment ids its watcher saw
        self.watchers_stop = threading.Event()   # set after the writers' last comments have had time to arrive
        self.live_resumed = 0           # reconnections with Last-Event-ID

    def members(self):
        for n in (1, 2, 3):
            status, data, _ = request(self.args.rest_port + n, "GET", "/cluster", timeout=2)
            if status == 200:
                return {m["name"]: m for m in json.loads(data)["members"]}
        return {}

    def leader(self):
        return next((name for name, m in self.members().items() if m["role"] == "leader" and m["state"] == "running"), None)

    def sql(self, query):
        dsn = self.args.database
        command = ["psql", dsn, "-qAtc", query]
        if os.getuid() == 0:
            command = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command
        return subprocess.run(command, capture_output=True, text=True, check=True, cwd=self.args.dir).stdout.strip()

    def writer(self, token, cafes, number):
        n = 0
        while not self.stop.is_set():
            cafe = cafes[(number + n) % len(cafes)]
            # When it was sent: a write sent after the kill and acknowledged is one the new primary took.
            sent = time.monotonic()
            status, data, retry = request(self.args.port, "POST", f"/v1/cafes/{cafe}/comments",
                                          {"detail": f"drill {number}-{n}", "star": n % 3 + 1}, token)
            with self.lock:
                self.writes.append((sent, status, retry))
                if status == 201:
                    self.acknowledged.append((sent, json.loads(data)["id"], cafe))
            n += 1
            if status != 201:
                time.sleep(0.1)

    def reader(self, cafes):
        n = 0
        while not self.stop.is_set():
            path = "/v1/cafes?limit=20" if n % 2 else f"/v1/cafes/{cafes[n % len(cafes)]}/comments?limit=20"
            sent = time.monotonic()
            status, data, retry = request(self.args.port, "GET", path)
            if status == 503:
                try:
                    status_code = json.loads(data).get("code")
                except ValueError:
                    status_code = "?"
                with self.lock:
                    self.read_refusals[status_code] = self.read_refusals.get(status_code, 0) + 1
            with self.lock:
                self.reads.append((sent, status, retry))
            n += 1
            time.sleep(0.02)

    def watcher(self, cafe, opened):
        """One cafe's event stream, resumed with Last-Event-ID each time it ends (a failover, a restart)."""
        seen = self.live_seen.setdefault(cafe, set())
        last = None
        while not self.watchers_stop.is_set():
            connection = http.client.HTTPConnection("127.0.0.1", self.args.port, timeout=30)
            try:
                connection.request("GET", f"/v1/cafes/{cafe}/live", headers={"Accept": "text/event-stream", **({"Last-Event-ID": last} if last else {})})
                response = connection.getresponse()
                if response.status != 200:
                    time.sleep(0.5)
                    continue
                if last:
                    with self.lock:
                        self.live_resumed += 1
                opened.set()
                event = {}
                while not self.watchers_stop.is_set():
                    line = response.readline()
                    if not line:
                        break
                    line = line.decode().rstrip("\n")
                    if line == "":
                        if event.get("event") == "comment.created":
                            with self.lock:
                                seen.add(json.loads(event["data"])["id"])
                        last = event.get("id", last)
                        event = {}
                    elif not line.startswith(":"):
                        key, _, value = line.partition(": ")
                        event[key] = value
            except (OSError, http.client.HTTPException, ValueError):
                pass
            finally:
                connection.close()
            time.sleep(0.2)

    def start_node(self, name):
        config = os.path.join(self.args.dir, name, "patroni.yml")
        command = ["patroni", config]
        if os.getuid() == 0:
            command = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command
        log = open(os.path.join(self.args.dir, f"{name}.log"), "a")
        # In the cluster's directory, which postgres owns: not the checkout, which it may not enter.
        return subprocess.Popen(command, stdout=log, stderr=log, start_new_session=True, cwd=self.args.dir)

    def kill_node(self, name):
        """SIGKILL of the node's Patroni and its postmaster, as if the machine died."""
        data = os.path.join(self.args.dir, name, "data")
        with open(os.path.join(data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        # Its backends too: a backend outlives its postmaster for a moment and could still commit.
        try:
            with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
                children = [int(p) for p in f.read().split()]
        except OSError:
            children = []
        config = os.path.join(self.args.dir, name, "patroni.yml")
        patronis = [int(p) for p in subprocess.run(["pgrep", "-f", f"patroni {config}"], capture_output=True, text=True).stdout.split()]
        for pid in patronis + [postmaster] + children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def run_once(self, number, tokens, cafes, restarted):
        self.acknowledged, self.writes, self.reads = [], [], []
        self.live_seen, self.live_resumed = {}, 0
        self.stop.clear()
        self.watchers_stop.clear()
        watching = []
        for cafe in cafes:
            opened = threading.Event()
            thread = threading.Thread(target=self.watcher, args=(cafe, opened), daemon=True)
            thread.start()
            watching.append(opened)
        for opened in watching:
            opened.wait(30)
        threads = [threading.Thread(target=self.writer, args=(tokens[i % len(tokens)], cafes, i), daemon=True) for i in range(self.args.writers)]
        threads += [threading.Thread(target=self.reader, args=(cafes,), daemon=True) for _ in range(self.args.readers)]
        for t in threads:
            t.start()
        time.sleep(self.args.warmup)
        old = self.leader()
        if old is None:
            raise SystemExit("no leader to kill")
        # A write with an idempotency key, answered before the kill; sent again after the failover,
        # it must get the same answer and not be applied twice.
        key = f"drill-{number}-{os.urandom(4).hex()}"
        _, first, _ = request(self.args.port, "POST", f"/v1/cafes/{cafes[0]}/comments", {"detail": f"keyed {key}", "star": 2}, tokens[0], key=key)
        self.kill_node(old)
        killed = time.monotonic()
        # Writes come back when a standby is promoted and the pools have found it.
        first_write = None
        while first_write is None and time.monotonic() - killed < 60:
            with self.lock:
                first_write = next((t for t, _, _ in self.acknowledged if t > killed), None)
            time.sleep(0.05)
        new = None
        while time.monotonic() - killed < 90:
            new = self.leader()
            if new and new != old:
                break
            time.sleep(0.2)
        restarted.append(self.start_node(old))
        rejoined = False
        while time.monotonic() - killed < 120:
            member = self.members().get(old)
            if member and member["role"] in ("replica", "sync_standby") and member["state"] in ("running", "streaming"):
                rejoined = True
                break
            time.sleep(0.5)
        time.sleep(self.args.after)
        self.stop.set()
        for t in threads:
            t.join(10)
        # What the watchers missed: every acknowledged comment on their cafe, given a moment to arrive.
        for _ in range(50):
            with self.lock:
                live_missing = [i for _, i, cafe in self.acknowledged if i not in self.live_seen.get(cafe, set())]
            if not live_missing:
                break
            time.sleep(0.2)
        self.watchers_stop.set()
        retried = None
        for _ in range(50):
            status, again, _ = request(self.args.port, "POST", f"/v1/cafes/{cafes[0]}/comments", {"detail": f"keyed {key}", "star": 2}, tokens[0], key=key)
            if status < 500:
                retried = again
                break
            time.sleep(0.2)
        keyed_rows = int(self.sql(f"SELECT count(*) FROM comments WHERE detail = 'keyed {key}'"))
        idempotent = retried is not None and json.loads(retried).get("id") == json.loads(first).get("id") and keyed_rows == 1
        # Every acknowledged comment is on the new primary.
        ids = [i for _, i, _ in self.acknowledged]
        present = set()
        for start in range(0, len(ids), 500):
            chunk = ",".join(str(int(i)) for i in ids[start:start + 500])
            present |= set(self.sql(f"SELECT id FROM comments WHERE id IN ({chunk})").split())
        missing = len(set(ids) - present)
        # The aggregates after the worker's passes (the outbox drained).
        exact = False
        for _ in range(60):
            backlog = int(self.sql("SELECT count(*) FROM aggregation_outbox"))
            drift = int(self.sql("""SELECT count(*) FROM cafe_stats s LEFT JOIN (SELECT cafe_id, count(*) n, sum(star) t FROM comments GROUP BY cafe_id) a
                                    ON a.cafe_id = s.cafe_id WHERE s.comment_sum <> coalesce(a.n, 0) OR s.comment_amount <> coalesce(a.t, 0)"""))
            if backlog == 0 and drift == 0:
                exact = True
                break
            time.sleep(1)
        outage_end = first_write or time.monotonic()
        during = [s for t, s, _ in self.reads if killed <= t <= outage_end]
        bad = [(s, r) for _, s, r in self.writes + self.reads if s >= 500 and not (s == 503 and r)]
        unanswered = [s for _, s, _ in self.writes + self.reads if s == 0]
        writes_back = (first_write - killed) if first_write else None
        print(f"run {number}: killed {old}, promoted {new}")
        print(f"  writes back after the kill:     {writes_back:.1f} s" if writes_back is not None else "  writes back after the kill:     never (60 s)")
        answers = {}
        for status in during:
            answers[status] = answers.get(status, 0) + 1
        print(f"  reads answered during the outage: {sum(1 for s in during if s == 200)}/{len(during)}"
              f" ({100 * sum(1 for s in during if s == 200) / max(1, len(during)):.0f}%; statuses {dict(sorted(answers.items()))})")
        if self.read_refusals:
            print(f"  reads refused, by code:         {self.read_refusals}")
        self.read_refusals = {}
        print(f"  acknowledged writes:            {len(ids)}, missing on the new primary: {missing}")
        print(f"  aggregates exact:               {'yes' if exact else 'NO'}")
        print(f"  live watchers ({len(cafes)}, resumed {self.live_resumed} times with Last-Event-ID): {len(ids) - len(live_missing)}/{len(ids)} comments seen")
        print(f"  5xx other than 503 + Retry-After: {len(bad)}; connections refused or cut: {len(unanswered)}")
        print(f"  {old} back as a standby:         {'yes' if rejoined else 'NO'}")
        print(f"  a keyed write retried after it:  {'answered as before, applied once' if idempotent else 'NOT idempotent'}")
        ok = writes_back is not None and writes_back <= 30 and missing == 0 and exact and not bad and rejoined and idempotent and not live_missing
        return ok

    def main(self):
        status, data, _ = request(self.args.port, "GET", "/v1/cafes?limit=5")
        cafes = [c["id"] for c in json.loads(data)["items"]]
        tokens = []
        suffix = os.urandom(3).hex()
        for i in range(self.args.writers):
            status, data, _ = request(self.args.port, "POST", "/v1/users", {"username": f"drill_{suffix}_{i}", "password": "drill password"}, timeout=30)
            tokens.append(json.loads(data)["sessionToken"])
        restarted = []
        results = []
        try:
            for number in range(1, self.args.runs + 1):
                results.append(self.run_once(number, tokens, cafes, restarted))
        finally:
            pass
        print("drill:", "passed" if all(results) else "FAILED", f"({sum(results)}/{len(results)} runs)")
        return 0 if all(results) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rest-port", type=int, required=True, help="Patroni's REST port of node 0 (node n is this + n)")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--after", type=float, default=3)
    sys.exit(Drill(parser.parse_args()).main())
