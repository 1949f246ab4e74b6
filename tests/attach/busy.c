/* A program to attach to (tests/attach/check_attach.py): every 100 ms it
 * writes BURST fresh pages (one page fault each), so its page-fault rate is
 * known; after AFTER_MS a second thread starts doing the same with BURST/2.
 * It prints "ready", then each thread's tid, and "done" with its own count
 * of pages written when it finishes after RUN_MS; exit status 0.
 * usage: busy RUN_MS AFTER_MS BURST [wait] */
#define _GNU_SOURCE
#include "../fresh_pages.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long run_ms, after_ms, burst;
static volatile long written[2];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One burst starts every 100 ms of the clock, not 100 ms after the last one
 * ended: on a slow or busy machine a burst takes a while, and a sleep after
 * it would stretch the period and lower the rate the test expects. A burst
 * that starts late does not make up for lost time either: the rate never
 * goes above one burst per 100 ms. */
static void bursts(int k, long pages, double until)
{
    struct fresh_pages f;
    fresh_pages_init(&f, 8 * pages);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (now_ms() < until) {
        for (long i = 0; i < pages; i++)
            fresh_pages_touch(&f);
        written[k] += pages;
        next.tv_nsec += 100000000L;
        if (next.tv_nsec >= 1000000000L)
            next.tv_sec++, next.tv_nsec -= 1000000000L;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec ||
            (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
            next = now;  /* late: start the next period now */
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;  /* a signal woke it early: sleep on to the same deadline */
    }
}

static double t_end;

static void *second(void *arg)
{
    (void)arg;
    printf("tid %d\n", (int)gettid());
    fflush(stdout);
    bursts(1, burst / 2, t_end);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "wait") == 0))
        return 2;
    run_ms = atol(argv[1]), after_ms = atol(argv[2]), burst = atol(argv[3]);
    printf("ready %d\ntid %d\n", (int)getpid(), (int)gettid());
    fflush(stdout);
    /* "wait": no page is written before a line on stdin (the attach has
     * begun), so every page is one the attach can see */
    char go[16];
    if (argc == 5 && !fgets(go, sizeof go, stdin))
        return 2;
    double t0 = now_ms();
    t_end = t0 + run_ms;
    pthread_t th;
    if (after_ms >= run_ms) {  /* no second thread */
        bursts(0, burst, t_end);
    } else {
        bursts(0, burst, t0 + after_ms);
        pthread_create(&th, NULL, second, NULL);
        bursts(0, burst, t_end);
        pthread_join(th, NULL);
    }
    printf("done %ld %ld\n", written[0], written[1]);
    return 0;
}
