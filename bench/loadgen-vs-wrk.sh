#!/usr/bin/env bash
# The load generator is not the bottleneck: lanced-load and wrk drive the same minimal
# static responder (loadtest/compare-wrk.sh builds one on libmicrohttpd) with the same
# threads, connections and duration, in this run; appends both rates and their ratio to
# OUT/report.md.
# Usage: bench/loadgen-vs-wrk.sh OUT_DIR   (BIN: where lanced-load is)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/loadgen-vs-wrk.sh OUT_DIR}
BIN=${BIN:-bin}
if ! command -v wrk >/dev/null; then
  printf '\n## Load generator vs wrk\n\nwrk is not installed; not measured.\n' >> "$OUT/report.md"
  exit 0
fi
res=$(LOAD="$BIN/lanced-load" THREADS=1 CONNS=32 DURATION=5 loadtest/compare-wrk.sh 2>&1 | tail -2)
w=$(awk '/^wrk /{print $2}' <<<"$res")
l=$(awk '/^lanced-load /{print $2}' <<<"$res")
{
  printf '\n## Load generator vs wrk (same static responder, 1 thread, 32 connections, 5 s each)\n\n'
  printf '| tool | req/s |\n| --- | --- |\n| wrk | %s |\n| lanced-load | %s |\n' "${w:-?}" "${l:-?}"
  if [[ -n $w && -n $l ]]; then
    printf '\nlanced-load / wrk = %s\n' "$(awk -v a="$l" -v b="$w" 'BEGIN{printf "%.2f", a/b}')"
  fi
} >> "$OUT/report.md"
echo "$res" >&2
