#include "pm_clock.h"

#include <stdio.h>
#include <string.h>

/* Shortest baseline for the TSC calibration: pairing error of ~50 ns over
 * 5 ms keeps the conversion within 1e-5. */
#define PM_CALIBRATION_MIN_NS 5000000u

int pm_clock_uses_tsc;
static uint64_t pm_tsc0, pm_mono0;

static int pm_cpu_has_invariant_tsc(void)
{
#if defined(__aarch64__)
    return 1;  /* the generic timer counts at a constant rate by the architecture */
#endif
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}

void pm_clock_init(void)
{
    pm_clock_uses_tsc = pm_cpu_has_invariant_tsc();
    pm_mono0 = pm_mono_ns();
    pm_tsc0 = pm_cycle_counter();
}

double pm_clock_ns_per_tick(void)
{
    if (!pm_clock_uses_tsc)
        return 1.0;
    uint64_t mono1, tsc1;
    do {
        mono1 = pm_mono_ns();
        tsc1 = pm_cycle_counter();
    } while (mono1 - pm_mono0 < PM_CALIBRATION_MIN_NS);
    if (tsc1 <= pm_tsc0)
        return 1.0;
    return (double)(mono1 - pm_mono0) / (double)(tsc1 - pm_tsc0);
}

const char *pm_clock_name(void)
{
#if defined(__aarch64__)
    return pm_clock_uses_tsc ? "cntvct" : "monotonic";
#else
    return pm_clock_uses_tsc ? "tsc" : "monotonic";
#endif
}
