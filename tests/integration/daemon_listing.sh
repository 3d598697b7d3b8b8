#!/usr/bin/env bash
# What is served, listed (issue 17, point 8): GET /files/ and /files/<dir>/ name the datasets,
# data files and directories beneath, as JSON; a missing directory or one outside the root is
# refused; and the daemon warns at start-up when its root holds no Lance data.
# Usage: BIN=<bin dir> tests/integration/daemon_listing.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-list
. tests/integration/lib.sh
ROOT=$(scripts/sample-root.sh "$WORK/root")
mkdir -p "$ROOT/sub/deeper" "$WORK/outside" && cp "$ROOT/sample.lance" "$ROOT/sub/x.lance"
ln -s "$WORK/outside" "$ROOT/escape"
start_daemon "$WORK/log" || bad "start"
got=$(curl -s "$URL/files/")
want='{"path":"","entries":[{"name":"embeddings.lance","kind":"file"},{"name":"sample.lance","kind":"file"},{"name":"sub","kind":"directory"},{"name":"train.lance","kind":"dataset"}]}'
[[ $got == "$want" ]] && ok "GET /files/ lists datasets, files and directories (not the symlink out)" || bad "GET /files/" "$got"
got=$(curl -s "$URL/files/sub/")
[[ $got == '{"path":"sub","entries":[{"name":"deeper","kind":"directory"},{"name":"x.lance","kind":"file"}]}' ]] \
  && ok "GET /files/sub/ lists beneath it" || bad "GET /files/sub/" "$got"
code=$(status "$URL/files/nope/")
[[ $code == 404 ]] && ok "a missing directory: 404" || bad "missing directory: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/escape/")
[[ $code == 403 ]] && ok "a directory outside the root (symlink): 403" || bad "escape: $code" "$(cat "$WORK/body")"
got=$(curl -s "$URL/files/sub/deeper/")
[[ $got == '{"path":"sub/deeper","entries":[]}' ]] && ok "an empty directory lists no entries (no qsort of nothing: UBSan)" \
  || bad "GET /files/sub/deeper/" "$got"
[[ $(curl -s "$URL/files") == "$(curl -s "$URL/files/")" ]] && ok "GET /files (no slash) is the root's listing" \
  || bad "GET /files" "$(curl -s "$URL/files")"
for p in escape escape/rows?ids=0; do
  code=$(status "$URL/files/$p")
  [[ $code == 403 ]] && ok "/files/$p, a directory outside the root (symlink): 403, not 'is a directory'" \
    || bad "/files/$p: $code" "$(cat "$WORK/body")"
done
grep -q 'holds no Lance data' "$WORK/log" && bad "warned about a root that holds data" || ok "no warning for a root with data"
# Listings of the root at once, from several connections (so on both network threads): each
# reads the directory through a descriptor of its own. (A dup of the root shared one offset:
# concurrent listings of 3,000 files came back with entries missing or repeated.)
for i in $(seq 1 2000); do : > "$ROOT/f$i.lance"; done
want_n=$(( $(ls "$ROOT" | wc -l) - 1 )) # all but the symlink out
pids=()
for c in 1 2 3 4; do
  ( for k in $(seq 1 15); do curl -s "$URL/files/" | grep -o '"name"' | wc -l; done > "$WORK/list$c" ) &
  pids+=($!)
done
wait "${pids[@]}" # not a bare wait: the daemon is a child too
sort -u "$WORK"/list? > "$WORK/lists"
[[ $(cat "$WORK/lists") == "$want_n" ]] && ok "60 concurrent listings of a root of $want_n entries: every one whole" \
  || bad "concurrent listings" "want $want_n: $(tr '\n' ' ' < "$WORK/lists")"
ROOT=$WORK/empty
mkdir -p "$ROOT/notes" && echo hi > "$ROOT/readme.txt"
start_daemon "$WORK/log2" || bad "start over an empty root"
grep -q 'holds no Lance data' "$WORK/log2" && ok "warns at start-up when the root holds no Lance data" || bad "no warning" "$(cat "$WORK/log2")"
echo -n "listing: "; it_finish
