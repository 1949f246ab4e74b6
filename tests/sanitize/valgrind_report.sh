#!/usr/bin/env bash
# valgrind memcheck of `perfmark report` (issue 8, point 2): zero errors and
# no definite leaks, on
#   - every fixture of tests/report/make_fixture.py, good and bad, and a few
#     randomly damaged copies, through tests/report/check_report.py (which
#     also checks every number of the output against h5py);
#   - real files written by `perfmark run`: a single process with threads,
#     the same sampled, with counts over time and node mode (where allowed;
#     also as HTML and through
#     perfmark diff), and, when mpirun is there, a 2-rank MPI job file;
# in every format (text, json, csv), to stdout and with -o.
#
#   valgrind_report.sh SOURCE_DIR BUILD_DIR C_COMPILER
# Exit 77 when valgrind is not installed.
set -u
src=${1:?usage: valgrind_report.sh SOURCE_DIR BUILD_DIR C_COMPILER}
build=${2:?} cc=${3:?}
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }

perfmark=$build/bin/perfmark
work=$build/valgrind-report
rm -rf "$work"
mkdir -p "$work"
# --error-exitcode: any error, or (with --leak-check=full) any definite leak,
# makes the process exit 99, which no perfmark command does by itself.
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --track-origins=yes --trace-children=no
    --suppressions="$src/tests/sanitize/hdf5-damaged.supp")

# The canary: valgrind must see a known use after free (built without
# sanitizers, which valgrind cannot run under).
"$cc" -g -O0 -pthread "$src/tests/sanitize/canary.c" -o "$work/canary" || exit 1
"${vg[@]}" "$work/canary" heap >/dev/null 2>&1
rc=$?
if [ "$rc" -ne 99 ]; then
  echo "valgrind_report: the canary's use after free gave exit $rc, not 99: valgrind is not checking"
  exit 1
fi

fail=0
t0=$(date +%s)
echo "== fixtures (check_report.py --fuzz 3 under valgrind)"
# valgrind's own lines go to a log per process, so that the report's stderr
# is what check_report.py judges: a damaged copy may crash libhdf5 in the
# report's child, which valgrind notes ("Process terminating with ... signal
# 11") and the parent reports in one line. Errors are judged from the logs.
/usr/bin/python3 "$src/tests/report/check_report.py" --fuzz 3 "${vg[@]}" \
  --log-file="$work/fixture.%p.vg" "$perfmark" report >"$work/fixtures.log" 2>&1 || fail=1
tail -5 "$work/fixtures.log"
# A child that libhdf5 crashed (the log says "Process terminating") leaks what
# it held when it died: only the errors before its end count.
errors=0
for log in "$work"/fixture.*.vg; do
  [ -e "$log" ] || continue
  if awk '/Process terminating with default action/ {exit} {print}' "$log" |
       grep -qE "Invalid (read|write|free)|uninitialised|Conditional jump|definitely lost|Mismatched|Syscall param|overlap"; then
    echo "FAIL: valgrind errors in perfmark report on the fixtures ($log):"
    head -40 "$log"
    errors=1
  fi
done
[ "$errors" -eq 0 ] || fail=1
t1=$(date +%s)
echo "   $((t1 - t0)) s"

echo "== real files from perfmark run"
env -u LD_PRELOAD "$perfmark" run -e sw -o "$work/threads.h5" -- "$build/bin/nested_regions" \
  >"$work/run.log" 2>&1 || { cat "$work/run.log"; echo "valgrind_report: the run failed"; exit 1; }
# sampling (names read with libdw) and counts over time: their readers too
env -u LD_PRELOAD "$perfmark" run -e sw --sample cpu-clock@1ms,page-faults@16 --interval 5ms --node \
  -o "$work/sampled.h5" -- "$build/bin/nested_regions" >>"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "valgrind_report: the sampled run failed"; exit 1; }
files=("$work/threads.h5" "$work/sampled.h5")
if command -v mpirun >/dev/null && [ -x "$build/bin/mpi_omp_demo" ]; then
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2 \
       "$perfmark" run -e sw -o "$work/job.h5" -- mpirun -np 2 --oversubscribe --bind-to none \
       "$build/bin/mpi_omp_demo" >>"$work/run.log" 2>&1; then
    files+=("$work/job.h5")
  else
    cat "$work/run.log"; echo "valgrind_report: the MPI job failed"; exit 1
  fi
else
  echo "   (no mpirun or mpi_omp_demo: no job file)"
fi
for f in "${files[@]}"; do
  for fmt in text json csv; do
    out=$work/$(basename "$f" .h5).$fmt
    "${vg[@]}" --log-file="$out.vg" "$perfmark" report "$f" --format "$fmt" >"$out" 2>"$out.err"
    rc=$?
    "${vg[@]}" --log-file="$out.o.vg" "$perfmark" report "$f" --format "$fmt" -o "$out.o" \
      >/dev/null 2>>"$out.err"
    rc2=$?
    if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ] || [ -s "$out.vg" ] || [ -s "$out.o.vg" ]; then
      echo "FAIL report $(basename "$f") --format $fmt: exit $rc / $rc2 (-o)"
      cat "$out.vg" "$out.o.vg" "$out.err" | head -60
      fail=1
    elif [ ! -s "$out" ] || ! cmp -s "$out" "$out.o"; then
      echo "FAIL report $(basename "$f") --format $fmt: empty, or stdout and -o differ"
      fail=1
    else
      echo "   ok: $(basename "$f") --format $fmt ($(wc -c <"$out") bytes, no valgrind errors)"
    fi
  done
done
# the HTML page and perfmark diff of a sampled file (the profile's and the
# series' renderers, the diff of profiles)
out=$work/sampled
"${vg[@]}" --log-file="$out.html.vg" "$perfmark" report "$work/sampled.h5" --format html \
  -o "$out.html" >/dev/null 2>"$out.html.err"
rc=$?
"${vg[@]}" --log-file="$out.diff.vg" "$perfmark" diff "$work/sampled.h5" "$work/sampled.h5" \
  --format json >"$out.diff" 2>"$out.diff.err"
rc2=$?
if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ] || [ -s "$out.html.vg" ] || [ -s "$out.diff.vg" ]; then
  echo "FAIL sampled.h5 html / diff: exit $rc / $rc2"
  cat "$out.html.vg" "$out.diff.vg" "$out.html.err" "$out.diff.err" | head -60
  fail=1
else
  echo "   ok: sampled.h5 --format html, diff (no valgrind errors)"
fi
echo "   $(( $(date +%s) - t1 )) s"
if [ "$fail" -ne 0 ]; then
  echo "valgrind_report: FAILED (logs in $work)"
  exit 1
fi
echo "valgrind_report: zero errors ($(( $(date +%s) - t0 )) s)"
