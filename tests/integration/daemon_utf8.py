#!/usr/bin/env python3
"""Every JSON body is valid UTF-8 JSON (issue 14, point 4): a field name damaged into a byte
that is not UTF-8 (rows, file description, Connect), request paths and column names echoed in
errors (`/files/%c0%ae%c0%ae/...`, `%ff`), each body decoded strictly (UTF-8, then JSON), and
the damaged name comes back as U+FFFD. Usage: tests/integration/daemon_utf8.py BIN ROOT"""
import json
import subprocess
import sys
import urllib.error
import urllib.request

from lanced_it import Checks, start

BIN, ROOT = sys.argv[1], sys.argv[2]
T = Checks("utf8")
check = T.check


# A copy of sample.lance whose field name "i64_n" starts with 0xff (same length: the
# protobuf around it stays valid).
data = bytearray(open(f"{ROOT}/sample.lance", "rb").read())
at = data.find(b"i64_n")
assert at > 0 and data.count(b"i64_n") == 1
data[at] = 0xFF
open(f"{ROOT}/badname.lance", "wb").write(data)

p, port, _ = start(BIN, ROOT, "--workers", "1")
base = f"http://127.0.0.1:{port}"


def fetch(path, body=None, headers=None):
    req = urllib.request.Request(base + path, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def strict(raw):
    try:
        return json.loads(raw.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError) as e:
        return e


cases = [
    ("rows of a file with a damaged field name", "/files/badname.lance/rows?ids=1,2", None, None),
    ("description of that file", "/files/badname.lance", None, None),
    ("Connect GetFile of that file", "/lanced.v1.RowService/GetFile",
     b'{"path":"badname.lance"}', {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}),
    ("Connect Take of that file", "/lanced.v1.RowService/Take",
     b'{"path":"badname.lance","ids":["1"]}', {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}),
    ("error echoing an overlong-encoded path", "/files/%c0%ae%c0%ae/x.lance/rows?ids=1", None, None),
    ("error echoing a path byte 0xff", "/files/%ff%fe.lance/rows?ids=1", None, None),
    ("error echoing a column name byte 0xff", "/files/sample.lance/rows?ids=1&columns=%ff%c3", None, None),
    ("error echoing a truncated UTF-8 column name", "/files/sample.lance/rows?ids=1&columns=%e2%82", None, None),
]
for name, path, body, headers in cases:
    status, raw = fetch(path, body, headers)
    doc = strict(raw)
    check(not isinstance(doc, Exception), f"{name}: {status}, valid UTF-8 JSON" +
          ("" if not isinstance(doc, Exception) else f" — {doc}: {raw[:120]!r}"))
status, raw = fetch("/files/badname.lance/rows?ids=1")
doc = strict(raw)
check(not isinstance(doc, Exception) and "\ufffd64_n" in doc.get("columns", []),
      f"the damaged name is served as U+FFFD + '64_n' ({doc.get('columns') if isinstance(doc, dict) else doc})")
p.kill()
out = subprocess.run([f"{BIN}/lancectl", "inspect", f"{ROOT}/badname.lance"], capture_output=True)
try:
    out.stdout.decode("utf-8", errors="strict")
    check(out.returncode == 0, "lancectl inspect of that file prints valid UTF-8 text")
except UnicodeDecodeError as e:
    check(False, f"lancectl inspect: {e}")
T.finish()
