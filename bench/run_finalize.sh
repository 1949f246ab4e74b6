#!/usr/bin/env bash
# bench/run_finalize.sh BUILD_DIR — time of the collective job-file write in
# MPI_Finalize (8 ranks x 4 threads x 200 regions x 4 events is the target:
# < 0.5 s), for 1, 2, 4 and 8 ranks, against MPI_Finalize without perfmark
# measured in the same run. Prints figures; never fails on timing.
set -u
build=${1:?usage: $0 BUILD_DIR}
bench=$build/bin/bench_finalize
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
mpirun=(mpirun --oversubscribe --bind-to none)
for np in 1 2 4 8; do
  floor=$("${mpirun[@]}" -np "$np" "$bench" 4 200 | sed -n 's/.*: \([0-9.]*\) s.*/\1/p')
  with=$("$build/bin/perfmark" run -q -e sw -o "$tmp/np$np.h5" -- \
         "${mpirun[@]}" -np "$np" "$bench" 4 200 | sed -n 's/.*: \([0-9.]*\) s.*/\1/p')
  [ -f "$tmp/np$np.h5" ] || { echo "np $np: no job file written" >&2; exit 1; }
  awk -v np="$np" -v f="$floor" -v w="$with" 'BEGIN {
    printf "finalize np %d x 4 threads x 200 regions x 4 events: %.3f s with perfmark, %.3f s without: perfmark %.3f s (target < 0.5 s)\n", np, w, f, w - f }'
done
