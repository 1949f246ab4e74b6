/* MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort: the job's lifecycle. Init tells
 * the runtime who this rank is (and that this process is an application
 * rank); Finalize has perfmark write the job's file collectively before MPI
 * goes away (OMPT's own finalize would come too late); Abort saves the
 * aborting rank's data in its own file first. */
#include "pm_auto.h"

#include <mpi.h>

/* libperfmark.so hides everything by default: interposed MPI entry points
 * must be visible to take the application's calls. */
#define PM_EXPORT __attribute__((visibility("default")))

static void pm_mpi_identity(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    pm_auto_mpi_init(rank, size);
}

PM_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        pm_mpi_identity();
    return rc;
}

PM_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        pm_mpi_identity();
    return rc;
}

PM_EXPORT int MPI_Finalize(void)
{
    pm_auto_mpi_finalize();
    return PMPI_Finalize();
}

PM_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
    pm_auto_mpi_abort();
    return PMPI_Abort(comm, errorcode);
}
