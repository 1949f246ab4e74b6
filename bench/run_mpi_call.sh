#!/usr/bin/env bash
# bench/run_mpi_call.sh BUILD_DIR [ROUNDS CALLS] — what perfmark adds per MPI
# call, on Open MPI (mpirun) and on MPICH (mpiexec.mpich, where built): with
# libperfmark.so preloaded but not measuring (PERFMARK_ENABLE=0: the stub's
# jump only), with counters off (PERFMARK_EVENTS=none; target <= 60 ns over
# the PMPI floor) and with the sw group (about one region pair of the core).
# Each against the same call through PMPI_ in the same run. Figures only.
set -u
build=${1:?usage: $0 BUILD_DIR [ROUNDS CALLS]}
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$build/lib/libperfmark.so
for mpi in openmpi mpich; do
  case $mpi in
    openmpi) prog=$build/bin/bench_mpi_call; launch=(mpirun --oversubscribe -np 2) ;;
    mpich) prog=$build/bin/bench_mpi_call_mpich; launch=(mpiexec.mpich -n 2) ;;
  esac
  if [ ! -x "$prog" ] || ! command -v "${launch[0]}" >/dev/null; then
    echo "$mpi: not built here"; continue
  fi
  echo "== $mpi (${launch[*]})"
  if [ "$mpi" = openmpi ]; then
    "${launch[@]}" -x LD_PRELOAD="$lib" -x PERFMARK_ENABLE=0 "$prog" "$@" || exit 1
  else
    LD_PRELOAD=$lib PERFMARK_ENABLE=0 "${launch[@]}" "$prog" "$@" || exit 1
  fi
  for events in none sw; do
    "$build/bin/perfmark" run -q -e "$events" -o "$tmp/$mpi-$events.h5" -- \
      "${launch[@]}" "$prog" "$@" || exit 1
  done
done
