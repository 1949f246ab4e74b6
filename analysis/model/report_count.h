/*
 * report_count.h — the counting rules (report_count.c): the value of one cell, and
 * the running statistics a set of cells is summed into. Everything that
 * aggregates cells (the report, --by, diff) uses these, so that a number is
 * the same wherever it is shown.
 */
#ifndef PM_REPORT_COUNT_H
#define PM_REPORT_COUNT_H

#include "h5read.h"
#include "model/exact_sum.h"

#include <stddef.h>
#include <stdint.h>

/* One event aggregated over a set of cells (a region's threads, one thread,
 * or the threads of one rank row). */
struct pm_evstat {
    int has_total; /* 0 only when every cell lacks an estimate */
    double total;
    int has_spread; /* min/mean/max over visiting threads exist */
    double min, mean, max;
    uint64_t raw; /* Σ raw counts (saturating) */
    int estimate; /* some cell was scaled */
    int untrusted; /* the total misses counts (LOST_GENERATION or n/a cells) */
    size_t n_na;  /* cells without an estimate */
    int has_share;
    double share; /* Σrunning / Σenabled */
    /* added with issue 6: spread beyond min/mean/max, over the same cells */
    double sd;          /* population standard deviation (0 with one value) */
    size_t max_index;   /* thread row holding the max (lowest on ties); SIZE_MAX if unknown */
    size_t min_index;   /* ... and the min (a summary file's tables name it) */
    size_t nspread;     /* visiting threads with a value: behind min/mean/max */
    int has_imbalance;  /* has_spread and mean > 0 */
    double imbalance;   /* max / mean */
};

/* A uint64 quantity of a region's cells over the threads that visited it
 * (time: inclusive or exclusive). */
struct pm_tstat {
    size_t n;            /* threads behind the spread; 0 = none */
    double min, mean, max, sd;
    size_t min_index, max_index; /* thread rows (lowest on ties) */
    int has_imbalance;   /* n > 0 and mean > 0 */
    double imbalance;    /* max / mean */
};

/* Sums of counters and times saturate instead of wrapping. */
static inline uint64_t pm_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The count of one cell for one event (schema "Counting model"). */
enum pm_vkind { PM_V_EXACT, PM_V_ESTIMATE, PM_V_NONE };
enum pm_vkind pm_cell_value(uint64_t raw, uint64_t en, uint64_t run, double *v);

/* Running state while summing cells into a pm_evstat (pm_acc_add): exact
 * sums (exact_sum.h), so that any way of cutting the cells into blocks and
 * joining them gives the same bits. */
struct pm_acc {
    size_t nvals, nspread;
    pm_fix total, spread;  /* Σ over cells with a value / over visiting ones */
    struct pm_fixsq sq;    /* Σ squares over visiting cells (stddev) */
    uint64_t en, run;
    size_t max_index, min_index;
};

/* Add one cell (raw count, enabled and running time of the event's group) to
 * `s` under the counting rules; `visited` = the cell has visits. Quantities
 * that are not counter readings (visits, time, bytes) are added as exact
 * values with en = run = 0. pm_acc_finish completes `s` once all are in. */
void pm_acc_add(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en, uint64_t run,
                int visited);
/* The same, naming the cell's thread row (kept as max_index when the max). */
void pm_acc_add_at(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en,
                   uint64_t run, int visited, size_t index);
void pm_acc_finish(struct pm_evstat *s, const struct pm_acc *a);
/* A cell's time (pm_cell_time) into `s` like a count: an estimate marks it,
 * none counts as a cell without a value. */
void pm_acc_add_time(struct pm_evstat *s, struct pm_acc *a, enum pm_vkind kind, uint64_t ns,
                     int visited, size_t index);
/* Thread row t's total of event e (/thread/counts) from the block `b` that
 * holds row t (pm_report_totals), made when asked rather than kept for
 * every thread: the report's memory must not grow with the threads. */
void pm_thread_evstat(const struct pm_file *d, const struct pm_totals *b, size_t t, size_t e,
                      struct pm_evstat *s);
/* Add the state (sb, ab) of other cells to (s, a), exactly as if they had
 * been added one by one, in any order; ties of the max go to the lower
 * thread row. Used to join blocks of thread rows (report_stream.c). */
void pm_acc_merge(struct pm_evstat *s, struct pm_acc *a, const struct pm_evstat *sb,
                  const struct pm_acc *ab);

/* Running spread of a uint64 quantity over threads (struct pm_tstat). */
struct pm_tacc {
    pm_fix sum;
    struct pm_fixsq sq;
};
void pm_tacc_add(struct pm_tstat *s, struct pm_tacc *a, uint64_t u, size_t t);
void pm_tacc_merge(struct pm_tstat *s, struct pm_tacc *a, const struct pm_tstat *sb,
                   const struct pm_tacc *ab);
void pm_tacc_finish(struct pm_tstat *s, const struct pm_tacc *a);

#endif /* PM_REPORT_COUNT_H */
