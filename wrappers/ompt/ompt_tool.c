/* The OMPT tool: OpenMP constructs become regions of kind `omp`.
 *
 * LLVM's libomp looks up `ompt_start_tool` in the process when it starts
 * (libperfmark.so is linked or preloaded, so it finds ours); GCC's libgomp
 * has no OMPT and never calls it: there, wrappers/gomp makes the same
 * regions from libgomp's entry points.
 *
 * What becomes a region, on the calling thread's stack (pm_auto.h):
 *   - each implicit task, i.e. each team member for its share of a parallel
 *     construct: `omp parallel <where> (<N> threads)`. The encountering
 *     thread gets it through its own implicit task like every member
 *     (parallel_begin only records where the construct is), so user regions
 *     inside the construct nest under it on every thread. <where> is
 *     `function[#K][ at file.c:LINE]` (pm_ompt_format below): the K-th
 *     construct of the function after its first, and the line where the
 *     object has line tables (-g; see pm_srcline.h).
 *   - a worker (a member other than the encountering thread) is first
 *     placed, without a visit, under the path the encountering thread had
 *     open at the fork (user regions, MPI calls, enclosing constructs:
 *     pm_auto_place), so that one construct is one region holding all its
 *     threads, and nested teams nest on every member.
 *   - barriers (all kinds) `omp barrier`, `omp taskwait`, `omp taskgroup`:
 *     the per-thread wait, the load-imbalance signal.
 * Work-sharing callbacks are not used: with gcc-compiled code on libomp they
 * come unpaired.
 *
 * Robustness: the runtime flags an exit that is not the innermost region
 * UNBALANCED, and callback orders are not ours to trust. So every region
 * this tool enters is also pushed on a small per-thread stack, tagged with
 * the OMPT object it belongs to; an end callback exits only when the top of
 * that stack is its own begin, and is otherwise dropped (counted in
 * pm_ompt_drops, nothing printed). Callbacks are hot (barriers can be
 * frequent): no allocation and no lock on their path; construct names are
 * resolved once per (return address, team size) into a fixed table. */
#define _GNU_SOURCE
#include "pm_auto.h"
#include "pm_call_ordinal.h"
#include "pm_omp_names.h"
#include "pm_srcline.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The LLVM header. The build passes its path (it lives in clang's resource
 * directory, whose other headers must not shadow gcc's: see
 * wrappers/CMakeLists.txt). */
#ifdef PM_OMPT_TOOLS_H
#include PM_OMPT_TOOLS_H
#else
#include <omp-tools.h>
#endif

#define PM_EXPORT __attribute__((visibility("default")))
#define pm_unlikely(x) __builtin_expect(!!(x), 0)

/* ---- per-thread tool stack ------------------------------------------------ */

#define PM_OMPT_DEPTH 64
#define PM_OMPT_PATH 32  /* the deepest fork path a team's workers are placed under */

enum pm_ompt_entry_type {
    PM_OMPT_TASK = 1,   /* this thread's implicit task in a parallel region */
    PM_OMPT_OUTER,      /* a region of the fork path a worker is placed under (not visited) */
    PM_OMPT_SYNC,       /* a barrier, taskwait or taskgroup wait */
};

struct pm_ompt_entry {
    const void *key;      /* the task_data of the implicit task it belongs to */
    const void *par;      /* TASK: the parallel construct's record */
    int32_t region;
    uint8_t type;
    uint8_t entered;      /* pm_auto_enter said yes: exit it (else just pop) */
};

/* Where a parallel construct was encountered, for its team members. Lives in
 * the encountering thread's state at that thread's stack depth: the thread
 * stays inside the construct (its own implicit task is pushed above that
 * depth) until parallel_end, so the slot is neither reused nor freed while
 * members read it. */
struct pm_ompt_parallel {
    const void *codeptr;
    const struct pm_ompt_thread *owner;
    int32_t depth;        /* owner's stack depth at parallel_begin */
    int32_t npath;        /* the owner's open regions then, top first: where the */
    int32_t path[PM_OMPT_PATH]; /* team was forked (0 when unknown or too deep) */
};

struct pm_ompt_thread {
    int32_t depth;
    int32_t overflow;     /* begins not pushed because the stack was full */
    int32_t joined;       /* worker tasks closed at their join barrier, ends still to come */
    struct pm_ompt_entry stack[PM_OMPT_DEPTH];
    struct pm_ompt_parallel par[PM_OMPT_DEPTH];
};

/* Per thread, allocated on the thread's first callback: an initial-exec TLS
 * pointer is one load per callback (a TLS struct this size in a shared
 * library would go through __tls_get_addr on every callback instead). */
static __thread struct pm_ompt_thread *pm_ompt_tls __attribute__((tls_model("initial-exec")));

/* Out of memory: callbacks of this thread share one scratch state that
 * ends every region it is asked to (drops are counted, nothing breaks). */
static __attribute__((noinline)) struct pm_ompt_thread *pm_ompt_me_slow(void)
{
    static struct pm_ompt_thread scratch;
    pm_ompt_tls = calloc(1, sizeof *pm_ompt_tls);
    return pm_ompt_tls ? pm_ompt_tls : &scratch;
}

static inline struct pm_ompt_thread *pm_ompt_me(void)
{
    struct pm_ompt_thread *t = pm_ompt_tls;
    return __builtin_expect(t != NULL, 1) ? t : pm_ompt_me_slow();
}

/* Ends dropped because they did not match (or regions left open at thread
 * end). Not exposed: for a debugger, and for whoever wires a message. */
static atomic_ulong pm_ompt_drops;

static void pm_ompt_drop(void)
{
    atomic_fetch_add_explicit(&pm_ompt_drops, 1, memory_order_relaxed);
}

static void pm_ompt_push(struct pm_ompt_thread *t, int type, const void *key,
                         const void *par, int32_t region)
{
    if (pm_unlikely(t->depth == PM_OMPT_DEPTH)) {
        t->overflow++;
        return;
    }
    int entered = region >= 0 && (type == PM_OMPT_OUTER ? pm_auto_place(region)
                                                        : pm_auto_enter(region)) == 0;
    t->stack[t->depth++] = (struct pm_ompt_entry){.key = key, .par = par, .region = region,
                                                  .type = (uint8_t)type,
                                                  .entered = (uint8_t)entered};
}

static void pm_ompt_pop(struct pm_ompt_thread *t)
{
    struct pm_ompt_entry *e = &t->stack[--t->depth];
    if (e->entered && e->type == PM_OMPT_OUTER)
        pm_auto_unplace();
    else if (e->entered)
        pm_auto_exit(e->region, 0);
}

/* An end callback for (type, key): close its begin if it is on top; 0 when
 * it was not (then dropped, unless it is the late end of a join barrier or
 * of a task closed there: see pm_ompt_join). */
static int pm_ompt_end(struct pm_ompt_thread *t, int type, const void *key)
{
    if (pm_unlikely(t->overflow > 0)) {  /* its begin was never pushed */
        t->overflow--;
        return 0;
    }
    if (pm_unlikely(t->depth == 0 || t->stack[t->depth - 1].type != type ||
                    t->stack[t->depth - 1].key != key)) {
        if (t->joined > 0) {
            if (type == PM_OMPT_TASK)  /* the barrier's end comes first, then the task's */
                t->joined--;
        } else {
            pm_ompt_drop();
        }
        return 0;
    }
    pm_ompt_pop(t);
    return 1;
}

/* Close this thread's implicit task and the enclosing regions entered
 * with it (all keyed by its task_data). */
static void pm_ompt_close_task(struct pm_ompt_thread *t, const void *task_data)
{
    while (t->overflow == 0 && t->depth > 0 && t->stack[t->depth - 1].type == PM_OMPT_OUTER &&
           t->stack[t->depth - 1].key == task_data)
        pm_ompt_pop(t);
}

/* ---- names ---------------------------------------------------------------- */

static _Atomic int32_t pm_ompt_barrier = -1, pm_ompt_taskwait = -1, pm_ompt_taskgroup = -1;

/* pm_srcline.c is built only where libdw's header exists. */
__attribute__((weak)) int pm_srcline(const void *addr, char *file, size_t len, int *line);
__attribute__((weak)) int pm_srcsym(const void *addr, char *name, size_t len, size_t *offset);

/* Where a construct is, in words that survive a rebuild: the function
 * holding its call into the runtime (the symbol table: a static function of
 * an executable without -rdynamic has a name too), the call's ordinal among
 * the function's calls to that entry point (pm_call_ordinal.h: `FN#K`, as
 * the libgomp wrappers name GCC's constructs) and, with line tables, its
 * file and line. Where the call cannot be decoded, the offset into the
 * function (`FN+0xOFF`); only a stripped object leaves an offset into the
 * object. */
static void pm_ompt_format(char *buf, size_t size, const void *codeptr, unsigned n)
{
    char where[512], file[256], fn[256] = "";
    int line = 0;
    size_t off = 0;
    Dl_info info = {0};
    /* codeptr is the return address of the runtime call: the byte before it
     * belongs to the call, on the construct's line and in its function */
    const char *call = (const char *)codeptr - 1;
    int have_fn = codeptr && pm_srcsym && pm_srcsym(call, fn, sizeof fn, &off) == 0;
    int found = codeptr && dladdr(codeptr, &info);
    if (!have_fn && found && info.dli_sname && info.dli_saddr) {
        snprintf(fn, sizeof fn, "%s", info.dli_sname);
        off = (size_t)((uintptr_t)call - (uintptr_t)info.dli_saddr);
        have_fn = 1;
    }
    long k = have_fn ? pm_call_ordinal(codeptr, call - off) : -1;
    int has_line = have_fn && pm_srcline && pm_srcline(call, file, sizeof file, &line) == 0;
    if (!codeptr) {
        snprintf(where, sizeof where, "(unknown)");
    } else if (have_fn && (k >= 0 || has_line)) {
        pm_omp_where(where, sizeof where, fn, k, has_line ? file : NULL, line);
    } else if (have_fn) {
        snprintf(where, sizeof where, "%s+0x%lx", fn, (unsigned long)(off + 1));
    } else if (found && info.dli_fname && info.dli_fbase) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(where, sizeof where, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)((uintptr_t)codeptr - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(where, sizeof where, "%p", codeptr);
    }
    snprintf(buf, size, "omp parallel %s (%u thread%s)", where, n, n == 1 ? "" : "s");
}

/* Parallel constructs: (return address, team size) -> region. */
static struct pm_omp_names pm_ompt_names = PM_OMP_NAMES_INIT(pm_ompt_format);

static inline int32_t pm_ompt_parallel_region(const void *codeptr, unsigned n)
{
    return pm_omp_name_region(&pm_ompt_names, codeptr, n);
}

/* ---- callbacks -------------------------------------------------------------- */

/* libomp 14 passes a wrong actual_parallelism to implicit_task (19 for a
 * team of 2); ask for the current team's size instead. */
static ompt_get_parallel_info_t pm_ompt_get_parallel_info;

static unsigned pm_ompt_team_size(unsigned actual_parallelism)
{
    ompt_data_t *pd = NULL;
    int size = 0;
    if (pm_ompt_get_parallel_info && pm_ompt_get_parallel_info(0, &pd, &size) == 2 && size > 0)
        return (unsigned)size;
    return actual_parallelism;
}

static void pm_ompt_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
    /* Nothing to enter yet: the runtime picks the thread up on its first
     * region (its first implicit task). A pooled thread starts clean. */
    struct pm_ompt_thread *t = pm_ompt_me();
    t->depth = 0;
    t->overflow = 0;
    t->joined = 0;
}

static void pm_ompt_thread_end(ompt_data_t *thread_data)
{
    /* Regions still open here are closed and flagged by the runtime when
     * the thread goes; forget them. */
    struct pm_ompt_thread *t = pm_ompt_me();
    for (int32_t i = 0; i < t->depth + t->overflow; i++)
        pm_ompt_drop();
    t->depth = t->overflow = t->joined = 0;
    if (t == pm_ompt_tls) {  /* not the shared scratch state */
        pm_ompt_tls = NULL;
        free(t);
    }
}

static void pm_ompt_parallel_begin(ompt_data_t *encountering_task_data,
                                   const ompt_frame_t *encountering_task_frame,
                                   ompt_data_t *parallel_data, unsigned int requested_parallelism,
                                   int flags, const void *codeptr_ra)
{
    struct pm_ompt_thread *t = pm_ompt_me();
    if (pm_unlikely(t->depth == PM_OMPT_DEPTH)) {
        parallel_data->ptr = NULL;  /* too deep: its members enter nothing */
        return;
    }
    struct pm_ompt_parallel *p = &t->par[t->depth];
    int32_t path[PM_OMPT_PATH];
    int32_t n = pm_auto_path(path, PM_OMPT_PATH);
    n = n > 0 && n <= PM_OMPT_PATH ? n : 0;  /* deeper: workers stay at the top */
    /* The team's workers read this from their cores. A loop running the
     * same construct finds it unchanged: rewriting it anyway would pull its
     * cache lines back here and make every worker miss on them again. */
    if (p->codeptr != codeptr_ra || p->owner != t || p->depth != t->depth || p->npath != n ||
        memcmp(p->path, path, (size_t)n * sizeof *path) != 0) {
        p->codeptr = codeptr_ra;
        p->owner = t;
        p->depth = t->depth;
        p->npath = n;
        memcpy(p->path, path, (size_t)n * sizeof *path);
    }
    parallel_data->ptr = p;
}

static void pm_ompt_parallel_end(ompt_data_t *parallel_data, ompt_data_t *encountering_task_data,
                                 int flags, const void *codeptr_ra)
{
    /* The encountering thread's implicit task ends before this. If its end
     * never came, close it now rather than leave it open around whatever
     * the thread does next. */
    struct pm_ompt_thread *t = pm_ompt_me();
    if (t->overflow == 0 && t->depth > 0 && t->stack[t->depth - 1].type == PM_OMPT_TASK &&
        t->stack[t->depth - 1].par == parallel_data->ptr) {
        pm_ompt_drop();
        pm_ompt_pop(t);
    }
}

static void pm_ompt_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel_data,
                                  ompt_data_t *task_data, unsigned int actual_parallelism,
                                  unsigned int index, int flags)
{
    /* The initial task spans the whole program: not a construct. */
    if (flags & ompt_task_initial)
        return;
    struct pm_ompt_thread *t = pm_ompt_me();
    if (endpoint == ompt_scope_end) {
        /* libomp passes no parallel_data at the end: go by task. */
        if (pm_ompt_end(t, PM_OMPT_TASK, task_data))
            pm_ompt_close_task(t, task_data);
        return;
    }
    const struct pm_ompt_parallel *p = parallel_data ? parallel_data->ptr : NULL;
    if (!p) {
        pm_ompt_push(t, PM_OMPT_TASK, task_data, NULL, -1);  /* keeps the end paired */
        return;
    }
    /* A member other than the encountering thread: placed first under the
     * path the team was forked from (user regions, MPI calls, enclosing
     * constructs), without visiting it, so that the construct is one region
     * holding every member. Only when the whole path fits with the task
     * itself: a partial chain would leave overflow counts no end takes back. */
    if (p->owner != t && t->depth + p->npath < PM_OMPT_DEPTH)
        for (int32_t i = 0; i < p->npath; i++)
            pm_ompt_push(t, PM_OMPT_OUTER, task_data, NULL, p->path[i]);
    pm_ompt_push(t, PM_OMPT_TASK, task_data, p,
                 pm_ompt_parallel_region(p->codeptr, pm_ompt_team_size(actual_parallelism)));
}

/* A worker's join barrier (the implicit barrier ending a parallel region;
 * libomp gives it no return address, unlike the encountering thread's and
 * work-sharing barriers): libomp reports its end, and the implicit task's,
 * only when the thread is next woken (the next parallel region, or exit),
 * and with another task_data. Kept open, both regions would take in the
 * serial time in between, and stay open at exit after the last construct.
 * So a worker's task region ends when it arrives here; the late ends are
 * then swallowed. The encountering thread's join wait stays a barrier
 * region (its ends come on time). */
static int pm_ompt_join(struct pm_ompt_thread *t, ompt_sync_region_t kind,
                        const ompt_data_t *task_data, const void *codeptr_ra)
{
    if (codeptr_ra || (kind != ompt_sync_region_barrier_implicit &&
                       kind != ompt_sync_region_barrier_implicit_parallel))
        return 0;
    if (t->overflow > 0 || t->depth == 0)
        return 0;
    const struct pm_ompt_entry *top = &t->stack[t->depth - 1];
    const struct pm_ompt_parallel *p = top->par;
    if (top->type != PM_OMPT_TASK || top->key != task_data || !p || p->owner == t)
        return 0;
    pm_ompt_pop(t);
    pm_ompt_close_task(t, task_data);
    t->joined++;
    return 1;
}

static void pm_ompt_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                                ompt_data_t *parallel_data, ompt_data_t *task_data,
                                const void *codeptr_ra)
{
    struct pm_ompt_thread *t = pm_ompt_me();
    if (endpoint == ompt_scope_end) {
        /* The kind may differ between begin and end (libomp reports a
         * worker's end-of-parallel barrier as barrier_implicit), so match
         * by task only. */
        pm_ompt_end(t, PM_OMPT_SYNC, task_data);
        return;
    }
    if (pm_ompt_join(t, kind, task_data, codeptr_ra))
        return;
    int32_t region;
    switch (kind) {
    case ompt_sync_region_taskwait:
        region = pm_omp_fixed(&pm_ompt_taskwait, "omp taskwait");
        break;
    case ompt_sync_region_taskgroup:
        region = pm_omp_fixed(&pm_ompt_taskgroup, "omp taskgroup");
        break;
    case ompt_sync_region_reduction:
        return;  /* reported through ompt_callback_reduction, not registered */
    default:     /* every barrier kind */
        region = pm_omp_fixed(&pm_ompt_barrier, "omp barrier");
        break;
    }
    pm_ompt_push(t, PM_OMPT_SYNC, task_data, NULL, region);
}

/* ---- registration ------------------------------------------------------------- */

static const char *pm_ompt_runtime_version;  /* from ompt_start_tool, for the file */

static int pm_ompt_initialize(ompt_function_lookup_t lookup, int initial_device_num,
                              ompt_data_t *tool_data)
{
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;  /* 0: deactivates the tool, the program runs as without it */
    pm_ompt_get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
    set(ompt_callback_thread_begin, (ompt_callback_t)pm_ompt_thread_begin);
    set(ompt_callback_thread_end, (ompt_callback_t)pm_ompt_thread_end);
    set(ompt_callback_parallel_begin, (ompt_callback_t)pm_ompt_parallel_begin);
    set(ompt_callback_parallel_end, (ompt_callback_t)pm_ompt_parallel_end);
    set(ompt_callback_implicit_task, (ompt_callback_t)pm_ompt_implicit_task);
    set(ompt_callback_sync_region, (ompt_callback_t)pm_ompt_sync_region);
    pm_auto_ompt_active(pm_ompt_runtime_version);
    return 1;
}

/* Runs after MPI_Finalize or at exit, when perfmark has already written its
 * data: nothing may depend on it. */
static void pm_ompt_finalize(ompt_data_t *tool_data) {}

/* A process perfmark will never measure gets no tool: with any tool active,
 * libomp pays for its OMPT machinery at every construct (~0.13 µs per empty
 * parallel region on the 2-vCPU VM, bench/README.md, "OpenMP"), and a
 * program linked with the markers but run without perfmark must run as
 * without it. libomp asks at its first construct, after perfmark's
 * constructor has decided; asked earlier (a construct in another library's
 * constructor), the tool is given, as a process that may measure needs it. */
PM_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                    const char *runtime_version)
{
    static ompt_start_tool_result_t result = {pm_ompt_initialize, pm_ompt_finalize, {0}};
    if (!pm_auto_may_measure())
        return NULL;
    pm_ompt_runtime_version = runtime_version;
    return &result;
}
