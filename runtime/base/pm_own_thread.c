/* perfmark's own threads, never counted as the program's (pm_own_thread.h),
 * and known by their tids. */
#define _GNU_SOURCE
#include "pm_own_thread.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define PM_OWN_MAX 16
static pid_t pm_own_tids[PM_OWN_MAX];
static int pm_own_pending;  /* started, tid not yet recorded */

struct pm_own_start {
    void *(*start)(void *);
    void *arg;
};

static void *pm_own_main(void *p)
{
    struct pm_own_start s = *(struct pm_own_start *)p;
    free(p);
    pid_t me = gettid();
    for (int i = 0; i < PM_OWN_MAX; i++) {
        pid_t none = 0;
        if (__atomic_compare_exchange_n(&pm_own_tids[i], &none, me, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            break;
    }
    __atomic_sub_fetch(&pm_own_pending, 1, __ATOMIC_RELEASE);
    return s.start(s.arg);
}

/* Set while this thread starts one of perfmark's own: the pthread_create
 * the call reaches may be perfmark's interposer (libperfmark.so comes
 * first), or a sanitizer's, which calls perfmark's after it; either way the
 * interposer must not count the new thread (pm_session_thread_prepare). */
static __thread int pm_spawning __attribute__((tls_model("initial-exec")));

int pm_own_thread_spawning(void) { return pm_spawning; }

int pm_own_thread_create(pthread_t *thread, void *(*start)(void *), void *arg)
{
    struct pm_own_start *s = malloc(sizeof *s);
    if (!s)
        return EAGAIN;
    *s = (struct pm_own_start){start, arg};
    __atomic_add_fetch(&pm_own_pending, 1, __ATOMIC_ACQUIRE);
    /* The pthread_create the program would reach: a sanitizer's interceptor
     * (which must see every thread), else perfmark's, else the C library's. */
    pm_spawning = 1;
    int rc = pthread_create(thread, NULL, pm_own_main, s);
    pm_spawning = 0;
    if (rc != 0) {
        __atomic_sub_fetch(&pm_own_pending, 1, __ATOMIC_RELEASE);
        free(s);
    }
    return rc;
}

int pm_own_thread_is(pid_t tid)
{
    /* A thread just started may not have said its tid yet: briefly wait
     * (it does so first thing). */
    for (int spins = 0; __atomic_load_n(&pm_own_pending, __ATOMIC_ACQUIRE) > 0 && spins < 100000;
         spins++)
        sched_yield();
    for (int i = 0; i < PM_OWN_MAX; i++)
        if (__atomic_load_n(&pm_own_tids[i], __ATOMIC_ACQUIRE) == tid)
            return 1;
    return 0;
}

void pm_own_thread_after_fork(void)
{
    /* The child has none of them (only the forking thread comes along). */
    for (int i = 0; i < PM_OWN_MAX; i++)
        pm_own_tids[i] = 0;
    pm_own_pending = 0;
}
