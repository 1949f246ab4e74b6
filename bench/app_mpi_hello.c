/* app_mpi_hello — MPI_Init and MPI_Finalize and nothing between: what
 * starting and ending an MPI job costs, so that bench/run_app.sh can tell
 * perfmark's fixed cost per job (start, writer, the job's file) from what
 * it adds while an application runs. Prints "app_mpi_hello N ranks" on rank 0. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank = 0, size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("app_mpi_hello %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
