#!/usr/bin/env bash
# bench/run_series.sh BUILD_DIR [SECONDS]
#
# What counts over time cost in the file (issue "Over time"): tests/phases
# (one thread alternating page writing and spinning) for SECONDS (default
# 36) under `perfmark run -e sw`, with and without --interval 1ms: 36 s at
# 1 ms are the 36,000 rows of an hour at 100 ms, stored as they would be
# (large datasets are chunked and compressed). The difference in file size
# is the series of one thread (and its process) for an hour at 100 ms;
# per rank with 16 threads, 16 times the thread rows. Also the memory the
# rows take in the process (PERFMARK_SERIES_MEMORY bounds it).
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [SECONDS]" >&2; exit 1; }
build=$(cd "$1" && pwd)
secs=${2:-36}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench-series.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
prog=$build/tests/phases
[ -x "$prog" ] || { echo "$0: $prog not built" >&2; exit 1; }
phases=$(( secs * 1000 / 500 ))
"$build/bin/perfmark" run -q -e sw -o "$tmp/plain.h5" -- "$prog" "$phases" 250 || exit 1
"$build/bin/perfmark" run -q -e sw --interval 1ms -o "$tmp/series.h5" -- "$prog" "$phases" 250 || exit 1
rows=$(/usr/bin/python3 -c "import h5py; print(len(h5py.File('$tmp/series.h5')['series/time_ns']))")
a=$(stat -c %s "$tmp/plain.h5"); b=$(stat -c %s "$tmp/series.h5")
awk -v a="$a" -v b="$b" -v r="$rows" -v s="$secs" 'BEGIN {
  per = (b - a) / r
  printf "%d thread rows in %d s at 1 ms: file %d -> %d bytes, %.1f bytes per row (with its process row)\n", r, s, a, b, per
  printf "an hour at 100 ms (36000 rows): %.2f MB per rank with 1 thread; ~%.1f MB with 16 threads\n", per * 36000 / 1e6, per * 36000 * 16 / 1e6
  printf "in memory: 24 + 8 x (E + 2G) bytes per row: 72 bytes with -e sw (4 events, 1 group)\n"
}'
