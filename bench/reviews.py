#!/usr/bin/env python3
"""Helpful votes flowing (`make bench`, bench/reviews.sh).

  reviews.py votes BASE CONNINFO TOKENS_FILE COMMENTS_FILE RATE SECONDS
      votes RATE times a second for SECONDS, each vote a new (voter, comment) pair from the files (one
      session token a line; one comment id a line, none voted yet), and watches the database every 50 ms
      for each voted comment's helpfulCount. Prints JSON: votes, 201s, the delay from each vote's 201
      to the count showing it (p50, p99, max, in ms) and how many never showed within 10 s.
"""
import http.client
import json
import subprocess
import sys
import threading
import time
from urllib.parse import urlparse


def votes(base, conninfo, tokens_file, comments_file, rate, seconds):
    tokens = open(tokens_file).read().split()
    comments = open(comments_file).read().split()
    total = int(rate * seconds)
    assert len(comments) >= total, f"{len(comments)} comments for {total} votes"
    answered = {}   # comment id -> when its vote's 201 arrived
    lock = threading.Lock()
    statuses = []
    u = urlparse(base)
    senders = 8

    def send(k):
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        start = time.monotonic()
        for i in range(k, total, senders):
            time.sleep(max(0.0, start + i / rate - time.monotonic()))
            comment, token = comments[i], tokens[i % len(tokens)]
            conn.request("PUT", f"/v1/comments/{comment}/helpful", headers={"Authorization": f"Bearer {token}"})
            r = conn.getresponse()
            r.read()
            now = time.monotonic()
            with lock:
                statuses.append(r.status)
                if r.status == 201:
                    answered[comment] = now
    threads = [threading.Thread(target=send, args=(k,)) for k in range(senders)]
    for t in threads:
        t.start()
    seen = {}
    # One psql for the whole watch (a process started every poll would load the machine it measures).
    db = subprocess.Popen(["psql", conninfo, "-XAtq"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    def counted(ids):
        db.stdin.write(f"SELECT id FROM comments WHERE id = ANY('{{{','.join(ids)}}}'::bigint[]) AND helpful_count > 0;\n\\echo END\n")
        db.stdin.flush()
        found = []
        for line in db.stdout:
            if line.strip() == "END":
                return found
            found.append(line.strip())
        return found
    deadline = time.monotonic() + seconds + 10
    while time.monotonic() < deadline:
        with lock:
            waiting = [c for c in answered if c not in seen]
            done_sending = not any(t.is_alive() for t in threads)
        if waiting:
            out = counted(waiting)
            now = time.monotonic()
            for c in out:
                seen[c] = now
        elif done_sending:
            break
        time.sleep(0.05)
    db.stdin.close()
    db.wait()
    delays = sorted((seen[c] - answered[c]) * 1000 for c in answered if c in seen)
    p = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))] if delays else float("nan")
    print(json.dumps({"votes": len(statuses), "created": statuses.count(201), "p50": p(0.5), "p99": p(0.99),
                      "max": delays[-1] if delays else float("nan"), "unseen": len(answered) - len(delays)}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["votes"]:
        votes(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6]), float(sys.argv[7]))
    else:
        sys.exit(__doc__)
