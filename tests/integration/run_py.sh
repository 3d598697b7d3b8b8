#!/usr/bin/env bash
# Runs the Python integration test tests/integration/NAME.py (Debian's python3) against the
# real daemon over a fresh sample root. Usage: BIN=<bin dir> tests/integration/run_py.sh NAME
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
/usr/bin/python3 -u "tests/integration/$1.py" "$BIN" "$ROOT"
