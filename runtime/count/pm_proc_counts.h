/* pm_proc_counts — a thread's software counts from /proc, for a thread
 * that has no counters perfmark can read: one still running at the write
 * that never entered a region (its counts from birth are in the kernel's
 * inherited events, which only its exit reports; pm_exit_counts.h).
 *
 * /proc gives what the kernel's scheduler and fault handler keep per task:
 * task-clock and cpu-clock (schedstat's run time, ns), page-faults (minor
 * plus major: the faults the kernel accounted, which can be a few fewer
 * than the faults perf counts, retried ones included), minor-faults,
 * major-faults, context-switches (voluntary plus involuntary) and
 * cpu-migrations (where sched debugging shows se.nr_migrations). No
 * hardware event. */
#ifndef PM_PROC_COUNTS_H
#define PM_PROC_COUNTS_H

#include "pm_events.h"

#include <stdint.h>
#include <sys/types.h>

/* Fills `reading` (the set's stride): for each group whose every event
 * /proc gives, its values and enabled = running = `wall_ns`; for any
 * other, zeros and running 0 of enabled `wall_ns` (not counted). Returns
 * the groups filled, -1 if the thread is gone. */
int pm_proc_counts(pid_t tid, const struct pm_eventset *set, uint64_t wall_ns,
                   uint64_t *reading);

#endif
