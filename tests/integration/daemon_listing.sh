#!/usr/bin/env bash
# What is served, listed (issue 17, point 8): GET /files/ and /files/<dir>/ name the datasets,
# data files and directories beneath, as JSON; a missing directory or one outside the root is
# refused; and the daemon warns at start-up when its root holds no Lance data.
# Usage: BIN=<bin dir> tests/integration/daemon_listing.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
TMP=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
start() { # root log -> URL
  "$BIN/lanced" --root "$1" --listen 127.0.0.1:0 --workers 1 > "$2" 2>&1 &
  PIDS+=($!)
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$2" | head -1)
    [[ -n $port ]] && curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break
    sleep 0.1
  done
  URL=http://127.0.0.1:$port
}
ROOT=$(scripts/sample-root.sh "$TMP/root")
mkdir -p "$ROOT/sub/deeper" "$TMP/outside" && cp "$ROOT/sample.lance" "$ROOT/sub/x.lance"
ln -s "$TMP/outside" "$ROOT/escape"
start "$ROOT" "$TMP/log"
got=$(curl -s "$URL/files/")
want='{"path":"","entries":[{"name":"embeddings.lance","kind":"file"},{"name":"sample.lance","kind":"file"},{"name":"sub","kind":"directory"},{"name":"train.lance","kind":"dataset"}]}'
[[ $got == "$want" ]] && ok "GET /files/ lists datasets, files and directories (not the symlink out)" || bad "GET /files/: $got"
got=$(curl -s "$URL/files/sub/")
[[ $got == '{"path":"sub","entries":[{"name":"deeper","kind":"directory"},{"name":"x.lance","kind":"file"}]}' ]] \
  && ok "GET /files/sub/ lists beneath it" || bad "GET /files/sub/: $got"
code=$(curl -s -o "$TMP/b" -w '%{http_code}' "$URL/files/nope/")
[[ $code == 404 ]] && ok "a missing directory: 404" || bad "missing directory: $code $(cat "$TMP/b")"
code=$(curl -s -o "$TMP/b" -w '%{http_code}' "$URL/files/escape/")
[[ $code == 403 ]] && ok "a directory outside the root (symlink): 403" || bad "escape: $code $(cat "$TMP/b")"
grep -q 'holds no Lance data' "$TMP/log" && bad "warned about a root that holds data" || ok "no warning for a root with data"
mkdir -p "$TMP/empty/notes" && echo hi > "$TMP/empty/readme.txt"
start "$TMP/empty" "$TMP/log2"
grep -q 'holds no Lance data' "$TMP/log2" && ok "warns at start-up when the root holds no Lance data" || bad "no warning: $(cat "$TMP/log2")"
echo "listing: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
