#!/usr/bin/env python3
"""The page cache under writes (`make bench`, scenarios 9 and 10).

  cache.py post BASE TOKEN CAFES RATE SECONDS
      posts RATE comments a second to random cafes 1..CAFES for SECONDS (keeps invalidating the cache).
  cache.py reflect CACHED UNCACHED TOKEN CAFE N
      N times: post a comment to CAFE, then read the cafe from the uncached server and the cached one
      every 5 ms; prints the p50/p99 of how long the cached page showed the old aggregates after the
      database had the new ones (the worker's pass), in ms.
"""
import http.client
import json
import random
import sys
import time
from urllib.parse import urlparse


def connect(base):
    u = urlparse(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=10)


def request(conn, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    r = conn.getresponse()
    return r.status, r.read()


def post(base, token, cafes, rate, seconds):
    conn = connect(base)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        started = time.monotonic()
        request(conn, "POST", f"/v1/cafes/{random.randint(1, cafes)}/comments", {"detail": "キャッシュを揺らす投稿", "star": 2}, token)
        n += 1
        time.sleep(max(0.0, 1.0 / rate - (time.monotonic() - started)))
    print(n)


def reflect(cached, uncached, token, cafe, n):
    writer, fresh, page = connect(uncached), connect(uncached), connect(cached)
    def count(conn):
        status, body = request(conn, "GET", f"/v1/cafes/{cafe}")
        return json.loads(body)["commentSum"]
    delays = []
    for _ in range(n):
        before = count(fresh)
        status, _ = request(writer, "POST", f"/v1/cafes/{cafe}/comments", {"detail": "反映の計測", "star": 3}, token)
        assert status == 201, status
        seen_fresh = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            now = time.monotonic()
            if seen_fresh is None and count(fresh) > before:
                seen_fresh = now
            if count(page) > before:
                delays.append(max(0.0, time.monotonic() - (seen_fresh or now)) * 1000)
                break
            time.sleep(0.005)
        else:
            delays.append(10_000.0)
    delays.sort()
    p = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
    print(f"{p(0.5):.1f} {p(0.99):.1f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["post"]:
        post(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]))
    elif sys.argv[1:2] == ["reflect"]:
        reflect(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit(__doc__)
