#!/usr/bin/env bash
# bench/run_threads.sh BUILD_DIR [ROUNDS] [N] — what a thread's start costs
# under perfmark (issue "Every thread"): bench/thread_create starts and joins
# N threads (default 10^5), plain and under each mode, interleaved in every
# round; the median of R rounds (default 5) per mode, and each mode's ratio
# against the plain run of the same round (median of the ratios):
#   preload    libperfmark.so preloaded, PERFMARK_ENABLE=0 (not measured)
#   none       perfmark run -e none: every thread's row from its start, no counters
#   sw         perfmark run -e sw: counted by the process set it inherits, its
#              totals the kernel's record at its exit (4 software events)
#   sw-own     perfmark run -e sw --threads own: and a counter set of its own
#   sw-marker  perfmark run -e sw --threads markers: only the process-wide
#              inherited set follows new threads (what perfmark did before)
#   perfstat   perf stat -e the sw events: the kernel's cost of following
#              every new thread with inherited counters, any tool's floor
#   k-inherit  bench/thread_floor: the same loop in a process that opened
#   k-stat     the kernel's side of sw itself, step by step (an inherited
#   k-record   group of the 4 events; inherit_stat; each thread's record at
#              its exit into a ring): sw's floor, without perfmark
# Figures only.
set -u
build=${1:?usage: $0 BUILD_DIR [ROUNDS] [N]}
rounds=${2:-5}
n=${3:-100000}
prog=$build/bin/thread_create
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pm=$build/bin/perfmark
sw=task-clock,page-faults,context-switches,cpu-migrations
modes=(plain preload none sw sw-own sw-marker perfstat k-inherit k-stat k-record)
declare -A runs
one() {  # MODE: microseconds per thread
  local out
  case $1 in
    plain) out=$("$prog" "$n") ;;
    preload) out=$(LD_PRELOAD=$build/lib/libperfmark.so PERFMARK_ENABLE=0 "$prog" "$n") ;;
    none) out=$("$pm" run -q -e none -o "$tmp/x.h5" -- "$prog" "$n"); rm -f "$tmp"/x*.h5 ;;
    sw) out=$("$pm" run -q -e sw -o "$tmp/x.h5" -- "$prog" "$n"); rm -f "$tmp"/x*.h5 ;;
    sw-own) out=$("$pm" run -q -e sw --threads own -o "$tmp/x.h5" -- "$prog" "$n"); rm -f "$tmp"/x*.h5 ;;
    sw-marker) out=$("$pm" run -q -e sw --threads markers -o "$tmp/x.h5" -- "$prog" "$n")
               rm -f "$tmp"/x*.h5 ;;
    perfstat) command -v perf >/dev/null || { echo "-"; return; }
              out=$(perf stat -x, -e "$sw" -o /dev/null "$prog" "$n" 2>/dev/null) ;;
    k-*) out=$("$build/bin/thread_floor" "${1#k-}" "$n") || { echo "-"; return; } ;;
  esac
  awk '{print $3}' <<<"$out"
}
for r in $(seq 1 "$rounds"); do
  for m in "${modes[@]}"; do runs[$m]+="$(one "$m") "; done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
plain=${runs[plain]}
echo "thread_create: $n threads started and joined, $rounds interleaved rounds (median)"
for m in "${modes[@]}"; do
  us=$(median <<<"${runs[$m]}")
  ratios=$(paste -d' ' <(tr ' ' '\n' <<<"${runs[$m]}" | grep -v '^$') \
                       <(tr ' ' '\n' <<<"$plain" | grep -v '^$') | awk '$1 != "-" {print $1/$2}')
  printf "  %-10s %8.2f us per thread  %s\n" "$m" "$us" \
    "$( [ "$m" = plain ] || printf 'ratio %.2f, +%.2f us' "$(median <<<"$ratios")" \
        "$(awk -v a="$us" -v b="$(median <<<"$plain")" 'BEGIN{print a-b}')")"
done
