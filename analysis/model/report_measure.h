/*
 * report_measure.h — which visits were measured and what measuring cost
 * (report_measure.c): a cell's time and exclusive time, perfmark's own part
 * in a cell, and the report's steps that add them.
 */
#ifndef PM_REPORT_MEASURE_H
#define PM_REPORT_MEASURE_H

#include "h5read.h"
#include "model/report_count.h"

#include <stddef.h>
#include <stdint.h>

struct pm_regstat;
struct pm_xregion;

/* report_measure.c: docs/hdf5-schema.md, "Which visits read counters" and
 * "What measuring costs". */

/* The time of a cell: wall_ns holds its timed visits only, so where fewer
 * visits were timed than made, the time is wall_ns x visits / timed_visits
 * (rounded to the ns: PM_V_ESTIMATE); no timed visit at all is no time
 * (PM_V_NONE, *ns = 0); else wall_ns (PM_V_EXACT). */
enum pm_vkind pm_cell_time(uint64_t wall, uint64_t visits, uint64_t timed, uint64_t *ns);

/* One cell's time and exclusive time (its time minus its children's,
 * clamped at 0), with what they rest on. */
struct pm_ctime {
    uint64_t ns, excl;
    unsigned char kind;      /* enum pm_vkind of ns */
    unsigned char excl_kind; /* PM_V_NONE without a time; PM_V_ESTIMATE when it or a
                                child's is an estimate */
    unsigned char excl_bad;  /* a child has no time: excl may be too large */
};

/* Thread row t of block c: out[r] for every region row r. */
void pm_thread_times(const struct pm_file *d, const struct pm_cells *c, size_t t,
                     struct pm_ctime *out);

/* perfmark's part in a cell: CPU time carries (reads + counted visits)
 * readings, wall time `reads` (each at cost_ns). */
void pm_cell_own(uint64_t reads, uint64_t visits, uint64_t timer_visits, double cost_ns,
                 double *cpu_ns, double *wall_ns);

/* A report's account of measuring (report_model.h: pm_report.ms). */
struct pm_measure {
    int measuring;            /* the file says which visits read counters (a throttle
                                 attribute or the /region or /thread data): formats add
                                 what they show of it; older files keep their layout */
    int has_read_cost;        /* some thread records a read cost > 0 */
    uint64_t run_reads;       /* Σ /thread/reads */
    double run_reads_ns;      /* Σ reads x read_cost_ns (pm_measure_run_done) */
    pm_fix run_reads_sum;     /* the same, exact: joined in any order */
    uint64_t run_thread_ns;   /* Σ /thread/wall_ns */
    double cost_min, cost_max; /* read_cost_ns over the threads that have one */
    size_t ev_cpu_time;       /* the task-clock (else cpu-clock) row, SIZE_MAX */
    int time_est, time_na;    /* some region's time is an estimate / lacks cells */
};

/* Setup: the CPU-time event; per /thread row (pm_thread_pass) the run's
 * reads. After the cells: which regions are timer only (their event
 * statistics then have no value, before IPC and derived metrics are made of
 * them; `timer_only_flag` is the report's index of TIMER_ONLY, SIZE_MAX
 * without), perfmark's share of each region's CPU time (reg[R]); after the
 * statistics across ranks (xreg[R], NULL for none), the same for those. */
void pm_measure_setup(struct pm_measure *m, const struct pm_file *d);
void pm_measure_thread(struct pm_measure *m, const struct pm_totals *b, size_t t);
/* After the last thread (or a summary's last join): run_reads_ns. */
void pm_measure_run_done(struct pm_measure *m);
/* The run's reads of b's threads (all after a's) into a's. */
void pm_measure_join(struct pm_measure *a, const struct pm_measure *b);
void pm_measure_regions(struct pm_measure *m, const struct pm_file *d, struct pm_regstat *reg,
                        size_t timer_only_flag);
void pm_measure_ranks(const struct pm_file *d, const struct pm_regstat *reg,
                      struct pm_xregion *xreg);

#endif /* PM_REPORT_MEASURE_H */
