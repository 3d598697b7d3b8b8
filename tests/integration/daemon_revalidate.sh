#!/usr/bin/env bash
# revalidate_ms: a cached file is checked against the disk at most that often, and a file
# replaced on disk is served within it (never a mix of the two files' bytes). With
# --revalidate-ms 0 the next request sees the new file. A file at the path that is replaced
# by another Lance file (mv over it, as writers replace files) must answer exactly what
# `lancectl take` answers for the new file once the interval has passed. Datasets (versions
# appended by LanceDB) are covered by daemon_datasets.sh with the same flag.
# Usage: BIN=<bin dir> tests/integration/daemon_revalidate.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
SRC=$(scripts/sample-root.sh "$TMP/src")
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
A=$SRC/sample.lance B=$SRC/embeddings.lance
start() { # revalidate_ms io_mode -> URL
  mkdir -p "$TMP/root$1$2" && cp "$A" "$TMP/root$1$2/x.lance"
  ROOT=$TMP/root$1$2
  "$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 1 --io-mode "$2" --revalidate-ms "$1" \
    > "$TMP/log$1$2" 2>&1 &
  PIDS+=($!)
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log$1$2" | head -1)
    [[ -n $port ]] && curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
    sleep 0.1
  done
  URL=http://127.0.0.1:$port
}
want() { "$BIN/lancectl" take "$1" --ids 0,3 2>/dev/null | tr -d '\n'; } # the body for file $1
got() { curl -s "$URL/files/x.lance/rows?ids=0,3" | tr -d '\n'; }
replace() { cp "$B" "$ROOT/x.tmp" && mv -f "$ROOT/x.tmp" "$ROOT/x.lance"; }
WA=$(want "$A") WB=$(want "$B")
[[ -n $WA && -n $WB && $WA != "$WB" ]] || { echo "FAIL lancectl take gave no usable bodies"; exit 1; }
for mode in direct buffered; do
  start 300 $mode
  for _ in 1 2 3; do got > /dev/null; done # cached, pages read
  [[ $(got) == "$WA" ]] && ok "$mode: the file's rows" || bad "$mode: first body"
  replace
  body=$(got)
  [[ $body == "$WA" || $body == "$WB" ]] && ok "$mode: right after the replacement, one file's rows (not a mix)" \
    || bad "$mode: body right after the replacement is neither file's: ${body:0:200}"
  sleep 0.4
  [[ $(got) == "$WB" ]] && ok "$mode: the new file is served within revalidate_ms (300 ms)" \
    || bad "$mode: 400 ms after the replacement: $(got | head -c 200)"
  start 0 $mode
  got > /dev/null
  replace
  [[ $(got) == "$WB" ]] && ok "$mode: revalidate_ms 0: the next request sees the new file" \
    || bad "$mode: revalidate_ms 0: $(got | head -c 200)"
done
echo "revalidate: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
