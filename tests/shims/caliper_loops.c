/* Caliper's C loop macros through perfmark's shim, beyond the examples:
 * a loop nested in another's iterations, a loop with no iteration, and the
 * same loops on several threads at once.
 *
 * usage: caliper_loops N M T   (T threads, each running the loops once)
 * Ground truth, on each of the T threads:
 *   outer 1, outer/iteration#outer N, .../iteration#outer/inner N,
 *   .../inner/iteration#inner N*M, .../iteration#inner/body N*M, empty 1. */
#include <caliper/cali.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int n, m;
static volatile double sink;

static void *loops(void *arg)
{
    (void)arg;
    CALI_MARK_LOOP_BEGIN(outer, "outer");
    for (int i = 0; i < n; i++) {
        CALI_MARK_ITERATION_BEGIN(outer, i);
        CALI_MARK_LOOP_BEGIN(inner, "inner");
        for (int j = 0; j < m; j++) {
            CALI_MARK_ITERATION_BEGIN(inner, j);
            CALI_MARK_BEGIN("body");
            sink = sink + i * j;
            CALI_MARK_END("body");
            CALI_MARK_ITERATION_END(inner);
        }
        CALI_MARK_LOOP_END(inner);
        CALI_MARK_ITERATION_END(outer);
    }
    CALI_MARK_LOOP_END(outer);

    CALI_MARK_LOOP_BEGIN(empty, "empty");
    for (int k = 0; k < n - n; k++) {
        CALI_MARK_ITERATION_BEGIN(empty, k);
        CALI_MARK_ITERATION_END(empty);
    }
    CALI_MARK_LOOP_END(empty);
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 5;
    m = argc > 2 ? atoi(argv[2]) : 3;
    int t = argc > 3 ? atoi(argv[3]) : 2;
    pthread_t th[64];
    if (t < 1 || t > 64)
        return 2;
    for (int i = 0; i < t; i++)
        if (pthread_create(&th[i], NULL, loops, NULL) != 0)
            return 1;
    for (int i = 0; i < t; i++)
        pthread_join(th[i], NULL);
    printf("caliper_loops: %d x %d on %d threads\n", n, m, t);
    return 0;
}
