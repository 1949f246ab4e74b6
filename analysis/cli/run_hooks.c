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

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
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

/* Kernel headers older than 5.3 and 5.9 lack the names; the numbers are
 * the same on every architecture since 5.1's unified table. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

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
    /* Before Linux 5.9: the open files, as /proc lists them, until none is left. */
    for (int round = 0; round < 64; round++) {
        int fds[256], n = 0;
        DIR *d = opendir("/proc/self/fd");
        if (!d)
            return;
        for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] != '.' && fd != dirfd(d) && fd != keep)
                fds[n++] = fd;
        }
        closedir(d);
        if (n == 0)
            return;
        for (int i = 0; i < n; i++)
            close(fds[i]);
    }
}

/* The state letter and start time (clock ticks after boot) of a process,
 * from /proc/PID/stat; -1 when it is gone. */
static int pm_hooks_proc(pid_t pid, char *state, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command may hold spaces and ')' */
    if (!p || sscanf(p + 2, "%c", state) != 1)
        return -1;
    for (int field = 3; field <= 22 && p; field++) /* to the space before field 22, starttime */
        p = strchr(p + 1, ' ');
    return p && sscanf(p + 1, "%llu", start) == 1 ? 0 : -1;
}

/* Until the job has exited: its pidfd, else /proc once a second (a zombie
 * has exited; another start time is another process with its pid). */
static void pm_hooks_wait(pid_t job, int pidfd, unsigned long long job_start)
{
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
        return;
    }
    char state;
    unsigned long long start;
    while (pm_hooks_proc(job, &state, &start) == 0 && state != 'Z' && state != 'X' &&
           start == job_start)
        sleep(1);
}

/* The holder: hold the event, with none of the job's files, until the
 * job's end. Never returns. */
static void pm_hooks_hold(pid_t job, int pidfd, unsigned long long job_start)
{
    pm_hooks_close_all_but(pidfd);
    if (chdir("/") != 0)
        _exit(0);
    prctl(PR_SET_NAME, "perfmark-hooks", 0, 0, 0);
    if (pm_hooks_open() < 0)
        _exit(0); /* paranoid 3, seccomp, no perf_event at all: nothing to hold */
    pm_hooks_wait(job, pidfd, job_start);
    _exit(0);
}

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
            pm_hooks_hold(job, pidfd, start);
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
