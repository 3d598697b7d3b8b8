#!/usr/bin/env python3
"""docs/api.md's error tables say what the daemon answers (issue 14: "docs/api.md's error table
matches what the daemon does"; issue 18: one table of codes).

Read from the sources, not from a list kept here:
- every (status, code) a REST route can answer: the row of errors.c's table (indexed by
  enum ld_kind) of each kind an `ld_errf(e, LD_KIND, ...)` in daemon/lanced/*.c outside
  connect.c and grpc.c names (the Connect and gRPC routes answer their own codes), and each liblance code's row
  (a liblance error reaches REST through it);
- every Connect code errors.c maps to, with the HTTP status connect.c's connect_codes table gives it.
Each must appear in docs/api.md: REST as a row `| STATUS | ... `code` ... |` of the error table,
Connect in the paragraph listing the Connect codes and their statuses.
Usage: tests/integration/errors_documented.py (from anywhere; no daemon needed)."""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def rest_pairs(by_kind):
    pairs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "daemon/lanced/*.c"))):
        if os.path.basename(path) in ("connect.c", "grpc.c", "errors.c"):
            continue
        src = open(path, encoding="utf-8").read()
        # ld_errf names the kind; ld_body_decode is told the kind it refuses a coding with.
        for m in re.finditer(r'(?:ld_errf\([^,]*|ld_body_decode\([^,]*),\s*(LD_[A-Z_]+),', src):
            name, http, _ = by_kind[m.group(1)]
            pairs.setdefault((http, name), os.path.basename(path))
    return pairs


def errors_table():
    src = read("daemon/lanced/errors.c")
    body = src[src.index("codes[LD_KIND_COUNT] = {"):]
    body = body[:body.index("};")]
    lib_part = body[:body.index("the daemon's own")]
    row = r'\[(LD_[A-Z_]+)\]\s*=\s*\{"([a-z_]+)",\s*(\d{3}),\s*"([a-z_]+)"\}'
    by_kind = {k: (n, int(h), c) for k, n, h, c in re.findall(row, body)}
    every = list(by_kind.values())
    from_lib = {k for k, _, _, _ in re.findall(row, lib_part)}
    return every, from_lib, by_kind


def connect_statuses():
    src = read("daemon/lanced/connect.c")
    body = src[src.index("connect_codes[] = {"):]
    body = body[:body.index("};")]
    return {c: int(h) for c, h in re.findall(r'\{"([a-z_]+)",\s*(\d{3})\}', body)}


def main():
    api = read("docs/api.md")
    rows = [l for l in api.splitlines() if re.match(r"\| \d{3} \|", l)]
    fails = []
    every, from_lib, by_kind = errors_table()
    pairs = rest_pairs(by_kind)
    for kind in from_lib:
        name, http, _ = by_kind[kind]
        pairs.setdefault((http, name), "errors.c")
    if len(pairs) < 8 or len(rows) < 8:
        fails.append(f"found only {len(pairs)} answers in the sources and {len(rows)} table rows")
    for (http, code), where in sorted(pairs.items()):
        if not any(l.startswith(f"| {http} |") and f"`{code}`" in l for l in rows):
            fails.append(f"{where} answers {http} {code}; docs/api.md's error table has no such row")

    statuses = connect_statuses()
    start = api.index("Errors use the Connect error body")
    para = api[start:api.index("\n\n", start)]
    for code in sorted({c for _, _, c in every}):
        http = statuses.get(code)
        if http is None:
            fails.append(f"errors.c maps to Connect code {code}, which connect_status does not know")
        elif not re.search(rf"`{code}`[^0-9]*{http}\b", para):
            fails.append(f"Connect code {code} answers {http}; docs/api.md's Connect paragraph does not say so")

    for f in fails:
        print("FAIL", f)
    if not fails:
        print(f"ok   docs/api.md lists all {len(pairs)} REST answers and "
              f"{len({c for _, _, c in every})} Connect codes with the statuses the daemon gives")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
