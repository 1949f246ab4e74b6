/* `perfmark selftest`: perfmark's own verdict on whether counting works on
 * this machine. Kernels with known counts (selftest/kernels.c) run under
 * perfmark and, where `perf` is installed, under `perf stat`; each count is
 * judged against what the kernel did by construction. docs/guide.md,
 * "Does counting work here? perfmark selftest". */
#ifndef PM_SELFTEST_H
#define PM_SELFTEST_H

#include <stddef.h>

enum pm_st_verdict { PM_ST_PASS, PM_ST_FAIL, PM_ST_SKIP };

/* An expected range for one count, and what perfmark and perf measured. */
struct pm_st_check {
    char kernel[24];    /* the region (kernels.c) */
    char event[40];
    char group[12];     /* sw, hw, multiplexed */
    double lo, hi;      /* expected of perfmark's count, inclusive */
    double perfmark;    /* NAN when not measured */
    double perf_lo, perf_hi; /* expected of perf's (a difference of two runs) */
    double perf;        /* NAN when perf did not run */
    enum pm_st_verdict verdict;
    char note[160];     /* why skipped, or what failed */
};

/* The verdict of one check: perfmark's value must lie in [lo, hi], perf's
 * (where it ran) in [perf_lo, perf_hi]. A check with neither is skipped. */
enum pm_st_verdict pm_st_judge(struct pm_st_check *c);

/* The value of KEY in a kernel's truth line ("truth touch pages=4000"), or
 * -1 when the kernel did not report it (skipped, or not run). */
double pm_st_truth(const char *out, const char *kernel, const char *key);

/* The number in a `perf stat -x,` line for event, or NAN. */
double pm_st_perf_value(const char *perf_out, const char *event);

int pm_selftest_main(int argc, char **argv);

#endif
