#!/usr/bin/env python3
"""Arrow answers sent as pieces are the same bytes (issue 34): an Arrow answer's large value
buffers stay in the take's arrays and HTTP/1.1 sends them with the bytes around them in one
sendmsg of many iovecs (h1.c), HTTP/2 copies them into one buffer (h2.c). For every fixture
data file and dataset, the daemon's Arrow body for a spread of ids (request order, a repeat)
must equal `lancectl take --format arrow` (the flat encoder) byte for byte: from a daemon at
the default threshold (only buffers of 16 KiB and more are pieces) and from one where every
value buffer is a piece (LANCED_TEST_REF_MIN_BYTES=1), over HTTP/1.1 and, for a share of the
files, HTTP/2. Then answers larger than the socket takes at once: 10,000 rows of the 33-column
file, read at once and read slowly (the iovecs advanced across partial writes), pipelined
behind each other on one connection.
Usage: tests/integration/daemon_arrow_bytes.py BIN FIXTURES_DIR"""
import glob
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time

from lanced_it import Checks, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("arrow bytes")
check = T.check
ARROW = "application/vnd.apache.arrow.stream"


def targets():
    files = sorted(glob.glob(f"{ROOT}/data/*/data/*.lance"))
    sets = sorted(d for d in glob.glob(f"{ROOT}/datasets/*.lance") if os.path.isdir(d))
    return [os.path.relpath(p, ROOT) for p in files + sets]


def ids_for(n):
    """Up to ~200 ids across the rows, in a shuffled order, with one repeated."""
    if n <= 0:
        return []
    step = max(1, n // 150)
    ids = list(range(0, n, step))[:150] + [n - 1]
    ids = ids[::2][::-1] + ids[1::2]
    return ids + ids[:1]


def lancectl(rel, ids):
    r = subprocess.run([f"{BIN}/lancectl", "take", f"{ROOT}/{rel}", "--ids", ",".join(map(str, ids)),
                        "--format", "arrow"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def get(conn, path, accept=ARROW):
    conn.request("GET", path, headers={"Accept": accept})
    resp = conn.getresponse()
    return resp.status, resp.read()


def h2_get(port, path):
    r = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-H", f"Accept: {ARROW}",
                        f"http://127.0.0.1:{port}{path}"], capture_output=True)
    return r.stdout


plain, pport, _ = start(BIN, ROOT)
every, eport, _ = start(BIN, ROOT, env=dict(os.environ, LANCED_TEST_REF_MIN_BYTES="1"))
pc = http.client.HTTPConnection("127.0.0.1", pport, timeout=30)
ec = http.client.HTTPConnection("127.0.0.1", eport, timeout=30)

compared, mismatched, h2_compared, large, undescribed, all_targets = 0, [], 0, 0, [], targets()
for i, rel in enumerate(all_targets):
    status, body = get(pc, f"/files/{rel}", accept="application/json")
    if status != 200:
        undescribed.append(f"{rel} ({status})")
        continue
    n = json.loads(body).get("num_rows", 0)
    ids = ids_for(n)
    if not ids:
        continue
    want = lancectl(rel, ids)
    path = f"/files/{rel}/rows?ids={','.join(map(str, ids))}"
    if want is None:  # lancectl refuses it (a column it cannot serve): the daemon must too
        s1, _ = get(pc, path)
        check(s1 != 200, f"{rel}: lancectl refuses it, the daemon too ({s1})")
        continue
    s1, b1 = get(pc, path)
    s2, b2 = get(ec, path)
    compared += 1
    large += len(want) > 64 * 1024
    if not (s1 == 200 and b1 == want and s2 == 200 and b2 == want):
        mismatched.append(f"{rel} ({s1}/{s2}, {len(b1)}/{len(b2)} vs {len(want)} bytes)")
    if i % 4 == 0:
        h2_compared += 1
        if h2_get(eport, path) != want:
            mismatched.append(f"{rel} over HTTP/2")
check(len(all_targets) >= 60 and not undescribed, f"{len(all_targets)} fixture files and datasets described (failed: {undescribed[:5]})")
check(compared >= 50 and not mismatched,
      f"Arrow bodies byte for byte as lancectl's flat encoder: {compared} fixtures, {large} over 64 KiB, "
      f"{h2_compared} also over HTTP/2 (mismatched: {mismatched[:5]})")

# Larger than the socket takes at once: the answer goes out over several sendmsg calls, the
# iovecs advanced across partial writes (a slow reader makes them many).
big_ids = list(range(0, 100000, 10))[:10000]
rel = os.path.relpath(sorted(glob.glob(f"{ROOT}/data/core21/data/*.lance"))[0], ROOT)
want = lancectl(rel, big_ids)
body = json.dumps({"ids": big_ids}).encode()
req = (f"POST /files/{rel}/rows HTTP/1.1\r\nHost: x\r\nAccept: {ARROW}\r\nContent-Type: application/json\r\n"
       f"Content-Length: {len(body)}\r\n\r\n").encode() + body
for name, port in (("default threshold", pport), ("every buffer a piece", eport)):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.sendall(req + req)  # two pipelined: the second answer's head follows the first's last piece
    time.sleep(0.3)  # the daemon fills the socket and waits on EPOLLOUT
    got, t0 = b"", time.time()
    while time.time() - t0 < 60:
        d = s.recv(16384)
        if not d:
            break
        got += d
        if len(got) < 2 * len(want):
            time.sleep(0.0005)
        if got.count(b"HTTP/1.1 200") == 2 and got.endswith(want) and len(got) > 2 * len(want):
            break
    s.close()
    parts = re.split(rb"HTTP/1\.1 200 OK\r\n", got)[1:]
    bodies = [p.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in p else b"" for p in parts]
    check(want is not None and len(want) > 1 << 20 and bodies == [want, want],
          f"{name}: two pipelined answers of {len(want or b'') / 1e6:.1f} MB, read slowly, each byte for byte "
          f"the flat encoder's ({[len(b) for b in bodies]})")

for p in (plain, every):
    p.kill()
T.finish()
