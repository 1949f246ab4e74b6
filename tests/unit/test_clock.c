/* The region clock: the cycle counter (rdtsc on x86, CNTVCT_EL0 on arm64)
 * never goes back, and its calibration against CLOCK_MONOTONIC converts a
 * measured sleep to the nanoseconds CLOCK_MONOTONIC saw. Also runs under
 * qemu-aarch64 (tests/aarch64/run.sh), where CNTVCT_EL0 is emulated. */
#include "check.h"
#include "pm_clock.h"

#include <string.h>

/* A tick count and the CLOCK_MONOTONIC time read together: a pair whose
 * two tick reads around the time are more than 50 us apart (the vCPU was
 * preempted or stolen in between) is read again, so that the check below
 * judges the calibration, not the scheduler. */
static void pm_pair(uint64_t *ticks, uint64_t *mono)
{
    for (int i = 0; i < 100; i++) {
        uint64_t before = pm_ticks();
        *mono = pm_mono_ns();
        *ticks = pm_ticks();
        if ((double)(*ticks - before) * pm_clock_ns_per_tick() < 50e3)
            return;
    }
}

int main(void)
{
    pm_clock_init();
    const char *name = pm_clock_name();
#if defined(__aarch64__)
    CHECK(pm_clock_uses_tsc && strcmp(name, "cntvct") == 0, "arm64 clock %s", name);
#else
    CHECK(strcmp(name, pm_clock_uses_tsc ? "tsc" : "monotonic") == 0, "x86 clock %s", name);
#endif
    uint64_t prev = pm_cycle_counter();
    for (int i = 0; i < 100000; i++) {
        uint64_t now = pm_cycle_counter();
        CHECK(now >= prev, "the cycle counter went back: %llu after %llu",
              (unsigned long long)now, (unsigned long long)prev);
        if (now < prev)
            break;
        prev = now;
    }
    uint64_t t0, m0, t1, m1;
    pm_pair(&t0, &m0);
    struct timespec ms20 = {0, 20000000};
    nanosleep(&ms20, NULL);
    pm_pair(&t1, &m1);
    double ns = (double)(t1 - t0) * pm_clock_ns_per_tick(), mono = (double)(m1 - m0);
    CHECK(mono >= 20e6, "slept %.0f ns", mono);
    CHECK(ns > 0.97 * mono && ns < 1.03 * mono, "20 ms sleep: %.0f ns by the region clock, %.0f "
          "by CLOCK_MONOTONIC", ns, mono);
    return TEST_DONE("clock");
}
