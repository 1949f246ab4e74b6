/* The rdpmc seqlock reader on fabricated mmap pages: this machine never
 * grants rdpmc (software events have no counter index), so the protocol is
 * checked against the kernel's documented arithmetic instead. */
#include "check.h"
#include "pm_rdpmc.h"

#include <string.h>

static struct perf_event_mmap_page page;
static uint64_t fake_pmc, fake_tsc;
static int bump_lock_once;

static uint64_t fake_rdpmc(uint32_t counter)
{
    (void)counter;
    if (bump_lock_once) {  /* a concurrent update: the reader must retry */
        bump_lock_once = 0;
        page.lock++;
        page.offset = 1000;
    }
    return fake_pmc;
}

static uint64_t fake_rdtsc(void) { return fake_tsc; }

static const struct pm_rdpmc_hooks hooks = {fake_rdpmc, fake_rdtsc};

int main(void)
{
    uint64_t v, ena, run;

    /* Not on a counter (index 0) or rdpmc not granted: caller must read(). */
    memset(&page, 0, sizeof page);
    page.cap_user_rdpmc = 1;
    CHECK(pm_rdpmc_read(&page, &hooks, &v, &ena, &run) == -1, "index 0 must refuse");
    page.index = 1;
    page.cap_user_rdpmc = 0;
    CHECK(pm_rdpmc_read(&page, &hooks, &v, &ena, &run) == -1, "no cap_user_rdpmc must refuse");

    /* offset + sign-extended 48-bit counter */
    memset(&page, 0, sizeof page);
    page.cap_user_rdpmc = 1;
    page.index = 3;
    page.pmc_width = 48;
    page.offset = (uint64_t)-5000;      /* the kernel keeps a negative offset */
    page.time_enabled = page.time_running = 777;
    fake_pmc = 12000;
    CHECK(pm_rdpmc_read(&page, &hooks, &v, &ena, &run) == 0, "readable page refused");
    CHECK(v == 7000, "value %llu, want 7000", (unsigned long long)v);
    CHECK(ena == 777 && run == 777, "times %llu/%llu", (unsigned long long)ena,
          (unsigned long long)run);
    fake_pmc = 0xFFFFFFFFFFFFull;       /* -1 in 48 bits */
    page.offset = 10;
    pm_rdpmc_read(&page, &hooks, &v, &ena, &run);
    CHECK(v == 9, "48-bit sign extension: %llu, want 9", (unsigned long long)v);

    /* time extrapolation: delta = offset + (cyc >> shift) * mult + ((rem * mult) >> shift) */
    page.cap_user_time = 1;
    page.time_enabled = 1000;
    page.time_running = 600;            /* enabled != running: extrapolate both */
    page.time_offset = 50;
    page.time_mult = 3;
    page.time_shift = 1;
    fake_tsc = 101;                     /* quot 50, rem 1: 50 + 150 + (3 >> 1) = 201 */
    fake_pmc = 0;
    page.offset = 0;
    pm_rdpmc_read(&page, &hooks, &v, &ena, &run);
    CHECK(ena == 1201 && run == 801, "extrapolated %llu/%llu, want 1201/801",
          (unsigned long long)ena, (unsigned long long)run);

    /* seqlock: a change of `lock` during the read forces a retry */
    memset(&page, 0, sizeof page);
    page.cap_user_rdpmc = 1;
    page.index = 1;
    page.pmc_width = 48;
    page.offset = 1;
    fake_pmc = 5;
    bump_lock_once = 1;
    pm_rdpmc_read(&page, &hooks, &v, &ena, &run);
    CHECK(v == 1005, "after retry %llu, want 1005 (new offset)", (unsigned long long)v);
    return TEST_DONE("test_rdpmc");
}
