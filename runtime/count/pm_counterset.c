#include "pm_counterset.h"
#include "pm_log.h"
#include "pm_cpu_models.h"
#include "pm_rdpmc.h"
#include "pm_topdown.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
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
#if defined(PM_SYSCALL_SEAM) || !(defined(__x86_64__) || defined(__aarch64__))
    long got = read(fd, buf, n);
    return got < 0 ? -errno : got;
#elif defined(__x86_64__)
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
                     : "rcx", "r11", "memory");
    return ret;
#else /* arm64: number in x8, arguments and result in x0.. */
    register long x8 __asm__("x8") = SYS_read;
    register long x0 __asm__("x0") = fd;
    register long x1 __asm__("x1") = (long)buf;
    register long x2 __asm__("x2") = (long)n;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory", "cc");
    return x0;
#endif
}

/* nr, time_enabled, time_running, then {value, id} for the leader and each member */
#define PM_GROUP_BUF_WORDS (3 + 2 * (1 + PM_MAX_EVENTS))
_Static_assert(PM_GROUP_BUF_WORDS <= 256, "pm_counterset.vword holds a word index in 8 bits");

/* PERFMARK_TOPDOWN_READ, and whether the TopDown rdpmc mode was ever used. */
static int pm_td_rdpmc_allowed = 1;
static int pm_td_rdpmc_was_used;

void pm_counterset_td_allow_rdpmc(int allow) { pm_td_rdpmc_allowed = allow; }

int pm_counterset_td_rdpmc_used(void)
{
    return __atomic_load_n(&pm_td_rdpmc_was_used, __ATOMIC_RELAXED);
}

/* The instructions of the TopDown rdpmc mode. In production a constant
 * struct of inline functions, which the inlined sampler below resolves at
 * compile time (no indirect call); test builds let a fake PMU replace it. */
#ifdef PM_SYSCALL_SEAM
const struct pm_rdpmc_hooks *pm_td_hooks = &pm_rdpmc_hw;
#define PM_TD_HOOKS pm_td_hooks
#else
static const struct pm_rdpmc_hooks pm_td_hooks_insn = {pm_rdpmc_insn, pm_rdtsc_insn};
#define PM_TD_HOOKS (&pm_td_hooks_insn)
#endif

static int pm_is_clock(const struct perf_event_attr *a)
{
    return a->type == PERF_TYPE_SOFTWARE &&
           (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* Which event leads each group (pm_open_groups): gskip 1 for a dummy, else
 * glead, the leader's place among the group's events; and so where each
 * event's value is in a read of its group (the leader's comes first, then
 * the others in order). */
static void pm_pick_leaders(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    int hardware[PM_MAX_GROUPS] = {0};

    for (int i = 0; i < set->n; i++)
        hardware[set->ev[i].group] |= set->ev[i].attr.type != PERF_TYPE_SOFTWARE;
    for (int g = 0; g < set->ngroups; g++) {
        cs->gskip[g] = !set->led_by_event[g];
        cs->glead[g] = 0;
        if (set->led_by_event[g] || hardware[g])
            continue;
        for (int k = 0; k < cs->gcount[g]; k++)
            if (!pm_is_clock(&set->ev[cs->gfirst[g] + k].attr)) {
                cs->gskip[g] = 0;
                cs->glead[g] = k;
                break;
            }
    }
    for (int g = 0; g < set->ngroups; g++)
        for (int k = 0, lead = cs->glead[g]; k < cs->gcount[g]; k++) {
            int slot = k == lead ? 0 : k < lead ? k + 1 : k;

            cs->vword[cs->gfirst[g] + k] = (uint8_t)(3 + 2 * (cs->gskip[g] + slot));
        }
}

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
    cs->td_group = -1;
    cs->td.page = NULL;
}

/* PERF_METRICS byte of a topdown-* pseudo event (config 0x8000 + i × 0x100),
 * or -1 for any other event. */
static int pm_td_metric_byte(const struct pm_event *ev)
{
    uint64_t config = ev->attr.config;
    if (ev->attr.type != PERF_TYPE_RAW || (config & ~0x7f00ull) != 0x8000)
        return -1;
    int byte = (int)((config >> 8) & 0x7f);
    return byte < PM_TD_NBYTES ? byte : -1;
}

/* Hybrid CPUs (a cpu_atom PMU beside cpu_core): E-cores have no fixed
 * counter 3 or PERF_METRICS, and a thread moved there between the page
 * check and rdpmc would take #GP (SIGSEGV). read() is safe everywhere. */
static int pm_hybrid_cpu(void)
{
    static int hybrid = -1;
    if (hybrid < 0)
        hybrid = access("/sys/bus/event_source/devices/cpu_atom", F_OK) == 0;
    return hybrid;
}

/* Kernels with per-thread rdpmc TopDown (the save/restore of SLOTS and
 * PERF_METRICS across context switches this mode relies on) give metric
 * events an rdpmc index of their own, PERF_METRICS (x86_pmu_event_idx);
 * older ones did not grant rdpmc to metric events at all. */
static int pm_td_metric_page_ok(int fd, size_t pagesize)
{
    if (fd < 0)
        return 0;
    void *p = mmap(NULL, pagesize, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 0;
    const struct perf_event_mmap_page *pc = p;
    int ok = pc->cap_user_rdpmc && pc->index == PM_TD_RDPMC_METRICS + 1;
    munmap(p, pagesize);
    return ok;
}

/* The TopDown rdpmc mode for a group of the slots leader and metric events
 * only (a group with other members keeps read(): their counts would need
 * their own pages), when the slots page grants rdpmc at fixed counter 3.
 * The first reading is a read(), which gives the base and resets. */
static void pm_try_td_rdpmc(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    if (!pm_td_rdpmc_allowed || cs->inherit || pm_hybrid_cpu())
        return;
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    for (int g = 0; g < set->ngroups; g++) {
        int first = cs->gfirst[g], count = cs->gcount[g], ok = 1;
        /* a slots event alone gets no TopDown handling in the kernel */
        if (!set->led_by_event[g] || !pm_event_must_lead(&set->ev[first]) || count < 2)
            continue;
        cs->td.byte[0] = 0xff;
        for (int k = 1; k < count && ok; k++) {
            int byte = pm_td_metric_byte(&set->ev[first + k]);
            ok = byte >= 0;
            cs->td.byte[k] = (uint8_t)byte;
        }
        if (!ok)
            continue;
        void *p = mmap(NULL, pagesize, PROT_READ, MAP_SHARED, cs->leader[g], 0);
        if (p == MAP_FAILED)
            continue;
        const struct perf_event_mmap_page *pc = p;
        /* cap_user_time: enabled/running must advance between read()s */
        if (!pc->cap_user_rdpmc || !pc->cap_user_time || pc->index != PM_TD_RDPMC_SLOTS + 1 ||
            pc->pmc_width == 0 || !pm_td_metric_page_ok(cs->fd[first + 1], pagesize)) {
            munmap(p, pagesize);
            continue;
        }
        cs->page[first] = p;
        cs->td.page = pc;
        cs->td.resync = 1;
        cs->td_group = g;
        cs->gspecial |= 1u << g;
        __atomic_store_n(&pm_td_rdpmc_was_used, 1, __ATOMIC_RELAXED);
        return;
    }
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
     * point rdpmc at PERF_METRICS (or grant none), whose raw value is 8-bit
     * fractions, not a count. Their group has its own mode. */
    if (set->td_method == PM_TD_METHOD_PERF_METRICS) {
        pm_try_td_rdpmc(cs);
        return;
    }
    if (!hardware || cs->inherit)
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

/* A group is led by a disabled dummy, or by one of its events (gskip 0):
 * its first where the kernel requires that (TopDown slots), and in groups
 * of software events only, which never take turns on counters, the first
 * that is not a clock (a task-clock or cpu-clock leader can leave the
 * members at 0 after the enable until the next context switch: shared
 * environment notes). One fd less to open and close at every thread's start
 * and end. That event's fd is the leader; its value comes first in a read. */
/* The fd each group's event opened last has: the process-wide set's
 * exit records come from it (pm_counterset_exit_fd). */
static int pm_last_fd(const struct pm_counterset *cs, int g)
{
    for (int k = cs->gcount[g] - 1; k >= 0; k--)
        if (cs->fd[cs->gfirst[g] + k] >= 0)
            return cs->fd[cs->gfirst[g] + k];
    return cs->leader[g];
}

static int pm_exit_untimed;

void pm_counterset_exit_untimed(void) { pm_exit_untimed = 1; }

void pm_counterset_exit_attr(struct perf_event_attr *attr)
{
    if (pm_exit_untimed)
        return;
    attr->sample_id_all = 1;
    attr->sample_type |= PERF_SAMPLE_TIME;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;
}

static int pm_open_groups(struct pm_counterset *cs)
{
    const struct pm_eventset *set = cs->set;
    struct perf_event_attr attr;
    /* PM_INHERIT_EXIT: every event has inherit_stat, so that when the
     * kernel swaps two sibling threads' copies of the set at a context
     * switch, their values are swapped back (perf_event_sync_stat moves
     * only inherit_stat events': the others would follow the copy, not the
     * thread). At each inheriting thread's exit the kernel then writes a
     * record of the group for each event; only the last one opened has a
     * ring (pm_counterset_exit_fd), and a child's events leave its context
     * newest first (kernel/events/core.c: list_add_rcu at the head of
     * event_list), so that one still sees its whole group. A record
     * holding fewer values is refused (pm_exit_counts). Each record carries
     * the time it was written, on CLOCK_MONOTONIC (pm_counterset_exit_attr):
     * what tells a thread from an earlier one the kernel gave the same tid
     * whose record was lost. */
    int stat = cs->inherit == PM_INHERIT_EXIT;
    for (int g = 0; g < set->ngroups; g++) {
        if (cs->gabsent >> g & 1)
            continue;
        if (!cs->gskip[g]) {
            attr = set->ev[cs->gfirst[g] + cs->glead[g]].attr;
            attr.disabled = 1;
            attr.pinned = cs->pinned ? 1 : 0;
        } else {
            pm_leader_attr(&attr, cs->pinned);
        }
        attr.inherit = cs->inherit ? 1 : 0;
        attr.inherit_stat = stat;
        if (stat)
            pm_counterset_exit_attr(&attr);
        cs->leader[g] = pm_perf_open_task(&attr, cs->task, cs->cpu, -1);
        if (cs->leader[g] < 0)
            return -1;
    }
    for (int i = 0; i < set->n; i++) {
        int g = set->ev[i].group;
        if ((!cs->gskip[g] && i == cs->gfirst[g] + cs->glead[g]) || (cs->gabsent >> g & 1))
            continue;  /* it is the leader, or the group is left out */
        attr = set->ev[i].attr;
        attr.inherit = cs->inherit ? 1 : 0;
        attr.inherit_stat = stat;
        if (stat)
            pm_counterset_exit_attr(&attr);
        cs->fd[i] = pm_perf_open_task(&attr, cs->task, cs->cpu, cs->leader[g]);
        if (cs->fd[i] < 0)
            return -1;
    }
    for (int g = 0; g < set->ngroups; g++)
        if (!(cs->gabsent >> g & 1) &&
            ioctl(cs->leader[g], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
            return -1;
    pm_try_rdpmc(cs);
    return 0;
}

int pm_counterset_open(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                       int inherit, int pinned)
{
    return pm_counterset_open_task(cs, set, 0, cpu, inherit, pinned);
}

/* Everything but the fds: what a set is before it opens. */
static void pm_counterset_init(struct pm_counterset *cs, const struct pm_eventset *set, int task,
                               int cpu, int inherit, int pinned)
{
    /* Kept across reopening: generations must differ, and the window
     * accounting of regions open across it must stay consistent. */
    uint64_t generation = cs->generation;
    uint64_t exit_lag = cs->td_exit_lag;
    uint64_t samples = cs->td.samples, foreign = cs->td.foreign, resets = cs->td.resets;
    uint64_t charge = cs->td.charge;
    memset(cs, 0, sizeof *cs);
    cs->td_exit_lag = exit_lag;
    cs->td.samples = samples;
    cs->td.foreign = foreign;
    cs->td.resets = resets;
    cs->td.charge = charge;
    /* Until a TopDown rdpmc reading sets them again, every reading closes
     * one window: a lag difference left from the last sample of the old
     * set (or a mode not granted again) would inflate later visits. */
    cs->td_enter_lag = exit_lag;
    cs->td_group = -1;
    cs->set = set;
    cs->cpu = cpu;
    cs->task = task;
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
    pm_pick_leaders(cs);
    /* The process-wide set leaves out groups led by an event (TopDown's
     * slots). Its events live in every thread's context beside the
     * thread's own set, and fixed counter 3 exists once: the two slots
     * groups would take turns on it, multiplexing the thread's TopDown. */
    for (int g = 0; g < set->ngroups && inherit; g++)
        if (set->led_by_event[g])
            cs->gabsent |= 1u << g;
    cs->gspecial = cs->gabsent;
}

void pm_counterset_defer(struct pm_counterset *cs, const struct pm_eventset *set, int cpu,
                         int pinned)
{
    pm_counterset_init(cs, set, 0, cpu, 0, pinned);
    cs->state = set->n ? PM_CS_REOPEN : PM_CS_OPEN;
}

int pm_counterset_open_task(struct pm_counterset *cs, const struct pm_eventset *set, int task,
                            int cpu, int inherit, int pinned)
{
    pm_counterset_init(cs, set, task, cpu, inherit, pinned);
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

/* One group through read(). */
static inline __attribute__((always_inline)) int pm_read_group_sys(struct pm_counterset *cs,
                                                                   int g, uint64_t *out)
{
    int first = cs->gfirst[g], count = cs->gcount[g];
    uint64_t *ena = out + cs->nevents + g, *run = out + cs->nevents + cs->ngroups + g;
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
        out[first + k] = buf[cs->vword[first + k]];
    return 0;
}

#define pm_barrier() __asm__ volatile("" ::: "memory")

/* The slots page's seqlock (as pm_rdpmc_read): raw SLOTS (masked to the
 * counter width) and PERF_METRICS, and enabled/running advanced to now.
 * -1 when the event is not on fixed counter 3 now or rdpmc is not granted.
 * The page's `offset` is not used: the TopDown group's base is what read()
 * returned. */
static inline __attribute__((always_inline)) int
pm_td_sample(const volatile struct perf_event_mmap_page *pc, const struct pm_rdpmc_hooks *hooks,
             struct pm_td_window *raw, uint64_t *skew, uint64_t *ena, uint64_t *run,
             uint32_t *lock)
{
    uint32_t seq, idx, width;
    int granted;
    uint64_t e, r, delta, slots = 0, slots2 = 0, metrics = 0;
    do {
        seq = pc->lock;
        pm_barrier();
        e = pc->time_enabled;
        r = pc->time_running;
        delta = 0;
        if (pc->cap_user_time)
            delta = pm_rdpmc_time_delta(hooks->rdtsc(), pc->time_offset, pc->time_mult,
                                        pc->time_shift);
        idx = pc->index;
        granted = pc->cap_user_rdpmc;
        width = pc->pmc_width;
        if (granted && idx == PM_TD_RDPMC_SLOTS + 1 && width) {
            /* Two instructions, not one snapshot (the kernel reads them with
             * the PMU disabled): PERF_METRICS describes the window at some
             * point between the two SLOTS reads. */
            slots = hooks->rdpmc(PM_TD_RDPMC_SLOTS);
            metrics = hooks->rdpmc(PM_TD_RDPMC_METRICS);
            slots2 = hooks->rdpmc(PM_TD_RDPMC_SLOTS);
        }
        pm_barrier();
    } while (pc->lock != seq);
    *lock = seq;
    if (!granted || idx != PM_TD_RDPMC_SLOTS + 1 || !width)
        return -1;
    uint64_t mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    raw->slots = slots & mask;
    raw->metrics = metrics;
    slots2 &= mask;
    *skew = slots2 > raw->slots ? slots2 - raw->slots : 0;
    *ena = e + delta;
    *run = r + delta;
    return 0;
}

static inline uint64_t pm_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The TopDown group in rdpmc mode (pm_td_rdpmc in the header). A reading is
 * an rdpmc sample unless a reset is due: the open window exceeds
 * PM_TD_RDPMC_RESET_SLOTS, the event is not on the PMU now (or the last
 * read() was not known to reset), or someone else reset the registers (a
 * peek, or raw SLOTS went backwards). A reset is a read(): exact, and the
 * new base.
 *
 * Window accounting (the lags, pm_counterset.h): a sample leaves the
 * window open with raw SLOTS in it; a read() made on the PMU (the page's
 * lock unchanged across it: no schedule-out in between) closes it. A read()
 * made off the PMU converts the saved registers without resetting them, so
 * it is counted both ways, as a reset and as a sample whose open window is
 * every slot since the last certain reset (the slots count is exact). */
static __attribute__((noinline)) int pm_read_td(struct pm_counterset *cs, int g, uint64_t *out)
{
    struct pm_td_rdpmc *td = &cs->td;
    int first = cs->gfirst[g], count = cs->gcount[g];
    uint64_t *ena = out + cs->nevents + g, *run = out + cs->nevents + cs->ngroups + g;
    unsigned peeks = __atomic_load_n(&cs->td_peeks, __ATOMIC_ACQUIRE);
    int foreign = peeks != td->peek_seen || (peeks & 1);
    struct pm_td_window raw;
    uint64_t e, r, skew = 0;
    uint32_t lock;
    int on_pmu = pm_td_sample(td->page, PM_TD_HOOKS, &raw, &skew, &e, &r, &lock) == 0;
    /* The page's lock moves when the kernel updates it: at schedule-in and
     * out. Each schedule-out converts the window into the kernel's counts
     * keeping only upward changes, so a metric whose share dipped leaves an
     * overshoot of up to one 8-bit step that the next read() returns:
     * charged to the open visits, and the window closed now. */
    uint32_t switched = td->have_lock ? lock - td->last_lock : 0;
    td->have_lock = 1;
    td->last_lock = lock;

    if (on_pmu && !foreign && !td->resync && !switched) {
        if (raw.slots < td->last_slots)
            foreign = 1;  /* reset behind our back */
        else if (__atomic_load_n(&cs->td_peeks, __ATOMIC_ACQUIRE) != peeks)
            foreign = 1;  /* a peek's read() may have landed inside the sample */
        else if (raw.slots <= PM_TD_RDPMC_RESET_SLOTS) {
            out[first] = td->base[0] + raw.slots;
            for (int k = 1; k < count; k++)
                out[first + k] = td->base[k] + pm_td_metric_slots(raw.slots, raw.metrics,
                                                                  td->byte[k]);
            *ena = td->last_ena = pm_max_u64(e, td->last_ena);
            *run = td->last_run = pm_max_u64(r, td->last_run);
            td->last_slots = raw.slots;
            td->samples++;
            /* the skew between the two SLOTS reads is error of this reading */
            cs->td_exit_lag = td->samples - 1 - td->foreign - td->charge - skew;
            cs->td_enter_lag = td->samples - td->foreign - td->charge +
                               pm_td_enter_windows(raw.slots) + skew;
            return 0;
        }
    }
    td->foreign += (uint64_t)foreign;
    if (pm_read_group_sys(cs, g, out) != 0)
        return -1;
    td->resets++;
    td->peek_seen = peeks;
    td->last_slots = 0;
    *ena = td->last_ena = pm_max_u64(*ena, td->last_ena);
    *run = td->last_run = pm_max_u64(*run, td->last_run);
    if (switched)  /* slots since the last certain reset: the window at any switch */
        td->charge += ((uint64_t)switched + 1) / 2 * pm_td_enter_windows(out[first] - td->base[0]);
    cs->td_exit_lag = cs->td_enter_lag = td->samples - td->foreign - td->charge;
    pm_barrier();
    if (on_pmu && td->page->lock == lock) {
        td->resync = 0;
        for (int k = 0; k < count; k++)
            td->base[k] = out[first + k];
    } else {
        /* Not known to have reset: the base stays that of the last certain
         * reset, and the next reading is a read() again. */
        td->resync = 1;
        cs->td_enter_lag += pm_td_enter_windows(out[first] - td->base[0]);
    }
    return 0;
}

/* A group the process-wide set leaves out: no counts, never enabled. */
static int pm_read_absent(struct pm_counterset *cs, int g, uint64_t *out)
{
    for (int k = 0; k < cs->gcount[g]; k++)
        out[cs->gfirst[g] + k] = 0;
    out[cs->nevents + g] = out[cs->nevents + cs->ngroups + g] = 0;
    return 0;
}

static inline __attribute__((always_inline)) int pm_read_group(struct pm_counterset *cs, int g,
                                                               uint64_t *out)
{
    if (__builtin_expect(cs->gspecial >> g & 1, 0))
        return g == cs->td_group ? pm_read_td(cs, g, out) : pm_read_absent(cs, g, out);
    if (cs->use_rdpmc) {
        int first = cs->gfirst[g], count = cs->gcount[g], ok = 1;
        uint64_t *ena = out + cs->nevents + g, *run = out + cs->nevents + cs->ngroups + g;
        for (int k = 0; k < count && ok; k++)
            ok = pm_rdpmc_read(cs->page[first + k], &pm_rdpmc_hw, &out[first + k], ena,
                               run) == 0;
        if (ok)
            return 0;
    }
    return pm_read_group_sys(cs, g, out);
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
    if (cs->state == PM_CS_REOPEN && pm_counterset_open_task(cs, set, cs->task, cs->cpu, cs->inherit,
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

int pm_counterset_decode(const struct pm_counterset *cs, int g, const uint64_t *buf,
                         size_t words, uint64_t *out)
{
    int first = cs->gfirst[g], count = cs->gcount[g], skip = cs->gskip[g];
    if (words < (size_t)(3 + 2 * (skip + count)) || buf[0] != (uint64_t)(skip + count))
        return -1;
    out[cs->nevents + g] = buf[1];
    out[cs->nevents + cs->ngroups + g] = buf[2];
    for (int k = 0; k < count; k++)
        out[first + k] = buf[cs->vword[first + k]];
    return 0;
}

int pm_counterset_exit_fd(const struct pm_counterset *cs, int g)
{
    if (cs->state != PM_CS_OPEN || cs->inherit != PM_INHERIT_EXIT || (cs->gabsent >> g & 1))
        return -1;
    return pm_last_fd(cs, g);
}

int pm_counterset_peek(struct pm_counterset *cs, uint64_t *out)
{
    if (cs->state != PM_CS_OPEN)
        return -1;
    /* Odd while our read()s run: each resets the TopDown registers (see
     * pm_read_td), which the owner must see whether or not it overlapped. */
    __atomic_add_fetch(&cs->td_peeks, 1, __ATOMIC_ACQ_REL);
    int rc = 0;
    uint64_t buf[PM_GROUP_BUF_WORDS];
    for (int g = 0; g < cs->ngroups; g++) {
        size_t need = (size_t)(3 + 2 * (cs->gskip[g] + cs->gcount[g])) * sizeof(uint64_t);
        if (cs->gabsent >> g & 1) {
            pm_read_absent(cs, g, out);
            continue;
        }
        long got = pm_sys_read(cs->leader[g], buf, need);
        if (got < (long)need || pm_counterset_decode(cs, g, buf, (size_t)got / 8, out) != 0) {
            rc = -1;
            break;
        }
    }
    __atomic_add_fetch(&cs->td_peeks, 1, __ATOMIC_ACQ_REL);
    return rc;
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
