#!/usr/bin/env bash
# systemd-analyze verify accepts systemd/lanced.service (with ExecStart pointed at the built
# daemon, since verify insists the binary exists), and `make install DESTDIR=…` installs the
# programs, unit, example config and man pages. Usage: BIN=<bin dir> tests/integration/systemd_unit.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=$(cd "${BIN:-bin}" && pwd)
pass=0 fail=0
check() { if "$@"; then pass=$((pass + 1)); echo "ok   $*"; else fail=$((fail + 1)); echo "FAIL $*"; fi; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/local/bin/lanced|$BIN/lanced|g" systemd/lanced.service > "$TMP/lanced.service"
  cp systemd/lanced.socket "$TMP/lanced.socket"
  check systemd-analyze verify --man=no "$TMP/lanced.service" "$TMP/lanced.socket"
else
  echo "systemd_unit: systemd-analyze not installed; unit not verified"
fi
make -s install DESTDIR="$TMP/root" PREFIX=/usr/local ${MAKE_VARS:-} >"$TMP/install.log" 2>&1 || cat "$TMP/install.log"
for f in usr/local/bin/lanced usr/local/bin/lancectl usr/local/share/man/man8/lanced.8 \
         usr/local/share/man/man1/lancectl.1 etc/lanced/lanced.conf; do
  check test -s "$TMP/root/$f"
done
check test -n "$(find "$TMP/root" -name lanced.service)"
check test -n "$(find "$TMP/root" -name lanced.socket)"
# The unit as installed (ExecStart under PREFIX) verifies too.
if command -v systemd-analyze >/dev/null; then
  unit=$(find "$TMP/root" -name lanced.service | head -1)
  sed -i "s|/usr/local/bin/lanced|$BIN/lanced|g" "$unit"
  check systemd-analyze verify --man=no "$unit" "$(dirname "$unit")/lanced.socket"
fi
check "$TMP/root/usr/local/bin/lanced" --config "$TMP/root/etc/lanced/lanced.conf" --root "$PWD/tests/fixtures" --check-config
echo "systemd unit and install: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
