/*
 * report_mpi.c — perfmark report under mpirun: whether MPI is started, who
 * this rank is, and every rank's exit status from rank 0 (report_mpi.h).
 */
#include "model/report_mpi.h"

#include <mpi.h>

#include <stdlib.h>

static int pm_mpi_inited; /* by pm_report_mpi_init */
static int pm_mpi_me, pm_mpi_np = 1;

int pm_report_mpi_init(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"};
    int under = 0, already = 0;

    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        under |= getenv(vars[i]) != NULL;
    /* a plain `perfmark report` never starts MPI (singleton MPI_Init would
     * cost a second and may need a launcher) */
    if (!under)
        return 0;
    MPI_Initialized(&already);
    if (!already && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return 0;
    pm_mpi_inited = !already;
    MPI_Comm_rank(MPI_COMM_WORLD, &pm_mpi_me);
    MPI_Comm_size(MPI_COMM_WORLD, &pm_mpi_np);
    return 1;
}

int pm_report_mpi_rank(void)
{
    return pm_mpi_me;
}

int pm_report_mpi_size(void)
{
    return pm_mpi_np;
}

int pm_report_mpi_all(int ok)
{
    if (pm_mpi_np > 1)
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

int pm_report_mpi_end(int rc)
{
    int all = rc;

    if (pm_mpi_np > 1 || pm_mpi_inited) {
        /* every rank exits with rank 0's status: it alone knows the outcome */
        MPI_Bcast(&all, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (pm_mpi_inited)
            MPI_Finalize();
    }
    return all;
}
