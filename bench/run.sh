#!/usr/bin/env bash
# bench/run.sh BUILD_DIR [--scale S] [--rounds R]
#
# Runs bench_region in both modes, each in its own process because the
# perfmark event set is fixed per process by PERFMARK_EVENTS, and prints one
# table of figures and ratios against floors measured in the same runs.
# Targets are not asserts: the exit status is 0 when everything ran, 77 when
# a mode was skipped because software perf events cannot be opened here, and
# 1 when something failed.
set -u

usage() { echo "usage: $0 BUILD_DIR [--scale S] [--rounds R]" >&2; exit 1; }

[ $# -ge 1 ] || usage
build=$1; shift
scale=1
rounds=21
while [ $# -gt 0 ]; do
  case $1 in
    --scale)  [ $# -ge 2 ] || usage; scale=$2; shift 2 ;;
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    *) usage ;;
  esac
done

bench=$build/bin/bench_region
if [ ! -x "$bench" ]; then
  echo "$0: $bench not found; build it: cmake --build $build --target bench_region" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

status=0
for mode in sw none; do
  out=$tmp/$mode.h5
  PERFMARK_ENABLE=1 PERFMARK_EVENTS=$mode PERFMARK_OUTPUT=$out PERFMARK_QUIET=1 PERFMARK_THROTTLE=off \
    "$bench" "$mode" "$scale" "$rounds" >"$tmp/$mode.txt" 2>"$tmp/$mode.err"
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "# $mode: skipped: $(cat "$tmp/$mode.err")"
    [ $status -eq 0 ] && status=77
    continue
  fi
  if [ $rc -ne 0 ]; then
    echo "$0: bench_region $mode failed (exit $rc):" >&2
    cat "$tmp/$mode.err" >&2
    status=1
    continue
  fi
  cat "$tmp/$mode.err" >&2
  # The run must also have produced its measurement file, or perfmark was
  # not really measuring what we timed.
  if [ ! -s "$out" ]; then
    echo "$0: bench_region $mode wrote no perfmark output ($out)" >&2
    status=1
  fi
  cat "$tmp/$mode.txt"
done

# Summary over the result lines (the ones that end with a verdict).
results=$(cat "$tmp"/*.txt 2>/dev/null | grep -E '(PASS|ABOVE TARGET)$')
total=$(printf '%s\n' "$results" | grep -c -E '(PASS|ABOVE TARGET)$')
above=$(printf '%s\n' "$results" | grep -c 'ABOVE TARGET$')
echo "# $((total - above)) of $total within target${above:+, $above above target}"
exit $status
