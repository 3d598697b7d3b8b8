#!/usr/bin/env python3
"""Tiny stand-in for lanced used by the lanced-load self-test: HTTP/1.1 keep-alive on
127.0.0.1, the metadata and rows routes (rows echo the requested ids as JSON), /healthz,
static files from --root, and a chunked route, so the client is tested without the daemon."""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit


def rows_body(ids, columns):
    cols = columns or ["id"]
    rows = [{c: (i if c == "id" else "v%d" % i) for c in cols} for i in ids]
    return json.dumps({"num_rows": len(ids), "columns": cols, "rows": rows}, separators=(",", ":")).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes
    root = "."
    num_rows = 1000

    def log_message(self, *args):  # quiet: the test reads only lanced-load's output
        pass

    def send_body(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_chunked(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(0, len(body), 7):
            part = body[i:i + 7]
            self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")

    def rows(self, ids, columns):
        if any(i < 0 or i >= self.num_rows for i in ids):
            return self.send_body(400, b'{"error":"id out of range"}')
        self.send_body(200, rows_body(ids, columns))

    def do_GET(self):
        u = urlsplit(self.path)
        path = unquote(u.path)
        q = parse_qs(u.query)
        if path == "/healthz":
            return self.send_body(200, b"ok\n", "text/plain")
        if path == "/chunked":
            return self.send_chunked(b"hello chunked world, " * 20)
        if path.startswith("/files/") and path.endswith("/rows"):
            ids = [int(x) for x in q.get("ids", [""])[0].split(",") if x]
            cols = q["columns"][0].split(",") if "columns" in q else None
            return self.rows(ids, cols)
        if path.startswith("/files/"):
            return self.send_body(200, json.dumps({"path": path[7:], "num_rows": self.num_rows}).encode())
        full = os.path.join(self.root, path.lstrip("/"))
        if os.path.isfile(full):
            with open(full, "rb") as f:
                return self.send_body(200, f.read(), "application/octet-stream")
        self.send_body(404, b"not found\n", "text/plain")

    def do_POST(self):
        path = unquote(urlsplit(self.path).path)
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"{}")
        if not (path.startswith("/files/") and path.endswith("/rows")):
            return self.send_body(404, b"not found\n", "text/plain")
        self.rows(body.get("ids", []), body.get("columns"))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # The load generator drops in-flight connections when its run ends; not news.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--num-rows", type=int, default=1000)
    ap.add_argument("--port-file", required=True, help="the chosen port is written here")
    a = ap.parse_args()
    Handler.root = a.root
    Handler.num_rows = a.num_rows
    srv = Server(("127.0.0.1", 0), Handler)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
