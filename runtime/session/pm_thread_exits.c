/* Threads waiting for their exit record (pm_thread_exits.h). */
#define _GNU_SOURCE
#include "pm_thread_exits.h"
#include "pm_exit_counts.h"
#include "pm_flags.h"
#include "pm_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Expected threads by tid: open addressing with linear probing. A tid the
 * kernel gives again sits after the earlier holder along its probe chain,
 * and records come in exit order, so the first match is the right one. */
static struct {
    struct pm_thread **slot;
    size_t cap, n;
    uint64_t lost;     /* records the kernel could not write, or not whole */
    pthread_mutex_t lock;
} pm_tx = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t pm_tx_home(pid_t tid) { return ((size_t)tid * 0x9E3779B97F4A7C15ull) & (pm_tx.cap - 1); }

static int pm_tx_insert(struct pm_thread *t)
{
    if (2 * (pm_tx.n + 1) > pm_tx.cap) {
        size_t cap = pm_tx.cap ? 2 * pm_tx.cap : 64;
        struct pm_thread **slot = calloc(cap, sizeof *slot), **old = pm_tx.slot;
        if (!slot)
            return -1;
        size_t oldcap = pm_tx.cap;
        pm_tx.slot = slot;
        pm_tx.cap = cap;
        pm_tx.n = 0;
        /* in probe order from each home, so that earlier holders of a tid
         * stay first: walk the old table from an empty slot */
        size_t start = 0;
        while (start < oldcap && old[start])
            start++;
        for (size_t k = 0; k < oldcap; k++) {
            struct pm_thread *o = old[(start + k) % oldcap];
            if (o)
                pm_tx_insert(o);
        }
        free(old);
    }
    size_t i = pm_tx_home(t->tid);
    while (pm_tx.slot[i])
        i = (i + 1) & (pm_tx.cap - 1);
    pm_tx.slot[i] = t;
    pm_tx.n++;
    return 0;
}

static size_t pm_tx_find(pid_t tid)
{
    if (!pm_tx.cap)
        return SIZE_MAX;
    for (size_t i = pm_tx_home(tid); pm_tx.slot[i]; i = (i + 1) & (pm_tx.cap - 1))
        if (pm_tx.slot[i]->tid == tid)
            return i;
    return SIZE_MAX;
}

/* Backward-shift deletion: later entries of the chain move up, in order. */
static void pm_tx_remove(size_t i)
{
    size_t mask = pm_tx.cap - 1, j = i;
    pm_tx.slot[i] = NULL;
    for (;;) {
        j = (j + 1) & mask;
        if (!pm_tx.slot[j])
            break;
        size_t home = pm_tx_home(pm_tx.slot[j]->tid);
        /* may slot j's entry move to the hole at i? (home not in (i, j]) */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            pm_tx.slot[i] = pm_tx.slot[j];
            pm_tx.slot[j] = NULL;
            i = j;
        }
    }
    pm_tx.n--;
}

void pm_thread_exits_expect(struct pm_thread *t)
{
    /* Groups without records (TopDown's, left out of the process set) keep
     * what its own counters saw. */
    memcpy(t->scratch, t->total, t->stride * sizeof *t->scratch);
    t->exit_groups = 0;
    pthread_mutex_lock(&pm_tx.lock);
    if (pm_tx_insert(t) != 0)
        pm_tx.lost++;  /* out of memory: it will read as not counted */
    pthread_mutex_unlock(&pm_tx.lock);
}

static void pm_on_record(pid_t tid, int g, const uint64_t *reading, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pm_tx.lock);
    size_t i = pm_tx_find(tid);
    if (i != SIZE_MAX) {
        struct pm_thread *t = pm_tx.slot[i];
        const struct pm_eventset *set = t->set;
        for (int e = 0; e < set->n; e++)
            if (set->ev[e].group == g)
                t->scratch[e] = reading[e];
        t->scratch[set->n + g] = reading[set->n + g];
        t->scratch[set->n + set->ngroups + g] = reading[set->n + set->ngroups + g];
        t->exit_groups |= 1u << g;
        if (t->exit_groups == pm_exit_counts_groups()) {
            memcpy(t->total, t->scratch, t->stride * sizeof *t->total);
            t->total_flags &= ~(uint32_t)PM_FLAG_LOST_GENERATION;  /* whole, birth to exit */
            t->totals_from = PM_TOTALS_AT_EXIT;
            pm_tx_remove(i);
        }
    }
    pthread_mutex_unlock(&pm_tx.lock);
}

void pm_thread_exits_take(int wait)
{
    uint64_t lost = pm_exit_counts_drain(pm_on_record, NULL, wait);
    if (lost)
        __atomic_add_fetch(&pm_tx.lost, lost, __ATOMIC_RELAXED);
}

/* Whether any expected thread is still in the middle of exiting. */
static int pm_any_exiting(void)
{
    char path[64];
    for (size_t i = 0; i < pm_tx.cap; i++) {
        if (!pm_tx.slot[i])
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%d", (int)pm_tx.slot[i]->tid);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

int pm_thread_exits_settle(void)
{
    if (!pm_exit_counts_on())
        return 0;
    /* A thread past its end but not yet gone writes its record any moment. */
    for (int attempt = 0; attempt < 200; attempt++) {
        pm_thread_exits_take(1);
        pthread_mutex_lock(&pm_tx.lock);
        int waiting = pm_tx.n > 0 && pm_any_exiting();
        pthread_mutex_unlock(&pm_tx.lock);
        if (!waiting)
            break;
        usleep(1000);
    }
    pm_thread_exits_take(1);
    pthread_mutex_lock(&pm_tx.lock);
    int none = 0;
    for (size_t i = 0; i < pm_tx.cap; i++) {
        struct pm_thread *t = pm_tx.slot[i];
        if (!t)
            continue;
        /* no estimate: running 0 of enabled 1 in every group */
        const struct pm_eventset *set = t->set;
        memset(t->total, 0, t->stride * sizeof *t->total);
        for (int g = 0; g < set->ngroups; g++)
            t->total[set->n + g] = 1;
        t->totals_from = PM_TOTALS_NONE;
        pm_tx.slot[i] = NULL;
        none++;
    }
    pm_tx.n = 0;
    uint64_t lost = pm_tx.lost;
    pthread_mutex_unlock(&pm_tx.lock);
    if (none)
        pm_msg(PM_MSG_ONCE, "the kernel's record of %d ended thread(s) never came (%llu lost: "
               "too many threads ended at once for its ring): their totals are in the process "
               "total only, their rows read not counted", none, (unsigned long long)lost);
    return none;
}

void pm_thread_exits_after_fork(void)
{
    pthread_mutex_init(&pm_tx.lock, NULL);
    free(pm_tx.slot);
    pm_tx.slot = NULL;
    pm_tx.cap = pm_tx.n = 0;
    pm_tx.lost = 0;
}
