#define _GNU_SOURCE
#include "pm_thread.h"
#include "pm_proc_counts.h"
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

/* Exported for the MPI wrapper libraries' inline poll path (pm_auto.h). */
__attribute__((visibility("default"))) __thread struct pm_thread *pm_self
    __attribute__((tls_model("initial-exec")));

/* Everything counts, nothing is throttled, until the session sets it. */
struct pm_visit_policy pm_policy;
const struct pm_sample_spec *pm_sampling;

#define pm_unlikely(x) __builtin_expect(!!(x), 0)
#define pm_likely(x) __builtin_expect(!!(x), 1)

static inline uint64_t *pm_frame(struct pm_thread *t, int32_t level)
{
    return t->stack + (size_t)level * t->frame_words;
}

static inline int32_t pm_frame_node(const uint64_t *f) { return (int32_t)(uint32_t)f[PM_F_NODE]; }
static inline int pm_frame_cpu(const uint64_t *f) { return (int)(f[PM_F_NODE] >> 32 & 0xffffff); }
static inline unsigned pm_frame_mode(const uint64_t *f) { return (unsigned)(f[PM_F_NODE] >> 56); }

static inline uint64_t pm_frame_head(int32_t node, int cpu, unsigned mode)
{
    return (uint32_t)node | (uint64_t)((uint32_t)cpu & 0xffffff) << 32 | (uint64_t)mode << 56;
}

/* Samples taken since the last marker belong to the innermost region as it
 * is now: credit them before it changes (pm_sampler.h). One compare when
 * nothing is pending, and when not sampling. */
static inline void pm_sample_catch_up(struct pm_thread *t)
{
    if (pm_unlikely(pm_sampler_pending(&t->smpc)))
        pm_sampler_drain_owner(&t->smp);
}

/* A reading, with thread totals rebased when the generation moved (the
 * counts before the change cannot be compared with those after). Without
 * events there is nothing to read, and no read is counted. */
static inline uint64_t pm_thread_read(struct pm_thread *t, uint64_t *out)
{
    if (!t->stride)
        return t->cs.generation;
    uint64_t gen = pm_counterset_read(&t->cs, out);
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

/* What every thread's state starts with, counters not yet open. */
struct pm_thread *pm_thread_alloc(const struct pm_eventset *set, int32_t index, pid_t tid)
{
    struct pm_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->index = index;
    t->set = set;
    pthread_mutex_init(&t->settle_lock, NULL);
    t->tid = tid;
    t->pin_slot = -1;
    t->overflow_node = -1;
    t->stride = pm_stride(set);
    t->frame_words = PM_FRAME_HEADER + t->stride;
    t->cur = -1;
    t->throttle_warmup = pm_policy.warmup ? pm_policy.warmup : UINT64_MAX;
    t->throttle_ticks = pm_policy.limit_ticks;
    t->poll_countdown = PM_POLL_SAMPLE;
    t->rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)t->tid;
    t->scratch = calloc(t->stride + 1, sizeof *t->scratch);
    t->base = calloc(t->stride + 1, sizeof *t->base);
    t->total = calloc(t->stride + 1, sizeof *t->total);
    if (!t->scratch || !t->base || !t->total) {
        free(t->scratch), free(t->base), free(t->total), free(t);
        return NULL;
    }
    return t;
}

struct pm_thread *pm_thread_create(const struct pm_eventset *set, int bind_cpu, int pinned,
                                   int32_t index)
{
    struct pm_thread *t = pm_thread_alloc(set, index, gettid());
    if (!t || pm_thread_tables(t) != 0) {
        pm_thread_free_unstarted(t);
        return NULL;
    }
    pm_thread_start(t, bind_cpu, pinned);
    return t;
}

/* Who the thread is, where it runs, its sampler. */
static void pm_thread_begin(struct pm_thread *t)
{
    t->tid = gettid();
    t->rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)t->tid;
    t->cpu_first = t->cpu_last = sched_getcpu();
    if (pm_sampler_open(&t->smp, t->tid, &t->smpc, &t->cur, pm_sampling) != 0)
        pm_msg(PM_MSG_COUNTERS, "cannot sample thread %d: %s; its regions get counts but no "
               "samples", t->index, strerror(errno));
}

void pm_thread_open_counters(struct pm_thread *t, int bind_cpu, int pinned)
{
    if (pm_counterset_open(&t->cs, t->set, bind_cpu, 0, pinned) != 0)
        pm_msg(PM_MSG_COUNTERS, "cannot open the counters of thread %d: %s; its regions "
               "get visits and time only", t->index, strerror(errno));
    t->base_generation = t->cs.generation + 1;  /* force the first rebase */
    t->totals_fresh = 1;
    pm_thread_read(t, t->scratch);
}

void pm_thread_start(struct pm_thread *t, int bind_cpu, int pinned)
{
    pm_thread_begin(t);
    pm_thread_open_counters(t, bind_cpu, pinned);
    t->start_ticks = pm_ticks();
}

void pm_thread_start_by_exit(struct pm_thread *t)
{
    t->born_ns = pm_mono_ns();  /* after the kernel gave it its tid */
    pm_thread_begin(t);
    t->by_exit = 1;
    t->totals_from = PM_TOTALS_NONE;  /* until its record or the write says */
    t->start_ticks = pm_ticks();
}

int pm_thread_tables(struct pm_thread *t)
{
    if (t->cache)
        return 0;
    /* one block: the cache's 32-byte slots first, the memo after */
    char *block = calloc(1, PM_NAME_CACHE * sizeof *t->cache +
                                PM_HANDLE_MEMO * sizeof *t->handle_memo);
    if (!block)
        return -1;
    struct pm_handle_memo *memo =
        (struct pm_handle_memo *)(block + PM_NAME_CACHE * sizeof *t->cache);
    for (int i = 0; i < PM_HANDLE_MEMO; i++)
        memo[i].name = -1;
    t->handle_memo = memo;
    t->cache = (struct pm_name_slot *)block;
    return 0;
}

void pm_thread_release_tables(struct pm_thread *t)
{
    free(t->cache);
    t->cache = NULL;
    t->handle_memo = NULL;
}

void pm_thread_free_unstarted(struct pm_thread *t)
{
    if (!t)
        return;
    pm_thread_release_tables(t);
    free(t->scratch), free(t->base), free(t->total);
    pthread_mutex_destroy(&t->settle_lock);
    free(t);
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

static int32_t pm_node_add(struct pm_thread *t, int32_t parent, int32_t name, uint64_t key)
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
        struct pm_node_cold *cold = realloc(t->cold, (size_t)cap * sizeof *cold);
        if (!cold)
            return -1;
        t->cold = cold;
        t->node_cap = cap;
    }
    if ((uint32_t)t->nnodes * 2 >= t->child_mask && pm_child_grow(t) != 0)
        return -1;
    int32_t n = t->nnodes++;
    int poll = pm_name_is_poll(name) && pm_policy.polls;
    t->nodes[n] = (struct pm_node){.parent = parent, .name = name, .str = pm_name_get(name),
                                   .kind = (uint8_t)pm_name_kind(name),
                                   .mode = poll ? PM_MODE_POLL : PM_MODE_COUNTED,
                                   .flags = poll && t->stride ? PM_FLAG_TIMER_ONLY : 0,
                                   .depth = parent < 0 ? 0 : t->nodes[parent].depth + 1};
    t->cold[n] = (struct pm_node_cold){0};
    memset(t->acc + (size_t)n * t->stride, 0, t->stride * sizeof *t->acc);
    uint32_t h = pm_child_hash(key, t->child_mask);
    while (t->child[h] >= 0)
        h = (h + 1) & t->child_mask;
    t->child[h] = n;
    t->child_key[h] = key;
    return n;
}

static inline int32_t pm_node_find(struct pm_thread *t, int32_t parent, int32_t name);

static inline int pm_is_bucket(const struct pm_thread *t, int32_t node)
{
    return node >= 0 && t->nodes[node].name == pm_name_overflow();
}

/* Slow half of pm_node_find: a path seen for the first time. Beyond the
 * region limit (pm_names.h) a new path goes to its parent's "too many
 * regions" bucket, a child of that parent, so that the tree and every
 * enclosing region's counts stay right at any depth; anything new inside a
 * bucket stays in that bucket. Buckets may go past the limit: at most one
 * per region, so memory stays bounded. Allocation may touch errno, which
 * belongs to the application. */
static __attribute__((noinline)) int32_t pm_node_insert(struct pm_thread *t, int32_t parent,
                                                        int32_t name, uint64_t key)
{
    int saved = errno;
    int32_t n;
    if (pm_is_bucket(t, parent)) {
        n = parent;
    } else if (name != pm_name_overflow() && t->nnodes >= pm_names_limit()) {
        if (t->overflow_node < 0)
            pm_msg(PM_MSG_ONCE, "thread %d has more than %d distinct region paths: later new "
                   "paths are counted in a region '" PM_OVERFLOW_NAME "' under their parent "
                   "(PERFMARK_MAX_REGIONS raises the limit)", t->index, (int)pm_names_limit());
        n = pm_node_find(t, parent, pm_name_overflow());
        t->overflow_node = n;
    } else {
        n = pm_node_add(t, parent, name, key);
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

/* xorshift64: the stride to the next timed poll visit, 1 .. 2·PM_POLL_SAMPLE - 1,
 * so that a loop with a period of its own cannot alias with the sampling. */
static inline uint64_t pm_poll_stride(struct pm_thread *t)
{
    uint64_t x = t->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->rng = x;
    return 1 + x % (2 * PM_POLL_SAMPLE - 1);
}

/* A visit that takes no reading: a throttled region, a poll, or a begin
 * folded into the bucket that is already innermost. */
static __attribute__((noinline)) int pm_enter_uncounted(struct pm_thread *t, int32_t node,
                                                         int32_t name)
{
    struct pm_node *n = &t->nodes[node];
    unsigned mode = n->mode;
    if (node == t->cur) {
        mode = PM_FRAME_FOLDED;
    } else if (mode == PM_MODE_POLL && n->visits >= t->throttle_warmup &&
               --t->poll_countdown != 0) {
        /* After its warm-up a poll is counted, and timed once in a while. */
        n->visits++;
        n->untimed++;
        return PM_ENTER_COUNTED;
    } else if (mode == PM_MODE_POLL && t->poll_countdown == 0) {
        t->poll_countdown = pm_poll_stride(t);
    }
    uint64_t *f = pm_frame(t, t->depth++);
    t->cur = node;
    f[PM_F_NODE] = pm_frame_head(node, 0, mode);
    f[PM_F_NAME] = (uint32_t)name;
    f[PM_F_TICKS] = pm_ticks();
    return 0;
}

static inline int pm_enter_node(struct pm_thread *t, int32_t node, int32_t name)
{
    pm_sample_catch_up(t);
    if (pm_unlikely(node < 0 || (t->depth == t->stack_cap && pm_stack_grow(t) != 0)))
        return -1;
    if (pm_unlikely(t->nodes[node].mode != PM_MODE_COUNTED || node == t->cur))
        return pm_enter_uncounted(t, node, name);
    uint64_t *f = pm_frame(t, t->depth++);
    t->cur = node;
    f[PM_F_NODE] = pm_frame_head(node, sched_getcpu(), PM_MODE_COUNTED);
    f[PM_F_NAME] = (uint32_t)name;
    f[PM_F_GEN] = pm_thread_read(t, f + PM_FRAME_HEADER);
    f[PM_F_READS] = t->reads;
    f[PM_F_WINDOW] = t->reads - t->cs.td_enter_lag;  /* lags: TopDown rdpmc windows (pm_counterset.h) */
    f[PM_F_TICKS] = pm_ticks();  /* last: the region's time excludes our read */
    return 0;
}

int pm_thread_enter(struct pm_thread *t, int32_t name)
{
    /* Most handles are entered under the same parent each time: remember
     * the last (parent → node) per handle and skip the tree hash. */
    struct pm_handle_memo *m = &t->handle_memo[(uint32_t)name & (PM_HANDLE_MEMO - 1)];
    if (pm_unlikely(m->name != name || m->parent != t->cur))
        *m = (struct pm_handle_memo){name, t->cur, pm_node_find(t, t->cur, name)};
    return pm_enter_node(t, m->node, name);
}

int pm_thread_place(struct pm_thread *t, int32_t name)
{
    int32_t node = pm_node_find(t, t->cur, name);
    if (node < 0 || (t->depth == t->stack_cap && pm_stack_grow(t) != 0))
        return -1;
    pm_sample_catch_up(t);
    uint64_t *f = pm_frame(t, t->depth++);
    t->cur = node;
    f[PM_F_NODE] = pm_frame_head(node, 0, PM_FRAME_PLACED);
    f[PM_F_NAME] = (uint32_t)(-1 - name);
    f[PM_F_TICKS] = pm_ticks();
    return 0;
}

int pm_thread_unplace(struct pm_thread *t)
{
    if (t->depth == 0 || pm_frame_mode(pm_frame(t, t->depth - 1)) != PM_FRAME_PLACED)
        return -1;
    pm_sample_catch_up(t);
    t->depth--;
    t->cur = t->depth > 0 ? pm_frame_node(pm_frame(t, t->depth - 1)) : -1;
    return 0;
}

int32_t pm_thread_path(const struct pm_thread *t, int32_t *names, int32_t max)
{
    int32_t n = 0;
    for (int32_t node = t->cur; node >= 0; node = t->nodes[node].parent)
        n++;
    int32_t i = n;
    for (int32_t node = t->cur; node >= 0; node = t->nodes[node].parent)
        if (--i < max)
            names[i] = t->nodes[node].name;
    return n;
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
    return pm_enter_node(t, slot->memo_node, slot->id);
}

/* The throttle (docs/design.md, "Which visits read counters"): once, at
 * the end of a region's warm-up, a region whose mean visit is shorter than
 * K counter reads goes on with visits and time only. */
static __attribute__((noinline)) void pm_throttle_judge(struct pm_thread *t, int32_t node)
{
    struct pm_node *n = &t->nodes[node];
    if (n->ticks >= n->visits * t->throttle_ticks)
        return;
    n->mode = PM_MODE_TIMER;
    n->flags |= PM_FLAG_THROTTLED;
    t->cold[node].throttled_from = n->visits + 1;
}

/* The innermost open region below the top frame, after it is popped. */
static inline void pm_pop(struct pm_thread *t)
{
    t->depth--;
    t->cur = t->depth > 0 ? pm_frame_node(pm_frame(t, t->depth - 1)) : -1;
}

/* Close a frame that took no reading: time only, or nothing (folded). */
static __attribute__((noinline)) void pm_close_uncounted(struct pm_thread *t, uint64_t ticks,
                                                         uint32_t extra_flags)
{
    uint64_t *f = pm_frame(t, t->depth - 1);
    int32_t node = pm_frame_node(f);
    struct pm_node *n = &t->nodes[node];
    if (pm_frame_mode(f) == PM_FRAME_PLACED) {  /* closed around the thread at its end */
        pm_pop(t);
        return;
    }
    if (pm_frame_mode(f) == PM_FRAME_FOLDED) {
        t->cold[node].folded++;
    } else {
        n->visits++;
        n->ticks += ticks - f[PM_F_TICKS];
    }
    n->flags |= extra_flags;
    pm_pop(t);
}

/* Close the innermost open region with a reading taken now. */
static void pm_close_top(struct pm_thread *t, uint32_t extra_flags)
{
    uint64_t ticks = pm_ticks();  /* first: the region's time excludes our read */
    pm_sample_catch_up(t);
    uint64_t *f = pm_frame(t, t->depth - 1);
    if (pm_unlikely(pm_frame_mode(f) != PM_MODE_COUNTED)) {
        pm_close_uncounted(t, ticks, extra_flags);
        return;
    }
    uint64_t *now = t->scratch;
    uint64_t reads_before = t->reads;
    uint64_t gen = pm_thread_read(t, now);
    int cpu = sched_getcpu();
    int32_t node = pm_frame_node(f);
    struct pm_node *n = &t->nodes[node];
    uint32_t flags = extra_flags;

    n->visits++;
    n->ticks += ticks - f[PM_F_TICKS];
    n->reads += reads_before - f[PM_F_READS];
    /* Each read ends a counting window: TopDown's 8-bit metrics are
     * quantised per window (pm_td_is_short); in the TopDown rdpmc mode the
     * lags turn readings into equivalent windows (pm_counterset.h). */
    n->windows += t->reads - t->cs.td_exit_lag - f[PM_F_WINDOW];
    if (gen == f[PM_F_GEN]) {
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
    if (cpu != pm_frame_cpu(f))
        flags |= PM_FLAG_MIGRATED;
    n->flags |= flags;
    t->cpu_last = cpu;
    if (pm_unlikely(n->visits == t->throttle_warmup))
        pm_throttle_judge(t, node);
    pm_pop(t);
}

static inline int32_t pm_frame_name(const uint64_t *f) { return (int32_t)(uint32_t)f[PM_F_NAME]; }

static int32_t pm_open_level(const struct pm_thread *t, int32_t name)
{
    for (int32_t level = t->depth - 1; level >= 0; level--)
        if (pm_frame_name(t->stack + (size_t)level * t->frame_words) == name)
            return level;
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

static inline int pm_top_is(struct pm_thread *t, int32_t name)
{
    return t->depth > 0 && pm_frame_name(pm_frame(t, t->depth - 1)) == name;
}

int pm_thread_exit(struct pm_thread *t, int32_t name)
{
    if (pm_unlikely(!pm_top_is(t, name)))
        return pm_unbalanced_exit(t, name);
    pm_close_top(t, 0);
    return 0;
}

int pm_thread_exit_bytes(struct pm_thread *t, int32_t name, int64_t bytes)
{
    if (pm_unlikely(!pm_top_is(t, name)))
        return pm_unbalanced_exit(t, name);
    struct pm_node_cold *c = &t->cold[t->cur];
    if (bytes >= 0)
        c->bytes += (uint64_t)bytes;
    else if (c->bytes_unknown != UINT32_MAX)
        c->bytes_unknown++;
    pm_close_top(t, 0);
    return 0;
}

int pm_thread_end_name(struct pm_thread *t, const char *name)
{
    /* The balanced case needs no lookup: compare with the innermost name. */
    if (pm_likely(t->depth > 0 && t->nodes[t->cur].kind == PM_KIND_USER &&
                  pm_streq(name, t->nodes[t->cur].str, PM_NAME_MAX) &&
                  t->nodes[t->cur].name == pm_frame_name(pm_frame(t, t->depth - 1)))) {
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
    t->final_read = 1;
}

/* Open frames that are visits (placements are not). */
static int32_t pm_open_visits(const struct pm_thread *t, int32_t depth)
{
    int32_t open = 0;
    for (int32_t level = 0; level < depth; level++)
        open += pm_frame_mode(pm_frame((struct pm_thread *)t, level)) != PM_FRAME_PLACED;
    return open;
}

void pm_thread_finish(struct pm_thread *t, const char *why)
{
    t->open_at_end = pm_open_visits(t, t->depth);
    if (t->open_at_end > 0)
        pm_msg(PM_MSG_UNBALANCED, "thread %d %s inside region '%.200s'%s: closed %d open "
               "region(s) there, flagged UNBALANCED", t->index, why,
               pm_name_get(t->nodes[t->cur].name), t->open_at_end > 1 ? " (nested)" : "",
               (int)t->open_at_end);
    while (t->depth > 0)
        pm_close_top(t, PM_FLAG_UNBALANCED);
    pm_sample_catch_up(t);  /* since the last marker: the thread's root */
    t->cpu_last = sched_getcpu();
    if (t->by_exit && t->cs.state != PM_CS_OPEN) {
        t->end_ticks = pm_ticks();  /* its totals come from the kernel, after its exit */
        return;
    }
    uint64_t gen = pm_thread_read(t, t->scratch);
    pm_settle_totals(t, t->scratch, gen);
}

static int pm_task_cpu(pid_t tid, int fallback);


struct pm_thread *pm_thread_adopt(const struct pm_eventset *set, int bind_cpu, int pinned,
                                  int32_t index, pid_t tid)
{
    struct pm_thread *t = pm_thread_alloc(set, index, tid);
    if (!t)
        return NULL;
    t->adopted = 1;
    t->cpu_first = t->cpu_last = pm_task_cpu(tid, -1);
    if (pm_counterset_open_task(&t->cs, set, (int)tid, bind_cpu, 0, pinned) != 0)
        pm_msg(PM_MSG_COUNTERS, "cannot open the counters of thread %d (tid %d, running before "
               "perfmark started): %s; it gets no totals", index, (int)tid, strerror(errno));
    /* Its totals run from now: a reading taken from outside (only the
     * owner reads through rdpmc). */
    if (!t->stride || pm_counterset_peek(&t->cs, t->base) == 0) {
        t->base_generation = t->cs.generation;
        t->totals_fresh = 0;
    } else {
        t->base_generation = t->cs.generation + 1;  /* its first own read rebases */
        t->totals_fresh = 1;
    }
    t->start_ticks = pm_ticks();
    return t;
}

void pm_thread_take_over(struct pm_thread *t)
{
    t->adopted = 2;
    t->cpu_last = sched_getcpu();
    if (pm_sampler_open(&t->smp, t->tid, &t->smpc, &t->cur, pm_sampling) != 0)
        pm_msg(PM_MSG_COUNTERS, "cannot sample thread %d: %s; its regions get counts but no "
               "samples", t->index, strerror(errno));
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

/* The visits a thread still running elsewhere has open: counted up to
 * `now` (a reading taken from outside, or NULL if none could be), never
 * closed. The thread may be pushing a frame this very moment: a frame that
 * does not look whole is left alone. */
static void pm_count_open_visits(struct pm_thread *t, int32_t depth, const uint64_t *now,
                                 uint64_t ticks)
{
    unsigned e = (unsigned)t->cs.nevents, g = (unsigned)t->cs.ngroups;
    for (int32_t level = 0; level < depth; level++) {
        const uint64_t *f = pm_frame(t, level);
        int32_t node = pm_frame_node(f);
        unsigned mode = pm_frame_mode(f);
        if (node < 0 || node >= t->nnodes || f[PM_F_TICKS] > ticks)
            continue;
        if (mode == PM_FRAME_PLACED)  /* never visited: nothing to count */
            continue;
        struct pm_node *n = &t->nodes[node];
        n->flags |= PM_FLAG_UNBALANCED | PM_FLAG_PARTIAL;
        if (mode == PM_FRAME_FOLDED) {
            t->cold[node].folded++;
            continue;
        }
        n->visits++;
        n->ticks += ticks - f[PM_F_TICKS];
        if (mode != PM_MODE_COUNTED || !t->stride)
            continue;
        if (!now || f[PM_F_GEN] != t->cs.generation) {
            n->flags |= PM_FLAG_LOST_GENERATION;
            continue;
        }
        const uint64_t *then = f + PM_FRAME_HEADER;
        uint64_t *acc = t->acc + (size_t)node * t->stride;
        for (unsigned i = 0; i < e + 2 * g; i++)
            acc[i] += now[i] > then[i] ? now[i] - then[i] : 0;
        for (unsigned k = 0; k < g; k++)
            if (now[e + g + k] - then[e + g + k] < now[e + k] - then[e + k])
                n->flags |= now[e + g + k] > then[e + g + k] ? PM_FLAG_MULTIPLEXED
                                                             : PM_FLAG_NOT_COUNTED;
    }
}

void pm_thread_finish_remote(struct pm_thread *t)
{
    int32_t depth = t->depth;
    t->open_at_end = pm_open_visits(t, depth);
    if (t->open_at_end > 0)
        pm_msg(PM_MSG_UNBALANCED, "thread %d is still running inside %d region(s) at exit: "
               "those visits are counted up to now, regions flagged UNBALANCED and PARTIAL",
               t->index, (int)t->open_at_end);
    t->cpu_last = pm_task_cpu(t->tid, t->cpu_last);
    /* Its samples so far, credited to where it is (unless it is draining
     * them itself right now). */
    pm_sampler_drain_try(&t->smp);
    uint64_t *now = calloc(t->stride + 1, sizeof *now);
    uint64_t ticks = pm_ticks();
    if (t->by_exit && t->cs.state != PM_CS_OPEN) {
        /* Never in a region: its counts from birth are in the kernel's
         * inherited events, which only its exit reports. /proc has the
         * software ones. */
        uint64_t wall_ns = (uint64_t)((double)(ticks - t->start_ticks) * pm_clock_ns_per_tick());
        int groups = now ? pm_proc_counts(t->tid, t->set, wall_ns, now) : -1;
        if (groups >= 0)
            memcpy(t->total, now, t->stride * sizeof *now);
        else  /* gone unseen (no destructor ran): not counted, running 0 of enabled 1 */
            for (int g = 0; g < t->set->ngroups; g++)
                t->total[t->set->n + g] = 1;
        t->totals_from = groups > 0 ? PM_TOTALS_PROC : PM_TOTALS_NONE;
        t->end_ticks = ticks;
        pm_count_open_visits(t, depth, NULL, ticks);
        free(now);
        return;
    }
    if (t->by_exit)
        t->totals_from = PM_TOTALS_FIRST_REGION;
    /* Reading another thread's counters is allowed (the fds are the
     * process's), but only its owner may close them: a thread exiting right
     * now makes the read fail, and then its totals stay as they were. */
    int have = now && (!t->stride || pm_counterset_peek(&t->cs, now) == 0);
    if (have)
        pm_settle_totals(t, now, t->cs.generation);
    else
        t->end_ticks = ticks;
    pm_count_open_visits(t, depth, have ? now : NULL, ticks);
    free(now);
}

void pm_thread_after_fork(struct pm_thread *t)
{
    pm_counterset_forget(&t->cs);
    pm_sampler_forget(&t->smp);
    for (int32_t n = 0; n < t->nnodes; n++) {
        t->nodes[n].visits = 0;
        t->nodes[n].ticks = 0;
        t->nodes[n].flags &= PM_FLAG_TIMER_ONLY | PM_FLAG_THROTTLED;
        t->nodes[n].windows = 0;
        t->nodes[n].reads = 0;
        uint64_t throttled_from = t->cold[n].throttled_from ? 1 : 0;
        t->cold[n] = (struct pm_node_cold){.throttled_from = throttled_from};
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
    if (pm_sampler_has_data(&t->smp))
        return 1;
    for (int32_t n = 0; n < t->nnodes; n++)
        if (t->nodes[n].visits || t->nodes[n].flags)
            return 1;
    return t->depth > 0;
}
