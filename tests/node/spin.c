/* Spin for SECONDS of wall time on whatever CPU it is allowed (the node
 * tests pin it with sched_setaffinity: CPU, or -1 to stay unpinned).
 * usage: node_spin SECONDS [CPU] */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1;
    int cpu = argc > 2 ? atoi(argv[2]) : -1;
    if (cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            return 3;
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile uint64_t x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < secs);
    return 0;
}
