#!/usr/bin/env bash
# make test's stages, in order, each to the end even when an earlier one failed (a build
# failure stops the rest: nothing after it can run), then one closing line: every stage passed,
# or which did not. Exit 1 when any failed. Usage: scripts/test-all.sh MAKE BENCH_SMOKE
set -uo pipefail
MAKE=${1:-make}
SMOKE=${2:-1}
stages=("checks:format-check floorplan" "build:all" "unit:unit-test" "conformance:conformance"
        "fuzz-replay:fuzz-replay" "integration:integration" "asan+ubsan:asan")
[[ $SMOKE == 1 ]] && stages+=("bench-smoke:bench BENCH_SCALE=small")
passed=() failed=()
for s in "${stages[@]}"; do
  name=${s%%:*} targets=${s#*:}
  echo "==== make test: $name ($targets)"
  quick=0; [[ $name == bench-smoke ]] && quick=1 # one cell per system: a check, not figures
  if BENCH_QUICK=$quick $MAKE --no-print-directory $targets; then
    passed+=("$name")
  else
    failed+=("$name")
    [[ $name == build ]] && break
  fi
done
if ((${#failed[@]} == 0)); then
  echo "make test: all ${#passed[@]} stages passed (${passed[*]})"
else
  echo "make test: FAILED: ${failed[*]} (passed: ${passed[*]:-none})"
fi
echo "stages: ${#passed[@]} passed, ${#failed[@]} failed" # the plain closing line CI reads
((${#failed[@]} == 0))
