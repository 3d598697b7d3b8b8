# Shared by the integration scripts that drive a real lanced with curl (run.sh,
# daemon_datasets.sh): where the daemon binary is, pass/fail counting, a scratch directory and
# daemons that are killed on exit, starting a daemon on an ephemeral port, and the curl
# helpers. Source it after `cd` to the repository root; WORK_PREFIX names the scratch dir.
# shellcheck shell=bash

REPO=$PWD
BIN=${BIN:-bin}
LANCED=$REPO/$BIN/lanced
[[ $BIN == /* ]] && LANCED=$BIN/lanced
PASS=0 FAIL=0
WORK=$(mktemp -d "/tmp/${WORK_PREFIX:-lanced-it}.XXXXXX")
PIDS=()

it_cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if [[ -n ${KEEP:-} ]]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap it_cleanup EXIT

ok() { PASS=$((PASS + 1)); [[ -n ${VERBOSE:-} ]] && echo "ok   $1"; return 0; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1${2:+: $2}"; return 0; }

# The summary line every script ends with; the exit status says whether all passed.
it_finish() {
  echo "$PASS passed, $FAIL failed"
  [[ $FAIL == 0 ]]
}

if [[ ! -x $LANCED ]]; then
  echo "no daemon at $LANCED (set BIN)"; echo "0 passed, 1 failed"; exit 1
fi

# start_daemon LOG [args...]: starts lanced over $ROOT on 127.0.0.1:0 and waits until it
# answers /healthz; sets PORT, DPID and URL. Returns 1 (log printed) if it does not start.
# LAUNCH (an array, optional) prefixes the command: (prlimit --nofile=256:256), (setpriv ...).
start_daemon() {
  local log=$1; shift
  "${LAUNCH[@]}" "$LANCED" --root "$ROOT" --listen 127.0.0.1:0 --workers 2 "$@" 2>"$log" &
  local pid=$!
  PIDS+=("$pid")
  DPID=$pid
  PORT=""
  for _ in $(seq 1 100); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
    [[ -n $PORT ]] && break
    sleep 0.05
  done
  [[ -n $PORT ]] || { echo "daemon did not start:"; cat "$log"; return 1; }
  URL=http://127.0.0.1:$PORT
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "$URL/healthz" && return 0
    sleep 0.05
  done
  return 1
}

# status URL [curl args...] → prints the HTTP status, body in $WORK/body
status() { local u=$1; shift; curl -s -o "$WORK/body" -w '%{http_code}' "$@" "$u"; }
healthy() {
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz") == 200 ]] ||
    bad "healthz after $1" "daemon stopped answering"
}
