/* perfmark run: keep the kernel's perf scheduling hooks switched on for the
 * whole job, from a small process of its own (run_hooks.h).
 *
 * Why: the first per-task perf event opened on a machine where none has
 * existed for a second switches on a static key (perf_sched_events) and
 * then waits for an RCU grace period (kernel/events/core.c, account_event).
 * Every rank of a job opens its counters at its start, finds the key off
 * and sleeps 4-14 ms in perf_event_open (measured on the KVM machines here,
 * 2026-11-27; ranks starting together all wait for the same grace period).
 * A process that holds one disabled per-task dummy event pays that wait
 * while mpirun and the program are still starting, and keeps the key on
 * until the job ends: each rank's first open then takes ~0.1 ms.
 *
 * The holder must never become the job's child: a program that waits for
 * all its children (`while (wait(NULL) > 0)`) would wait for it for ever.
 * So it is the grandchild of `perfmark run` (which then execs the job), its
 * parent gone at once, and it is not started at all where it would be
 * handed back to the job: when `perfmark run` is PID 1 of its namespace (a
 * container) or a child subreaper. It holds none of the job's files
 * (stdout left open would keep `$(perfmark run ...)` waiting), and leaves
 * when the job's process (perfmark run's pid, exec'd) has exited. */
#define _GNU_SOURCE
#include "cli/run_hooks.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The dummy event: counts nothing, disabled, on the holder itself. */
static int pm_hooks_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.exclude_kernel = 1; /* what perf_event_paranoid 2 allows without privileges */
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Close every file but `keep` (-1: all). */
static void pm_hooks_close_all_but(int keep)
{
    if (keep < 0 ? syscall(SYS_close_range, 0, ~0U, 0) == 0
                 : (keep == 0 || syscall(SYS_close_range, 0, keep - 1, 0) == 0) &&
                       syscall(SYS_close_range, keep + 1, ~0U, 0) == 0)
        return;
    /* Before Linux 5.9: the open files, as /proc lists them. */
    int fds[1024], n = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < 1024;)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) && atoi(e->d_name) != keep)
            fds[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* The holder: hold the event, with none of the job's files, until the
 * job's end. Never returns. */
static void pm_hooks_hold(pid_t job, int pidfd)
{
    pm_hooks_close_all_but(pidfd);
    if (chdir("/") != 0)
        _exit(0);
    prctl(PR_SET_NAME, "perfmark-hooks", 0, 0, 0);
    if (pm_hooks_open() < 0)
        _exit(0); /* paranoid 3, seccomp, no perf_event at all: nothing to hold */
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
    } else {
        while (kill(job, 0) == 0 || errno == EPERM)
            sleep(1);
    }
    _exit(0);
}

void pm_run_hold_perf_hooks(void)
{
    int sub = 0;
    if (getpid() == 1 || (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) == 0 && sub))
        return;
    pid_t job = getpid();
    pid_t mid = fork();
    if (mid < 0)
        return;
    if (mid == 0) {
        /* This process's parent, the job-to-be, waits for it: the job is
         * alive until it has exited, so the pidfd names the right process. */
        int pidfd = (int)syscall(SYS_pidfd_open, job, 0);
        pid_t holder = fork();
        if (holder == 0)
            pm_hooks_hold(job, pidfd);
        _exit(0);
    }
    int status;
    while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
        ;
}
