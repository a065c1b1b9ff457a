#!/usr/bin/env python3
"""A stand-in of the Docker Engine API on a unix socket, for the control-plane bounds of
tests/ctrlimits.bats.

    enginestub.py SOCKET MODE

GET /_ping answers OK with "Api-Version: 1.41".  Every other request: MODE "big" answers 5 MiB
(with its Content-Length), "chunked" the same without one (chunked encoding), "slow" waits 7 s
first, "notjson" answers 200 with a body that is no JSON.
"""
import http.server
import os
import socketserver
import sys
import time

SOCKET, MODE = sys.argv[1], sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):
        return "unix"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        if self.path == "/_ping":
            self.send_response(200)
            self.send_header("Api-Version", "1.41")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"OK")
            return
        if MODE == "slow":
            time.sleep(7)
        body = b"<html>oops</html>" if MODE == "notjson" else b" " * (5 << 20)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if MODE == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 65536):
                part = body[i:i + 65536]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


if os.path.exists(SOCKET):
    os.unlink(SOCKET)
Server(SOCKET, Handler).serve_forever()
