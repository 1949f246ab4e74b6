/* pm_thread_exits — the threads whose totals the kernel reports at their
 * exit (pm_exit_counts.h): each is expected from the moment it ends until
 * its record arrives, then its totals are the record's, birth to exit. */
#ifndef PM_THREAD_EXITS_H
#define PM_THREAD_EXITS_H

#include "pm_thread.h"

/* On the thread itself, at its end (its record comes after it is gone). */
void pm_thread_exits_expect(struct pm_thread *t);
/* Take the records written so far; `wait` 0: not if another thread is. */
void pm_thread_exits_take(int wait);
/* A thread of perfmark's that takes the records out as the ring fills
 * (threads ending by thousands at once would overflow it otherwise):
 * started at the first thread's birth, once; stopped before the write. */
void pm_thread_exits_watch(void);
void pm_thread_exits_unwatch(void);
/* At a thread's end, after pm_thread_exits_expect: takes the records out
 * itself when no thread watches the ring. */
void pm_thread_exits_ended(void);
/* At the write: the records of threads still in the middle of exiting,
 * waited for briefly; a thread whose record never came has its own
 * counters' totals from its first region, else none (PM_TOTALS_NONE).
 * Returns how many. `wait` 0 (the emergency dump): the records there are
 * now, taken only if no one else holds them, nothing waited for. */
int pm_thread_exits_settle(int wait);
/* In a fork child: the parent's threads are not ours to wait for. */
void pm_thread_exits_after_fork(void);

#endif
