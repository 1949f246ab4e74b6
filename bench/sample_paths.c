/* bench/sample_paths.c — a fixed amount of work under a stack of known
 * depth, for what call paths cost (bench/run_sample_cost.sh): DEPTH nested
 * frames of 256 bytes each, then CALLS calls down a three-deep call tree
 * (-O2, no frame pointers, as Debian builds). Prints the work's wall and
 * CPU milliseconds (the process's CPU: perfmark's drainer thread, which
 * unwinds the stacks, included).
 *
 * usage: sample_paths CALLS DEPTH */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noipa)) void paths_leaf(uint64_t n)
{
    for (uint64_t i = 0; i < 2 * n; i++)
        sink += i;
}

__attribute__((noipa)) void paths_mid(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        sink += i;
    paths_leaf(n);
    sink++;
}

__attribute__((noipa)) void paths_top(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        sink += i;
    paths_mid(n);
    sink++;
}

static void work(uint64_t calls)
{
    for (uint64_t c = 0; c < calls; c++)
        paths_top(2000);
}

/* DEPTH frames of 256 bytes above the work: the stack each sample copies. */
__attribute__((noipa)) void paths_nest(int depth, uint64_t calls)
{
    volatile char pad[240];
    memset((char *)pad, depth, sizeof pad);
    if (depth > 0)
        paths_nest(depth - 1, calls);
    else
        work(calls);
    sink += pad[7];
}

static double ms(const struct timespec *t) { return t->tv_sec * 1e3 + t->tv_nsec * 1e-6; }

static double cpu_ms(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

int main(int argc, char **argv)
{
    uint64_t calls = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    int depth = argc > 2 ? atoi(argv[2]) : 0;
    struct timespec a, b;
    double c0 = cpu_ms();
    clock_gettime(CLOCK_MONOTONIC, &a);
    paths_nest(depth, calls);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f %.3f\n", ms(&b) - ms(&a), cpu_ms() - c0);
    return 0;
}
