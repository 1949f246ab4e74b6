/* hooks_hold.h — the holder process of `perfmark run`'s perf hooks
 * (run_hooks.c says why it exists, hooks_hold.c what it does). */
#ifndef PM_CLI_HOOKS_HOLD_H
#define PM_CLI_HOOKS_HOLD_H

#include <sys/types.h>

/* Close every file but `keep` (-1: all). */
void pm_hooks_close_all_but(int keep);

/* The state letter and start time (clock ticks after boot) of a process,
 * from /proc/PID/stat; -1 when it is gone. */
int pm_hooks_proc(pid_t pid, char *state, unsigned long long *start);

/* Hold one disabled perf event, with no file but `pidfd` and the event,
 * in `/`, until the job (`job`, started at `job_start`; `pidfd` its pidfd
 * or -1) has exited. Never returns; never prints. */
void pm_hooks_hold(pid_t job, int pidfd, unsigned long long job_start) __attribute__((noreturn));

#endif /* PM_CLI_HOOKS_HOLD_H */
