/* pm_mpi_which — which MPI libraries this process has loaded, and the ABI
 * each one speaks, found without MPI: from the loaded objects alone.
 *
 * An MPI library is an object that itself defines PMPI_Init. Its ABI comes
 * from a table of what the families export and how they name their
 * libraries (pm_mpi_which.c): Open MPI exports ompi_mpi_comm_world; the
 * MPICH ABI (MPICH, Intel MPI, Cray MPICH, MVAPICH) keeps soname major 12
 * (libmpi.so.12, libmpich.so.12, libmpi_cray.so.12); the MPI-5.0 standard
 * ABI is libmpi_abi.so. Used by the MPI dispatcher (which wrappers to load)
 * and by the HDF5 writer's loader (never load one MPI's HDF5 beside
 * another MPI). */
#ifndef PM_MPI_WHICH_H
#define PM_MPI_WHICH_H

#include "pm_wrapper_api.h"

enum pm_mpi_abi { PM_MPI_UNKNOWN = 0, PM_MPI_OPENMPI, PM_MPI_MPICH, PM_MPI_STANDARD };

#define PM_MPI_LIBS_MAX 4

struct pm_mpi_lib {
    enum pm_mpi_abi abi;
    char path[512];  /* as loaded */
    char file[128];  /* the real file's name, e.g. libmpich.so.12.2.2 */
};

struct pm_mpi_libs {
    int n;  /* how many MPI libraries are loaded (may exceed PM_MPI_LIBS_MAX) */
    struct pm_mpi_lib lib[PM_MPI_LIBS_MAX];
};

/* The MPI libraries loaded now, from the loaded objects' own symbol tables
 * (no dlopen: safe from a destructor). */
PM_WRAPPER_API void pm_mpi_which(struct pm_mpi_libs *out);

/* "openmpi", "mpich", "mpi-abi", or NULL for unknown: the name perfmark
 * uses for an ABI (wrapper libraries, PERFMARK_MPI, the file). */
const char *pm_mpi_abi_name(enum pm_mpi_abi abi);
/* The same from a name (PERFMARK_MPI's values): -1 when not one. */
int pm_mpi_abi_from_name(const char *name);
/* For people: "Open MPI", "an MPI of the MPICH ABI", ... */
PM_WRAPPER_API const char *pm_mpi_abi_label(enum pm_mpi_abi abi);

#endif
