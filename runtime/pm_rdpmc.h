/* pm_rdpmc — reading a counter from user space through its perf mmap page.
 *
 * The kernel's seqlock protocol (include/uapi/linux/perf_event.h): retry
 * while `lock` changes; the count is `offset` plus the live PMC when the
 * event is on a counter now (`index != 0`) and the kernel allows rdpmc
 * (`cap_user_rdpmc`); enabled/running advance by the TSC delta converted with
 * time_mult/time_shift when `cap_user_time`. A pure function of the page and
 * two instruction hooks, so it is testable on machines without a PMU. */
#ifndef PM_RDPMC_H
#define PM_RDPMC_H

#include <linux/perf_event.h>
#include <stdint.h>

struct pm_rdpmc_hooks {
    uint64_t (*rdpmc)(uint32_t counter);
    uint64_t (*rdtsc)(void);
};

extern const struct pm_rdpmc_hooks pm_rdpmc_hw;

/* The instructions themselves, inline: a caller that passes a hooks struct
 * built from these as a compile-time constant to an inline reader (as the
 * TopDown rdpmc mode does) gets the instructions with no indirect call. */
static inline uint64_t pm_rdpmc_insn(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t pm_rdtsc_insn(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/* Nanoseconds since the page's time_enabled/time_running were published,
 * from a TSC reading (cap_user_time: time_offset + cyc × mult >> shift,
 * split so that the product cannot overflow). */
static inline uint64_t pm_rdpmc_time_delta(uint64_t cyc, uint64_t time_offset,
                                           uint32_t time_mult, uint16_t time_shift)
{
    uint64_t quot = cyc >> time_shift;
    uint64_t rem = cyc & (((uint64_t)1 << time_shift) - 1);
    return time_offset + quot * time_mult + ((rem * time_mult) >> time_shift);
}

/* 0 and the value/enabled/running, or -1 when the event is not readable from
 * user space right now (not on a counter, or rdpmc not granted): read(). */
int pm_rdpmc_read(const volatile struct perf_event_mmap_page *pc,
                  const struct pm_rdpmc_hooks *hooks, uint64_t *value,
                  uint64_t *enabled, uint64_t *running);

#endif
