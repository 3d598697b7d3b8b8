#!/usr/bin/env bash
# gRPC over HTTP/2 against Connect over HTTP/1.1 (issue 37): the same Take (protobuf
# TakeRequest, FORMAT_ARROW answer) asked of one lanced both ways by h2load (Debian's
# nghttp2-client), which speaks both protocols with the same engine:
#   - connect: POST /lanced.v1.RowService/Take, application/proto, HTTP/1.1 (h2load --h1),
#     CONNS connections, one request at a time on each;
#   - grpc:    the same call as gRPC (application/grpc, 5-byte message prefix) over HTTP/2,
#     CONNS connections, one stream at a time on each (like for like);
#   - grpc-mux: gRPC, ONE connection with CONNS x 4 streams in flight (what HTTP/2 adds).
# Cells: a single row, and a batch of 100 rows, of the bench's scalars table, and a batch of
# 100 rows of its training table (~2.2 MB answers: images, embeddings, tokens). Each asks the
# first of the bench's ids.u32 ids: every request the same rows, so this measures the
# protocols, warm. The
# two protocols alternate REPS times per cell (the shared machine's noise hits both); the
# report gives medians and grpc / connect per pair. Writes OUT/grpc.txt and OUT/grpc.md.
# Usage: bench/grpc.sh OUT_DIR DATA_DIR   (BIN=bin, DURATION=3 s per cell, REPS=3, CONNS=4)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/grpc.sh OUT_DIR DATA_DIR}
DATA=${2:?usage: bench/grpc.sh OUT_DIR DATA_DIR}
BIN=${BIN:-bin}
DURATION=${DURATION:-3}
REPS=${REPS:-3}
CONNS=${CONNS:-4}
command -v h2load > /dev/null || { echo "grpc bench: h2load not found (apt-get install nghttp2-client)" >&2; exit 1; }
mkdir -p "$OUT"
WORK=$(mktemp -d)
DPID=
trap '[[ -n $DPID ]] && kill $DPID 2>/dev/null; rm -rf "$WORK"' EXIT

# Request bodies: a TakeRequest {path, ids, format: FORMAT_ARROW} (field 1 string, field 2
# packed varints, field 4 enum), and the same with gRPC's message prefix.
python3 - "$DATA" "$WORK" <<'EOF'
import json, struct, sys
data, work = sys.argv[1:]
sets = {d["name"]: d["num_rows"] for d in json.load(open(data + "/manifest.json"))["datasets"]}
raw = open(data + "/ids.u32", "rb").read(400)
ids_of = lambda name: [i % sets[name] for i in struct.unpack("<%dI" % (len(raw) // 4), raw)]  # as run.mjs maps them
def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out
def take(path, ids):
    p = path.encode()
    packed = b"".join(varint(i) for i in ids)
    return b"\x0a" + varint(len(p)) + p + b"\x12" + varint(len(packed)) + packed + b"\x20\x01"
for name, table, n in (("single", "scalars", 1), ("batch100", "scalars", 100), ("training100", "training", 100)):
    if table not in sets:
        continue
    m = take(table + ".lance", ids_of(table)[:n])
    open(f"{work}/{name}.connect", "wb").write(m)
    open(f"{work}/{name}.grpc", "wb").write(b"\x00" + struct.pack(">I", len(m)) + m)
EOF

"$BIN/lanced" --root "$DATA" --listen 127.0.0.1:0 --workers 2 > "$WORK/lanced.log" 2>&1 &
DPID=$!
PORT=
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$WORK/lanced.log" | head -1)
  [[ -n $PORT ]] && grep -q serving "$WORK/lanced.log" && break
  sleep 0.1
done
[[ -n $PORT ]] || { echo "grpc bench: lanced did not start: $(cat "$WORK/lanced.log")" >&2; exit 1; }
URL=http://127.0.0.1:$PORT/lanced.v1.RowService/Take

RAW=$OUT/grpc.txt
: > "$RAW"
# cell MODE SIZE -> one raw line: mode size req/s (errors fail the cell)
cell() {
  local mode=$1 size=$2 o args
  case $mode in
  connect) args=(--h1 -c "$CONNS" -m 1 -H 'content-type: application/proto' -d "$WORK/$size.connect") ;;
  grpc) args=(-c "$CONNS" -m 1 -H 'content-type: application/grpc' -H 'te: trailers' -d "$WORK/$size.grpc") ;;
  grpc-mux) args=(-c 1 -m $((CONNS * 4)) -H 'content-type: application/grpc' -H 'te: trailers' -d "$WORK/$size.grpc") ;;
  esac
  o=$(h2load -D "$DURATION" --warm-up-time=1 "${args[@]}" "$URL" 2>&1)
  local rps ok fail
  rps=$(awk '/^finished in/ {for (i = 1; i <= NF; i++) if ($i == "req/s,") print $(i - 1)}' <<<"$o")
  ok=$(awk '/^status codes:/ {print $3}' <<<"$o")
  fail=$(awk '/^requests:/ {for (i = 1; i <= NF; i++) if ($(i) == "failed,") print $(i - 1)}' <<<"$o")
  if [[ -z $rps || ${fail:-1} != 0 ]]; then
    echo "grpc bench: $mode $size failed: $o" >&2
    return 1
  fi
  echo "$mode $size $rps $ok" >> "$RAW"
}
for size in single batch100 training100; do
  [[ -f $WORK/$size.grpc ]] || continue
  for _ in $(seq "$REPS"); do
    for mode in connect grpc grpc-mux; do cell "$mode" "$size" || exit 1; done
  done
done
# gRPC answers must be answers: one call checked for grpc-status 0 in its trailers.
curl -s --http2-prior-knowledge -D "$WORK/h" -o /dev/null -H 'content-type: application/grpc' -H 'te: trailers' \
  --data-binary @"$WORK/single.grpc" "$URL"
grep -qi '^grpc-status: 0' "$WORK/h" || { echo "grpc bench: a gRPC call did not end with grpc-status 0" >&2; exit 1; }

node - "$RAW" "$OUT/grpc.md" "$CONNS" <<'EOF'
const fs = require('fs');
const [raw, md, conns] = process.argv.slice(2);
const rows = fs.readFileSync(raw, 'utf8').trim().split('\n').map((l) => l.split(' '));
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };
const rowsPer = { single: 1, batch100: 100, training100: 100 };
const out = ['## gRPC over HTTP/2 against Connect over HTTP/1.1 (h2load, the same Take)', '',
  `connect: HTTP/1.1, ${conns} connections x 1 request; grpc: HTTP/2, ${conns} connections x 1 stream; ` +
  `grpc-mux: HTTP/2, 1 connection x ${conns * 4} streams. The protocols alternate per repetition; ratio = grpc / connect per pair, median.`, '',
  '| cell | connect rows/s | grpc rows/s | grpc-mux rows/s | grpc / connect | grpc-mux / connect |', '|---|---|---|---|---|---|'];
for (const size of ['single', 'batch100', 'training100']) {
  if (!rows.some((r) => r[1] === size)) continue;
  const of = (m) => rows.filter((r) => r[0] === m && r[1] === size).map((r) => +r[2] * rowsPer[size]);
  const c = of('connect'), g = of('grpc'), x = of('grpc-mux');
  const ratio = (a) => med(a.map((v, i) => v / c[i]).filter((v) => v > 0));
  out.push(`| ${size} | ${med(c).toFixed(0)} | ${med(g).toFixed(0)} | ${med(x).toFixed(0)} | ${ratio(g).toFixed(2)} | ${ratio(x).toFixed(2)} |`);
}
fs.writeFileSync(md, out.join('\n') + '\n\n');
console.log(out.join('\n'));
EOF
