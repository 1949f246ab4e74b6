/* Every rank spins SECONDS on CPU (rank mod the CPUs it may use), between
 * MPI_Init and MPI_Finalize, and prints the CPU time the spin took
 * ("rank R spin_cpu_ns N"): ground truth for the job's time on the node.
 * usage: node_spin_mpi SECONDS */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double secs = argc > 1 ? atof(argv[1]) : 1;
    cpu_set_t may, one;
    sched_getaffinity(0, sizeof may, &may);
    int n = CPU_COUNT(&may), k = rank % (n ? n : 1), cpu = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &may) && k-- == 0) {
            cpu = c;
            break;
        }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    struct timespec t0, t, c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile uint64_t x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < secs);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    printf("rank %d spin_cpu_ns %lld\n", rank,
           (long long)(c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec));
    MPI_Finalize();
    return 0;
}
