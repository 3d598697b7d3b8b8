#!/usr/bin/env python3
"""Arrow answers sent as pieces are the same bytes (issue 34): an Arrow answer's large value
buffers stay in the take's arrays and HTTP/1.1 sends them with the bytes around them in one
sendmsg of many iovecs (h1.c), HTTP/2 copies them into one buffer (h2.c). For every fixture
data file and dataset, the daemon's Arrow body for a spread of ids (request order, a repeat)
must equal `lancectl take --format arrow` (the flat encoder) byte for byte: from a daemon at
the default threshold (only buffers of 16 KiB and more are pieces) and from one where every
value buffer is a piece (LANCED_TEST_REF_MIN_BYTES=1), over HTTP/1.1 and, for a share of the
files, HTTP/2; protobuf answers, whose binaries and tensors are pieces too, byte for byte a
daemon's that packs them flat. A third daemon (buffered reads) leaves plain strings, binaries and
vectors in their file (LANCED_TEST_FILE_VALUES_MIN=1): its answers are the same bytes, the values written from
the file's mapping (lanced_answer_file_bytes_total counts them). Then answers larger than the
socket takes at once: 10,000 rows of the 33-column file and of enc21's full-zip strings, read
slowly (the iovecs advanced across partial writes), pipelined behind each other on one
connection.
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

from lanced_it import Checks, metric, start

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


def h2_get(port, path, accept=ARROW):
    r = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-H", f"Accept: {accept}",
                        f"http://127.0.0.1:{port}{path}"], capture_output=True)
    return r.stdout


PROTO = "application/x-protobuf"


def warm(fetch):
    """The second of two identical requests: a protobuf answer carries the take's read
    statistics, which differ between a cold first take and a warm one."""
    fetch()
    return fetch()


# Values go to the socket from their file only where the page cache holds them (cachestat):
# read every data file once, as a warm server's are.
for path in glob.glob(f"{ROOT}/data/*/data/*.lance") + glob.glob(f"{ROOT}/datasets/*.lance/data/*.lance"):
    with open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass

plain, pport, _ = start(BIN, ROOT)
every, eport, _ = start(BIN, ROOT, env=dict(os.environ, LANCED_TEST_REF_MIN_BYTES="1"))
# Buffered reads, every plain string and binary column the page cache holds left in its file,
# written from the file's mapping over HTTP/1.1 and read in for HTTP/2 (file_values_min).
infile, fport, _ = start(BIN, ROOT, "--io-mode", "buffered", env=dict(os.environ, LANCED_TEST_REF_MIN_BYTES="1",
                                               LANCED_TEST_FILE_VALUES_MIN="1"))
# Refs off (nothing is that large): protobuf answers packed flat, the reference the others'
# pieces must rebuild.
flat, lport, _ = start(BIN, ROOT, env=dict(os.environ, LANCED_TEST_REF_MIN_BYTES=str(1 << 50)))
pc = http.client.HTTPConnection("127.0.0.1", pport, timeout=30)
lc = http.client.HTTPConnection("127.0.0.1", lport, timeout=30)
ec = http.client.HTTPConnection("127.0.0.1", eport, timeout=30)
fc = http.client.HTTPConnection("127.0.0.1", fport, timeout=30)


def file_bytes():
    """The daemon leaving values in their file (fport): the bytes it has sent from files."""
    return metric(fport, "lanced_answer_file_bytes_total")


compared, mismatched, h2_compared, large, undescribed, all_targets = 0, [], 0, 0, [], targets()
files_sent, proto_compared, proto_mismatched = [], 0, []
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
    before = file_bytes()
    s3, b3 = get(fc, path)
    from_file = file_bytes() - before
    if from_file > 0:
        files_sent.append(rel.split("/")[1])
    compared += 1
    large += len(want) > 64 * 1024
    if not (s1 == 200 and b1 == want and s2 == 200 and b2 == want and s3 == 200 and b3 == want):
        mismatched.append(f"{rel} ({s1}/{s2}/{s3}, {len(b1)}/{len(b2)}/{len(b3)} vs {len(want)} bytes)")
    if i % 4 == 0:
        h2_compared += 1
        if h2_get(eport, path) != want:
            mismatched.append(f"{rel} over HTTP/2")
    if from_file > 0 and h2_get(fport, path) != want:
        mismatched.append(f"{rel} over HTTP/2, values read from their file")
    # Protobuf: its binaries and tensors left in place (the default and every-piece daemons)
    # rebuild the flat packing byte for byte.
    want_pb = warm(lambda: get(lc, path, accept=PROTO))
    proto_compared += want_pb[0] == 200  # the others are 4xx: types protobuf answers do not carry
    for name, conn in (("default", pc), ("every piece", ec)):
        if warm(lambda: get(conn, path, accept=PROTO)) != want_pb:
            proto_mismatched.append(f"{rel} ({name})")
    if i % 4 == 0 and warm(lambda: h2_get(eport, path, PROTO)) != warm(lambda: h2_get(lport, path, PROTO)):
        proto_mismatched.append(f"{rel} over HTTP/2")
check(len(all_targets) >= 60 and not undescribed, f"{len(all_targets)} fixture files and datasets described (failed: {undescribed[:5]})")
check(compared >= 50 and not mismatched,
      f"Arrow bodies byte for byte as lancectl's flat encoder: {compared} fixtures, {large} over 64 KiB, "
      f"{h2_compared} also over HTTP/2 (mismatched: {mismatched[:5]})")
check(proto_compared >= 20 and not proto_mismatched,
      f"protobuf bodies with their large fields as pieces byte for byte the flat packing: {proto_compared} "
      f"fixtures (mismatched: {proto_mismatched[:5]})")
# The fixtures with plain full-zip strings (enc21/enc22's fz_s, Variable(Flat(32)) in lancectl
# inspect); the others' strings are mini-block, dictionary or compressed, and stay copied.
check({"enc21", "enc22"} <= set(files_sent),
      f"values written to the socket from their file's mapping for {sorted(set(files_sent))}, each also equal "
      f"over HTTP/2 (read in there)")
# Vectors too: emb21's emb (full-zip FixedSizeList(128, Flat(32)), all valid; its only such
# column: emb_n beside it has nulls and stays copied).
check("emb21" in files_sent, f"vectors written from their file's mapping: emb21 among {sorted(set(files_sent))}")

# Larger than the socket takes at once: the answer goes out over several sendmsg calls, the
# iovecs advanced across partial writes (a slow reader makes them many).
def lancectl_cols(rel, ids, cols):
    r = subprocess.run([f"{BIN}/lancectl", "take", f"{ROOT}/{rel}", "--ids", ",".join(map(str, ids)),
                        "--columns", cols, "--format", "arrow"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


core = os.path.relpath(sorted(glob.glob(f"{ROOT}/data/core21/data/*.lance"))[0], ROOT)
enc = os.path.relpath(sorted(glob.glob(f"{ROOT}/data/enc21/data/*.lance"))[0], ROOT)
enc_ids = [(i * 7919) % 1000 for i in range(10000)]  # every row ten times, shuffled
cases = (("10,000 rows of the 33-column file", core, list(range(0, 100000, 10))[:10000], None),
         # enc21's plain full-zip strings: with file values, 10,000 runs of the file's mapping
         ("10,000 rows of enc21's fz_s and i32", enc, enc_ids, "fz_s,fz_i32"))
for what, rel, ids, cols in cases:
    want = lancectl(rel, ids) if cols is None else lancectl_cols(rel, ids, cols)
    q = {"ids": ids} if cols is None else {"ids": ids, "columns": cols.split(",")}
    body = json.dumps(q).encode()
    req = (f"POST /files/{rel}/rows HTTP/1.1\r\nHost: x\r\nAccept: {ARROW}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    for name, port in (("default threshold", pport), ("every buffer a piece", eport),
                       ("values left in their file", fport)):
        before = file_bytes()
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
        sent = file_bytes() - before
        check(want is not None and len(want) > 64 * 1024 and bodies == [want, want] and
              (port != fport or cols is None or sent > 0),
              f"{what}, {name}: two pipelined answers of {len(want or b'') / 1e6:.2f} MB, read slowly, each "
              f"byte for byte the flat encoder's ({[len(b) for b in bodies]}; {sent} bytes from the file)")


# max_unsent_bytes is a budget of the daemon's memory: an answer left unread counts what it
# holds, not its values that go out from the file's mapping (before, a training batch of
# 24 MB, most of it images from the file, counted whole: 64 such clients made 28 % 503s).
q = json.dumps({"ids": enc_ids, "columns": ["fz_s"]}).encode()
before = file_bytes()
fc.close()  # idle since the files' loop: the daemon may have closed it; http.client opens anew
fc.request("POST", f"/files/{enc}/rows", q, {"Accept": ARROW, "Content-Type": "application/json"})
whole = fc.getresponse().read()
from_file = file_bytes() - before
s = socket.create_connection(("127.0.0.1", fport))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a reader that takes nothing
# Pipelined, 64 of them (6 MB): the socket's buffers take the first few answers whole, and
# the one they stop at waits, counted, while the rest wait unbuilt behind it.
s.sendall(64 * ((f"POST /files/{enc}/rows HTTP/1.1\r\nHost: x\r\nAccept: {ARROW}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(q)}\r\n\r\n").encode() + q))
held, t0 = 0, time.time()
while held <= 0 and time.time() - t0 < 20:
    time.sleep(0.05)
    held = metric(fport, "lanced_unsent_answer_bytes") or 0
s.close()
check(from_file > 0 and held == len(whole) - from_file,
      f"an unread answer of {len(whole)} bytes, {from_file} of them from the file, counts {held} bytes "
      f"against max_unsent_bytes (want {len(whole) - from_file})")

for p in (plain, every, infile, flat):
    p.kill()
T.finish()
