/*
 * report_regstat.h — a region's statistics over its cells, and the flags a
 * report names: what the report model (report_model.c, report_stream.c)
 * fills and its parts (report_measure.c) complete.
 */
#ifndef PM_REPORT_REGSTAT_H
#define PM_REPORT_REGSTAT_H

#include "model/report_count.h"

#include <stddef.h>
#include <stdint.h>

#define PM_MAX_FLAGS 32 /* flags are uint32: one name per bit at most */

struct pm_regstat {
    uint64_t visits;
    size_t nvisited;
    uint64_t wall_total, wall_min, wall_max;
    double wall_mean;
    size_t flag_cells[PM_MAX_FLAGS]; /* threads whose cell carries flags[i] */
    struct pm_evstat *ev;       /* [E] */
    /* added with issue 6 */
    struct pm_tstat wall_thr;   /* inclusive time over visiting threads */
    uint64_t excl_total;        /* Σ exclusive time (rep->excl) */
    struct pm_tstat excl_thr;   /* exclusive time over visiting threads */
    int has_ipc;                /* the file has instructions and cycles, both with totals */
    double ipc;                 /* Σinstructions / Σcycles over the region's cells */
    int ipc_estimate, ipc_untrusted; /* either total is an estimate / undercounts */
    uint64_t omp_wait_ns;       /* Σ time in omp wait regions below it (pm_is_omp_wait) */
    int has_omp_wait_share;     /* wall_total > 0 */
    double omp_wait_share;      /* omp_wait_ns / wall_total */
    /* added with the throttle (report_measure.c). Every time above is the
     * report's time of each cell (pm_cell_time): wall_ns, or, where only some
     * visits were timed (MPI polls after their warm-up), its estimate */
    size_t nwall;               /* visiting threads with a time: behind wall_min/mean/max */
    size_t time_est;            /* cells whose time is an estimate */
    size_t time_na;             /* visiting cells without a time (no visit was timed) */
    int has_wall;               /* some cell has a time, or none lacks one */
    int excl_est, excl_bad;     /* exclusive time: from an estimate / a child without a time */
    uint64_t wall_raw;          /* Σ /region/wall_ns as stored: the timed visits only */
    uint64_t timed_visits, timer_visits, reads;
    double own_cpu_ns;          /* perfmark's part in the CPU time: (reads + counted visits) x cost */
    double own_wall_ns;         /* ... in the wall time: reads x cost */
    int has_own_share;          /* the region has a CPU-time event total > 0 */
    double own_share;           /* own_cpu_ns / that total */
    size_t throttled;           /* cells with throttled_from > 0 */
    uint64_t throttled_min, throttled_max; /* their throttled_from */
    int timer_only;             /* every visiting cell is TIMER_ONLY: no count is the region's
                                   (its event statistics are left without a value) */
};

/* What a flag is to the report beyond its name: the flags of the throttle
 * change what a row shows (pm_file.flag_timer_only and friends). */
enum pm_flag_kind { PM_FK_OTHER, PM_FK_TIMER_ONLY, PM_FK_THROTTLED, PM_FK_OVERHEAD };

struct pm_flagdef {
    uint32_t bit;
    const char *name;
    char hex[16]; /* name for a bit the file does not name */
    size_t cells; /* cells of the whole file carrying it */
    enum pm_flag_kind kind;
};

#endif /* PM_REPORT_REGSTAT_H */
