/* A thread's software counts from /proc (pm_proc_counts.h). */
#define _GNU_SOURCE
#include "pm_proc_counts.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PM_PROC_RUN, PM_PROC_MINFLT, PM_PROC_MAJFLT, PM_PROC_CSW, PM_PROC_MIGR, PM_PROC_N };

static ssize_t pm_proc_file(pid_t tid, const char *name, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

static int pm_field_after(const char *buf, const char *key, uint64_t *out)
{
    const char *p = strstr(buf, key);
    if (!p)
        return 0;
    p += strlen(key);
    while (*p == ' ' || *p == '\t' || *p == ':')
        p++;
    *out = strtoull(p, NULL, 10);
    return 1;
}

/* What /proc says of the thread; have[k] 0 where it says nothing. */
static int pm_proc_read(pid_t tid, uint64_t *v, int *have)
{
    char buf[4096];
    memset(have, 0, PM_PROC_N * sizeof *have);
    if (pm_proc_file(tid, "stat", buf, sizeof buf) <= 0)
        return -1;
    /* fields after the command name (which may hold spaces): 3 state ... 10
     * minflt, 11 cminflt, 12 majflt */
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 10; field++)
        p = strchr(p + 1, ' ');
    unsigned long long minflt, cmin, majflt;
    if (p && sscanf(p + 1, "%llu %llu %llu", &minflt, &cmin, &majflt) == 3) {
        v[PM_PROC_MINFLT] = minflt, have[PM_PROC_MINFLT] = 1;
        v[PM_PROC_MAJFLT] = majflt, have[PM_PROC_MAJFLT] = 1;
    }
    unsigned long long run;
    if (pm_proc_file(tid, "schedstat", buf, sizeof buf) > 0 && sscanf(buf, "%llu", &run) == 1)
        v[PM_PROC_RUN] = run, have[PM_PROC_RUN] = 1;
    uint64_t vol, invol;
    if (pm_proc_file(tid, "status", buf, sizeof buf) > 0 &&
        pm_field_after(buf, "\nvoluntary_ctxt_switches", &vol) &&
        pm_field_after(buf, "\nnonvoluntary_ctxt_switches", &invol))
        v[PM_PROC_CSW] = vol + invol, have[PM_PROC_CSW] = 1;
    if (pm_proc_file(tid, "sched", buf, sizeof buf) > 0 &&
        pm_field_after(buf, "se.nr_migrations", &v[PM_PROC_MIGR]))
        have[PM_PROC_MIGR] = 1;
    return 0;
}

/* The /proc value of one event, or -1 if /proc has none. */
static int pm_proc_value(const struct perf_event_attr *a, const uint64_t *v, const int *have,
                         uint64_t *out)
{
    if (a->type != PERF_TYPE_SOFTWARE)
        return -1;
    switch (a->config) {
    case PERF_COUNT_SW_TASK_CLOCK:
    case PERF_COUNT_SW_CPU_CLOCK:
        *out = v[PM_PROC_RUN];
        return have[PM_PROC_RUN] ? 0 : -1;
    case PERF_COUNT_SW_PAGE_FAULTS:
        *out = v[PM_PROC_MINFLT] + v[PM_PROC_MAJFLT];
        return have[PM_PROC_MINFLT] ? 0 : -1;
    case PERF_COUNT_SW_PAGE_FAULTS_MIN:
        *out = v[PM_PROC_MINFLT];
        return have[PM_PROC_MINFLT] ? 0 : -1;
    case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
        *out = v[PM_PROC_MAJFLT];
        return have[PM_PROC_MAJFLT] ? 0 : -1;
    case PERF_COUNT_SW_CONTEXT_SWITCHES:
        *out = v[PM_PROC_CSW];
        return have[PM_PROC_CSW] ? 0 : -1;
    case PERF_COUNT_SW_CPU_MIGRATIONS:
        *out = v[PM_PROC_MIGR];
        return have[PM_PROC_MIGR] ? 0 : -1;
    default:
        return -1;
    }
}

int pm_proc_counts(pid_t tid, const struct pm_eventset *set, uint64_t wall_ns,
                   uint64_t *reading)
{
    uint64_t v[PM_PROC_N] = {0};
    int have[PM_PROC_N];
    if (pm_proc_read(tid, v, have) != 0)
        return -1;
    int ok[PM_MAX_GROUPS];
    for (int g = 0; g < set->ngroups; g++)
        ok[g] = 1;
    for (int i = 0; i < set->n; i++)
        if (pm_proc_value(&set->ev[i].attr, v, have, &reading[i]) != 0)
            ok[set->ev[i].group] = 0;
    int filled = 0;
    for (int g = 0; g < set->ngroups; g++) {
        reading[set->n + g] = wall_ns;
        reading[set->n + set->ngroups + g] = ok[g] ? wall_ns : 0;
        filled += ok[g];
    }
    for (int i = 0; i < set->n; i++)
        if (!ok[set->ev[i].group])
            reading[i] = 0;
    return filled;
}
