/* The README demo: an MPI + OpenMP job. Each rank owns a slab of a 1-D
 * heat-diffusion grid; every step its OpenMP threads update the slab
 * ("compute"), then the rank swaps halo cells with its neighbours
 * ("halo", MPI_Sendrecv) and all ranks agree on the residual ("residual",
 * MPI_Allreduce). Rank 0 does extra work, so the report shows imbalance.
 * Run: perfmark run -- mpirun -np 2 ./mpi_omp_demo   (then perfmark report) */
#include <mpi.h>
#include <omp.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELLS (1 << 20)
#define STEPS 20

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    PERFMARK_REGION_BEGIN("setup");
    double *u = calloc(CELLS + 2, sizeof *u), *v = calloc(CELLS + 2, sizeof *v);
    for (int i = 1; i <= CELLS; i++)
        u[i] = (rank * CELLS + i) % 97;
    PERFMARK_REGION_END("setup");

    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double residual = 0;
    PERFMARK_REGION_BEGIN("solve");
    for (int step = 0; step < STEPS; step++) {
        double local = 0;
        int sweeps = rank == 0 ? 2 : 1;  /* rank 0 works twice as hard */
#pragma omp parallel reduction(+ : local)
        {
            PERFMARK_REGION_BEGIN("compute");
            for (int s = 0; s < sweeps; s++) {
#pragma omp for
                for (int i = 1; i <= CELLS; i++) {
                    v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
                    local += (v[i] - u[i]) * (v[i] - u[i]);
                }
            }
            PERFMARK_REGION_END("compute");
        }
        double *t = u;
        u = v;
        v = t;
        PERFMARK_REGION_BEGIN("halo");
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[CELLS + 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[CELLS], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        PERFMARK_REGION_END("halo");
        PERFMARK_REGION_BEGIN("residual");
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PERFMARK_REGION_END("residual");
    }
    PERFMARK_REGION_END("solve");
    if (rank == 0)
        printf("mpi_omp_demo: %d ranks x %d threads, residual %.6e after %d steps\n", size,
               omp_get_max_threads(), residual, STEPS);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
