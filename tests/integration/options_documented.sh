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
for opt in $(grep -o "{\"[a-z-]*\", \(required\|no\)_argument" daemon/lanced/config.c | sed "s/{\"\\([a-z-]*\\)\".*/\\1/"); do
  n=$((n + 1))
  key=${opt//-/_}
  grep -q -- "--$opt" <<<"$help" || { echo "FAIL --$opt missing from lanced --help"; fail=1; }
  grep -q -e "$key" -e "--$opt" <<<"$man" || { echo "FAIL $key / --$opt missing from docs/man/lanced.8"; fail=1; }
done
[[ $n -ge 20 ]] || { echo "FAIL only $n options found in config.c"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok   all $n lanced options are in --help and lanced(8)"
exit $fail
