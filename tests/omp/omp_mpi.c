/* An MPI + OpenMP program with ground truth by construction, built with
 * clang (libomp: OMPT) and with gcc (libgomp) from this one source.
 *
 * usage: omp_mpi N [spin_ms]
 *   One parallel construct (team size from OMP_NUM_THREADS) in pm_team: on
 *   rank r, OpenMP thread t touches (t+1)*(r+1)*N fresh pages in region
 *   "touch", then spins spin_ms (default 0) of CPU time in region "spin".
 *   Every thread prints "thread RANK TID OMP_THREAD_NUM CPU_IN_TOUCH
 *   CPU_AFTER_SPIN" so the checker can map file rows to OpenMP threads and
 *   compare the CPUs they ran on with the placement in the file. */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <perfmark.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int touch_pages(long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)(pages * psz);
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    madvise(p, len, MADV_NOHUGEPAGE);  /* one fault per page */
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    int cpu = sched_getcpu();
    perfmark_region_end("touch");
    munmap(p, len);
    return cpu;
}

static void spin(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    perfmark_region_begin("spin");
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
    perfmark_region_end("spin");
}

__attribute__((noinline)) void pm_team(int rank, long n, long spin_ms)
{
#pragma omp parallel
    {
        int num = omp_get_thread_num();
        int cpu = touch_pages((num + 1) * (rank + 1) * n);
        spin(spin_ms);
        char line[128];
        int len = snprintf(line, sizeof line, "thread %d %d %d %d %d\n", rank, (int)gettid(),
                           num, cpu, sched_getcpu());
        if (write(1, line, (size_t)len) < 0)
            exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: omp_mpi N [spin_ms]\n");
        return 2;
    }
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pm_team(rank, atol(argv[1]), argc > 2 ? atol(argv[2]) : 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
