/* A LIKWID-instrumented program (LIKWID's own likwid-marker.h, built with
 * -DLIKWID_PERFMON) linked against libperfmark-likwid.so instead of
 * liblikwid. Ground truth for N iterations and T threads, per thread:
 *   "compute" N, "compute/inner" 2N, "setup" 1.
 * It also checks what the shim answers through likwid_markerGetRegion:
 * the calling thread's count (N, then 0 after a reset) and a time > 0. */
#include <likwid-marker.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int iterations;
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    volatile double x = 0;
    LIKWID_MARKER_THREADINIT;
    LIKWID_MARKER_REGISTER("compute");
    for (int i = 0; i < iterations; i++) {
        LIKWID_MARKER_START("compute");
        for (int j = 0; j < 2; j++) {
            LIKWID_MARKER_START("inner");
            for (int k = 0; k < 20000; k++)
                x += k;
            LIKWID_MARKER_STOP("inner");
        }
        LIKWID_MARKER_STOP("compute");
    }
    int nevents = 4, count = -1;
    double events[4], time = -1;
    LIKWID_MARKER_GET("compute", &nevents, events, &time, &count);
    int bad = count != iterations || !(time > 0) || nevents != 0;
    if (bad)
        fprintf(stderr, "likwid_app: GetRegion count %d time %g nevents %d, want %d, >0, 0\n",
                count, time, nevents, iterations);
    LIKWID_MARKER_RESET("compute");
    LIKWID_MARKER_GET("compute", &nevents, events, &time, &count);
    if (count != 0) {
        fprintf(stderr, "likwid_app: count %d after reset\n", count);
        bad = 1;
    }
    pthread_mutex_lock(&lock);
    failures += bad;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    iterations = argc > 1 ? atoi(argv[1]) : 50;
    int nthreads = argc > 2 ? atoi(argv[2]) : 2;
    LIKWID_MARKER_INIT;
    pthread_t t[64];
    for (int i = 0; i < nthreads && i < 64; i++) {
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 2;
    }
    for (int i = 0; i < nthreads && i < 64; i++)
        pthread_join(t[i], NULL);
    LIKWID_MARKER_START("setup");
    LIKWID_MARKER_STOP("setup");
    LIKWID_MARKER_SWITCH;
    LIKWID_MARKER_CLOSE;
    printf("likwid_app: %d threads x %d iterations, %d failures\n", nthreads, iterations, failures);
    return failures ? 1 : 0;
}
