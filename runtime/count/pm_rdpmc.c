#include "pm_rdpmc.h"

static uint64_t pm_hw_rdpmc(uint32_t counter) { return pm_rdpmc_insn(counter); }

static uint64_t pm_hw_rdtsc(void) { return pm_rdtsc_insn(); }

const struct pm_rdpmc_hooks pm_rdpmc_hw = {pm_hw_rdpmc, pm_hw_rdtsc};

#define pm_barrier() __asm__ volatile("" ::: "memory")

int pm_rdpmc_read(const volatile struct perf_event_mmap_page *pc,
                  const struct pm_rdpmc_hooks *hooks, uint64_t *value,
                  uint64_t *enabled, uint64_t *running)
{
    uint32_t seq, idx, width = 0, time_mult = 0;
    uint16_t time_shift = 0;
    uint64_t count, ena, run, cyc = 0, time_offset = 0;
    int user_time;

    do {
        seq = pc->lock;
        pm_barrier();
        ena = pc->time_enabled;
        run = pc->time_running;
        user_time = pc->cap_user_time && ena != run;
        if (user_time) {
            cyc = hooks->rdtsc();
            time_offset = pc->time_offset;
            time_mult = pc->time_mult;
            time_shift = pc->time_shift;
        }
        idx = pc->index;
        count = pc->offset;
        if (pc->cap_user_rdpmc && idx) {
            width = pc->pmc_width;
            uint64_t pmc = hooks->rdpmc(idx - 1);
            /* sign-extend the width-bit counter */
            pmc <<= 64 - width;
            count += (uint64_t)((int64_t)pmc >> (64 - width));
        }
        pm_barrier();
    } while (pc->lock != seq);

    if (!idx || !width)
        return -1;
    if (user_time) {
        uint64_t delta = pm_rdpmc_time_delta(cyc, time_offset, time_mult, time_shift);
        ena += delta;
        run += delta;  /* idx != 0: the event is on a counter now */
    }
    *value = count;
    *enabled = ena;
    *running = run;
    return 0;
}
