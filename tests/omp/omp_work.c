/* OpenMP programs with ground truth by construction, built with clang
 * (libomp: OMPT) and with gcc (libgomp: no OMPT) from this one source.
 * Each parallel construct sits in its own function so that its region name
 * (`omp parallel <function>+0x.. (N threads)` when linked with -rdynamic)
 * says which one it is. Every thread prints "thread TID OMP_THREAD_NUM
 * LEVEL" per construct, so the checker can map file rows to OpenMP threads.
 *
 * usage: omp_work pages N      4 threads; thread t touches (t+1)*N fresh
 *                              pages in region "touch", then an explicit
 *                              barrier and region "after"
 *        omp_work teams        num_threads 2 then 3: regions "two", "three"
 *        omp_work nested       2 x 2 threads, omp_set_max_active_levels(2):
 *                              "outer_work" in the outer construct,
 *                              "inner_work" in the inner one */
#define _GNU_SOURCE
#include <omp.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void say(void)
{
    /* One write per line: lines of different threads do not interleave. */
    char line[96];
    int n = snprintf(line, sizeof line, "thread %d %d %d\n", (int)gettid(),
                     omp_get_thread_num(), omp_get_level());
    if (write(1, line, (size_t)n) < 0)
        exit(1);
}

static void touch_pages(long pages)
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
    perfmark_region_end("touch");
    munmap(p, len);
}

NOINLINE void pm_pages(long n)
{
#pragma omp parallel num_threads(4)
    {
        say();
        touch_pages((omp_get_thread_num() + 1) * n);
#pragma omp barrier
        perfmark_region_begin("after");
        perfmark_region_end("after");
    }
}

NOINLINE void pm_two(void)
{
#pragma omp parallel num_threads(2)
    {
        say();
        perfmark_region_begin("two");
        perfmark_region_end("two");
    }
}

NOINLINE void pm_three(void)
{
#pragma omp parallel num_threads(3)
    {
        say();
        perfmark_region_begin("three");
        perfmark_region_end("three");
    }
}

NOINLINE void pm_inner(void)
{
#pragma omp parallel num_threads(2)
    {
        say();
        perfmark_region_begin("inner_work");
        perfmark_region_end("inner_work");
    }
}

NOINLINE void pm_outer(void)
{
#pragma omp parallel num_threads(2)
    {
        perfmark_region_begin("outer_work");
        perfmark_region_end("outer_work");
        pm_inner();
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "pages") == 0) {
        pm_pages(atol(argv[2]));
    } else if (argc >= 2 && strcmp(argv[1], "teams") == 0) {
        pm_two();
        pm_three();
    } else if (argc >= 2 && strcmp(argv[1], "nested") == 0) {
        omp_set_max_active_levels(2);
        pm_outer();
    } else {
        fprintf(stderr, "usage: omp_work pages N | teams | nested\n");
        return 2;
    }
    return 0;
}
