/* run_hooks.h — `perfmark run` keeps the kernel's perf scheduling hooks on
 * for the job (run_hooks.c says why and how). */
#ifndef PM_CLI_RUN_HOOKS_H
#define PM_CLI_RUN_HOOKS_H

/* Start the holder process, a grandchild of this one, that keeps one
 * disabled perf event open until this process (the job, once exec'd) has
 * exited. Returns at once; does nothing where it cannot or must not
 * (no fork, PID 1 or a child subreaper). Never prints. */
void pm_run_hold_perf_hooks(void);

#endif /* PM_CLI_RUN_HOOKS_H */
