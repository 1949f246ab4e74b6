/* pm_mpi_abi — the contract between the MPI stubs in libperfmark.so
 * (pm_mpi_stubs.S, pm_mpi_dispatch.c: no MPI) and an MPI wrapper library,
 * libperfmark_mpi_<abi>.so, built once per MPI ABI from the same table
 * (mpi_functions.def) against that MPI's mpi.h.
 *
 * The dispatcher finds which MPI the process loaded, loads the wrapper
 * library built for its ABI and calls its one exported function,
 * pm_mpi_abi_attach. That gives the wrapper of every symbol by slot (the
 * order gen_mpi_wrappers.py lists them in, checked by a key over the
 * names); a NULL slot is passed on to the MPI library's own entry point.
 * No MPI type crosses this interface. */
#ifndef PM_MPI_ABI_H
#define PM_MPI_ABI_H

#include <stdint.h>

#define PM_MPI_ABI_VERSION 1
#define PM_MPI_ABI_ENTRY "pm_mpi_abi_attach"

/* What libperfmark.so lends a wrapper library. */
struct pm_mpi_host {
    /* The definition of `name` that the program would reach without
     * perfmark (the next one after libperfmark.so, or in the MPI's own
     * libraries), or NULL. */
    void *(*next)(const char *name);
};

/* What a wrapper library gives. */
struct pm_mpi_wrappers {
    const char *abi;          /* "openmpi", "mpich" */
    int count;                /* slots */
    const void *const *fns;   /* fns[slot]: the wrapper, or NULL */
};

typedef int (*pm_mpi_abi_attach_fn)(int version, uint64_t key, const struct pm_mpi_host *host,
                                    struct pm_mpi_wrappers *out);

/* The stubs' side (generated pm_mpi_stub_names.c). */
extern const uint64_t pm_mpi_stub_key;
extern const int pm_mpi_stub_count;
extern const char *const pm_mpi_stub_names[];

#endif
