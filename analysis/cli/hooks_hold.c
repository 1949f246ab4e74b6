/* The holder's side of `perfmark run`'s perf hooks (run_hooks.c says why
 * there is a holder): the files it keeps, the event it holds, how it knows
 * the job has ended. Linked into `perfmark` (its fallback, and the start
 * time it reads for the holder) and into `perfmark-hooks`, the program the
 * holder runs, so that the holder does not keep `perfmark` itself busy: a
 * running program's file cannot be written (ETXTBSY), and the holder lives
 * as long as the job does, so a `cp` or `make install` over perfmark's own
 * binary failed for the whole job. */
#define _GNU_SOURCE
#include "cli/hooks_hold.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Kernel headers older than 5.9 lack the name; the number is the same on
 * every architecture since 5.1's unified table. */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

int pm_hooks_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.exclude_kernel = 1; /* what perf_event_paranoid 2 allows without privileges */
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

void pm_hooks_close_all_but(int a, int b)
{
    int keep[2] = {a < b ? a : b, a < b ? b : a}; /* ascending; -1 keeps nothing */
    unsigned from = 0;
    int ok = 1;
    for (int i = 0; i < 2 && ok; i++) {
        if (keep[i] < 0 || (i == 1 && keep[1] == keep[0]))
            continue;
        if ((unsigned)keep[i] > from)
            ok = syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0) == 0;
        from = (unsigned)keep[i] + 1;
    }
    if (ok && syscall(SYS_close_range, from, ~0U, 0) == 0)
        return;
    /* Before Linux 5.9: the open files, as /proc lists them, until none is left. */
    for (int round = 0; round < 64; round++) {
        int fds[256], n = 0;
        DIR *d = opendir("/proc/self/fd");
        if (!d)
            return;
        for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;) {
            int fd = atoi(e->d_name);
            if (e->d_name[0] != '.' && fd != dirfd(d) && fd != a && fd != b)
                fds[n++] = fd;
        }
        closedir(d);
        if (n == 0)
            return;
        for (int i = 0; i < n; i++)
            close(fds[i]);
    }
}

int pm_hooks_proc(pid_t pid, char *state, unsigned long long *start)
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

void pm_hooks_hold(pid_t job, int pidfd, unsigned long long job_start, int event)
{
    pm_hooks_close_all_but(pidfd, event);
    if (event < 0 || chdir("/") != 0)
        _exit(0);
    prctl(PR_SET_NAME, "perfmark-hooks", 0, 0, 0);
    pm_hooks_wait(job, pidfd, job_start);
    _exit(0);
}
