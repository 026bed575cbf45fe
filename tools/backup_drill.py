#!/usr/bin/env python3
"""`make backup-drill` (tools/backup-drill.sh): a mistake undone from the backups, twice — from a
directory repository onto the service's own directory (`cafe restore --to T --switch`), and from an S3
repository (SeaweedFS over TLS) onto a fresh directory, as on a new machine (`--into`). Writers post
comments (a quarter with a photo, photos in the same S3 store) while a backup is taken; the drill notes
a time T, keeps writing, then deletes a busy cafe's comments and drops a table by hand. After the
restore, every write acknowledged before T must be there, the mistake must not, the aggregates must be
exact and every photo must be served.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
KEY, SECRET = "drill-key", "drill-secret-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, token=None, content_type="application/json", timeout=30):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) else (None if body is None else json.dumps(body))
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        return 0, str(error).encode()
    finally:
        connection.close()


class ObjectStore:
    """SeaweedFS with an HTTPS port whose certificate a certificate authority made here signs."""

    def __init__(self, root):
        self.root = root
        os.makedirs(f"{root}/data", exist_ok=True)
        run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True, cwd=root)
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=drill CA", "-keyout", "ca.key", "-out", "ca.pem")
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "s3.key", "-out", "s3.csr")
        with open(f"{root}/s3.ext", "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        run("x509", "-req", "-in", "s3.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "s3.ext", "-out", "s3.pem")
        with open(f"{root}/s3.json", "w") as f:
            json.dump({"identities": [{"name": "drill", "credentials": [{"accessKey": KEY, "secretKey": SECRET}],
                                       "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, f)
        ports = [free_port() for _ in range(12)]
        self.http, self.https = ports[6], ports[11]
        names = ["master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc", "s3.port",
                 "s3.port.grpc", "s3.port.iceberg", "metricsPort", "s3.port.lance", "s3.port.https"]
        arguments = [f"-{name}={port}" for name, port in zip(names, ports)]
        self.process = subprocess.Popen(["weed", "server", f"-dir={root}/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3", *arguments,
                                         f"-s3.config={root}/s3.json", f"-s3.cert.file={root}/s3.pem", f"-s3.key.file={root}/s3.key",
                                         "-master.volumeSizeLimitMB=64", "-volume.max=300", "-master.telemetry=false"],
                                        stdout=open(f"{root}/weed.log", "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.curl("PUT", "/drill") == "200" and self.curl("PUT", "/drill/ready", data=True) == "200":
                return
            time.sleep(0.5)
        raise SystemExit("SeaweedFS did not start; see " + f"{root}/weed.log")

    def curl(self, method, path, data=False):
        command = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}",
                   "-H", f"x-amz-content-sha256: {EMPTY_SHA}", "-X", method, f"http://127.0.0.1:{self.http}{path}"]
        if data:
            command[1:1] = ["--data-binary", ""]
        return subprocess.run(command, capture_output=True, text=True).stdout

    def environment(self):
        return {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": f"https://localhost:{self.https}", "AWS_CA_BUNDLE": f"{self.root}/ca.pem"}


class Service:
    def __init__(self, cafe, data, environment, log):
        self.cafe, self.data, self.log = cafe, data, log
        self.environment = {**os.environ, **environment, "CAFE_DATA_DIR": data}
        self.port = free_port()
        self.process = subprocess.Popen([cafe, "serve", "--port", str(self.port), "--seed-demo"], env=self.environment,
                                        stdout=open(log, "a"), stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            if request(self.port, "GET", "/readyz", timeout=2)[0] == 200:
                return
            if self.process.poll() is not None:
                raise SystemExit(f"cafe serve exited; see {log}")
            time.sleep(0.3)
        raise SystemExit(f"cafe serve did not become ready; see {log}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def sql(self, query):
        return subprocess.run(["psql", f"host={self.data} port=5432 user=cafe dbname=cafe", "-qAtc", query],
                              capture_output=True, text=True, check=True).stdout.strip()

    def command(self, *arguments, data=None):
        started = time.time()
        environment = dict(self.environment)
        if data:
            environment["CAFE_DATA_DIR"] = data
        result = subprocess.run([self.cafe, *arguments], env=environment, capture_output=True, text=True)
        with open(self.log, "a") as f:
            f.write(result.stderr)
        if result.returncode != 0:
            raise SystemExit(f"cafe {' '.join(arguments)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr[-3000:]}")
        return result.stdout, time.time() - started


class Drill:
    def __init__(self, args, store, photo):
        self.args, self.store, self.photo = args, store, photo
        self.lock = threading.Lock()
        self.acknowledged = []      # (acknowledged at, comment id, cafe, photo id or None)
        self.stop = threading.Event()

    def writer(self, port, token, cafes, number):
        n = 0
        while not self.stop.is_set():
            cafe = cafes[(number + n) % len(cafes)]
            image = None
            if n % 4 == 0:
                status, data = request(port, "POST", "/v1/files", self.photo, token, content_type="image/jpeg")
                image = json.loads(data)["id"] if status == 201 else None
            body = {"detail": f"drill {number}-{n}", "star": n % 3 + 1}
            if image:
                body["imageId"] = image
            status, data = request(port, "POST", f"/v1/cafes/{cafe}/comments", body, token)
            if status == 201:
                with self.lock:
                    self.acknowledged.append((time.time(), json.loads(data)["id"], cafe, image))
            else:
                time.sleep(0.1)
            n += 1

    def run(self, name, repository):
        root = f"{self.args.dir}/{name}"
        os.makedirs(root)
        environment = {"MIGRATIONS_DIR": os.path.abspath("migrations"), "PHOTO_STORE": f"s3://drill/photos-{name}", "LOG_LEVEL": "warning",
                       "RATE_LIMIT_WRITES": "0", "RATE_LIMIT_READS": "0", "RATE_LIMIT_LOGINS": "0", "UPLOAD_QUOTA_BYTES": "0",
                       "UPLOAD_QUOTA_PER_ADDRESS_BYTES": "0", **self.store.environment()}
        if repository:
            environment["BACKUP_REPO"] = repository
        log = f"{root}/service.log"
        print(f"==> {name}: seeding {self.args.cafes} cafes", flush=True)
        service = Service(self.args.cafe, f"{root}/pgdata", environment, log)
        service.command("seed", "--cafes", str(self.args.cafes), "--comments", str(self.args.cafes * 10))
        while service.sql("SELECT count(*) FROM backup_runs WHERE error IS NULL AND finished_at IS NOT NULL") == "0":
            time.sleep(0.5)
        status, data = request(service.port, "GET", "/v1/cafes?limit=4")
        cafes = [c["id"] for c in json.loads(data)["items"]]
        busy = cafes[0]
        tokens = []
        for i in range(4):
            status, data = request(service.port, "POST", "/v1/users", {"username": f"drill_{name}_{i}", "password": "drill password"})
            tokens.append(json.loads(data)["sessionToken"])
        self.acknowledged, self.stop = [], threading.Event()
        writers = [threading.Thread(target=self.writer, args=(service.port, token, cafes + [busy], i)) for i, token in enumerate(tokens)]
        for w in writers:
            w.start()
        time.sleep(2)
        _, backup_seconds = service.command("backup", "now")
        time.sleep(3)
        moment = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1e6):06d}Z"
        time.sleep(3)
        busy_before = int(service.sql(f"SELECT count(*) FROM comments WHERE cafe_id = {int(busy)}"))
        service.sql(f"DELETE FROM comments WHERE cafe_id = {int(busy)}")
        service.sql("DROP TABLE audit_log CASCADE")
        time.sleep(1)
        self.stop.set()
        for w in writers:
            w.join()
        service.stop()
        before = [a for a in self.acknowledged if a[0] < moment]
        after = [a for a in self.acknowledged if a[0] >= moment]

        if repository:   # a new machine: nothing of the old one but the repository and the photo store
            target = f"{root}/new-machine/pgdata"
            output, restore_seconds = service.command("restore", "--to", stamp, "--into", target, data=target)
        else:
            target = f"{root}/pgdata"
            output, restore_seconds = service.command("restore", "--to", stamp, "--switch")
        restored = Service(self.args.cafe, target, environment, log)
        try:
            ids = set(restored.sql("SELECT id FROM comments").split())
            lost = [a for a in before if a[1] not in ids]
            busy_now = int(restored.sql(f"SELECT count(*) FROM comments WHERE cafe_id = {int(busy)}"))
            table = restored.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'audit_log'") == "1"
            deadline = time.time() + 30
            while restored.sql("SELECT count(*) FROM aggregation_outbox") != "0" and time.time() < deadline:
                time.sleep(0.2)
            drift = int(restored.sql("""SELECT count(*) FROM cafe_stats s LEFT JOIN (SELECT cafe_id, count(*) n, sum(star) t FROM comments
                                        GROUP BY cafe_id) a ON a.cafe_id = s.cafe_id WHERE s.comment_sum <> coalesce(a.n, 0) OR s.comment_amount <> coalesce(a.t, 0)"""))
            # The photos anyone may see: those a comment or a cafe shows (an upload whose comment came after T is its owner's alone).
            photos = restored.sql("SELECT image_id FROM comments WHERE image_id IS NOT NULL UNION SELECT image_id FROM cafes WHERE image_id IS NOT NULL").split()
            unserved = [p for p in photos if request(restored.port, "GET", f"/v1/files/{p}")[0] != 200]
        finally:
            restored.stop()
        missing_line = next((line for line in output.splitlines() if line.startswith("photos:")), "photos: ?")
        # The busy cafe's comments of before T are back (counted in `lost` too); those of after T went with the mistake.
        busy_acknowledged = sum(1 for a in before if a[2] == busy)
        passed = not lost and busy_now >= busy_acknowledged and busy_now > 0 and table and drift == 0 and not unserved
        print(f"  repository:                      {repository or 'a directory beside the cluster'}")
        print(f"  writes acknowledged before T:    {len(before)} ({sum(1 for a in before if a[3])} with a photo), lost: {len(lost)}")
        print(f"  writes acknowledged after T:     {len(after)} (undone with the mistake, as asked)")
        print(f"  the busy cafe's comments:        {busy_before} when they were deleted, {busy_now} after the restore "
              f"(its {busy_acknowledged} acknowledged before T among them)")
        print(f"  the dropped table:               {'back' if table else 'MISSING'}")
        print(f"  aggregates drifted:              {drift}")
        print(f"  photos served:                   {len(photos) - len(unserved)} of {len(photos)}; restore said: {missing_line}")
        print(f"  backup while writing:            {backup_seconds:.1f} s")
        print(f"  restore to T:                    {restore_seconds:.1f} s ({'--into a fresh directory' if repository else '--switch'})")
        print(f"  {name}: {'passed' if passed else 'FAILED'}", flush=True)
        return passed

    def main(self):
        results = [self.run("directory", None), self.run("s3", "s3://drill/backups")]
        print("backup drill:", "passed" if all(results) else "FAILED")
        return 0 if all(results) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--cafe", required=True)
    parser.add_argument("--cafes", type=int, default=2000)
    args = parser.parse_args()
    store = ObjectStore(f"{args.dir}/seaweedfs")
    subprocess.run(["vips", "black", f"{args.dir}/photo.jpg", "320", "240", "--bands", "3"], check=True)
    with open(f"{args.dir}/photo.jpg", "rb") as f:
        photo = f.read()
    try:
        sys.exit(Drill(args, store, photo).main())
    finally:
        store.process.terminate()
