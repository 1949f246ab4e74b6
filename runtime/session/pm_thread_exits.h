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
/* At the write: the records of threads still in the middle of exiting,
 * waited for briefly; a thread whose record never came is not counted
 * (PM_TOTALS_NONE). Returns how many. */
int pm_thread_exits_settle(void);
/* In a fork child: the parent's threads are not ours to wait for. */
void pm_thread_exits_after_fork(void);

#endif
