#!/usr/bin/env bash
# A request waiting on the disk does not hold up others: with one network thread and two take
# threads, a take made to stall (the daemon's LANCED_TEST_STALL_* hook stands in for a slow
# disk) is still in flight while /healthz, /metrics and takes of another file are answered.
# Ordering, not timing: the check is that the stalled request has not finished yet when the
# others have. Then, by the daemon's counters: io_mode direct serves takes as tasks on the
# network thread's loop (no hand-off, one read each), a stall there delays nobody, and
# io_mode buffered answers warm takes inline.
# Usage: BIN=<bin dir> tests/integration/daemon_nonblocking.sh
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

# Where a take runs, counted: lanced_take_handoffs_total (requests handed to a take thread) and
# lanced_engine_takes_total (data-file takes the engine worked on). With io_mode direct every
# take waits for the device, so the first attempt on the network thread must hand off without
# touching the engine: one engine take per request, not two. With io_mode buffered, once the
# file is in the search cache and its pages in the page cache, takes are answered inline.
metric() { curl -s "$1/metrics" | awk -v m="$2" '$1 == m {print $2}'; }
start_daemon() { # io_mode [flags] -> sets URL2
  "$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 1 --io-mode "$@" > "$TMP/log.$1" 2>&1 &
  PIDS+=($!)
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log.$1" | head -1)
    [[ -n $port ]] && curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
    sleep 0.1
  done
  URL2=http://127.0.0.1:$port
}
takes() { # url path column n: n single-row takes, each must answer one row
  local i body
  for i in $(seq "$4"); do
    body=$(curl -s "$1/files/$2/rows?ids=$i&columns=$3")
    [[ $body == '{"num_rows":1,'* ]] || { bad "$2 row $i: $body"; return; }
  done
}
# io_mode direct: a take of a file in the search cache runs as a task on the network thread's
# loop; it parks on its O_DIRECT read and the completion resumes it on the same thread: no
# hand-off. Only the first take of a file (loading its search cache) goes to a take thread.
# Reads per request are counted: a single-row take of one mini-block int64 column is one read.
start_daemon direct
for spec in sample.lance:i64 train.lance:id; do # a data file, a dataset
  path=${spec%%:*}
  [[ -e $ROOT/$path ]] || continue
  takes "$URL2" "$path" "${spec#*:}" 1 # loads the search cache (a take thread)
  h0=$(metric "$URL2" lanced_take_handoffs_total) p0=$(metric "$URL2" lanced_loop_parked_tasks_total)
  r0=$(metric "$URL2" lanced_reads_total)
  takes "$URL2" "$path" "${spec#*:}" 8
  h1=$(metric "$URL2" lanced_take_handoffs_total) p1=$(metric "$URL2" lanced_loop_parked_tasks_total)
  r1=$(metric "$URL2" lanced_reads_total)
  if [[ $((h1 - h0)) -eq 0 && $((p1 - p0)) -eq 8 ]]; then
    ok "direct, $path: 8 takes parked on the loop and resumed there, no hand-off"
  else
    bad "direct, $path: 8 takes made $((h1 - h0)) hand-offs and $((p1 - p0)) parked tasks (want 0 and 8)"
  fi
  [[ $((r1 - r0)) -eq 8 ]] && ok "direct, $path: one device read per single-row take" \
    || bad "direct, $path: 8 single-row takes made $((r1 - r0)) reads (want 8)"
done
# A stalled device read on the loop (the stall hook parks the task on an io_uring timeout)
# delays nobody else: health, metrics and takes of another file answer meanwhile.
kill "${PIDS[-1]}" 2>/dev/null
LANCED_TEST_STALL_PATH=embeddings.lance LANCED_TEST_STALL_MS=3000 start_daemon direct
takes "$URL2" sample.lance i64 1
curl -s -o "$TMP/slow2.out" -w '%{http_code}' "$URL2/files/embeddings.lance/rows?ids=1,2" > "$TMP/slow2.code" &
SLOW=$!
PIDS+=($SLOW)
sleep 0.3
h0=$(metric "$URL2" lanced_take_handoffs_total)
for i in $(seq 10); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$URL2/healthz") == 200 ]] || bad "direct stall: healthz $i"
done
takes "$URL2" sample.lance i64 10
h1=$(metric "$URL2" lanced_take_handoffs_total)
if kill -0 "$SLOW" 2>/dev/null && [[ $((h1 - h0)) -eq 0 ]]; then
  ok "direct: 10 health checks and 10 takes answered on the loop while a stalled request was in flight"
else
  bad "direct: the stalled request finished first, or takes were handed off ($((h1 - h0)))"
fi
wait "$SLOW"
[[ $(cat "$TMP/slow2.code") == 200 ]] && ok "direct: the stalled request completed (200)" \
  || bad "direct: stalled request: $(cat "$TMP/slow2.code")"
start_daemon buffered
takes "$URL2" sample.lance i64 8 # loads the search cache and reads the pages
h0=$(metric "$URL2" lanced_take_handoffs_total) e0=$(metric "$URL2" lanced_engine_takes_total)
takes "$URL2" sample.lance i64 8
h1=$(metric "$URL2" lanced_take_handoffs_total) e1=$(metric "$URL2" lanced_engine_takes_total)
if [[ $((h1 - h0)) -eq 0 && $((e1 - e0)) -eq 8 ]]; then
  ok "buffered, warm: 8 takes answered on the network thread"
else
  bad "buffered, warm: 8 takes made $((h1 - h0)) hand-offs and $((e1 - e0)) engine takes (want 0 and 8)"
fi
# A take thread's answer can be sent, and its request freed, by the network thread as soon as
# the connection is resumed (here a light request wakes that thread meanwhile): the take
# thread must not touch the request after resuming it. The resume-delay hook holds it between
# the two; a take thread that read the freed request (to wake its network thread) was a
# use-after-free, seen as a segfault under heavy requests on take threads beside light ones
# on the loop, and fails this check under ASan (make asan).
kill "${PIDS[-1]}" 2>/dev/null
LANCED_TEST_RESUME_DELAY_MS=600 start_daemon direct --loop-max-ids 1
takes "$URL2" sample.lance i64 2 # the search cache, and one take on the loop
for round in 1 2 3; do
  curl -s -o "$TMP/handed.out" "$URL2/files/sample.lance/rows?ids=3,4&columns=i64" &
  HANDED=$!
  sleep 0.2 # answered by the take thread, now in its delay
  takes "$URL2" sample.lance i64 1 # wakes the network thread, which sends the handed-off answer
  sleep 0.1
  if kill -0 "$HANDED" 2>/dev/null; then
    bad "resume race $round: the handed-off answer waited for its take thread's wake-up"
    wait "$HANDED"
  else
    wait "$HANDED"
    [[ $(cat "$TMP/handed.out") == '{"num_rows":2,'* ]] && ok "resume race $round: a handed-off answer sent before its take thread's wake-up" \
      || bad "resume race $round: $(cat "$TMP/handed.out")"
  fi
done
sleep 0.7 # every delay over
if kill -0 "${PIDS[-1]}" 2>/dev/null && [[ $(curl -s -o /dev/null -w '%{http_code}' "$URL2/healthz") == 200 ]]; then
  ok "resume race: the daemon is alive and answering after its take thread woke"
else
  bad "resume race: the daemon died"
  grep -m1 -A16 'ERROR: AddressSanitizer' "$TMP/log.direct" || tail -30 "$TMP/log.direct"
fi

# A request whose first attempt would block is routed again on a take thread: a gzip Connect
# body, inflated by the first attempt, must not be inflated again (it was: 400 "not valid
# gzip" for every such request to a file not yet in the search cache).
printf '{"path":"sample.lance","ids":[1,2],"columns":["i64"],"format":"FORMAT_PROTO"}' | gzip -c > "$TMP/take.gz"
for mode in direct buffered; do
  kill "${PIDS[-1]}" 2>/dev/null
  start_daemon "$mode"
  got=$(curl -s -w ' %{http_code}' -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' \
    --data-binary @"$TMP/take.gz" "$URL2/lanced.v1.RowService/Take")
  h=$(metric "$URL2" lanced_take_handoffs_total)
  [[ $got == *'"numRows":"2"'*' 200' && ${h:-0} -ge 1 ]] && ok "gzip Connect take handed off on first use ($mode): answered" \
    || bad "gzip Connect take handed off on first use ($mode): $got (hand-offs ${h:-none})"
done

# At connection_limit with every connection busy, a new connection is read, not reset: a
# health probe gets 200 and a take 503 + Retry-After. (Each new connection, the only one
# waiting, was closed by the next sweep to make room, before its request was read.)
kill "${PIDS[-1]}" 2>/dev/null
LANCED_TEST_STALL_PATH=embeddings.lance LANCED_TEST_STALL_MS=3000 start_daemon direct --connection-limit 2
BUSY=()
for i in 1 2; do curl -s -o /dev/null "$URL2/files/embeddings.lance/rows?ids=$i" & BUSY+=($!); done
sleep 0.5
codes=""
for i in 1 2 3; do codes+="$(curl -s -o /dev/null -w '%{http_code}' "$URL2/healthz") "; done
take=$(curl -s -o /dev/null -D "$TMP/limit.hdr" -w '%{http_code}' "$URL2/files/sample.lance/rows?ids=1")
if [[ $codes == "200 200 200 " && $take == 503 ]] && grep -qi '^retry-after: 1' "$TMP/limit.hdr"; then
  ok "at connection_limit with all busy: new connections answered (healthz 200, take 503 + Retry-After)"
else
  bad "at connection_limit with all busy: healthz $codes take $take"
fi
wait "${BUSY[@]}"

# SIGTERM right after that race: the last answer is sent (nothing in flight), so the drain ends
# at once, while the take thread is still to wake its network thread. The network threads'
# state must outlive the take threads (it was freed first: a use-after-free under ASan).
kill "${PIDS[-1]}" 2>/dev/null
LANCED_TEST_RESUME_DELAY_MS=800 start_daemon direct --loop-max-ids 1
takes "$URL2" sample.lance i64 1
curl -s -o "$TMP/handed.out" "$URL2/files/sample.lance/rows?ids=3,4&columns=i64" &
HANDED=$!
sleep 0.2
takes "$URL2" sample.lance i64 1 # the network thread wakes and sends the handed-off answer
wait "$HANDED"
kill -TERM "${PIDS[-1]}"
wait "${PIDS[-1]}"
rc=$?
if [[ $rc == 0 && $(cat "$TMP/handed.out") == '{"num_rows":2,'* ]] && ! grep -q 'AddressSanitizer' "$TMP/log.direct"; then
  ok "SIGTERM while a take thread is between its resume and its wake-up: a clean stop"
else
  bad "SIGTERM after a handed-off answer: exit status $rc"
  grep -m1 -A16 'ERROR: AddressSanitizer' "$TMP/log.direct" || tail -20 "$TMP/log.direct"
fi

# A drain that runs out of time: a take stalled past request_timeout_ms (+1 s) when SIGTERM
# arrives. The daemon exits with status 1 and says so; stopping libmicrohttpd under the
# suspended connection aborted the process instead (status 134).
for mode in direct buffered; do
  LANCED_TEST_STALL_PATH=embeddings.lance LANCED_TEST_STALL_MS=6000 start_daemon "$mode" --request-timeout-ms 1000
  curl -s -o /dev/null "$URL2/files/embeddings.lance/rows?ids=1" &
  SLOW=$!
  sleep 0.3
  kill -TERM "${PIDS[-1]}"
  sleep 0.3 # draining: the stalled take holds it open for seconds
  t0=$(date +%s%N)
  curl -s -m 3 -o /dev/null "$URL2/healthz"
  crc=$? ms=$((($(date +%s%N) - t0) / 1000000))
  # 7: could not connect. A connection made during the drain hung in the backlog until exit.
  [[ $crc == 7 && $ms -lt 1000 ]] && ok "during the drain ($mode) a new connection is refused at once (${ms} ms)" \
    || bad "a new connection during the drain ($mode): curl exit $crc after $ms ms"
  wait "${PIDS[-1]}"
  rc=$?
  if [[ $rc == 1 ]] && grep -q 'drain timed out with 1 requests in flight' "$TMP/log.$mode"; then
    ok "drain timeout ($mode): exits with status 1, the stalled request abandoned and logged"
  else
    bad "drain timeout ($mode): exit status $rc"
    tail -5 "$TMP/log.$mode"
  fi
  wait "$SLOW" 2>/dev/null
done

# A request on a keep-alive connection after the drain found nothing in flight, just before
# the daemons stop (held there by a test hook): answered 503 at once. It used to run, and a
# take parked or handed off there left a suspended connection under MHD_stop_daemon, which
# aborts the process (status 134).
LANCED_TEST_STOP_DELAY_MS=1500 LANCED_TEST_STALL_PATH=embeddings.lance LANCED_TEST_STALL_MS=3000 start_daemon direct
exec 7<>/dev/tcp/127.0.0.1/"${URL2##*:}"
printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' >&7
IFS= read -r -t 2 -u 7 first
while IFS= read -r -t 0.3 -u 7 _; do :; done # the rest of that answer
kill -TERM "${PIDS[-1]}"
sleep 0.5 # the drain is over (nothing was in flight); the stop is held
printf 'GET /files/embeddings.lance/rows?ids=1 HTTP/1.1\r\nHost: x\r\n\r\n' >&7
IFS= read -r -t 3 -u 7 second
exec 7<&- 7>&-
wait "${PIDS[-1]}"
rc=$?
[[ $first == "HTTP/1.1 200"* && $second == "HTTP/1.1 503"* && $rc == 0 ]] \
  && ok "a request arriving as the daemons stop: 503 at once, a clean exit" \
  || { bad "a request arriving as the daemons stop: '${first%$'\r'}' then '${second%$'\r'}', exit status $rc"; tail -3 "$TMP/log.direct"; }

# A network thread whose loop cannot start fails start-up (exit 1) rather than leaving a
# daemon that hands that thread connections it never serves.
LANCED_TEST_LOOP_FAIL=1 timeout 10 "$BIN/lanced" --root "$ROOT" --listen 127.0.0.1:0 --workers 2 > "$TMP/log.loopfail" 2>&1
rc=$?
[[ $rc == 1 ]] && grep -q 'network thread 0: loop: could not start' "$TMP/log.loopfail" \
  && ok "a loop that cannot start fails start-up (exit 1, logged)" \
  || { bad "a loop that cannot start: exit status $rc"; tail -5 "$TMP/log.loopfail"; }
echo "non-blocking: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
