#!/usr/bin/env bash
# The metrics pass Prometheus's own linter (issue 17, point 2): `promtool check metrics` (Debian
# package prometheus) on /metrics after rows, errors, a dataset and a Connect call have filled
# every family, histograms included.
# Usage: BIN=<bin dir> tests/integration/promtool.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-prom
. tests/integration/lib.sh
command -v promtool > /dev/null || { bad "promtool missing (make deps installs the prometheus package)"; it_finish; exit; }
ROOT=$(scripts/sample-root.sh "$WORK/root")
start_daemon "$WORK/log" || bad "start"
for q in "files/sample.lance/rows?ids=1,2" "files/sample.lance/rows?ids=1&format=arrow" "files/train.lance/rows?ids=3" \
         "files/nope.lance/rows?ids=1" "files/sample.lance" "files/"; do curl -s -o /dev/null "$URL/$q"; done
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Connect-Protocol-Version: 1' \
  -d '{"path":"sample.lance","ids":["1"]}' "$URL/lanced.v1.RowService/Take"
curl -s "$URL/metrics" > "$WORK/metrics"
if out=$(promtool check metrics < "$WORK/metrics" 2>&1); then
  ok "promtool check metrics: clean ($(grep -c '^# TYPE' "$WORK/metrics") metric families)"
else
  bad "promtool check metrics" "$out"
fi
echo -n "promtool: "; it_finish
