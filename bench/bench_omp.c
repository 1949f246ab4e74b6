/* bench_omp — what perfmark costs an OpenMP program (built with clang, so
 * that libomp calls perfmark's OMPT tool). bench/run_omp.sh runs it.
 *
 * usage: bench_omp regions N   N empty parallel regions (team size from
 *                              OMP_NUM_THREADS) after one warm-up region;
 *                              prints "regions N NS_PER_REGION"
 *        bench_omp threads N   N threads, one after another, each timing its
 *                              first marker call (which opens its counter
 *                              sets) against its second; prints the median
 *                              and max extra cost of the first call, and the
 *                              median cost of creating+joining an empty
 *                              pthread (the floor) */
#define _GNU_SOURCE
#include <omp.h>
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile int sink;

__attribute__((noinline)) static void empty_regions(long n)
{
    for (long i = 0; i < n; i++) {
#pragma omp parallel
        {
            sink = 1;
        }
    }
}

struct start_cost {
    double first, second;
};

static void *first_marker(void *arg)
{
    struct start_cost *c = arg;
    double t0 = now_ns();
    perfmark_region_begin("thread start");
    perfmark_region_end("thread start");
    double t1 = now_ns();
    perfmark_region_begin("thread start");
    perfmark_region_end("thread start");
    double t2 = now_ns();
    c->first = t1 - t0;
    c->second = t2 - t1;
    return NULL;
}

static void *nothing(void *arg) { return arg; }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int threads(long n)
{
    double *extra = calloc((size_t)n, sizeof *extra), *floor = calloc((size_t)n, sizeof *floor);
    if (!extra || !floor)
        return 1;
    for (long i = 0; i < n; i++) {
        pthread_t th;
        struct start_cost c;
        if (pthread_create(&th, NULL, first_marker, &c) != 0)
            return 1;
        pthread_join(th, NULL);
        extra[i] = c.first - c.second;
        double t0 = now_ns();
        if (pthread_create(&th, NULL, nothing, NULL) != 0)
            return 1;
        pthread_join(th, NULL);
        floor[i] = now_ns() - t0;
    }
    qsort(extra, (size_t)n, sizeof *extra, cmp);
    qsort(floor, (size_t)n, sizeof *floor, cmp);
    printf("threads %ld start_median_ns %.0f start_max_ns %.0f create_join_median_ns %.0f\n", n,
           extra[n / 2], extra[n - 1], floor[n / 2]);
    free(extra);
    free(floor);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_omp regions|threads N\n");
        return 2;
    }
    long n = atol(argv[2]);
    if (strcmp(argv[1], "threads") == 0)
        return threads(n);
    empty_regions(1);  /* the team is created here, not timed */
    double t0 = now_ns();
    empty_regions(n);
    printf("regions %ld %.1f\n", n, (now_ns() - t0) / (double)n);
    return 0;
}
