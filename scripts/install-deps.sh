#!/usr/bin/env bash
# Debian 12 packages perfmark builds, tests and runs its demo with. Run as root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# likwid, libpapi-dev: only for the tools' real headers (likwid-marker.h, papi.h),
# which tests/shims compiles against to prove the shims compatible.
# slurm-wlm, munge: the private Slurm tests/slurm starts (their services do not start here).
# chromium: tests/report/check_html.py opens the HTML report in it, headless.
# valgrind: tests/sanitize/valgrind_report.sh runs `perfmark report` under memcheck.
# mpich, libmpich-dev, libhdf5-mpich-dev: the MPICH ABI beside Open MPI (its MPI
# wrapper library, its parallel HDF5 writer, and the tests run with mpiexec.mpich).
# python3-pandas, python3-pip: the Python package (python/) and its install test;
# python3-matplotlib: the worked session of docs/python.md, run by CTest python_docs.
# gcc-aarch64-linux-gnu, qemu-user-static: tests/aarch64 builds perfmark for arm64
# and runs its unit tests and the arm64 build under qemu (CTest label qemu).
apt-get install -y -qq \
  build-essential cmake pkg-config gfortran clang libomp-dev \
  libpfm4-dev libhwloc-dev hwloc libdw-dev \
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools zlib1g-dev \
  mpich libmpich-dev libhdf5-mpich-dev \
  python3-h5py python3-numpy python3-pandas python3-pip python3-matplotlib chromium \
  slurm-wlm munge \
  likwid libpapi-dev \
  valgrind \
  gcc-aarch64-linux-gnu qemu-user-static >/dev/null
# nodejs, npm and jsfive (npm): tests/readers reads perfmark's files with jsfive,
# a pure-JavaScript HDF5 reader, under node (CTest readers_jsfive; it skips
# without them). Each from apt only where missing: NodeSource's nodejs brings
# its own npm and conflicts with Debian's npm package. jsfive at a fixed version
# in a fixed prefix, where the test looks (PERFMARK_JSFIVE_DIR overrides).
command -v node >/dev/null || apt-get install -y -qq nodejs >/dev/null ||
  echo "perfmark: nodejs not installed: readers_jsfive will skip"
command -v npm >/dev/null || apt-get install -y -qq npm >/dev/null ||
  echo "perfmark: npm not installed: readers_jsfive will skip"
npm install --prefix /usr/local/lib/perfmark-node --no-audit --no-fund --save-exact --loglevel=error \
    jsfive@0.4.2 >/dev/null ||
  echo "perfmark: jsfive not installed (npm install failed): readers_jsfive will skip"
# Debian's arm64 libraries, unpacked for the aarch64 cross build (CTest
# aarch64_cross_build); without them that test skips and says why.
bash "$(dirname "$0")/arm64-sysroot.sh" ||
  echo "perfmark: no arm64 sysroot (scripts/arm64-sysroot.sh failed): aarch64_cross_build will skip"
echo "perfmark: build dependencies installed"
