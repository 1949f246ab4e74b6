/* The TopDown rdpmc mode (docs/topdown.md, "Long regions and precision")
 * against a fake PMU behind the syscall and instruction seams; everything
 * above them is the production code (pm_thread, pm_counterset).
 *
 * The fake PMU, ground truth by construction: the script does work as
 * known true slot counts per level-1 metric. The "hardware" holds the open
 * window (SLOTS, and PERF_METRICS as each metric's share of the window,
 * rounded to 8 bits). The "kernel" (--wrap=read on the slots leader)
 * converts and resets as __icl_update_topdown_event does, including the
 * saved registers of a schedule-out; --wrap=mmap gives the slots leader a
 * page granting rdpmc at fixed counter 3; the rdpmc/rdtsc hooks read the
 * registers (SLOTS with junk above bit 47, which the runtime must mask).
 *
 * Regions are driven through pm_thread enter/exit, and for each region the
 * test computes by itself: its true slots and metric counts, its read()
 * conversions (floor(W × byte / 255) per closed window, in the fake kernel),
 * and its equivalent windows n_eq = k + 1 + [W_a > 0](1 + ceil(2 W_a / 255))
 * per visit (k: read()s of the group strictly inside the visit, by anyone;
 * W_a: slots in the open window just after the enter reading). */
#define _GNU_SOURCE
#include "check.h"
#include "pm_clock.h"
#include "pm_config.h"
#include "pm_cpu_models.h"
#include "pm_events.h"
#include "pm_names.h"
#include "pm_rdpmc.h"
#include "pm_thread.h"
#include "pm_topdown.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

long __real_syscall(long number, ...);
ssize_t __real_read(int fd, void *buf, size_t count);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

#define NM 4               /* level-1 metrics */
#define R PM_TD_RDPMC_RESET_SLOTS

/* ---- the fake PMU and kernel ---------------------------------------------- */

static struct {
    int fd;                            /* the slots leader it serves */
    int nmem, byte[PM_MAX_EVENTS];     /* members after the leader: PERF_METRICS byte */
    struct perf_event_mmap_page *page;
    int active;                        /* on the PMU (else: schedule-out, registers saved) */
    uint64_t w, tw[NM];                /* open window: slots, true metric slots */
    uint64_t saved_w, saved_m;         /* registers saved at a schedule-out, 0 otherwise */
    struct pm_td_kcounts k;            /* the kernel's event counts */
    uint64_t conv[NM];                 /* the test's own Σ of read()-side conversions */
    uint64_t truth_slots, truth[NM];   /* everything done so far */
    uint64_t reads;                    /* read()s of the group, by anyone */
    uint64_t foreign;                  /* ... of which the test's own (peek, raw read) */
    uint64_t rdpmc_calls, bad_index, rdpmc_off;
    uint64_t tsc;
} pmu;

static int slots_leader[1024];
static int metric_fd[1024];   /* fds of the metric events of the group under test */
static int refuse_pages;      /* the next pages show no rdpmc: the mode is not granted */

static uint64_t pmu_metrics(void)
{
    uint64_t m = 0;
    for (int i = 0; i < NM; i++) {
        uint64_t b = pmu.w ? (pmu.tw[i] * 255 + pmu.w / 2) / pmu.w : 0;  /* rounded share */
        m |= (b > 255 ? 255 : b) << (8 * i);
    }
    return m;
}

static uint64_t conv1(uint64_t w, uint64_t metrics, int i)
{
    return w * ((metrics >> (8 * i)) & 0xff) / 255;  /* w < 2^48: no overflow */
}

/* The kernel's update: count += value(now) − value(saved) where positive. */
static void pmu_kernel_update(void)
{
    uint64_t m = pmu_metrics();
    pm_td_kernel_update(&pmu.k, 1, pmu.w, m, pmu.saved_w, pmu.saved_m);
    if (pmu.w)
        for (int i = 0; i < NM; i++) {
            uint64_t now = conv1(pmu.w, m, i), last = conv1(pmu.saved_w, pmu.saved_m, i);
            if (now > last)
                pmu.conv[i] += now - last;
        }
}

static void pmu_reset_state(int fd)
{
    memset(&pmu, 0, sizeof pmu);
    pmu.fd = fd;
    pmu.active = 1;
}

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
        abort();
    struct perf_event_attr copy = *attr;
    int is_slots = attr->type == PERF_TYPE_RAW && attr->config == 0x400;
    if (attr->type == PERF_TYPE_RAW) {  /* hardware: a genuine software dummy fd */
        copy.type = PERF_TYPE_SOFTWARE;
        copy.config = PERF_COUNT_SW_DUMMY;
    }
    long fd = __real_syscall(number, &copy, pid, cpu, group, flags);
    if (fd >= 0 && fd < 1024) {
        slots_leader[fd] = is_slots && group < 0;
        if (slots_leader[fd])
            pmu_reset_state((int)fd);  /* the latest leader is the one under test */
        metric_fd[fd] = 0;
        if (!slots_leader[fd] && group >= 0 && group == pmu.fd && pmu.nmem < PM_MAX_EVENTS - 1) {
            pmu.byte[pmu.nmem++] = (int)((attr->config >> 8) & 0x7f);
            metric_fd[fd] = 1;
        }
    }
    return fd;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    int metric = fd >= 0 && fd < 1024 && metric_fd[fd];
    if (fd < 0 || (fd != pmu.fd && !metric))
        return __real_mmap(addr, len, prot, flags, fd, off);
    struct perf_event_mmap_page *pg = __real_mmap(NULL, len, PROT_READ | PROT_WRITE,
                                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pg == MAP_FAILED || refuse_pages)
        return pg;  /* a page of zeros: rdpmc not granted */
    if (metric) {  /* kernels with per-thread rdpmc TopDown: PERF_METRICS */
        pg->cap_user_rdpmc = 1;
        pg->index = PM_TD_RDPMC_METRICS + 1;
        return pg;
    }
    pg->cap_user_rdpmc = 1;
    pg->cap_user_time = 1;
    pg->index = PM_TD_RDPMC_SLOTS + 1;
    pg->pmc_width = 48;
    pg->time_mult = 1;  /* ns = TSC: enabled and running are the fake TSC */
    pg->time_shift = 0;
    pmu.page = pg;
    return pg;
}

ssize_t __wrap_read(int fd, void *buf, size_t count)
{
    /* only the leader under test: fd numbers of closed probe events are
     * reused by other files */
    if (fd < 0 || fd != pmu.fd)
        return __real_read(fd, buf, count);
    uint64_t v[3 + 2 * (1 + PM_MAX_EVENTS)] = {0};
    size_t words = 3 + 2 * (1 + (size_t)pmu.nmem);
    {
        pmu.reads++;
        if (pmu.active) {  /* convert and reset (an inactive event: counts as they are) */
            pmu_kernel_update();
            pmu.w = pmu.saved_w = pmu.saved_m = 0;
            memset(pmu.tw, 0, sizeof pmu.tw);
        }
        v[0] = 1 + (uint64_t)pmu.nmem;
        v[1] = v[2] = pmu.tsc;
        v[3] = pmu.k.count[0];
        for (int j = 0; j < pmu.nmem; j++)
            v[5 + 2 * j] = pmu.k.count[1 + pmu.byte[j]];
    }
    if (count < words * 8)
        words = count / 8;
    memcpy(buf, v, words * 8);
    return (ssize_t)(words * 8);
}

/* Slots of retiring work done between the two SLOTS reads of a sample
 * (the PMU keeps counting between instructions); skew_done sums them. */
static uint64_t skew_work, skew_done;
static void work(uint64_t ret, uint64_t bad, uint64_t fe, uint64_t be);

static uint64_t fake_rdpmc(uint32_t counter)
{
    pmu.rdpmc_calls++;
    if (!pmu.active)
        pmu.rdpmc_off++;
    if (counter == PM_TD_RDPMC_SLOTS)
        return pmu.w | 0xabcdull << 48;
    if (counter == PM_TD_RDPMC_METRICS) {
        if (skew_work && pmu.active) {
            work(skew_work, 0, 0, 0);
            skew_done += skew_work;
        }
        return pmu_metrics();
    }
    pmu.bad_index++;
    return 0;
}
static uint64_t fake_rdtsc(void) { return pmu.tsc; }
static const struct pm_rdpmc_hooks fake_hooks = {fake_rdpmc, fake_rdtsc};

/* Work with known true slots per metric (retiring, bad spec, fe, be). */
static void work(uint64_t ret, uint64_t bad, uint64_t fe, uint64_t be)
{
    const uint64_t m[NM] = {ret, bad, fe, be};
    CHECK(pmu.active, "work while off the PMU");
    for (int i = 0; i < NM; i++) {
        pmu.tw[i] += m[i];
        pmu.truth[i] += m[i];
        pmu.w += m[i];
        pmu.truth_slots += m[i];
    }
    pmu.tsc += ret + bad + fe + be;
}

/* Metric m's PERF_METRICS byte after x more slots of it and y of others. */
static uint64_t byte_of(int m, uint64_t x, uint64_t y)
{
    uint64_t w = pmu.w + x + y;
    return w ? ((pmu.tw[m] + x) * 255 + w / 2) / w : 0;
}

/* Schedule-out and in: the kernel converts and saves the registers, the
 * page shows no counter; back in, the registers are restored. */
static void sched_out(void)
{
    pmu_kernel_update();
    pmu.saved_w = pmu.w;
    pmu.saved_m = pmu_metrics();
    pmu.active = 0;
    if (pmu.page) {  /* read() mode maps none */
        pmu.page->index = 0;
        pmu.page->lock++;
    }
}

static void sched_in(void)
{
    pmu.active = 1;
    if (pmu.page) {
        pmu.page->index = PM_TD_RDPMC_SLOTS + 1;
        pmu.page->lock++;
    }
}

/* ---- regions, and what the test expects of them ----------------------------- */

struct expect {
    uint64_t slots, m[NM], conv[NM];
    uint64_t neq;       /* k + 1 + enter term: the windows of the rdpmc mode */
    uint64_t neq_read;  /* read() mode's rule: its own reads in the visit */
};

static struct pm_thread *T;
/* Threads live as long as the process, as in the runtime (its session
 * keeps them). Volatile: a static that is only written may be optimised
 * away, and LeakSanitizer would then see the threads lost. */
static struct pm_thread *volatile kept[4];
static int nkept;

static struct pm_thread *new_thread(const struct pm_eventset *set)
{
    struct pm_thread *t = pm_thread_create(set, -1, 0, 0);
    if (nkept < 4)
        kept[nkept++] = t;
    return t;
}
static struct expect want[64];
static struct {
    int32_t name, node;
    uint64_t slots, m[NM], conv[NM], reads, foreign, wa, charge, skew;
} open_[16];
static int depth;
static uint64_t last_slots, last_ena, last_run;

/* The charge for schedule-outs (rdpmc mode): at a reading that finds the
 * page's lock moved by d since the last reading, every open visit is
 * charged ceil(d/2) x E(W), W the slots since the last reset made on the
 * PMU (the kernel's count then: base0), and the reading is a read(). */
static int mode_rdpmc;
static uint64_t charge, base0;
static uint32_t last_lock;
static struct { uint32_t lock; uint64_t reads, skew; int active; } pre;
static uint64_t last_skew;  /* skew of the last reading if it was a sample, else 0 */
static uint64_t enter_windows(uint64_t w);

static void before_reading(void)
{
    pre.lock = pmu.page ? pmu.page->lock : 0;
    pre.reads = pmu.reads;
    pre.skew = skew_done;
    pre.active = pmu.active;
}

static void after_reading(void)
{
    last_skew = 0;
    if (!mode_rdpmc)
        return;
    if (pmu.reads == pre.reads)  /* a sample: its skew is error of this reading */
        last_skew = skew_done - pre.skew;
    uint32_t d = pre.lock - last_lock;
    if (d)
        charge += (d + 1) / 2 * enter_windows(pmu.k.count[0] - base0);
    if (pmu.reads != pre.reads && pre.active)
        base0 = pmu.k.count[0];
    last_lock = pre.lock;
}

/* after pm_thread_create: its first reading, a read() on the PMU */
static void start_readings(int rdpmc)
{
    mode_rdpmc = rdpmc;
    charge = 0;
    base0 = pmu.k.count[0];
    last_lock = pmu.page ? pmu.page->lock : 0;
}

static uint64_t enter_windows(uint64_t w)
{
    if (w == 0)
        return 0;
    uint64_t twice = 2 * w;  /* w < 2^48 */
    return 1 + (twice + 254) / 255;
}

/* Readings never go back: slots, enabled, running (metric readings may dip
 * within a window; region deltas saturate, checked by the dip region). */
static void check_reading(const uint64_t *r)
{
    unsigned n = (unsigned)T->cs.nevents;
    CHECK(r[0] >= last_slots && r[n] >= last_ena && r[n + 1] >= last_run,
          "reading went back: slots %llu after %llu", (unsigned long long)r[0],
          (unsigned long long)last_slots);
    last_slots = r[0], last_ena = r[n], last_run = r[n + 1];
}

static void enter(const char *name)
{
    int32_t id = pm_name_intern(name, NULL);
    before_reading();
    pm_thread_enter(T, id);
    after_reading();
    check_reading(T->stack + (size_t)(T->depth - 1) * T->frame_words + PM_FRAME_HEADER);
    open_[depth].name = id;
    open_[depth].node = T->cur;
    open_[depth].slots = pmu.truth_slots;
    memcpy(open_[depth].m, pmu.truth, sizeof pmu.truth);
    memcpy(open_[depth].conv, pmu.conv, sizeof pmu.conv);
    open_[depth].reads = pmu.reads;
    open_[depth].foreign = pmu.foreign;
    /* the open window (the saved one while off the PMU) at the sample's
     * first SLOTS read */
    open_[depth].wa = pmu.w - last_skew;
    open_[depth].charge = charge;
    open_[depth].skew = last_skew;
    depth++;
}

static void leave(void)
{
    depth--;
    struct expect *e = &want[open_[depth].node];
    uint64_t k = pmu.reads - open_[depth].reads;  /* read()s strictly inside */
    before_reading();
    pm_thread_exit(T, open_[depth].name);
    after_reading();
    check_reading(T->scratch);
    e->neq += k + 1 + enter_windows(open_[depth].wa) + (charge - open_[depth].charge) +
              open_[depth].skew + last_skew;
    e->neq_read += k - (pmu.foreign - open_[depth].foreign) + 1;
    e->slots += pmu.truth_slots - open_[depth].slots;
    for (int i = 0; i < NM; i++) {
        e->m[i] += pmu.truth[i] - open_[depth].m[i];
        e->conv[i] += pmu.conv[i] - open_[depth].conv[i];
    }
}

static int32_t node_of(const char *name)
{
    int32_t id = pm_name_intern(name, NULL);
    for (int32_t n = 0; n < T->nnodes; n++)
        if (T->nodes[n].name == id)
            return n;
    return -1;
}

static uint64_t acc(int32_t node, int ev) { return T->acc[(size_t)node * T->stride + ev]; }

/* The script, the same in both modes. Slots: R = 2^22. */
static void script(void)
{
    /* short: entered 500 slots into a window, 300 slots long:
     * n_eq = 1 + (1 + ceil(1000/255) = 4) = 6, 300 < 1024 × 6: SHORT */
    work(200, 100, 100, 100);
    enter("short");
    work(100, 100, 50, 50);
    leave();

    /* nested, all samples in rdpmc mode */
    work(1000, 0, 0, 0);
    enter("outer");
    work(3000, 1000, 500, 500);
    enter("inner");
    work(7000, 2000, 500, 500);
    leave();
    work(1000, 1000, 1000, 1000);
    leave();

    /* long: one visit of 10^7 slots; its exit finds the window beyond R */
    enter("long");
    work(4000000, 1000000, 2000000, 3000000);
    leave();

    /* spanning resets: each inner visit leaves the window beyond R */
    enter("span");
    for (int i = 0; i < 3; i++) {
        enter("span_in");
        work(R / 2, R / 4, R / 8, R / 8 + 1000);
        leave();
        work(1000, 2000, 3000, 4000);
    }
    leave();

    /* a peek (the settling thread's read()) inside a visit: it resets the
     * registers, and the window then grows past its old size, so only the
     * peek count tells the owner */
    work(5000, 0, 0, 0);
    enter("peeked");
    work(1000, 1000, 1000, 1000);
    uint64_t buf[3 * PM_MAX_EVENTS];
    pmu.foreign++;
    CHECK(pm_counterset_peek(&T->cs, buf) == 0, "peek failed");
    work(10000, 10000, 10000, 10000);
    leave();

    /* someone else's read() inside a visit: raw SLOTS goes back */
    work(3000, 0, 0, 1000);
    enter("foreign");
    work(2000, 0, 0, 2000);
    pmu.foreign++;
    CHECK(read(T->cs.leader[0], buf, sizeof buf) > 0, "foreign read failed");
    work(50, 20, 20, 10);
    leave();

    /* the event leaves the PMU inside a visit; an inner region is entered
     * while it is off (the page shows index 0) */
    work(2000, 500, 500, 1000);
    enter("offpmu");
    work(4000, 1000, 1000, 2000);
    sched_out();
    enter("offpmu_in");
    sched_in();
    work(4000, 1000, 1000, 2000);
    leave();
    work(400, 100, 100, 200);
    leave();

    /* a metric's share falls inside a visit: its reading dips, the region
     * gets 0 (the truth), never a wrapped difference */
    work(600, 0, 0, 400);
    enter("dip");
    work(0, 0, 0, 10);
    leave();

    /* schedule-outs inside a visit while a metric's share rises and falls
     * across a rounding step: the kernel keeps only upward changes at each
     * schedule-out, and the next read() returns the overshoot. The rdpmc
     * mode charges ceil(d/2) x E(W) for a lock move of d (before_reading) */
    work(R / 2, R / 8, R / 16, R / 16);
    enter("switchy");
    for (int i = 0; i < 4; i++) {
        /* retiring's byte one step up, then (backend work) back down */
        uint64_t b = byte_of(0, 0, 0), x = 1, y = 1;
        while (byte_of(0, x, 0) == b)
            x++;
        while (byte_of(0, x, y) != b)
            y++;
        work(x, 0, 0, 0);
        sched_out();
        sched_in();
        work(0, 0, 0, y);
        sched_out();
        sched_in();
    }
    leave();

    /* the PMU counts on between the two SLOTS reads of a sample (here 37
     * slots of retiring work each time): that skew is charged to the
     * visits that enter or leave at the sample */
    work(2000, 1000, 500, 500);
    skew_work = 37;
    enter("skewed");
    work(3000, 500, 500, 1000);
    enter("skewed_in");
    work(700, 100, 100, 100);
    leave();
    leave();
    skew_work = 0;

    /* a reset at every boundary (beyond R before each): both modes agree */
    work(R, 1, 1, 1);
    enter("reset_each");
    work(R / 2, R / 2, 7, 11);
    enter("reset_each_in");
    work(R, 3, 5, 7);
    leave();
    work(R, 13, 17, 19);
    leave();
    work(R, 0, 0, 0);
}

/* Every region against its ground truth. Returns nothing; fills `got`. */
static void check_regions(const char *mode, int rdpmc, uint64_t got[][1 + NM + 1])
{
    static const char *const names[] = {"short", "outer", "inner", "long", "span", "span_in",
                                        "peeked", "foreign", "offpmu", "offpmu_in", "dip",
                                        "switchy", "skewed", "skewed_in", "reset_each",
                                        "reset_each_in"};
    for (size_t r = 0; r < sizeof names / sizeof *names; r++) {
        int32_t n = node_of(names[r]);
        CHECK(n >= 0, "%s: no region %s", mode, names[r]);
        if (n < 0)
            continue;
        const struct expect *e = &want[n];
        uint64_t windows = T->nodes[n].windows, slots = acc(n, 0);
        CHECK(T->nodes[n].flags == 0, "%s %s: flags %#x", mode, names[r], T->nodes[n].flags);
        CHECK(slots == e->slots, "%s %s: slots %llu, true %llu", mode, names[r],
              (unsigned long long)slots, (unsigned long long)e->slots);
        /* read() mode counts its own reads; that is less than n_eq for a
         * visit with someone else's read() inside (peeked, foreign) or
         * entered while the group is off the PMU (offpmu_in), whose enter
         * read() converts without resetting (read() mode left as it was) */
        uint64_t want_windows = rdpmc ? e->neq : e->neq_read;
        CHECK(windows == want_windows, "%s %s: windows %llu, test's %llu", mode, names[r],
              (unsigned long long)windows, (unsigned long long)want_windows);
        double bound = pm_td_error_bound(e->slots, e->neq, 0);
        /* read() mode charges nothing for schedule-outs (docs/topdown.md) */
        int charged = rdpmc || strcmp(names[r], "switchy") != 0;
        for (int i = 0; i < NM; i++) {
            double err = (double)acc(n, 1 + i) - (double)e->m[i];
            CHECK(!charged || (err <= bound && -err <= bound), "%s %s metric %d: %llu, true %llu, bound %.1f",
                  mode, names[r], i, (unsigned long long)acc(n, 1 + i),
                  (unsigned long long)e->m[i], bound);
            if (!rdpmc)  /* read(): exactly the per-window conversions */
                CHECK(acc(n, 1 + i) == e->conv[i], "%s %s metric %d: %llu, conversions %llu",
                      mode, names[r], i, (unsigned long long)acc(n, 1 + i),
                      (unsigned long long)e->conv[i]);
        }
        int want_short = e->slots < 1024 * want_windows;
        CHECK(pm_td_is_short(slots, windows) == want_short, "%s %s: SHORT %d, want %d", mode,
              names[r], pm_td_is_short(slots, windows), want_short);
        got[r][0] = slots;
        for (int i = 0; i < NM; i++)
            got[r][1 + i] = acc(n, 1 + i);
        got[r][1 + NM] = windows;
    }
    CHECK(pm_td_is_short(acc(node_of("short"), 0), T->nodes[node_of("short")].windows),
          "%s: region 'short' not SHORT", mode);
    CHECK(!pm_td_is_short(acc(node_of("long"), 0), T->nodes[node_of("long")].windows),
          "%s: region 'long' SHORT", mode);
}

enum { NREG = 16 };

static void run(const struct pm_eventset *set, int rdpmc, uint64_t got[][1 + NM + 1])
{
    const char *mode = rdpmc ? "rdpmc" : "read";
    setenv("PERFMARK_TOPDOWN_READ", rdpmc ? "auto" : "read", 1);
    struct pm_config cfg;
    pm_config_read(&cfg);
    CHECK(cfg.topdown_rdpmc == rdpmc, "PERFMARK_TOPDOWN_READ=%s parsed as %d", mode,
          cfg.topdown_rdpmc);
    pm_counterset_td_allow_rdpmc(cfg.topdown_rdpmc);

    memset(want, 0, sizeof want);
    depth = 0;
    last_slots = last_ena = last_run = 0;
    T = new_thread(set);
    CHECK(T && T->cs.state == PM_CS_OPEN, "%s: set did not open", mode);
    if (!T)
        return;
    CHECK((T->cs.td_group == 0) == rdpmc, "%s: TopDown rdpmc group %d", mode, T->cs.td_group);
    start_readings(rdpmc);
    CHECK(!rdpmc || pmu.page, "rdpmc: the slots page was not mapped");

    /* No read() where no reset is due: the nested visits here are samples. */
    script();
    CHECK(depth == 0, "script unbalanced");
    check_regions(mode, rdpmc, got);
    CHECK(pmu.bad_index == 0, "%s: rdpmc of another index (%llu)", mode,
          (unsigned long long)pmu.bad_index);
    CHECK(pmu.rdpmc_off == 0, "%s: rdpmc while the page said off the PMU", mode);
    if (!rdpmc)
        CHECK(pmu.rdpmc_calls == 0, "read mode used rdpmc (%llu calls)",
              (unsigned long long)pmu.rdpmc_calls);
    else  /* both resets behind its back seen: the peek's and the raw read()'s */
        CHECK(T->cs.td.foreign == 2 && T->cs.td.samples > 0, "rdpmc: %llu foreign resets "
              "detected, want 2; %llu samples", (unsigned long long)T->cs.td.foreign,
              (unsigned long long)T->cs.td.samples);
}

/* rdpmc mode: the hot path makes no read() while no reset is due. */
static void check_no_syscall(const struct pm_eventset *set)
{
    pm_counterset_td_allow_rdpmc(1);
    T = new_thread(set);
    if (!T)
        return;
    start_readings(1);
    memset(want, 0, sizeof want);
    depth = 0;
    last_slots = last_ena = last_run = 0;
    work(100, 100, 100, 100);
    enter("warm");  /* the first reading after open is a read(): the base */
    leave();
    uint64_t reads = pmu.reads, calls = pmu.rdpmc_calls;
    for (int i = 0; i < 1000; i++) {
        enter("hot");
        work(10, 10, 10, 10);
        enter("hot_in");
        work(5, 5, 5, 5);
        leave();
        leave();
    }
    CHECK(pmu.reads == reads, "%llu read()s in 4000 boundaries with no reset due",
          (unsigned long long)(pmu.reads - reads));
    /* SLOTS, PERF_METRICS, SLOTS again (the skew between them is error) */
    CHECK(pmu.rdpmc_calls - calls == 3 * 4000, "%llu rdpmc calls for 4000 boundaries, want 12000",
          (unsigned long long)(pmu.rdpmc_calls - calls));
    int32_t hot = node_of("hot");
    CHECK(hot >= 0 && T->nodes[hot].windows == want[hot].neq, "hot: windows %llu, n_eq %llu",
          hot >= 0 ? (unsigned long long)T->nodes[hot].windows : 0ull,
          hot >= 0 ? (unsigned long long)want[hot].neq : 0ull);
    CHECK(hot >= 0 && acc(hot, 0) == want[hot].slots, "hot: slots");
}

/* A reopen (fork child, lost counters) where the mode is not granted again
 * must not carry the old set's window lags into later visits. */
static void check_reopen_without_mode(const struct pm_eventset *set)
{
    pm_counterset_td_allow_rdpmc(1);
    T = new_thread(set);
    if (!T)
        return;
    start_readings(1);
    depth = 0;
    last_slots = last_ena = last_run = 0;
    CHECK(T->cs.td_group == 0, "reopen: the mode was not granted at first");
    work(5000, 1000, 1000, 1000);
    enter("before_reopen");  /* a sample: the lags now differ */
    work(100, 100, 100, 100);
    leave();
    refuse_pages = 1;
    pm_counterset_forget(&T->cs);
    mode_rdpmc = 0;
    int32_t id = pm_name_intern("after_reopen", NULL);
    pm_thread_enter(T, id);  /* reopens: no rdpmc this time */
    work(100, 100, 100, 100);
    pm_thread_exit(T, id);
    refuse_pages = 0;
    int32_t n = node_of("after_reopen");
    CHECK(T->cs.td_group == -1, "reopen: the mode was granted on a page without rdpmc");
    CHECK(n >= 0 && T->nodes[n].windows == 1, "after_reopen: windows %llu, want 1",
          n >= 0 ? (unsigned long long)T->nodes[n].windows : 0ull);
}

int main(void)
{
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    setenv("PERFMARK_QUIET", "1", 1);
    pm_clock_init();
    pm_td_hooks = &fake_hooks;

    /* What `-e topdown` gives on Ice Lake and later: slots leading the four
     * level-1 metric events (the method is set as the model table would). */
    static struct pm_eventset set;
    pm_eventset_build("spr::TOPDOWN:SLOTS,perf_raw::r8000,perf_raw::r8100,"
                      "perf_raw::r8200,perf_raw::r8300", &set);
    CHECK(set.n == 5 && set.ngroups == 1 && set.led_by_event[0], "set: %d events %d groups",
          set.n, set.ngroups);
    set.td_method = PM_TD_METHOD_PERF_METRICS;
    set.td_levels = 1;

    static uint64_t by_read[NREG][1 + NM + 1], by_rdpmc[NREG][1 + NM + 1];
    CHECK(!pm_counterset_td_rdpmc_used(), "rdpmc used before any set opened");
    run(&set, 0, by_read);
    CHECK(!pm_counterset_td_rdpmc_used(), "read mode marked rdpmc as used");
    run(&set, 1, by_rdpmc);
    CHECK(pm_counterset_td_rdpmc_used(), "rdpmc mode not recorded as used");

    /* With a reset at every boundary the two modes give the same counts
     * and windows (the last two regions of the table). */
    for (int r = NREG - 2; r < NREG; r++)
        CHECK(memcmp(by_read[r], by_rdpmc[r], sizeof by_read[r]) == 0,
              "region %d: read and rdpmc differ (slots %llu/%llu, retiring %llu/%llu, "
              "windows %llu/%llu)", r, (unsigned long long)by_read[r][0],
              (unsigned long long)by_rdpmc[r][0], (unsigned long long)by_read[r][1],
              (unsigned long long)by_rdpmc[r][1], (unsigned long long)by_read[r][5],
              (unsigned long long)by_rdpmc[r][5]);
    /* and where rdpmc sampled, it counted more windows than read() for
     * the short region (entered inside an open window) */
    CHECK(by_rdpmc[0][5] > by_read[0][5], "short: rdpmc windows %llu, read %llu",
          (unsigned long long)by_rdpmc[0][5], (unsigned long long)by_read[0][5]);

    check_no_syscall(&set);
    check_reopen_without_mode(&set);

    /* A bad value: one message, auto. */
    setenv("PERFMARK_TOPDOWN_READ", "sometimes", 1);
    struct pm_config cfg;
    pm_config_read(&cfg);
    CHECK(cfg.topdown_rdpmc == 1, "PERFMARK_TOPDOWN_READ=sometimes: %d, want auto",
          cfg.topdown_rdpmc);
    return TEST_DONE("test_td_rdpmc");
}
