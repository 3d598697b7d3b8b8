#!/usr/bin/env python3
"""Clients that half-close (shutdown(SHUT_WR) right after the request, as `nc -N` does) get
their answer when it comes asynchronously: from a loop task parked on its reads or from a take
thread (the connection suspended meanwhile). libmicrohttpd 0.9.75 reads a resumed connection
before it asks for the answer, took the end of the stream for an abort and dropped the answer
(499 in the request log) whenever another connection was open; server.c has it ask first.
Idle keep-alive connections are held open throughout, which is what made the loss certain.
Usage: tests/integration/daemon_halfclose.py BIN ROOT"""
import os
import re
import socket
import sys
import time

from lanced_it import Checks, read_to_close, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("halfclose")
check = T.check
env = dict(os.environ, LANCED_TEST_STALL_PATH="embeddings.lance", LANCED_TEST_STALL_MS="100")
p, port, _ = start(BIN, ROOT, "--workers", "1", env=env)


def half_closed(raw, timeout=10.0):
    """Sends raw, half-closes, reads until the server closes; (bytes, closed)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    s.sendall(raw)
    s.shutdown(socket.SHUT_WR)
    return read_to_close(s, errors=OSError)


idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
time.sleep(0.2)
take = b'{"path":"embeddings.lance","ids":["1","2"]}'
cases = [
    ("rows parked on a loop task", b"GET /files/embeddings.lance/rows?ids=1,2 HTTP/1.1\r\nHost: x\r\n\r\n", 1),
    ("a description on a take thread", b"GET /files/embeddings.lance HTTP/1.1\r\nHost: x\r\n\r\n", 1),
    ("a Connect Take with a body", b"POST /lanced.v1.RowService/Take HTTP/1.1\r\nHost: x\r\n"
     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(take), take), 1),
    ("two pipelined, then half-closed", b"GET /files/embeddings.lance/rows?ids=3 HTTP/1.1\r\nHost: x\r\n\r\n"
     b"GET /files/embeddings.lance/rows?ids=4 HTTP/1.1\r\nHost: x\r\n\r\n", 2),
]
for name, raw, n in cases:
    for i in range(5):
        out, closed = half_closed(raw)
        got = re.findall(rb"HTTP/1\.1 (\d{3})", out)
        if got != [b"200"] * n or not closed:
            break
    check(got == [b"200"] * n and closed,
          f"{name}: answered 200 and closed, 5 times (statuses {[x.decode() for x in got]}, closed {closed})")

# Answered inline (no park, no thread): the end of the stream is seen once the answer is out and
# the connection closes then. With libmicrohttpd it stayed in CLOSE-WAIT until the header
# deadline (10 s by default), holding a connection slot like an idle one.
for i in range(5):
    t0 = time.monotonic()
    out, closed = half_closed(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5.0)
    secs = time.monotonic() - t0
    if not (out.startswith(b"HTTP/1.1 200") and closed and secs < 2):
        break
check(out.startswith(b"HTTP/1.1 200") and closed and secs < 2,
      f"answered inline, half-closed: 200 and closed at once, 5 times ({out[:20]!r}, closed {closed}, {secs:.2f} s)")

# The same connections are still served as usual: keep-alive after an asynchronous answer.
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(10)
out = b""
for i in range(3):
    s.sendall(b"GET /files/embeddings.lance/rows?ids=%d HTTP/1.1\r\nHost: x\r\n\r\n" % i)
    while out.count(b"HTTP/1.1 ") <= i or not out.endswith(b"]}"):
        d = s.recv(65536)
        if not d:
            break
        out += d
s.close()
got = re.findall(rb"HTTP/1\.1 (\d{3})", out)
check(got == [b"200"] * 3, f"three asynchronous answers in turn on one keep-alive connection ({got})")
for s in idle:
    s.close()
p.kill()
T.finish()
