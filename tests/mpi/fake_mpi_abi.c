/* A stand-in for an MPI whose ABI perfmark has no wrappers for: the MPI-5.0
 * standard ABI (libmpi_abi.so), which no Debian 12 MPI provides yet. One
 * process, the few functions mpi_abi_app calls, each with its PMPI_ twin as
 * a real MPI has (a library defining PMPI_Init is what perfmark takes for an
 * MPI). Handles are pointers, as in that ABI. Built as libmpi_abi.so.1. */
#include <string.h>

typedef struct pm_fake_handle *MPI_Comm, *MPI_Datatype, *MPI_Op;

static int pm_initialized;

int PMPI_Init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pm_initialized = 1;
    return 0;
}

int PMPI_Finalize(void)
{
    pm_initialized = 0;
    return 0;
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    (void)comm;
    *rank = 0;
    return pm_initialized ? 0 : 1;
}

/* One process: the sum of one rank's doubles is those doubles. */
int PMPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm)
{
    (void)type, (void)op, (void)comm;
    memcpy(out, in, (size_t)count * sizeof(double));
    return pm_initialized ? 0 : 1;
}

int MPI_Init(int *argc, char ***argv) __attribute__((alias("PMPI_Init")));
int MPI_Finalize(void) __attribute__((alias("PMPI_Finalize")));
int MPI_Comm_rank(MPI_Comm comm, int *rank) __attribute__((alias("PMPI_Comm_rank")));
int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) __attribute__((alias("PMPI_Allreduce")));
