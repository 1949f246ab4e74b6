/* pm_counterset — one thread's counters: the event set opened as kernel
 * groups, each led by a disabled software dummy (a task-clock leader makes
 * members read 0 after enable until the next context switch) or, in a group
 * of software events only, by its first event that is not a clock, enabled
 * once.
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

/* The TopDown group read through rdpmc (docs/topdown.md, "Long regions and
 * precision"): a reading is `base` (what the last read() of the group
 * returned) plus the conversion of the open window's raw SLOTS and
 * PERF_METRICS; a read() converts exactly, resets the registers and gives
 * the next base. */
struct pm_td_rdpmc {
    const struct perf_event_mmap_page *page;  /* the slots leader's */
    uint64_t base[PM_MAX_EVENTS];  /* group values at the last read(), member order */
    uint8_t byte[PM_MAX_EVENTS];   /* PERF_METRICS byte of each member; 0xff: slots */
    uint64_t last_slots;     /* raw SLOTS at the last reading (0 after a read()) */
    uint64_t last_ena, last_run;  /* times never go back across read() and page */
    uint64_t samples;        /* readings that were rdpmc samples (no reset) */
    uint64_t foreign;        /* resets made by someone else, detected */
    uint64_t resets;         /* read()s of the group by this mode */
    int resync;              /* the next reading must be a read() */
    unsigned peek_seen;      /* pm_counterset_peek's count at our last reading */
    uint32_t last_lock;      /* the page's lock at our last reading */
    int have_lock;
    uint64_t charge;         /* error charged to every open visit (schedule-outs), in
                              * equivalent windows; lowers both lags */
};

struct pm_counterset {
    /* Read path first, in as few cache lines as possible: every read()
     * evicts much of L1, and each line the path touches must come back. */
    int state;
    int ngroups, nevents;   /* cached at open: a read never touches the eventset */
    int use_rdpmc;
    uint64_t generation;
    /* Counting windows (TopDown SHORT): pm_thread counts readings; in the
     * TopDown rdpmc mode not every reading closes a window, and a visit
     * entered late in a window carries the window's quantisation. A region
     * entered at reading e and left at reading x has
     *     windows = (reads_x − td_exit_lag_x) − (reads_e − td_enter_lag_e)
     * equivalent windows (pm_td_visit_windows). Both are 0 in read() mode. */
    uint64_t td_enter_lag, td_exit_lag;
    int td_group;           /* group read in the TopDown rdpmc mode, -1: none */
    uint32_t gspecial;      /* groups not read by read()/generic rdpmc: td_group, absent */
    uint32_t gabsent;       /* groups left out (the process-wide set's TopDown groups) */
    /* pm_counterset_peek's read()s (odd while one runs): they reset the
     * TopDown registers behind the owner's back. */
    unsigned td_peeks;
    int leader[PM_MAX_GROUPS];
    int gfirst[PM_MAX_GROUPS], gcount[PM_MAX_GROUPS];
    int gskip[PM_MAX_GROUPS];   /* 1: a dummy leads the group (its value is skipped) */
    int glead[PM_MAX_GROUPS];   /* else the leading event's place in the group (read first) */
    uint8_t vword[PM_MAX_EVENTS]; /* each event's value in its group's read(): buf[vword] */

    /* cold: open, close, reopen */
    const struct pm_eventset *set;
    int cpu;            /* -1: follow the thread; else bound to this CPU */
    int task;           /* the thread counted: 0 the calling one (perfmark attach: another) */
    int inherit;        /* process-wide set: counts threads created later */
    int pinned;
    int fd[PM_MAX_EVENTS];
    struct perf_event_mmap_page *page[PM_MAX_EVENTS]; /* rdpmc path, or NULL */
    struct pm_td_rdpmc td;
};

/* PERFMARK_TOPDOWN_READ: 1 (auto) lets a TopDown group be read through
 * rdpmc where the kernel grants it, 0 (read) never. Set before threads
 * open their sets. */
void pm_counterset_td_allow_rdpmc(int allow);
/* 1 once any set has read its TopDown group through rdpmc (the file's
 * `topdown_read`). */
int pm_counterset_td_rdpmc_used(void);

#ifdef PM_SYSCALL_SEAM
/* Test builds: the instructions of the TopDown rdpmc mode, replaceable by a
 * fake PMU. Production builds use the inline instructions. */
struct pm_rdpmc_hooks;
extern const struct pm_rdpmc_hooks *pm_td_hooks;
#endif

static inline unsigned pm_stride(const struct pm_eventset *set)
{
    return (unsigned)(set->n + 2 * set->ngroups);
}

/* `inherit` of a set: a thread's own (0), the process-wide set that
 * threads created later inherit (1), and the same with a record of each
 * inheriting thread's values written by the kernel at its exit (2: see
 * pm_exit_counts.h). */
enum { PM_INHERIT_NONE = 0, PM_INHERIT = 1, PM_INHERIT_EXIT = 2 };
/* What every event of a PM_INHERIT_EXIT set, and the ring its records go
 * to, carry: each record stamped with the time it was written, on
 * CLOCK_MONOTONIC (a ring takes only events of its own clock). */
void pm_counterset_exit_attr(struct perf_event_attr *attr);
/* A kernel that refuses a clock on an event (before Linux 4.1): records
 * without their time from now on (a record then goes to the first thread
 * expected with its tid). */
void pm_counterset_exit_untimed(void);

/* Open and enable. 0, or -1 with errno (state BROKEN: readings are zeros). */
int pm_counterset_open(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                       int inherit, int pinned);
/* The calling thread's set, opened at its first reading (a fork child that
 * may exec at once). */
void pm_counterset_defer(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                         int pinned);
/* The same for another thread, `task` (perfmark attach). */
int pm_counterset_open_task(struct pm_counterset *cs, const struct pm_eventset *set, int task,
                            int cpu, int inherit, int pinned);
/* Fill `out[stride]`; returns the generation the values belong to. Never
 * fails: a set that cannot be read yields zeros and a new generation. */
uint64_t pm_counterset_read(struct pm_counterset *cs, uint64_t *out);
/* Read another thread's set (settling it at exit): 0, or -1 if it cannot be
 * read now (e.g. the thread is exiting), without touching the set's state:
 * only its owner may close or reopen it. It only counts its read()s in
 * td_peeks, so that the owner's TopDown rdpmc mode sees the reset. */
int pm_counterset_peek(struct pm_counterset *cs, uint64_t *out);
void pm_counterset_close(struct pm_counterset *cs);
/* Group g's values as a read() of the group gives them (`words` long: nr,
 * enabled, running, {value, id}...) into their places in a reading: 0, or
 * -1 if they are not the whole group. */
int pm_counterset_decode(const struct pm_counterset *cs, int g, const uint64_t *buf,
                         size_t words, uint64_t *out);
/* A PM_INHERIT_EXIT set: the fd of group g whose event writes the exit
 * records (its output goes where pm_exit_counts wants), or -1. */
int pm_counterset_exit_fd(const struct pm_counterset *cs, int g);
/* In a fork child: the fds are the parent's events. Close them and reopen
 * lazily (the child may exec at once). */
void pm_counterset_forget(struct pm_counterset *cs);

#endif
