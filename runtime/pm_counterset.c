#include "pm_counterset.h"
#include "pm_log.h"
#include "pm_cpu_models.h"
#include "pm_rdpmc.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* read(2) without libc: not a cancellation point (a marker must not be one),
 * no PLT, and none of the async-cancel bookkeeping glibc adds around read()
 * in multi-threaded processes (+30-40 ns per read measured here).
 * PM_SYSCALL_SEAM builds use libc's read() so the unit-test double at the
 * syscall boundary (-Wl,--wrap=read) can intercept it. */
/* Returns bytes read or -errno, and never touches errno: markers must leave
 * the application's errno alone without paying to save it on every call. */
static inline long pm_sys_read(int fd, void *buf, size_t n)
{
#ifdef PM_SYSCALL_SEAM
    long got = read(fd, buf, n);
    return got < 0 ? -errno : got;
#else
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
#endif
}

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
    /* TopDown metric events have no counter of their own: their pages
     * point rdpmc at SLOTS, so the generic read below would return slots
     * for every metric. read() converts PERF_METRICS in the kernel. */
    if (!hardware || cs->inherit || set->td_method == PM_TD_METHOD_PERF_METRICS)
        return;
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    int ok = 1;
    for (int i = 0; i < set->n && ok; i++) {
        int fd = cs->fd[i] >= 0 ? cs->fd[i] : cs->leader[set->ev[i].group];
        void *p = mmap(NULL, pagesize, PROT_READ, MAP_SHARED, fd, 0);
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

/* A group is led by a disabled dummy, or by its first event where the
 * kernel requires that (TopDown slots): then that event's fd is the leader. */
static int pm_open_groups(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    struct perf_event_attr attr;
    for (int g = 0; g < set->ngroups; g++) {
        if (set->led_by_event[g]) {
            attr = set->ev[cs->gfirst[g]].attr;
            attr.disabled = 1;
            attr.pinned = cs->pinned ? 1 : 0;
        } else {
            pm_leader_attr(&attr, cs->pinned);
        }
        attr.inherit = cs->inherit ? 1 : 0;
        cs->leader[g] = pm_perf_open(&attr, cs->cpu, -1);
        if (cs->leader[g] < 0)
            return -1;
    }
    for (int i = 0; i < set->n; i++) {
        int g = set->ev[i].group;
        if (set->led_by_event[g] && i == cs->gfirst[g])
            continue;  /* it is the leader */
        attr = set->ev[i].attr;
        attr.inherit = cs->inherit ? 1 : 0;
        cs->fd[i] = pm_perf_open(&attr, cs->cpu, cs->leader[g]);
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
    cs->ngroups = set->ngroups;
    cs->nevents = set->n;
    for (int i = 0; i < set->n; i++) {
        int g = set->ev[i].group;
        if (cs->gcount[g]++ == 0)
            cs->gfirst[g] = i;
    }
    for (int g = 0; g < set->ngroups; g++)
        cs->gskip[g] = !set->led_by_event[g];
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

static inline __attribute__((always_inline)) int pm_read_group(struct pm_counterset *cs, int g, uint64_t *out)
{
    int first = cs->gfirst[g], count = cs->gcount[g];
    uint64_t *ena = out + cs->nevents + g, *run = out + cs->nevents + cs->ngroups + g;

    if (cs->use_rdpmc) {
        int ok = 1;
        for (int k = 0; k < count && ok; k++)
            ok = pm_rdpmc_read(cs->page[first + k], &pm_rdpmc_hw, &out[first + k], ena,
                               run) == 0;
        if (ok)
            return 0;
    }
    uint64_t buf[PM_GROUP_BUF_WORDS];
    int skip = cs->gskip[g];  /* the dummy leader's value comes first */
    size_t need = (size_t)(3 + 2 * (skip + count)) * sizeof(uint64_t);
    long got = pm_sys_read(cs->leader[g], buf, need);
    if (got <= 0 || (size_t)got < need || buf[0] != (uint64_t)(skip + count)) {
        /* 0 bytes: a pinned group was kicked off its counters (error state). */
        pm_lose_counters(cs, got == 0 ? "the pinned group was taken off the counters"
                             : got < 0 ? strerror((int)-got) : "short read");
        return -1;
    }
    *ena = buf[1];
    *run = buf[2];
    for (int k = 0; k < count; k++)
        out[first + k] = buf[3 + 2 * (skip + k)];
    return 0;
}

static inline uint64_t pm_read_groups(struct pm_counterset *cs, uint64_t *out)
{
    for (int g = 0; g < cs->ngroups; g++)
        if (pm_read_group(cs, g, out) != 0) {
            memset(out, 0, pm_stride(cs->set) * sizeof *out);
            break;
        }
    return cs->generation;
}

/* Reopen after fork or loss; errno is the application's, keep it. */
static __attribute__((noinline)) uint64_t pm_counterset_read_slow(struct pm_counterset *cs,
                                                                  uint64_t *out)
{
    int saved = errno;
    const struct pm_eventset *set = cs->set;
    if (cs->state == PM_CS_REOPEN && pm_counterset_open(cs, set, cs->cpu, cs->inherit,
                                                        cs->pinned) != 0)
        pm_msg(PM_MSG_COUNTERS, "reopening counters failed (%s); this thread's counts stay 0",
               strerror(errno));
    uint64_t gen = cs->generation;
    if (cs->state == PM_CS_OPEN)
        gen = pm_read_groups(cs, out);
    else
        memset(out, 0, pm_stride(set) * sizeof *out);
    errno = saved;
    return gen;
}

uint64_t pm_counterset_read(struct pm_counterset *cs, uint64_t *out)
{
    if (__builtin_expect(cs->state == PM_CS_OPEN, 1))
        return pm_read_groups(cs, out);
    return pm_counterset_read_slow(cs, out);
}

int pm_counterset_peek(const struct pm_counterset *cs, uint64_t *out)
{
    if (cs->state != PM_CS_OPEN)
        return -1;
    uint64_t buf[PM_GROUP_BUF_WORDS];
    for (int g = 0; g < cs->ngroups; g++) {
        int first = cs->gfirst[g], count = cs->gcount[g], skip = cs->gskip[g];
        size_t need = (size_t)(3 + 2 * (skip + count)) * sizeof(uint64_t);
        long got = pm_sys_read(cs->leader[g], buf, need);
        if (got < (long)need || buf[0] != (uint64_t)(skip + count))
            return -1;
        out[cs->nevents + g] = buf[1];
        out[cs->nevents + cs->ngroups + g] = buf[2];
        for (int k = 0; k < count; k++)
            out[first + k] = buf[3 + 2 * (skip + k)];
    }
    return 0;
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
