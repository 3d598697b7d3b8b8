#!/usr/bin/env bash
# Arrow IPC round trip: tests/unit/test_ipc (built in BUILD_DIR) writes IPC streams, JSON rows
# and schema descriptions for a set of hand-built batches; ipc_roundtrip.mjs reads the
# streams with apache-arrow and compares. Usage: run_ipc_roundtrip.sh BUILD_DIR (default build).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build}"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/tests/test_ipc"
if [[ ! -x "$bin" ]]; then
  echo "run_ipc_roundtrip: $bin not built (make BUILD=... $bin)" >&2
  exit 1
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
IPC_OUT_DIR="$out" CK_VERBOSITY=minimal "$bin"
node "$root/tests/integration/ipc_roundtrip.mjs" "$out"
