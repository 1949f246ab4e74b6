/* pm_exit_counts — what each thread counted from its birth to its exit,
 * without a counter set of its own: the kernel's record of it.
 *
 * Every thread a counted thread creates inherits the process-wide set
 * (PM_INHERIT_EXIT). When it exits, the kernel adds its counts to the
 * set's totals and, for an event with inherit_stat, writes a
 * PERF_RECORD_READ of the thread's group (pid, tid, then the group as a
 * read() gives it) to the event's ring. The kernel maps no ring on an
 * inherited per-task event, so each group's recording event sends its
 * output to the ring of a dummy event of the same thread, opened here
 * without inherit. Records are taken out in exit order, each as (tid,
 * group, values); a thread with G groups has G records.
 *
 * The cost a thread pays is the kernel's inheritance of the process set
 * (which perfmark pays anyway, for the process totals) and the record: no
 * perf_event_open or close of its own (bench/README.md, "Thread start"). */
#ifndef PM_EXIT_COUNTS_H
#define PM_EXIT_COUNTS_H

#include "pm_counterset.h"

#include <stdint.h>
#include <sys/types.h>

/* After `process` is opened with PM_INHERIT_EXIT, on the thread that
 * opened it, with a ring of at most `ring_bytes` (a power of two pages, at
 * least one, halved while the kernel's budget says no): 0 once a test
 * thread's record came, or -1 (then threads need sets of their own, and
 * pm_exit_counts_why says why). */
int pm_exit_counts_open(const struct pm_counterset *process, size_t ring_bytes);
const char *pm_exit_counts_why(void);
/* Why, when the set could not even open with PM_INHERIT_EXIT. */
void pm_exit_counts_set_why(const char *why);
int pm_exit_counts_on(void);
/* The ring's fd: readable (poll) when records are waiting to be taken out. */
int pm_exit_counts_fd(void);
/* The groups that have records (the set's TopDown groups have none). */
uint32_t pm_exit_counts_groups(void);
/* In a fork child the ring is the parent's: forget it (no records here). */
void pm_exit_counts_forget(void);

/* A thread's values of one group, as a reading (`reading` has the set's
 * stride; only group g's words are filled), and when the kernel wrote
 * them, in CLOCK_MONOTONIC ns (0: not said). The kernel gives a tid again
 * once its thread is gone: a record belongs to the last thread with that
 * tid born before it. */
typedef void (*pm_exit_counts_fn)(pid_t tid, int group, const uint64_t *reading, uint64_t time,
                                  void *arg);

/* Takes out the records written since the last call, for this process's
 * threads, in the order the kernel wrote them; `ready(arg)` is called
 * first, once the ring's head is read: a thread whose record is among
 * these ended before it. `wait` 0: return at once if another thread is
 * taking them out. Returns the records the kernel could not write (ring
 * full) or that were not a whole group, since the last call. */
uint64_t pm_exit_counts_drain(void (*ready)(void *), pm_exit_counts_fn fn, void *arg, int wait);

#endif
