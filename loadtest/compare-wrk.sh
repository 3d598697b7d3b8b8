#!/usr/bin/env bash
# Runs wrk and lanced-load against the same URL with the same threads/connections/duration
# and prints both req/s, to show lanced-load is not the bottleneck (for the bench report;
# not a test). Without URL it builds and starts a small libmicrohttpd responder on 127.0.0.1.
#
#   loadtest/compare-wrk.sh                          # local responder
#   URL=http://127.0.0.1:8080 RAW_PATH=/healthz loadtest/compare-wrk.sh
#   env: THREADS (default 1) CONNS (32) DURATION (5) SERVER_THREADS (1) LOAD (bin/lanced-load)
set -euo pipefail
cd "$(dirname "$0")/.."
LOAD=${LOAD:-bin/lanced-load}
THREADS=${THREADS:-1}
CONNS=${CONNS:-32}
DURATION=${DURATION:-5}
RAW_PATH=${RAW_PATH:-/}
[[ -x $LOAD ]] || { echo "compare-wrk: $LOAD not built (make $LOAD)"; exit 1; }
if ! command -v wrk >/dev/null; then
  echo "compare-wrk: wrk is not installed (apt-get install -y wrk); lanced-load only"
fi

TMP=$(mktemp -d)
SRV=""
cleanup() { [[ -n $SRV ]] && kill "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

if [[ -z ${URL:-} ]]; then
  cc -std=gnu11 -O2 -D_GNU_SOURCE tests/integration/loadtest_mhd_server.c -o "$TMP/responder" -lmicrohttpd
  # The server's lifetime is bounded: both runs plus slack.
  "$TMP/responder" "${SERVER_THREADS:-1}" $((DURATION * 2 + 30)) > "$TMP/port" & SRV=$!
  for _ in $(seq 100); do [[ -s $TMP/port ]] && break; sleep 0.1; done
  URL=http://127.0.0.1:$(cat "$TMP/port")
  echo "compare-wrk: local libmicrohttpd responder at $URL (${SERVER_THREADS:-1} server threads)"
fi

echo "compare-wrk: $URL$RAW_PATH, $THREADS threads, $CONNS connections, ${DURATION}s each, $(nproc) CPUs"
wrk_rps="n/a"
if command -v wrk >/dev/null; then
  wrk_out=$(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "$URL$RAW_PATH")
  wrk_rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$wrk_out")
  wrk_p99=$(awk '$1 == "99%" {print $2}' <<<"$wrk_out")
fi
sleep 1
"$LOAD" --url "$URL" --raw-path "$RAW_PATH" --threads "$THREADS" --connections "$CONNS" --duration "$DURATION" \
  --json --quiet > "$TMP/load.json"
read -r ld_rps ld_p99 < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f %.2fms" % (r["requests_per_s"], r["latency_us"]["p99"]/1000))' "$TMP/load.json")
printf '%-12s %12s req/s   p99 %s\n' wrk "$wrk_rps" "${wrk_p99:-n/a}" lanced-load "$ld_rps" "$ld_p99"
