#define _GNU_SOURCE
#include "pm_sample_drainer.h"
#include "pm_own_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t pm_drainer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pm_sampler **pm_rings;
static int pm_nrings, pm_rings_cap;
static pthread_t pm_drainer;
static int pm_running;
static int pm_period_ms = PM_DRAINER_PERIOD_MS;
static int pm_stopping;
static int pm_wake[2] = {-1, -1};  /* stop → the thread's poll */

void pm_sample_drainer_add(struct pm_sampler *s)
{
    pthread_mutex_lock(&pm_drainer_lock);
    if (pm_nrings == pm_rings_cap) {
        int cap = pm_rings_cap ? 2 * pm_rings_cap : 16;
        struct pm_sampler **grown = realloc(pm_rings, (size_t)cap * sizeof *grown);
        if (grown) {
            pm_rings = grown;
            pm_rings_cap = cap;
        }
    }
    if (pm_nrings < pm_rings_cap)
        pm_rings[pm_nrings++] = s;
    pthread_mutex_unlock(&pm_drainer_lock);
}

void pm_sample_drainer_remove(struct pm_sampler *s)
{
    pthread_mutex_lock(&pm_drainer_lock);
    for (int i = 0; i < pm_nrings; i++)
        if (pm_rings[i] == s) {
            pm_rings[i] = pm_rings[--pm_nrings];
            break;
        }
    pthread_mutex_unlock(&pm_drainer_lock);
}

/* The drainer's list of samplers with stacks to unwind (its own). */
static struct pm_sampler **pm_unwind_list;
static int pm_unwind_cap;

static int pm_unwind_list_add(struct pm_sampler *s, int n)
{
    if (n == pm_unwind_cap) {
        int cap = pm_unwind_cap ? 2 * pm_unwind_cap : 16;
        struct pm_sampler **grown = realloc(pm_unwind_list, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        pm_unwind_list = grown;
        pm_unwind_cap = cap;
    }
    pm_unwind_list[n] = s;
    return 0;
}

static void *pm_drainer_main(void *arg)
{
    (void)arg;
    struct pollfd *fds = NULL;
    int cap = 0;
    while (!__atomic_load_n(&pm_stopping, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&pm_drainer_lock);
        if (pm_nrings + 1 > cap) {
            int want = 2 * (pm_nrings + 1);
            struct pollfd *grown = realloc(fds, (size_t)want * sizeof *grown);
            if (grown) {
                fds = grown;
                cap = want;
            }
        }
        int n = 0;
        if (fds) {
            fds[n++] = (struct pollfd){.fd = pm_wake[0], .events = POLLIN};
            for (int i = 0; i < pm_nrings && n < cap; i++) {
                int fd = pm_sampler_poll_fd(pm_rings[i]);
                if (fd >= 0)
                    fds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
            }
        }
        pthread_mutex_unlock(&pm_drainer_lock);
        /* A ring closed while we sleep leaves a stale fd here: poll then
         * says POLLNVAL, or watches a reused number; either way we only
         * wake early, and drain under the lock below. */
        if (fds)
            poll(fds, (nfds_t)n, pm_period_ms);
        else
            usleep((useconds_t)pm_period_ms * 1000);
        pthread_mutex_lock(&pm_drainer_lock);
        int nunwind = 0;
        for (int i = 0; i < pm_nrings; i++) {
            if (pm_sampler_pending(pm_rings[i]->cursor))
                pm_sampler_drain_try(pm_rings[i]);
            if (__atomic_load_n(&pm_rings[i]->stash_used, __ATOMIC_RELAXED) &&
                pm_unwind_list_add(pm_rings[i], nunwind) == 0)
                nunwind++;
        }
        pthread_mutex_unlock(&pm_drainer_lock);
        /* Stacks the owners copied aside, unwound without the lock, which
         * threads starting and ending take: a sampler outlives its thread
         * (its pm_thread is kept), and one whose thread ended meanwhile
         * has had its last stacks unwound and its stash freed by it. */
        for (int i = 0; i < nunwind; i++)
            pm_sampler_unwind(pm_unwind_list[i]);
    }
    free(fds);
    free(pm_unwind_list);
    pm_unwind_list = NULL;
    pm_unwind_cap = 0;
    return NULL;
}

int pm_sample_drainer_start(int period_ms)
{
    if (pm_running)
        return 0;
    pm_period_ms = period_ms > 0 ? period_ms : PM_DRAINER_PERIOD_MS;
    if (pipe2(pm_wake, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    /* The drainer takes no signal: they belong to the program's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    __atomic_store_n(&pm_stopping, 0, __ATOMIC_RELEASE);
    int rc = pm_own_thread_create(&pm_drainer, pm_drainer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(pm_wake[0]), close(pm_wake[1]);
        pm_wake[0] = pm_wake[1] = -1;
        errno = rc;
        return -1;
    }
    pm_running = 1;
    return 0;
}

void pm_sample_drainer_stop_async(void)
{
    if (!pm_running)
        return;
    __atomic_store_n(&pm_stopping, 1, __ATOMIC_RELEASE);
    char c = 1;
    if (write(pm_wake[1], &c, 1) < 0) {
        /* full or closed: it wakes on its own within a period */
    }
}

void pm_sample_drainer_stop(void)
{
    if (!pm_running)
        return;
    pm_sample_drainer_stop_async();
    pthread_join(pm_drainer, NULL);
    pm_running = 0;
    close(pm_wake[0]), close(pm_wake[1]);
    pm_wake[0] = pm_wake[1] = -1;
}

void pm_sample_drainer_after_fork(void)
{
    pthread_mutex_init(&pm_drainer_lock, NULL);
    pm_nrings = 0;
    pm_running = 0;
    if (pm_wake[0] >= 0)
        close(pm_wake[0]), close(pm_wake[1]);
    pm_wake[0] = pm_wake[1] = -1;
}
