#!/usr/bin/env bash
# A/B of two lanced builds on one cell, for checking that a change does not regress: both
# daemons run side by side on the same data (so the page cache and the machine's noise are
# shared), 3 s runs of lanced-load alternate between them (new first, then old first, ...),
# and each pair's ratio is printed, then the CPU each daemon spent per request (utime + stime
# from /proc over the same runs), which moves far less with the machine's noise than
# throughput does. Not part of make bench: a tool for a session's own before/after.
# Usage: OLD=/path/to/old/bin [NEW=bin] bench/ab.sh DATA_DIR TABLE MODE BATCH CONNS FORMAT [PAIRS] [SECONDS]
#   e.g. git worktree add /tmp/old HEAD~1 && make -C /tmp/old bin/lanced
#        OLD=/tmp/old/bin bench/ab.sh bench/data/small scalars.lance direct 100 4 arrow
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: OLD=DIR [NEW=DIR] bench/ab.sh DATA_DIR TABLE direct|buffered BATCH CONNS json|arrow|proto [PAIRS] [SECONDS]"
DATA=${1:?$usage} TABLE=${2:?$usage} MODE=${3:?$usage} BATCH=${4:?$usage} CONNS=${5:?$usage} FORMAT=${6:?$usage}
PAIRS=${7:-4} SECS=${8:-3}
OLD=${OLD:?$usage} NEW=${NEW:-bin}
LOAD=$NEW/lanced-load
[[ -x $OLD/lanced && -x $NEW/lanced && -x $LOAD ]] || { echo "ab.sh: need $OLD/lanced, $NEW/lanced and $LOAD" >&2; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # start BIN PORT: the daemon's pid
  "$1/lanced" --root "$DATA" --listen "127.0.0.1:$2" --io-mode "$MODE" --log-level error >/dev/null 2>&1 &
  echo $!
}
NP=$(free_port) OP=$(free_port)
NPID=$(start "$NEW" "$NP") OPID=$(start "$OLD" "$OP")
trap 'kill $NPID $OPID 2>/dev/null' EXIT
for port in $NP $OP; do
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # run PORT SECONDS: requests and rows/s of one lanced-load run
  "$LOAD" --url "http://127.0.0.1:$1" --path "$TABLE" --batch "$BATCH" --connections "$CONNS" \
    --duration "$2" --format "$FORMAT" --threads 1 --quiet --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["requests"], j["rows_per_s"] if '"$BATCH"' > 1 else j["requests_per_s"])'
}
run $NP 1 >/dev/null; run $OP 1 >/dev/null # warm both: search caches, page cache
declare -A reqs=([new]=0 [old]=0) ticks_used=([new]=0 [old]=0)
line=""
for i in $(seq "$PAIRS"); do
  order="new old"; (( i % 2 == 0 )) && order="old new"
  declare -A rate=()
  for who in $order; do
    if [[ $who == new ]]; then port=$NP pid=$NPID; else port=$OP pid=$OPID; fi
    t0=$(ticks "$pid")
    read -r n r < <(run "$port" "$SECS")
    t1=$(ticks "$pid")
    rate[$who]=$r
    reqs[$who]=$(( ${reqs[$who]} + n ))
    ticks_used[$who]=$(( ${ticks_used[$who]} + t1 - t0 ))
  done
  line+=$(python3 -c "print(' %.0f/%.0f=%.2f' % (${rate[new]}, ${rate[old]}, ${rate[new]} / max(${rate[old]}, 1)))")
done
unit=$([[ $BATCH == 1 ]] && echo req/s || echo rows/s)
echo "$TABLE $MODE batch $BATCH conns $CONNS $FORMAT, new/old $unit:$line"
hz=$(getconf CLK_TCK)
python3 -c "n, o = (${ticks_used[new]} * 1e6 / $hz / max(${reqs[new]}, 1), ${ticks_used[old]} * 1e6 / $hz / max(${reqs[old]}, 1)); print('CPU us/request: new %.1f, old %.1f (%.2f)' % (n, o, n / o if o else 0))"
