#!/usr/bin/env python3
"""Raw-HTTP fuzzer for `cafe serve` (part of `make fuzz`).

Sends requests over plain TCP sockets, so that it can send what no HTTP library would: broken
request lines, separator-only and non-UTF-8 header values, duplicated and conflicting framing
headers, truncated and hostile JSON, pipelined requests and random byte flips of valid requests.
Hypothesis draws every request (and shrinks a failing one).

After each request the service must
  - not answer 5xx, except 503 (overload, shutting down), 501 and 505 (a method or HTTP version
    it does not speak), and
  - still answer GET /healthz on a fresh connection.

Usage: http_fuzz.py --port P --requests N [--seed S] [--user-token T] [--admin-token T]
       [--cafe ID] [--comment ID] [--file ID] [--app-id cafe]
A failing request is written to .build/fuzz-raw-failure-SEED.bin (as sent) before the run fails.
"""
import argparse
import functools
import json
import os
import random
import socket
import subprocess
import sys
import time

from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings
from hypothesis import strategies as st

ALLOWED_5XX = {501, 503, 505}

# ---------------------------------------------------------------- what the service serves

ROUTES = [
    ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/openapi.json"),
    ("GET", "/"), ("GET", "/assets/{asset}"),
    ("POST", "/v1/users"), ("GET", "/v1/users/me"), ("POST", "/v1/sessions"), ("DELETE", "/v1/sessions/current"),
    ("GET", "/v1/cafes"), ("POST", "/v1/cafes"), ("GET", "/v1/cafes/{cafe}"), ("PATCH", "/v1/cafes/{cafe}"),
    ("DELETE", "/v1/cafes/{cafe}"), ("GET", "/v1/cafes/{cafe}/comments"), ("POST", "/v1/cafes/{cafe}/comments"),
    ("GET", "/v1/comments"), ("PATCH", "/v1/comments/{comment}"), ("DELETE", "/v1/comments/{comment}"),
    ("POST", "/v1/files"), ("GET", "/v1/files/{file}"),
    ("GET", "/v1/admin/jobs"), ("POST", "/v1/admin/aggregates/reconcile"),
    ("POST", "/parse/users"), ("GET", "/parse/users/me"), ("GET", "/parse/login"), ("POST", "/parse/login"),
    ("POST", "/parse/logout"),
    ("GET", "/parse/classes/{class}"), ("POST", "/parse/classes/{class}"),
    ("GET", "/parse/classes/{class}/{object}"), ("PUT", "/parse/classes/{class}/{object}"),
    ("DELETE", "/parse/classes/{class}/{object}"), ("POST", "/parse/classes/{class}/{object}"),
    ("POST", "/parse/files/{name}"), ("GET", "/parse/files/{appid}/{name}"),
]

QUERY_NAMES = ["limit", "cursor", "q", "sort", "minStar", "withImage", "where", "order", "keys", "excludeKeys",
               "include", "skip", "count", "username", "password", "_method", "redirectClassNameForKey"]

HEADERS_READ = ["Content-Type", "Content-Length", "Transfer-Encoding", "Authorization", "X-Parse-Application-Id",
                "X-Parse-Session-Token", "X-Parse-Request-Id", "Idempotency-Key", "If-None-Match", "Origin",
                "X-Request-Id", "Host", "Access-Control-Request-Method", "Access-Control-Request-Headers",
                "Connection", "Expect", "Range", "Accept", "Accept-Encoding"]

# A valid body per route, which `bodies` mutates one field at a time so that requests get past
# the first check and reach the deeper ones.
VALID_BODIES = {
    "/v1/users": {"username": "fuzzer1", "password": "correct horse battery", "email": "a@b.cd", "age": 30},
    "/v1/sessions": {"username": "fuzz_user", "password": "correct horse battery"},
    "/v1/cafes": {"name": "Fuzz", "catchCopy": "c", "introduction": "珈琲", "publishDate": "2026-01-01"},
    "/v1/cafes/{cafe}": {"name": "Fuzz", "introduction": "x"},
    "/v1/cafes/{cafe}/comments": {"detail": "good", "star": 2},
    "/v1/comments/{comment}": {"detail": "better", "star": 3},
    "/parse/users": {"username": "fuzzer2", "password": "correct horse battery"},
    "/parse/login": {"username": "fuzz_user", "password": "correct horse battery"},
    "/parse/classes/{class}": {"CafeName": "Fuzz", "IntroduceDetail": "珈琲", "CafeCommentDetail": "ok",
                               "CafeCommentStar": 2, "CafeMasterObjectId": "1"},
    "/parse/classes/{class}/{object}": {"CafeCommentStar": 3, "CafeName": "Fuzz2"},
}

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


class Context:
    def __init__(self, args):
        self.port = args.port
        self.user = args.user_token or "none"
        self.admin = args.admin_token or "none"
        self.app = args.app_id
        self.ids = {"cafe": args.cafe or "1", "comment": args.comment or "1", "file": args.file or "1",
                    "object": args.cafe or "1", "class": "CafeMaster", "name": "photo.png", "appid": args.app_id,
                    "asset": "app.js"}


# ---------------------------------------------------------------- strategies

@functools.lru_cache(maxsize=None)
def hostile_texts():
    """Values that break naive parsing: empty, separators only, huge, control and non-UTF-8 bytes."""
    return st.one_of(
        st.sampled_from([b"", b";", b",", b" ", b"=", b";;;", b",,", b"\t", b"/", b"//", b"..", b"%", b"%zz", b"%00",
                         b"%ff%fe", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"-1", b"0", b"-0",
                         b"9223372036854775807", b"9223372036854775808", b"-9223372036854775809", b"1e400",
                         b"NaN", b"Infinity", b"1.5", b"0x10", b"\xe3\x80\x80", b"\xef\xbb\xbf", b"*", b"null",
                         b"true", b"[]", b"{}", b"[", b"{", b"\"", b"\\", b"bearer", b"Bearer", b"Bearer ", b"Bearer  x",
                         b"W/", b"W/\"", b"\"\"", b"application/json;", b";charset=utf-8", b"image/", b"image/png;;",
                         b"multipart/form-data; boundary=", b"chunked", b"chunked, chunked", b"gzip, chunked",
                         b"identity", b"0000-01-01T00:00:00Z", b"99999-01-01", b"10000-01-01T00:00:00.000Z",
                         b"2026-02-30T00:00:00Z", b"-2026-01-01T00:00:00Z"]),
        st.binary(min_size=0, max_size=40),
        st.builds(lambda c, n: c * n, st.sampled_from([b"a", b";", b"\xe7\x8f\x88", b"%", b"/", b"9", b"\xff"]),
                  st.sampled_from([64, 255, 256, 1000, 4096, 9000, 70000])),
        st.text(min_size=0, max_size=30).map(lambda s: s.encode("utf-8", "surrogatepass")),
    )


@functools.lru_cache(maxsize=None)
def json_values(depth=3):
    leaves = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
        st.sampled_from(["", "\u0000", "a\u0000b", "\u3000", "珈琲", "\ud800", "x" * 3000, "e\u0301" * 150,
                         "2026-01-01T00:00:00.000Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"]),
        st.sampled_from([10**30, -10**30, 2**63, -2**63 - 1, 1e308, -1e308, 5e-324, 3, 2, 1, 0, -1, 2.5]),
        st.sampled_from([{"__type": "Date", "iso": "0001-01-01T00:00:00Z"}, {"__type": "Date", "iso": "0000-01-01T00:00:00Z"},
                         {"__type": "Date"}, {"__type": "File"}, {"__type": "File", "name": "1_x"},
                         {"__type": "File", "name": "99999999999999999999999_x"}, {"__type": "Pointer"},
                         {"__type": "Pointer", "className": "CafeMaster", "objectId": "1"},
                         {"__op": "Increment", "amount": 10**20}, {"__op": "Delete"}, {"__op": "Add"},
                         {"$regex": "\\Qa\\E"}, {"$regex": "^\\Q"}, {"$regex": "\\"}, {"$in": []}, {"$in": [None, 1, "x"]},
                         {"$exists": "yes"}, {"$gt": {"__type": "Date", "iso": "0000-01-01T00:00:00Z"}},
                         {"$select": {}}, {"$relatedTo": {}}, {"$nearSphere": {}}]),
    )
    if depth == 0:
        return leaves
    return st.one_of(leaves, st.lists(json_values(depth - 1), max_size=4),
                     st.dictionaries(field_names(), json_values(depth - 1), max_size=5))


@functools.lru_cache(maxsize=None)
def field_names():
    return st.one_of(st.sampled_from([
        "username", "password", "email", "age", "name", "catchCopy", "introduction", "imageId", "publishDate",
        "detail", "star", "CafeName", "CafeCatchCopy", "IntroduceDetail", "CafeImage", "CafeCommentDetail",
        "CafeCommentStar", "CafeCommentImage", "CafeMasterObjectId", "commentUsername", "commentSum", "commentAmount",
        "objectId", "createdAt", "updatedAt", "ACL", "_method", "_ApplicationId", "_SessionToken", "_ClientVersion",
        "_InstallationId", "where", "order", "keys", "limit", "skip", "count", "include", "excludeKeys",
        "$or", "$and", "$regex", "$options", "__type", "__op", "iso"]), st.text(max_size=8))


def json_bytes(value):
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def bodies(draw, pattern=""):
    valid = VALID_BODIES.get(pattern)
    if valid is not None and draw(st.booleans()):
        body = dict(valid)
        for _ in range(draw(st.integers(0, 2))):
            body[draw(st.sampled_from(sorted(body) + ["_method", "where", "extra"]))] = draw(json_values())
        if draw(st.integers(0, 3)) == 0:
            body["_method"] = draw(st.sampled_from(["GET", "PUT", "DELETE", "POST", "get", ""]))
            body["where"] = draw(json_values())
        return json_bytes(body)
    kind = draw(st.sampled_from(["none", "json", "json", "json", "truncated", "deep", "huge-number", "surrogate",
                                 "bom", "nul", "binary", "png", "form", "duplicate-keys"]))
    if kind == "none":
        return b""
    base = draw(st.dictionaries(field_names(), json_values(), max_size=6))
    if kind == "json":
        return json_bytes(base)
    if kind == "truncated":
        data = json_bytes(base)
        return data[:draw(st.integers(0, max(0, len(data) - 1)))]
    if kind == "deep":
        n = draw(st.sampled_from([33, 100, 5000, 100000]))
        opener = draw(st.sampled_from([b"[", b"{\"a\":"]))
        return opener * n + (b"1" + (b"]" if opener == b"[" else b"}") * n if draw(st.booleans()) else b"")
    if kind == "huge-number":
        digits = draw(st.sampled_from([b"1" * 400, b"1e999999", b"-" + b"9" * 5000, b"1." + b"0" * 3000 + b"1", b"1E-99999"]))
        key = draw(field_names()).encode("utf-8", "surrogatepass")
        return b'{"' + key + b'":' + digits + b"}"
    if kind == "surrogate":
        return b'{"detail":"\\ud800","name":"\\udfff x","username":"\\ud83d","star":2}'
    if kind == "bom":
        return b"\xef\xbb\xbf" + json_bytes(base)
    if kind == "nul":
        return json_bytes(base)[:-1] + b"\x00}"
    if kind == "binary":
        return draw(st.binary(max_size=200))
    if kind == "png":
        return PNG + draw(st.binary(max_size=50))
    if kind == "form":
        return b"username=a&password=b"
    return b'{"star":1,"star":"x","detail":"a","detail":null}'


@st.composite
def targets(draw, ctx):
    method, pattern = draw(st.sampled_from(ROUTES))
    path = pattern
    for name, value in ctx.ids.items():
        placeholder = "{" + name + "}"
        if placeholder in path:
            choice = draw(st.sampled_from(["valid"] * 6 + ["hostile", "class"]))
            if choice == "valid":
                part = value.encode()
            elif choice == "class":
                part = draw(st.sampled_from([b"CafeMaster", b"CafeTransactionComment", b"_User", b"_Session", b"Nope"]))
            else:
                part = draw(hostile_texts()).replace(b" ", b"%20").replace(b"?", b"%3F").replace(b"#", b"%23")
            path = path.replace(placeholder, part.decode("latin-1"))
    raw = path.encode("latin-1")
    mangle = draw(st.sampled_from(["none"] * 12 + ["double-slash", "dot-dot", "trailing", "percent", "long", "nul"]))
    if mangle == "double-slash":
        raw = b"/" + raw.replace(b"/", b"//")
    elif mangle == "dot-dot":
        raw = raw + b"/../" + raw.lstrip(b"/")
    elif mangle == "trailing":
        raw = raw + b"/"
    elif mangle == "percent":
        raw = raw.replace(b"v1", b"%76%31").replace(b"parse", b"%70arse%") + b"%"
    elif mangle == "long":
        raw = raw + b"/" + b"a" * draw(st.sampled_from([1000, 9000, 70000]))
    elif mangle == "nul":
        raw = raw + b"%00x"
    params = draw(st.lists(st.tuples(st.sampled_from(QUERY_NAMES), query_values()), max_size=4))
    if params:
        raw += b"?" + b"&".join(k.encode() + (b"" if v is None else b"=" + v) for k, v in params)
    return method, raw, pattern


@functools.lru_cache(maxsize=None)
def query_values():
    return st.one_of(
        st.none(),
        hostile_texts().map(lambda b: b.replace(b" ", b"+").replace(b"&", b"%26").replace(b"#", b"%23")
                            .replace(b"\r", b"%0D").replace(b"\n", b"%0A")),
        json_values().map(lambda v: percent(json_bytes(v))),
    )


def percent(data):
    out = bytearray()
    for b in data:
        out += bytes([b]) if (48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122 or b in b"-_.~") else b"%%%02X" % b
    return bytes(out)


@st.composite
def requests(draw, ctx):
    method, target, pattern = draw(targets(ctx))
    method = draw(st.sampled_from([method] * 20 + ["HEAD", "OPTIONS", "TRACE", "CONNECT", "BREW", "get", "", "G ET",
                                                  "POST", "PUT", "PATCH", "DELETE", "M" * 300]))
    version = draw(st.sampled_from([b"HTTP/1.1"] * 30 + [b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/0.9", b"HTTP/1", b""]))
    body = draw(bodies(pattern))
    headers = [(b"Host", b"localhost")]
    auth = draw(st.sampled_from(["none", "user", "admin", "parse-user", "parse-admin"]))
    if b"logout" in target or b"sessions/current" in target:
        auth = "none"   # logging the fuzzer's own sessions out would leave the rest of the run anonymous
    if auth in ("user", "admin"):
        headers.append((b"Authorization", b"Bearer " + (ctx.user if auth == "user" else ctx.admin).encode()))
    if "parse" in target.decode("latin-1") or auth.startswith("parse"):
        headers.append((b"X-Parse-Application-Id", ctx.app.encode()))
        if auth.startswith("parse"):
            headers.append((b"X-Parse-Session-Token", (ctx.user if auth == "parse-user" else ctx.admin).encode()))
    if body:
        headers.append((b"Content-Type", draw(st.sampled_from([b"application/json", b"application/json; charset=utf-8",
                                                               b"image/png", b"text/plain", b"application/json;"]))))
    for name in draw(st.lists(st.sampled_from(HEADERS_READ), max_size=2)):
        value = draw(hostile_texts()).replace(b"\r", b"").replace(b"\n", b"")
        if draw(st.booleans()):
            headers = [(k, v) for k, v in headers if k.lower() != name.encode().lower()]
        headers.append((name.encode(), value))
    framing = draw(st.sampled_from(["length"] * 12 + ["none", "double-length", "conflicting-length", "chunked",
                                                     "bad-chunk", "te-and-length", "short-length", "bare-lf", "pipelined"]))
    eol = b"\n" if framing == "bare-lf" else b"\r\n"
    payload = body
    if framing in ("length", "bare-lf", "pipelined") and body:
        headers.append((b"Content-Length", str(len(body)).encode()))
    elif framing == "double-length":
        headers += [(b"Content-Length", str(len(body)).encode())] * 2
    elif framing == "conflicting-length":
        headers += [(b"Content-Length", str(len(body)).encode()), (b"Content-Length", str(len(body) + 5).encode())]
    elif framing == "chunked":
        headers.append((b"Transfer-Encoding", b"chunked"))
        payload = (b"%x\r\n" % len(body) + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
    elif framing == "bad-chunk":
        headers.append((b"Transfer-Encoding", b"chunked"))
        size = draw(st.sampled_from([b"zz", b"-1", b"ffffffffffffffffff", b"7fffffffffffffff", b"1;ext=" + b"a" * 100, b""]))
        payload = size + b"\r\n" + body + b"\r\n0\r\n\r\n"
    elif framing == "te-and-length":
        headers += [(b"Transfer-Encoding", b"chunked"), (b"Content-Length", str(len(body)).encode())]
        payload = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    elif framing == "short-length":
        headers.append((b"Content-Length", str(len(body) + 10).encode()))   # the server waits, then times out
    request = method.encode() + b" " + target + (b" " + version if version else b"") + eol
    request += b"".join(k + b": " + v + eol for k, v in headers) + eol + payload
    if framing == "pipelined":
        request += b"GET /healthz HTTP/1.1" + eol + b"Host: x" + eol + eol
    if draw(st.integers(0, 19)) == 0:   # random byte flips of the whole request
        data = bytearray(request)
        for _ in range(draw(st.integers(1, 8))):
            if data:
                data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        request = bytes(data)
    return request


# ---------------------------------------------------------------- the checks

def exchange(port, data, timeout, expected=1, head=False):
    """Sends `data`; returns the status codes of the responses read before `expected` complete
    responses arrived, the server closed, or it went quiet for `timeout` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass   # the server may answer (413) and close before it read everything
        received = b""
        try:
            while len(complete_responses(received, head=head)) < expected:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return complete_responses(received, partial=True, head=head)


def complete_responses(data, partial=False, head=False):
    """Status codes of the responses in `data` (bodies delimited by Content-Length; none after HEAD)."""
    statuses = []
    while data.startswith(b"HTTP/"):
        end = data.find(b"\r\n\r\n")
        if end < 0 or len(data) < 12 or not data[9:12].isdigit():
            break
        length = 0
        for line in data[:end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit() and not head:
                length = int(value.strip())
        if len(data) < end + 4 + length and not partial:
            break
        statuses.append(int(data[9:12]))
        data = data[end + 4 + length:]
    return statuses


def health(port):
    """None when /healthz answers 200 within three tries; else what the last try saw."""
    seen = None
    for _ in range(3):
        started = time.monotonic()
        try:
            got = exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5)
            if got == [200]:
                return None
            seen = f"statuses {got} after {time.monotonic() - started:.1f} s"
        except OSError as error:
            seen = f"{error!r} after {time.monotonic() - started:.1f} s"
        time.sleep(0.2)
    return seen


def strip_options(argv, names):
    """argv without the given options and their values."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in names:
            skip = True
        else:
            out.append(a)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--user-token")
    parser.add_argument("--admin-token")
    parser.add_argument("--cafe")
    parser.add_argument("--comment")
    parser.add_argument("--file")
    parser.add_argument("--app-id", default="cafe")
    parser.add_argument("--jobs", type=int, default=1, help="parallel fuzzer processes, each with its own seed")
    args = parser.parse_args()
    ctx = Context(args)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    if args.jobs > 1:
        # Most of a request's time is waiting (for an answer that may never come, for /healthz):
        # several processes keep the server busy. Each gets its share of the requests and a seed.
        share = -(-args.requests // args.jobs)
        children = []
        for job in range(args.jobs):
            child_args = [sys.executable, sys.argv[0]] + strip_options(sys.argv[1:], {"--jobs", "--requests", "--seed"})
            children.append(subprocess.Popen(child_args + ["--requests", str(share), "--seed", str(seed + job)]))
        sys.exit(max(child.wait() for child in children))
    print(f"==> raw HTTP fuzzer: {args.requests} requests against 127.0.0.1:{args.port} (seed {seed})", flush=True)
    failure_file = os.path.join(".build", f"fuzz-raw-failure-{seed}.bin")
    sent = [0]
    statuses = {}
    started = time.monotonic()
    terminal = sys.stderr.isatty()

    @settings(max_examples=args.requests, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink], print_blob=False)
    @given(st.data())
    def run(data):
        request = data.draw(requests(ctx))
        sent[0] += 1
        got = exchange(ctx.port, request, 1, expected=2 if request.endswith(b"Host: x\r\n\r\n") else 1,
                       head=request.startswith(b"HEAD "))
        for code in got:
            statuses[code] = statuses.get(code, 0) + 1
        bad = [c for c in got if c >= 500 and c not in ALLOWED_5XX]
        sick = health(ctx.port)
        if bad or sick:
            os.makedirs(".build", exist_ok=True)
            with open(failure_file, "wb") as f:
                f.write(request)
            finding = f"answered {bad}" if bad else f"service stopped answering /healthz ({sick})"
            print(f"    at {time.strftime('%H:%M:%S')}: {finding}", file=sys.stderr, flush=True)
            raise AssertionError(f"{finding} after: {request[:600]!r}")
        if terminal and sent[0] % 200 == 0:
            rate = sent[0] / max(time.monotonic() - started, 0.001)
            sys.stderr.write(f"\r  {sent[0]}/{args.requests} requests, {rate:.0f}/s   ")

    try:
        hypothesis_seed(seed)(run)()
    finally:
        if terminal:
            sys.stderr.write("\n")
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
        print(f"    {sent[0]} requests in {time.monotonic() - started:.0f} s; statuses seen: {summary}", flush=True)


if __name__ == "__main__":
    main()
