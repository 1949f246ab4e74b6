/* pm_clock — the wall clock for regions.
 *
 * With an invariant TSC (constant_tsc + nonstop_tsc) we read rdtsc (≈9 ns
 * here, against ≈19 ns for clock_gettime) and convert ticks to ns at the
 * end, calibrated against CLOCK_MONOTONIC over the whole run. The perf mmap
 * page would give the exact conversion (cap_user_time) but software events
 * do not fill it in. Without an invariant TSC, ticks are CLOCK_MONOTONIC ns. */
#ifndef PM_CLOCK_H
#define PM_CLOCK_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

extern int pm_clock_uses_tsc;

void pm_clock_init(void);
/* ns per tick, calibrated from init to now (spins up to a few ms if the
 * run was too short for an accurate figure). */
double pm_clock_ns_per_tick(void);
const char *pm_clock_name(void);

static inline uint64_t pm_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t pm_ticks(void)
{
    return pm_clock_uses_tsc ? __rdtsc() : pm_mono_ns();
}

#endif
