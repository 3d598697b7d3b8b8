#!/usr/bin/env bash
# Shows lanced-load is not the bottleneck: wrk and lanced-load drive the same URL with the
# same threads/connections/duration, in PAIRS back-to-back runs whose order alternates (so
# drift on a shared machine falls on both tools alike). Per pair it records req/s and the
# client's own CPU per request; the summary gives medians and the median per-pair ratio.
# Without URL it builds and starts a small libmicrohttpd responder on 127.0.0.1.
#
#   loadtest/compare-wrk.sh                          # local responder
#   URL=http://127.0.0.1:8080 RAW_PATH=/healthz loadtest/compare-wrk.sh
#   env: THREADS (default 1) CONNS (32) DURATION (3) PAIRS (5) SERVER_THREADS (1)
#        LOAD (bin/lanced-load) LOAD_ARGS (extra lanced-load options, e.g. "--busy-poll 50")
# Last line (machine-readable):
#   summary pairs=N wrk_rps=.. load_rps=.. rate_ratio=.. wrk_cpu_us=.. load_cpu_us=.. cpu_ratio=..
#           wrk_server_cpu=.. load_server_cpu=..   (share of one CPU the local responder used)
set -euo pipefail
cd "$(dirname "$0")/.."
LOAD=${LOAD:-bin/lanced-load}
THREADS=${THREADS:-1}
CONNS=${CONNS:-32}
DURATION=${DURATION:-3}
PAIRS=${PAIRS:-5}
RAW_PATH=${RAW_PATH:-/}
LOAD_ARGS=${LOAD_ARGS:-}
[[ -x $LOAD ]] || { echo "compare-wrk: $LOAD not built (make $LOAD)"; exit 1; }
command -v wrk >/dev/null || { echo "compare-wrk: wrk is not installed (apt-get install -y wrk)"; exit 1; }

TMP=$(mktemp -d)
SRV=""
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

if [[ -z ${URL:-} ]]; then
  cc -std=gnu11 -O2 -D_GNU_SOURCE tests/integration/loadtest_mhd_server.c -o "$TMP/responder" -lmicrohttpd
  # The server's lifetime is bounded: every run plus slack.
  "$TMP/responder" "${SERVER_THREADS:-1}" $((PAIRS * (DURATION + 2) * 2 + 30)) > "$TMP/port" & SRV=$!
  for _ in $(seq 100); do [[ -s $TMP/port ]] && break; sleep 0.1; done
  URL=http://127.0.0.1:$(cat "$TMP/port")
  echo "compare-wrk: local libmicrohttpd responder at $URL (${SERVER_THREADS:-1} server threads)"
fi
echo "compare-wrk: $URL$RAW_PATH, $THREADS threads, $CONNS connections, ${DURATION}s per run, $PAIRS pairs, $(nproc) CPUs${LOAD_ARGS:+, lanced-load $LOAD_ARGS}"

# Each runner prints "RPS CPU_SECONDS SERVER_CPU": the rate the tool reports, the user+system
# CPU the tool's process used (bash's time keyword, so no extra package is needed) and, for
# the local responder, the share of a CPU it used meanwhile (from /proc; 0 for a URL). A
# responder near 100 % sets the rate: then both tools can only tie.
TIMEFORMAT='cpu %U %S'
HZ=$(getconf CLK_TCK)
server_ticks() { [[ -n $SRV ]] && awk '{print $14 + $15}' "/proc/$SRV/stat" 2>/dev/null || echo 0; }
server_share() { # ticks before, ticks after
  awk -v a="$1" -v b="$2" -v hz="$HZ" -v d="$DURATION" 'BEGIN {printf "%.2f", (b - a) / hz / d}'
}
run_wrk() {
  local t0; t0=$(server_ticks)
  { time wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" "$URL$RAW_PATH" > "$TMP/wrk.out"; } 2> "$TMP/wrk.time"
  awk '/^Requests\/sec:/ {r = $2} END {printf "%s ", r}' "$TMP/wrk.out"
  awk '/^cpu / {printf "%.3f ", $2 + $3}' "$TMP/wrk.time"
  server_share "$t0" "$(server_ticks)"; echo
}
run_load() {
  local t0; t0=$(server_ticks)
  { time "$LOAD" --url "$URL" --raw-path "$RAW_PATH" --threads "$THREADS" --connections "$CONNS" \
      --duration "$DURATION" --json --quiet $LOAD_ARGS > "$TMP/load.json"; } 2> "$TMP/load.time"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests_per_s"], end=" ")' "$TMP/load.json"
  awk '/^cpu / {printf "%.3f ", $2 + $3}' "$TMP/load.time"
  server_share "$t0" "$(server_ticks)"; echo
}

: > "$TMP/pairs"
for i in $(seq "$PAIRS"); do
  if (( i % 2 )); then w=$(run_wrk); sleep 0.5; l=$(run_load)
  else l=$(run_load); sleep 0.5; w=$(run_wrk); fi
  sleep 0.5
  read -r wr wc ws <<<"$w"
  read -r lr lc ls <<<"$l"
  [[ -n $wr && -n $lr && $wr != 0 && $lr != 0 ]] || { echo "compare-wrk: pair $i gave no rate (wrk '$w', lanced-load '$l')"; exit 1; }
  echo "$wr $wc $lr $lc $ws $ls" >> "$TMP/pairs"
  awk -v d="$DURATION" -v i="$i" '{printf "pair %d: wrk %9.0f req/s %5.2f us CPU/req (server %3.0f%%)   lanced-load %9.0f req/s %5.2f us CPU/req (server %3.0f%%)   rate %.3f  cpu %.3f\n",
        i, $1, $2 * 1e6 / ($1 * d), $5 * 100, $3, $4 * 1e6 / ($3 * d), $6 * 100, $3 / $1, ($4 / $3) / ($2 / $1)}' <(tail -1 "$TMP/pairs")
done

# CPU per request uses the nominal duration; both tools run the same duration, so the
# ratio is unaffected by the few ms of setup either spends outside it.
python3 - "$TMP/pairs" "$DURATION" <<'EOF'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
d = float(sys.argv[2])
med = lambda xs: st.median(xs)
wr, lr = med([r[0] for r in rows]), med([r[2] for r in rows])
wc, lc = med([r[1] * 1e6 / (r[0] * d) for r in rows]), med([r[3] * 1e6 / (r[2] * d) for r in rows])
rate = med([r[2] / r[0] for r in rows])
cpu = med([(r[3] / r[2]) / (r[1] / r[0]) for r in rows])
ws, ls = med([r[4] for r in rows]), med([r[5] for r in rows])
print(f"median: wrk {wr:.0f} req/s, lanced-load {lr:.0f} req/s; lanced-load/wrk rate {rate:.3f} (median of per-pair ratios), CPU per request {cpu:.3f}; server CPU {ws:.0%} / {ls:.0%}")
print(f"summary pairs={len(rows)} wrk_rps={wr:.0f} load_rps={lr:.0f} rate_ratio={rate:.3f} wrk_cpu_us={wc:.2f} load_cpu_us={lc:.2f} cpu_ratio={cpu:.3f} wrk_server_cpu={ws:.2f} load_server_cpu={ls:.2f}")
EOF
