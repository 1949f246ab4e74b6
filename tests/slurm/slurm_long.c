/* A long MPI + OpenMP job for the batch-kill tests, with ground truth by
 * construction: rank r first touches (r+1) x PAGES fresh pages in region
 * "touch" (page-faults exact), prints "rank R looping" and then repeats
 * region "step" (OpenMP threads spin, then an Allreduce) until it is killed
 * or MAX_SECONDS pass (a safety net so a failed kill cannot hang the test).
 * usage: slurm_long PAGES [MAX_SECONDS] */
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void touch_pages(long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end("touch");
    munmap(p, (size_t)(pages * psz));
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long pages = argc > 1 ? atol(argv[1]) : 1000;
    double max_seconds = argc > 2 ? atof(argv[2]) : 300;

    touch_pages(pages * (rank + 1));
    printf("rank %d looping\n", rank);
    fflush(stdout);

    double start = now(), sum = 0;
    for (;;) {
        perfmark_region_begin("step");
        double local = 0;
#pragma omp parallel reduction(+ : local)
        {
            double t0 = now();
            while (now() - t0 < 0.02)  /* 20 ms of work per thread */
                local += 1;
        }
        MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        perfmark_region_end("step");
        /* Every rank takes the same decision: rank 0's clock, broadcast. */
        int stop = rank == 0 && now() - start > max_seconds;
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (stop)
            break;
    }
    if (rank == 0)
        printf("slurm_long: not killed within %.0f s\n", max_seconds);
    MPI_Finalize();
    return 0;
}
