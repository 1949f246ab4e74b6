/* Caliper loops → perfmark regions (libperfmark-caliper.so).
 *
 * CALI_MARK_LOOP_BEGIN(id, "mainloop") opens the region "mainloop";
 * every CALI_MARK_ITERATION_BEGIN/END pair (C++: each
 * CALI_CXX_MARK_LOOP_ITERATION scope) is one visit of its child region
 * "iteration#mainloop", Caliper's name for the loop's iteration attribute.
 * The iteration count is then the child's visit count, exact, and time in
 * the loop but outside the iterations is the loop region's exclusive time;
 * the iteration numbers themselves are not recorded (one region per
 * iteration number would grow the file with the loop).
 *
 * Caliper's macros reach this through attribute ids: cali_loop_attr_id for
 * the loop and one id per loop name from
 * cali_make_loop_iteration_attribute(). Names are interned once in a table
 * that is read without a lock (a loop may begin in an inner loop, on every
 * thread); the loop that LOOP_END closes is the innermost one of the
 * calling thread, kept on a small per-thread stack. */
#include "caliper/cali.h"
#include "perfmark.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_PUBLIC __attribute__((visibility("default")))

/* Any values but CALI_INV_ID; iteration ids are PM_ITER_ID0 + slot. */
#define PM_LOOP_ID ((cali_id_t)0x70000001)
#define PM_ITER_ID0 ((cali_id_t)0x71000000)
#define PM_LOOP_SLOTS 4096 /* distinct loop names; a power of two */
#define PM_LOOP_DEPTH 64   /* loops open at once on one thread */

PM_PUBLIC cali_id_t cali_loop_attr_id = PM_LOOP_ID;

struct pm_loop_name {
    char *loop; /* "mainloop" */
    char *iter; /* "iteration#mainloop" */
};

static struct pm_loop_name *pm_loops[PM_LOOP_SLOTS];
static int pm_loops_used;
static pthread_mutex_t pm_loops_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread int pm_loop_stack[PM_LOOP_DEPTH];
static __thread int pm_loop_depth;

static void pm_say_once(int *said, const char *what)
{
    if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "perfmark: %s\n", what);
}

static unsigned pm_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* `name`'s slot, or -1 with *free the first empty slot on its probe path
 * (-1 when there is none). */
static int pm_loop_find(const char *name, unsigned h, int *free)
{
    *free = -1;
    for (unsigned k = 0; k < PM_LOOP_SLOTS; k++) {
        unsigned i = (h + k) & (PM_LOOP_SLOTS - 1);
        struct pm_loop_name *e = __atomic_load_n(&pm_loops[i], __ATOMIC_ACQUIRE);
        if (!e) {
            *free = (int)i;
            return -1;
        }
        if (strcmp(e->loop, name) == 0)
            return (int)i;
    }
    return -1;
}

/* Each name zero-padded to a multiple of 8 bytes: the runtime compares
 * names a word at a time (runtime/base/pm_streq.h), and reading the padding is
 * then reading our own memory (valgrind stays quiet). */
static char *pm_padded(const char *prefix, const char *name)
{
    size_t n = strlen(prefix) + strlen(name) + 1;
    char *s = calloc((n + 7) / 8, 8);
    if (s)
        snprintf(s, n, "%s%s", prefix, name);
    return s;
}

static struct pm_loop_name *pm_loop_new(const char *name)
{
    struct pm_loop_name *e = malloc(sizeof *e);
    char *loop = pm_padded("", name), *iter = pm_padded("iteration#", name);
    if (!e || !loop || !iter) {
        free(e);
        free(loop);
        free(iter);
        return NULL;
    }
    e->loop = loop;
    e->iter = iter;
    return e;
}

/* The slot of `name`, entered on first sight; -1 when the table is full
 * (that loop is then not measured). Lookups read published slots without
 * the lock; a slot, once set, never changes. */
static int pm_loop_slot(const char *name)
{
    static int said_full;
    unsigned h = pm_hash(name);
    int free, i = pm_loop_find(name, h, &free);
    if (i >= 0)
        return i;
    pthread_mutex_lock(&pm_loops_lock);
    i = pm_loop_find(name, h, &free);
    if (i < 0 && free >= 0 && pm_loops_used < PM_LOOP_SLOTS - 1) {
        struct pm_loop_name *e = pm_loop_new(name);
        if (e) {
            pm_loops_used++;
            __atomic_store_n(&pm_loops[free], e, __ATOMIC_RELEASE);
            i = free;
        }
    }
    pthread_mutex_unlock(&pm_loops_lock);
    if (i < 0)
        pm_say_once(&said_full, "more than 4095 distinct Caliper loop names: the loops named "
                                "after that are not measured (the regions inside them still are)");
    return i;
}

static const struct pm_loop_name *pm_iter_entry(cali_id_t attr)
{
    if (attr < PM_ITER_ID0 || attr >= PM_ITER_ID0 + PM_LOOP_SLOTS)
        return NULL;
    return __atomic_load_n(&pm_loops[attr - PM_ITER_ID0], __ATOMIC_ACQUIRE);
}

PM_PUBLIC cali_id_t cali_make_loop_iteration_attribute(const char *name)
{
    int slot = name ? pm_loop_slot(name) : -1;
    return slot < 0 ? CALI_INV_ID : PM_ITER_ID0 + (cali_id_t)slot;
}

/* Only the loop attribute means something here: CALI_MARK_LOOP_BEGIN. */
PM_PUBLIC void cali_begin_string(cali_id_t attr, const char *val)
{
    static int said_deep;
    if (attr != PM_LOOP_ID)
        return;
    int slot = val ? pm_loop_slot(val) : -1;
    if (pm_loop_depth >= PM_LOOP_DEPTH) {
        pm_say_once(&said_deep, "Caliper loops nested more than 64 deep on one thread: the "
                                "inner ones are not measured as loops");
        pm_loop_depth++;
        return;
    }
    pm_loop_stack[pm_loop_depth++] = slot;
    if (slot >= 0)
        perfmark_region_begin(pm_loops[slot]->loop);
}

/* Only iteration attributes mean something here: an iteration begins. */
PM_PUBLIC void cali_begin_int(cali_id_t attr, int val)
{
    (void)val; /* the iteration number is not recorded */
    const struct pm_loop_name *e = pm_iter_entry(attr);
    if (e)
        perfmark_region_begin(e->iter);
}

PM_PUBLIC void cali_end(cali_id_t attr)
{
    static int said_unopened;
    if (attr == PM_LOOP_ID) {
        if (pm_loop_depth == 0) {
            pm_say_once(&said_unopened, "a Caliper loop end (CALI_MARK_LOOP_END) on a thread "
                                        "with no loop open: ignored");
            return;
        }
        int depth = --pm_loop_depth;
        if (depth < PM_LOOP_DEPTH && pm_loop_stack[depth] >= 0)
            perfmark_region_end(pm_loops[pm_loop_stack[depth]]->loop);
        return;
    }
    const struct pm_loop_name *e = pm_iter_entry(attr);
    if (e)
        perfmark_region_end(e->iter);
}
