/* pm_clock — the wall clock for regions.
 *
 * With an invariant TSC (constant_tsc + nonstop_tsc) we read rdtsc (≈9 ns
 * here, against ≈19 ns for clock_gettime) and convert ticks to ns at the
 * end, calibrated against CLOCK_MONOTONIC over the whole run. The perf mmap
 * page would give the exact conversion (cap_user_time) but software events
 * do not fill it in. Without an invariant TSC, ticks are CLOCK_MONOTONIC ns.
 * On arm64 the generic timer's virtual count (CNTVCT_EL0, constant rate by
 * the architecture, readable at EL0) plays the TSC's part. */
#ifndef PM_CLOCK_H
#define PM_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The CPU's constant-rate cycle counter: rdtsc, or CNTVCT_EL0 on arm64. */
static inline uint64_t pm_cycle_counter(void)
{
#if defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
#else
    return __rdtsc();
#endif
}

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
    return pm_clock_uses_tsc ? pm_cycle_counter() : pm_mono_ns();
}

#endif
