#!/usr/bin/env bash
# CTest fuzz_mutants: damaged copies of job files perfmark itself writes, each
# through `perfmark report` in every format and `perfmark diff`
# (tests/fuzz/mutants.c says what each must do).
#
#   mutants.sh SOURCE_DIR BUILD_DIR N [SANITIZE]
#
# Seeds, made here and now: a real single-process run (nested_regions under
# `perfmark run -e sw`), a real 2-rank MPI job (mpi_omp_demo under mpirun),
# and the report fixture `full` (tests/report/make_fixture.py: every string
# kind, flags, messages). PERFMARK_READ_TIMEOUT=1 (unless set) bounds the
# mutants on which HDF5 loops: the guard, not CTest's timeout, must end them.
set -u
src=${1:?usage: mutants.sh SOURCE_DIR BUILD_DIR N [SANITIZE]} build=${2:?} n=${3:-400}
san=${4:-}
dir=$build/fuzz-mutants
pm=$build/bin/perfmark
rm -rf "$dir"
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
t0=$(date +%s.%N)
"$pm" run -q -e sw -o "$dir/seed-nested.h5" -- "$build/bin/nested_regions" >/dev/null ||
  { echo "cannot write the single-process seed"; exit 1; }
# Under a sanitizer build Open MPI (not instrumented) reports leaks of its
# own: those of making this one seed go elsewhere, never to the pass's reports.
if [ -n "$san" ]; then
  ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:log_path=$dir/mpi-seed-asan" \
    "$pm" run -q -e sw -o "$dir/seed-mpi.h5" -- mpirun -np 2 --oversubscribe \
    "$build/bin/mpi_omp_demo" >/dev/null
else
  "$pm" run -q -e sw -o "$dir/seed-mpi.h5" -- mpirun -np 2 --oversubscribe \
    "$build/bin/mpi_omp_demo" >/dev/null
fi || { echo "cannot write the MPI seed"; exit 1; }
/usr/bin/python3 "$src/tests/report/make_fixture.py" "$dir/seed-full.h5" full ||
  { echo "cannot write the fixture seed"; exit 1; }
echo "seeds written in $(echo "$(date +%s.%N) - $t0" | bc) s: $(cd "$dir" && ls -s seed-*.h5 | tr '\n' ' ')"
export PERFMARK_READ_TIMEOUT=${PERFMARK_READ_TIMEOUT:-1}
# Under ASan (tests/sanitize/run.sh) perfmark's own code is checked on every
# mutant; what libhdf5 (not instrumented, not ours) does on them is not a
# report: its crashes stay plain signals for the crash-isolating child to
# turn into a message, and its huge allocations from a corrupt size fail
# (NULL, as without ASan) instead of aborting; its memcpy of damaged ranges,
# seen by ASan's interceptor, is suppressed (asan-hdf5.supp says exactly what).
# A report whose first frame past the interceptor is inside libhdf5 (it
# freed or copied what its own damaged metadata pointed at) is HDF5's, said
# and not failed; any other report fails the test.
own=$dir/asan
if [ -n "$san" ]; then
  mkdir -p "$own"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allocator_may_return_null=1:suppressions=$src/tests/fuzz/asan-hdf5.supp:log_path=$own/asan"
fi
"$build/tests/fuzz_mutants" run "$pm" "$dir/out" "$n" "$dir"/seed-nested.h5 \
  "$dir"/seed-mpi.h5 "$dir"/seed-full.h5
rc=$?
hdf5=0
for r in "$own"/asan.*; do
  [ -e "$r" ] || continue
  if grep -m1 -E '^ +#1 ' "$r" | grep -q 'libhdf5'; then
    hdf5=$((hdf5 + 1))
  else
    echo "ASan report in perfmark's own code ($r):"; head -30 "$r"; rc=1
  fi
done
[ "$hdf5" -gt 0 ] && echo "$hdf5 ASan report(s) inside libhdf5 on damaged files (HDF5's, not perfmark's)"
exit $rc
