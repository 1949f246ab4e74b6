/* Ground truth: the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) across
 * region "spin", printed as "cputime_ns THREAD NS" for the checker.
 * usage: taskclock MILLISECONDS THREADS */
#define _GNU_SOURCE
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ms;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static long long cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *spin(void *arg)
{
    long id = (long)arg;
    volatile double x = 1;
    perfmark_region_begin("spin");
    long long start = cpu_ns();
    while (cpu_ns() - start < ms * 1000000LL)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    long long used = cpu_ns() - start;
    perfmark_region_end("spin");
    pthread_mutex_lock(&out_lock);
    printf("cputime_ns %ld %lld\n", id, used);
    fflush(stdout);
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    ms = atol(argv[1]);
    int threads = atoi(argv[2]);
    pthread_t th[64];
    for (long i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, spin, (void *)i);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return 0;
}
