#!/usr/bin/env bash
# Every descriptor the daemon holds is charged to one bound (issue 14, point 2): with
# RLIMIT_NOFILE 256 (soft and hard, so it cannot be raised) and 400 datasets under the root,
# each requested once, every request is answered 200, a healthy dataset never requested before
# is served afterwards, and the daemon's open descriptors stay under the limit. Before, every
# dataset directory ever opened stayed open outside the bound: after ~100 datasets requests
# failed with "Too many open files".
# Usage: BIN=<bin dir> tests/integration/daemon_descriptors.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
FIX=tests/fixtures/datasets/dict_v21.lance
N=${DS_COUNT:-400}
mkdir -p "$TMP/root/many"
for i in $(seq $N); do cp -r "$FIX" "$TMP/root/many/d$i.lance"; done
cp -r "$FIX" "$TMP/root/fresh.lance"
prlimit --nofile=256:256 "$BIN/lanced" --root "$TMP/root" --listen 127.0.0.1:0 --workers 2 \
  > "$TMP/log" 2>&1 &
PIDS+=($!)
PORT=""
for _ in $(seq 100); do
  PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log" | head -1)
  [[ -n $PORT ]] && curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.1
done
URL=http://127.0.0.1:$PORT
# One curl for all 400 (keep-alive): each a take of row 1 of another dataset.
urls=()
for i in $(seq $N); do urls+=("$URL/files/many/d$i.lance/rows?ids=1" -o /dev/null -w '%{http_code}\n'); done
codes=$(curl -s "${urls[@]}")
good=$(grep -c '^200$' <<<"$codes")
[[ $good -eq $N ]] && ok "$N datasets each served once under RLIMIT_NOFILE 256 (all 200)" \
  || bad "$N datasets: $good answered 200; others: $(grep -v '^200$' <<<"$codes" | sort | uniq -c | tr '\n' ' ')"
code=$(curl -s -o "$TMP/fresh" -w '%{http_code}' "$URL/files/fresh.lance/rows?ids=1")
[[ $code == 200 ]] && ok "a dataset never requested before is served afterwards" || bad "fresh dataset: $code $(head -c 200 "$TMP/fresh")"
fds=$(curl -s "$URL/metrics" | awk '$1 == "process_open_fds" {print $2}')
[[ -n $fds && $fds -lt 256 ]] && ok "open descriptors bounded: $fds of 256" || bad "open descriptors: $fds"
echo "descriptors: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
