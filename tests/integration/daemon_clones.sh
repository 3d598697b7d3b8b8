#!/usr/bin/env bash
# Shallow clones through the real daemon: LanceDB's cloneTable writes a dataset whose
# manifest names its source by absolute path (tests/fixtures/clones, made by `make
# clone-fixtures` where this checkout is). Rooted where clones and sources are, every answers
# line of every clone (pinned versions too) equals Lance's body, described and over Connect,
# with direct and buffered reads. Rooted where only a clone is, its source is outside the
# data root: 403 naming it, and so is a base path that is a symlink out of the root, while
# the daemon keeps answering.
# Usage: BIN=bin tests/integration/daemon_clones.sh   (run by tests/integration/run.sh).
# The last line is "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-clones
. tests/integration/lib.sh
CLONES=$REPO/tests/fixtures/clones
[[ -f $CLONES/.made ]] || { echo "no clone fixtures: run make clone-fixtures"; echo "0 passed, 1 failed"; exit 1; }

expect() { expect_body "$@"; }

# lancectl (lnc_dataset_open: the base path opened as the manifest names it).
IFS=$'\t' read -r ids _ expected < <(sed -n 2p "$CLONES/clone2_v22.answers")
got=$("$(dirname "$LANCED")/lancectl" take "$CLONES/clone2_v22.lance" --ids "$(tr -d '[] ' <<<"$ids")" 2>&1)
[[ $got == "$expected" ]] && ok "lancectl take from a clone of a clone" || bad "lancectl take from a clone" "$(head -c 200 <<<"$got")"

ROOT=$CLONES
for io in direct buffered; do
  start_daemon "$WORK/lanced-$io.log" --io-mode $io || { echo "0 passed, 1 failed"; exit 1; }
  answers_match "$CLONES" "" "clone answers ($io)"
  [[ $ANS_N -gt 40 ]] && ok "$io answers compared" || bad "$io answers compared" "only $ANS_N"
  kill "$DPID"; wait "$DPID" 2>/dev/null
done

start_daemon "$WORK/lanced.log" || { echo "0 passed, 1 failed"; exit 1; }
expect "describe a clone" 200 '"base_paths":\[{"id":0,' "$URL/files/clone_v22.lance"
grep -q "\"path\":\"$CLONES/clonesrc_v22.lance\"" "$WORK/body" && ok "describe names the source" ||
  bad "describe names the source" "$(head -c 400 "$WORK/body")"
# Two bases, in whichever order Lance listed them.
expect "describe a clone of a clone" 200 '"base_paths":\[{"id":' "$URL/files/clone2_v22.lance"
python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["dataset"]["base_paths"]
sys.exit(sorted(x["id"] for x in b) != [0, 1] or not all(x["is_dataset_root"] for x in b))' "$WORK/body" &&
  ok "a clone of a clone names both sources" || bad "a clone of a clone names both sources" "$(head -c 400 "$WORK/body")"
expect "connect Take from a clone" 200 '"numRows":"2"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"clone2_v22.lance","ids":[0,700],"columns":["id","s"],"format":"FORMAT_PROTO"}'
expect "arrow from a clone" 200 "" "$URL/files/clone_v21.lance/rows?ids=1,2,3&format=arrow"
kill "$DPID"; wait "$DPID" 2>/dev/null

# ---- a root holding the clone but not its source ----------------------------------------------
ROOT=$WORK/only
mkdir -p "$ROOT"
cp -r "$CLONES/clone_v22.lance" "$ROOT/"
cp -r "$CLONES/clone_v21.lance" "$ROOT/linked.lance"
ln -s "$CLONES/clonesrc_v21.lance" "$ROOT/src21.lance"
# setbase DATASET PATH: every manifest of DATASET names PATH as its base path.
cat > "$WORK/setbase.py" <<'PY'
import os, struct, sys
d, new = sys.argv[1], sys.argv[2].encode()
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n: return out
def read_varint(b, i):
    n = s = 0
    while True:
        n |= (b[i] & 0x7F) << s; s += 7; i += 1
        if not b[i - 1] & 0x80: return n, i
def fields(m):  # (field, wire type, raw bytes of the whole field, payload of a length-delimited one)
    i = 0
    while i < len(m):
        start = i
        tag, i = read_varint(m, i)
        wt = tag & 7
        if wt == 0: _, i = read_varint(m, i); payload = None
        elif wt == 1: i += 8; payload = None
        elif wt == 5: i += 4; payload = None
        elif wt == 2:
            n, i = read_varint(m, i); payload = m[i:i + n]; i += n
        else: raise ValueError(wt)
        yield tag >> 3, wt, m[start:i], payload
# Base path (manifest field 18): its path (field 4) replaced, everything else kept.
for name in os.listdir(d):
    if not name.endswith(".manifest"): continue
    p = os.path.join(d, name); b = open(p, "rb").read()
    pos = struct.unpack("<Q", b[-16:-8])[0]; ml = struct.unpack("<I", b[pos:pos + 4])[0]
    out = b""
    for f, wt, raw, payload in fields(b[pos + 4:pos + 4 + ml]):
        if f == 18:
            body = b"".join(r if g != 4 else b"\x22" + varint(len(new)) + new for g, _, r, _ in fields(payload))
            raw = b"\x92\x01" + varint(len(body)) + body
        out += raw
    open(p, "wb").write(b[:pos] + struct.pack("<I", len(out)) + out + struct.pack("<Q", pos) + b[-8:])
PY
setbase() { python3 "$WORK/setbase.py" "$1/_versions" "$2"; }
# linked.lance names its source as $ROOT/src21.lance: below the root, but a symlink out of it.
setbase "$ROOT/linked.lance" "$ROOT/src21.lance"
# inbucket.lance names an object store no mount holds.
cp -r "$CLONES/clone_v21.lance" "$ROOT/inbucket.lance"
setbase "$ROOT/inbucket.lance" "s3://elsewhere/src.lance"
start_daemon "$WORK/lanced-only.log" || { echo "0 passed, 1 failed"; exit 1; }
expect "source outside the data root: 403 naming it" 403 "clonesrc_v22.lance is outside the data root" \
  "$URL/files/clone_v22.lance/rows?ids=0"
expect "source through a symlink out of the root: 403" 403 "leaves the data root" "$URL/files/linked.lance/rows?ids=0"
expect "source in an object store no mount holds: 403" 403 "s3://elsewhere/src.lance is under no mount" \
  "$URL/files/inbucket.lance/rows?ids=0"
expect "healthz after refused clones" 200 "" "$URL/healthz"

it_finish
