#!/usr/bin/env bash
# Runs each Check unit-test binary given on the command line; fails if any fails.
set -uo pipefail
fail=0
for t in "$@"; do
  if ! "$t"; then echo "FAILED: $t"; fail=1; fi
done
exit $fail
