/* Time of perfmark's collective job-file write inside MPI_Finalize.
 * Each rank runs THREADS threads (main included) that each enter REGIONS
 * distinct regions; rank 0 prints how long MPI_Finalize took, which is
 * perfmark's write plus Open MPI's own finalize (measured separately by
 * running the same program without perfmark: the floor).
 * usage: bench_finalize THREADS REGIONS */
#include <mpi.h>
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int regions;

static void *enter_all(void *arg)
{
    char name[32];
    for (int r = 0; r < regions; r++) {
        snprintf(name, sizeof name, "region%03d", r);
        perfmark_region_begin(name);
        perfmark_region_end(name);
    }
    return arg;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    regions = argc > 2 ? atoi(argv[2]) : 200;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pthread_t th[64];
    for (int t = 1; t < threads && t < 64; t++)
        pthread_create(&th[t], NULL, enter_all, NULL);
    enter_all(NULL);
    for (int t = 1; t < threads && t < 64; t++)
        pthread_join(th[t], NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    MPI_Finalize();
    double t1 = now();
    if (rank == 0)
        printf("finalize %d ranks x %d threads x %d regions: %.3f s\n", size, threads,
               regions, t1 - t0);
    return 0;
}
