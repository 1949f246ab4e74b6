/*
 * pm_node.c — node mode (pm_node.h; docs/design.md, "Node mode"): the
 * CPUs' switch-record rings, drained by one thread every interval into
 * per-CPU time of the job, others and idle, per (CPU, pid) time of the
 * others, interval rows and the MPI phase's totals.
 */
#define _GNU_SOURCE
#include "pm_node.h"
#include "pm_own_thread.h"
#include "pm_events.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PM_NODE_PAGES 32                 /* 128 KiB of switch records per CPU */
#define PM_NODE_PERIOD_NS 100000000ull   /* drain period without --interval */
#define PM_NODE_MAX_ROWS (1u << 20)      /* interval rows kept; then intervals merge */
#define PM_NODE_PIDS 4096                /* distinct foreign pids timed */

/* One CPU watched. */
struct pm_ncpu {
    int fd;
    struct perf_event_mmap_page *page;
    unsigned char *data;
    size_t data_bytes, map_bytes;
    uint64_t tail;
    int64_t cur;        /* pid on the CPU since `since`, -1: not known yet */
    uint64_t since;     /* CLOCK_MONOTONIC ns */
    uint64_t last[3];   /* own, foreign, idle at the last interval row */
    uint64_t at_init[4]; /* span, own, foreign, idle at MPI_Init */
};

static struct pm_node_data pm_nd;
static struct pm_ncpu *pm_nc;
static pthread_t pm_node_thread;
static int pm_node_running, pm_node_stopping, pm_node_init_seen;
static pthread_mutex_t pm_node_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pm_node_interval, pm_node_start_ns;
static pid_t pm_own[1024];
static int pm_nown;
static struct {
    int k;          /* the CPU's index */
    int64_t pid;
    uint64_t ns;
} pm_fpid[PM_NODE_PIDS];
static int pm_nfpid;
/* (CPU, pid) → its pm_fpid row + 1 (0: empty), open addressing: a lookup
 * per switch record, which come at up to ~10^5 per second per CPU. */
#define PM_NODE_SLOTS (2 * PM_NODE_PIDS)
static int pm_fslot[PM_NODE_SLOTS];
static pid_t pm_self_pid;  /* getpid() is a system call: once, at the start */
static size_t pm_rows_cap, pm_group = 1, pm_in_group;

static uint64_t pm_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t pm_real_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the job's cpuset ------------------------------------------------------- */

static int pm_parse_cpulist(const char *s, int *cpus, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && n < max; c++)
            cpus[n++] = (int)c;
        s = *end == ',' ? end + 1 : end;
        if (*s == '\n')
            break;
    }
    return n;
}

static int pm_read_cpulist(const char *path, int *cpus, int max)
{
    char buf[4096];
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int n = fgets(buf, sizeof buf, f) ? pm_parse_cpulist(buf, cpus, max) : 0;
    fclose(f);
    return n;
}

int pm_node_cpuset(int *cpus, int max)
{
    char line[4096], path[4200];
    FILE *f = fopen("/proc/self/cgroup", "re");
    int n = 0;
    while (f && !n && fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)  /* cgroup v2 */
            continue;
        line[strcspn(line, "\n")] = '\0';
        char rel[4096];
        snprintf(rel, sizeof rel, "%s", line + 3);
        for (;;) {  /* the nearest cgroup up the tree that says */
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.cpus.effective",
                     strcmp(rel, "/") == 0 ? "" : rel);
            if ((n = pm_read_cpulist(path, cpus, max)) > 0 || !strcmp(rel, "/") || !rel[0])
                break;
            char *slash = strrchr(rel, '/');
            if (!slash)
                break;
            if (slash == rel)
                rel[1] = '\0';
            else
                *slash = '\0';
        }
    }
    if (f)
        fclose(f);
    if (!n)
        n = pm_read_cpulist("/sys/devices/system/cpu/online", cpus, max);
    return n;
}

/* ---- accounting --------------------------------------------------------------- */

static int pm_is_own(int64_t pid)
{
    if (pid == pm_self_pid)
        return 1;
    for (int i = 0; i < pm_nown; i++)
        if (pm_own[i] == pid)
            return 1;
    return 0;
}

/* The row of (CPU k, pid), added on first sight; -1 when the table is full
 * (that process's time stays in the CPU's others, unnamed). */
static int pm_foreign_row(int k, int64_t pid)
{
    uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ (uint64_t)k * 0xc2b2ae3d27d4eb4full;
    for (size_t i = (size_t)(h >> 32) & (PM_NODE_SLOTS - 1);; i = (i + 1) & (PM_NODE_SLOTS - 1)) {
        int row = pm_fslot[i] - 1;
        if (row >= 0 && pm_fpid[row].k == k && pm_fpid[row].pid == pid)
            return row;
        if (row < 0) {  /* at most half full: an empty slot ends every probe */
            if (pm_nfpid == PM_NODE_PIDS)
                return -1;
            pm_fpid[pm_nfpid].k = k;
            pm_fpid[pm_nfpid].pid = pid;
            pm_fslot[i] = ++pm_nfpid;
            return pm_nfpid - 1;
        }
    }
}

/* Credit [since, t) on CPU k to the pid that ran, and move on. */
static void pm_credit(int k, uint64_t t)
{
    struct pm_ncpu *c = &pm_nc[k];
    struct pm_node_cpu *d = &pm_nd.cpu[k];
    if (c->cur >= 0 && t > c->since) {
        uint64_t ns = t - c->since;
        if (c->cur == 0) {
            d->idle_ns += ns;
        } else if (pm_is_own(c->cur)) {
            d->own_ns += ns;
        } else {
            d->foreign_ns += ns;
            int i = pm_foreign_row(k, c->cur);
            if (i >= 0)
                pm_fpid[i].ns += ns;
        }
    }
    if (t > c->since)
        c->since = t;
}

static uint64_t pm_word(const struct pm_ncpu *c, uint64_t pos)
{
    return *(const uint64_t *)(c->data + (pos & (c->data_bytes - 1)));
}

/* A CPU's switch records since the last drain. */
static void pm_drain(int k)
{
    struct pm_ncpu *c = &pm_nc[k];
    uint64_t head = __atomic_load_n(&c->page->data_head, __ATOMIC_ACQUIRE), tail = c->tail;
    while (tail < head) {
        uint64_t w = pm_word(c, tail);
        uint32_t type = (uint32_t)w, misc = (uint32_t)(w >> 32) & 0xffff;
        uint64_t size = w >> 48;
        if (size < 8 || size % 8 || tail + size > head) {
            tail = head;
            break;
        }
        if (type == PERF_RECORD_SWITCH_CPU_WIDE && size >= 32) {
            uint64_t np = pm_word(c, tail + 8);           /* next_prev pid, tid */
            uint64_t id = pm_word(c, tail + 16);          /* sample_id: pid, tid */
            uint64_t t = pm_word(c, tail + 24);           /* sample_id: time */
            int64_t self = (int64_t)(uint32_t)id, other = (int64_t)(uint32_t)np;
            pm_credit(k, t);
            /* out: the next one runs now; in: this one does */
            c->cur = misc & PERF_RECORD_MISC_SWITCH_OUT ? other : self;
        } else if (type == PERF_RECORD_LOST && size >= 24) {
            pm_nd.cpu[k].lost += pm_word(c, tail + 16);
            c->cur = -1;  /* who runs now is not known until the next switch */
        }
        tail += size;
    }
    __atomic_store_n(&c->page->data_tail, tail, __ATOMIC_RELEASE);
    c->tail = tail;
}

/* Every two adjacent interval rows into one (memory ran short). */
static void pm_merge_rows(void)
{
    size_t n = (size_t)pm_nd.ncpus, ticks = pm_nd.nrows / n, out = 0;
    for (size_t j = 0; j + 1 < ticks; j += 2)
        for (size_t k = 0; k < n; k++) {
            struct pm_node_row a = pm_nd.rows[j * n + k], b = pm_nd.rows[(j + 1) * n + k];
            a.time_ns = b.time_ns;
            a.own_ns += b.own_ns, a.foreign_ns += b.foreign_ns, a.idle_ns += b.idle_ns;
            pm_nd.rows[out++] = a;
        }
    if (ticks % 2)  /* an odd last row stays, and starts the next group */
        for (size_t k = 0; k < n; k++)
            pm_nd.rows[out++] = pm_nd.rows[(ticks - 1) * n + k];
    pm_nd.nrows = out;
    pm_group *= 2;
}

/* One interval ends: its rows (per CPU: the time since the last row). */
static void pm_interval_rows(uint64_t real)
{
    size_t n = (size_t)pm_nd.ncpus;
    int fresh = pm_in_group == 0;
    if (fresh && pm_nd.nrows + n > PM_NODE_MAX_ROWS)
        pm_merge_rows();
    if (fresh && pm_nd.nrows + n > pm_rows_cap) {
        size_t cap = pm_rows_cap ? 2 * pm_rows_cap : 64 * n;
        struct pm_node_row *grown = realloc(pm_nd.rows, cap * sizeof *grown);
        if (!grown)
            return;
        pm_nd.rows = grown;
        pm_rows_cap = cap;
    }
    for (size_t k = 0; k < n; k++) {
        struct pm_node_cpu *d = &pm_nd.cpu[k];
        struct pm_ncpu *c = &pm_nc[k];
        struct pm_node_row r = {real, d->cpu, d->own_ns - c->last[0], d->foreign_ns - c->last[1],
                                d->idle_ns - c->last[2]};
        c->last[0] = d->own_ns, c->last[1] = d->foreign_ns, c->last[2] = d->idle_ns;
        if (fresh) {
            pm_nd.rows[pm_nd.nrows + k] = r;
        } else {
            struct pm_node_row *a = &pm_nd.rows[pm_nd.nrows - n + k];
            a->time_ns = r.time_ns;
            a->own_ns += r.own_ns, a->foreign_ns += r.foreign_ns, a->idle_ns += r.idle_ns;
        }
    }
    if (fresh)
        pm_nd.nrows += n;
    pm_in_group = (pm_in_group + 1) % pm_group;
}

static void pm_tick(int rows)
{
    uint64_t now = pm_mono_now();
    for (int k = 0; k < pm_nd.ncpus; k++) {
        pm_drain(k);
        pm_credit(k, now);
        pm_nd.cpu[k].span_ns = now - pm_node_start_ns;
    }
    if (rows)
        pm_interval_rows(pm_real_now());
}

/* Every interval a tick; in between, a CPU whose ring is half full (a
 * switch storm: sched_yield loops, oversubscription) is drained at once,
 * so that records are not lost waiting for the tick. */
static void *pm_node_main(void *arg)
{
    (void)arg;
    int n = pm_nd.ncpus;
    struct pollfd *pf = calloc((size_t)n, sizeof *pf);
    for (int k = 0; pf && k < n; k++)
        pf[k] = (struct pollfd){.fd = pm_nc[k].fd, .events = POLLIN};
    uint64_t period = pm_node_interval ? pm_node_interval : PM_NODE_PERIOD_NS;
    uint64_t next = pm_mono_now() + period;
    while (!__atomic_load_n(&pm_node_stopping, __ATOMIC_ACQUIRE)) {
        uint64_t now = pm_mono_now();
        if (now >= next) {
            pthread_mutex_lock(&pm_node_lock);
            pm_tick(pm_node_interval != 0);
            pthread_mutex_unlock(&pm_node_lock);
            next += period;
            continue;
        }
        int ms = (int)((next - now + 999999) / 1000000);
        if (!pf) {
            struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (poll(pf, (nfds_t)n, ms) <= 0)
            continue;
        pthread_mutex_lock(&pm_node_lock);
        for (int k = 0; k < n; k++)
            if (pf[k].revents & POLLIN)
                pm_drain(k);
        pthread_mutex_unlock(&pm_node_lock);
    }
    free(pf);
    return NULL;
}

/* Who runs on each CPU is known only from a switch there: visit every CPU
 * once (a switch in and out of this thread on it). */
static void pm_visit_cpus(void)
{
    cpu_set_t old, one;
    if (sched_getaffinity(0, sizeof old, &old) != 0)
        return;
    for (int k = 0; k < pm_nd.ncpus; k++) {
        CPU_ZERO(&one);
        CPU_SET(pm_nd.cpu[k].cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) == 0)
            sched_yield();
    }
    sched_setaffinity(0, sizeof old, &old);
}

static void pm_close_cpus(void)
{
    for (int k = 0; pm_nc && k < pm_nd.ncpus; k++) {
        if (pm_nc[k].page)
            munmap(pm_nc[k].page, pm_nc[k].map_bytes);
        if (pm_nc[k].fd >= 0)
            close(pm_nc[k].fd);
        pm_nc[k].page = NULL;
        pm_nc[k].fd = -1;
    }
}

int pm_node_start(const int *cpus, int ncpus, uint64_t interval_ns, char *why, size_t whylen)
{
    pm_nd.cpu = calloc((size_t)ncpus + 1, sizeof *pm_nd.cpu);
    pm_nc = calloc((size_t)ncpus + 1, sizeof *pm_nc);
    if (!pm_nd.cpu || !pm_nc) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    pm_nd.ncpus = ncpus;
    pm_node_interval = interval_ns;
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    for (int k = 0; k < ncpus; k++) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_SOFTWARE;
        a.config = PERF_COUNT_SW_DUMMY;
        a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
        a.sample_id_all = 1;
        a.context_switch = 1;
        a.use_clockid = 1;
        a.clockid = CLOCK_MONOTONIC;
        a.disabled = 1;
        a.watermark = 1;  /* wake the thread at half a ring (pm_node_main) */
        a.wakeup_watermark = (uint32_t)(PM_NODE_PAGES * pagesize / 2);
        struct pm_ncpu *c = &pm_nc[k];
        pm_nd.cpu[k].cpu = cpus[k];
        c->cur = -1;
        c->fd = pm_perf_open_task(&a, -1, cpus[k], -1);
        if (c->fd < 0) {
            int e = errno;
            if (e == EACCES || e == EPERM)
                snprintf(why, whylen, "watching CPU %d for every process needs root, "
                         "CAP_PERFMON or kernel.perf_event_paranoid <= 0 (%s)", cpus[k],
                         strerror(e));
            else
                snprintf(why, whylen, "cannot watch CPU %d: %s", cpus[k], strerror(e));
            pm_close_cpus();
            return -1;
        }
        c->map_bytes = (1 + PM_NODE_PAGES) * pagesize;
        void *m = mmap(NULL, c->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
        if (m == MAP_FAILED) {
            snprintf(why, whylen, "cannot map the switch records of CPU %d: %s", cpus[k],
                     strerror(errno));
            pm_close_cpus();
            return -1;
        }
        c->page = m;
        c->data = (unsigned char *)m + pagesize;
        c->data_bytes = PM_NODE_PAGES * pagesize;
    }
    pm_self_pid = getpid();
    pm_node_start_ns = pm_mono_now();
    for (int k = 0; k < ncpus; k++) {
        pm_nc[k].since = pm_node_start_ns;
        ioctl(pm_nc[k].fd, PERF_EVENT_IOC_ENABLE, 0);
    }
    pm_visit_cpus();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pm_own_thread_create(&pm_node_thread, pm_node_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(why, whylen, "cannot start its thread: %s", strerror(rc));
        pm_close_cpus();
        return -1;
    }
    pm_node_running = 1;
    return 0;
}

void pm_node_set_own(const int *pids, int n)
{
    pthread_mutex_lock(&pm_node_lock);
    if (pm_node_running)  /* the time so far as it was known: others */
        pm_tick(0);
    for (int i = 0; i < n && pm_nown < (int)(sizeof pm_own / sizeof *pm_own); i++)
        pm_own[pm_nown++] = pids[i];
    for (int k = 0; pm_node_running && !pm_node_init_seen && k < pm_nd.ncpus; k++) {
        const struct pm_node_cpu *d = &pm_nd.cpu[k];
        uint64_t *a = pm_nc[k].at_init;
        a[0] = d->span_ns, a[1] = d->own_ns, a[2] = d->foreign_ns, a[3] = d->idle_ns;
    }
    pm_node_init_seen |= pm_node_running;
    pthread_mutex_unlock(&pm_node_lock);
}

/* The MPI phase's totals: since MPI_Init, now that the watch stopped. */
static void pm_mpi_phase(void)
{
    for (int k = 0; pm_node_init_seen && k < pm_nd.ncpus; k++) {
        struct pm_node_cpu *d = &pm_nd.cpu[k];
        const uint64_t *a = pm_nc[k].at_init;
        d->mpi_span_ns = d->span_ns - a[0], d->mpi_own_ns = d->own_ns - a[1];
        d->mpi_foreign_ns = d->foreign_ns - a[2], d->mpi_idle_ns = d->idle_ns - a[3];
    }
}

static int pm_fpid_cmp(const void *a, const void *b)
{
    const struct pm_node_foreign *x = a, *y = b;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

void pm_node_stop_async(void)
{
    __atomic_store_n(&pm_node_stopping, 1, __ATOMIC_RELEASE);
}

void pm_node_stop(void)
{
    if (!pm_node_running)
        return;
    pm_node_stop_async();
    pthread_join(pm_node_thread, NULL);
    pm_node_running = 0;
    pm_tick(0);
    if (pm_node_interval)  /* the time since the last interval: a last row */
        pm_interval_rows(pm_real_now());
    pm_mpi_phase();
    pm_close_cpus();
    /* per CPU, the other processes that took the most time there, named */
    struct pm_node_foreign *all = calloc((size_t)pm_nfpid + 1, sizeof *all);
    pm_nd.top = calloc((size_t)pm_nfpid + 1, sizeof *pm_nd.top);
    if (!all || !pm_nd.top) {
        free(all);
        pm_nd.done = 1;
        return;
    }
    for (int i = 0; i < pm_nfpid; i++) {
        all[i] = (struct pm_node_foreign){.cpu = pm_nd.cpu[pm_fpid[i].k].cpu,
                                          .pid = pm_fpid[i].pid, .ns = pm_fpid[i].ns};
        char path[64];
        snprintf(path, sizeof path, "/proc/%lld/comm", (long long)pm_fpid[i].pid);
        FILE *f = fopen(path, "re");
        if (!f || !fgets(all[i].comm, sizeof all[i].comm, f))
            snprintf(all[i].comm, sizeof all[i].comm, "?");
        all[i].comm[strcspn(all[i].comm, "\n")] = '\0';
        if (f)
            fclose(f);
    }
    qsort(all, (size_t)pm_nfpid, sizeof *all, pm_fpid_cmp);
    /* a rank known only since MPI_Init is no other process: its time before
     * is in the CPU's others (as it was known), not in the list */
    for (int i = 0, run = 0; i < pm_nfpid; i++) {
        if (pm_is_own(all[i].pid))
            continue;
        run = pm_nd.ntop > 0 && all[i].cpu == pm_nd.top[pm_nd.ntop - 1].cpu ? run + 1 : 0;
        if (run < PM_NODE_TOP)
            pm_nd.top[pm_nd.ntop++] = all[i];
    }
    free(all);
    pm_nd.done = 1;
}

const struct pm_node_data *pm_node_get(void)
{
    return pm_nd.ncpus && pm_nd.done ? &pm_nd : NULL;
}

void pm_node_after_fork(void)
{
    /* the child watches nothing: its parent does (the fds are shared) */
    pthread_mutex_init(&pm_node_lock, NULL);
    pm_node_running = 0;
    pm_nd.ncpus = 0;
}
