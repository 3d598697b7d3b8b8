#!/usr/bin/env bash
# Permissions and their error codes (issue 14, point 3), with the daemon running as `nobody`
# (root would read anything): a path leaving the root through a symlink, a file never cached
# with mode 000, a cached file whose permission is revoked, and a dataset's data file revoked —
# each 403 permission_denied without Retry-After (not an io_error clients are told to retry).
# A revoked permission on a cached file takes effect within revalidate_ms (200 here), and
# restoring it serves the file again. A manifest already read stays served until the dataset's
# version changes (its bytes are in memory; documented in docs/api.md).
# Usage: BIN=<bin dir> tests/integration/daemon_permissions.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-perm
. tests/integration/lib.sh
if [[ $(id -u) -ne 0 ]] || ! command -v setpriv > /dev/null; then
  echo "permissions: needs root (to run the daemon as nobody) and setpriv; skipped"
  exit 0
fi
SRC=$(scripts/sample-root.sh "$WORK/src")
ROOT=$WORK/root OUT=$WORK/outside
mkdir -p "$ROOT" "$OUT"
cp "$SRC/sample.lance" "$ROOT/a.lance"
cp "$SRC/sample.lance" "$ROOT/b.lance"
cp "$SRC/sample.lance" "$OUT/secret.lance"
cp -r tests/fixtures/datasets/multi_v21.lance "$ROOT/ds.lance"
ln -s "$OUT/secret.lance" "$ROOT/escape.lance"
chmod -R a+rX "$WORK"
LAUNCH=(setpriv --reuid=65534 --regid=65534 --clear-groups)
start_daemon "$WORK/log" --workers 1 --revalidate-ms 200 || bad "start as nobody"
expect() { # name status code-in-body url
  local got
  got=$(curl -s -D "$WORK/hdr" -o "$WORK/body" -w '%{http_code}' "$4")
  if [[ $got == "$2" ]] && { [[ -z $3 ]] || grep -q "\"code\":\"$3\"" "$WORK/body"; } &&
     ! grep -qi '^retry-after' "$WORK/hdr"; then ok "$1 ($got)"
  else bad "$1: got $got" "$(head -c 200 "$WORK/body")"; fi
}
expect "a symlink out of the root is 403 permission_denied" 403 permission_denied "$URL/files/escape.lance/rows?ids=1"
chmod 000 "$ROOT/b.lance"
expect "a never-cached file with mode 000 is 403 permission_denied" 403 permission_denied "$URL/files/b.lance/rows?ids=1"
expect "a readable file is served" 200 "" "$URL/files/a.lance/rows?ids=1"
chmod 000 "$ROOT/a.lance"
sleep 0.3
expect "a cached file whose permission was revoked: 403 within revalidate_ms" 403 permission_denied "$URL/files/a.lance/rows?ids=1"
chmod 644 "$ROOT/a.lance"
sleep 0.3
expect "permission restored: served again" 200 "" "$URL/files/a.lance/rows?ids=1"
expect "a dataset is served" 200 "" "$URL/files/ds.lance/rows?ids=1"
for f in "$ROOT"/ds.lance/data/*.lance; do chmod 000 "$f"; done
sleep 0.3
expect "a dataset whose data files were revoked: 403" 403 permission_denied "$URL/files/ds.lance/rows?ids=1"
echo -n "permissions: "; it_finish
