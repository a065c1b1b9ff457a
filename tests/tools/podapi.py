#!/usr/bin/env python3
"""A loopback TLS stand-in of the Kubernetes Pod API, for tests/k8s.bats.

    podapi.py DIR PORTFILE

Serves GET /api/v1/namespaces/NS/pods/NAME over HTTPS with DIR/server.crt and DIR/server.key,
answering DIR/pods/NS/NAME.json (a Pod object the test writes, and rewrites to play a
restart or a replaced Pod) when the request carries "Authorization: Bearer" and the contents
of DIR/token; a missing file is a 404 Status as the API server words it, a wrong token a 401.
DIR/mode changes the answers: "big" sends 5 MiB, "slow" waits 7 s first.  Each request
is appended to DIR/requests.log.  The port it listens on (chosen by the kernel) goes to
PORTFILE once it accepts connections.
"""
import http.server
import json
import os
import ssl
import sys
import time

DIR = sys.argv[1]


def status(code, reason, message):
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                       "status": "Failure", "message": message, "reason": reason,
                       "code": code}).encode()


def read(name, default=""):
    try:
        with open(os.path.join(DIR, name)) as f:
            return f.read().strip()
    except OSError:
        return default


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        with open(os.path.join(DIR, "requests.log"), "a") as f:
            f.write("%s %s\n" % (self.command, self.path))

    def answer(self, code, body):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        mode = read("mode")
        if mode == "slow":
            time.sleep(7)
        if self.headers.get("Authorization") != "Bearer " + read("token"):
            return self.answer(401, status(401, "Unauthorized", "Unauthorized"))
        if mode == "big":
            return self.answer(200, b" " * (5 << 20))
        parts = self.path.split("/")
        if len(parts) != 7 or parts[:4] != ["", "api", "v1", "namespaces"] or parts[5] != "pods":
            return self.answer(404, status(404, "NotFound", "the server could not find "
                                           "the requested resource"))
        ns, name = parts[4], parts[6]
        try:
            with open(os.path.join(DIR, "pods", ns, name + ".json"), "rb") as f:
                body = f.read()
        except OSError:
            return self.answer(404, status(404, "NotFound", 'pods "%s" not found' % name))
        self.answer(200, body)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "server.crt"), os.path.join(DIR, "server.key"))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    server.serve_forever()


if __name__ == "__main__":
    main()
