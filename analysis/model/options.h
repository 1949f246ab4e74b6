/*
 * options.h — what the user asks the report to show (perfmark report
 * --by/--region/--top/--metric). The model applies them (pm_report_select);
 * the CLI fills them from the command line.
 */
#ifndef PM_OPTIONS_H
#define PM_OPTIONS_H

#include <stddef.h>

/* Report options (perfmark report --by/--region/--top/--metric). */
enum pm_by { PM_BY_REGION, PM_BY_RANK, PM_BY_THREAD };

struct pm_report_opts {
    enum pm_by by;      /* text: which breakdown (region = the full report) */
    const char *region; /* NULL: all; else a region name or path: its subtree(s) */
    size_t top;         /* 0: all; else the N regions with the largest metric */
    const char *metric; /* NULL: "time" (inclusive); "excl", "visits", or an event key */
    int wide;           /* text: region names never cut, their columns as wide as the longest */
};

#endif /* PM_OPTIONS_H */
