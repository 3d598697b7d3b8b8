#!/usr/bin/env bash
# Every option lanced accepts (its getopt table, daemon/lanced/config.c) is listed by
# `lanced --help` and in lanced(8) (as the flag or as the config key) — issue 17, points 7-8.
# Usage: BIN=<bin dir> tests/integration/options_documented.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
help=$("$BIN/lanced" --help 2>&1)
man=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' docs/man/lanced.8)
fail=0 n=0
for opt in $(grep -o "{\"[a-z0-9-]*\", \(required\|no\)_argument" daemon/lanced/config.c | sed "s/{\"\\([a-z0-9-]*\\)\".*/\\1/"); do
  n=$((n + 1))
  key=${opt//-/_}
  grep -q -- "--$opt" <<<"$help" || { echo "FAIL --$opt missing from lanced --help"; fail=1; }
  grep -q -e "$key" -e "--$opt" <<<"$man" || { echo "FAIL $key / --$opt missing from docs/man/lanced.8"; fail=1; }
done
[[ $n -ge 30 ]] || { echo "FAIL only $n options found in config.c"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok   all $n lanced options are in --help and lanced(8)"
# lanced-load: every long option in its --help and lanced-load(1); --version; wrk's habits.
lhelp=$("$BIN/lanced-load" --help 2>&1)
lman=$(sed 's/\\-/-/g; s/\\f[BIRP]//g' docs/man/lanced-load.1)
m=0
for opt in $(grep -o '{"[a-z-]*", \(required\|no\)_argument' loadtest/options.c | sed 's/{"\([a-z-]*\)".*/\1/'); do
  m=$((m + 1))
  grep -q -- "--$opt" <<<"$lhelp" || { echo "FAIL lanced-load --$opt missing from --help"; fail=1; }
  grep -q -- "--$opt" <<<"$lman" || { echo "FAIL lanced-load --$opt missing from lanced-load(1)"; fail=1; }
done
[[ $m -ge 20 ]] || { echo "FAIL only $m lanced-load options found"; fail=1; }
[[ $("$BIN/lanced-load" --version) == "lanced-load "* ]] || { echo "FAIL lanced-load --version"; fail=1; }
TMP=$(mktemp -d)
"$BIN/lanced" --root "$(scripts/sample-root.sh "$TMP/root")" --listen 127.0.0.1:0 --workers 1 > "$TMP/log" 2>&1 &
pid=$!
for _ in $(seq 100); do port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/log" 2>/dev/null | head -1); [[ -n $port ]] && break; sleep 0.1; done
out=$("$BIN/lanced-load" -c 2 -d 1s -t 1 --json "http://127.0.0.1:$port/healthz" 2>/dev/null)
kill $pid; wait $pid 2>/dev/null; rm -rf "$TMP"
grep -q '"raw_path": "/healthz"' <<<"$out" && grep -q '"connections": 2' <<<"$out" && grep -q '"duration_s": 1' <<<"$out" \
  || { echo "FAIL lanced-load -c 2 -d 1s -t 1 URL: $(head -c 300 <<<"$out")"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok   all $m lanced-load options in --help and lanced-load(1); --version; wrk's -c -d -t URL"
# The man pages render without a warning (a stray form feed rendered /files/NAME as
# "/files/NAMER..P"; a raw UTF-8 dash is "invalid input" to troff).
for page in docs/man/*.[18]; do
  w=$(groff -ww -man -Tutf8 -z "$page" 2>&1)
  [[ -z $w ]] && echo "ok   $page renders with groff -ww and no warning" || { echo "FAIL $page: $(head -c 300 <<<"$w")"; fail=1; }
done
# lancectl: --version prints it, --help anywhere is the usage (exit 0), not a complaint.
v=$("$BIN/lancectl" --version); rc=$?
[[ $rc -eq 0 && $v == "lancectl "[0-9]* ]] && echo "ok   lancectl --version: $v" || { echo "FAIL lancectl --version: rc=$rc $v"; fail=1; }
for args in "--help" "take --help" "inspect -h" "bench --help"; do
  out=$("$BIN/lancectl" $args 2>&1); rc=$?
  [[ $rc -eq 0 && $out == usage:* ]] && echo "ok   lancectl $args prints the usage" || { echo "FAIL lancectl $args: rc=$rc $(head -c 120 <<<"$out")"; fail=1; }
done
exit $fail
