/* Cases the kernel cannot produce on a machine without a PMU, made with a
 * test double at the syscall boundary (-Wl,--wrap=syscall,--wrap=read);
 * everything above that boundary is the production code.
 *
 * 1. A PMU with 4 counters: hardware events beyond 4 in one group are
 *    refused with EINVAL (as x86 validate_group does), so perfmark must
 *    split the request into two groups and say nothing is lost.
 * 2. A pinned group taken off the counters reads 0 bytes (EOF): the set's
 *    generation changes, the region spanning it is LOST_GENERATION, and the
 *    counters are reopened for the next region. */
#define _GNU_SOURCE
#include "check.h"
#include "pm_clock.h"
#include "pm_events.h"
#include "pm_flags.h"
#include "pm_names.h"
#include "pm_thread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FAKE_COUNTERS 4

long __real_syscall(long number, ...);
ssize_t __real_read(int fd, void *buf, size_t count);

static int hw_members[1024];  /* per leader fd: hardware members so far */
static int slots_leader[1024]; /* fd opened as the TopDown slots leader */
static int eof_fd = -1;       /* read() of this fd returns 0 once */

/* Hardware events become real software dummies so the fds are genuine. */
long __wrap_syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    struct perf_event_attr *attr = va_arg(ap, struct perf_event_attr *);
    pid_t pid = va_arg(ap, pid_t);
    int cpu = va_arg(ap, int);
    int group = va_arg(ap, int);
    unsigned long flags = va_arg(ap, unsigned long);
    va_end(ap);
    if (number != SYS_perf_event_open)
        abort();  /* the runtime makes no other raw syscalls */
    struct perf_event_attr copy = *attr;
    int is_slots = attr->type == PERF_TYPE_RAW && attr->config == 0x400;
    int is_metric = attr->type == PERF_TYPE_RAW && (attr->config & ~0x7f00ull) == 0x8000;
    if (is_metric && (group < 0 || group >= 1024 || !slots_leader[group])) {
        errno = EINVAL;  /* Ice Lake: metrics only in a group led by slots */
        return -1;
    }
    if (attr->type == PERF_TYPE_RAW) {
        if (group >= 0 && hw_members[group] >= FAKE_COUNTERS) {
            errno = EINVAL;
            return -1;
        }
        copy.type = PERF_TYPE_SOFTWARE;
        copy.config = PERF_COUNT_SW_DUMMY;
    }
    long fd = __real_syscall(number, &copy, pid, cpu, group, flags);
    if (fd >= 0 && fd < 1024) {
        hw_members[fd] = 0;
        slots_leader[fd] = is_slots && group < 0;
        if (attr->type == PERF_TYPE_RAW && group >= 0)
            hw_members[group]++;
    }
    return fd;
}

ssize_t __wrap_read(int fd, void *buf, size_t count)
{
    if (fd == eof_fd) {
        eof_fd = -1;
        return 0;
    }
    return __real_read(fd, buf, count);
}

static void test_group_split(void)
{
    static struct pm_eventset set;
    pm_eventset_build("spr::INST_RETIRED:ANY_P,spr::MEM_LOAD_RETIRED:L1_MISS,"
                      "spr::BR_MISP_RETIRED:ALL_BRANCHES,spr::BR_INST_RETIRED:ALL_BRANCHES,"
                      "spr::MEM_LOAD_RETIRED:L3_MISS,spr::CPU_CLK_UNHALTED:THREAD_P",
                      &set);
    CHECK(set.n == 6, "%d events kept, want 6", set.n);
    CHECK(set.ngroups == 2, "%d groups, want 2", set.ngroups);
    for (int i = 0; i < set.n; i++)
        CHECK(set.ev[i].group == (i < FAKE_COUNTERS ? 0 : 1), "event %d in group %d", i,
              set.ev[i].group);
    /* as a normal user at paranoid >= 2 the set says it counts user space only */
    CHECK(set.nnotes == pm_user_only(), "unexpected note: %s", set.notes[0]);
    CHECK(!pm_user_only() || strstr(set.notes[0], "counting user space only"),
          "unexpected note: %s", set.notes[0]);
    CHECK(set.fallback[0] == '\0', "unexpected fallback: %s", set.fallback);

    /* and the split set opens and reads as two groups */
    struct pm_counterset cs = {0};
    CHECK(pm_counterset_open(&cs, &set, -1, 0, 0) == 0, "open failed: %s", strerror(errno));
    uint64_t out[3 * PM_MAX_EVENTS];
    pm_counterset_read(&cs, out);
    CHECK(cs.state == PM_CS_OPEN, "state %d after reading two groups", cs.state);
    pm_counterset_close(&cs);
}

static void test_pinned_eof(void)
{
    static struct pm_eventset set;
    pm_eventset_build("page-faults,task-clock", &set);
    CHECK(set.n == 2 && set.ngroups == 1, "sw set: %d events %d groups", set.n, set.ngroups);
    /* static: threads live as long as the process, as in the runtime (whose
     * session keeps them); LeakSanitizer would otherwise see them lost */
    static struct pm_thread *t;
    t = pm_thread_create(&set, -1, 1, 0);
    CHECK(t && t->cs.state == PM_CS_OPEN, "thread set did not open");
    if (!t)
        return;
    int32_t lost = pm_name_intern("lost", NULL), later = pm_name_intern("later", NULL);
    uint64_t gen0 = t->cs.generation;

    pm_thread_enter(t, lost);
    eof_fd = t->cs.leader[0];
    pm_thread_exit(t, lost);
    CHECK(t->cs.generation != gen0, "EOF did not change the generation");
    CHECK(t->nodes[0].flags & PM_FLAG_LOST_GENERATION, "region across EOF flags %#x",
          t->nodes[0].flags);

    char *mem = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    pm_thread_enter(t, later);
    for (int i = 0; i < 64; i++)
        mem[i * 4096] = 1;
    pm_thread_exit(t, later);
    munmap(mem, 64 * 4096);
    CHECK(t->cs.state == PM_CS_OPEN, "counters not reopened (state %d)", t->cs.state);
    CHECK(t->nodes[1].flags == 0, "region after reopen flags %#x", t->nodes[1].flags);
    CHECK(t->acc[1 * t->stride + 0] >= 64, "region after reopen: %llu page faults, want >= 64",
          (unsigned long long)t->acc[1 * t->stride + 0]);
}

/* TopDown on a model with PERF_METRICS: the slots event must lead its own
 * group (the fake refuses metrics otherwise), the led group reads with no
 * dummy value, and every read inside a region counts as a window. */
static void test_topdown_slots_leader(void)
{
    static struct pm_eventset set;
    pm_eventset_build("spr::TOPDOWN:SLOTS,perf_raw::r8000,perf_raw::r8100,"
                      "perf_raw::r8200,perf_raw::r8300,page-faults", &set);
    CHECK(set.n == 6, "%d events kept, want 6 (notes: %s)", set.n, set.nnotes ? set.notes[0] : "");
    /* a software event may join the slots-led group (mixed groups are fine) */
    CHECK(set.ngroups == 1 && set.led_by_event[0], "groups %d, led %d", set.ngroups,
          set.led_by_event[0]);
    for (int i = 0; i < 6; i++)
        CHECK(set.ev[i].group == 0, "TopDown event %d in group %d", i, set.ev[i].group);

    static struct pm_thread *t;  /* kept, as above */
    t = pm_thread_create(&set, -1, 0, 0);
    CHECK(t && t->cs.state == PM_CS_OPEN, "slots-led set did not open");
    if (!t)
        return;
    int32_t outer = pm_name_intern("td_outer", NULL), inner = pm_name_intern("td_inner", NULL);
    pm_thread_enter(t, outer);
    pm_thread_enter(t, inner);
    pm_thread_exit(t, inner);
    pm_thread_exit(t, outer);
    CHECK(t->cs.state == PM_CS_OPEN, "reading the led group failed (state %d)", t->cs.state);
    CHECK(t->nodes[0].flags == 0, "outer flags %#x", t->nodes[0].flags);
    CHECK(t->nodes[0].windows == 3 && t->nodes[1].windows == 1,
          "windows outer %llu inner %llu, want 3 and 1",
          (unsigned long long)t->nodes[0].windows, (unsigned long long)t->nodes[1].windows);
}

/* The process-wide (inherited) set leaves out the TopDown group: its slots
 * event would sit in every thread's context beside the thread's own, and
 * the two would take turns on the one fixed counter 3. The group reads as
 * zeros, never enabled; the other groups count. */
static void test_inherit_without_topdown(void)
{
    static struct pm_eventset set;
    pm_eventset_build("page-faults,spr::TOPDOWN:SLOTS,perf_raw::r8000,perf_raw::r8100,"
                      "perf_raw::r8200,perf_raw::r8300", &set);
    CHECK(set.n == 6 && set.ngroups == 2 && !set.led_by_event[0] && set.led_by_event[1],
          "set: %d events, %d groups", set.n, set.ngroups);
    if (set.n != 6 || set.ngroups != 2)
        return;
    struct pm_counterset cs = {0};
    CHECK(pm_counterset_open(&cs, &set, -1, 1, 0) == 0, "inherited open failed: %s",
          strerror(errno));
    CHECK(cs.leader[1] < 0, "the TopDown group of the inherited set was opened");
    CHECK(cs.leader[0] >= 0, "the software group of the inherited set was not opened");
    char *mem = mmap(NULL, 32 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 32; i++)
        mem[i * 4096] = 1;
    munmap(mem, 32 * 4096);
    uint64_t out[3 * PM_MAX_EVENTS];
    memset(out, 0xff, sizeof out);
    pm_counterset_read(&cs, out);
    unsigned E = (unsigned)set.n, G = (unsigned)set.ngroups;
    CHECK(cs.state == PM_CS_OPEN, "state %d after reading", cs.state);
    int zeros = out[E + 1] == 0 && out[E + G + 1] == 0;
    for (int i = 1; i < 6; i++)
        zeros &= out[i] == 0;
    CHECK(zeros, "left-out group: slots %llu, enabled %llu", (unsigned long long)out[1],
          (unsigned long long)out[E + 1]);
    CHECK(out[0] >= 32 && out[E] > 0, "page-faults %llu, enabled %llu",
          (unsigned long long)out[0], (unsigned long long)out[E]);
    memset(out, 0xff, sizeof out);
    CHECK(pm_counterset_peek(&cs, out) == 0 && out[1] == 0 && out[0] >= 32,
          "peek of the inherited set");
    pm_counterset_close(&cs);
    /* a per-thread set opens both groups */
    struct pm_counterset own = {0};
    CHECK(pm_counterset_open(&own, &set, -1, 0, 0) == 0 && own.leader[1] >= 0,
          "per-thread set: TopDown group not opened");
    pm_counterset_close(&own);
}

int main(void)
{
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    pm_clock_init();
    test_group_split();
    test_pinned_eof();
    test_topdown_slots_leader();
    test_inherit_without_topdown();
    return TEST_DONE("test_counter_double");
}
