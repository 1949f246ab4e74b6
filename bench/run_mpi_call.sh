#!/usr/bin/env bash
# bench/run_mpi_call.sh BUILD_DIR — what perfmark adds per MPI call, with
# counters off (PERFMARK_EVENTS=none; target <= 60 ns over the PMPI floor)
# and with the sw group (about one region pair of the core). Figures only.
set -u
build=${1:?usage: $0 BUILD_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for events in none sw; do
  "$build/bin/perfmark" run -q -e "$events" -o "$tmp/$events.h5" -- \
    mpirun --oversubscribe -np 2 "$build/bin/bench_mpi_call" "$@" || exit 1
done
