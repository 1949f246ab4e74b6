#!/bin/sh
# Report at scale (issue 6): aggregate a synthetic job file of
# RANKS x THREADS x REGIONS x EVENTS (default 1024 x 16 x 100 x 8) and print
# the time and peak RSS of `perfmark report` (every format, --by rank and
# thread), `perfmark diff` and the Python package's calls next to a floor
# measured in the same run on the same file: /usr/bin/python3 + h5py reading
# every /region and /thread dataset (reading and inflating them, nothing
# else). No threshold is asserted; the ratio is the figure.
#
# usage: bench/run_report_scale.sh BUILD_DIR [RANKS THREADS REGIONS EVENTS]
set -eu
build=${1:?usage: run_report_scale.sh BUILD_DIR [RANKS THREADS REGIONS EVENTS]}
ranks=${2:-1024} threads=${3:-16} regions=${4:-100} events=${5:-8}
gen=$build/bin/gen_synthetic
perfmark=$build/bin/perfmark
tmp=$(mktemp -d /tmp/pm-report-scale.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
file=$tmp/job.h5

t0=$(date +%s.%N)
"$gen" "$file" "$ranks" "$threads" "$regions" "$events"
t1=$(date +%s.%N)
echo "file: $ranks ranks x $threads threads x $regions regions x $events events," \
     "$(du -m "$file" | cut -f1) MB on disk, generated in $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"

# one timed command: "wall_s user_s peak_rss_kB" (the machine may be shared:
# user CPU time says what the work cost, wall time what it took)
measure() {
    /usr/bin/time -f "%e %U %M" -o "$tmp/time" "$@" > "$tmp/out"
    cat "$tmp/time"
}

# the floor: every cell dataset read (and inflated) by h5py, nothing else
floor=$(measure /usr/bin/python3 -c '
import sys, h5py
f = h5py.File(sys.argv[1], "r")
for n in ("visits", "wall_ns", "flags", "counts", "enabled_ns", "running_ns", "bytes",
          "bytes_unknown"):
    f["region/" + n][()]
for n in ("wall_ns", "counts", "enabled_ns", "running_ns"):
    f["thread/" + n][()]
' "$file")
echo "floor  h5py read of the cell datasets: $floor (wall s, user s, peak RSS kB)"
ratio() { # "wall user rss" of a run against the floor
    awk -v a="$1" -v f="$floor" 'BEGIN{split(a, x, " "); split(f, y, " ");
        printf "ratio to floor: wall %.2f, user %.2f", x[1] / y[1], x[2] / (y[2] > 0 ? y[2] : 0.01)}'
}
for fmt in json text csv html; do
    v=$(measure "$perfmark" report "$file" --format $fmt)
    cp "$tmp/out" "$tmp/serial.$fmt"
    echo "report --format $fmt: $v (wall s, user s, peak RSS kB) $(ratio "$v")"
done
for by in rank thread; do
    v=$(measure "$perfmark" report "$file" --by $by)
    echo "report --by $by: $v (wall s, user s, peak RSS kB) $(ratio "$v")"
done
# diff reads both files (here the same one twice) and reports each first in
# the crash-isolating child: about three reports' work
v=$(measure "$perfmark" diff "$file" "$file")
echo "diff FILE FILE: $v (wall s, user s, peak RSS kB) $(ratio "$v")"
# the Python package (python/perfmark) on the same file, against the same
# floor: its numbers are the report's, read a block of thread rows at a time
if [ -d "$build/python/perfmark" ]; then
    pyrun() { # one timed call of the package: what, python code on `run`
        what=$1; shift
        v=$(PYTHONPATH="$build/python" measure /usr/bin/python3 -c "
import sys, perfmark
run = perfmark.open(sys.argv[1])
$1
" "$file")
        echo "python $what: $v (wall s, user s, peak RSS kB) $(ratio "$v")"
    }
    pyrun "import only (numpy, pandas, h5py)" "pass"
    pyrun "summary()" "run.summary()"
    pyrun "summary() mpi() by_rank() threads()" \
        "run.summary(); run.mpi(); run.by_rank(); run.threads()"
    pyrun "iter_cells(), a block at a time" "sum(len(b) for b in run.iter_cells())"
    pyrun "diff(FILE, FILE)" "perfmark.diff(run, run)"
fi
# under mpirun: the same bytes, the blocks shared among the ranks (on a
# machine with fewer cores than ranks this shows the cost, not a gain)
if command -v mpirun > /dev/null; then
    for np in 1 2 4; do
        v=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMPI_MCA_mpi_yield_when_idle=1 measure mpirun -np $np --oversubscribe \
            --bind-to none "$perfmark" report "$file" --format json)
        same=$(cmp -s "$tmp/out" "$tmp/serial.json" && echo "same output" || echo "OUTPUT DIFFERS")
        echo "mpirun -np $np report --format json: $v (wall s, user s of rank 0 and" \
             "mpirun, peak RSS kB of one process) $same"
    done
fi
