/* Threads that never call a marker, with work known by construction.
 *
 *   workers N PAGES MS [named|churn|linger|linger-region]
 *
 * main marks one region ("main_region") around starting N workers and
 * joining them. Worker k (1..N) first-touches k * PAGES pages and spins MS
 * ms of its own CPU time, then prints
 *   worker K tid TID pages P cputime_ns NS
 * (its CPU time by CLOCK_THREAD_CPUTIME_ID, after the work). `named`: each
 * worker names itself "helper-K" (pthread_setname_np) and a thread the main
 * thread starts names itself "keeper"; `churn`: a detached thread keeps
 * starting and ending short threads while main returns, so that threads end
 * while perfmark writes its file; `linger`: each worker, its work done and
 * printed, blocks until the process ends (still running at the write, never
 * in a region); `linger-region`: the same, but its spin is inside the
 * region "worker_spin" (its first), after it touched its pages. Exit status 3. */
#define _GNU_SOURCE
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long pages_each, spin_ms;
static int named, linger, spin_region;
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t said_cond = PTHREAD_COND_INITIALIZER;
static int said;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
    long k = (long)arg;
    if (named) {
        char name[16];
        snprintf(name, sizeof name, "helper-%ld", k);
        pthread_setname_np(pthread_self(), name);
    }
    long pages = k * pages_each, page = sysconf(_SC_PAGESIZE);
    char *mem = malloc((size_t)(pages * page));
    for (long i = 0; mem && i < pages; i++)
        mem[i * page] = 1;
    if (spin_region)
        perfmark_region_begin("worker_spin");
    uint64_t start = thread_cpu_ns();
    volatile uint64_t sink = 0;
    while (thread_cpu_ns() - start < (uint64_t)spin_ms * 1000000u)
        for (int i = 0; i < 20000; i++)
            sink += (uint64_t)i;
    if (spin_region)
        perfmark_region_end("worker_spin");
    printf("worker %ld tid %d pages %ld cputime_ns %llu\n", k, (int)gettid(), pages,
           (unsigned long long)thread_cpu_ns());
    if (linger) {
        pthread_mutex_lock(&said_lock);
        said++;
        pthread_cond_broadcast(&said_cond);
        pthread_mutex_unlock(&said_lock);
        for (;;)
            pause();  /* ends with the process */
    }
    free(mem);
    return NULL;
}

static void *keeper(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "keeper");
    usleep(1000);
    return NULL;
}

static void *nothing(void *arg) { return arg; }

static void *churner(void *arg)
{
    (void)arg;
    for (;;) {  /* ends with the process */
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    pages_each = argc > 2 ? atol(argv[2]) : 1000;
    spin_ms = argc > 3 ? atol(argv[3]) : 50;
    const char *mode = argc > 4 ? argv[4] : "";
    named = strcmp(mode, "named") == 0;
    linger = strncmp(mode, "linger", 6) == 0;
    spin_region = strcmp(mode, "linger-region") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    perfmark_region_begin("main_region");
    pthread_t th[64], k;
    for (long i = 0; i < n && i < 64; i++)
        pthread_create(&th[i], NULL, worker, (void *)(i + 1));
    if (named)
        pthread_create(&k, NULL, keeper, NULL);
    if (linger) {  /* the workers stay: wait until each has said its work */
        pthread_mutex_lock(&said_lock);
        while (said < n && said < 64)
            pthread_cond_wait(&said_cond, &said_lock);
        pthread_mutex_unlock(&said_lock);
    }
    for (long i = 0; i < n && i < 64 && !linger; i++)
        pthread_join(th[i], NULL);
    if (named)
        pthread_join(k, NULL);
    perfmark_region_end("main_region");
    if (strcmp(mode, "churn") == 0) {
        pthread_t c;
        pthread_create(&c, NULL, churner, NULL);
        pthread_detach(c);
        usleep(20000);
    }
    return 3;
}
