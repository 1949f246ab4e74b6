/* MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort for C: the job's
 * lifecycle (the Fortran twins are generated from mpi_functions.def and
 * share pm_mpi_glue.c's helpers, which keep errno). Init tells
 * the runtime who this rank is (and that this process is an application
 * rank); Finalize has perfmark write the job's file collectively before MPI
 * goes away (OMPT's own finalize would come too late); Abort saves the
 * aborting rank's data in its own file first. They take the slots of the
 * C symbols in the generated table (pm_mpi_abi.h). */
#include "pm_mpi.h"

#include <mpi.h>

int pm_w_MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        pm_mpi_initialized();
    return rc;
}

int pm_w_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        pm_mpi_initialized();
    return rc;
}

int pm_w_MPI_Finalize(void)
{
    pm_mpi_finalizing();
    return PMPI_Finalize();
}

int pm_w_MPI_Abort(MPI_Comm comm, int errorcode)
{
    pm_mpi_aborting();
    return PMPI_Abort(comm, errorcode);
}
