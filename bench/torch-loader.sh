#!/usr/bin/env bash
# bench/torch-loader.sh OUT DATA: PyTorch DataLoader(num_workers=2, batch_size=256) samples/s
# over the vectors and training datasets via lanced, protobuf tensors (lanced.torch) against
# the same loop fed by JSON rows; and lanced-load batch 100 on the 768-d vectors, protobuf
# against Arrow back to back. Writes OUT/torch.json for report.mjs. BIN as for run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1 DATA=$2 BIN=${BIN:-bin} PY=${PYTHON:-/usr/bin/python3} SECS=${TORCH_SECONDS:-10}
if ! "$PY" -c 'import torch, numpy, google.protobuf' 2>/dev/null; then
  echo "bench: torch, numpy or protobuf missing for $PY (make deps); DataLoader figures skipped" >&2
  exit 0
fi
# The integration tests' daemon starter (ephemeral port, killed on exit): sets URL.
ROOT=$DATA WORK_PREFIX=lanced-torch-bench
# shellcheck source=../tests/integration/lib.sh
source tests/integration/lib.sh
start_daemon "$WORK/lanced.log" || exit 1
url=$URL
vfile=$(node -e 'const m=require(process.argv[1]);console.log(m.datasets.find(d=>d.name==="vectors").file)' "$PWD/$DATA/manifest.json")
{
  echo '{"loader":['
  sep=""
  for spec in "vectors v" "training label,caption,embedding,image"; do
    read -r name cols <<<"$spec"
    for feed in arrow json; do
      printf '%s' "$sep"; sep=","
      "$PY" bench/torch_loader.py --url "$url" --path "$name.lance" --name "$name" --columns "$cols" \
        --feed "$feed" --seconds "$SECS"
    done
  done
  echo '],"tensor_vs_arrow":['
  sep=""
  for fmt in arrow proto arrow proto; do  # alternated: the machine's noise hits both
    printf '%s' "$sep"; sep=","
    "$BIN/lanced-load" --url "$url" --path "$vfile" --batch 100 --connections 4 --duration 5 \
      --format "$fmt" --quiet --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(JSON.stringify({format:process.argv[1],rows_per_s:r.rows_per_s,errors:r.errors.total}))})' "$fmt"
  done
  echo ']}'
} > "$OUT/torch.json.part" && mv "$OUT/torch.json.part" "$OUT/torch.json" # whole, or none: report.mjs reads it
echo "bench: DataLoader figures in $OUT/torch.json" >&2
