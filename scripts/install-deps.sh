#!/usr/bin/env bash
# Debian 12 packages perfmark builds, tests and runs its demo with. Run as root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# likwid, libpapi-dev: only for the tools' real headers (likwid-marker.h, papi.h),
# which tests/shims compiles against to prove the shims compatible.
apt-get install -y -qq \
  build-essential cmake pkg-config gfortran clang libomp-dev \
  libpfm4-dev libhwloc-dev hwloc \
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools \
  python3-h5py python3-numpy \
  likwid libpapi-dev >/dev/null
echo "perfmark: build dependencies installed"
