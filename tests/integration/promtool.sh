#!/usr/bin/env bash
# The metrics pass Prometheus's own linter (issue 17, point 2): `promtool check metrics` (Debian
# package prometheus) on /metrics after rows, errors, a dataset and a Connect call have filled
# every family, histograms included.
# Usage: BIN=<bin dir> tests/integration/promtool.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
command -v promtool > /dev/null || { echo "FAIL promtool missing (make deps installs the prometheus package)"; exit 1; }
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
"$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 2 > "$TMP/log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log" | head -1)
  [[ -n $PORT ]] && curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.1
done
U=http://127.0.0.1:$PORT
for q in "files/sample.lance/rows?ids=1,2" "files/sample.lance/rows?ids=1&format=arrow" "files/train.lance/rows?ids=3" \
         "files/nope.lance/rows?ids=1" "files/sample.lance" "files/"; do curl -s -o /dev/null "$U/$q"; done
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' \
  -d '{"path":"sample.lance","ids":["1"]}' "$U/lanced.v1.RowService/Take"
curl -s "$U/metrics" > "$TMP/metrics"
if out=$(promtool check metrics < "$TMP/metrics" 2>&1); then
  echo "ok   promtool check metrics: clean ($(grep -c '^# TYPE' "$TMP/metrics") metric families)"
else
  echo "FAIL promtool check metrics: $out"
  exit 1
fi
