#!/usr/bin/env python3
"""gRPC over HTTP/2 with Debian's python3-grpcio (issue 37), against a real lanced.

Stubs are generated from proto/lanced/v1/lanced.proto with python3-grpc-tools into a temporary
directory; grpc.health.v1 is called generically (its two messages are one varint each).
- every case of every committed fixture (tests/fixtures/{data,datasets}/*.answers, pinned
  versions too) asked with Take (FORMAT_ARROW) over gRPC: the Arrow IPC bytes equal those the
  REST route (GET /files/<path>/rows?format=arrow, HTTP/1.1) answers for the same case;
- GetFile names the same columns as GET /files/<path>;
- errors carry the status docs/api.md's table maps them to (out_of_range, not_found,
  invalid_argument, unimplemented), with the message;
- grpc-timeout: a call that stalls past its deadline gets DEADLINE_EXCEEDED at its deadline,
  and the daemon itself answers so (grpc-status 4, seen with curl, which keeps no timer of
  its own), not only the client's timer;
- gzip both ways: a compressed request is read, and its answer comes compressed (smaller on
  the wire, per the request log) and equal;
- 100 calls in flight on one channel (one HTTP/2 connection) all answered;
- Health/Check: SERVING for "" and lanced.v1.RowService, NOT_FOUND for another service.
Usage: tests/integration/daemon_grpc.py BIN_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lanced_it import Checks, start  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bin"))
FIX = os.path.join(ROOT, "tests", "fixtures")
t = Checks("grpc")


def stubs(tmp):
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + os.path.join(ROOT, "proto"),
                    "--python_out=" + tmp, "--grpc_python_out=" + tmp, "lanced/v1/lanced.proto"], check=True)
    sys.path.insert(0, tmp)
    from lanced.v1 import lanced_pb2, lanced_pb2_grpc
    return lanced_pb2, lanced_pb2_grpc


def fixture_cases():
    """(path, ids, columns or None, version or 0) for every answer line of every fixture."""
    index = json.load(open(os.path.join(FIX, "index.json")))
    out = []
    for kind in ("data", "datasets"):
        d = os.path.join(FIX, kind)
        for name in sorted(os.listdir(d)):
            if not name.endswith(".answers"):
                continue
            path = "datasets/" + name[:-8] + ".lance" if kind == "datasets" else "data/" + name[:-8]
            for line in open(os.path.join(d, name)):
                if not line.strip():
                    continue
                ids_text, second, _ = line.rstrip("\n").split("\t", 2)
                ids = json.loads(ids_text)
                if kind == "datasets":
                    out.append((path, ids, None, int(second)))
                else:
                    out.append((path, ids, None if second == "null" else json.loads(second), 0))
    del index
    return out


def rest(port, path, ids, cols, version):
    q = "ids=" + ",".join(map(str, ids)) + "&format=arrow"
    if cols:
        q += "&columns=" + ",".join(urllib.request.quote(c, safe="") for c in cols)
    if version:
        q += "&version=%d" % version
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/files/%s/rows?%s" % (port, path, q)) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    tmp = tempfile.mkdtemp(prefix="lanced-grpc.")
    pb, pbg = stubs(tmp)
    p, port, log = start(BIN, FIX, "--request-log", "true")
    logged = collect(p, log)
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    stub = pbg.RowServiceStub(ch)
    try:
        # ---- every fixture case: gRPC's Arrow bytes are REST's ----------------------------
        cases = fixture_cases()
        same = differ = 0
        first_bad = None
        futures = []
        for (path, ids, cols, version) in cases:
            req = pb.TakeRequest(path=path, ids=ids, columns=cols or [], version=version, format=pb.FORMAT_ARROW)
            futures.append(((path, ids, cols, version), stub.Take.future(req, timeout=60)))
            if len(futures) >= 16 or (path, ids, cols, version) == cases[-1]:
                for case, f in futures:
                    status, body = rest(port, *case)
                    try:
                        got = (200, f.result().arrow_ipc)
                    except grpc.RpcError as e:
                        got = (e.code(), e.details())
                    if status == 200 and got[0] == 200 and got[1] == body:
                        same += 1
                    elif status != 200 and got[0] != 200:
                        same += 1  # refused both ways (checked for codes below)
                    else:
                        differ += 1
                        first_bad = first_bad or (case, status, got[0])
                futures = []
        t.check(differ == 0 and same == len(cases),
                "%d fixture cases: gRPC Take's Arrow IPC equals the REST answer byte for byte (%d differ; first %s)"
                % (len(cases), differ, first_bad))

        # ---- GetFile ----------------------------------------------------------------------------
        fi = stub.GetFile(pb.GetFileRequest(path="data/core21"))
        with urllib.request.urlopen("http://127.0.0.1:%d/files/data/core21" % port) as r:
            desc = json.load(r)
        t.check([f.name for f in fi.fields] == [c["name"] for c in desc["columns"]] and fi.num_rows == desc["num_rows"],
                "GetFile names the columns and rows GET /files/<path> does (%d columns)" % len(fi.fields))

        # ---- errors -------------------------------------------------------------------------------
        def code_of(req, method=None):
            try:
                (method or stub.Take)(req, timeout=10)
                return None, ""
            except grpc.RpcError as e:
                return e.code(), e.details()
        for req, want, what in [
            (pb.TakeRequest(path="data/core21", ids=[10 ** 9]), grpc.StatusCode.OUT_OF_RANGE, "an id past the end"),
            (pb.TakeRequest(path="data/nope.lance", ids=[1]), grpc.StatusCode.NOT_FOUND, "no such file"),
            (pb.TakeRequest(path="data/core21"), grpc.StatusCode.INVALID_ARGUMENT, "no ids"),
            (pb.TakeRequest(path="../etc", ids=[1]), grpc.StatusCode.INVALID_ARGUMENT, "a path climbing out"),
            (pb.TakeRequest(path="data/core21", ids=[1], columns=["st"], format=pb.FORMAT_PROTO),
             grpc.StatusCode.UNIMPLEMENTED, "a struct column as FORMAT_PROTO"),
        ]:
            code, msg = code_of(req)
            t.check(code == want and msg, "%s: %s (%s)" % (what, code, msg[:80]))
        code, _ = code_of(b"", ch.unary_unary("/lanced.v1.RowService/Nope"))
        t.check(code == grpc.StatusCode.UNIMPLEMENTED, "an unknown method: UNIMPLEMENTED (%s)" % code)

        # ---- gzip both ways -----------------------------------------------------------------------
        ids = list(range(0, 400))
        plain = stub.Take(pb.TakeRequest(path="data/core21", ids=ids), timeout=30)
        zipped = stub.Take(pb.TakeRequest(path="data/core21", ids=ids), timeout=30, compression=grpc.Compression.Gzip)
        t.check(plain.arrow_ipc == zipped.arrow_ipc and plain.num_rows == 400,
                "a gzip-compressed request is read and its answer equals the plain one")
        time.sleep(0.3)
        outs = [int(m.group(1)) for m in re.finditer(r"POST /lanced\.v1\.RowService/Take 200 arrow rows=400 in=\d+ out=(\d+)",
                                                     logged())]
        t.check(len(outs) >= 2 and outs[-1] < outs[-2] / 2,
                "the answer to a gzip request came gzip-compressed (%s bytes on the wire, plain first)" % outs[-2:])

        # ---- 100 calls in flight on one connection --------------------------------------------------
        fs = [stub.Take.future(pb.TakeRequest(path="data/core21", ids=[i, i + 1], format=pb.FORMAT_ARROW), timeout=30)
              for i in range(100)]
        ok = sum(1 for f in fs if f.result().num_rows == 2)
        t.check(ok == 100, "100 concurrent calls on one channel: %d answered" % ok)

        # ---- health -------------------------------------------------------------------------------
        check = ch.unary_unary("/grpc.health.v1.Health/Check")
        t.check(check(b"", timeout=5) == b"\x08\x01", "Health/Check '': SERVING")
        svc = b"lanced.v1.RowService"
        t.check(check(b"\x0a" + bytes([len(svc)]) + svc, timeout=5) == b"\x08\x01", "Health/Check lanced.v1.RowService: SERVING")
        code, _ = code_of(b"\x0a\x03foo", check)
        t.check(code == grpc.StatusCode.NOT_FOUND, "Health/Check of another service: NOT_FOUND (%s)" % code)
    finally:
        ch.close()
        p.terminate()
        p.wait(10)

    # ---- grpc-timeout, honoured by the daemon ---------------------------------------------------
    env = dict(os.environ, LANCED_TEST_STALL_PATH="RowService/Take", LANCED_TEST_STALL_MS="1200")
    p, port, log = start(BIN, FIX, "--request-log", "true", "--io-mode", "buffered", env=env)
    logged = collect(p, log)
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    stub = pbg.RowServiceStub(ch)
    try:
        t0 = time.time()
        try:
            stub.Take(pb.TakeRequest(path="data/core21", ids=[1]), timeout=0.4)
            code = None
        except grpc.RpcError as e:
            code = e.code()
        t.check(code == grpc.StatusCode.DEADLINE_EXCEEDED and time.time() - t0 < 1.0,
                "a call stalled past grpc-timeout: DEADLINE_EXCEEDED at its deadline (%.2f s)" % (time.time() - t0))
        # grpcio cancels the call at its deadline; curl does not, so what comes is the daemon's.
        msg = pb.TakeRequest(path="data/core21", ids=[1]).SerializeToString()
        body = b"\x00" + len(msg).to_bytes(4, "big") + msg
        r = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-D", "-", "-o", "/dev/null",
                            "-H", "content-type: application/grpc", "-H", "te: trailers", "-H", "grpc-timeout: 300m",
                            "--data-binary", "@-", "http://127.0.0.1:%d/lanced.v1.RowService/Take" % port],
                           input=body, capture_output=True, timeout=20)
        head = r.stdout.decode(errors="replace")
        t.check("grpc-status: 4" in head and "grpc-timeout" in head,
                "the daemon itself answers DEADLINE_EXCEEDED (grpc-status 4) past grpc-timeout (curl: %s)"
                % " ".join(head.split())[:120])
        time.sleep(0.2)
        t.check(re.search(r"POST /lanced\.v1\.RowService/Take 504 ", logged()) is not None,
                "and logs it as 504 deadline_exceeded")
        fast = stub.Take(pb.TakeRequest(path="data/core21", ids=[1]), timeout=5)
        t.check(fast.num_rows == 1, "a call within its deadline is answered")
    finally:
        ch.close()
        p.terminate()
        p.wait(10)
    t.finish()


def collect(p, log):
    """Reads the daemon's log as it comes (its request log would otherwise fill the pipe and
    stall it) into log, a list of lines; returns a function giving the text so far."""
    def run():
        for line in p.stderr:
            log.append(line)
    threading.Thread(target=run, daemon=True).start()
    return lambda: "".join(log)


main()
