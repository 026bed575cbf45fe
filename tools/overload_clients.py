#!/usr/bin/env python3
"""The hostile half of `make overload`: clients that try to stall the service, each from its own
loopback address (127.0.0.0/8), until killed. Prints a count of the answers each kind received.

  expensive  ten anonymous clients sending the most expensive /parse queries a client can shape:
             a $regex over every comment, count, an order on unindexed fields, skip at 9,000,000
             (all refused now), and the costliest still allowed: a common literal over every cafe
             with count and the largest skip, and a busy cafe's comments with a $regex and count.
  logins     log-in floods at every spelling of both log-in routes, wrong passwords, from many
             addresses, each as fast as it is answered.
"""
import json, os, signal, socket, sys, threading, time, urllib.parse
from collections import Counter

port, busiest = int(sys.argv[1]), sys.argv[2]
counts = {"expensive": Counter(), "logins": Counter()}
lock = threading.Lock()
stop = threading.Event()

def request(conn, method, target, body=None, headers=()):
    head = f"{method} {target} HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    data = body.encode() if body else b""
    if data:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    conn.sendall(head.encode() + b"\r\n" + data)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError
        buf += chunk
    header, rest = buf.split(b"\r\n\r\n", 1)
    status = int(header.split(b" ", 2)[1])
    length = 0
    for line in header.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError
        rest += chunk
    return status

def client(kind, source, targets):
    parse = (("X-Parse-Application-Id", "cafe"),)
    i = 0
    conn = None
    while not stop.is_set():
        try:
            if conn is None:
                conn = socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=30)
            method, target, body = targets[i % len(targets)]
            i += 1
            status = request(conn, method, target, body, parse if "/parse" in target else ())
        except (OSError, ConnectionError, ValueError, IndexError):
            status = "closed"
            if conn:
                conn.close()
            conn = None
            time.sleep(0.05)
        with lock:
            counts[kind][status] += 1

def q(**params):
    return urllib.parse.urlencode({k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()})

expensive = [
    ("GET", "/parse/classes/CafeTransactionComment?" + q(where={"CafeCommentDetail": {"$regex": "\\Qa\\E"}}, count=1,
                                                          order="-CafeCommentStar,-updatedAt", skip=9000000), None),
    ("GET", "/parse/classes/CafeMaster?" + q(where={"IntroduceDetail": {"$regex": "\\Qの\\E"}}, count=1, order="-createdAt", skip=10000), None),
    ("GET", "/parse/classes/CafeTransactionComment?" + q(where={"CafeMasterObjectId": busiest, "CafeCommentDetail": {"$regex": "\\Q珈琲\\E"}},
                                                          count=1, order="-createdAt", skip=10000), None),
    ("POST", "/parse/classes/CafeMaster", json.dumps({"_method": "GET", "where": {"name": {"$regex": "\\QCafe\\E"}}, "count": True,
                                                       "limit": 1000, "order": "createdAt"})),
]
credentials = json.dumps({"username": "admin", "password": "not the password"})
logins = [
    ("POST", "/v1/sessions", credentials), ("POST", "/v1/sessions/", credentials), ("POST", "//v1//sessions", credentials),
    ("POST", "/parse/login", credentials), ("POST", "/parse/login/", credentials),
    ("GET", "/parse/login?username=admin&password=wrong", None), ("GET", "//parse/login/?username=admin&password=wrong", None),
]
# OVERLOAD_KINDS (default "expensive,logins") picks the attacks, to see what each costs alone.
kinds = os.environ.get("OVERLOAD_KINDS", "expensive,logins").split(",")
threads = [threading.Thread(target=client, args=("expensive", f"127.0.9.{n + 1}", expensive[n % 4:] + expensive[:n % 4]), daemon=True)
           for n in range(10) if "expensive" in kinds]
threads += [threading.Thread(target=client, args=("logins", f"127.0.10.{n + 1}", logins[n % 7:] + logins[:n % 7]), daemon=True)
            for n in range(16) if "logins" in kinds]
# Started in the background by a script, SIGINT is ignored: SIGTERM ends the run.
signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
for t in threads:
    t.start()
try:
    while True:
        time.sleep(0.5)
except KeyboardInterrupt:
    pass
finally:
    stop.set()
    for kind, counter in counts.items():
        print(f"{kind}: " + ", ".join(f"{k}: {v}" for k, v in sorted(counter.items(), key=lambda kv: str(kv[0]))), flush=True)
