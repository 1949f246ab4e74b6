/* The one exported function of an MPI wrapper library (pm_mpi_abi.h):
 * the dispatcher in libperfmark.so asks for this library's wrappers. */
#include "pm_mpi.h"
#include "pm_mpi_abi.h"

/* From the generated pm_mpi_wrappers.c. */
extern const uint64_t pm_mpi_abi_key;
extern const int pm_mpi_abi_count;
extern const void *const pm_mpi_abi_fns[];

const struct pm_mpi_host *pm_mpi_host;

PM_EXPORT int pm_mpi_abi_attach(int version, uint64_t key, const struct pm_mpi_host *host,
                                struct pm_mpi_wrappers *out)
{
    /* A runtime and wrappers from two builds (or two tables) must not
     * meet: a slot would reach the wrong function. */
    if (version != PM_MPI_ABI_VERSION || key != pm_mpi_abi_key || !host || !out)
        return -1;
    pm_mpi_host = host;
    out->abi = PM_MPI_ABI;
    out->count = pm_mpi_abi_count;
    out->fns = pm_mpi_abi_fns;
    return 0;
}
