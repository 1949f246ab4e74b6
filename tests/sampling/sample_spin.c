/* Ground truth for sampling by construction (tests/sampling/check_sampling.py):
 *   spin: inside region "work", spin_light() burns 1 unit of this thread's
 *         CPU time and spin_heavy() 3 units; with cpu-clock sampling their
 *         samples are in the ratio 3.
 *   pages N: inside region "touch", touch_pages() writes N fresh pages, one
 *         page fault each; with page-faults@P, floor(N/P) or one more land there
 *         (the count runs on from the faults before the region).
 *   nested: region "outer" runs spin_light() and, inside region "inner",
 *         spin_heavy(): outer holds all samples, only the light ones its own.
 *   omp: like spin on every OpenMP thread, inside "work" on each.
 *   ompbody: inside region "body", every OpenMP thread spins UNIT_MS in the
 *         parallel construct's own body (the function the compiler outlines
 *         from main: gcc's main._omp_fn.0, clang's .omp_outlined.).
 *   mpi (mpi builds only): like spin on every rank.
 * usage: sample_spin spin|nested|omp|ompbody|mpi UNIT_MS [HEAVY_FACTOR] | pages N
 * (HEAVY_FACTOR: spin_heavy's units, 3 by default). */
#include "../fresh_pages.h"

#include <perfmark.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SAMPLE_SPIN_OMP
#include <omp.h>
#endif
#ifdef SAMPLE_SPIN_MPI
#include <mpi.h>
#endif

static volatile uint64_t sink;
static double heavy_factor = 3; /* spin_heavy's units per spin_light's (diff case: 1) */

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Burn `ms` of this thread's CPU time in this function's own loop. The clock
 * is read every 10^5 steps (~0.1 ms): a thread's CPU clock is a system call,
 * and read every 2*10^4 its samples took 6 % from these functions on a KVM
 * guest, enough to pull spin_heavy's share visibly below 3/4. */
__attribute__((noinline)) static void spin_light(double ms)
{
    double end = cpu_ms() + ms;
    uint64_t x = sink;
    while (cpu_ms() < end)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

__attribute__((noinline)) static void spin_heavy(double ms)
{
    double end = cpu_ms() + heavy_factor * ms;
    uint64_t x = sink;
    while (cpu_ms() < end)
        for (int i = 0; i < 100000; i++)
            x = x * 2862933555777941757ull + 3037000493ull;
    sink = x;
}

/* One write per fresh page, here and not in a helper: each fault's
 * instruction is in this function. */
__attribute__((noinline)) static void touch_pages(struct fresh_pages *f, long n)
{
    for (long i = 0; i < n; i++)
        f->base[i * f->size] = 1;
}

__attribute__((noinline)) static void spin_work(double unit)
{
    perfmark_region_begin("work");
    spin_light(unit);
    spin_heavy(unit);
    perfmark_region_end("work");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "spin";
    double unit = argc > 2 ? atof(argv[2]) : 300;
    if (argc > 3)
        heavy_factor = atof(argv[3]);
    if (strcmp(mode, "spin") == 0) {
        spin_work(unit);
    } else if (strcmp(mode, "nested") == 0) {
        perfmark_region_begin("outer");
        spin_light(unit);
        perfmark_region_begin("inner");
        spin_heavy(unit);
        perfmark_region_end("inner");
        perfmark_region_end("outer");
    } else if (strcmp(mode, "pages") == 0) {
        long n = argc > 2 ? atol(argv[2]) : 100000;
        struct fresh_pages f;
        fresh_pages_init(&f, n);
        perfmark_region_begin("touch");
        touch_pages(&f, n);
        perfmark_region_end("touch");
#ifdef SAMPLE_SPIN_OMP
    } else if (strcmp(mode, "omp") == 0) {
#pragma omp parallel
        spin_work(unit);
    } else if (strcmp(mode, "ompbody") == 0) {
        perfmark_region_begin("body");
#pragma omp parallel
        {
            double end = cpu_ms() + unit;
            uint64_t x = sink;
            while (cpu_ms() < end)
                for (int i = 0; i < 100000; i++)
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
            sink = x;
        }
        perfmark_region_end("body");
#endif
#ifdef SAMPLE_SPIN_MPI
    } else if (strcmp(mode, "mpi") == 0) {
        MPI_Init(&argc, &argv);
        spin_work(unit);
        MPI_Finalize();
#endif
    } else {
        fprintf(stderr, "sample_spin: unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}
