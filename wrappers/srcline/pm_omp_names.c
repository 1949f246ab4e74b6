/* OpenMP constructs as region ids (pm_omp_names.h). */
#include "pm_omp_names.h"
#include "pm_auto.h"

#include <stdio.h>

int32_t pm_omp_name_slow(struct pm_omp_names *t, const void *key, unsigned n)
{
    pthread_mutex_lock(&t->lock);
    int32_t r = pm_omp_name_lookup(t, key, n);
    if (r == -2) {
        char name[640];
        t->format(name, sizeof name, key, n);
        r = pm_auto_region(name, PM_KIND_OMP);
        /* Keep the table at most 3/4 full so probes stay short; past that
         * (hundreds of constructs × team sizes) names are resolved here
         * each time: slower, still right. A NULL key cannot be a key. */
        if (key && r >= 0 && t->used < PM_OMP_NAMES / 4 * 3) {
            uint32_t h = pm_omp_name_hash(key, n);
            while (atomic_load_explicit(&t->slot[h].key, memory_order_relaxed))
                h = (h + 1) & (PM_OMP_NAMES - 1);
            t->slot[h].nthreads = n;
            t->slot[h].region = r;
            atomic_store_explicit(&t->slot[h].key, key, memory_order_release);
            t->used++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}

int32_t pm_omp_fixed(_Atomic int32_t *slot, const char *name)
{
    int32_t r = atomic_load_explicit(slot, memory_order_relaxed);
    if (__builtin_expect(r < 0, 0)) {
        r = pm_auto_region(name, PM_KIND_OMP);
        atomic_store_explicit(slot, r, memory_order_relaxed);
    }
    return r;
}

void pm_omp_where(char *out, size_t size, const char *fn, long ordinal, const char *file, int line)
{
    int n = ordinal > 0 ? snprintf(out, size, "%s#%ld", fn, ordinal) : snprintf(out, size, "%s", fn);
    if (file && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, " at %s:%d", file, line);
}
