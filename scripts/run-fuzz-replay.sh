#!/usr/bin/env bash
# Runs each fuzz binary given on the command line (built with tests/fuzz/driver/replay.c) over
# its corpus tests/fuzz/corpus/<target>/; fails if any binary crashes or reports an error.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fail=0
for bin in "$@"; do
  name="$(basename "$bin")"
  corpus="$root/tests/fuzz/corpus/$name"
  if [ ! -d "$corpus" ]; then
    echo "SKIP: $name (no corpus at tests/fuzz/corpus/$name)"
    continue
  fi
  if "$bin" "$corpus"; then
    echo "OK: $name"
  else
    echo "FAILED: $name (exit $?)"
    fail=1
  fi
done
exit $fail
