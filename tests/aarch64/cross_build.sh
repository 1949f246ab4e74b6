#!/usr/bin/env bash
# tests/aarch64/cross_build.sh SOURCE_DIR BUILD_DIR — perfmark built for
# aarch64 and linked against Debian's arm64 libraries (libpfm4, hwloc, Open
# MPI, parallel HDF5, elfutils: scripts/arm64-sysroot.sh unpacks them), then
# run under qemu-aarch64-static:
#  1. the whole project (runtime, MPI wrappers, writer, shims, perfmark,
#     perfmark-attach, selftest kernels, bench, examples; the tests are
#     native only) configures and builds with tests/aarch64/toolchain.cmake,
#     and every program and library it makes is an AArch64 ELF;
#  2. `perfmark report` of the arm64 build prints, byte for byte, what the
#     native build prints for report fixtures in every format, and `perfmark
#     diff` too (the same arithmetic on both: -ffp-contract=off);
#  3. the arm64 runtime measures a program (nested_regions, markers on two
#     threads) under qemu: the arm64 writer's file reads with the native
#     report, with the clock on CNTVCT_EL0 and the visits of every region
#     equal to a native run of the same program; qemu has no perf_event_open,
#     so the run falls back to time only and says so, and the program runs on.
# Exit 0, 1 on a failure, 77 (skip) without the cross compiler, qemu or the
# sysroot (the skip says how to make it).
set -u
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd)
sysroot=${PERFMARK_ARM64_SYSROOT:-/opt/perfmark/arm64-sysroot}
for tool in aarch64-linux-gnu-gcc qemu-aarch64-static aarch64-linux-gnu-readelf; do
  if ! command -v $tool >/dev/null; then
    echo "SKIP: $tool not installed (apt-get install gcc-aarch64-linux-gnu qemu-user-static)"
    exit 77
  fi
done
if [ ! -e "$sysroot/usr/lib/aarch64-linux-gnu/libhdf5_openmpi.so" ]; then
  echo "SKIP: no arm64 sysroot in $sysroot (as root: bash scripts/arm64-sysroot.sh; or set" \
       "PERFMARK_ARM64_SYSROOT)"
  exit 77
fi
py=/usr/bin/python3
native=$build/bin/perfmark
out=$build/aarch64-cross
lib=$sysroot/usr/lib/aarch64-linux-gnu
export PERFMARK_ARM64_SYSROOT=$sysroot
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$sysroot/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$sysroot
export QEMU_LD_PREFIX=$sysroot
fail=0

# 1. configure and build
rm -rf "$out"
if ! cmake -S "$src" -B "$out" -DCMAKE_TOOLCHAIN_FILE="$src/tests/aarch64/toolchain.cmake" \
     -DPERFMARK_BUILD_TESTS=OFF -DMPI_C_HEADER_DIR="$lib/openmpi/include" -DMPI_C_LIB_NAMES=mpi \
     -DMPI_mpi_LIBRARY="$lib/libmpi.so.40" -DHDF5_ROOT="$lib/hdf5/openmpi" >"$out.cfg.log" 2>&1; then
  echo "FAIL: the aarch64 build does not configure:"; tail -30 "$out.cfg.log"; exit 1
fi
if ! cmake --build "$out" -j2 >"$out.build.log" 2>&1; then
  echo "FAIL: the aarch64 build fails:"; grep -E "error|Error" "$out.build.log" | head -30; exit 1
fi
n=0
for f in "$out"/bin/* "$out"/lib/*.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  n=$((n + 1))
  aarch64-linux-gnu-readelf -h "$f" 2>/dev/null | grep -q "Machine:.*AArch64" ||
    { echo "FAIL: $f is not an AArch64 ELF"; fail=1; }
done
for want in bin/perfmark bin/perfmark-attach bin/nested_regions lib/libperfmark.so.0 \
            lib/libperfmark_writer.so lib/libperfmark-likwid.so.0 lib/libperfmark_mpi_openmpi.so; do
  [ -e "$out/$want" ] || { echo "FAIL: the aarch64 build made no $want"; fail=1; }
done
echo "built for aarch64: $n programs and libraries, linked against $sysroot"
arm=(qemu-aarch64-static "$out/bin/perfmark")

# 2. the arm64 report prints what the native one prints
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-aarch64-cross.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
variants="full ranks_shuffled omp topdown_spr topdown_zen4_l2 topdown_arm throttle"
for v in $variants; do
  "$py" "$src/tests/report/make_fixture.py" "$tmp/$v.h5" "$v" || { echo "FAIL: fixture $v"; exit 1; }
done
compared=0
same() { # LABEL, then the arguments of perfmark
  local label=$1; shift
  "${arm[@]}" "$@" >"$tmp/a.out" 2>&1; local ra=$?
  "$native" "$@" >"$tmp/n.out" 2>&1; local rn=$?
  compared=$((compared + 1))
  if [ $ra -ne $rn ] || ! cmp -s "$tmp/a.out" "$tmp/n.out"; then
    echo "FAIL: $label: the aarch64 perfmark (exit $ra) differs from the native one (exit $rn):"
    diff "$tmp/a.out" "$tmp/n.out" | head -8
    fail=1
  fi
}
cd "$tmp" || exit 1
for v in $variants; do
  for fmt in text json csv html; do
    same "report $v --format $fmt" report "$v.h5" --format $fmt
  done
  same "report $v --by rank" report "$v.h5" --by rank
done
same "diff full ranks_shuffled --format json" diff full.h5 ranks_shuffled.h5 --format json
same "diff throttle --threshold" diff throttle.h5 throttle.h5 --threshold 0 --format csv
same "--help" --help
echo "perfmark report/diff under qemu-aarch64: $compared outputs byte-identical to the native build's"

# 3. the arm64 runtime measures a program under qemu
clean_env=(env -u LD_PRELOAD $(env | sed -n 's/^\(PERFMARK_[A-Za-z0-9_]*\)=.*/-u \1/p'))
"${clean_env[@]}" PERFMARK_ENABLE=1 PERFMARK_OUTPUT="$tmp/arm.h5" PERFMARK_EVENTS=sw \
  timeout 300 qemu-aarch64-static "$out/bin/nested_regions" >"$tmp/arm.log" 2>&1
rc=$?
"${clean_env[@]}" PERFMARK_ENABLE=1 PERFMARK_OUTPUT="$tmp/x86.h5" PERFMARK_EVENTS=none \
  timeout 300 "$build/bin/nested_regions" >"$tmp/x86.log" 2>&1
if [ $rc -ne 0 ] || [ ! -f "$tmp/arm.h5" ]; then
  echo "FAIL: nested_regions under qemu-aarch64 with perfmark: exit $rc, file $([ -f "$tmp/arm.h5" ] &&
        echo written || echo missing)"; cat "$tmp/arm.log"; fail=1
else
  "$py" - "$tmp/arm.h5" "$tmp/x86.h5" "$tmp/arm.log" <<'PY' || fail=1
import sys
import h5py

arm, x86, log = sys.argv[1:]
bad = []


def visits(path):
    f = h5py.File(path, "r")
    paths = [p.decode() if isinstance(p, bytes) else p for p in f["regions"]["path"]]
    v = f["region/visits"][()].sum(axis=0)
    clock = f.attrs["clock"]
    return dict(zip(paths, (int(x) for x in v))), clock.decode() if isinstance(clock, bytes) else clock


va, clock = visits(arm)
vx, _ = visits(x86)
if va != vx:
    bad.append("visits per region differ: aarch64 %r, native %r" % (va, vx))
if clock != "cntvct":
    bad.append("clock %r, want cntvct (CNTVCT_EL0)" % clock)
text = open(log).read()
if "measuring time only" not in text or "checksum" not in text:
    bad.append("no fallback sentence, or the program did not finish:\n" + text[-600:])
for b in bad:
    print("FAIL: " + b)
print("nested_regions under qemu-aarch64: %d regions, visits equal to the native run, clock %s"
      % (len(va), clock))
sys.exit(1 if bad else 0)
PY
  "$native" report "$tmp/arm.h5" >/dev/null 2>&1 || { echo "FAIL: the native report cannot read the aarch64 file"; fail=1; }
fi
exit $fail
