/* A small program with nested regions on two threads: the README demo.
 * Run it as `perfmark run -- ./nested_regions`, then `perfmark report`. */
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double stencil(double *a, size_t n, int sweeps)
{
    double sum = 0;
    for (int s = 0; s < sweeps; s++)
        for (size_t i = 1; i + 1 < n; i++) {
            a[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
            sum += a[i];
        }
    return sum;
}

static void *worker(void *arg)
{
    size_t n = 1 << 18;
    PERFMARK_REGION_BEGIN("worker");
    double *a = malloc(n * sizeof *a);
    PERFMARK_REGION_BEGIN("touch");
    memset(a, 1, n * sizeof *a);   /* 2 MiB of fresh pages: page-faults */
    PERFMARK_REGION_END("touch");
    PERFMARK_REGION_BEGIN("compute");
    *(double *)arg = stencil(a, n, 40);
    PERFMARK_REGION_END("compute");
    free(a);
    PERFMARK_REGION_END("worker");
    return NULL;
}

int main(void)
{
    size_t n = 1 << 20;
    PERFMARK_REGION_BEGIN("init");
    double *a = malloc(n * sizeof *a);
    memset(a, 0, n * sizeof *a);
    a[n / 2] = 1e6;
    PERFMARK_REGION_END("init");

    PERFMARK_REGION_BEGIN("solve");
    double total = 0;
    for (int it = 0; it < 5; it++) {
        PERFMARK_REGION_BEGIN("stencil");
        total += stencil(a, n, 4);
        PERFMARK_REGION_END("stencil");
        PERFMARK_REGION_BEGIN("io");
        usleep(2000);   /* waiting, not computing: task-clock << wall time */
        PERFMARK_REGION_END("io");
    }
    PERFMARK_REGION_END("solve");

    pthread_t th[2];
    double res[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, &res[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    printf("nested_regions: checksum %.3e (measured: %s)\n", total + res[0] + res[1],
           perfmark_active() ? "yes" : "no");
    free(a);
    return 0;
}
