/* Kernels with known counts, for `perfmark selftest`. Each runs in its own
 * region and prints what it did, measured without perf_event, as
 * "truth KERNEL KEY=VALUE ...": the selftest compares perfmark's counts of
 * the region (and perf stat's) with it.
 *
 *   loop N      N iterations of a two-instruction loop (decrement, branch):
 *               2N instructions and N branches, plus the markers' own
 *   chase_large B L, chase_small B L
 *               L dependent loads over a random cycle of B bytes (one per
 *               64-byte line): B far beyond the LLC misses it nearly every
 *               load, B within L1D nearly never (after one warm pass)
 *   touch P     one write to each of P fresh pages: P page faults
 *   spin MS     busy for MS ms of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
 *   sleep N     N sleeps of 1 ms: N voluntary context switches
 *   hop N       N moves between two allowed CPUs: at least N migrations
 *
 * usage: perfmark-selftest-kernels KERNEL ARG... [KERNEL ARG...]... */
#define _GNU_SOURCE
#include <perfmark.h>

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void loop(long n)
{
    perfmark_region_begin("loop");
#if defined(__x86_64__)
    long c = n;
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(c) : : "cc");
#elif defined(__aarch64__)
    long c = n;
    __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(c) : : "cc");
#else
    for (volatile long c = n; c > 0; c--)
        ;
#endif
    perfmark_region_end("loop");
    printf("truth loop iterations=%ld instructions=%ld branches=%ld\n", n, 2 * n, n);
}

/* A random cycle over the lines of a buffer: each load's address depends on
 * the previous load, so neither the prefetcher nor out-of-order execution
 * hides a miss. */
static void chase(const char *region, size_t bytes, long loads)
{
    size_t lines = bytes / 64;
    char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t *order = malloc(lines * sizeof *order);
    if (buf == MAP_FAILED || !order || lines < 2) {
        printf("truth %s skipped=cannot-allocate-%zu-bytes\n", region, bytes);
        free(order);
        return;
    }
    for (size_t i = 0; i < lines; i++)
        order[i] = i;
    uint64_t x = 88172645463325252ull;  /* xorshift: the same cycle every run */
    for (size_t i = lines - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = (size_t)(x % (i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        *(void **)(buf + order[i] * 64) = buf + order[(i + 1) % lines] * 64;
    free(order);
    void *p = buf;
    for (size_t i = 0; i < lines; i++)  /* warm: pages faulted in, small sizes cached */
        p = *(void **)p;
    perfmark_region_begin(region);
    for (long i = 0; i < loads; i++)
        p = *(void *volatile *)p;
    perfmark_region_end(region);
    printf("truth %s bytes=%zu loads=%ld end=%p\n", region, bytes, loads, p);
    munmap(buf, bytes);
}

static void touch(long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        printf("truth touch skipped=cannot-map\n");
        return;
    }
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);  /* one fault per 4 KiB page */
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end("touch");
    munmap(p, (size_t)(pages * psz));
    printf("truth touch pages=%ld\n", pages);
}

static void spin(long ms)
{
    perfmark_region_begin("spin");
    uint64_t t0 = thread_cpu_ns(), t1;
    do
        t1 = thread_cpu_ns();
    while (t1 - t0 < (uint64_t)ms * 1000000u);
    perfmark_region_end("spin");
    printf("truth spin cpu_ns=%llu\n", (unsigned long long)(t1 - t0));
}

static void sleeps(long n)
{
    struct timespec ms = {0, 1000000};
    perfmark_region_begin("sleep");
    for (long i = 0; i < n; i++)
        nanosleep(&ms, NULL);
    perfmark_region_end("sleep");
    printf("truth sleep sleeps=%ld\n", n);
}

static void hop(long n)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) {
        printf("truth hop skipped=one-cpu-allowed\n");
        return;
    }
    int cpu[2], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &allowed))
            cpu[k++] = c;
    long moves = 0;
    perfmark_region_begin("hop");
    for (long i = 0; i < n; i++) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu[i % 2], &one);
        if (sched_setaffinity(0, sizeof one, &one) == 0 && sched_getcpu() == cpu[i % 2])
            moves++;
    }
    perfmark_region_end("hop");
    sched_setaffinity(0, sizeof allowed, &allowed);
    /* the first move may start where the thread already is */
    printf("truth hop moves=%ld cpus=%d,%d\n", moves > 0 ? moves - 1 : 0, cpu[0], cpu[1]);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i];
        long a = i + 1 < argc ? atol(argv[i + 1]) : 0;
        if (!strcmp(k, "loop") && a > 0)
            loop(a), i++;
        else if ((!strcmp(k, "chase_small") || !strcmp(k, "chase_large")) && i + 2 < argc)
            chase(k, (size_t)atol(argv[i + 1]), atol(argv[i + 2])), i += 2;
        else if (!strcmp(k, "touch") && a > 0)
            touch(a), i++;
        else if (!strcmp(k, "spin") && a > 0)
            spin(a), i++;
        else if (!strcmp(k, "sleep") && a > 0)
            sleeps(a), i++;
        else if (!strcmp(k, "hop") && a > 0)
            hop(a), i++;
        else {
            fprintf(stderr, "perfmark-selftest-kernels: bad arguments at '%s'\n", k);
            return 2;
        }
    }
    return 0;
}
