/* Each thread's counts at its exit, from the kernel (pm_exit_counts.h). */
#define _GNU_SOURCE
#include "pm_exit_counts.h"

#include <errno.h>
#include <linux/perf_event.h>
#include "pm_own_thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* 512 KiB by default (PERFMARK_THREAD_RING_KB): ~4 600 records of a
 * one-group set, fewer where the kernel's per-user budget for rings
 * (perf_event_mlock_kb, shared by every rank of a node) says no. A thread
 * of perfmark's takes them out as the ring fills (pm_thread_exits.c), woken
 * every PM_EXIT_WAKEUP bytes (a quarter of a smaller ring): the ring need
 * only hold what threads ending at once write before it runs. */
#define PM_EXIT_WAKEUP (16 * 1024)

static struct {
    const struct pm_counterset *cs;
    int fd;                          /* the dummy that owns the ring */
    struct perf_event_mmap_page *page;
    unsigned char *data;
    size_t data_bytes, map_bytes;
    uint64_t id[PM_MAX_GROUPS];      /* each group's leader id: a record's first value's */
    uint32_t groups;                 /* the groups with records (id not 0) */
    pid_t pid;
    uint64_t *reading;               /* one decoded group, stride words */
    char why[160];                   /* why pm_exit_counts_open failed */
    pthread_mutex_t lock;
} pm_ex = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static int pm_exit_counts_probe(uint32_t groups);

static void pm_exit_counts_unmap(void)
{
    if (pm_ex.page)
        munmap(pm_ex.page, pm_ex.map_bytes);
    if (pm_ex.fd >= 0)
        close(pm_ex.fd);
    free(pm_ex.reading);
    pm_ex.page = NULL;
    pm_ex.fd = -1;
    pm_ex.reading = NULL;
    pm_ex.cs = NULL;
}

void pm_exit_counts_set_why(const char *why)
{
    snprintf(pm_ex.why, sizeof pm_ex.why, "%s", why);
}

/* The dummy that owns the ring, woken when a quarter of `data_bytes` (at
 * most PM_EXIT_WAKEUP) is waiting, and its ring mapped: 0 or -1. */
static int pm_ring_open(size_t data_bytes, size_t pagesize)
{
    struct perf_event_attr attr;
    pm_leader_attr(&attr, 0);
    attr.disabled = 0;
    attr.read_format = 0;
    attr.watermark = 1;
    attr.wakeup_watermark = (uint32_t)(data_bytes / 4 < PM_EXIT_WAKEUP ? data_bytes / 4
                                                                      : PM_EXIT_WAKEUP);
    pm_counterset_exit_attr(&attr);  /* the records' clock */
    pm_ex.fd = pm_perf_open_task(&attr, 0, -1, -1);
    if (pm_ex.fd < 0)
        return -1;
    size_t bytes = pagesize + data_bytes;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, pm_ex.fd, 0);
    if (m == MAP_FAILED) {
        close(pm_ex.fd);
        pm_ex.fd = -1;
        return -1;
    }
    pm_ex.page = m;
    pm_ex.data = (unsigned char *)m + pagesize;
    pm_ex.data_bytes = data_bytes;
    pm_ex.map_bytes = bytes;
    return 0;
}

int pm_exit_counts_open(const struct pm_counterset *process, size_t ring_bytes)
{
    if (process->state != PM_CS_OPEN || process->inherit != PM_INHERIT_EXIT) {
        snprintf(pm_ex.why, sizeof pm_ex.why, "the process-wide set is not open");
        return -1;
    }
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = 1;  /* the kernel maps a power of two */
    while (pages * 2 * pagesize <= ring_bytes)
        pages *= 2;
    while (pm_ring_open(pages * pagesize, pagesize) != 0 && errno != EINVAL && pages > 1)
        pages /= 2;  /* over the per-user budget (EPERM) or memory: smaller */
    pm_ex.reading = calloc(pm_stride(process->set) + 1, sizeof *pm_ex.reading);
    int ok = pm_ex.page && pm_ex.reading;
    for (int g = 0; g < process->ngroups && ok; g++) {
        int fd = pm_counterset_exit_fd(process, g);
        if (fd < 0) {
            pm_ex.id[g] = 0;  /* left out of the process set: no records */
            continue;
        }
        ok = ioctl(process->leader[g], PERF_EVENT_IOC_ID, &pm_ex.id[g]) == 0 &&
             ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, pm_ex.fd) == 0;
    }
    if (!ok) {
        snprintf(pm_ex.why, sizeof pm_ex.why, "%s", strerror(errno ? errno : ENOMEM));
        pm_exit_counts_unmap();
        return -1;
    }
    uint32_t groups = 0;
    for (int g = 0; g < process->ngroups; g++)
        groups |= pm_ex.id[g] ? 1u << g : 0;
    if (!groups) {
        snprintf(pm_ex.why, sizeof pm_ex.why, "no group of the process-wide set has records "
                 "(TopDown's are left out of it)");
        pm_exit_counts_unmap();
        return -1;
    }
    pm_ex.pid = getpid();
    pm_ex.groups = groups;
    pm_ex.cs = process;
    if (pm_exit_counts_probe(groups) != 0) {
        pm_exit_counts_unmap();
        return -1;
    }
    return 0;
}

static void *pm_probe_main(void *arg)
{
    *(pid_t *)arg = gettid();
    return NULL;
}

struct pm_probe {
    pid_t tid;
    uint32_t groups;
};

static void pm_probe_ready(void *arg) { (void)arg; }

static void pm_probe_record(pid_t tid, int group, const uint64_t *reading, uint64_t time,
                            void *arg)
{
    (void)reading, (void)time;
    struct pm_probe *p = arg;
    if (tid == p->tid)
        p->groups |= 1u << group;
}

/* Not every kernel writes the record (inherit_stat's PERF_RECORD_READ has
 * gone missing at task exit in some releases): a thread of perfmark's is
 * started and joined, and once it is gone from /proc (the kernel writes the
 * record before it releases the task) its whole record must be there. */
static int pm_exit_counts_probe(uint32_t groups)
{
    pthread_t thread;
    struct pm_probe probe = {0, 0};
    int rc = pm_own_thread_create(&thread, pm_probe_main, &probe.tid);
    if (rc != 0) {
        snprintf(pm_ex.why, sizeof pm_ex.why, "a test thread could not start: %s",
                 strerror(rc));
        return -1;
    }
    pthread_join(thread, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)probe.tid);
    for (int wait = 0; wait < 2000 && access(path, F_OK) == 0; wait++)
        usleep(50);  /* at most 100 ms; a few µs are usual */
    pm_exit_counts_drain(pm_probe_ready, pm_probe_record, &probe, 1);
    if (probe.groups == groups)
        return 0;
    snprintf(pm_ex.why, sizeof pm_ex.why, "this kernel wrote no record of a test thread's "
             "counts at its exit");
    return -1;
}

const char *pm_exit_counts_why(void) { return pm_ex.why; }

int pm_exit_counts_on(void) { return __atomic_load_n(&pm_ex.cs, __ATOMIC_ACQUIRE) != NULL; }

int pm_exit_counts_fd(void) { return pm_exit_counts_on() ? pm_ex.fd : -1; }


uint32_t pm_exit_counts_groups(void) { return pm_exit_counts_on() ? pm_ex.groups : 0; }

void pm_exit_counts_forget(void)
{
    pthread_mutex_init(&pm_ex.lock, NULL);  /* a fork may have caught it held */
    pm_ex.page = NULL;  /* perf rings are not copied into a fork child */
    pm_exit_counts_unmap();
}

/* One record copied out of the ring (it may wrap around its end). */
static void pm_ring_copy(void *dst, uint64_t from, size_t n)
{
    size_t at = (size_t)(from % pm_ex.data_bytes);
    size_t first = n < pm_ex.data_bytes - at ? n : pm_ex.data_bytes - at;
    memcpy(dst, pm_ex.data + at, first);
    memcpy((unsigned char *)dst + first, pm_ex.data, n - first);
}

static int pm_group_of(uint64_t id)
{
    for (int g = 0; g < pm_ex.cs->ngroups; g++)
        if (pm_ex.id[g] && pm_ex.id[g] == id)
            return g;
    return -1;
}

uint64_t pm_exit_counts_drain(void (*ready)(void *), pm_exit_counts_fn fn, void *arg, int wait)
{
    if (!pm_exit_counts_on())
        return 0;
    if (wait)
        pthread_mutex_lock(&pm_ex.lock);
    else if (pthread_mutex_trylock(&pm_ex.lock) != 0)
        return 0;
    uint64_t lost = 0;
    uint64_t head = __atomic_load_n(&pm_ex.page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = pm_ex.page->data_tail;
    ready(arg);
    /* header, pid, tid, then nr, enabled, running, {value, id} × nr, time */
    uint64_t rec[1 + 1 + 3 + 2 * (1 + PM_MAX_EVENTS) + 1];
    while (tail < head) {
        struct perf_event_header h;
        pm_ring_copy(&h, tail, sizeof h);
        if (h.size < sizeof h)
            break;  /* never written so by the kernel: stop rather than spin */
        size_t n = h.size < sizeof rec ? h.size : sizeof rec;
        pm_ring_copy(rec, tail, n);
        if (h.type == PERF_RECORD_LOST && n >= 3 * sizeof(uint64_t)) {
            lost += rec[2];  /* header, id, lost */
        } else if (h.type == PERF_RECORD_READ && n >= 5 * sizeof(uint64_t)) {
            uint32_t pid = (uint32_t)rec[1], tid = (uint32_t)(rec[1] >> 32);
            const uint64_t *values = rec + 2;
            size_t words = n / sizeof(uint64_t) - 2;
            int g = words >= 5 ? pm_group_of(values[4]) : -1;  /* the leader's id */
            if (pid != (uint32_t)pm_ex.pid) {
                /* a fork child's thread: its process writes its own file */
            } else if (g < 0 || pm_counterset_decode(pm_ex.cs, g, values, words, pm_ex.reading) != 0) {
                lost++;
            } else {
                size_t group_words = 3 + 2 * (size_t)values[0];  /* decode checked nr */
                uint64_t time = words > group_words ? values[group_words] : 0;
                fn((pid_t)tid, g, pm_ex.reading, time, arg);
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&pm_ex.page->data_tail, tail, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pm_ex.lock);
    return lost;
}
