#!/usr/bin/env bash
# tests/aarch64/run.sh SOURCE_DIR BUILD_DIR — perfmark on aarch64, from an
# x86 machine, with Debian's cross compiler and qemu user mode:
#  1. every C source of the runtime, wrappers, analysis, selftest and shims
#     compiles for aarch64 with -Werror (the generated MPI stubs and each
#     MPI ABI's generated wrappers from BUILD_DIR too). Library headers (libpfm4, hwloc, Open MPI, HDF5) are the
#     host's, found after the cross compiler's own: a compile check, not a link;
#  2. the unit tests that need no perf_event are built static for aarch64 and
#     run under qemu-aarch64-static: the TopDown arithmetic and model tables,
#     CPU identity (MIDR decoding), the rdpmc seqlock reader, the name
#     comparison, and the region clock on CNTVCT_EL0.
# Exit 0, 1 on a failure, 77 (skip) without gcc-aarch64-linux-gnu or
# qemu-user-static.
set -u
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd)
cc=aarch64-linux-gnu-gcc
qemu=qemu-aarch64-static
for tool in $cc $qemu; do
  if ! command -v $tool >/dev/null; then
    echo "SKIP: $tool not installed (apt-get install gcc-aarch64-linux-gnu qemu-user-static)"
    exit 77
  fi
done
out=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-aarch64.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
flags=(-std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Werror
       -DPERFMARK_VERSION='"aarch64"' -DPERFMARK_REL_LIBDIR='"../lib"')
# runtime/ is folders by concern, its headers included by bare name
# (docs/design.md): every folder on the include path, and runtime/ itself
# ("job/pm_comm.h"), as PM_RUNTIME_INCLUDE_DIRS in CMakeLists.txt
rt_inc=()
while IFS= read -r d; do rt_inc+=(-I"$d"); done < <(find "$src/runtime" -type d | sort)
inc=(-I"$src/include" "${rt_inc[@]}" -I"$src/wrappers"
     -I"$src/wrappers/mpi" -I"$src/wrappers/srcline" -I"$build/wrappers" -I"$src/schema" -I"$src/selftest"
     -I"$src/shims/include")
# analysis/ is folders of layers (docs/design.md): every one on the include path
while IFS= read -r d; do inc+=(-I"$d"); done < <(find "$src/analysis" -type d | sort)
# host library headers, after the cross toolchain's own (never its libc's)
for d in /usr/include /usr/include/hdf5/openmpi /usr/lib/x86_64-linux-gnu/openmpi/include \
         /usr/include/x86_64-linux-gnu $(dirname /usr/lib/llvm-*/lib/clang/*/include/omp-tools.h 2>/dev/null | head -1); do
  [ -d "$d" ] && inc+=(-idirafter "$d")
done
fail=0
n=0
compile() {  # SOURCE [EXTRA FLAGS...]: one object for aarch64
  local f=$1; shift
  n=$((n + 1))
  if ! $cc "${flags[@]}" "$@" "${inc[@]}" -c "$f" -o "$out/obj_$n.o" 2>"$out/err"; then
    echo "FAIL: $f does not compile for aarch64:"; head -20 "$out/err"; fail=1
  fi
}
# The MPI stubs (generated assembly) and everything built without MPI.
for f in $(find "$src/runtime" -name '*.c' | sort) "$src"/wrappers/threads/*.c \
         "$src"/wrappers/gomp/*.c "$src"/wrappers/srcline/*.c \
         "$src"/wrappers/mpi/pm_mpi_dispatch.c "$build"/wrappers/*.c "$build"/wrappers/*.S \
         "$src"/schema/*.c $(find "$src/analysis" -name '*.c' | sort) "$src"/selftest/*.c \
         "$src"/shims/*.c; do
  [ -f "$f" ] && compile "$f"
done
# Each MPI wrapper library, against its own MPI's mpi.h.
for abi_dir in "$build"/wrappers/mpi_*; do
  [ -d "$abi_dir" ] || continue
  abi=${abi_dir##*/mpi_}
  mpi_inc=()
  [ "$abi" = mpich ] && mpi_inc=(-I/usr/include/x86_64-linux-gnu/mpich)
  for f in "$abi_dir"/*.c "$src"/wrappers/mpi/*.c; do
    [ "${f##*/}" = pm_mpi_dispatch.c ] && continue
    compile "$f" "${mpi_inc[@]}" -DPM_MPI_ABI="\"$abi\""
  done
done
echo "compiled $n sources for aarch64"

unit() {  # NAME SOURCES...
  local name=$1; shift
  if ! $cc "${flags[@]}" "${rt_inc[@]}" -I"$src/tests/unit" -static -o "$out/$name" "$@" \
       -lm -lpthread 2>"$out/err"; then
    echo "FAIL: $name does not build for aarch64:"; head -20 "$out/err"; fail=1; return
  fi
  aarch64-linux-gnu-readelf -h "$out/$name" | grep -q "Machine:.*AArch64" ||
    { echo "FAIL: $name is not an aarch64 binary"; fail=1; return; }
  if $qemu "$out/$name" >"$out/$name.log" 2>&1; then
    echo "qemu-aarch64: $(tail -1 "$out/$name.log")"
  else
    echo "FAIL: $name under qemu-aarch64:"; cat "$out/$name.log"; fail=1
  fi
}
rt=$src/runtime
unit test_topdown "$src/tests/topdown/test_topdown.c" "$rt/count/pm_topdown.c" "$rt/count/pm_cpu_models.c" \
  "$rt/count/pm_cpu_id.c" "$rt/count/pm_cpu_match.c"
unit test_cpu_id "$src/tests/unit/test_cpu_id.c" "$rt/count/pm_cpu_id.c" "$rt/count/pm_cpu_match.c" \
  "$rt/count/pm_cpu_models.c"
unit test_rdpmc "$src/tests/unit/test_rdpmc.c" "$rt/count/pm_rdpmc.c"
unit test_streq "$src/tests/unit/test_streq.c"
unit test_clock "$src/tests/unit/test_clock.c" "$rt/count/pm_clock.c"
unit test_call_ordinal "$src/tests/unit/test_call_ordinal.c" "$src/wrappers/srcline/pm_call_ordinal.c" \
  -I"$src/wrappers/srcline"
exit $fail
