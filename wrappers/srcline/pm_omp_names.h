/* pm_omp_names — OpenMP constructs as region ids: (key, team size) →
 * region, for the OMPT tool (key: the construct's return address) and the
 * libgomp wrappers (key: the outlined function). Constructs are hot (a
 * loop may run one a million times): a hit is a lock-free probe of a fixed
 * open-addressing table; a miss names the construct (the caller's format,
 * which may read symbol and line tables) under a mutex and publishes it. */
#ifndef PM_OMP_NAMES_H
#define PM_OMP_NAMES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PM_OMP_NAMES 1024

/* The region's name for construct `key` in a team of `n`, into buf. */
typedef void (*pm_omp_format_fn)(char *buf, size_t size, const void *key, unsigned n);

struct pm_omp_names {
    pm_omp_format_fn format;
    pthread_mutex_t lock;
    int used;
    struct pm_omp_name {
        _Atomic(const void *) key;  /* published last (release) */
        unsigned nthreads;
        int32_t region;
    } slot[PM_OMP_NAMES];
};

#define PM_OMP_NAMES_INIT(format_fn) {.format = (format_fn), .lock = PTHREAD_MUTEX_INITIALIZER}

/* The region of (key, n), named on first sight; -1 without memory. */
int32_t pm_omp_name_slow(struct pm_omp_names *t, const void *key, unsigned n);

static inline uint32_t pm_omp_name_hash(const void *key, unsigned n)
{
    uint64_t k = (uint64_t)(uintptr_t)key ^ (uint64_t)n << 48;
    return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 40) & (PM_OMP_NAMES - 1);
}

/* -2: not in the table (a free slot ends the probe). */
static inline int32_t pm_omp_name_lookup(struct pm_omp_names *t, const void *key, unsigned n)
{
    for (uint32_t h = pm_omp_name_hash(key, n), i = 0; i < PM_OMP_NAMES;
         h = (h + 1) & (PM_OMP_NAMES - 1), i++) {
        const struct pm_omp_name *s = &t->slot[h];
        const void *c = atomic_load_explicit(&s->key, memory_order_acquire);
        if (!c)
            return -2;
        if (c == key && s->nthreads == n)
            return s->region;
    }
    return -2;
}

static inline int32_t pm_omp_name_region(struct pm_omp_names *t, const void *key, unsigned n)
{
    int32_t r = key ? pm_omp_name_lookup(t, key, n) : -2;
    return r != -2 ? r : pm_omp_name_slow(t, key, n);
}

/* Fixed regions ("omp barrier"), interned on first use (interning is
 * idempotent: a race only interns twice). */
int32_t pm_omp_fixed(_Atomic int32_t *slot, const char *name);

/* Where a construct is, the same for both sources: `FN` for the first
 * construct of function FN, `FN#K` for its K-th after that (ordinal K; 0
 * or unknown (-1): no suffix), then ` at FILE:LINE` when file is given. */
void pm_omp_where(char *out, size_t size, const char *fn, long ordinal, const char *file, int line);

#endif
