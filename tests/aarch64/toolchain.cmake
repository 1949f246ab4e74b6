# Cross build for aarch64 with Debian's gcc-aarch64-linux-gnu against the
# arm64 libraries unpacked by scripts/arm64-sysroot.sh (tests/aarch64/cross_build.sh
# sets PERFMARK_ARM64_SYSROOT, PKG_CONFIG_LIBDIR and PKG_CONFIG_SYSROOT_DIR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(PM_SYSROOT "$ENV{PERFMARK_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${PM_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Build-time tools (schema.json, models.json) run under qemu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L "${PM_SYSROOT}")
# Debian's multiarch headers (hwloc's autogen/config.h), after the toolchain's own.
set(CMAKE_C_FLAGS_INIT "-idirafter ${PM_SYSROOT}/usr/include/aarch64-linux-gnu")
# The sysroot libraries' own dependencies, found at link time.
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT
    "-Wl,-rpath-link,${PM_SYSROOT}/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,${PM_SYSROOT}/lib/aarch64-linux-gnu")
endforeach()
# MPI from the given header directory and library: the host's mpicc would
# answer for the host.
set(MPI_SKIP_COMPILER_WRAPPER ON)
set(MPI_SKIP_GUESSING ON)
# No aarch64 Fortran compiler here: the Fortran module is left out.
set(CMAKE_Fortran_COMPILER "CMAKE_Fortran_COMPILER-NOTFOUND" CACHE FILEPATH "")
