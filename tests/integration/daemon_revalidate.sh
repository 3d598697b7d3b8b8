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
WORK_PREFIX=lanced-reval
. tests/integration/lib.sh
SRC=$(scripts/sample-root.sh "$WORK/src")
A=$SRC/sample.lance B=$SRC/embeddings.lance
want() { "$BIN/lancectl" take "$1" --ids 0,3 2>/dev/null; } # the body for file $1
got() { curl -s "$URL/files/x.lance/rows?ids=0,3"; }
replace() { cp "$B" "$ROOT/x.tmp" && mv -f "$ROOT/x.tmp" "$ROOT/x.lance"; }
fresh() { ROOT=$WORK/root$1$2; mkdir -p "$ROOT" && cp "$A" "$ROOT/x.lance"; } # revalidate_ms io_mode
WA=$(want "$A") WB=$(want "$B")
[[ -n $WA && -n $WB && $WA != "$WB" ]] || { bad "lancectl take gave no usable bodies"; it_finish; exit; }
for mode in direct buffered; do
  fresh 300 $mode
  start_daemon "$WORK/log300$mode" --workers 1 --io-mode $mode --revalidate-ms 300 || bad "$mode: start"
  for _ in 1 2 3; do got > /dev/null; done # cached, pages read
  [[ $(got) == "$WA" ]] && ok "$mode: the file's rows" || bad "$mode: first body"
  replace
  body=$(got)
  [[ $body == "$WA" || $body == "$WB" ]] && ok "$mode: right after the replacement, one file's rows (not a mix)" \
    || bad "$mode: body right after the replacement is neither file's" "${body:0:200}"
  sleep 0.4
  [[ $(got) == "$WB" ]] && ok "$mode: the new file is served within revalidate_ms (300 ms)" \
    || bad "$mode: 400 ms after the replacement" "$(got | head -c 200)"
  fresh 0 $mode
  start_daemon "$WORK/log0$mode" --workers 1 --io-mode $mode --revalidate-ms 0 || bad "$mode: start"
  got > /dev/null
  replace
  [[ $(got) == "$WB" ]] && ok "$mode: revalidate_ms 0: the next request sees the new file" \
    || bad "$mode: revalidate_ms 0" "$(got | head -c 200)"
done
echo -n "revalidate: "; it_finish
