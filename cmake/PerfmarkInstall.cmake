# `cmake --install`: library, headers, Fortran module, CLI, job scripts, docs,
# a CMake package (find_package(perfmark) → perfmark::markers) and
# pkg-config files. Everything installed is relocatable (--prefix at install
# time works): the CLI finds libperfmark.so relative to itself, the CMake
# files and .pc files relative to themselves, the shims by $ORIGIN.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(perfmark_runtime PROPERTIES EXPORT_NAME markers)
add_library(perfmark::markers ALIAS perfmark_runtime)
target_include_directories(perfmark_runtime PUBLIC
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Every installed binary has the same RUNPATH in the build tree as installed.
# Where CMake rewrites a RUNPATH at install instead, it leaves a trailing ':'
# in the build tree's, and the dynamic loader reads that empty entry as the
# current directory: every library perfmark loads (~45 with HDF5) was first
# looked for, a dozen names each, in the job's working directory (a storm of
# failed opens on a parallel file system; a library dropped there would be
# loaded into the job). The entries hold in both trees: $ORIGIN for the
# libraries that link libperfmark.so (build/lib, <libdir>), both lib
# directories for the programs in <libexecdir>/perfmark (build/bin in the
# build tree), and the directories of what is linked from outside the project
# (MPI, HDF5).
set(pm_mpi_wrapper_targets)
foreach(abi ${PM_MPI_ABIS})
  list(APPEND pm_mpi_wrapper_targets perfmark_mpi_${abi})
endforeach()
set(pm_installed_binaries perfmark_runtime perfmark_writer perfmark_cli perfmark ${PM_UNWIND}
  ${pm_mpi_wrapper_targets} ${PM_WRITER_MPICH} ${PM_CLI_MPICH}
  perfmark_likwid perfmark_papi perfmark_caliper perfmark_fortran
  perfmark-selftest-kernels mpi_omp_demo perfmark-attach perfmark-hooks)
foreach(t ${pm_installed_binaries})
  if(NOT TARGET ${t})
    continue()
  endif()
  get_target_property(type ${t} TYPE)
  get_target_property(rpath ${t} INSTALL_RPATH)
  if(NOT rpath)
    set(rpath "")
  endif()
  if(type STREQUAL "EXECUTABLE" AND rpath)
    list(PREPEND rpath "$ORIGIN/../lib")  # build/bin -> build/lib, searched first there
  endif()
  set_target_properties(${t} PROPERTIES BUILD_WITH_INSTALL_RPATH ON
    INSTALL_RPATH_USE_LINK_PATH ON INSTALL_RPATH "${rpath}")
endforeach()

install(TARGETS perfmark_runtime EXPORT perfmarkTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The HDF5 writer and the DWARF unwinder the runtime loads from its own
# directory (runtime/file/pm_writer.h, runtime/sample/pm_unwind.h).
install(TARGETS perfmark_writer ${PM_WRITER_MPICH} perfmark_cli ${PM_CLI_MPICH} ${PM_UNWIND}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The MPI wrapper libraries, one per MPI ABI, which the runtime's MPI
# dispatcher loads from its own directory (wrappers/mpi/pm_mpi_dispatch.c).
if(pm_mpi_wrapper_targets)
  install(TARGETS ${pm_mpi_wrapper_targets} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS perfmark RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Programs the `perfmark` program execs from ../libexec/perfmark: `perfmark
# attach`'s (analysis/cli/perfmark.c) and `perfmark run`'s holder of the perf
# hooks (analysis/cli/run_hooks.c).
install(TARGETS perfmark-attach perfmark-hooks
  RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/perfmark)
install(FILES include/perfmark.h include/perfmark.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
  FILES_MATCHING PATTERN "*.md")

install(EXPORT perfmarkTargets NAMESPACE perfmark::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/perfmark)
if(TARGET perfmark_fortran)
  set(PM_HAVE_FORTRAN TRUE)
else()
  set(PM_HAVE_FORTRAN FALSE)
endif()
configure_package_config_file(cmake/perfmarkConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/perfmarkConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/perfmark)
# 0.x: a minor release may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/perfmarkConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/perfmarkConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/perfmarkConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/perfmark)

# pkg-config: prefix = the .pc file's directory, up as many levels as
# LIBDIR/pkgconfig is deep (lib/pkgconfig → ../.., lib/x86_64-linux-gnu/pkgconfig → ../../..).
file(RELATIVE_PATH PM_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" PM_PC_UP "${PM_PC_UP}")
function(pm_pkgconfig name description requires cflags libs)
  set(PM_PC_NAME ${name})
  set(PM_PC_DESCRIPTION ${description})
  set(PM_PC_REQUIRES ${requires})
  set(PM_PC_CFLAGS ${cflags})
  set(PM_PC_LIBS ${libs})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/perfmark.pc.in
    ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/${name}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
pm_pkgconfig(perfmark "perfmark region markers (perfmark.h, perfmark.hpp)"
  "" "-I\${includedir}" "-lperfmark")
pm_pkgconfig(perfmark-likwid "LIKWID marker API on perfmark regions"
  "perfmark" "-DLIKWID_PERFMON" "-lperfmark-likwid")
pm_pkgconfig(perfmark-papi "PAPI high-level API on perfmark regions"
  "perfmark" "" "-lperfmark-papi")
pm_pkgconfig(perfmark-caliper "Caliper C annotations on perfmark regions"
  "perfmark" "-I\${includedir}/perfmark/shims" "-lperfmark-caliper")
if(PM_HAVE_FORTRAN)
  pm_pkgconfig(perfmark-fortran "perfmark Fortran module (use perfmark)"
    "perfmark" "-I\${includedir}/perfmark/fortran" "-lperfmark_fortran")
endif()
