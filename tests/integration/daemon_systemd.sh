#!/usr/bin/env bash
# Runs daemon_systemd.py (socket activation, watchdog) over the sample root.
# Usage: BIN=<bin dir> tests/integration/daemon_systemd.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ROOT=$(scripts/sample-root.sh "$TMP/root")
/usr/bin/python3 -u tests/integration/daemon_systemd.py "$BIN" "$ROOT"
