/* pm_modules — the objects loaded in this process (dl_iterate_phdr), so that
 * a sampled instruction pointer is kept as (object, offset) with the
 * object's GNU build-id: `perfmark report` finds the right file (or its
 * debug file) later, and names functions and lines offline (docs/design.md,
 * "Sampling"). Taken once, when the file is written; an object unloaded
 * before then leaves its IPs without a module. */
#ifndef PM_MODULES_H
#define PM_MODULES_H

#include <stdint.h>

#define PM_MODULE_PATH 512
#define PM_BUILD_ID_HEX 41  /* 20 bytes as hex, and the NUL */

struct pm_module {
    uint64_t start, end;      /* [start, end): its loadable segments in memory */
    uint64_t base;            /* load bias: an IP's offset in the object is ip - base */
    char build_id[PM_BUILD_ID_HEX]; /* lowercase hex of NT_GNU_BUILD_ID, "" if none */
    char path[PM_MODULE_PATH];      /* as loaded; the executable's real path; "[vdso]" */
};

struct pm_modules {
    int n;
    struct pm_module *m;  /* ascending start, not overlapping */
};

/* 0, or -1 when out of memory (then *out is empty). */
int pm_modules_snapshot(struct pm_modules *out);
void pm_modules_free(struct pm_modules *mods);

/* The module holding `ip`, or -1. */
static inline int pm_modules_find(const struct pm_modules *mods, uint64_t ip)
{
    int lo = 0, hi = mods->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (ip < mods->m[mid].start)
            hi = mid - 1;
        else if (ip >= mods->m[mid].end)
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

#endif
