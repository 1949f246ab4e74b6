#define _GNU_SOURCE
#include "pm_series.h"
#include "pm_own_thread.h"
#include "pm_flags.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct pm_series pm_ser;
static pthread_mutex_t pm_ser_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t pm_ser_thread;
static int pm_ser_running, pm_ser_stopping;
static struct pm_counterset *pm_ser_process_set;
static size_t pm_ser_memory, pm_ser_bytes;
static uint32_t pm_ser_tick;        /* readings taken so far, at the asked interval */
static uint64_t *pm_ser_scratch;    /* a reading */
static int32_t pm_ser_cap;          /* room in pm_ser.track */

static size_t pm_row_words(void) { return PM_SERIES_HEADER_WORDS + pm_ser.stride; }

static struct pm_series_row *pm_row(const struct pm_series_track *k, size_t i)
{
    return (struct pm_series_row *)(k->rows + i * pm_row_words());
}

static uint64_t pm_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int pm_series_parse_interval(const char *text, uint64_t *ns, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"", 1000000}};
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    size_t k = 0;
    while (k < sizeof units / sizeof *units && strcmp(end, units[k].unit) != 0)
        k++;
    if (end == text || errno || k == sizeof units / sizeof *units) {
        snprintf(err, errlen, "'%s' is not an interval (e.g. 100ms, 1s)", text);
        return -1;
    }
    if (v > UINT64_MAX / units[k].ns / 4) {
        snprintf(err, errlen, "'%s' is too long an interval", text);
        return -1;
    }
    *ns = v * units[k].ns;
    if (*ns < 1000000) {
        snprintf(err, errlen, "an interval of '%s' is shorter than 1 ms", text);
        return -1;
    }
    return 0;
}

/* ---- rows ----------------------------------------------------------------------- */

/* Merge row b into row a (b comes later). */
static void pm_row_merge(struct pm_series_row *a, const struct pm_series_row *b)
{
    uint64_t *ad = (uint64_t *)(a + 1);
    const uint64_t *bd = (const uint64_t *)(b + 1);
    for (unsigned i = 0; i < pm_ser.stride; i++)
        ad[i] += bd[i];
    a->time_ns = b->time_ns;
    a->node = b->node;
    a->flags |= b->flags;
}

static struct pm_series_track *pm_track_at(int32_t i)
{
    return i < 0 ? &pm_ser.process : pm_ser.track[i];
}

/* Every two adjacent intervals into one, in every track. */
static void pm_decimate(void)
{
    size_t words = pm_row_words();
    pm_ser_bytes = 0;
    for (int32_t t = -1; t < pm_ser.ntracks; t++) {
        struct pm_series_track *k = pm_track_at(t);
        size_t out = 0;
        for (size_t i = 0; i < k->nrows; i++) {
            struct pm_series_row *r = pm_row(k, i);
            r->tick >>= 1;
            if (out > 0 && pm_row(k, out - 1)->tick == r->tick) {
                pm_row_merge(pm_row(k, out - 1), r);
                continue;
            }
            if (out != i)
                memmove(pm_row(k, out), r, words * 8);
            out++;
        }
        k->nrows = out;
        pm_ser_bytes += out * words * 8;
    }
    pm_ser.merges++;
    pm_ser.interval_ns *= 2;
}

/* Stores the row in the track: merged into the last row where that has the
 * same tick (after decimating, if the memory budget is spent), else appended.
 * -1 where no memory was found for it. */
static int pm_store_row(struct pm_series_track *k, struct pm_series_row *row, size_t words)
{
    for (;;) {
        if (k->nrows && pm_row(k, k->nrows - 1)->tick == row->tick) {
            pm_row_merge(pm_row(k, k->nrows - 1), row);
            return 0;
        }
        if (pm_ser_bytes + words * 8 <= pm_ser_memory || pm_ser.merges >= 30)
            break;
        pm_decimate();
        row->tick = pm_ser_tick >> pm_ser.merges;
    }
    if (k->nrows == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        uint64_t *grown = realloc(k->rows, cap * words * 8);
        if (!grown)
            return -1;
        k->rows = grown;
        k->cap = cap;
    }
    memcpy(pm_row(k, k->nrows++), row, words * 8);
    pm_ser_bytes += words * 8;
    return 0;
}

/* Append (or merge into the last row of the same interval) a row to track k:
 * the deltas from k->last to `now`. */
static void pm_append(struct pm_series_track *k, const uint64_t *now, uint64_t gen, int32_t node,
                      uint64_t time_ns)
{
    struct pm_series_row head = {.time_ns = time_ns, .tick = pm_ser_tick >> pm_ser.merges,
                                 .node = node};
    uint64_t delta[PM_SERIES_HEADER_WORDS + 3 * PM_MAX_EVENTS];
    memcpy(delta, &head, sizeof head);
    struct pm_series_row *row = (struct pm_series_row *)delta;
    uint64_t *d = delta + PM_SERIES_HEADER_WORDS;
    if (gen != k->gen) {  /* reopened in between: the deltas would mean nothing */
        row->flags = PM_FLAG_LOST_GENERATION;
        memset(d, 0, pm_ser.stride * 8);
        k->gen = gen;
    } else {
        for (unsigned i = 0; i < pm_ser.stride; i++)
            d[i] = now[i] > k->last[i] ? now[i] - k->last[i] : 0;
    }
    /* A row that found no memory leaves the last reading where it was, so
     * the next row carries its counts too, unless the counters were reopened
     * in between. */
    if (pm_store_row(k, row, pm_row_words()) == 0 || (row->flags & PM_FLAG_LOST_GENERATION))
        memcpy(k->last, now, pm_ser.stride * 8);
}

/* ---- the thread ---------------------------------------------------------------------- */

static void pm_tick(void)
{
    uint64_t now_ns = pm_realtime_ns();
    pm_ser_tick++;
    for (int32_t i = 0; i < pm_ser.ntracks; i++) {
        struct pm_series_track *k = pm_ser.track[i];
        struct pm_thread *t = k->thread;
        if (k->ended)
            continue;
        /* another thread's group: a read() of its fds (counted in td_peeks) */
        if (pm_ser.stride && pm_counterset_peek(&t->cs, pm_ser_scratch) != 0)
            continue;  /* exiting right now: its last row comes with its end */
        pm_append(k, pm_ser_scratch, t->cs.generation, __atomic_load_n(&t->cur, __ATOMIC_RELAXED),
                  now_ns);
    }
    if (pm_ser_process_set && pm_ser.stride && !pm_ser.process.ended &&
        pm_counterset_peek(pm_ser_process_set, pm_ser_scratch) == 0)
        pm_append(&pm_ser.process, pm_ser_scratch, pm_ser.process.gen, -1, now_ns);
}

static void *pm_series_main(void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!__atomic_load_n(&pm_ser_stopping, __ATOMIC_ACQUIRE)) {
        uint64_t ns = (uint64_t)next.tv_nsec + pm_ser.asked_ns;
        next.tv_sec += (time_t)(ns / 1000000000ull);
        next.tv_nsec = (long)(ns % 1000000000ull);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        if (__atomic_load_n(&pm_ser_stopping, __ATOMIC_ACQUIRE))
            break;
        pthread_mutex_lock(&pm_ser_lock);
        pm_tick();
        pthread_mutex_unlock(&pm_ser_lock);
    }
    return NULL;
}

int pm_series_start(uint64_t interval_ns, unsigned stride, struct pm_counterset *process_set,
                    size_t memory)
{
    pm_ser = (struct pm_series){.interval_ns = interval_ns, .asked_ns = interval_ns,
                                .stride = stride};
    pm_ser_memory = memory ? memory : PM_SERIES_MEMORY_DEFAULT;
    pm_ser_process_set = process_set && process_set->state == PM_CS_OPEN ? process_set : NULL;
    pm_ser_scratch = calloc(stride + 1, 8);
    pm_ser.process.last = calloc(stride + 1, 8);  /* the inherited set starts at 0 */
    if (!pm_ser_scratch || !pm_ser.process.last) {
        errno = ENOMEM;
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pm_own_thread_create(&pm_ser_thread, pm_series_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    pm_ser_running = 1;
    return 0;
}

void pm_series_add(struct pm_thread *t)
{
    if (!pm_ser_running)
        return;
    struct pm_series_track *k = calloc(1, sizeof *k);
    if (k && !(k->last = calloc(pm_ser.stride + 1, 8))) {
        free(k);
        k = NULL;
    }
    if (!k)
        return;  /* out of memory: this thread has no series (said nowhere else) */
    k->thread = t;
    memcpy(k->last, t->base, pm_ser.stride * 8);
    k->gen = t->base_generation;
    pthread_mutex_lock(&pm_ser_lock);
    if (pm_ser.ntracks == pm_ser_cap) {
        int32_t cap = pm_ser_cap ? 2 * pm_ser_cap : 16;
        struct pm_series_track **grown = realloc(pm_ser.track, (size_t)cap * sizeof *grown);
        if (grown) {
            pm_ser.track = grown;
            pm_ser_cap = cap;
        }
    }
    if (pm_ser.ntracks < pm_ser_cap)
        pm_ser.track[pm_ser.ntracks++] = k;
    else
        free(k->last), free(k);
    pthread_mutex_unlock(&pm_ser_lock);
}

/* A tick can peek a thread's counters after its final reading was taken and
 * before this end is called (the thread is exiting, or being settled from
 * outside; the process's set on the signal path, where the series thread is
 * not joined): those rows then hold a little more than the totals (perfmark's
 * own end-of-thread work). Take the excess back from the latest rows so that
 * the rows sum to the totals exactly. */
static void pm_take_back(struct pm_series_track *k, const uint64_t *final)
{
    for (unsigned i = 0; i < pm_ser.stride; i++) {
        uint64_t excess = k->last[i] > final[i] ? k->last[i] - final[i] : 0;
        for (size_t r = k->nrows; excess && r-- > 0;) {
            if (pm_row(k, r)->flags & PM_FLAG_LOST_GENERATION)
                break;  /* rows before it count another generation */
            uint64_t *d = (uint64_t *)(pm_row(k, r) + 1);
            uint64_t part = d[i] < excess ? d[i] : excess;
            d[i] -= part;
            excess -= part;
        }
        if (k->last[i] > final[i])
            k->last[i] = final[i];
    }
}

void pm_series_end_thread(struct pm_thread *t)
{
    if (!pm_ser.asked_ns)
        return;
    pthread_mutex_lock(&pm_ser_lock);
    for (int32_t i = 0; i < pm_ser.ntracks; i++) {
        struct pm_series_track *k = pm_ser.track[i];
        if (k->thread != t || k->ended)
            continue;
        if (t->final_read && k->gen == t->base_generation)
            pm_take_back(k, t->base);
        pm_append(k, t->base, t->base_generation, -1, pm_realtime_ns());
        k->ended = 1;
    }
    pthread_mutex_unlock(&pm_ser_lock);
}

void pm_series_end_process(const uint64_t *reading)
{
    if (!pm_ser.asked_ns || !pm_ser_process_set || !reading)
        return;
    pthread_mutex_lock(&pm_ser_lock);
    if (!pm_ser.process.ended) {
        pm_take_back(&pm_ser.process, reading);  /* a tick after the reading (signal path) */
        pm_append(&pm_ser.process, reading, pm_ser.process.gen, -1, pm_realtime_ns());
    }
    pm_ser.process.ended = 1;
    pthread_mutex_unlock(&pm_ser_lock);
}

void pm_series_stop_async(void)
{
    __atomic_store_n(&pm_ser_stopping, 1, __ATOMIC_RELEASE);
}

void pm_series_stop(void)
{
    if (!pm_ser_running)
        return;
    pm_series_stop_async();
    pthread_join(pm_ser_thread, NULL);
    pm_ser_running = 0;
}

const struct pm_series *pm_series_get(void)
{
    return pm_ser.asked_ns ? &pm_ser : NULL;
}

void pm_series_after_fork(void)
{
    pthread_mutex_init(&pm_ser_lock, NULL);
    pm_ser_running = 0;
    pm_ser.asked_ns = 0;  /* the child keeps no series: its thread did not survive */
}
