#!/usr/bin/env bash
# bench/run_sample_cost.sh BUILD_DIR [ROUNDS] [CALLS] — what call paths cost
# a sampled program (issue 43): bench/sample_paths (-O2, no frame pointers)
# does fixed work under a shallow stack (depth 0) and under 24 frames of 256
# bytes (~6 KiB, most of a DWARF sample's 8 KiB copy), sampled at cpu-clock
# 1 ms (PERIOD=100us: 0.1 ms), interleaved in every round:
#   plain   not under perfmark
#   none    perfmark run -e none --sample cpu-clock@1ms (no callers)
#   fp      ... --sample-callchain=fp (the kernel walks frame pointers)
#   dwarf   ... --sample-callchain=dwarf (stacks copied, unwound by the drainer)
# Per mode and depth: the median over ROUNDS (default 5) of the work's wall
# and CPU time (the process's, perfmark's drainer included), and the median
# of each round's ratio against plain. Figures only.
set -u
build=${1:?usage: $0 BUILD_DIR [ROUNDS] [CALLS]}
rounds=${2:-5}
calls=${3:-200000}
period=${PERIOD:-1ms}  # PERIOD=100us: ten times the samples
prog=$build/bin/sample_paths
pm=$build/bin/perfmark
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
modes=(plain none fp dwarf)
declare -A wall cpu
one() {  # MODE DEPTH: "wall_ms cpu_ms"
  local out
  case $1 in
    plain) out=$("$prog" "$calls" "$2") ;;
    *) out=$("$pm" run -q -e none --sample "cpu-clock@$period" --sample-callchain="$1" \
               -o "$tmp/x.h5" -- "$prog" "$calls" "$2")
       rm -f "$tmp"/x*.h5 ;;
  esac
  echo "$out"
}
for r in $(seq 1 "$rounds"); do
  for depth in 0 24; do
    for m in "${modes[@]}"; do
      read -r w c < <(one "$m" "$depth")
      wall[$m,$depth]+="$w "
      cpu[$m,$depth]+="$c "
    done
  done
done
python3 - "$rounds" "${modes[@]}" <<PY
import statistics, sys
modes = sys.argv[2:]
wall = {$(for k in "${!wall[@]}"; do printf '"%s": "%s", ' "$k" "${wall[$k]}"; done)}
cpu = {$(for k in "${!cpu[@]}"; do printf '"%s": "%s", ' "$k" "${cpu[$k]}"; done)}
def vals(t, m, d): return [float(x) for x in t["%s,%d" % (m, d)].split()]
print("%-6s %5s %10s %10s %8s %8s" % ("mode", "depth", "wall ms", "cpu ms", "wall/pl", "cpu/pl"))
for d in (0, 24):
    pw, pc = vals(wall, "plain", d), vals(cpu, "plain", d)
    for m in modes:
        w, c = vals(wall, m, d), vals(cpu, m, d)
        rw = statistics.median(a / b for a, b in zip(w, pw))
        rc = statistics.median(a / b for a, b in zip(c, pc))
        print("%-6s %5d %10.1f %10.1f %8.3f %8.3f" % (m, d, statistics.median(w),
              statistics.median(c), rw, rc))
PY
