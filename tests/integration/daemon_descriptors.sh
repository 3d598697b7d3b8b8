#!/usr/bin/env bash
# Every descriptor the daemon holds is charged to one bound (issue 14, point 2): with
# RLIMIT_NOFILE 256 (soft and hard, so it cannot be raised) and 400 datasets under the root,
# each requested once, every request is answered 200, a healthy dataset never requested before
# is served afterwards, and the daemon's open descriptors stay under the limit. Before, every
# dataset directory ever opened stayed open outside the bound: after ~100 datasets requests
# failed with "Too many open files". DS_COUNT=2000 gives docs/reliability.md's figure.
# Usage: BIN=<bin dir> tests/integration/daemon_descriptors.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-fds
. tests/integration/lib.sh
FIX=tests/fixtures/datasets/dict_v21.lance
N=${DS_COUNT:-400}
ROOT=$WORK/root
mkdir -p "$ROOT/many"
for i in $(seq "$N"); do cp -r "$FIX" "$ROOT/many/d$i.lance"; done
cp -r "$FIX" "$ROOT/fresh.lance"
LAUNCH=(prlimit --nofile=256:256)
start_daemon "$WORK/log" || bad "start under prlimit"
# One curl for all of them (keep-alive): each a take of row 1 of another dataset.
urls=()
for i in $(seq "$N"); do urls+=("$URL/files/many/d$i.lance/rows?ids=1" -o /dev/null -w '%{http_code}\n'); done
codes=$(curl -s "${urls[@]}")
good=$(grep -c '^200$' <<<"$codes")
[[ $good -eq $N ]] && ok "$N datasets each served once under RLIMIT_NOFILE 256 (all 200)" \
  || bad "$N datasets: $good answered 200" "others: $(grep -v '^200$' <<<"$codes" | sort | uniq -c | tr '\n' ' ')"
code=$(status "$URL/files/fresh.lance/rows?ids=1")
[[ $code == 200 ]] && ok "a dataset never requested before is served afterwards" || bad "fresh dataset: $code" "$(head -c 200 "$WORK/body")"
fds=$(curl -s "$URL/metrics" | awk '$1 == "process_open_fds" {print $2}')
[[ -n $fds && $fds -lt 256 ]] && ok "open descriptors bounded: $fds of 256" || bad "open descriptors: $fds"
echo "descriptors: open descriptors after $N datasets: $fds of 256"
echo -n "descriptors: "; it_finish
