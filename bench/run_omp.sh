#!/usr/bin/env bash
# bench/run_omp.sh BUILD_DIR [--regions N] [--rounds R] [--threads T]
#
# What perfmark costs an OpenMP program (issue "OpenMP"), as ratios against
# floors measured in the same run. N empty parallel regions of T threads,
# same binary (bench_omp, clang + libomp), five ways, rounds alternating them
# so that drift hits all alike (medians shown):
#   plain   no perfmark, OMP_TOOL=disabled: libomp with no tool
#   null0   no perfmark, an OMPT tool that registers no callback at all
#           (libpm_null_tool.so, PM_NULL_TOOL_CALLBACKS=none): what libomp
#           charges for any tool being present
#   null    no perfmark, a do-nothing OMPT tool (libpm_null_tool.so) with
#           the callbacks perfmark registers: libomp's own OMPT machinery
#   off     perfmark run -e none, OMP_TOOL=disabled (perfmark's tool off)
#   tool    perfmark run -e none, the tool on: counters off
#   sw      perfmark run -e sw, the tool on
# The issue's target is tool/off <= 1.05. null0/plain is the floor no OMPT
# tool can go below on this libomp; null/plain adds the callbacks perfmark
# registers, empty; tool/null is perfmark's own part.
# Thread start: the extra cost of a thread's first marker call (it opens the
# thread's counter sets, sw group) against creating and joining an empty
# pthread; target < 1 ms per thread.
# Exit 0 when everything ran, 77 when bench_omp was not built (no clang).
set -u
usage() { echo "usage: $0 BUILD_DIR [--regions N] [--rounds R] [--threads T]" >&2; exit 1; }
[ $# -ge 1 ] || usage
build=$1; shift
regions=100000; rounds=7; threads=2
while [ $# -gt 0 ]; do
  case $1 in
    --regions) [ $# -ge 2 ] || usage; regions=$2; shift 2 ;;
    --rounds)  [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --threads) [ $# -ge 2 ] || usage; threads=$2; shift 2 ;;
    *) usage ;;
  esac
done
bench=$build/bin/bench_omp
perfmark=$build/bin/perfmark
if [ ! -x "$bench" ]; then
  echo "# bench_omp not built (needs clang with libomp): skipped"; exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench-omp.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Threads pinned one per core: an unpinned empty fork/join swings by 2x with
# where the scheduler puts the two threads, which drowns a 5% difference.
export OMP_PROC_BIND=close OMP_PLACES=cores
one() {  # one(label, events|"", omp_tool[, tool_library[, null_tool_callbacks]]) -> ns per region, appended to $tmp/label
  local out=$tmp/$1.$RANDOM$RANDOM.h5
  if [ -z "$2" ]; then  # without perfmark
    OMP_NUM_THREADS=$threads OMP_TOOL=$3 OMP_TOOL_LIBRARIES=${4:-} \
      PM_NULL_TOOL_CALLBACKS=${5:-} "$bench" regions "$regions" | awk '{print $3}' >>"$tmp/$1" || return 1
    return 0
  fi
  OMP_NUM_THREADS=$threads OMP_TOOL=$3 "$perfmark" run -q -e "$2" -o "$out" -- \
    "$bench" regions "$regions" | awk '{print $3}' >>"$tmp/$1" || return 1
  [ -s "$out" ] || { echo "$0: no perfmark file from the $1 run" >&2; return 1; }
  rm -f "$out"
}
null=$build/lib/libpm_null_tool.so
for ((r = 0; r < rounds; r++)); do
  one plain "" disabled || exit 1
  if [ -f "$null" ]; then
    one null0 "" enabled "$null" none && one null "" enabled "$null" || exit 1
  fi
  one off none disabled && one tool none enabled && one sw sw enabled || exit 1
done
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
median() { sort -g "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "$tmp/plain"); f=$(median "$tmp/off"); t=$(median "$tmp/tool"); s=$(median "$tmp/sw")
printf '%-58s %10s %8s %s\n' "empty parallel region ($threads threads, $regions x $rounds)" "ns" "ratio" "target"
printf '%-58s %10.1f %8s\n' "plain: no perfmark, OMP_TOOL=disabled" "$p" "1.00"
if [ -s "$tmp/null0" ]; then
  n0=$(median "$tmp/null0")
  printf '%-58s %10.1f %8.3f %s\n' "null0: no perfmark, an OMPT tool with no callbacks" "$n0" "$(div "$n0" "$p")" "(floor for any tool)"
fi
if [ -s "$tmp/null" ]; then
  n=$(median "$tmp/null")
  printf '%-58s %10.1f %8.3f %s\n' "null: no perfmark, a do-nothing OMPT tool" "$n" "$(div "$n" "$p")" "(libomp's OMPT cost)"
fi
printf '%-58s %10.1f %8.3f %s\n' "off: -e none, OMP_TOOL=disabled" "$f" "$(div "$f" "$p")" "vs plain"
printf '%-58s %10.1f %8.3f %s\n' "tool: -e none, OMPT tool on (counters off)" "$t" "$(div "$t" "$f")" "vs off: <= 1.05"
if [ -s "$tmp/null" ]; then
  printf '%-58s %10s %8.3f %s\n' "tool vs null (perfmark's own part)" "" "$(div "$t" "$n")" ""
fi
if [ -s "$tmp/null0" ]; then
  printf '%-58s %10s %8.3f %s\n' "tool vs null0 (perfmark over the any-tool floor)" "" "$(div "$t" "$n0")" ""
fi
printf '%-58s %10.1f %8.3f %s\n' "sw: -e sw, OMPT tool on" "$s" "$(div "$s" "$f")" "vs off (reported)"

out=$tmp/threads.h5
line=$("$perfmark" run -q -e sw -o "$out" -- "$bench" threads 200) || exit 1
set -- $line
printf '%-58s %10.0f %8.2f %s\n' "thread start, first marker call (sw), median" "$4" "$(div "$4" "$8")" "< 1 ms; ratio vs create+join"
printf '%-58s %10.0f %8s\n' "thread start, max of 200" "$6" ""
printf '%-58s %10.0f %8s\n' "floor: pthread create+join of an empty thread, median" "$8" ""
