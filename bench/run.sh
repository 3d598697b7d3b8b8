#!/usr/bin/env bash
# make bench [BENCH_SCALE=small|full]: datasets (generated once into bench/data/<scale>/),
# every system on the same ids, then results.json, report.md and plots in
# bench/out/<timestamp>/. BIN (default bin) points at lanced, lancectl and lanced-load.
#   BENCH_SCALE=small bench/run.sh         # ~20k rows per dataset, < 15 minutes
#   BIN=build-bench/bin BENCH_SCALE=full bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${BENCH_SCALE:-small}
BIN=${BIN:-bin}
case $SCALE in small|full) ;; *) echo "bench: BENCH_SCALE must be small or full, not '$SCALE'" >&2; exit 1 ;; esac
for b in lanced lancectl lanced-load; do
  [[ -x $BIN/$b ]] || { echo "bench: $BIN/$b missing (make all, or set BIN=)" >&2; exit 1; }
done
command -v node >/dev/null || { echo "bench: node is required" >&2; exit 1; }
[[ -d node_modules/@lancedb/lancedb ]] || npm ci --no-audit --no-fund
for t in fio gnuplot nginx; do
  command -v $t >/dev/null || echo "bench: $t not found (apt-get install fio gnuplot-nox nginx-light); the cells that need it are skipped" >&2
done
OUT=${BENCH_OUT:-bench/out/$(date -u +%Y%m%dT%H%M%SZ)}
DATA=bench/data/$SCALE
mkdir -p "$OUT" "$DATA"
start=$(date +%s)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
echo "bench: datasets in $DATA" >&2
node bench/gen.mjs --scale "$SCALE" --out "$DATA" > /dev/null 2> >(grep -v 'No existing dataset' >&2)
node bench/run.mjs --scale "$SCALE" --bin "$BIN" --data "$DATA" --out "$OUT" &
pids+=($!)
wait "${pids[@]}"
pids=()
# BENCH_QUICK=1 (make test): every part runs once, briefly — a smoke test, not figures.
QUICK=${BENCH_QUICK:-0}
TORCH_SECONDS=$([[ $QUICK == 1 ]] && echo 2 || echo "${TORCH_SECONDS:-10}") BIN=$BIN \
  bench/torch-loader.sh "$OUT" "$DATA" || echo "bench: DataLoader figures failed" >&2
node bench/report.mjs "$OUT"
# A section of the report: bench/NAME.sh OUT DATA (BENCH_QUICK: 1 s cells, once), its
# NAME.md appended to the report; a failed section fails the run.
section() {
  local name=$1 what=$2 dur=$3 reps=$4
  if BIN=$BIN DURATION=$([[ $QUICK == 1 ]] && echo 1 || echo "$dur") REPS=$([[ $QUICK == 1 ]] && echo 1 || echo "$reps") \
      "bench/$name.sh" "$OUT" "$DATA" > "$OUT/$name.log" 2>&1; then
    cat "$OUT/$name.md" >> "$OUT/report.md"
  else
    echo "bench: the $what section failed (see $OUT/$name.log)" >&2
    crashed=1
  fi
}
# The training batch (issue 34): lanced beside nginx sending the same bytes, LanceDB, and the
# DataLoader beside lanced-load in the client's format.
section training training "${TRAINING_DURATION:-5}" "${TRAINING_REPS:-3}"
# Legacy files (issue 36) against 2.0 on the same data, in-process.
section legacy legacy "${LEGACY_DURATION:-3}" "${LEGACY_REPS:-3}"
# gRPC over HTTP/2 against Connect over HTTP/1.1 (issue 37), the same Take by h2load.
section grpc gRPC "${GRPC_DURATION:-3}" "${GRPC_REPS:-3}"
# The io_uring request path against fio and nginx (issue 13); 1 s cells at the small scale.
if BIN=$BIN DURATION=${URING_DURATION:-$([[ $SCALE == small ]] && echo 1 || echo 4)} \
    CONNS=$([[ $QUICK == 1 ]] && echo 4 || echo "${CONNS:-1 4 16 64}") \
    CPU_REPS=$([[ $QUICK == 1 ]] && echo 1 || echo "${CPU_REPS:-3}") \
    bench/uring-path.sh "$OUT" "$DATA" > "$OUT/uring-path.log" 2>&1; then
  cat "$OUT/uring-path.md" >> "$OUT/report.md"
else
  echo "bench: the io_uring path section failed (see $OUT/uring-path.log)" >&2
  # A daemon that died during its cells is a bug, not a noisy figure: the report says so and
  # the run (make test's smoke run too) fails.
  if grep -q '^died ' "$OUT/uring-path.txt" 2>/dev/null; then
    crashed=1
    cat "$OUT/uring-path.md" >> "$OUT/report.md"
  fi
fi
# Object storage (issue 15): LanceDB in-process and lanced (with and without its page cache) on
# s3rver with 20 ms per request; the small scalars table and the larger training one.
s3_ok=1
: > "$OUT/s3.md"
for ds in scalars $([[ $QUICK == 1 ]] || echo training); do
  [[ -d $DATA/$ds.lance ]] || continue
  mkdir -p "$OUT/s3-$ds"
  node --openssl-legacy-provider bench/s3.mjs --dataset "$DATA/$ds.lance" --bin "$BIN" --out "$OUT/s3-$ds" \
    --seconds "$([[ $QUICK == 1 ]] && echo 1 || echo "${S3_SECONDS:-10}")" $([[ $QUICK == 1 ]] && echo --batches 100) \
    > "$OUT/s3-$ds.log" 2>&1 && cat "$OUT/s3-$ds/s3.md" >> "$OUT/s3.md" || s3_ok=0
done
if [[ $s3_ok == 1 ]]; then cat "$OUT/s3.md" >> "$OUT/report.md"; else echo "bench: the object-store section failed (see $OUT/s3-*.log)" >&2; fi
if [[ $QUICK == 1 ]]; then PAIRS=1 DURATION=1 BIN=$BIN bench/loadgen-vs-wrk.sh "$OUT"; else BIN=$BIN bench/loadgen-vs-wrk.sh "$OUT"; fi ||
  echo "bench: load generator vs wrk comparison failed" >&2
echo "bench: $(( $(date +%s) - start )) s; report in $OUT/report.md" >&2
[[ ${crashed:-0} == 0 ]] || { echo "bench: lanced crashed or a section failed (io_uring path: $OUT/uring-path.log, training: $OUT/training.log, legacy: $OUT/legacy.log, gRPC: $OUT/grpc.log)" >&2; exit 1; }
