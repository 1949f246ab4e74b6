#!/bin/bash
# Build the libFuzzer harness (clang, ASan + UBSan) in its own build
# directory and fuzz the report path, starting from tests/fuzz/corpus.
# usage: tests/fuzz/run_fuzzer.sh [SECONDS] [BUILD_DIR] [-- LIBFUZZER_ARGS...]
# New interesting inputs go to BUILD_DIR/fuzz-new (not into the repository:
# merge them by hand, see README.md); crashes, hangs and out-of-memory inputs
# to BUILD_DIR/fuzz-crashes. The run goes on after each of them (-fork=1
# -ignore_*): most are libhdf5's own, and the triage is done afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-600}
build=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift

flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=fuzzer-no-link"
CC=clang cmake -S "$root" -B "$build" -DPERFMARK_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build "$build" -j2 --target fuzz_report
mkdir -p "$build/fuzz-new" "$build/fuzz-crashes" "$build/fuzz-seeds"
# the corpus is stored gzipped (HDF5 files are mostly zeros)
for f in "$here"/corpus/*.gz; do
    gunzip -c "$f" > "$build/fuzz-seeds/$(basename "$f" .gz)"
done
# detect_leaks=0: HDF5 1.10 leaks on many error paths of hostile files, and
# the harness runs millions of them (leaks in our code: see README.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$build/tests/fuzz_report" "$build/fuzz-new" "$build/fuzz-seeds" \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$secs" -max_len=32768 -timeout=3 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -artifact_prefix="$build/fuzz-crashes/" "$@"
