/* OpenMP constructs of GCC-built code on GCC's libgomp, which has no OMPT:
 * libgomp's own entry points, the calls `gcc -fopenmp` (and gfortran)
 * compile constructs into, are interposed (exported by libperfmark.so with
 * libgomp's symbol versions, hidden: wrappers/libperfmark.map) and become
 * the same regions the OMPT tool makes of libomp's (wrappers/ompt):
 *
 *   - a parallel construct (GOMP_parallel and its combined loop, sections
 *     and reductions forms): libgomp runs the outlined function on every
 *     member of the team; a trampoline runs it instead, so that each member
 *     enters `omp parallel <where> (<N> threads)` around it. A member other
 *     than the encountering thread is first placed, without a visit, under
 *     the path the encountering thread had open at the fork, so that one
 *     construct is one region holding all its threads and nested teams
 *     nest. The encountering thread then waits at the join: its `omp
 *     barrier`, under the construct, until GOMP_parallel returns (a
 *     worker's join wait is not measured, as with OMPT).
 *   - barriers (GOMP_barrier: explicit, and the implicit ones of `for`
 *     with a static schedule and `single`; GOMP_loop_end, GOMP_sections_end
 *     and their _cancel forms) `omp barrier`; GOMP_taskwait `omp taskwait`;
 *     GOMP_taskgroup_end `omp taskgroup`; the wait to enter a critical
 *     section (GOMP_critical_start, GOMP_critical_name_start) `omp critical`.
 *
 * <where> comes from the outlined function GCC names FUNC._omp_fn.K, K
 * counting the constructs of FUNC: `FUNC` for the first, `FUNC#K` after,
 * and ` at FILE:LINE` where the object has line tables (pm_srcline.h): a
 * name an edit elsewhere in the program does not change.
 *
 * Only on libgomp, and only in a process perfmark measures: LLVM's libomp
 * implements these entry points too, and there the OMPT tool sees the
 * constructs already; anywhere else every call goes straight to the real
 * function. The GOMP_*_start/end pairs of the ABI before GCC 4.9 (the
 * encountering thread runs the function between them) are not wrapped. */
#define _GNU_SOURCE
#include "pm_auto.h"
#include "pm_omp_names.h"
#include "pm_srcline.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_EXPORT __attribute__((visibility("default")))

/* pm_srcline.c is built only where libdw's header exists. */
__attribute__((weak)) int pm_srcline(const void *addr, char *file, size_t len, int *line);
__attribute__((weak)) int pm_srcsym(const void *addr, char *name, size_t len, size_t *offset);
#define PM_GOMP_PATH 32  /* the deepest fork path a team's workers are placed under */

/* ---- is libgomp the runtime, and is this process measured? ---------------- */

static void *pm_gomp_real(const char *name)
{
    int err = errno;
    void *p = dlsym(RTLD_NEXT, name);
    errno = err;
    return p;
}

typedef int (*pm_gomp_int_fn)(void);
static pm_gomp_int_fn pm_gomp_num_threads;

/* Decided at the first construct: 1 when the entry points are GCC's
 * libgomp's (not LLVM's libomp's) and perfmark measures here (or may,
 * later), 0 otherwise. */
static _Atomic int pm_gomp_state = -1;

static __attribute__((noinline)) int pm_gomp_decide(void)
{
    int err = errno, on = 0;
    void *real = pm_gomp_real("GOMP_parallel"), *kmpc = dlsym(RTLD_DEFAULT, "__kmpc_fork_call");
    Dl_info info, llvm;
    /* LLVM's libomp has these entry points too (even installed as
     * libgomp.so.1), beside its own __kmpc ones: there OMPT sees all. */
    int is_libomp = kmpc && dladdr(real, &info) && dladdr(kmpc, &llvm) &&
                    info.dli_fbase == llvm.dli_fbase;
    if (real && !is_libomp && pm_auto_may_measure()) {
        pm_gomp_num_threads = (pm_gomp_int_fn)pm_gomp_real("omp_get_num_threads");
        on = pm_gomp_num_threads != NULL;
        if (on)
            pm_auto_gomp_active();
    }
    atomic_store_explicit(&pm_gomp_state, on, memory_order_release);
    errno = err;
    return on;
}

static inline int pm_gomp_on(void)
{
    int s = atomic_load_explicit(&pm_gomp_state, memory_order_acquire);
    return s >= 0 ? s : pm_gomp_decide();
}

/* ---- names ------------------------------------------------------------------ */

/* `f._omp_fn.3` → f#3; `f._omp_fn.0` → f. GCC numbers the outlined
 * functions of each function from 0, in the order it outlines them. */
static void pm_gomp_where(char *out, size_t size, const void *fn)
{
    char sym[256], file[256];
    size_t off = 0;
    int line = 0;
    Dl_info info = {0};
    if (pm_srcsym && pm_srcsym(fn, sym, sizeof sym, &off) == 0) {
        char *tag = strstr(sym, "._omp_fn.");
        long k = tag ? strtol(tag + 9, NULL, 10) : 0;
        if (tag)
            *tag = '\0';
        int has_line = pm_srcline && pm_srcline(fn, file, sizeof file, &line) == 0;
        pm_omp_where(out, size, sym, k, has_line ? file : NULL, line);
    } else if (dladdr(fn, &info) && info.dli_fname && info.dli_fbase) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(out, size, "%s+0x%lx", base ? base + 1 : info.dli_fname,
                 (unsigned long)((uintptr_t)fn - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(out, size, "%p", fn);
    }
}

static void pm_gomp_format(char *buf, size_t size, const void *fn, unsigned n)
{
    char where[512];
    pm_gomp_where(where, sizeof where, fn);
    snprintf(buf, size, "omp parallel %s (%u thread%s)", where, n, n == 1 ? "" : "s");
}

static struct pm_omp_names pm_gomp_names = PM_OMP_NAMES_INIT(pm_gomp_format);
static _Atomic int32_t pm_gomp_barrier_region = -1, pm_gomp_taskwait_region = -1,
                       pm_gomp_taskgroup_region = -1, pm_gomp_critical_region = -1;

/* ---- a parallel construct ------------------------------------------------------ */

/* What the team's members need, on the encountering thread's stack for
 * the construct's length (libgomp returns from GOMP_parallel only once
 * every member has left the outlined function). */
struct pm_gomp_team {
    void (*fn)(void *);
    void *data;
    const struct pm_gomp_team *outer;  /* the construct this thread forked before */
    int32_t npath, path[PM_GOMP_PATH];  /* the encountering thread's open regions */
    /* the encountering thread's own, for the end of GOMP_parallel */
    int32_t region;
    int entered, in_barrier;
};

/* The construct this thread is forking (it runs as the team's thread 0). */
static __thread const struct pm_gomp_team *pm_gomp_forking
    __attribute__((tls_model("initial-exec")));

/* Every member of the team runs this in place of the outlined function. */
static void pm_gomp_member(void *arg)
{
    struct pm_gomp_team *tm = arg;
    int own = pm_gomp_forking == tm, placed = 0;
    if (!own)
        for (int32_t i = 0; i < tm->npath; i++)
            placed += pm_auto_place(tm->path[i]) == 0;
    unsigned n = (unsigned)pm_gomp_num_threads();
    int32_t region = pm_omp_name_region(&pm_gomp_names, (const void *)tm->fn, n);
    int entered = region >= 0 && pm_auto_enter(region) == 0;
    tm->fn(tm->data);
    if (own) {  /* its join wait, until GOMP_parallel returns */
        tm->region = region;
        tm->entered = entered;
        int32_t b = pm_omp_fixed(&pm_gomp_barrier_region, "omp barrier");
        tm->in_barrier = entered && b >= 0 && pm_auto_enter(b) == 0;
        return;
    }
    if (entered)
        pm_auto_exit(region, 0);
    while (placed-- > 0)
        pm_auto_unplace();
}

/* Before the real entry point runs the team on pm_gomp_member and tm;
 * pm_gomp_fork_end after. */
static void pm_gomp_fork_begin(struct pm_gomp_team *tm, void (*fn)(void *), void *data)
{
    int err = errno;
    int32_t n = pm_auto_path(tm->path, PM_GOMP_PATH);
    tm->npath = n > 0 && n <= PM_GOMP_PATH ? n : 0;  /* deeper: workers stay at the top */
    tm->fn = fn;
    tm->data = data;
    tm->region = -1;
    tm->entered = tm->in_barrier = 0;
    tm->outer = pm_gomp_forking;
    pm_gomp_forking = tm;
    errno = err;
}

static void pm_gomp_fork_end(struct pm_gomp_team *tm)
{
    int err = errno;
    pm_gomp_forking = tm->outer;
    if (tm->in_barrier)
        pm_auto_exit(atomic_load_explicit(&pm_gomp_barrier_region, memory_order_relaxed), 0);
    if (tm->entered)
        pm_auto_exit(tm->region, 0);
    errno = err;
}

/* A wrapper for a parallel entry point: NAME@VERSION, calling the real one
 * with the trampoline. PARAMS and ARGS are those after fn and data. */
/* Unwrapped, the call goes on as a tail call: the real entry point sees the
 * program's return address (libomp's OMPT names constructs by it). */
#define PM_GOMP_FORK(ret, name, version, params, args)                                         \
    typedef ret (*pm_gomp_t_##name)(void (*)(void *), void *, PM_UNPAREN params);              \
    static __attribute__((noinline)) ret pm_gomp_fork_##name(                                  \
        pm_gomp_t_##name real, void (*fn)(void *), void *data, PM_UNPAREN params)               \
    {                                                                                          \
        struct pm_gomp_team tm;                                                                \
        pm_gomp_fork_begin(&tm, fn, data);                                                     \
        PM_GOMP_CALL_##ret(real(pm_gomp_member, &tm, PM_UNPAREN args));                        \
    }                                                                                          \
    PM_EXPORT ret pm_gomp_w_##name(void (*fn)(void *), void *data, PM_UNPAREN params);         \
    __asm__(".symver pm_gomp_w_" #name ", " #name "@" version);                                \
    PM_EXPORT ret pm_gomp_w_##name(void (*fn)(void *), void *data, PM_UNPAREN params)          \
    {                                                                                          \
        static pm_gomp_t_##name real;                                                          \
        if (!real)                                                                             \
            real = (pm_gomp_t_##name)pm_gomp_real(#name);                                      \
        if (!fn || !pm_gomp_on())                                                              \
            return real(fn, data, PM_UNPAREN args);                                            \
        return pm_gomp_fork_##name(real, fn, data, PM_UNPAREN args);                          \
    }
#define PM_UNPAREN(...) __VA_ARGS__
#define PM_GOMP_CALL_void(call) \
    call;                       \
    pm_gomp_fork_end(&tm)
#define PM_GOMP_CALL_unsigned(call) \
    unsigned r = call;              \
    pm_gomp_fork_end(&tm);          \
    return r

PM_GOMP_FORK(void, GOMP_parallel, "GOMP_4.0", (unsigned nt, unsigned flags), (nt, flags))
PM_GOMP_FORK(unsigned, GOMP_parallel_reductions, "GOMP_5.0", (unsigned nt, unsigned flags),
             (nt, flags))
PM_GOMP_FORK(void, GOMP_parallel_sections, "GOMP_4.0",
             (unsigned nt, unsigned count, unsigned flags), (nt, count, flags))

#define PM_GOMP_LOOP(name, version)                                                         \
    PM_GOMP_FORK(void, name, version,                                                       \
                 (unsigned nt, long start, long end, long incr, long chunk, unsigned flags), \
                 (nt, start, end, incr, chunk, flags))
#define PM_GOMP_LOOP_RUNTIME(name, version)                                                 \
    PM_GOMP_FORK(void, name, version, (unsigned nt, long start, long end, long incr,        \
                                      unsigned flags), (nt, start, end, incr, flags))
PM_GOMP_LOOP(GOMP_parallel_loop_static, "GOMP_4.0")
PM_GOMP_LOOP(GOMP_parallel_loop_dynamic, "GOMP_4.0")
PM_GOMP_LOOP(GOMP_parallel_loop_guided, "GOMP_4.0")
PM_GOMP_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, "GOMP_4.5")
PM_GOMP_LOOP(GOMP_parallel_loop_nonmonotonic_guided, "GOMP_4.5")
PM_GOMP_LOOP_RUNTIME(GOMP_parallel_loop_runtime, "GOMP_4.0")
PM_GOMP_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime, "GOMP_5.0")
PM_GOMP_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime, "GOMP_5.0")

/* ---- waits --------------------------------------------------------------------- */

/* A wait inside the team: its region around the real call. PARAMS and
 * ARGS: the entry point's own, given after a leading "void *" slot that
 * the no-argument forms leave unused (PM_GOMP_WAIT0). */
#define PM_GOMP_WAIT_BODY(ret, name, slot, region_name, call)                        \
    {                                                                                \
        int err = errno;                                                             \
        int32_t region = pm_omp_fixed(&slot, region_name);                           \
        int entered = region >= 0 && pm_auto_enter(region) == 0;                     \
        errno = err;                                                                 \
        PM_GOMP_WAIT_##ret(call);                                                    \
    }
#define PM_GOMP_WAIT0(ret, name, version, slot, region_name)                         \
    typedef ret (*pm_gomp_t_##name)(void);                                           \
    static __attribute__((noinline)) ret pm_gomp_wait_##name(pm_gomp_t_##name real)  \
        PM_GOMP_WAIT_BODY(ret, name, slot, region_name, real())                      \
    PM_EXPORT ret pm_gomp_w_##name(void);                                            \
    __asm__(".symver pm_gomp_w_" #name ", " #name "@" version);                      \
    PM_EXPORT ret pm_gomp_w_##name(void)                                             \
    {                                                                                \
        static pm_gomp_t_##name real;                                                \
        if (!real)                                                                   \
            real = (pm_gomp_t_##name)pm_gomp_real(#name);                            \
        if (!pm_gomp_on())                                                           \
            return real();                                                           \
        return pm_gomp_wait_##name(real);                                            \
    }
#define PM_GOMP_WAIT1(ret, name, version, slot, region_name, type)                   \
    typedef ret (*pm_gomp_t_##name)(type);                                           \
    static __attribute__((noinline)) ret pm_gomp_wait_##name(pm_gomp_t_##name real,  \
                                                              type a)                 \
        PM_GOMP_WAIT_BODY(ret, name, slot, region_name, real(a))                     \
    PM_EXPORT ret pm_gomp_w_##name(type a);                                          \
    __asm__(".symver pm_gomp_w_" #name ", " #name "@" version);                      \
    PM_EXPORT ret pm_gomp_w_##name(type a)                                           \
    {                                                                                \
        static pm_gomp_t_##name real;                                                \
        if (!real)                                                                   \
            real = (pm_gomp_t_##name)pm_gomp_real(#name);                            \
        if (!pm_gomp_on())                                                           \
            return real(a);                                                          \
        return pm_gomp_wait_##name(real, a);                                         \
    }
#define PM_GOMP_WAIT_void(call) \
    call;                       \
    pm_gomp_wait_end(entered, region)
/* bool is a macro for _Bool, which a macro argument passed on becomes */
#define PM_GOMP_WAIT__Bool(call) PM_GOMP_WAIT_bool(call)
#define PM_GOMP_WAIT_bool(call)         \
    bool r = call;                      \
    pm_gomp_wait_end(entered, region);  \
    return r

static void pm_gomp_wait_end(int entered, int32_t region)
{
    if (entered) {
        int err = errno;
        pm_auto_exit(region, 0);
        errno = err;
    }
}

PM_GOMP_WAIT0(void, GOMP_barrier, "GOMP_1.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(bool, GOMP_barrier_cancel, "GOMP_4.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(void, GOMP_loop_end, "GOMP_1.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(bool, GOMP_loop_end_cancel, "GOMP_4.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(void, GOMP_sections_end, "GOMP_1.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(bool, GOMP_sections_end_cancel, "GOMP_4.0", pm_gomp_barrier_region, "omp barrier")
PM_GOMP_WAIT0(void, GOMP_taskwait, "GOMP_2.0", pm_gomp_taskwait_region, "omp taskwait")
PM_GOMP_WAIT0(void, GOMP_taskgroup_end, "GOMP_4.0", pm_gomp_taskgroup_region, "omp taskgroup")
PM_GOMP_WAIT0(void, GOMP_critical_start, "GOMP_1.0", pm_gomp_critical_region, "omp critical")
PM_GOMP_WAIT1(void, GOMP_critical_name_start, "GOMP_1.0", pm_gomp_critical_region,
              "omp critical", void **)
