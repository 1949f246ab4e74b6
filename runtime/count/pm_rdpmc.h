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
 * TopDown rdpmc mode does) gets the instructions with no indirect call.
 *
 * x86: rdpmc and rdtsc. arm64: the counter the page's index names
 * (index - 1: PMEVCNTR<n>_EL0 for 0..30, PMCCNTR_EL0 for 31), readable at
 * EL0 where the kernel grants it (perf_user_access=1 and the event opened
 * with config1 bit 1), and the virtual count CNTVCT_EL0, the clock of the
 * page's time_* fields (as in the kernel's tools/lib/perf/mmap.c). */
#if defined(__aarch64__)
#define PM_MRS(reg) ({ uint64_t v_; __asm__ volatile("mrs %0, " #reg : "=r"(v_)); v_; })
static inline uint64_t pm_rdpmc_insn(uint32_t counter)
{
    switch (counter) {
#define PM_EVCNTR(n) case n: return PM_MRS(pmevcntr##n##_el0);
    PM_EVCNTR(0) PM_EVCNTR(1) PM_EVCNTR(2) PM_EVCNTR(3) PM_EVCNTR(4) PM_EVCNTR(5)
    PM_EVCNTR(6) PM_EVCNTR(7) PM_EVCNTR(8) PM_EVCNTR(9) PM_EVCNTR(10) PM_EVCNTR(11)
    PM_EVCNTR(12) PM_EVCNTR(13) PM_EVCNTR(14) PM_EVCNTR(15) PM_EVCNTR(16) PM_EVCNTR(17)
    PM_EVCNTR(18) PM_EVCNTR(19) PM_EVCNTR(20) PM_EVCNTR(21) PM_EVCNTR(22) PM_EVCNTR(23)
    PM_EVCNTR(24) PM_EVCNTR(25) PM_EVCNTR(26) PM_EVCNTR(27) PM_EVCNTR(28) PM_EVCNTR(29)
    PM_EVCNTR(30)
#undef PM_EVCNTR
    default:
        return PM_MRS(pmccntr_el0);
    }
}

static inline uint64_t pm_rdtsc_insn(void)
{
    __asm__ volatile("isb" ::: "memory");  /* not before earlier instructions */
    return PM_MRS(cntvct_el0);
}
#else
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
#endif

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
