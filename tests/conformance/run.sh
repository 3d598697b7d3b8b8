#!/usr/bin/env bash
# Conformance: liblance against Lance's own answers, and lancectl's command-line contract.
#   (a) the Check binary test_conformance over tests/fixtures/index.json and the 100k-row
#       large fixture (generated once into $LARGE_DIR with node; skipped when node or
#       node_modules are missing);
#   (b) lancectl: take output equals the expected body, --format arrow framing, inspect
#       names layouts/encodings, exit codes for bad ids/columns/rows/files.
# Usage: BIN=bin BUILD=build tests/conformance/run.sh   (what `make conformance` runs).
# Env: LARGE_DIR (default build/fixtures-large), SKIP_LARGE=1, VERBOSE=1.
# Last line: "N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin}
BUILD=${BUILD:-build}
LARGE_DIR=${LARGE_DIR:-build/fixtures-large}
LANCECTL=$BIN/lancectl
CONF=$BUILD/tests/test_conformance
PASS=0 FAIL=0
WORK=$(mktemp -d /tmp/lnc-conformance.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

ok() { PASS=$((PASS + 1)); [[ -n ${VERBOSE:-} ]] && echo "ok   $1"; return 0; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $1${2:+: $2}"; return 0; }

# ---- fixture lookup without python/jq: index.json is pretty-printed, one key per line ------
# fixture_field NAME KEY -> value of "KEY" in the entry of fixture NAME (string fields only)
fixture_field() {
  awk -v want="$1" -v key="$2" '
    /^   "name": "/ && !inentry { n = $0; sub(/.*"name": "/, "", n); sub(/".*/, "", n);
                              if (n == want) inentry = 1; next }
    inentry { pat = "\"" key "\": \""; i = index($0, pat)
              if (i) { v = substr($0, i + length(pat)); sub(/".*/, "", v); print v; exit } }
  ' tests/fixtures/index.json
}
# answer_line NAME N -> line N of the fixture's answers file
answer_line() { sed -n "${2}p" "$(fixture_field "$1" answers)"; }

# ---- (a) the Check conformance binary ---------------------------------------------------
if [[ ! -x $CONF ]]; then
  bad "conformance binary" "$CONF missing (make BUILD=$BUILD $CONF)"
else
  large_env=()
  if [[ -n ${SKIP_LARGE:-} ]]; then
    echo "SKIP large fixture (SKIP_LARGE set)"
  elif [[ -f $LARGE_DIR/index.json ]]; then
    large_env=(LNC_LARGE_FIXTURES="$LARGE_DIR")
  elif ! command -v node >/dev/null || [[ ! -d node_modules/@lancedb ]]; then
    echo "SKIP large fixture: node or node_modules/@lancedb missing (npm ci, then rerun)"
  else
    echo "generating the large fixture into $LARGE_DIR (node tests/fixtures/gen.mjs --large)..."
    if node tests/fixtures/gen.mjs --large "$LARGE_DIR" >"$WORK/gen.log" 2>&1 && [[ -f $LARGE_DIR/index.json ]]; then
      large_env=(LNC_LARGE_FIXTURES="$LARGE_DIR")
    else
      bad "generate large fixture" "$(tail -5 "$WORK/gen.log")"
    fi
  fi
  if env "${large_env[@]}" "$CONF"; then ok "test_conformance"; else bad "test_conformance" "see above"; fi
fi

# ---- (b) lancectl ---------------------------------------------------------------------------
if [[ ! -x $LANCECTL ]]; then
  bad "lancectl" "$LANCECTL missing"
  echo "$PASS passed, $FAIL failed"
  exit 1
fi

# run_ctl OUT ERR args... -> sets RC
run_ctl() {
  local out=$1 err=$2
  shift 2
  "$LANCECTL" "$@" >"$out" 2>"$err"
  RC=$?
}

# take_case NAME LINE: lancectl take of an answers line equals the expected body.
take_case() {
  local name=$1 n=$2 file line ids cols want
  file=$(fixture_field "$name" file)
  line=$(answer_line "$name" "$n")
  ids=$(cut -f1 <<<"$line" | tr -d '[] ')
  cols=$(cut -f2 <<<"$line")
  want=$(cut -f3- <<<"$line")
  local args=(take "$file" --ids "$ids")
  if [[ $cols != null ]]; then
    args+=(--columns "$(tr -d '[]"' <<<"$cols")")
  fi
  run_ctl "$WORK/out" "$WORK/err" "${args[@]}"
  if [[ $RC -ne 0 ]]; then
    bad "take $name line $n" "exit $RC: $(head -c 300 "$WORK/err")"
    return
  fi
  printf '%s\n' "$want" >"$WORK/want"
  # lancectl may or may not end the body with a newline; compare the body itself.
  if diff <(tr -d '\n' <"$WORK/out") <(tr -d '\n' <"$WORK/want") >/dev/null; then
    ok "take $name line $n"
  else
    bad "take $name line $n" "body differs: $(cmp <(tr -d '\n' <"$WORK/out") <(tr -d '\n' <"$WORK/want") 2>&1 | head -1)"
  fi
}

CORE=$(fixture_field core21 file)
EMB=$(fixture_field emb21 file)
ENC=$(fixture_field enc21 file)
NESTED=$(fixture_field nested21 file)
TYPES22=$(fixture_field types22 file)
NFSL21=$(fixture_field nfsl21 file)
NFSL20=$(fixture_field nfsl20 file)

# --blobs descriptors reaches a dataset's take as well as a file's (a dataset answered bytes).
ENCDS=$(fixture_field enc21 dataset)
for target in "$ENC" "$ENCDS"; do
  run_ctl "$WORK/out" "$WORK/err" take "$target" --ids 0 --columns blob --blobs descriptors
  if [[ $RC -eq 0 ]] && grep -q '"blob":{"position":0,"size":' "$WORK/out"; then ok "blob descriptors of $target"
  else bad "blob descriptors of $target" "exit $RC: $(head -c 200 "$WORK/out" "$WORK/err")"; fi
done

# A few cases: single ids, a page-boundary triple, duplicates, projections, nested, 2.2 types.
for n in 1 3 8; do take_case core21 "$n"; done
for n in 1 5; do take_case emb21 "$n"; done
for n in 2 10; do take_case nested21 "$n"; done
for n in 4; do take_case types22 "$n"; done
# File version 2.0 and dictionary columns through lancectl too (every case runs in test_conformance).
for n in 1 3 8; do take_case core20 "$n"; done
for n in 2 10; do take_case nested20 "$n"; done
for n in 4 12; do take_case types20 "$n"; done
for n in 5 20; do take_case enc20 "$n"; done
for n in 3 30; do take_case lists20 "$n"; done
for fx in dict20 dict21 dict22; do for n in 2 25; do take_case $fx "$n"; done; done
F20=$(fixture_field nested20 file)
if "$LANCECTL" inspect "$F20" > "$WORK/i20" 2>&1 && grep -q 'layout v2.0: List(' "$WORK/i20" && grep -q 'reads per row' "$WORK/i20"; then
  ok "inspect shows 2.0 encoding trees"
else bad "inspect 2.0" "$(head -c 300 "$WORK/i20")"; fi
# A duplicate-ids case and a projection case from core21, wherever they are in the file.
dup=$(grep -n '^\[5,5,5\]' "$(fixture_field core21 answers)" | head -1 | cut -d: -f1)
[[ -n $dup ]] && take_case core21 "$dup"
# A projection in non-schema order (few columns) and an all-columns (null) case.
proj=$(awk -F'\t' '$2 != "null" && split($2, a, ",") <= 4 { print NR; exit }' "$(fixture_field core21 answers)")
[[ -n $proj ]] && take_case core21 "$proj"
all=$(awk -F'\t' '$2 == "null" { print NR; exit }' "$(fixture_field core21 answers)")
[[ -n $all ]] && take_case core21 "$all"

# --format arrow: an IPC stream, first 4 bytes the continuation marker 0xFFFFFFFF, and it ends
# with the end-of-stream marker (continuation + zero length).
run_ctl "$WORK/arrow" "$WORK/err" take "$CORE" --ids 0,1,99999 --columns i32,s --format arrow
if [[ $RC -eq 0 ]] && [[ $(head -c 4 "$WORK/arrow" | od -An -tx1 | tr -d ' \n') == ffffffff ]]; then
  ok "take --format arrow starts with the continuation marker"
else
  bad "take --format arrow" "exit $RC, first bytes $(head -c 8 "$WORK/arrow" | od -An -tx1)"
fi
if [[ $(tail -c 8 "$WORK/arrow" | od -An -tx1 | tr -d ' \n') == ffffffff00000000 ]]; then
  ok "take --format arrow ends with the end-of-stream marker"
else
  bad "take --format arrow end" "last bytes $(tail -c 8 "$WORK/arrow" | od -An -tx1)"
fi

# inspect: names layouts and encodings (text and JSON).
run_ctl "$WORK/insp" "$WORK/err" inspect "$ENC"
if [[ $RC -eq 0 ]] && grep -q 'mini_block' "$WORK/insp" && grep -q 'zstd' "$WORK/insp" &&
   grep -q 'rows: 1000' "$WORK/insp" && grep -q 'version: 2.1' "$WORK/insp"; then
  ok "inspect enc21 (text)"
else
  bad "inspect enc21" "exit $RC: $(head -c 300 "$WORK/insp" "$WORK/err")"
fi
run_ctl "$WORK/insp" "$WORK/err" inspect "$EMB" --json
if [[ $RC -eq 0 ]] && grep -q '"full_zip"' "$WORK/insp" && grep -q '"num_rows":500' "$WORK/insp"; then
  ok "inspect emb21 --json names full_zip"
else
  bad "inspect emb21 --json" "exit $RC: $(head -c 300 "$WORK/insp" "$WORK/err")"
fi
# nfsl2x test what they claim: nested fixed-size lists with a validity layer per level, in
# mini-block and full-zip pages (2.1) and as Nullable inside FixedSizeList (2.0), four deep.
run_ctl "$WORK/insp" "$WORK/err" inspect "$NFSL21"
if [[ $RC -eq 0 ]] && grep -qF 'FixedSizeList(2, nullable, FixedSizeList(2, nullable, FixedSizeList(2, nullable, FixedSizeList(2, nullable, Flat(16)))))' "$WORK/insp" &&
   grep -A2 'column 8 fz:' "$WORK/insp" | grep -q 'full_zip' && ! grep -q UNSUPPORTED "$WORK/insp"; then
  ok "inspect nfsl21: nested nullable fixed-size lists, four deep, one full-zip"
else
  bad "inspect nfsl21" "exit $RC: $(grep -E 'column|layout|values|UNSUPP' "$WORK/insp" | head -c 600)"
fi
run_ctl "$WORK/insp" "$WORK/err" inspect "$NFSL20"
if [[ $RC -eq 0 ]] && grep -qF 'FixedSizeList(2, Nullable(some, Flat(1), FixedSizeList(3, Nullable(some, Flat(1), Flat(8))))' "$WORK/insp" &&
   ! grep -q UNSUPPORTED "$WORK/insp"; then
  ok "inspect nfsl20: nested nullable fixed-size lists in 2.0"
else
  bad "inspect nfsl20" "exit $RC: $(grep -E 'layout|UNSUPP' "$WORK/insp" | head -c 600)"
fi
run_ctl "$WORK/insp" "$WORK/err" inspect "$NESTED" --json
if [[ $RC -eq 0 ]] && grep -q '"layout"' "$WORK/insp"; then
  ok "inspect nested21 --json"
else
  bad "inspect nested21 --json" "exit $RC: $(head -c 300 "$WORK/err")"
fi
run_ctl "$WORK/insp" "$WORK/err" inspect "$TYPES22"
if [[ $RC -eq 0 ]] && grep -q 'version: 2.2' "$WORK/insp"; then
  ok "inspect types22 version 2.2"
else
  bad "inspect types22" "exit $RC: $(head -c 300 "$WORK/insp" "$WORK/err")"
fi

# expect_exit CODE LABEL [grep-pattern-for-stderr] -- lancectl args...
expect_exit() {
  local want=$1 label=$2 pat=$3
  shift 4
  run_ctl "$WORK/out" "$WORK/err" "$@"
  if [[ $RC -ne $want ]]; then
    bad "$label" "exit $RC, want $want: $(head -c 200 "$WORK/err")"
  elif [[ -n $pat ]] && ! grep -qiE -- "$pat" "$WORK/err"; then
    bad "$label" "stderr lacks /$pat/: $(head -c 200 "$WORK/err")"
  elif [[ $want -ne 0 && -s $WORK/out ]]; then
    bad "$label" "error but something on stdout: $(head -c 100 "$WORK/out")"
  else
    ok "$label"
  fi
}

expect_exit 1 "ids with letters" "" -- take "$CORE" --ids 1,a,3
expect_exit 1 "ids hex" "" -- take "$CORE" --ids 0x10
expect_exit 1 "negative id" "" -- take "$CORE" --ids -1
expect_exit 1 "negative id in list" "" -- take "$CORE" --ids 1,-2
expect_exit 1 "empty ids" "" -- take "$CORE" --ids ""
expect_exit 1 "trailing comma" "" -- take "$CORE" --ids 1,2,
expect_exit 1 "leading comma" "" -- take "$CORE" --ids ,1
expect_exit 1 "double comma" "" -- take "$CORE" --ids 1,,2
expect_exit 1 "blank in ids" "" -- take "$CORE" --ids "1, 2"
expect_exit 1 "id overflow 2^64" "" -- take "$CORE" --ids 18446744073709551616
expect_exit 1 "id overflow long" "" -- take "$CORE" --ids 99999999999999999999999
expect_exit 1 "missing --ids" "" -- take "$CORE"
expect_exit 1 "unknown column" "nope" -- take "$CORE" --ids 1 --columns i32,nope
expect_exit 1 "unknown nested column" "" -- take "$NESTED" --ids 1 --columns s.zz
expect_exit 1 "unknown format" "" -- take "$CORE" --ids 1 --format xml
expect_exit 1 "id past the last row" "100037" -- take "$CORE" --ids 0,100037
expect_exit 1 "id 2^64-1" "100037" -- take "$CORE" --ids 18446744073709551615
expect_exit 1 "unknown command" "" -- frobnicate "$CORE"
expect_exit 0 "largest valid id" "" -- take "$CORE" --ids 100036
expect_exit 2 "missing file" "" -- take "$WORK/nope.lance" --ids 1
expect_exit 2 "missing file (inspect)" "" -- inspect "$WORK/nope.lance"
printf 'not a lance file at all, just some text long enough for a footer\n' >"$WORK/text.lance"
expect_exit 2 "not a Lance file" "magic" -- take "$WORK/text.lance" --ids 0
expect_exit 2 "not a Lance file (inspect)" "magic" -- inspect "$WORK/text.lance"
: >"$WORK/empty.lance"
expect_exit 2 "empty file" "" -- inspect "$WORK/empty.lance"
head -c 1000 "$CORE" >"$WORK/trunc.lance"
expect_exit 2 "truncated file" "" -- take "$WORK/trunc.lance" --ids 0

echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
