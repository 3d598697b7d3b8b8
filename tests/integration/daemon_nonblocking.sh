#!/usr/bin/env bash
# A request waiting on the disk does not hold up others: with one network thread and two take
# threads, a take made to stall (the daemon's LANCED_TEST_STALL_* hook stands in for a slow
# disk) is still in flight while /healthz, /metrics and takes of another file are answered.
# Ordering, not timing: the check is that the stalled request has not finished yet when the
# others have. Usage: BIN=<bin dir> tests/integration/daemon_nonblocking.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
LANCED_TEST_STALL_PATH=embeddings.lance LANCED_TEST_STALL_MS=4000 \
  "$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 1 --take-threads 2 --io-mode buffered \
  > "$TMP/log" 2>&1 &
PIDS+=($!)
PORT=""
for _ in $(seq 100); do
  PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log" | head -1)
  [[ -n $PORT ]] && curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.1
done
[[ -n $PORT ]] || { echo "FAIL daemon did not start"; cat "$TMP/log"; exit 1; }
URL=http://127.0.0.1:$PORT
curl -s -o "$TMP/slow.out" -w '%{http_code}' "$URL/files/embeddings.lance/rows?ids=1,2" > "$TMP/slow.code" &
SLOW=$!
PIDS+=($SLOW)
sleep 0.3 # let the stalled request reach its take thread
for i in $(seq 10); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz") == 200 ]] || { bad "healthz $i"; continue; }
  body=$(curl -s "$URL/files/sample.lance/rows?ids=$i&columns=i64")
  [[ $body == '{"num_rows":1,'* ]] || { bad "rows $i: $body"; continue; }
done
[[ $(curl -s "$URL/metrics" | grep -c '^lanced_inflight_requests') -ge 1 ]] && ok "metrics answered" || bad "metrics"
ok "10 health checks and 10 takes of another file answered"
if kill -0 "$SLOW" 2>/dev/null; then ok "the stalled request was still in flight meanwhile"
else bad "the stalled request finished before the others: they may have waited for it"; fi
wait "$SLOW"
[[ $(cat "$TMP/slow.code") == 200 ]] && ok "the stalled request completed (200)" || bad "stalled request: $(cat "$TMP/slow.code")"
echo "non-blocking: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
