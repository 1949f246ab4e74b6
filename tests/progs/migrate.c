/* Real enabled != running without a PMU. Run with PERFMARK_BIND_CPU=A so
 * every per-thread set counts only while the thread is on CPU A.
 *   "half":  SPIN ms on CPU A, then SPIN ms on CPU B → MULTIPLEXED (and MIGRATED)
 *   "away":  SPIN ms wholly on CPU B                 → NOT_COUNTED
 * A and B are two CPUs the process may run on (the checker takes them from
 * its affinity: they need not be 0 and 1). Prints the thread CPU time of
 * each phase for the checker.
 * usage: migrate SPIN_MS CPU_A CPU_B */
#define _GNU_SOURCE
#include <perfmark.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void go_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
    while (sched_getcpu() != cpu)
        sched_yield();
}

static long long spin(long ms)
{
    long long start = cpu_ns();
    volatile double x = 1;
    while (cpu_ns() - start < ms * 1000000LL)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    return cpu_ns() - start;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 50;
    int a = argc > 3 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 1;
    go_to(a);
    perfmark_region_begin("half");
    long long on0 = spin(ms);
    go_to(b);
    long long on1 = spin(ms);
    perfmark_region_end("half");
    perfmark_region_begin("away");
    long long away = spin(ms);
    perfmark_region_end("away");
    printf("half_on_cpu0_ns %lld\nhalf_on_cpu1_ns %lld\naway_ns %lld\n", on0, on1, away);
    return 0;
}
