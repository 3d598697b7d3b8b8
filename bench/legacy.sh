#!/usr/bin/env bash
# Legacy files (issue 36) against file version 2.0 on the same data: the bench's scalars,
# strings and lists tables written again by LanceDB's legacy writer (bench/gen.mjs --legacy,
# <name>01) beside their 2.0 copies (<name>20), read in-process by `lancectl bench`:
#   - cold: the single column, batch 1, 1 thread, O_DIRECT (reads per row and rows/s);
#   - warm: every column, batch 100, 1 thread, buffered with the file in the page cache.
# 2.0 and legacy alternate REPS times per cell (the shared machine's noise hits both); the
# report gives each pair's ratio and judges the median. Writes OUT/legacy.txt (raw lines) and
# a report section OUT/legacy.md. Usage: bench/legacy.sh OUT_DIR DATA_DIR
#   BIN (default bin), DURATION (s per cell, default 3), REPS (default 3)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/legacy.sh OUT_DIR DATA_DIR}
DATA=${2:?usage: bench/legacy.sh OUT_DIR DATA_DIR}
BIN=${BIN:-bin}
DURATION=${DURATION:-3}
REPS=${REPS:-3}
mkdir -p "$OUT"
node bench/gen.mjs --scale "$(node -e 'console.log(require(process.argv[1]).scale)' "$PWD/$DATA/manifest.json")" \
  --out "$DATA" --legacy > /dev/null 2> >(grep -v 'No existing dataset' >&2) || { echo "legacy: gen failed" >&2; exit 1; }
RAW=$OUT/legacy.txt
: > "$RAW"
# file_of MANIFEST NAME -> the data file; single_of MANIFEST NAME -> its single column
file_of() { node -e 'const m=require(process.argv[1]);console.log(m.datasets.find(d=>d.name===process.argv[2]).file)' "$PWD/$DATA/$1" "$2"; }
single_of() { node -e 'const m=require(process.argv[1]);console.log(m.datasets.find(d=>d.name===process.argv[2]).single_column)' "$PWD/$DATA/$1" "$2"; }
# cell VERSION BASE KIND FILE ARGS... -> one raw line: version base kind rows/s reads/row
cell() {
  local ver=$1 base=$2 kind=$3 file=$4
  shift 4
  local o
  o=$("$BIN/lancectl" bench "$DATA/$file" --seconds "$DURATION" "$@" 2>&1) || { echo "legacy: lancectl bench failed: $o" >&2; return 1; }
  echo "$ver $base $kind $(awk '/^rows\/s:/ {r=$2} /^reads\/row:/ {p=$2} END {print r, p}' <<<"$o")" >> "$RAW"
}
for base in scalars strings lists; do
  f20=$(file_of manifest.json "${base}20") f01=$(file_of manifest-legacy.json "${base}01")
  col=$(single_of manifest.json "${base}20")
  cat "$DATA/$f20" "$DATA/$f01" > /dev/null # the warm cells read from the page cache
  for _ in $(seq "$REPS"); do
    for v in 20 01; do
      f=$([[ $v == 20 ]] && echo "$f20" || echo "$f01")
      cell "$v" "$base" cold "$f" --columns "$col" --batch 1 --threads 1 --io direct || exit 1
      cell "$v" "$base" warm "$f" --batch 100 --threads 1 --io buffered || exit 1
    done
  done
done
# The report: per table and kind, the medians and the median of the pairs' ratios.
node - "$RAW" "$OUT/legacy.md" <<'EOF'
const fs = require('fs');
const [raw, md] = process.argv.slice(2);
const rows = fs.readFileSync(raw, 'utf8').trim().split('\n').map((l) => l.split(' '));
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };
const out = ['## Legacy files (0.2) against 2.0 on the same data (lancectl bench, in-process)', '',
  'Cold: the single column, batch 1, 1 thread, O_DIRECT. Warm: every column, batch 100, 1 thread, page cache.',
  '2.0 and legacy alternate per repetition; ratio = legacy / 2.0 per pair, median shown (expected: no worse than 2.0).', '',
  '| table | cell | 2.0 rows/s | legacy rows/s | reads/row 2.0 / legacy | legacy / 2.0 |', '|---|---|---|---|---|---|'];
for (const base of [...new Set(rows.map((r) => r[1]))]) for (const kind of ['cold', 'warm']) {
  const a = rows.filter((r) => r[1] === base && r[2] === kind && r[0] === '20');
  const b = rows.filter((r) => r[1] === base && r[2] === kind && r[0] === '01');
  const ratios = a.map((r, i) => (b[i] ? +b[i][3] / +r[3] : NaN)).filter((x) => x > 0);
  out.push(`| ${base} | ${kind} | ${med(a.map((r) => +r[3])).toFixed(0)} | ${med(b.map((r) => +r[3])).toFixed(0)} | ` +
    `${a[0]?.[4]} / ${b[0]?.[4]} | ${med(ratios).toFixed(2)} |`);
}
fs.writeFileSync(md, out.join('\n') + '\n');
console.log(out.join('\n'));
EOF
