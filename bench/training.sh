#!/usr/bin/env bash
# The training batch (issue 34), side by side in one run on the bench's training table (id,
# label, caption, 768-d embedding, token list, 8-32 KiB image), warm page cache, io_mode
# buffered:
#   - lanced: batch 100, Arrow IPC, 4 connections (lanced-load), all columns;
#   - nginx sending the same bytes: one such answer saved as a static file, served (sendfile)
#     to 4 connections; its requests/s x 100 is the rows/s the wire allows for that answer;
#   - LanceDB in-process: takeOffsets batch 100, 4 in flight, all columns;
#   - the PyTorch DataLoader (2 workers, batch 256, every column, shuffled) through
#     lanced.torch beside lanced-load sending the same requests (batch 256, 2 connections,
#     the client's format), and the same reads in two processes without DataLoader.
# lanced and nginx alternate REPS times (the shared machine's noise hits both), and so do the
# DataLoader and lanced-load; each pair's ratio is kept and the report judges their median. Writes OUT/training.json and a report
# section OUT/training.md. Usage: bench/training.sh OUT_DIR DATA_DIR
#   BIN (default bin), DURATION (s per cell, default 5), REPS (default 3)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/training.sh OUT_DIR DATA_DIR}
DATA=${2:?usage: bench/training.sh OUT_DIR DATA_DIR}
DATA=$(cd "$DATA" && pwd) || exit 1  # absolute: node reads its manifest by path
BIN=${BIN:-bin}
DURATION=${DURATION:-5}
REPS=${REPS:-3}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$OUT"
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
[[ -d $DATA/training.lance ]] || { echo "training: $DATA/training.lance missing (node bench/gen.mjs)" >&2; exit 1; }
FILE=$(node -e 'const m=require(process.argv[1]);console.log(m.datasets.find(d=>d.name==="training").file)' "$DATA/manifest.json")
NCPU=$(nproc)
# The cells compare warm reads: the table's data files read once first, whole (at --scale full
# 4.7 GB, which other work on the machine may have pushed out of the page cache since they
# were written; a 1 s warm-up per cell touched a fraction of it, and the first cells ran cold).
cat "$DATA"/training.lance/data/*.lance > /dev/null
R="$TMP/cells.txt"
: > "$R"

"$BIN/lanced" --root "$DATA" --listen 127.0.0.1:0 --io-mode buffered --log-level warn > "$TMP/lanced.log" 2>&1 &
LPID=$!
PIDS+=($LPID)
PORT=""
for _ in $(seq 100); do
  PORT=$(ss -ltnp 2>/dev/null | awk -v p="pid=$LPID," '$0 ~ p {split($4, a, ":"); print a[length(a)]}' | head -1)
  [[ -n $PORT ]] && curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  PORT=""
  sleep 0.1
done
[[ -n $PORT ]] || { echo "training: lanced did not start" >&2; cat "$TMP/lanced.log" >&2; exit 1; }
URL=http://127.0.0.1:$PORT

# load PATH BATCH CONNS FORMAT -> rows/s (a 1 s warm-up first: page cache, search cache)
load() {
  "$BIN/lanced-load" --url "$URL" --path "$1" --batch "$2" --connections "$3" --format "$4" \
    --duration 1 --quiet --json > /dev/null 2>&1
  "$BIN/lanced-load" --url "$URL" --path "$1" --batch "$2" --connections "$3" --format "$4" \
    --duration "$DURATION" --seed 7 --quiet --json 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log((j.rows_per_s??0).toFixed(0),j.errors?.total??0)})'
}

# One batch-100 Arrow answer of the same table, as nginx will serve it.
mkdir -p "$TMP/www" "$TMP/logs" "$TMP/tmp"
ids=$(node -e 'const r=new Uint32Array(require("fs").readFileSync(process.argv[1]).buffer.slice(0));const n=require(process.argv[2]).datasets.find(d=>d.name==="training").num_rows;console.log(Array.from(r.slice(0,100),x=>x%n).join(","))' "$DATA/ids.u32" "$DATA/manifest.json")
curl -sf -H 'Accept: application/vnd.apache.arrow.stream' -o "$TMP/www/batch.arrow" \
  "$URL/files/$FILE/rows?ids=$ids" || { echo "training: could not fetch a batch-100 answer" >&2; exit 1; }
ANSWER_BYTES=$(stat -c %s "$TMP/www/batch.arrow")
NGPID=""
# shellcheck source=nginx.sh
. bench/nginx.sh
start_static_nginx batch.arrow || NGPID=""
nginx_cell() { # -> requests/s
  "$BIN/lanced-load" --url "http://127.0.0.1:$NPORT" --raw-path /batch.arrow --connections 4 \
    --duration "$DURATION" --quiet --json 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);console.log((j.requests_per_s??0).toFixed(1))})'
}

for rep in $(seq "$REPS"); do
  echo "training: lanced batch 100 Arrow vs nginx, repetition $rep of $REPS" >&2
  read -r rows errs < <(load "$FILE" 100 4 arrow)
  echo "lanced $rep $rows $errs" >> "$R"
  if [[ -n $NGPID ]]; then
    read -r rps < <(nginx_cell)
    echo "nginx $rep $rps" >> "$R"
  fi
done
[[ -n $NGPID ]] && { kill "$NGPID"; wait "$NGPID" 2>/dev/null; }

echo "training: LanceDB in-process takeOffsets batch 100, 4 in flight" >&2
node bench/lancedb-inproc.mjs --root "$DATA" --table training --batch 100 --inflight 4 \
  --seconds "$DURATION" > "$TMP/inproc.json" 2>/dev/null && echo "inproc $(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).rows_per_s.toFixed(0))' "$TMP/inproc.json")" >> "$R"

# The DataLoader against lanced-load sending what the client sends (batch 256, 2 connections).
if "$PY" -c 'import torch, numpy, google.protobuf' 2>/dev/null; then
  fmt=$("$PY" -c 'import sys; sys.path.insert(0, "clients/python"); import lanced.torch as t; print(getattr(t, "WIRE_FORMAT", "proto"))')
  cols=$(node -e 'const m=require(process.argv[1]);console.log(m.datasets.find(d=>d.name==="training").columns.join(","))' "$DATA/manifest.json")
  loader_cell() {
    "$PY" bench/torch_loader.py --url "$URL" --path training.lance --name training --columns "$cols" \
      --feed "$fmt" --seconds "$DURATION" > "$TMP/loader.json" &&
      echo "loader $1 $(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).samples_per_s.toFixed(0))' "$TMP/loader.json")" >> "$R"
  }
  # The same reads without DataLoader: two processes, each reading its rank's shard itself
  # (torch_loader.py --queues none). Beside the DataLoader's figure it shows how much of the
  # gap to lanced-load is DataLoader's hand-over and how much the client's own reading.
  bare_cell() {
    "$PY" bench/torch_loader.py --url "$URL" --path training.lance --name training --columns "$cols" \
      --feed arrow --queues none --seconds "$DURATION" > "$TMP/bare.json" &&
      echo "bare $1 $(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).samples_per_s.toFixed(0))' "$TMP/bare.json")" >> "$R"
  }
  load256_cell() {
    read -r rows errs < <(load training.lance 256 2 "$fmt")
    echo "load256 $1 $rows $errs" >> "$R"
  }
  # Each pair in turn order reversed every other repetition: whichever runs second runs on a
  # warmer (or busier) machine.
  for rep in $(seq "$REPS"); do
    echo "training: DataLoader vs lanced-load ($fmt, batch 256), repetition $rep of $REPS" >&2
    if ((rep % 2)); then loader_cell "$rep"; load256_cell "$rep"; else load256_cell "$rep"; loader_cell "$rep"; fi
    [[ $fmt == arrow ]] && bare_cell "$rep"
  done
fi
kill -0 "$LPID" 2>/dev/null || { echo "training: lanced died during the cells" >&2; tail -20 "$TMP/lanced.log" >&2; exit 1; }
cp "$R" "$OUT/training.txt"
node bench/training-report.mjs "$R" "$OUT" "$ANSWER_BYTES" "${fmt:-proto}"
