#define _GNU_SOURCE
#include "pm_thread.h"
#include "pm_clock.h"
#include "pm_flags.h"
#include "pm_log.h"
#include "pm_names.h"
#include "pm_streq.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_FRAME_HEADER 4   /* node|cpu, ticks, generation, reads */

__thread struct pm_thread *pm_self __attribute__((tls_model("initial-exec")));

#define pm_unlikely(x) __builtin_expect(!!(x), 0)
#define pm_likely(x) __builtin_expect(!!(x), 1)

static inline uint64_t *pm_frame(struct pm_thread *t, int32_t level)
{
    return t->stack + (size_t)level * t->frame_words;
}

/* A reading, with thread totals rebased when the generation moved (the
 * counts before the change cannot be compared with those after). */
static inline uint64_t pm_thread_read(struct pm_thread *t, uint64_t *out)
{
    uint64_t gen = t->stride ? pm_counterset_read(&t->cs, out) : t->cs.generation;
    t->reads++;
    if (pm_unlikely(gen != t->base_generation)) {
        /* Counts before the change are lost to the totals (unless the
         * totals were just reset, as in a fork child). */
        if (!t->totals_fresh)
            t->total_flags |= PM_FLAG_LOST_GENERATION;
        t->totals_fresh = 0;
        memcpy(t->base, out, t->stride * sizeof *out);
        t->base_generation = gen;
    }
    return gen;
}

struct pm_thread *pm_thread_create(const struct pm_eventset *set, int bind_cpu, int pinned,
                                   int32_t index)
{
    struct pm_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->index = index;
    pthread_mutex_init(&t->settle_lock, NULL);
    t->tid = gettid();
    t->cpu_first = t->cpu_last = sched_getcpu();
    t->overflow_node = -1;
    t->stride = pm_stride(set);
    t->frame_words = PM_FRAME_HEADER + t->stride;
    t->cur = -1;
    for (int i = 0; i < PM_HANDLE_MEMO; i++)
        t->handle_memo[i].name = -1;
    t->scratch = calloc(t->stride + 1, sizeof *t->scratch);
    t->base = calloc(t->stride + 1, sizeof *t->base);
    t->total = calloc(t->stride + 1, sizeof *t->total);
    if (!t->scratch || !t->base || !t->total) {
        free(t->scratch), free(t->base), free(t->total), free(t);
        return NULL;
    }
    if (pm_counterset_open(&t->cs, set, bind_cpu, 0, pinned) != 0)
        pm_msg(PM_MSG_COUNTERS, "cannot open the counters of thread %d: %s; its regions "
               "get visits and time only", index, strerror(errno));
    t->base_generation = t->cs.generation + 1;  /* force the first rebase */
    t->totals_fresh = 1;
    pm_thread_read(t, t->scratch);
    t->start_ticks = pm_ticks();
    return t;
}

/* ---- region tree ------------------------------------------------------- */

static inline uint64_t pm_child_key(int32_t parent, int32_t name)
{
    return (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)name;
}

static inline uint32_t pm_child_hash(uint64_t key, uint32_t mask)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static int pm_child_grow(struct pm_thread *t)
{
    uint32_t size = t->child_mask ? (t->child_mask + 1) * 2 : 64;
    int32_t *child = malloc(size * sizeof *child);
    uint64_t *key = malloc(size * sizeof *key);
    if (!child || !key) {
        free(child), free(key);
        return -1;
    }
    memset(child, 0xff, size * sizeof *child);
    for (int32_t n = 0; n < t->nnodes; n++) {
        uint64_t k = pm_child_key(t->nodes[n].parent, t->nodes[n].name);
        uint32_t h = pm_child_hash(k, size - 1);
        while (child[h] >= 0)
            h = (h + 1) & (size - 1);
        child[h] = n;
        key[h] = k;
    }
    free(t->child), free(t->child_key);
    t->child = child;
    t->child_key = key;
    t->child_mask = size - 1;
    return 0;
}

static int32_t pm_node_add(struct pm_thread *t, int32_t parent, int32_t name)
{
    if (t->nnodes == t->node_cap) {
        int32_t cap = t->node_cap ? t->node_cap * 2 : 32;
        /* realloc would not keep the 64-byte alignment */
        struct pm_node *nodes = aligned_alloc(64, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return -1;
        if (t->nnodes)
            memcpy(nodes, t->nodes, (size_t)t->nnodes * sizeof *nodes);
        free(t->nodes);
        t->nodes = nodes;
        uint64_t *acc = realloc(t->acc, (size_t)cap * t->stride * sizeof *acc + 1);
        if (!acc)
            return -1;
        t->acc = acc;
        t->node_cap = cap;
    }
    if ((uint32_t)t->nnodes * 2 >= t->child_mask && pm_child_grow(t) != 0)
        return -1;
    int32_t n = t->nnodes++;
    t->nodes[n] = (struct pm_node){.parent = parent, .name = name, .str = pm_name_get(name),
                                   .kind = (uint8_t)pm_name_kind(name),
                                   .depth = parent < 0 ? 0 : t->nodes[parent].depth + 1};
    memset(t->acc + (size_t)n * t->stride, 0, t->stride * sizeof *t->acc);
    return n;
}

/* The thread's "too many regions" bucket: a top-level node that every
 * path beyond the limit is counted in (pm_names.h). */
static int32_t pm_overflow_node(struct pm_thread *t, int32_t name)
{
    if (t->overflow_node < 0) {
        t->overflow_node = pm_node_add(t, -1, pm_name_overflow());
        if (t->overflow_node >= 0 && name != pm_name_overflow())
            pm_msg(PM_MSG_ONCE, "thread %d has more than %d distinct region paths: later new "
                   "paths are counted together in region '" PM_OVERFLOW_NAME "' "
                   "(PERFMARK_MAX_REGIONS raises the limit)", t->index, (int)pm_names_limit());
    }
    return t->overflow_node;
}

/* Slow half of pm_node_find: a path seen for the first time. Allocation
 * may touch errno, which belongs to the application. */
static __attribute__((noinline)) int32_t pm_node_insert(struct pm_thread *t, int32_t parent,
                                                        int32_t name, uint64_t key)
{
    int saved = errno;
    if (pm_unlikely(t->nnodes >= pm_names_limit())) {
        int32_t n = pm_overflow_node(t, name);
        errno = saved;
        return n;
    }
    int32_t n = pm_node_add(t, parent, name);
    if (n >= 0) {
        uint32_t h = pm_child_hash(key, t->child_mask);
        while (t->child[h] >= 0)
            h = (h + 1) & t->child_mask;
        t->child[h] = n;
        t->child_key[h] = key;
    }
    errno = saved;
    return n;
}

/* The node for `name` under `parent`, created on first sight. */
static inline int32_t pm_node_find(struct pm_thread *t, int32_t parent, int32_t name)
{
    uint64_t key = pm_child_key(parent, name);
    if (t->child_mask) {
        for (uint32_t h = pm_child_hash(key, t->child_mask);; h = (h + 1) & t->child_mask) {
            int32_t n = t->child[h];
            if (n < 0)
                break;
            if (t->child_key[h] == key)
                return n;
        }
    }
    return pm_node_insert(t, parent, name, key);
}

/* ---- names --------------------------------------------------------------- */

static inline struct pm_name_slot *pm_name_slot(struct pm_thread *t, const char *name)
{
    uintptr_t p = (uintptr_t)name;
    return &t->cache[((p >> 3) ^ (p >> 11)) & (PM_NAME_CACHE - 1)];
}

/* The caller's pointer may be a reused buffer with new contents: a hit
 * needs the same pointer and the same bytes. */
static inline int pm_name_slot_hit(const struct pm_name_slot *slot, const char *name)
{
    return slot->key == name && pm_streq(name, slot->interned, PM_NAME_MAX);
}

static __attribute__((noinline)) int32_t pm_name_slot_fill(struct pm_name_slot *slot,
                                                           const char *name)
{
    int saved = errno;
    const char *interned;
    int32_t id = pm_name_intern(name, &interned);
    if (id >= 0)
        *slot = (struct pm_name_slot){.key = name, .interned = interned, .id = id,
                                      .memo_parent = INT32_MIN};
    errno = saved;
    return id;
}

int32_t pm_thread_name_id(struct pm_thread *t, const char *name)
{
    struct pm_name_slot *slot = pm_name_slot(t, name);
    return pm_name_slot_hit(slot, name) ? slot->id : pm_name_slot_fill(slot, name);
}

/* ---- enter / exit ------------------------------------------------------------ */

static __attribute__((noinline)) int pm_stack_grow(struct pm_thread *t)
{
    int saved = errno;
    int32_t cap = t->stack_cap ? t->stack_cap * 2 : 16;
    uint64_t *stack = realloc(t->stack, (size_t)cap * t->frame_words * sizeof *stack);
    errno = saved;
    if (!stack)
        return -1;
    t->stack = stack;
    t->stack_cap = cap;
    return 0;
}

static inline int pm_enter_node(struct pm_thread *t, int32_t node)
{
    if (pm_unlikely(node < 0 || (t->depth == t->stack_cap && pm_stack_grow(t) != 0)))
        return -1;
    uint64_t *f = pm_frame(t, t->depth++);
    t->cur = node;
    f[0] = (uint32_t)node | (uint64_t)(uint32_t)sched_getcpu() << 32;
    f[2] = pm_thread_read(t, f + PM_FRAME_HEADER);
    f[3] = t->reads - t->cs.td_enter_lag;  /* lags: TopDown rdpmc windows (pm_counterset.h) */
    f[1] = pm_ticks();  /* last: the region's time excludes our read */
    return 0;
}

int pm_thread_enter(struct pm_thread *t, int32_t name)
{
    /* Most handles are entered under the same parent each time: remember
     * the last (parent → node) per handle and skip the tree hash. */
    struct pm_handle_memo *m = &t->handle_memo[(uint32_t)name & (PM_HANDLE_MEMO - 1)];
    if (pm_unlikely(m->name != name || m->parent != t->cur))
        *m = (struct pm_handle_memo){name, t->cur, pm_node_find(t, t->cur, name)};
    return pm_enter_node(t, m->node);
}

int pm_thread_begin_name(struct pm_thread *t, const char *name)
{
    struct pm_name_slot *slot = pm_name_slot(t, name);
    if (pm_unlikely(!pm_name_slot_hit(slot, name)) && pm_name_slot_fill(slot, name) < 0)
        return -1;
    if (pm_unlikely(slot->memo_parent != t->cur)) {
        slot->memo_node = pm_node_find(t, t->cur, slot->id);
        slot->memo_parent = t->cur;
    }
    return pm_enter_node(t, slot->memo_node);
}

/* Close the innermost open region with a reading taken now. */
static void pm_close_top(struct pm_thread *t, uint32_t extra_flags)
{
    uint64_t ticks = pm_ticks();  /* first: the region's time excludes our read */
    uint64_t *now = t->scratch;
    uint64_t gen = pm_thread_read(t, now);
    int cpu = sched_getcpu();
    uint64_t *f = pm_frame(t, --t->depth);
    int32_t node = (int32_t)(uint32_t)f[0];
    int enter_cpu = (int)(f[0] >> 32);
    struct pm_node *n = &t->nodes[node];
    uint32_t flags = extra_flags;

    n->visits++;
    n->ticks += ticks - f[1];
    /* Each read ends a counting window: TopDown's 8-bit metrics are
     * quantised per window (pm_td_is_short); in the TopDown rdpmc mode the
     * lags turn readings into equivalent windows (pm_counterset.h). */
    n->windows += t->reads - t->cs.td_exit_lag - f[3];
    if (gen == f[2]) {
        const uint64_t *then = f + PM_FRAME_HEADER;
        uint64_t *acc = t->acc + (size_t)node * t->stride;
        unsigned e = (unsigned)t->cs.nevents, g = (unsigned)t->cs.ngroups;
        /* Saturating: in the TopDown rdpmc mode a metric's reading can dip
         * within a window (its 8-bit fraction fell); 0 is then closer to
         * the truth than a wrapped difference. Other counts never dip. */
        for (unsigned i = 0; i < e + 2 * g; i++)
            acc[i] += now[i] > then[i] ? now[i] - then[i] : 0;
        for (unsigned k = 0; k < g; k++) {
            uint64_t enabled = now[e + k] - then[e + k];
            uint64_t running = now[e + g + k] - then[e + g + k];
            if (running < enabled)
                flags |= running ? PM_FLAG_MULTIPLEXED : PM_FLAG_NOT_COUNTED;
        }
    } else {
        flags |= PM_FLAG_LOST_GENERATION;
    }
    if (cpu != enter_cpu)
        flags |= PM_FLAG_MIGRATED;
    n->flags |= flags;
    t->cpu_last = cpu;
    t->cur = n->parent;
}

static int32_t pm_open_level(const struct pm_thread *t, int32_t name)
{
    for (int32_t level = t->depth - 1; level >= 0; level--) {
        const uint64_t *f = t->stack + (size_t)level * t->frame_words;
        if (t->nodes[(int32_t)(uint32_t)f[0]].name == name)
            return level;
    }
    return -1;
}

static int pm_unbalanced_exit(struct pm_thread *t, int32_t name)
{
    int32_t level = pm_open_level(t, name);
    if (level < 0) {
        int32_t node = pm_node_find(t, t->cur, name);
        if (node >= 0)
            t->nodes[node].flags |= PM_FLAG_UNBALANCED;
        pm_msg(PM_MSG_UNBALANCED, "region end '%.200s' on thread %d without a matching "
               "begin: ignored, region flagged UNBALANCED", pm_name_get(name), t->index);
        return -1;
    }
    pm_msg(PM_MSG_UNBALANCED, "region end '%.200s' on thread %d while '%.200s' is still "
           "open inside it: closed the inner region(s) there, flagged UNBALANCED",
           pm_name_get(name), t->index, pm_name_get(t->nodes[t->cur].name));
    while (t->depth - 1 > level)
        pm_close_top(t, PM_FLAG_UNBALANCED);
    pm_close_top(t, 0);
    return -1;
}

int pm_thread_exit(struct pm_thread *t, int32_t name)
{
    if (pm_unlikely(t->depth == 0 || t->nodes[t->cur].name != name))
        return pm_unbalanced_exit(t, name);
    pm_close_top(t, 0);
    return 0;
}

int pm_thread_exit_bytes(struct pm_thread *t, int32_t name, int64_t bytes)
{
    if (pm_unlikely(t->depth == 0 || t->nodes[t->cur].name != name))
        return pm_unbalanced_exit(t, name);
    struct pm_node *n = &t->nodes[t->cur];
    if (bytes >= 0)
        n->bytes += (uint64_t)bytes;
    else if (n->bytes_unknown != UINT32_MAX)
        n->bytes_unknown++;
    pm_close_top(t, 0);
    return 0;
}

int pm_thread_end_name(struct pm_thread *t, const char *name)
{
    /* The balanced case needs no lookup: compare with the innermost name. */
    if (pm_likely(t->depth > 0 && t->nodes[t->cur].kind == PM_KIND_USER &&
                  pm_streq(name, t->nodes[t->cur].str, PM_NAME_MAX))) {
        pm_close_top(t, 0);
        return 0;
    }
    int32_t id = pm_thread_name_id(t, name);
    return id < 0 ? -1 : pm_thread_exit(t, id);
}

/* ---- thread end, fork ---------------------------------------------------------- */

static void pm_settle_totals(struct pm_thread *t, const uint64_t *now, uint64_t gen)
{
    t->end_ticks = pm_ticks();
    if (gen == t->base_generation)
        for (unsigned i = 0; i < t->stride; i++)
            t->total[i] += now[i] - t->base[i];
    memcpy(t->base, now, t->stride * sizeof *now);
}

void pm_thread_finish(struct pm_thread *t, const char *why)
{
    t->open_at_end = t->depth;
    if (t->depth > 0)
        pm_msg(PM_MSG_UNBALANCED, "thread %d %s inside region '%.200s'%s: closed %d open "
               "region(s) there, flagged UNBALANCED", t->index, why,
               pm_name_get(t->nodes[t->cur].name), t->depth > 1 ? " (nested)" : "",
               (int)t->depth);
    while (t->depth > 0)
        pm_close_top(t, PM_FLAG_UNBALANCED);
    uint64_t gen = pm_thread_read(t, t->scratch);
    pm_settle_totals(t, t->scratch, gen);
    t->cpu_last = sched_getcpu();
}

/* The CPU a thread of this process last ran on (field 39 of its stat), or
 * `fallback`: the end placement of a thread that is not ours to ask. */
static int pm_task_cpu(pid_t tid, int fallback)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fallback;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return fallback;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');  /* the command name may hold spaces */
    for (int field = 2; p && field < 39; field++)
        p = strchr(p + 1, ' ');
    int cpu;
    return p && sscanf(p + 1, "%d", &cpu) == 1 ? cpu : fallback;
}

void pm_thread_finish_remote(struct pm_thread *t)
{
    int32_t depth = t->depth;
    t->open_at_end = depth;
    for (int32_t level = 0; level < depth; level++) {
        int32_t node = (int32_t)(uint32_t)pm_frame(t, level)[0];
        t->nodes[node].flags |= PM_FLAG_UNBALANCED;
    }
    if (depth > 0)
        pm_msg(PM_MSG_UNBALANCED, "thread %d is still running inside %d region(s) at exit: "
               "those visits are not counted, regions flagged UNBALANCED", t->index,
               (int)depth);
    t->cpu_last = pm_task_cpu(t->tid, t->cpu_last);
    uint64_t *now = calloc(t->stride + 1, sizeof *now);
    if (!now)
        return;
    /* Reading another thread's counters is allowed (the fds are the
     * process's), but only its owner may close them: a thread exiting right
     * now makes the read fail, and then its totals stay as they were. */
    if (!t->stride || pm_counterset_peek(&t->cs, now) == 0)
        pm_settle_totals(t, now, t->cs.generation);
    else
        t->end_ticks = pm_ticks();
    free(now);
}

void pm_thread_after_fork(struct pm_thread *t)
{
    pm_counterset_forget(&t->cs);
    for (int32_t n = 0; n < t->nnodes; n++) {
        t->nodes[n].visits = 0;
        t->nodes[n].ticks = 0;
        t->nodes[n].flags = 0;
        t->nodes[n].bytes = 0;
        t->nodes[n].bytes_unknown = 0;
        t->nodes[n].windows = 0;
    }
    memset(t->acc, 0, (size_t)t->nnodes * t->stride * sizeof *t->acc);
    memset(t->total, 0, t->stride * sizeof *t->total);
    t->total_flags = 0;
    t->totals_fresh = 1;
    t->start_ticks = pm_ticks();
    t->tid = gettid();
    t->index = 0;
}

int pm_thread_has_data(const struct pm_thread *t)
{
    for (int32_t n = 0; n < t->nnodes; n++)
        if (t->nodes[n].visits || t->nodes[n].flags)
            return 1;
    return t->depth > 0;
}
