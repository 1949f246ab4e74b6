/* bench/sample_cost.c — what one sample costs the sampled thread, the two
 * ways perf_event can deliver it (issue "Sampling": decide on measured
 * cost), against the same work unsampled in the same run:
 *
 *   ring    the kernel writes the sample into a perf ring buffer, which the
 *           thread drains now and then (what perfmark does: pm_sampler.c);
 *   signal  each overflow also sends a signal to the sampled thread
 *           (F_SETOWN_EX / F_OWNER_TID, O_ASYNC), whose handler reads the
 *           interrupted IP from the ucontext.
 *
 * Two events: page-faults (a sample every N faults: the cost of writing a
 * record and, for signal, of delivering it) and cpu-clock (a timer
 * interrupt per sample, which in a VM dominates both).
 *
 * usage: sample_cost [ROUNDS]   (prints ns per sample, medians of ROUNDS)
 * Exit 77 when software perf events cannot be opened here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define RING_PAGES 256
#define FAULT_PAGES 40000  /* page-faults work: one fault per page */
#define SPIN_ITERS 400000000ull  /* cpu-clock work: a fixed loop (~0.4 s) */

static volatile uint64_t sink;
static volatile long nsignals;
static volatile uint64_t last_ip;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void work_faults(void)
{
    size_t len = (size_t)FAULT_PAGES * 4096;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        abort();
    madvise(p, len, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    munmap(p, len);
}

/* A fixed amount of work (not a fixed CPU time: the interrupts' own time
 * counts as the thread's CPU time, and would be hidden). */
static void work_spin(void)
{
    uint64_t x = sink;
    for (uint64_t i = 0; i < SPIN_ITERS; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static void on_sample(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
#if defined(__x86_64__)
    last_ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    last_ip = (uint64_t)((ucontext_t *)uc)->uc_mcontext.pc;
#else
    (void)uc;
#endif
    nsignals++;
}

static int open_sampler(uint64_t config, uint64_t period, int signal)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = config;
    a.sample_period = period;
    a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.disabled = 1;
    if (signal)
        a.wakeup_events = 1;
    else
        a.watermark = 1, a.wakeup_watermark = RING_PAGES * 4096 / 2;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Samples in the ring since `tail`, and the new tail. */
static uint64_t drain(struct perf_event_mmap_page *pg, uint64_t *tail)
{
    const unsigned char *data = (const unsigned char *)pg + 4096;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), n = 0;
    while (*tail < head) {
        const struct perf_event_header *h =
            (const void *)(data + (*tail & (RING_PAGES * 4096 - 1)));
        n += h->type == PERF_RECORD_SAMPLE;
        *tail += h->size;
    }
    __atomic_store_n(&pg->data_tail, *tail, __ATOMIC_RELEASE);
    return n;
}

/* One timed run of `work` sampled `how` (0 none, 1 ring, 2 signal); the
 * samples taken into *samples. */
static double run(void (*work)(void), uint64_t config, uint64_t period, int how, uint64_t *samples)
{
    *samples = 0;
    if (!how) {
        double t0 = now();
        work();
        return now() - t0;
    }
    int fd = open_sampler(config, period, how == 2);
    if (fd < 0)
        return -1;
    size_t len = (size_t)(RING_PAGES + 1) * 4096;
    struct perf_event_mmap_page *pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pg == MAP_FAILED) {
        close(fd);
        return -1;
    }
    if (how == 2) {
        struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
        fcntl(fd, F_SETOWN_EX, &owner);
        fcntl(fd, F_SETSIG, SIGRTMIN + 3);
        fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK);
        nsignals = 0;
    }
    uint64_t tail = 0;
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    double t0 = now();
    work();
    double t = now() - t0;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    *samples = how == 2 ? (uint64_t)nsignals : drain(pg, &tail);
    munmap(pg, len);
    close(fd);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 1000)
        rounds = 7;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN + 3, &sa, NULL);
    struct {
        const char *name;
        void (*work)(void);
        uint64_t config, period;
    } cases[] = {
        {"page-faults@4", work_faults, PERF_COUNT_SW_PAGE_FAULTS, 4},
        {"cpu-clock@100us", work_spin, PERF_COUNT_SW_CPU_CLOCK, 100000},
    };
    printf("# ns of the sampled thread's time per sample, medians of %d interleaved rounds\n",
           rounds);
    printf("%-16s %12s %12s %12s %14s\n", "event", "ring", "signal", "signal-ring", "samples/run");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double *base = calloc((size_t)rounds, sizeof *base), *per[3];
        per[1] = calloc((size_t)rounds, sizeof(double));
        per[2] = calloc((size_t)rounds, sizeof(double));
        uint64_t n = 0;
        for (int r = 0; r < rounds; r++) {
            uint64_t s;
            base[r] = run(cases[c].work, 0, 0, 0, &s);
            for (int how = 1; how <= 2; how++) {
                double t = run(cases[c].work, cases[c].config, cases[c].period, how, &s);
                if (t < 0) {
                    fprintf(stderr, "sample_cost: cannot sample %s here: %s\n", cases[c].name,
                            strerror(errno));
                    return 77;
                }
                per[how][r] = s ? (t - base[r]) / (double)s * 1e9 : 0;
                n = s;
            }
        }
        double ring = median(per[1], rounds), sig = median(per[2], rounds);
        printf("%-16s %12.0f %12.0f %12.0f %14llu\n", cases[c].name, ring, sig, sig - ring,
               (unsigned long long)n);
        free(base), free(per[1]), free(per[2]);
    }
    return 0;
}
