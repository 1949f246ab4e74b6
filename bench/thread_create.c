/* What starting a thread costs: N threads created and joined one after the
 * other, each doing nothing; prints the mean time per thread.
 * usage: thread_create [N] (default 100000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) != 0)
            return 1;
        pthread_join(t, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld threads: %.2f us each\n", n, ns / (double)n / 1e3);
    return 0;
}
