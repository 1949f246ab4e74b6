#include "pm_counterset.h"
#include "pm_log.h"
#include "pm_rdpmc.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* nr, time_enabled, time_running, then {value, id} for the leader and each member */
#define PM_GROUP_BUF_WORDS (3 + 2 * (1 + PM_MAX_EVENTS))

static void pm_close_fds(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    for (int i = 0; i < set->n; i++) {
        if (cs->page[i])
            munmap(cs->page[i], (size_t)sysconf(_SC_PAGESIZE));
        cs->page[i] = NULL;
        if (cs->fd[i] >= 0)
            close(cs->fd[i]);
        cs->fd[i] = -1;
    }
    for (int g = 0; g < set->ngroups; g++) {
        if (cs->leader[g] >= 0)
            close(cs->leader[g]);
        cs->leader[g] = -1;
    }
    cs->use_rdpmc = 0;
}

/* Map every event's page; keep them only if the kernel grants rdpmc (it does
 * not for software events, whose pages never show a counter index). */
static void pm_try_rdpmc(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    int hardware = 0;
    for (int i = 0; i < set->n; i++)
        hardware |= set->ev[i].attr.type != PERF_TYPE_SOFTWARE;
    if (!hardware || cs->inherit)
        return;
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    int ok = 1;
    for (int i = 0; i < set->n && ok; i++) {
        void *p = mmap(NULL, pagesize, PROT_READ, MAP_SHARED, cs->fd[i], 0);
        if (p == MAP_FAILED) {
            ok = 0;
            break;
        }
        cs->page[i] = p;
        ok = cs->page[i]->cap_user_rdpmc;
    }
    cs->use_rdpmc = ok;
    if (!ok)
        for (int i = 0; i < set->n; i++) {
            if (cs->page[i])
                munmap(cs->page[i], pagesize);
            cs->page[i] = NULL;
        }
}

static int pm_open_groups(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    struct perf_event_attr attr;
    for (int g = 0; g < set->ngroups; g++) {
        pm_leader_attr(&attr, cs->pinned);
        attr.inherit = cs->inherit ? 1 : 0;
        cs->leader[g] = pm_perf_open(&attr, cs->cpu, -1);
        if (cs->leader[g] < 0)
            return -1;
    }
    for (int i = 0; i < set->n; i++) {
        attr = set->ev[i].attr;
        attr.inherit = cs->inherit ? 1 : 0;
        cs->fd[i] = pm_perf_open(&attr, cs->cpu, cs->leader[set->ev[i].group]);
        if (cs->fd[i] < 0)
            return -1;
    }
    for (int g = 0; g < set->ngroups; g++)
        if (ioctl(cs->leader[g], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
            return -1;
    pm_try_rdpmc(cs);
    return 0;
}

int pm_counterset_open(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                       int inherit, int pinned)
{
    uint64_t generation = cs->generation;
    memset(cs, 0, sizeof *cs);
    cs->set = set;
    cs->cpu = cpu;
    cs->inherit = inherit;
    cs->pinned = pinned;
    cs->generation = generation + 1;
    for (int i = 0; i < PM_MAX_EVENTS; i++)
        cs->fd[i] = -1;
    for (int g = 0; g < PM_MAX_GROUPS; g++)
        cs->leader[g] = -1;
    if (set->n == 0) {
        cs->state = PM_CS_OPEN;
        return 0;
    }
    if (pm_open_groups(cs) != 0) {
        int e = errno;
        pm_close_fds(cs);
        cs->state = PM_CS_BROKEN;
        errno = e;
        return -1;
    }
    cs->state = PM_CS_OPEN;
    return 0;
}

static void pm_lose_counters(struct pm_counterset *cs, const char *why)
{
    pm_msg(PM_MSG_COUNTERS, "counters of a thread were lost (%s); reopening them, and "
           "regions open across the loss are flagged LOST_GENERATION", why);
    pm_close_fds(cs);
    cs->state = PM_CS_REOPEN;
    cs->generation++;
}

static int pm_read_group(struct pm_counterset *cs, int g, int first, int count,
                         uint64_t *out)
{
    const struct pm_eventset *set = cs->set;
    uint64_t *ena = out + set->n + g, *run = out + set->n + set->ngroups + g;

    if (cs->use_rdpmc) {
        int ok = 1;
        for (int k = 0; k < count && ok; k++)
            ok = pm_rdpmc_read(cs->page[first + k], &pm_rdpmc_hw, &out[first + k], ena,
                               run) == 0;
        if (ok)
            return 0;
    }
    uint64_t buf[PM_GROUP_BUF_WORDS];
    ssize_t got = read(cs->leader[g], buf, sizeof buf);
    size_t need = (size_t)(3 + 2 * (1 + count)) * sizeof(uint64_t);
    if (got <= 0 || (size_t)got < need || buf[0] != (uint64_t)(1 + count)) {
        /* 0 bytes: a pinned group was kicked off its counters (error state). */
        pm_lose_counters(cs, got == 0 ? "the pinned group was taken off the counters"
                             : got < 0 ? strerror(errno) : "short read");
        return -1;
    }
    *ena = buf[1];
    *run = buf[2];
    for (int k = 0; k < count; k++)
        out[first + k] = buf[3 + 2 * (1 + k)];  /* skip the dummy leader's value */
    return 0;
}

uint64_t pm_counterset_read(struct pm_counterset *cs, uint64_t *out)
{
    const struct pm_eventset *set = cs->set;
    if (cs->state == PM_CS_REOPEN && pm_counterset_open(cs, set, cs->cpu, cs->inherit,
                                                        cs->pinned) != 0)
        pm_msg(PM_MSG_COUNTERS, "reopening counters failed (%s); this thread's counts stay 0",
               strerror(errno));
    if (cs->state != PM_CS_OPEN) {
        memset(out, 0, pm_stride(set) * sizeof *out);
        return cs->generation;
    }
    int first = 0;
    for (int g = 0; g < set->ngroups; g++) {
        int count = 0;
        while (first + count < set->n && set->ev[first + count].group == g)
            count++;
        if (pm_read_group(cs, g, first, count, out) != 0) {
            memset(out, 0, pm_stride(set) * sizeof *out);
            return cs->generation;
        }
        first += count;
    }
    return cs->generation;
}

void pm_counterset_close(struct pm_counterset *cs)
{
    if (cs->set && (cs->state == PM_CS_OPEN))
        pm_close_fds(cs);
    cs->state = PM_CS_CLOSED;
}

void pm_counterset_forget(struct pm_counterset *cs)
{
    if (cs->state == PM_CS_OPEN)
        pm_close_fds(cs);
    if (cs->state != PM_CS_CLOSED) {
        cs->state = PM_CS_REOPEN;
        cs->generation++;
    }
}
