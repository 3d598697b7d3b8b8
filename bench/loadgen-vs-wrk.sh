#!/usr/bin/env bash
# The load generator is not the bottleneck: lanced-load and wrk drive the same minimal
# static responder (loadtest/compare-wrk.sh builds one on libmicrohttpd) with the same
# threads, connections and duration, in alternating back-to-back pairs within this run;
# appends the per-pair figures, the median rate ratio and the CPU-per-request ratio to
# OUT/report.md and writes OUT/loadgen-vs-wrk.txt.
# Usage: bench/loadgen-vs-wrk.sh OUT_DIR   (BIN: where lanced-load is; PAIRS, DURATION)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/loadgen-vs-wrk.sh OUT_DIR}
BIN=${BIN:-bin}
PAIRS=${PAIRS:-5}
DURATION=${DURATION:-3}
if ! command -v wrk >/dev/null; then
  printf '\n## Load generator vs wrk\n\nwrk is not installed; not measured.\n' >> "$OUT/report.md"
  exit 0
fi
LOAD="$BIN/lanced-load" THREADS=1 CONNS=32 DURATION=$DURATION PAIRS=$PAIRS loadtest/compare-wrk.sh > "$OUT/loadgen-vs-wrk.txt" 2>&1
rc=$?
sum=$(grep '^summary ' "$OUT/loadgen-vs-wrk.txt")
val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$sum"; }
{
  printf '\n## Load generator vs wrk (same static responder, 1 thread, 32 connections, %s alternating pairs of %s s runs)\n\n' "$PAIRS" "$DURATION"
  if [[ $rc -ne 0 || -z $sum ]]; then
    printf 'comparison failed (exit %s):\n\n```\n%s\n```\n' "$rc" "$(tail -5 "$OUT/loadgen-vs-wrk.txt")"
  else
    printf '| tool | median req/s | median CPU µs/request (client process) |\n| --- | --- | --- |\n'
    printf '| wrk | %s | %s |\n| lanced-load | %s | %s |\n' "$(val wrk_rps)" "$(val wrk_cpu_us)" "$(val load_rps)" "$(val load_cpu_us)"
    printf '\nlanced-load / wrk: rate **%s×** (median of per-pair ratios), CPU per request %s×.\n' "$(val rate_ratio)" "$(val cpu_ratio)"
    printf 'When the responder is the bottleneck both tools reach the same rate and the ratio is 1 ± noise;\n'
    printf 'the CPU-per-request ratio says which generator saturates first when it is not.\n\n'
    printf '```\n%s\n```\n' "$(grep '^pair ' "$OUT/loadgen-vs-wrk.txt")"
  fi
} >> "$OUT/report.md"
cat "$OUT/loadgen-vs-wrk.txt" >&2
