#!/usr/bin/env bash
# Rows by Lance row id (issue 35), against Lance's own row ids: every dataset fixture's
# <name>.rowaddr holds, per version, the _rowid Lance's withRowId() gave for each live offset
# (tests/fixtures/gen-datasets.mjs), and the stable-row-id fixtures' <name>.rowids the same
# for tables whose row ids are not addresses (after updates and a compaction), with Lance's
# takeRowIds answers in <name>.takerowids (compared body for body). For a sample of offsets of each version, `row_ids=` those
# ids answers the bytes `ids=` the offsets answers (which the conformance tests compare with
# Lance's takeOffsets), in JSON, Arrow and protobuf, GET and POST (JSON and protobuf bodies)
# and through Connect; _rowid and _rowaddr are Lance's ids; a deleted row's id, one past a
# fragment and an unknown fragment are 404 not_found naming the id; ids with row_ids is 400.
# Usage: BIN=<bin dir> tests/integration/daemon_rowids.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-rowids
. tests/integration/lib.sh
ROOT=tests/fixtures
start_daemon "$WORK/log" || bad "start"
ARROW='application/vnd.apache.arrow.stream'
PROTO='application/x-protobuf'
same() { # what; two files
  if cmp -s "$2" "$3"; then ok "$1"; else bad "$1" "$(head -c 160 "$3")"; fi
}
for f in "$ROOT"/datasets/*.rowaddr "$ROOT"/datasets/*.rowids; do
  name=$(basename "${f%.*}")
  stable=$([[ $f == *.rowids ]] && echo 1 || echo 0)
  ds=datasets/$name.lance
  while IFS=$'\t' read -r version nrows addrs raddrs; do
    [[ $nrows -gt 0 ]] || continue
    # 12 offsets spread over the version (first, last, a repeat), and their row ids
    read -r offs rids < <(node -e '
      const a = JSON.parse(process.argv[1]), n = a.length, o = [];
      for (let i = 0; i < 10; i++) o.push(Math.floor(i * (n - 1) / 9));
      o.push(n - 1, o[3]);
      console.log(o.join(","), o.map((i) => a[i]).join(","));' "$addrs")
    v=$([[ $version == 0 ]] || echo "&version=$version")
    for fmt in json arrow proto; do
      acc=$([[ $fmt == arrow ]] && echo "$ARROW" || { [[ $fmt == proto ]] && echo "$PROTO" || echo application/json; })
      curl -s -H "Accept: $acc" -o "$WORK/a" "$URL/files/$ds/rows?ids=$offs$v"
      curl -s -H "Accept: $acc" -o "$WORK/b" "$URL/files/$ds/rows?row_ids=$rids$v"
      same "$name@$version $fmt: row_ids= answers what ids= does" "$WORK/a" "$WORK/b"
    done
    body=$(node -e 'const [r, v] = process.argv.slice(1); const b = {row_ids: r.split(",").map(Number)}; if (+v) b.version = +v; console.log(JSON.stringify(b))' "$rids" "$version")
    curl -s -H 'Content-Type: application/json' -d "$body" -o "$WORK/c" "$URL/files/$ds/rows?format=json"
    curl -s -o "$WORK/a" "$URL/files/$ds/rows?ids=$offs$v"
    same "$name@$version: POST {\"row_ids\"} answers what ids= does" "$WORK/a" "$WORK/c"
    # _rowid is Lance's row id; without stable row ids _rowaddr is the same number.
    got=$(curl -s "$URL/files/$ds/rows?row_ids=$rids&columns=_rowaddr,_rowid$v" |
      node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);const st=+process.argv[1];console.log(j.columns.join(",")+" "+j.rows.map(r=>st||r._rowid===r._rowaddr?r._rowid:"x").join(","))})' "$stable")
    [[ $got == "_rowaddr,_rowid $rids" ]] && ok "$name@$version: _rowid is Lance's row id" \
      || bad "$name@$version: _rowid/_rowaddr" "$got vs $rids"
    if [[ $stable == 1 ]]; then # _rowaddr against the scan's
      want=$(node -e 'const a=JSON.parse(process.argv[1]),o=process.argv[2].split(",").map(Number);console.log(o.map((i)=>a[i]).join(","))' "$raddrs" "$offs")
      got=$(curl -s "$URL/files/$ds/rows?ids=$offs&columns=_rowaddr$v" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).rows.map(r=>r._rowaddr).join(",")))')
      [[ $got == "$want" ]] && ok "$name@$version: _rowaddr is Lance's" || bad "$name@$version: _rowaddr" "$got vs $want"
    fi
  done < "$f"
done
# Lance's takeRowIds answers (stable row ids), body for body.
for f in "$ROOT"/datasets/*.takerowids; do
  name=$(basename "$f" .takerowids)
  n=0
  while IFS=$'\t' read -r version ids body; do
    n=$((n + 1))
    v=$([[ $version == 0 ]] || echo "&version=$version")
    got=$(curl -s "$URL/files/datasets/$name.lance/rows?row_ids=$(tr -d '[]' <<<"$ids")$v")
    [[ $got == "$body" ]] && ok "$name@$version takeRowIds case $n: Lance's body" \
      || bad "$name@$version takeRowIds case $n" "$(head -c 200 <<<"$got")"
  done < "$f"
done
# Stable row ids: a deleted row's id (id 3 was deleted in version 2: its row id is 3) and one
# never written are 404; an older version still has row 3.
code=$(status "$URL/files/datasets/stable_v22.lance/rows?row_ids=3")
[[ $code == 404 ]] && grep -q 'row id 3 names no live row' "$WORK/body" && ok "stable: a deleted row's id is 404" \
  || bad "stable deleted: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/datasets/stable_v22.lance/rows?row_ids=3&version=1&columns=id")
[[ $code == 200 ]] && grep -q '"id":3' "$WORK/body" && ok "stable: version 1 still has row id 3" \
  || bad "stable version 1: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/datasets/stable_v22.lance/rows?row_ids=1000000")
[[ $code == 404 ]] && ok "stable: a row id never written is 404" || bad "stable never written: $code"
# Not rows: a deleted row (deletions_v22 deletes every 7th id of fragment 0: row 3), one past
# a fragment's rows, an unknown fragment; ids with row_ids; a data file's row ids are offsets.
code=$(status "$URL/files/datasets/deletions_v22.lance/rows?row_ids=3")
[[ $code == 404 ]] && grep -q '"not_found".*row id 3 .*deleted' "$WORK/body" && ok "a deleted row's id: 404 naming it" \
  || bad "deleted row id: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/datasets/deletions_v22.lance/rows?row_ids=1,999999")
[[ $code == 404 ]] && grep -q 'row id 999999 .*past' "$WORK/body" && ok "a row id past its fragment: 404" \
  || bad "past the fragment: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/datasets/deletions_v22.lance/rows?row_ids=4294967296000")
[[ $code == 404 ]] && grep -q 'names no fragment' "$WORK/body" && ok "an unknown fragment: 404" \
  || bad "unknown fragment: $code" "$(cat "$WORK/body")"
code=$(status "$URL/files/datasets/deletions_v22.lance/rows?row_ids=1&ids=1")
[[ $code == 400 ]] && ok "ids and row_ids together: 400" || bad "ids with row_ids: $code"
code=$(status "$URL/files/datasets/deletions_v22.lance/rows" -H 'Content-Type: application/json' -d '{"ids":[1],"row_ids":[1]}')
[[ $code == 400 ]] && ok "a body with ids and row_ids: 400" || bad "body with both: $code"
# Connect (JSON flavour): TakeRequest.row_ids answers what ids does; both at once is refused.
T=$URL/lanced.v1.RowService/Take
curl -s -H 'Content-Type: application/json' -o "$WORK/a" "$T" -d '{"path":"datasets/deletions_v22.lance","ids":["5","0"],"format":"FORMAT_PROTO"}'
curl -s -H 'Content-Type: application/json' -o "$WORK/b" "$T" -d '{"path":"datasets/deletions_v22.lance","rowIds":["7","1"],"format":"FORMAT_PROTO"}'
same "Connect: row_ids answers what ids does" "$WORK/a" "$WORK/b"
code=$(status "$T" -H 'Content-Type: application/json' -d '{"path":"datasets/deletions_v22.lance","ids":["1"],"rowIds":["1"]}')
[[ $code == 400 ]] && grep -q 'not both' "$WORK/body" && ok "Connect: ids with row_ids refused" || bad "Connect both: $code" "$(cat "$WORK/body")"
code=$(status "$T" -H 'Content-Type: application/json' -d '{"path":"datasets/deletions_v22.lance","rowIds":["3"]}')
[[ $code == 404 ]] && grep -q 'deleted' "$WORK/body" && ok "Connect: a deleted row id is not_found" || bad "Connect deleted: $code" "$(cat "$WORK/body")"
curl -s -o "$WORK/a" "$URL/files/data/core21/rows?ids=5,0&columns=i32"
curl -s -o "$WORK/b" "$URL/files/data/core21/rows?row_ids=5,0&columns=i32"
same "a data file: row ids are its offsets" "$WORK/a" "$WORK/b"
echo -n "rowids: "; it_finish
