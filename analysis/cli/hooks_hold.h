/* hooks_hold.h — the holder process of `perfmark run`'s perf hooks
 * (run_hooks.c says why it exists, hooks_hold.c what it does). */
#ifndef PM_CLI_HOOKS_HOLD_H
#define PM_CLI_HOOKS_HOLD_H

#include <sys/types.h>

/* The dummy event (counts nothing, disabled) on this process: its fd, or -1
 * where perf events cannot be opened. Not close-on-exec: the event stays
 * with the process across exec. */
int pm_hooks_open(void);

/* Close every file but `a` and `b` (-1: none). */
void pm_hooks_close_all_but(int a, int b);

/* The state letter and start time (clock ticks after boot) of a process,
 * from /proc/PID/stat; -1 when it is gone. */
int pm_hooks_proc(pid_t pid, char *state, unsigned long long *start);

/* Hold the event `event` (pm_hooks_open), with no file but it and `pidfd`,
 * in `/`, until the job (`job`, started at `job_start`; `pidfd` its pidfd
 * or -1) has exited. Never returns; never prints. */
void pm_hooks_hold(pid_t job, int pidfd, unsigned long long job_start, int event)
    __attribute__((noreturn));

#endif /* PM_CLI_HOOKS_HOLD_H */
