#!/usr/bin/env bash
# Debian's arm64 libraries that perfmark links against, unpacked into a
# sysroot for the aarch64 cross build (tests/aarch64/cross_build.sh).
# Unpacked, not installed: on Debian 12 the arm64 Open MPI and HDF5
# development packages cannot be installed beside the amd64 ones (apt would
# remove libopenmpi-dev, libhdf5-openmpi-dev and Slurm to make room).
#
# usage (root): bash scripts/arm64-sysroot.sh [DIR]   (default /opt/perfmark/arm64-sysroot)
set -euo pipefail
dest=${1:-/opt/perfmark/arm64-sysroot}
export DEBIAN_FRONTEND=noninteractive
# Leave the machine as found when this fails (a mirror without arm64 would
# make every later apt-get update fail): the architecture is removed again
# if this script added it and did not finish.
added=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  added=1
fi
finish() {
  local rc=$?
  rm -rf "${work:-/nonexistent}"
  if [ $rc -ne 0 ] && [ $added -eq 1 ]; then
    dpkg --remove-architecture arm64 && apt-get update -qq || true
  fi
  exit $rc
}
trap finish EXIT
apt-get update -qq
# The shared libraries perfmark needs at run time and everything they pull
# in (only library packages: no tools, no maintainer scripts run), then the
# development packages for the headers and the unversioned .so links.
runtime="libpfm4 libhwloc15 libopenmpi3 libhdf5-openmpi-103-1 libdw1 zlib1g libomp5-14 libc6
         libgcc-s1 libstdc++6"
dev="libpfm4-dev libhwloc-dev libopenmpi-dev libhdf5-openmpi-dev libdw-dev libelf-dev zlib1g-dev"
pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
         --no-replaces --no-enhances $(printf '%s:arm64 ' $runtime) 2>/dev/null |
       grep -E '^(lib|zlib1g|gcc-12-base)[^ ]*:arm64$' | sort -u)
work=$(mktemp -d)
(cd "$work" && chmod 777 . && apt-get download $pkgs $(printf '%s:arm64 ' $dev) >/dev/null)
rm -rf "$dest"
mkdir -p "$dest"
for deb in "$work"/*.deb; do
  dpkg-deb -x "$deb" "$dest"
done
# Absolute links (libz.so -> /lib/...) would point into the host: into the sysroot instead.
find "$dest" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
  ln -sfn "$dest$(readlink "$link")" "$link"
done
echo "perfmark: arm64 sysroot in $dest ($(ls "$work"/*.deb | wc -l) packages)"
