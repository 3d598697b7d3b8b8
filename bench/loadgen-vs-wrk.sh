#!/usr/bin/env bash
# The load generator is not the bottleneck: lanced-load and wrk drive the same minimal
# static responder (loadtest/compare-wrk.sh builds one on libmicrohttpd) with the same
# threads, connections and duration, in alternating back-to-back pairs within this run.
# Two series: lanced-load with --busy-poll 50 (it keeps its thread awake while answers are
# due, as a generator with a CPU of its own can) and with its defaults. Appends per-pair
# figures, median rate ratios and CPU-per-request ratios to OUT/report.md; raw output in
# OUT/loadgen-vs-wrk*.txt.
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

series() { # title, output file, pairs, lanced-load args
  local title=$1 out=$2 pairs=$3 args=$4
  LOAD="$BIN/lanced-load" LOAD_ARGS="$args" THREADS=1 CONNS=32 DURATION=$DURATION PAIRS=$pairs \
    loadtest/compare-wrk.sh > "$out" 2>&1
  local rc=$? sum
  sum=$(grep '^summary ' "$out")
  val() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$sum"; }
  printf '\n### %s (%s pairs)\n\n' "$title" "$pairs"
  if [[ $rc -ne 0 || -z $sum ]]; then
    printf 'comparison failed (exit %s):\n\n```\n%s\n```\n' "$rc" "$(tail -5 "$out")"
    return
  fi
  printf '| tool | median req/s | median CPU µs/request (client process) | responder CPU |\n| --- | --- | --- | --- |\n'
  printf '| wrk | %s | %s | %s |\n' "$(val wrk_rps)" "$(val wrk_cpu_us)" "$(val wrk_server_cpu)"
  printf '| lanced-load %s | %s | %s | %s |\n' "$args" "$(val load_rps)" "$(val load_cpu_us)" "$(val load_server_cpu)"
  printf '\nlanced-load / wrk: rate **%s×** (median of per-pair ratios), CPU per request %s×.\n\n' \
    "$(val rate_ratio)" "$(val cpu_ratio)"
  printf '```\n%s\n```\n' "$(grep '^pair ' "$out")"
}

{
  printf '\n## Load generator vs wrk (same static responder, 1 thread, 32 connections, alternating %s s runs)\n' "$DURATION"
  printf '\nThe responder (one libmicrohttpd thread) runs near 100 %% of a CPU in every run, so it sets\n'
  printf 'the rate. With its defaults lanced-load spends less CPU per request than wrk and so sleeps\n'
  printf 'more often; each answer that must wake it costs the responder a wakeup, which shows as a\n'
  printf 'rate about 1 %% under wrk. With `--busy-poll` it stays awake while answers are due.\n'
  series "lanced-load --busy-poll 50" "$OUT/loadgen-vs-wrk.txt" "$PAIRS" "--busy-poll 50"
  series "lanced-load defaults" "$OUT/loadgen-vs-wrk-defaults.txt" 3 ""
} >> "$OUT/report.md"
cat "$OUT/loadgen-vs-wrk.txt" "$OUT/loadgen-vs-wrk-defaults.txt" >&2
