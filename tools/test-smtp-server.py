#!/usr/bin/env python3
"""A real SMTP server for the tests (PyPI's aiosmtpd) on loopback: every message it accepts is
written to DIR as one file (`*.eml`, renamed into place whole), headed by the envelope and whether
TLS carried it. `--tls starttls` offers STARTTLS, `--tls implicit` is TLS from the first byte
(smtps); `--auth USER:PASS` requires that login. Prints `ready PORT` once it accepts connections;
runs until SIGTERM.
"""
import argparse
import os
import signal
import ssl
import sys
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


class Save:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            name = f"{time.time_ns():020d}-{os.getpid()}-{self.count:06d}"
        head = (f"X-Envelope-From: {envelope.mail_from}\r\nX-Envelope-To: {','.join(envelope.rcpt_tos)}\r\n"
                f"X-TLS: {'yes' if session.ssl is not None or server.transport.get_extra_info('sslcontext') else 'no'}\r\n")
        temporary = os.path.join(self.directory, name + ".tmp")
        with open(temporary, "wb") as f:
            f.write(head.encode() + envelope.original_content)
        os.rename(temporary, os.path.join(self.directory, name + ".eml"))
        return "250 2.0.0 OK"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls", choices=["none", "starttls", "implicit"], default="none")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--auth")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    port = args.port
    if port == 0:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    context = None
    if args.tls != "none":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    options = {}
    if args.auth:
        user, password = args.auth.split(":", 1)

        def authenticate(server, session, envelope, mechanism, data):
            ok = data.login.decode() == user and data.password.decode() == password
            return AuthResult(success=ok)
        options.update(authenticator=authenticate, auth_required=True, auth_require_tls=args.tls != "none")
    if args.tls == "starttls":
        options.update(tls_context=context, require_starttls=False)
    if args.tls == "implicit":
        options.update(ssl_context=context)
    controller = Controller(Save(args.dir), hostname="127.0.0.1", port=port, **options)
    controller.start()
    print(f"ready {port}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    sys.exit(main())
