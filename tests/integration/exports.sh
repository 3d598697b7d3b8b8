#!/usr/bin/env bash
# liblance.so exports exactly the functions lance.h declares LNC_API: nothing internal (the
# library is built with -fvisibility=hidden), no daemon protocol code, none missing.
# Usage: LIB=<dir with liblance.so> tests/integration/exports.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
SO=${LIB:-lib}/liblance.so
[[ -f $SO ]] || { echo "FAIL $SO missing"; exit 1; }
declared=$(sed -n 's/^LNC_API .*[ *]\(lnc_[a-z0-9_]*\)(.*/\1/p' lib/lance.h | sort -u)
exported=$(nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
fail=0
if [[ -n $extra ]]; then echo "FAIL exported but not in lance.h: $(echo $extra | head -c 400)"; fail=1; fi
if [[ -n $missing ]]; then echo "FAIL declared in lance.h but not exported: $missing"; fail=1; fi
n=$(echo "$declared" | wc -l)
[[ $n -ge 30 ]] || { echo "FAIL only $n LNC_API declarations found in lance.h"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok   liblance.so exports exactly the $n functions lance.h declares"
exit $fail
