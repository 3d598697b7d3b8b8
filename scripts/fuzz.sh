#!/usr/bin/env bash
# `make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGETS="fuzz_file ..."]`: every tests/fuzz/fuzz_*.c built
# with clang's libFuzzer and ASan/UBSan against liblance (build-fuzz/, instrumented for
# coverage), run N seconds each over its committed corpus. Inputs that add coverage are merged
# into tests/fuzz/corpus/<target>/ (commit them: CI replays them); a crash stops the run and
# is left in build-fuzz/crashes/<target>/. Prints executions and coverage per target.
# FUZZ_RUNS=N stops a target after N executions (within FUZZ_SECONDS). ASan records no
# allocation stacks and keeps a small quarantine here (FUZZ_ASAN_OPTIONS): that runs the file
# target ~1.5x faster; a crash found is replayed with full reports by `make fuzz-replay`.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60}
CLANG=${FUZZ_CC:-clang}
B=build-fuzz
command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG not found (apt-get install clang)" >&2; exit 1; }
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# The library, instrumented for coverage (fuzzer-no-link) and the sanitizers; clang's warnings
# differ from gcc's, so -Werror stays with the gcc builds.
make -s BUILD=$B LIBOUT=$B/lib BINOUT=$B/bin CC="$CLANG" OPT=-O1 \
  CFLAGS_BASE="-std=gnu11 -g -D_GNU_SOURCE -fPIC" SAN="-fsanitize=fuzzer-no-link $SAN" $B/lib/liblance.a
LIBS="$(pkg-config --libs libprotobuf-c libzstd liblz4 liburing libcurl) -lm -lpthread"
targets=${FUZZ_TARGETS:-$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)}
mkdir -p $B/fuzz $B/crashes
printf '%-16s %12s %10s %8s %s\n' target executions exec/s edges corpus
for t in $targets; do
  extra=()
  # The daemon's own parsers: their files and the daemon's protobuf code (Makefile: FUZZ_DAEMON_OBJS).
  [[ $t == fuzz_pbjson ]] && extra=(daemon/lanced/pbjson.c daemon/lanced/util.c daemon/lanced/log.c
                                    $B/gen/lanced/v1/lanced.pb-c.c $(pkg-config --cflags --libs jansson))
  if [[ $t == fuzz_request || $t == fuzz_grpc ]]; then
    mapfile -t daemon_srcs < <(ls daemon/lanced/*.c | grep -v '/main\.c$')
    extra=("${daemon_srcs[@]}" $B/gen/lanced/v1/lanced.pb-c.c $B/gen/grpc/health/v1/health.pb-c.c
           $(pkg-config --cflags --libs libnghttp2 jansson zlib libsystemd))
  fi
  "$CLANG" -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer $SAN -Ilib -I$B/gen \
    "tests/fuzz/$t.c" "${extra[@]}" $B/lib/liblance.a $LIBS -o "$B/fuzz/$t"
  mkdir -p "$B/corpus/$t" "$B/crashes/$t" "tests/fuzz/corpus/$t"
  log=$B/fuzz/$t.log
  ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS-malloc_context_size=0:quarantine_size_mb=16} \
  "$B/fuzz/$t" -max_total_time="$SECS" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -print_final_stats=1 -artifact_prefix="$B/crashes/$t/" \
    -rss_limit_mb=4096 "$B/corpus/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1 || {
    echo "fuzz: $t found a failure (see $log and $B/crashes/$t/)" >&2; tail -30 "$log" >&2; exit 1; }
  "$B/fuzz/$t" -merge=1 "tests/fuzz/corpus/$t" "$B/corpus/$t" > "$B/fuzz/$t.merge.log" 2>&1
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  printf '%-16s %12s %10s %8s %s\n' "$t" "$execs" "$rate" "${edges:-?}" "$(ls "tests/fuzz/corpus/$t" | wc -l) inputs"
done
