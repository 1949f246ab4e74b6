/* sample_calltree — a call tree held constant for profiles of code built the
 * usual way (-O2, no frame pointers): inside region "tree", main calls a,
 * which spins n, calls b and returns; b spins n, calls leaf, which spins 2n.
 * By construction the CPU time, hence cpu-clock samples, splits
 *
 *   main;a          25 %   (a's own loop)
 *   main;a;b        25 %   (b's own loop)
 *   main;a;b;leaf   50 %
 *
 * so a is 100 % inclusive, b 75 %, leaf 50 %. Each call is followed by work
 * (no tail call), and noipa keeps gcc from cloning or inlining them.
 *
 * By iterations, that is; by CPU time, what samples measure, the loops can
 * differ by a few percent from run to run (code placement, a busy sibling
 * core). So each loop also measures its own thread CPU time, and the
 * program prints the split it measured at the end:
 *   calltree_cpu_ns a=A b=B leaf=L
 * the ground truth the tests compare the samples with.
 *
 * usage: sample_calltree MILLISECONDS [REGION]   (of CPU time)   (REGION: the region's name,
 * "tree" by default; tests/report/check_flame.py gives a hostile one) */
#include <perfmark.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static uint64_t cpu_a, cpu_b, cpu_leaf;

static uint64_t thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* n iterations, their CPU time added to *cpu */
#define SPIN(n, cpu)                                                                       \
    do {                                                                                   \
        uint64_t t0_ = thread_ns();                                                        \
        for (uint64_t i_ = 0; i_ < (n); i_++)                                              \
            sink += i_;                                                                    \
        *(cpu) += thread_ns() - t0_;                                                       \
    } while (0)

__attribute__((noipa)) void calltree_leaf(uint64_t n) { SPIN(2 * n, &cpu_leaf); }

__attribute__((noipa)) void calltree_b(uint64_t n)
{
    SPIN(n, &cpu_b);
    calltree_leaf(n);
    sink++;
}

__attribute__((noipa)) void calltree_a(uint64_t n)
{
    SPIN(n, &cpu_a);
    calltree_b(n);
    sink++;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    const char *name = argc > 2 ? argv[2] : "tree";
    perfmark_region_begin(name);
    /* MILLISECONDS of the thread's CPU time, not of the clock: as many
     * samples on a busy machine as on an idle one */
    /* calls of varying length (100k-300k iterations, xorshift): a call of a
     * fixed length lasts about as long as the 1 ms sampling period, and a
     * steady phase between the two made the samples favour one loop over
     * another (leaf at 37 % for its measured 49 % once, under load) */
    uint64_t x = 88172645463325252ull;
    for (uint64_t end = thread_ns() + (uint64_t)(ms * 1e6); thread_ns() < end;) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        calltree_a(100000 + x % 200001);
    }
    perfmark_region_end(name);
    printf("calltree_cpu_ns a=%llu b=%llu leaf=%llu\n", (unsigned long long)cpu_a,
           (unsigned long long)cpu_b, (unsigned long long)cpu_leaf);
    return 0;
}
