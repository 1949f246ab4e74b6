/* perfmark-hooks JOB_PID PIDFD START EVENTFD: the holder of `perfmark run`'s perf
 * hooks, exec'd by it (run_hooks.c) so that the holder, which lives as long
 * as the job, does not keep the `perfmark` program's file busy. Not for
 * direct use. */
#include "cli/hooks_hold.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static int pm_number(const char *s, long long min, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long long job, pidfd, start, event;
    if (argc != 5 || pm_number(argv[1], 1, &job) != 0 || job > INT_MAX ||
        pm_number(argv[2], -1, &pidfd) != 0 || pidfd > INT_MAX ||
        pm_number(argv[3], 0, &start) != 0 || pm_number(argv[4], 0, &event) != 0 ||
        event > INT_MAX) {
        fprintf(stderr, "usage: perfmark-hooks JOB_PID PIDFD START EVENTFD\n"
                        "(started by `perfmark run`; not for direct use)\n");
        return 2;
    }
    pm_hooks_hold((pid_t)job, (int)pidfd, (unsigned long long)start, (int)event);
}
