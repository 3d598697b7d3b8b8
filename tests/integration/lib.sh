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

# answers_match FIXDIR PREFIX LABEL: every line of every FIXDIR/<name>.answers (ids, version
# or 0, Lance's JSON rows body) asked of the daemon as GET $URL/files/PREFIX<name>.lance/rows
# (?version=N for pinned ones): ok/bad per line, a summary line; ANS_N lines asked.
answers_match() {
  local dir=$1 prefix=$2 label=$3 f=0 answers name lineno ids version expected q got
  ANS_N=0
  for answers in "$dir"/*.answers; do
    name=$(basename "$answers" .answers)
    lineno=0
    while IFS=$'\t' read -r ids version expected; do
      lineno=$((lineno + 1))
      q="ids=$(tr -d '[] ' <<<"$ids")"
      [[ $version != 0 ]] && q="$q&version=$version"
      got=$(curl -s "$URL/files/$prefix$name.lance/rows?$q")
      ANS_N=$((ANS_N + 1))
      if [[ $got == "$expected" ]]; then ok "$label $name:$lineno"
      else f=$((f + 1)); bad "$label $name:$lineno" "?$(head -c 80 <<<"$q") → $(head -c 200 <<<"$got")"; fi
    done < "$answers"
  done
  echo "$label: $((ANS_N - f))/$ANS_N bodies identical to Lance's"
}

# expect_body NAME WANT-STATUS GREP-PATTERN URL [curl args]: the status is WANT-STATUS and the
# body (in $WORK/body) matches the pattern (empty: any body); then /healthz still answers.
expect_body() {
  local name=$1 want=$2 pat=$3 u=$4; shift 4
  local got; got=$(status "$u" "$@")
  if [[ $got != "$want" ]]; then bad "$name" "want $want, got $got: $(head -c 300 "$WORK/body")"
  elif [[ -n $pat ]] && ! grep -q -- "$pat" "$WORK/body"; then bad "$name" "body lacks '$pat': $(head -c 300 "$WORK/body")"
  else ok "$name"; fi
  healthy "$name"
}
