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
 * parent gone at once, and it is not started where it would be handed to
 * the job or to a process that may never reap it: `perfmark run` is PID 1
 * of its namespace (a container) or a child subreaper, its parent is
 * outside its PID namespace (`docker exec`, `nsenter`: the orphan would go
 * to the container's init), or its children would start a PID namespace
 * (`unshare --pid` without --fork: the first child is that namespace's
 * init, and its exit would leave the job unable to fork). It holds none of
 * the job's files (stdout left open would keep `$(perfmark run ...)`
 * waiting), leaves no SIGCHLD pending for the job, and leaves when the
 * job's process (perfmark run's pid, exec'd) has exited. */
#define _GNU_SOURCE
#include "cli/run_hooks.h"

#include "cli/find.h"
#include "cli/hooks_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Kernel headers older than 5.3 lack the name; the number is the same on
 * every architecture since 5.1's unified table. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Would an orphan of ours end up with the job, or with a process that may
 * never reap it, or would our first child start a PID namespace? */
static int pm_hooks_unsafe(void)
{
    int sub = 0;
    if (getpid() == 1 || getppid() == 0 ||
        (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) == 0 && sub))
        return 1;
    /* After unshare(CLONE_NEWPID), pid_for_children names another namespace,
     * or none (ENOENT) until its first process exists; before Linux 4.12
     * the link itself is missing, and there is nothing to see. */
    char ns[PATH_MAX], children[PATH_MAX];
    struct stat st;
    ssize_t a = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ssize_t b = readlink("/proc/self/ns/pid_for_children", children, sizeof children - 1);
    if (b < 0)
        return errno == ENOENT && lstat("/proc/self/ns/pid_for_children", &st) == 0;
    return a <= 0 || a != b || memcmp(ns, children, (size_t)a) != 0;
}

/* The holder opens its event at once (the kernel's wait for the hooks then
 * starts while the job is still starting), then runs `perfmark-hooks`
 * (beside this program in the build tree, in the libexec directory
 * installed) holding it, with no environment but the loader's search path
 * (nothing preloaded), so that it does not keep this program's own file busy
 * for the job (hooks_hold.c); where that program is missing, it holds here. */
static void pm_hooks_become_holder(pid_t job, int pidfd, unsigned long long start)
{
    int event = pm_hooks_open();
    if (event < 0)
        _exit(0); /* paranoid 3, seccomp, no perf_event at all: nothing to hold */
    char path[PATH_MAX];
    if (pm_cli_find_program("perfmark-hooks", path, sizeof path) == 0 &&
        (pidfd < 0 || fcntl(pidfd, F_SETFD, 0) == 0)) {
        char a_job[32], a_fd[32], a_start[32], a_event[32];
        snprintf(a_job, sizeof a_job, "%ld", (long)job);
        snprintf(a_fd, sizeof a_fd, "%d", pidfd);
        snprintf(a_start, sizeof a_start, "%llu", start);
        snprintf(a_event, sizeof a_event, "%d", event);
        char *argv[] = {path, a_job, a_fd, a_start, a_event, NULL};
        const char *lib = getenv("LD_LIBRARY_PATH");
        char *ld = NULL;
        if (lib && asprintf(&ld, "LD_LIBRARY_PATH=%s", lib) < 0)
            ld = NULL;
        char *envp[] = {ld, NULL};
        pm_hooks_close_all_but(pidfd, event);
        execve(path, argv, envp);
    }
    pm_hooks_hold(job, pidfd, start, event);
}

void pm_run_hold_perf_hooks(void)
{
    if (pm_hooks_unsafe())
        return;
    pid_t job = getpid();
    /* SIGCHLD from the middle process must not be left pending for the job
     * (a blocked signal stays pending across exec): block it meanwhile and
     * take the one we caused. */
    sigset_t chld, old, pending;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGCHLD) == 1;
    pid_t mid = fork();
    if (mid == 0) {
        /* This process's parent, the job-to-be, waits for it: the job is
         * alive until it has exited, so the pidfd and the start time name
         * the right process. */
        char state;
        unsigned long long start = 0;
        if (pm_hooks_proc(job, &state, &start) != 0)
            _exit(0);
        int pidfd = (int)syscall(SYS_pidfd_open, job, 0);
        if (fork() == 0)
            pm_hooks_become_holder(job, pidfd, start);
        _exit(0);
    }
    if (mid > 0) {
        int status;
        while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
            ;
        struct timespec none = {0, 0};
        if (!was_pending)
            while (sigtimedwait(&chld, NULL, &none) < 0 && errno == EINTR)
                ;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}
