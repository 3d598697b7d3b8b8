#!/usr/bin/env bash
# The soak: lanced under steady mixed load for SOAK_SECONDS (default 600), answers verified,
# memory and descriptors sampled. Three lanced-load runs at once against the sample root:
# single rows of the 33-column file as JSON, batches of 100 from the dataset (deletions,
# three versions) as Arrow, batches of 8 rows of the embeddings file (fixed-size lists) as JSON; each compares
# sampled answers with `lancectl take` afterwards (--verify). Every 10 s the daemon's RSS, open
# descriptors, search-cache bytes and take-thread hand-offs are recorded. Fails on any request
# error, any verify mismatch, or growth once warm (after a fifth of the run) that no take
# thread's start explains: summed over the sampling intervals in which no request was handed
# to a take thread, RSS may not grow by more than 2 % + 2 MiB, descriptors not at all. (RSS
# does rise in a step in an interval where a take thread serves its first request: its engine
# worker's ring, a 4 MiB pinned pool and an io_uring descriptor, and its malloc arena, which
# keeps up to M_TRIM_THRESHOLD (32 MiB) of freed memory; bounded by take_threads, once each.
# Those steps are reported with the hand-off counts.)
# Usage: BIN=bin [SOAK_SECONDS=600] [IO_MODE=direct] scripts/soak.sh   (make soak)
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
SECS=${SOAK_SECONDS:-600}
IO_MODE=${IO_MODE:-direct}
TMP=$(mktemp -d)
trap 'kill $PID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
"$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 2 --io-mode "$IO_MODE" 2> "$TMP/lanced.log" &
PID=$!
for _ in $(seq 100); do grep -q serving "$TMP/lanced.log" && break; sleep 0.1; done
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/lanced.log" | head -1)
[[ -n $PORT ]] || { cat "$TMP/lanced.log"; echo "soak: the daemon did not start" >&2; exit 1; }
URL=http://127.0.0.1:$PORT

sample() { # seconds-since-start rss-kib fds search-cache-bytes hand-offs
  local rss fds m
  rss=$(awk '/^VmRSS/ {print $2}' /proc/$PID/status 2>/dev/null) || return 1
  fds=$(ls /proc/$PID/fd 2>/dev/null | wc -l)
  m=$(curl -s --max-time 2 "$URL/metrics")
  echo "$1 $rss $fds $(awk '$1 == "lanced_cache_resident_bytes" {c = $2} $1 == "lanced_take_handoffs_total" {h = $2}
                             END {print (c ? c : 0), (h ? h : 0)}' <<< "$m")"
}

load() { # name, then lanced-load options
  local name=$1; shift
  "$BIN/lanced-load" --url "$URL" --duration "$SECS" --threads 1 --quiet --json \
    --lancectl "$BIN/lancectl" "$@" > "$TMP/$name.json" 2> "$TMP/$name.err"
  echo $? > "$TMP/$name.rc"
}
load rows --path sample.lance --verify-file "$ROOT/sample.lance" --connections 4 --rate 800 --verify 400 &
LOADS=($!)
load dataset --path train.lance --verify-file "$ROOT/train.lance" --connections 2 --rate 100 --batch 100 \
  --format arrow --verify 100 &
LOADS+=($!)
load vectors --path embeddings.lance --verify-file "$ROOT/embeddings.lance" --connections 2 --rate 400 \
  --batch 8 --verify 200 &
LOADS+=($!)

START=$(date +%s)
: > "$TMP/samples"
while (( $(date +%s) - START < SECS + 2 )); do
  sample $(( $(date +%s) - START )) >> "$TMP/samples" || break
  sleep $(( SECS >= 100 ? 10 : 2 ))
done
wait "${LOADS[@]}"
sample $(( $(date +%s) - START )) >> "$TMP/samples"
alive=yes; kill -0 $PID 2>/dev/null || alive=no

node -e '
const fs = require("fs"), [tmp, secs, alive] = process.argv.slice(1);
const s = fs.readFileSync(tmp + "/samples", "utf8").trim().split("\n").map(l => l.split(" ").map(Number));
if (process.env.SOAK_OUT) fs.copyFileSync(tmp + "/samples", process.env.SOAK_OUT);
const fifths = [1, 2, 3, 4, 5].map(k => s.find(x => x[0] >= secs * k / 5) || s[s.length - 1]);
console.log("soak: RSS MiB / search cache MiB / take hand-offs at each fifth: " +
  fifths.map(x => `${x[0]} s ${(x[1] / 1024).toFixed(1)} / ${(x[3] / 1048576).toFixed(1)} / ${x[4]}`).join(", "));
const warmIdx = Math.max(1, s.findIndex(x => x[0] >= secs / 5)), last = s[s.length - 1];
const rssWarm = s[warmIdx][1], rssEnd = last[1], rssMax = Math.max(...s.map(x => x[1]));
const fdEnd = last[2], fdMax = Math.max(...s.map(x => x[2]));
let rssQuiet = 0, fdQuiet = 0, rssSteps = 0, steps = 0;
for (let i = warmIdx + 1; i < s.length - 1; i++) { /* the last sample is after the load ended */
  const d = s[i][1] - s[i - 1][1], df = s[i][2] - s[i - 1][2];
  if (s[i][4] === s[i - 1][4]) { rssQuiet += Math.max(0, d); fdQuiet += Math.max(0, df); }
  else if (d > 0) { rssSteps += d; steps++; }
}
let fail = [];
console.log(`soak: ${secs} s, ${s.length} samples; RSS MiB once warm ${(rssWarm/1024).toFixed(1)}, ` +
  `end ${(rssEnd/1024).toFixed(1)}, max ${(rssMax/1024).toFixed(1)}; descriptors end ${fdEnd}, max ${fdMax}; ` +
  `growth once warm: ${(rssQuiet/1024).toFixed(1)} MiB and ${fdQuiet} descriptors in intervals without a ` +
  `hand-off, ${(rssSteps/1024).toFixed(1)} MiB in ${steps} intervals with take-thread hand-offs`);
for (const n of ["rows", "dataset", "vectors"]) {
  const rc = Number(fs.readFileSync(`${tmp}/${n}.rc`, "utf8"));
  let r = {};
  try { r = JSON.parse(fs.readFileSync(`${tmp}/${n}.json`, "utf8")); } catch (e) { fail.push(`${n}: no report`); }
  const errs = r.errors ? r.errors.total : "?";
  const v = r.verify || {};
  console.log(`  ${n.padEnd(8)} requests ${r.requests}, errors ${errs}, verified ${v.matched}/${v.compared} ` +
    `(mismatched ${v.mismatched}), exit ${rc}`);
  if (rc !== 0) fail.push(`${n}: lanced-load exit ${rc}: ` + fs.readFileSync(`${tmp}/${n}.err`, "utf8").slice(-400));
  if (errs !== 0) fail.push(`${n}: ${errs} request errors`);
  if (!v.compared || v.mismatched) fail.push(`${n}: verify ${JSON.stringify(v)}`);
}
if (alive !== "yes") fail.push("the daemon exited");
if (rssQuiet > rssWarm * 0.02 + 2048) fail.push(`RSS grew by ${rssQuiet} KiB in intervals without a hand-off`);
if (fdQuiet > 0) fail.push(`descriptors grew by ${fdQuiet} in intervals without a hand-off`);
for (const f of fail) console.log("FAIL " + f);
console.log(fail.length ? "soak: FAILED" : "soak: ok (no error, no mismatch, flat RSS and descriptors)");
process.exit(fail.length ? 1 : 0);
' "$TMP" "$SECS" "$alive"
