#!/usr/bin/env bash
# Integration tests for datasets in lanced: start the real daemon over a temporary root with
# copies of the dataset fixtures (tests/fixtures/datasets, written by LanceDB) and damaged
# copies, then: every answers line of every fixture through GET (pinned versions via
# ?version=N) equals Lance's body; POST, describe, Connect on dataset paths; damaged datasets
# and missing versions give clear 4xx/422 errors while /healthz and other datasets keep
# answering; then daemon_datasets.mjs (Arrow bodies decoded with apache-arrow, versions
# appended and deleted by LanceDB while the daemon runs).
# Usage: BIN=bin tests/integration/daemon_datasets.sh   (run by tests/integration/run.sh).
# The last line is "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
WORK_PREFIX=lanced-ds
. tests/integration/lib.sh
FIX=tests/fixtures/datasets

# ---- root: fixtures, damaged copies, a plain directory, a live copy for appends ----------
ROOT=$WORK/root
mkdir -p "$ROOT/ds" "$ROOT/bad" "$ROOT/plain" "$ROOT/live"
cp -r $FIX/*.lance "$ROOT/ds/"
cp -r $FIX/multi_v21.lance "$ROOT/bad/nomanifest.lance" && rm "$ROOT"/bad/nomanifest.lance/_versions/*.manifest
cp -r $FIX/multi_v21.lance "$ROOT/bad/torn.lance" && truncate -s 100 "$ROOT/bad/torn.lance/_versions/3.manifest"
# Torn long ago: damage, not a write in progress (a manifest younger than 10 s is taken for one
# being written, and the version before it is served meanwhile: "writing" below).
touch -d '1 hour ago' "$ROOT/bad/torn.lance/_versions/3.manifest"
cp -r $FIX/multi_v21.lance "$ROOT/bad/writing.lance" # its manifest 3 is cut just before the check
# A manifest whose field "x" has an id (9) that its data files do not have (a rename changes
# only the name, which is served: renamed_v2x; a field id no data file has is damage).
cp -r $FIX/multi_v21.lance "$ROOT/bad/badid.lance"
python3 -c 'import sys; p = sys.argv[1]; d = open(p, "rb").read()
assert d.count(b"\x12\x01x\x18\x01") == 1 and d.count(b"\x12\x04\x00\x01\x02\x04") >= 3
d = d.replace(b"\x12\x01x\x18\x01", b"\x12\x01x\x18\x09").replace(b"\x12\x04\x00\x01\x02\x04", b"\x12\x04\x00\x09\x02\x04")
open(p, "wb").write(d)' "$ROOT/bad/badid.lance/_versions/3.manifest"
cp -r $FIX/multi_v22.lance "$ROOT/bad/nodata.lance" && rm "$(ls "$ROOT"/bad/nodata.lance/data/*.lance | head -1)"
cp -r $FIX/deletions_v22.lance "$ROOT/bad/baddel.lance"
for f in "$ROOT"/bad/baddel.lance/_deletions/*.bin; do printf 'garbage!' > "$f"; done
cp -r $FIX/multi_v22.lance "$ROOT/live/app.lance"

REVALIDATE_MS=200 # commits below must be served within this (daemon_datasets.mjs waits it out)
start_daemon "$WORK/lanced.log" --revalidate-ms $REVALIDATE_MS || { echo "0 passed, 1 failed"; exit 1; }

expect() { expect_body "$@"; }

# ---- (a) every answers line of every fixture, JSON rows identical to Lance's ----------------
answers_match $FIX ds/ "dataset answers"
[[ $ANS_N -gt 200 ]] && ok "answers compared" || bad "answers compared" "only $ANS_N"
healthy "answers"

# POST (JSON body, version in the body or the query), HEAD, protobuf body.
line=$(sed -n 3p $FIX/deletions_v22.answers)
IFS=$'\t' read -r ids version expected <<<"$line"
got=$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"ids\":$ids}" "$URL/files/ds/deletions_v22.lance/rows")
[[ $got == "$expected" ]] && ok "POST json" || bad "POST json" "$(head -c 200 <<<"$got")"
line=$(awk -F'\t' '$2 != 0' $FIX/addcol_v22.answers | sed -n 3p)
IFS=$'\t' read -r ids version expected <<<"$line"
got=$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"ids\":$ids,\"version\":$version}" "$URL/files/ds/addcol_v22.lance/rows")
[[ $got == "$expected" ]] && ok "POST json with version" || bad "POST json with version" "$(head -c 200 <<<"$got")"
got=$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"ids\":$ids}" "$URL/files/ds/addcol_v22.lance/rows?version=$version")
[[ $got == "$expected" ]] && ok "POST json with ?version" || bad "POST json with ?version" "$(head -c 200 <<<"$got")"
expect "HEAD dataset rows" 200 "" "$URL/files/ds/multi_v21.lance/rows?ids=1" -I
expect "columns on a dataset" 200 '"columns":\["s","id"\]' "$URL/files/ds/addcol_v21.lance/rows?ids=0,5&columns=s,id"

# ---- tags: ?version=<tag> reads the version a LanceDB tag names (tags_v22.tags: Lance's list) ----
n_tag=0
while IFS=$'\t' read -r tag tv; do
  qtag=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$tag")
  while IFS=$'\t' read -r ids version expected; do
    [[ $version == "$tv" ]] || continue
    got=$(curl -s "$URL/files/ds/tags_v22.lance/rows?ids=$(tr -d '[] ' <<<"$ids")&tag=$qtag")
    n_tag=$((n_tag + 1))
    [[ $got == "$expected" ]] && ok "tag $tag" || bad "tag $tag ($tv)" "$(head -c 200 <<<"$got")"
  done < $FIX/tags_v22.answers
done < $FIX/tags_v22.tags
[[ $n_tag -ge 3 ]] && ok "answers by tag compared ($n_tag)" || bad "answers by tag" "only $n_tag"
IFS=$'\t' read -r ids version expected < <(awk -F'\t' '$2 == 3' $FIX/tags_v22.answers | head -1)
got=$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"ids\":$ids,\"version\":\"moved\"}" "$URL/files/ds/tags_v22.lance/rows")
[[ $got == "$expected" ]] && ok "POST json with a tag" || bad "POST json with a tag" "$(head -c 200 <<<"$got")"
expect "describe by tag" 200 '"version":3,' "$URL/files/ds/tags_v22.lance?version=moved"
expect "connect Take by tag" 200 '"numRows":"1"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/tags_v22.lance","ids":[199],"columns":["id"],"format":"FORMAT_PROTO","tag":"first"}'
expect "connect Take past a tag's version" 400 'out_of_range' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/tags_v22.lance","ids":[200],"tag":"first"}'
expect "connect GetFile by tag" 200 '"numRows":"300"' "$URL/lanced.v1.RowService/GetFile" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/tags_v22.lance","tag":"v1.2-rc_3"}'
expect "connect version and tag" 400 'not both' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/tags_v22.lance","ids":[0],"version":2,"tag":"first"}'
expect "unknown tag" 404 "no tag 'nope'" "$URL/files/ds/tags_v22.lance/rows?ids=0&version=nope"
# "7" is a tag naming version 1 (200 rows): ?version=7 is a number, ?tag=7 and a JSON string the tag.
expect "?version=7 is a version number" 404 'version 7 not found' "$URL/files/ds/tags_v22.lance/rows?ids=0&version=7"
expect "?tag=7 is the tag" 400 'has 200 rows' "$URL/files/ds/tags_v22.lance/rows?ids=250&tag=7"
expect "a JSON string is a tag" 400 'has 200 rows' "$URL/files/ds/tags_v22.lance/rows" -X POST \
  -H 'Content-Type: application/json' -d '{"ids":[250],"version":"7"}'
expect "a tag not in ASCII (file name percent-encoded)" 200 '"id":250' "$URL/files/ds/tags_v22.lance/rows?ids=250&columns=id&version=donn%C3%A9es"
expect "version and tag" 400 'not both' "$URL/files/ds/tags_v22.lance/rows?ids=0&version=1&tag=first"
expect "not a tag name" 400 'not a tag name' "$URL/files/ds/tags_v22.lance/rows?ids=0&version=..%2Fx"
expect "tag on a dataset without tags" 404 'no tag' "$URL/files/ds/multi_v22.lance/rows?ids=0&version=first"

# ---- describe ---------------------------------------------------------------------------------
expect "describe dataset" 200 '"type":"dataset"' "$URL/files/ds/deletions_v21.lance"
node -e '
  const b = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const d = b.dataset, live = d.fragments.reduce((a, f) => a + f.live_rows, 0);
  const ok = b.version === 8 && b.num_rows === d.num_rows && live === b.num_rows &&
    d.versions.length >= 2 && d.num_physical_rows > b.num_rows && b.columns.length === 4 &&
    d.fragments.some((f) => f.deletion_file) && d.fragments.every((f) => f.data_files.length > 0);
  if (!ok) { console.error(JSON.stringify(b).slice(0, 400)); process.exit(1); }' "$WORK/body" \
  && ok "describe body (versions, fragments, live/physical rows, deletions)" || bad "describe body"
expect "describe pinned" 200 '"version":2,"num_rows":500' "$URL/files/ds/multi_v21.lance?version=2"
expect "describe missing version" 404 'version 42 not found' "$URL/files/ds/multi_v21.lance?version=42"

# ---- Connect on dataset paths ---------------------------------------------------------------------
expect "connect Take dataset" 200 '"numRows"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v22.lance","ids":[0,749],"columns":["id","s"],"format":"FORMAT_PROTO"}'
grep -q '"749"' "$WORK/body" && ok "connect Take rows" || bad "connect Take rows" "$(head -c 300 "$WORK/body")"
expect "connect GetFile dataset" 200 '"numRows":"750"' "$URL/lanced.v1.RowService/GetFile" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v22.lance"}'
# version pins a dataset version (0 or absent = latest): multi_v21 had 500 rows at version 2.
expect "connect GetFile pinned version" 200 '"numRows":"500"' "$URL/lanced.v1.RowService/GetFile" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v21.lance","version":"2"}'
expect "connect Take pinned version" 200 '"numRows":"1"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v21.lance","ids":[499],"columns":["id"],"format":"FORMAT_PROTO","version":2}'
expect "connect Take row past pinned version" 400 '"code":"out_of_range"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v21.lance","ids":[600],"version":2}'
expect "connect Take same row at latest" 200 '"numRows":"1"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v21.lance","ids":[600],"columns":["id"],"format":"FORMAT_PROTO","version":0}'
expect "connect Take missing version" 404 '"code":"not_found"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"ds/multi_v21.lance","ids":[0],"version":42}'
# Binary TakeRequest {ids: [499], version: 2} as a rows POST body: field 2 packed, field 5 varint.
printf '\x12\x02\xf3\x03\x28\x02' > "$WORK/take_v2.pb"
expect "rows protobuf body with version" 200 '"num_rows":1' "$URL/files/ds/multi_v21.lance/rows?format=json" -X POST \
  -H 'Content-Type: application/x-protobuf' --data-binary @"$WORK/take_v2.pb"
printf '\x12\x02\xd8\x04\x28\x02' > "$WORK/take_v2_600.pb"   # ids [600] at version 2
expect "rows protobuf body, row past version" 400 'out of range' "$URL/files/ds/multi_v21.lance/rows?format=json" -X POST \
  -H 'Content-Type: application/x-protobuf' --data-binary @"$WORK/take_v2_600.pb"
expect "connect Take damaged dataset" 500 '"code":"data_loss"' "$URL/lanced.v1.RowService/Take" -X POST \
  -H 'Content-Type: application/json' -d '{"path":"bad/torn.lance","ids":[0]}'

# ---- (c) errors ---------------------------------------------------------------------------------
expect "no manifests" 422 'no manifests' "$URL/files/bad/nomanifest.lance/rows?ids=0"
expect "torn manifest" 422 'torn write' "$URL/files/bad/torn.lance/rows?ids=0"
expect "torn manifest: older version" 200 '"num_rows":1' "$URL/files/bad/torn.lance/rows?ids=0&version=2"
truncate -s 100 "$ROOT/bad/writing.lance/_versions/3.manifest" # a writer mid-way through it
expect "manifest being written: the version before it is served" 200 '"num_rows":1' "$URL/files/bad/writing.lance/rows?ids=0"
expect "manifest being written: described as the version before" 200 '"version":2' "$URL/files/bad/writing.lance"
expect "field id missing from the data files: 422, the dataset is at fault" 422 'no field has id 9' "$URL/files/bad/badid.lance/rows?ids=0&columns=x"
expect "renamed columns served under their new names" 200 '"x":"row-0-1vuf","st":{"alpha":-427497}' \
  "$URL/files/ds/renamed_v22.lance/rows?ids=0&columns=x,st.alpha"
expect "missing data file" 422 'data file' "$URL/files/bad/nodata.lance/rows?ids=0"
expect "garbage deletion file" 422 'deletion file' "$URL/files/bad/baddel.lance/rows?ids=0"
expect "describe damaged" 422 'corrupt_file' "$URL/files/bad/baddel.lance"
expect "version 999" 404 'version 999 not found' "$URL/files/ds/multi_v21.lance/rows?ids=0&version=999"
expect "version 0" 400 'positive integer' "$URL/files/ds/multi_v21.lance/rows?ids=0&version=0"
expect "version letters: a tag" 404 "no tag 'x'" "$URL/files/ds/multi_v21.lance/rows?ids=0&version=x"
expect "version on a data file" 400 'applies to datasets' \
  "$URL/files/ds/multi_v21.lance/data/$(ls "$ROOT/ds/multi_v21.lance/data" | head -1)/rows?ids=0&version=1"
expect "a tag on a data file" 400 'applies to datasets' \
  "$URL/files/ds/multi_v21.lance/data/$(ls "$ROOT/ds/multi_v21.lance/data" | head -1)/rows?ids=0&version=first"
expect "dataset row out of range" 400 'out_of_range' "$URL/files/ds/deletions_v21.lance/rows?ids=0,1101"
expect "unknown column" 400 'nope' "$URL/files/ds/multi_v21.lance/rows?ids=0&columns=nope"
expect "directory without _versions" 404 '_versions' "$URL/files/plain/rows?ids=0"
expect "missing dataset" 404 '' "$URL/files/nope.lance/rows?ids=0"
expect "good dataset after errors" 200 '"num_rows":2' "$URL/files/ds/multi_v21.lance/rows?ids=0,1"
expect "healthz" 200 'serving' "$URL/healthz"

# ---- Arrow bodies and live versions (node) --------------------------------------------------------
if LANCED_REVALIDATE_MS=$REVALIDATE_MS node tests/integration/daemon_datasets.mjs "$URL" "$ROOT" > "$WORK/node.out" 2>&1; then
  ok "node: $(tail -1 "$WORK/node.out")"
else
  bad "node dataset checks" "$(tail -12 "$WORK/node.out")"
fi
healthy "node checks"

it_finish
