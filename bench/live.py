#!/usr/bin/env python3
"""The live part of `make bench` (bench/live.sh runs it): thousands of watchers on one API process while
comments are posted at a steady rate.

    live.py watch BASE TOKEN --streams N --sockets M --cafes C --rate R --seconds S --app-id ID
        Opens N Server-Sent Events streams (/v1/cafes/{id}/live, spread over cafes 1..C) and M Parse
        LiveQuery sockets (subscribed to one of those cafes' comments), from many loopback source
        addresses; then posts R comments a second for S seconds to random cafes among them, and prints
        one JSON line: the delay from each post's 201 to its event at every watcher of its cafe (p50, p99,
        max, in ms), how many deliveries were expected and seen, and how many watchers were open.

Both clients are written here on asyncio sockets (no library): the stream reads chunked event-stream text,
the socket frames RFC 6455 by hand (masked client frames), answering pings.
"""
import argparse
import asyncio
import base64
import json
import os
import random
import resource
import struct
import sys
import time
import urllib.request


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Deliveries:
    def __init__(self):
        self.seen = {}        # comment id -> [arrival times]
        self.opened = 0
        self.failed = 0
        self.reasons = {}
        self.watching = {}    # cafe -> watchers open on it

    def open(self, cafe):
        self.opened += 1
        self.watching[cafe] = self.watching.get(cafe, 0) + 1

    def fail(self, reason):
        self.failed += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def got(self, comment_id):
        self.seen.setdefault(comment_id, []).append(time.monotonic())


def source(i):
    # 127.0.0.2 … 127.0.0.251: the per-address limits count each as a client of its own.
    return f"127.0.0.{2 + i % 250}"


async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, head


async def sse_watcher(host, port, cafe, i, deliveries, ready):
    try:
        for attempt in range(30):
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source(i), 0), limit=1 << 20)
            writer.write(f"GET /v1/cafes/{cafe}/live HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".encode())
            status, _ = await read_head(reader)
            if status != 503:
                break
            # Refused while thousands open at once (the request lanes are full): retry as EventSource does.
            writer.close()
            await asyncio.sleep(0.5 + random.random())
        if status != 200:
            return deliveries.fail(f"stream {status}")
        deliveries.open(cafe)
        ready.release()
        text = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                return
            text += chunk[:-2]
            while b"\n\n" in text:
                event, text = text.split(b"\n\n", 1)
                if b"event: comment.created" in event:
                    data = event.split(b"data: ", 1)[1]
                    deliveries.got(json.loads(data)["id"])
    except (OSError, asyncio.IncompleteReadError, ValueError) as error:
        deliveries.fail(f"stream {type(error).__name__}")


def frame(payload, opcode=1):
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    return head + mask + bytes(b ^ mask[k % 4] for k, b in enumerate(payload))


async def livequery_watcher(host, port, cafe, i, app_id, deliveries, ready):
    try:
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source(i), 0), limit=1 << 20)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET /parse HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        status, _ = await read_head(reader)
        if status != 101:
            return deliveries.fail(f"socket {status}")
        writer.write(frame(json.dumps({"op": "connect", "applicationId": app_id}).encode()))
        writer.write(frame(json.dumps({"op": "subscribe", "requestId": 1,
                                       "query": {"className": "CafeTransactionComment", "where": {"CafeMasterObjectId": str(cafe)}}}).encode()))
        subscribed = False
        while True:
            b0, b1 = await reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", await reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", await reader.readexactly(8))[0]
            payload = await reader.readexactly(n)
            opcode = b0 & 0x0F
            if opcode == 9:
                writer.write(frame(payload, opcode=10))
            elif opcode == 8:
                return
            elif opcode == 1:
                message = json.loads(payload)
                if message.get("op") == "subscribed" and not subscribed:
                    subscribed = True
                    deliveries.open(cafe)
                    ready.release()
                elif message.get("op") == "error":
                    return deliveries.fail(f"socket error {message.get('code')}")
                elif message.get("op") == "create":
                    deliveries.got(message["object"]["objectId"])
    except (OSError, asyncio.IncompleteReadError, ValueError) as error:
        deliveries.fail(f"socket {type(error).__name__}")


async def post(host, port, token, cafes, rate, seconds, posts):
    """R comments a second on keep-alive connections; the time each 201 was read, by comment id."""
    connections = 8
    async def poster(k):
        reader, writer = await asyncio.open_connection(host, port)
        interval = connections / rate
        start = time.monotonic() + k * interval / connections
        n = 0
        while True:
            due = start + n * interval
            if due - start0 > seconds:
                break
            await asyncio.sleep(max(0, due - time.monotonic()))
            body = json.dumps({"detail": f"live bench {k}-{n}", "star": 1 + n % 3}).encode()
            cafe = random.randint(1, cafes)
            writer.write((f"POST /v1/cafes/{cafe}/comments HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            status, head = await read_head(reader)
            length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
            reply = await reader.readexactly(length)
            if status == 201:
                posts.append((json.loads(reply)["id"], cafe, time.monotonic()))
            n += 1
        writer.close()
    start0 = time.monotonic()
    await asyncio.gather(*(poster(k) for k in range(connections)))


async def watch(args):
    host, port = args.base.split("//")[1].split(":")
    port = int(port)
    deliveries = Deliveries()
    ready = asyncio.Semaphore(0)
    tasks = []
    total = args.streams + args.sockets
    for i in range(args.streams):
        cafe = 1 + i % args.cafes
        tasks.append(asyncio.create_task(sse_watcher(host, port, cafe, i, deliveries, ready)))
        if i % 500 == 499:
            await asyncio.sleep(0.05)
    for i in range(args.sockets):
        cafe = 1 + (i * 7) % args.cafes
        tasks.append(asyncio.create_task(livequery_watcher(host, port, cafe, args.streams + i, args.app_id, deliveries, ready)))
        if i % 200 == 199:
            await asyncio.sleep(0.05)
    deadline = time.monotonic() + 120
    while deliveries.opened + deliveries.failed < total and time.monotonic() < deadline:
        print(f"\r  watchers open: {deliveries.opened}/{total} (failed {deliveries.failed})", end="", file=sys.stderr, flush=True)
        await asyncio.sleep(0.5)
    print(f"\r  watchers open: {deliveries.opened}/{total} (failed {deliveries.failed})", file=sys.stderr)
    opened_before = deliveries.opened
    cafe_of = dict(deliveries.watching)
    posts = []
    await post(host, port, args.token, args.cafes, args.rate, args.seconds, posts)
    await asyncio.sleep(2)
    delays = []
    expected = 0
    for comment_id, cafe, t201 in posts:
        expected += cafe_of.get(cafe, 0)
        delays += [(t - t201) * 1000 for t in deliveries.seen.get(comment_id, [])]
    seen = sum(len(deliveries.seen.get(c, [])) for c, _, _ in posts)
    print(json.dumps({"posts": len(posts), "watchers": opened_before, "failed": deliveries.failed, "reasons": deliveries.reasons,
                      "expected": expected, "seen": seen,
                      "p50": percentile(delays, 50), "p99": percentile(delays, 99), "max": max(delays) if delays else None}))
    for task in tasks:
        task.cancel()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("watch")
    w.add_argument("base")
    w.add_argument("token")
    w.add_argument("--streams", type=int, default=10000)
    w.add_argument("--sockets", type=int, default=1000)
    w.add_argument("--cafes", type=int, default=1000)
    w.add_argument("--rate", type=float, default=100)
    w.add_argument("--seconds", type=float, default=20)
    w.add_argument("--app-id", default="cafe")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(watch(args))


if __name__ == "__main__":
    main()
