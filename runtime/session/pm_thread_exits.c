/* Threads waiting for their exit record (pm_thread_exits.h). */
#define _GNU_SOURCE
#include "pm_thread_exits.h"
#include "pm_exit_counts.h"
#include "pm_flags.h"
#include "pm_log.h"

#include "pm_own_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Expected threads by tid, chained through pm_thread.exit_next in a fixed
 * table: taking records out never allocates (an allocator's lock held by
 * a preempted thread would stall it while the ring overflows). A tid the
 * kernel gives again is appended after its earlier holder; a record is of
 * the last holder born before the kernel wrote it (an earlier holder still
 * expected lost its record: it stays, and the write says so). Only the
 * thread taking records out touches it (under `lock`); a thread ending
 * pushes itself on `ended` without a lock, so that thousands ending at
 * once never queue behind the one taking their records out. */
#define PM_TX_BUCKETS 4096
static struct {
    struct pm_thread *bucket[PM_TX_BUCKETS];
    size_t n;
    uint64_t lost;     /* records the kernel could not write, or not whole */
    uint64_t taken;    /* records taken out */
    struct pm_thread *ended;  /* lock-free stack, newest first */
    pthread_mutex_t lock;
} pm_tx = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct pm_thread **pm_tx_chain(pid_t tid)
{
    return &pm_tx.bucket[((uint32_t)tid * 2654435761u) >> 20 & (PM_TX_BUCKETS - 1)];
}

static void pm_tx_insert(struct pm_thread *t)
{
    struct pm_thread **at = pm_tx_chain(t->tid);
    while (*at)
        at = &(*at)->exit_next;
    t->exit_next = NULL;
    *at = t;
    pm_tx.n++;
}

/* The link pointing at the thread expected with `tid` whose record was
 * written at `time` (0: not said, the first one), or NULL. */
static struct pm_thread **pm_tx_find(pid_t tid, uint64_t time)
{
    struct pm_thread **found = NULL;
    for (struct pm_thread **at = pm_tx_chain(tid); *at; at = &(*at)->exit_next) {
        if ((*at)->tid != tid)
            continue;
        if (time == 0)
            return at;
        if ((*at)->born_ns > time)
            break;  /* born after the record: a later holder, and so is the rest */
        found = at;
    }
    return found;
}

static void pm_tx_remove(struct pm_thread **at)
{
    *at = (*at)->exit_next;
    pm_tx.n--;
}

void pm_thread_exits_expect(struct pm_thread *t)
{
    /* Groups without records (TopDown's, left out of the process set) keep
     * what its own counters saw. */
    memcpy(t->scratch, t->total, t->stride * sizeof *t->scratch);
    t->exit_groups = 0;
    const struct pm_eventset *set = t->set;
    uint32_t recorded = pm_exit_counts_groups();
    for (int g = 0; g < set->ngroups; g++)
        if (!(recorded >> g & 1) && t->scratch[set->n + g] == 0)
            t->scratch[set->n + g] = 1;  /* never counted: running 0 of enabled 1 */
    struct pm_thread *top = __atomic_load_n(&pm_tx.ended, __ATOMIC_RELAXED);
    do
        t->exit_next = top;
    while (!__atomic_compare_exchange_n(&pm_tx.ended, &top, t, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

/* The threads ended so far into the table, in the order they ended (under
 * pm_tx.lock). Called once the ring's head is read: every record below it
 * is of a thread pushed before. */
static void pm_expect_ended(void *arg)
{
    (void)arg;
    struct pm_thread *list = __atomic_exchange_n(&pm_tx.ended, NULL, __ATOMIC_ACQUIRE), *fifo = NULL;
    while (list) {  /* newest first: reverse */
        struct pm_thread *next = list->exit_next;
        list->exit_next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        struct pm_thread *next = fifo->exit_next;
        pm_tx_insert(fifo);
        fifo = next;
    }
}

/* One group's values of one thread (under pm_tx.lock). */
static void pm_on_record(pid_t tid, int g, const uint64_t *reading, uint64_t time, void *arg)
{
    (void)arg;
    pm_tx.taken++;
    struct pm_thread **at = pm_tx_find(tid, time);
    if (at) {
        struct pm_thread *t = *at;
        const struct pm_eventset *set = t->set;
        for (int e = 0; e < set->n; e++)
            if (set->ev[e].group == g)
                t->scratch[e] = reading[e];
        t->scratch[set->n + g] = reading[set->n + g];
        t->scratch[set->n + set->ngroups + g] = reading[set->n + set->ngroups + g];
        t->exit_groups |= 1u << g;
        if (t->exit_groups == pm_exit_counts_groups()) {
            memcpy(t->total, t->scratch, t->stride * sizeof *t->total);
            t->total_flags &= ~(uint32_t)PM_FLAG_LOST_GENERATION;  /* whole, birth to exit */
            t->totals_from = PM_TOTALS_AT_EXIT;
            pm_tx_remove(at);
        }
    }
}

void pm_thread_exits_take(int wait)
{
    if (wait)
        pthread_mutex_lock(&pm_tx.lock);
    else if (pthread_mutex_trylock(&pm_tx.lock) != 0)
        return;
    pm_tx.lost += pm_exit_counts_drain(pm_expect_ended, pm_on_record, NULL, 1);
    pthread_mutex_unlock(&pm_tx.lock);
}

static struct {
    pthread_t thread;
    int running, stopping, failed;
    int wake[2];
    pthread_mutex_t lock;
} pm_tw = {.wake = {-1, -1}, .lock = PTHREAD_MUTEX_INITIALIZER};

static void *pm_watch_main(void *arg)
{
    (void)arg;
    /* Threads ending by thousands at once are as many runnable threads as
     * it competes with for a CPU, and at the program's priority it can
     * wait hundreds of ms for one while the ring overflows (16 000 threads
     * leaving a barrier on 2 CPUs lost 6 000–10 000 records, nice -10
     * included). Where allowed (CAP_SYS_NICE, RLIMIT_RTPRIO), it runs
     * SCHED_FIFO at the lowest real-time priority: it preempts the program
     * for the few µs a wake-up takes (one per ~146 thread ends), and
     * sleeps in poll() otherwise. Elsewhere nice -10 if allowed, else as
     * the program; what the ring cannot hold then is lost, and said. */
    struct sched_param rt = {.sched_priority = 1};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) != 0 &&
        setpriority(PRIO_PROCESS, (id_t)gettid(), -10) != 0) {
        /* neither allowed: as the program */
    }
    struct pollfd p[2] = {{.fd = pm_exit_counts_fd(), .events = POLLIN},
                          {.fd = pm_tw.wake[0], .events = POLLIN}};
    int idle = 0;
    while (!__atomic_load_n(&pm_tw.stopping, __ATOMIC_ACQUIRE)) {
        int r = poll(p, 2, 1000);
        if ((r < 0 && errno != EINTR) || (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)))
            break;  /* the ring is gone: each thread's end takes them out */
        uint64_t before = pm_tx.taken;
        pm_thread_exits_take(1);
        /* At most one round per 5 ms (a CPU ends at most ~250 threads in
         * it; the ring holds ~4 000 records), and a real-time thread must
         * never spin: woken for nothing 100 times in a row, it steps aside
         * for 10 ms. */
        idle = r > 0 && pm_tx.taken == before ? idle + 1 : 0;
        nanosleep(&(struct timespec){0, (idle >= 100 ? 10 : 5) * 1000 * 1000}, NULL);
        if (idle >= 100)
            idle = 0;
    }
    __atomic_store_n(&pm_tw.failed, 1, __ATOMIC_RELAXED);  /* never started again */
    __atomic_store_n(&pm_tw.running, 0, __ATOMIC_RELEASE);
    return NULL;
}

void pm_thread_exits_watch(void)
{
    if (__atomic_load_n(&pm_tw.running, __ATOMIC_ACQUIRE) || pm_tw.failed || !pm_exit_counts_on())
        return;
    pthread_mutex_lock(&pm_tw.lock);
    if (!pm_tw.running && !pm_tw.failed) {
        int ok = pipe2(pm_tw.wake, O_CLOEXEC | O_NONBLOCK) == 0;
        /* it takes no signal: they belong to the program's threads */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pm_tw.stopping = 0;
        ok = ok && pm_own_thread_create(&pm_tw.thread, pm_watch_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (ok) {
            __atomic_store_n(&pm_tw.running, 1, __ATOMIC_RELEASE);
        } else {
            pm_tw.failed = 1;  /* each thread's end takes them out instead */
            if (pm_tw.wake[0] >= 0)
                close(pm_tw.wake[0]), close(pm_tw.wake[1]);
            pm_tw.wake[0] = pm_tw.wake[1] = -1;
        }
    }
    pthread_mutex_unlock(&pm_tw.lock);
}

void pm_thread_exits_unwatch(void)
{
    pthread_mutex_lock(&pm_tw.lock);
    if (pm_tw.wake[0] >= 0) {  /* started (it may have stopped on its own) */
        __atomic_store_n(&pm_tw.stopping, 1, __ATOMIC_RELEASE);
        char c = 1;
        if (write(pm_tw.wake[1], &c, 1) < 0) {
            /* full: it wakes within its period all the same */
        }
        pthread_join(pm_tw.thread, NULL);
        close(pm_tw.wake[0]), close(pm_tw.wake[1]);
        pm_tw.wake[0] = pm_tw.wake[1] = -1;
        __atomic_store_n(&pm_tw.running, 0, __ATOMIC_RELEASE);
    }
    pm_tw.failed = 1;  /* no new watcher after the write began */
    pthread_mutex_unlock(&pm_tw.lock);
}

void pm_thread_exits_ended(void)
{
    if (!__atomic_load_n(&pm_tw.running, __ATOMIC_ACQUIRE))
        pm_thread_exits_take(0);  /* the records of threads that ended before it */
}

/* Whether any expected thread is still in the middle of exiting. */
static int pm_any_exiting(void)
{
    char path[64];
    for (size_t b = 0; b < PM_TX_BUCKETS; b++)
        for (struct pm_thread *t = pm_tx.bucket[b]; t; t = t->exit_next) {
            snprintf(path, sizeof path, "/proc/self/task/%d", (int)t->tid);
            if (access(path, F_OK) == 0)
                return 1;
        }
    return 0;
}

int pm_thread_exits_settle(int wait)
{
    if (!pm_exit_counts_on())
        return 0;
    if (!wait) {  /* the emergency dump: the watcher may be mid-way, never wait for it */
        __atomic_store_n(&pm_tw.stopping, 1, __ATOMIC_RELEASE);
        if (pthread_mutex_trylock(&pm_tx.lock) != 0)
            return 0;
        pthread_mutex_unlock(&pm_tx.lock);
    }
    /* A thread past its end but not yet gone writes its record any moment. */
    for (int attempt = 0; wait && attempt < 200; attempt++) {
        pm_thread_exits_take(1);
        pthread_mutex_lock(&pm_tx.lock);
        int waiting = pm_tx.n > 0 && pm_any_exiting();
        pthread_mutex_unlock(&pm_tx.lock);
        if (!waiting)
            break;
        usleep(1000);
    }
    pm_thread_exits_take(wait);
    if (wait)
        pthread_mutex_lock(&pm_tx.lock);
    else if (pthread_mutex_trylock(&pm_tx.lock) != 0)
        return 0;
    pm_expect_ended(NULL);  /* ended since: their records never came */
    int none = 0;
    for (size_t b = 0; b < PM_TX_BUCKETS; b++) {
        for (struct pm_thread *t = pm_tx.bucket[b]; t; t = t->exit_next) {
            none++;
            if (t->cs.generation) {  /* it opened counters at a region: those totals */
                t->totals_from = PM_TOTALS_FIRST_REGION;
                continue;
            }
            /* no estimate: running 0 of enabled 1 in every group */
            const struct pm_eventset *set = t->set;
            memset(t->total, 0, t->stride * sizeof *t->total);
            for (int g = 0; g < set->ngroups; g++)
                t->total[set->n + g] = 1;
            t->totals_from = PM_TOTALS_NONE;
        }
        pm_tx.bucket[b] = NULL;
    }
    pm_tx.n = 0;
    uint64_t lost = pm_tx.lost;
    pthread_mutex_unlock(&pm_tx.lock);
    if (none && wait)
        pm_msg(PM_MSG_ONCE, "the kernel's record of %d ended thread(s) never came (%llu lost: "
               "too many threads ended at once for its ring): their totals are in the process "
               "total only (those that entered a region: from their first one), the others' "
               "rows read not counted", none, (unsigned long long)lost);
    return none;
}

void pm_thread_exits_after_fork(void)
{
    pthread_mutex_init(&pm_tw.lock, NULL);
    if (pm_tw.wake[0] >= 0)
        close(pm_tw.wake[0]), close(pm_tw.wake[1]);
    pm_tw.wake[0] = pm_tw.wake[1] = -1;
    pm_tw.running = 0;
    pm_tw.failed = 1;  /* the child has no ring of its own */
    pthread_mutex_init(&pm_tx.lock, NULL);
    pm_tx.ended = NULL;
    memset(pm_tx.bucket, 0, sizeof pm_tx.bucket);
    pm_tx.n = 0;
    pm_tx.lost = 0;
}
