/* pm_counterset — one thread's counters: the event set opened as kernel
 * groups, each led by a disabled software dummy (a task-clock leader makes
 * members read 0 after enable until the next context switch), enabled once.
 *
 * A reading is laid out as `stride` uint64 values: the E raw counts, then G
 * time_enabled, then G time_running, so that region deltas and accumulation
 * are one loop. Every reading carries the set's generation: it changes when
 * the set is reopened (fork child, counters taken away, failed read), and
 * deltas across generations are never trusted. */
#ifndef PM_COUNTERSET_H
#define PM_COUNTERSET_H

#include "pm_events.h"

#include <stdint.h>

enum pm_cs_state {
    PM_CS_CLOSED = 0,   /* never opened, or closed for good */
    PM_CS_OPEN,
    PM_CS_REOPEN,       /* fds gone (fork child, lost counters): reopen on next read */
    PM_CS_BROKEN,       /* reopening failed: readings are zeros */
};

struct pm_counterset {
    /* Read path first, in as few cache lines as possible: every read()
     * evicts much of L1, and each line the path touches must come back. */
    int state;
    int ngroups, nevents;   /* cached at open: a read never touches the eventset */
    int use_rdpmc;
    uint64_t generation;
    int leader[PM_MAX_GROUPS];
    int gfirst[PM_MAX_GROUPS], gcount[PM_MAX_GROUPS];
    int gskip[PM_MAX_GROUPS];   /* 1: a dummy leads the group (its value is skipped) */

    /* cold: open, close, reopen */
    const struct pm_eventset *set;
    int cpu;            /* -1: follow the thread; else bound to this CPU */
    int inherit;        /* process-wide set: counts threads created later */
    int pinned;
    int fd[PM_MAX_EVENTS];
    struct perf_event_mmap_page *page[PM_MAX_EVENTS]; /* rdpmc path, or NULL */
};

static inline unsigned pm_stride(const struct pm_eventset *set)
{
    return (unsigned)(set->n + 2 * set->ngroups);
}

/* Open and enable. 0, or -1 with errno (state BROKEN: readings are zeros). */
int pm_counterset_open(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                       int inherit, int pinned);
/* Fill `out[stride]`; returns the generation the values belong to. Never
 * fails: a set that cannot be read yields zeros and a new generation. */
uint64_t pm_counterset_read(struct pm_counterset *cs, uint64_t *out);
/* Read another thread's set (settling it at exit): 0, or -1 if it cannot be
 * read now (e.g. the thread is exiting), without touching the set's state:
 * only its owner may close or reopen it. */
int pm_counterset_peek(const struct pm_counterset *cs, uint64_t *out);
void pm_counterset_close(struct pm_counterset *cs);
/* In a fork child: the fds are the parent's events. Close them and reopen
 * lazily (the child may exec at once). */
void pm_counterset_forget(struct pm_counterset *cs);

#endif
