/* The loop bench/thread_create and bench/thread_floor time: N empty threads
 * created and joined one after the other; prints the mean time per thread
 * ("N threads: X us each", which bench/run_threads.sh reads). 0, or 1 if a
 * thread could not start. */
#ifndef PM_BENCH_THREAD_LOOP_H
#define PM_BENCH_THREAD_LOOP_H

#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void *thread_loop_nothing(void *arg) { return arg; }

static int thread_loop(long n)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_loop_nothing, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld threads: %.2f us each\n", n, ns / (double)n / 1e3);
    return 0;
}

#endif
