/* The selftest's judging and parsing: a count inside its range passes, one
 * outside fails whichever tool measured it, nothing measured is skipped;
 * truth lines and perf stat's CSV (msec, <not supported>) read right. */
#include "check.h"
#include "selftest.h"

#include <math.h>
#include <string.h>

static struct pm_st_check make(double lo, double hi, double pm, double perf_lo, double perf_hi,
                               double perf)
{
    struct pm_st_check c;
    memset(&c, 0, sizeof c);
    c.lo = lo, c.hi = hi, c.perfmark = pm;
    c.perf_lo = perf_lo, c.perf_hi = perf_hi, c.perf = perf;
    return c;
}

int main(void)
{
    struct pm_st_check c = make(4000, 4008, 4000, 0, 0, NAN);
    CHECK(pm_st_judge(&c) == PM_ST_PASS, "at the low bound");
    c = make(4000, 4008, 4008, 0, 0, NAN);
    CHECK(pm_st_judge(&c) == PM_ST_PASS, "at the high bound");
    c = make(4000, 4008, 3999, 0, 0, NAN);
    CHECK(pm_st_judge(&c) == PM_ST_FAIL && strstr(c.note, "perfmark"), "below: %s", c.note);
    c = make(4000, 4008, 0, 0, 0, NAN);
    CHECK(pm_st_judge(&c) == PM_ST_FAIL, "zero counted");
    c = make(4000, 4008, 4004, 3968, 4040, 5000);
    CHECK(pm_st_judge(&c) == PM_ST_FAIL && strstr(c.note, "perf's"), "perf outside: %s", c.note);
    c = make(4000, 4008, 9000, 3968, 4040, 4001);
    CHECK(pm_st_judge(&c) == PM_ST_FAIL && strstr(c.note, "perf's is in it"), "%s", c.note);
    c = make(4000, 4008, NAN, 3968, 4040, 4001);
    CHECK(pm_st_judge(&c) == PM_ST_PASS, "perf alone in range");
    c = make(4000, 4008, NAN, 0, 0, NAN);
    CHECK(pm_st_judge(&c) == PM_ST_SKIP && c.note[0], "nothing measured");

    const char *out = "hello\ntruth touch pages=4000\ntruth spin cpu_ns=100012896\n"
                      "truth hop skipped=one-cpu-allowed\ntruth loop iterations=5 instructions=10 "
                      "branches=5\n";
    CHECK(pm_st_truth(out, "touch", "pages") == 4000, "pages");
    CHECK(pm_st_truth(out, "spin", "cpu_ns") == 100012896, "cpu_ns");
    CHECK(pm_st_truth(out, "hop", "moves") == -1, "a skipped kernel has no truth");
    CHECK(pm_st_truth(out, "loop", "branches") == 5, "last key of a line");
    CHECK(pm_st_truth(out, "sleep", "sleeps") == -1, "a kernel that did not run");

    /* perf stat -x, as perf 6.1 writes it */
    const char *perf = "# started on Wed Nov 25\n\n"
                       "100.27,msec,task-clock,100271183,100.00,0.998,CPUs utilized\n"
                       "4066,,page-faults,100271183,100.00,40.550,K/sec\n"
                       "1,,context-switches,100271183,100.00,9.973,/sec\n"
                       "<not supported>,,cycles,0,100.00,,\n"
                       "2000123,,instructions:u,5000,100.00,,\n";
    CHECK(fabs(pm_st_perf_value(perf, "task-clock") - 100.27e6) < 1, "msec to ns: %f",
          pm_st_perf_value(perf, "task-clock"));
    CHECK(pm_st_perf_value(perf, "page-faults") == 4066, "page-faults");
    CHECK(pm_st_perf_value(perf, "context-switches") == 1, "context-switches");
    CHECK(isnan(pm_st_perf_value(perf, "cycles")), "not supported is no number");
    CHECK(pm_st_perf_value(perf, "instructions") == 2000123, "modifier suffix");
    CHECK(isnan(pm_st_perf_value(perf, "task")), "a prefix is not the event");
    CHECK(isnan(pm_st_perf_value(perf, "cpu-migrations")), "absent");
    return TEST_DONE("selftest");
}
