#!/usr/bin/env python3
"""A loopback OTLP/HTTP receiver for tests/otlp.bats (python3 standard library only).

usage: otlprecv.py DIR [--answers LIST] [--tls CERT KEY]

Listens on 127.0.0.1 on a free port, written to DIR/port once it listens.  Every POST is
kept as DIR/req-N.pb (the body as sent: gunzipped when Content-Encoding is gzip, which
DIR/req-N.meta records with the path, Content-Type and the other headers).  The answers
are taken from LIST in order (comma separated; the last one repeats):

  200           success, empty ExportProfilesServiceResponse
  partial:N     success with partial_success.rejected_profiles = N
  503, 400, ... that HTTP status with a google.rpc.Status body
  429ra:S       429 with "Retry-After: S"
  big           200 with a 2 MiB body
  hang:S        waits S seconds before answering 200 (past a client's timeout)
  slow:S        the same, for a receiver slower than the windows
  echo400       400 whose google.rpc.Status message repeats the request's own headers (a
                receiver that leaks them: the client must not write them anywhere)

SIGTERM ends it.
"""
import gzip
import http.server
import os
import signal
import ssl
import sys
import threading
import time


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def rpc_status(code, message):
    return field_varint(1, code) + field_bytes(2, message.encode())


class State:
    def __init__(self, directory, answers):
        self.dir = directory
        self.answers = answers
        self.n = 0
        self.lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        st = self.server.state
        n_len = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n_len)
        with st.lock:
            n = st.n
            st.n += 1
            answer = st.answers[min(n, len(st.answers) - 1)]
        enc = self.headers.get("Content-Encoding", "")
        raw = gzip.decompress(body) if enc == "gzip" else body
        with open(os.path.join(st.dir, "req-%d.meta" % n), "w") as f:
            f.write("path %s\n" % self.path)
            f.write("encoding %s\n" % (enc or "none"))
            f.write("wire-bytes %d\n" % len(body))
            f.write("time %.3f\n" % time.time())
            for k, v in self.headers.items():
                f.write("header %s: %s\n" % (k, v))
        with open(os.path.join(st.dir, "req-%d.pb" % n), "wb") as f:
            f.write(raw)
        self.answer(answer)

    def send(self, code, body, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def answer(self, a):
        if a == "200":
            self.send(200, b"")
        elif a.startswith("partial:"):
            ps = field_varint(1, int(a[8:])) + field_bytes(2, b"some profiles were rejected")
            self.send(200, field_bytes(1, ps))
        elif a.startswith("429ra:"):
            self.send(429, rpc_status(8, "slow down"), [("Retry-After", a[6:])])
        elif a == "big":
            self.send(200, b"\x00" * (2 << 20))
        elif a.startswith("hang:") or a.startswith("slow:"):
            time.sleep(float(a[5:]))
            try:
                self.send(200, b"")
            except OSError:
                pass
        elif a == "echo400":
            std = ("host", "user-agent", "accept", "accept-encoding", "content-type",
                   "content-encoding", "content-length")
            text = "; ".join("%s: %s" % kv for kv in self.headers.items()
                             if kv[0].lower() not in std)
            self.send(400, rpc_status(3, "bad request with " + text))
        else:
            code = int(a)
            self.send(code, rpc_status(3 if code == 400 else 14, "receiver says %d" % code))


def main():
    directory = sys.argv[1]
    answers = ["200"]
    tls = None
    args = sys.argv[2:]
    while args:
        if args[0] == "--answers":
            answers = args[1].split(",")
            args = args[2:]
        elif args[0] == "--tls":
            tls = (args[1], args[2])
            args = args[3:]
        else:
            sys.exit("otlprecv.py: unknown argument %r" % args[0])
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(directory, answers)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    tmp = os.path.join(directory, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(directory, "port"))
    srv.serve_forever()


main()
