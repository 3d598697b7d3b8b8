#!/usr/bin/env bash
# Runs daemon_connections.py (slow headers, idle floods, per-client caps, descriptor limit)
# against the real daemon over the sample root. Usage: BIN=<bin dir> tests/integration/daemon_connections.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
/usr/bin/python3 -u tests/integration/daemon_connections.py "$BIN" "$ROOT"
