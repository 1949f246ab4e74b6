/*
 * bench_region — what a perfmark region costs, as a ratio against the
 * cheapest thing that could possibly do the same job, measured in the same
 * process and the same run.
 *
 *     PERFMARK_ENABLE=1 PERFMARK_EVENTS=sw   bench_region sw   [SCALE [ROUNDS]]
 *     PERFMARK_ENABLE=1 PERFMARK_EVENTS=none bench_region none [SCALE [ROUNDS]]
 *
 * Mode `sw`: a region enter+exit pair against two raw read()s of a counter
 * group opened here exactly like perfmark opens its own (disabled software
 * dummy leader, task-clock, page-faults, context-switches, cpu-migrations,
 * same read_format). Mode `none`: a pair against two
 * clock_gettime(CLOCK_MONOTONIC). Both modes also check that memory does not
 * grow with visits. bench/run.sh runs both with the right environment.
 *
 * Why absolute figures are not enough: this VM's syscall cost drifts by
 * 10-20% between minutes, so a fixed ns target would be noise. Instead every
 * round times a block of floor pairs and a block of perfmark pairs back to
 * back (alternating which goes first), and we compare medians over rounds.
 *
 * SCALE multiplies every iteration count (0.001 for a smoke test). Results
 * are targets, not asserts: the exit status is 0 whenever the benchmark ran.
 * Exit 2: perfmark is not active or the environment does not match the mode.
 * Exit 77: software perf events cannot be opened here (sw mode only).
 */
#define _GNU_SOURCE
#include <perfmark.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "pm_clock.h" /* pm_cycle_counter: rdtsc, or CNTVCT_EL0 on arm64 */

#define NAMES 100          /* distinct regions in the "100 names" cases */
#define MAX_ROUNDS 101
#define NAME_LEN 32

/* Base iteration counts at SCALE 1 (pairs per timed block). A block lasts
 * ~4 ms: long enough to swamp the clock reads around it, short enough that a
 * burst from another process spoils only a few of the many rounds, which
 * the median then drops. */
#define SW_PAIRS 5000
#define NONE_PAIRS 50000
#define DEFAULT_ROUNDS 21
#define MEM_VISITS 1000000
#define MEM_FIRST 100
#define MEM_LIMIT_BYTES (1024.0 * 1024.0)

#define SW_TARGET 1.10
#define NONE_TARGET 1.30

/* Names built at run time into one array, like a code generator or a
 * wrapper library would; the 1-name cases use a string literal instead. */
static char names[NAMES][NAME_LEN];
static char mem_names[NAMES][NAME_LEN];
static perfmark_region_t handles[NAMES];
static perfmark_region_t handle_one;

static int floor_fd = -1;            /* leader of our own sw group */
static uint64_t read_buf[3 + 2 * 33]; /* as large as perfmark's read buffer */
static volatile uint64_t sink;       /* keeps results observable */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the floors ----------------------------------------------------------- */

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
    return (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* The same group perfmark opens per thread (compare `strace -v -e
 * perf_event_open`): a group of software events only is led by its first
 * event that is not a clock (page-faults), disabled, the other members are
 * enabled, and the whole group is enabled once (pm_counterset.c). */
static int open_floor_group(void)
{
    static const uint64_t configs[] = {PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_TASK_CLOCK,
                                       PERF_COUNT_SW_CONTEXT_SWITCHES,
                                       PERF_COUNT_SW_CPU_MIGRATIONS};
    const uint64_t format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                            PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
    struct perf_event_attr attr;
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = configs[i];
        attr.disabled = i == 0;
        attr.exclude_guest = 1;  /* what libpfm4 encodes for perfmark */
        attr.read_format = format;
        int fd = perf_open(&attr, i == 0 ? -1 : floor_fd);
        if (fd < 0)
            return -1;
        if (i == 0)
            floor_fd = fd;
    }
    if (ioctl(floor_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
        return -1;
    /* A read must return the 4 events. */
    ssize_t got = read(floor_fd, read_buf, sizeof read_buf);
    if (got != (ssize_t)((3 + 2 * 4) * sizeof(uint64_t)) || read_buf[0] != 4) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* ---- the timed loops: one function per case, each returns ns per pair ---- */

/* noinline: every case pays the same call and loop overhead, and the
 * compiler cannot merge or hoist work across the two halves of a round. */
#define BENCH_FN __attribute__((noinline)) static double

BENCH_FN floor_two_reads(long pairs)
{
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        if (read(floor_fd, read_buf, sizeof read_buf) <= 0)
            abort();
        if (read(floor_fd, read_buf, sizeof read_buf) <= 0)
            abort();
    }
    return (now_ns() - t0) / (double)pairs;
}

BENCH_FN floor_two_clock_gettime(long pairs)
{
    struct timespec ts;
    uint64_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += (uint64_t)ts.tv_nsec;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        acc += (uint64_t)ts.tv_nsec;
    }
    double ns = (now_ns() - t0) / (double)pairs;
    sink = acc;
    return ns;
}

/* Informational only: perfmark's region clock is the cycle counter (rdtsc,
 * CNTVCT_EL0 on arm64), so in timer mode this is the part of a pair that is
 * not perfmark's bookkeeping. */
BENCH_FN two_clock_reads(long pairs)
{
    uint64_t acc = 0;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        acc += pm_cycle_counter();
        acc += pm_cycle_counter();
    }
    double ns = (now_ns() - t0) / (double)pairs;
    sink = acc;
    return ns;
}

BENCH_FN pm_one_name(long pairs)
{
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        PERFMARK_REGION_BEGIN("bench/one");
        PERFMARK_REGION_END("bench/one");
    }
    return (now_ns() - t0) / (double)pairs;
}

BENCH_FN pm_many_names(long pairs)
{
    int k = 0;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        PERFMARK_REGION_BEGIN(names[k]);
        PERFMARK_REGION_END(names[k]);
        if (++k == NAMES)
            k = 0;
    }
    return (now_ns() - t0) / (double)pairs;
}

BENCH_FN pm_one_handle(long pairs)
{
    perfmark_region_t h = handle_one;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        perfmark_region_enter(h);
        perfmark_region_exit(h);
    }
    return (now_ns() - t0) / (double)pairs;
}

BENCH_FN pm_many_handles(long pairs)
{
    int k = 0;
    double t0 = now_ns();
    for (long i = 0; i < pairs; i++) {
        perfmark_region_enter(handles[k]);
        perfmark_region_exit(handles[k]);
        if (++k == NAMES)
            k = 0;
    }
    return (now_ns() - t0) / (double)pairs;
}

/* ---- rounds and medians ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_ROUNDS];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

struct bench_case {
    const char *label;               /* padded to line up the output */
    double (*fn)(long pairs);
    double (*floor)(long pairs);
    double target;
    double pm[MAX_ROUNDS], fl[MAX_ROUNDS];
};

static int above_target;

static void report(const char *mode, const struct bench_case *c, int rounds)
{
    double pm = median(c->pm, rounds), fl = median(c->fl, rounds);
    double ratio = pm / fl;
    int pass = ratio <= c->target;
    above_target += !pass;
    printf("%-4s %-22s: %7.1f ns  floor %7.1f ns  ratio %.3f (target <= %.2f)  %s\n",
           mode, c->label, pm, fl, ratio, c->target, pass ? "PASS" : "ABOVE TARGET");
    /* The spread shows how much to trust the line above on this machine. */
    double lo_pm = c->pm[0], hi_pm = c->pm[0], lo_fl = c->fl[0], hi_fl = c->fl[0];
    for (int r = 1; r < rounds; r++) {
        lo_pm = c->pm[r] < lo_pm ? c->pm[r] : lo_pm;
        hi_pm = c->pm[r] > hi_pm ? c->pm[r] : hi_pm;
        lo_fl = c->fl[r] < lo_fl ? c->fl[r] : lo_fl;
        hi_fl = c->fl[r] > hi_fl ? c->fl[r] : hi_fl;
    }
    /* Each round's two blocks ran back to back: the median of per-round
     * ratios is a second, burst-resistant view of the same figure. */
    double per_round[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        per_round[r] = c->pm[r] / c->fl[r];
    printf("#    %-22s  rounds: perfmark %.1f..%.1f ns, floor %.1f..%.1f ns, "
           "median per-round ratio %.3f\n", c->label, lo_pm, hi_pm, lo_fl, hi_fl,
           median(per_round, rounds));
}

/* Warm up (page in the code, build every region node and name-cache slot,
 * settle the CPU frequency), then `rounds` rounds of every case; within a
 * round the floor and perfmark blocks alternate which runs first, so a
 * slow drift of the machine biases neither. */
static void run_cases(const char *mode, struct bench_case *cases, int ncases, long pairs,
                      int rounds)
{
    long warm = pairs / 4 > 0 ? pairs / 4 : 1;
    for (int i = 0; i < ncases; i++) {
        cases[i].floor(warm);
        cases[i].fn(warm);
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < ncases; i++) {
            struct bench_case *c = &cases[i];
            if ((r + i) % 2 == 0) {
                c->fl[r] = c->floor(pairs);
                c->pm[r] = c->fn(pairs);
            } else {
                c->pm[r] = c->fn(pairs);
                c->fl[r] = c->floor(pairs);
            }
        }
    for (int i = 0; i < ncases; i++)
        report(mode, &cases[i], rounds);
}

/* ---- memory ------------------------------------------------------------------ */

static double rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* RSS after the first visit of each of 100 fresh regions against RSS after
 * `visits` visits of the same regions: once a path is known, a visit must
 * not allocate. Fresh names so that nothing the timing did is reused. */
static void memory_check(const char *mode, long visits)
{
    int k = 0;
    long v = 0;
    for (; v < MEM_FIRST; v++) {
        PERFMARK_REGION_BEGIN(mem_names[k]);
        PERFMARK_REGION_END(mem_names[k]);
        if (++k == NAMES)
            k = 0;
    }
    double first = rss_bytes();
    for (; v < visits; v++) {
        PERFMARK_REGION_BEGIN(mem_names[k]);
        PERFMARK_REGION_END(mem_names[k]);
        if (++k == NAMES)
            k = 0;
    }
    double last = rss_bytes();
    double grew = last - first;
    int pass = grew <= MEM_LIMIT_BYTES;
    above_target += !pass;
    printf("%-4s %-22s: %7.2f MiB after %ld visits, %.2f MiB after %ld, grew %+.1f KiB "
           "(target <= 1024 KiB)  %s\n", mode, "RSS, 100 regions", last / 1048576.0, visits,
           first / 1048576.0, (long)MEM_FIRST, grew / 1024.0, pass ? "PASS" : "ABOVE TARGET");
}

/* ---- main ------------------------------------------------------------------------- */

/* Stay on one CPU: a migration in the middle of a block costs a cold cache
 * and, for the task-clock, a cross-CPU read. Take the CPU we are on, unless
 * BENCH_CPU says otherwise. */
static int pin_cpu(void)
{
    const char *env = getenv("BENCH_CPU");
    int cpu = env && *env ? atoi(env) : sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "bench_region: cannot pin to CPU %d (%s); timings will be noisier\n",
                cpu, strerror(errno));
        return -1;
    }
    return cpu;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_region sw|none [SCALE [ROUNDS]]\n"
                    "  run with PERFMARK_ENABLE=1 and PERFMARK_EVENTS set to the mode; "
                    "bench/run.sh does this\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        usage();
        return 2;
    }
    const char *mode = argv[1];
    int sw = strcmp(mode, "sw") == 0;
    if (!sw && strcmp(mode, "none") != 0) {
        usage();
        return 2;
    }
    double scale = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    int rounds = argc > 3 ? atoi(argv[3]) : DEFAULT_ROUNDS;
    if (!(scale > 0) || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_region: SCALE must be > 0 and ROUNDS in 1..%d\n", MAX_ROUNDS);
        return 2;
    }

    if (!perfmark_active()) {
        fprintf(stderr, "bench_region: perfmark is not active: set PERFMARK_ENABLE=1 "
                        "(and PERFMARK_EVENTS=%s), or use bench/run.sh\n", mode);
        return 2;
    }
    /* The counters perfmark reads are chosen by the environment, not by us:
     * a mismatch would compare the wrong things. */
    const char *events = getenv("PERFMARK_EVENTS");
    if (!events || strcmp(events, mode) != 0) {
        fprintf(stderr, "bench_region: mode '%s' needs PERFMARK_EVENTS=%s (it is '%s')\n",
                mode, mode, events ? events : "unset");
        return 2;
    }
    if (sw && open_floor_group() != 0) {
        fprintf(stderr, "bench_region: cannot open the software counter group for the "
                        "floor (%s): skipping sw mode\n", strerror(errno));
        return 77;
    }

    for (int i = 0; i < NAMES; i++) {
        snprintf(names[i], NAME_LEN, "bench/name%03d", i);
        snprintf(mem_names[i], NAME_LEN, "bench/mem%03d", i);
        handles[i] = perfmark_region(names[i]);
    }
    handle_one = perfmark_region("bench/handle");

    int cpu = pin_cpu();
    long base = sw ? SW_PAIRS : NONE_PAIRS;
    long pairs = (long)((double)base * scale);
    long visits = (long)((double)MEM_VISITS * scale);
    if (pairs < 1)
        pairs = 1;
    if (visits < 2 * MEM_FIRST)
        visits = 2 * MEM_FIRST;
    printf("# mode %s, cpu %d, %d rounds x %ld pairs per block, medians over rounds\n", mode,
           cpu, rounds, pairs);
    fflush(stdout);

    memory_check(mode, visits);

    double (*floor)(long) = sw ? floor_two_reads : floor_two_clock_gettime;
    double target = sw ? SW_TARGET : NONE_TARGET;
    struct bench_case cases[] = {
        {.label = "pair, 1 name", .fn = pm_one_name, .floor = floor, .target = target},
        {.label = "pair, 100 names", .fn = pm_many_names, .floor = floor, .target = target},
        {.label = "pair, handle", .fn = pm_one_handle, .floor = floor, .target = target},
        {.label = "pair, 100 handles", .fn = pm_many_handles, .floor = floor,
         .target = target},
    };
    run_cases(mode, cases, (int)(sizeof cases / sizeof *cases), pairs, rounds);

    if (!sw) {
        /* Not a target: how much of the timer-only pair is the clock itself. */
        double r[MAX_ROUNDS];
        for (int i = 0; i < rounds; i++)
            r[i] = two_clock_reads(pairs);
        printf("#    two cycle-counter reads (perfmark's region clock): %.1f ns\n",
               median(r, rounds));
    }
    fflush(stdout);
    return 0;
}
