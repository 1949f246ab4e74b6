/*
 * report_topdown.h — the report's TopDown (report_topdown.c): the method and
 * events of the file, per region and for the whole run, the cells left out
 * and why. The arithmetic is runtime/count/pm_topdown.c's, shared with the runtime.
 */
#ifndef PM_REPORT_TOPDOWN_H
#define PM_REPORT_TOPDOWN_H

#include "h5read.h"
#include "model/exact_sum.h"
#include "pm_cpu_models.h"
#include "pm_topdown.h"

#include <stddef.h>
#include <stdint.h>

struct pm_report;

/* Why a cell is left out of the TopDown sums; a cell counts once, under the
 * first of these it carries (missing counts before coarse ones). */
enum pm_td_out { PM_TD_OUT_NOT_COUNTED, PM_TD_OUT_LOST, PM_TD_OUT_SHORT, PM_TD_NOUT };

/* TopDown over a set of cells (a region's threads, or every /thread row). */
struct pm_tdstat {
    size_t used;                  /* cells summed */
    size_t left_out[PM_TD_NOUT];  /* cells left out, by reason */
    int estimate;                 /* some summed cell was multiplexed and scaled */
    struct pm_td_slots slots;     /* the method's slot counts from the summed events */
    int has_ratios;               /* used > 0 and Σ level-1 slots > 0 */
    struct pm_td_breakdown br;
    int has_pcore;                /* hybrid CPU and some enabled time was summed */
    double pcore_share;           /* hybrid: Σrunning / Σenabled of the TopDown group */
};

/* Running sums of the TopDown events over cells: exact counts stay integers
 * (a sum of slots passes 2^53 within a day of thread time), scaled ones are
 * fixed point (exact_sum.h: the same whatever order cells are joined in). */
struct pm_td_sum {
    uint64_t exact[PM_MODEL_MAX_EVENTS];
    pm_fix scaled[PM_MODEL_MAX_EVENTS];
    uint64_t enabled, running;    /* the TopDown group's, over the summed cells */
};

struct pm_tdreport {
    int on;              /* the file's topdown_method is not "" */
    char problem[200];   /* why there is no breakdown although `on` ("" if none) */
    char note[200];      /* what the breakdown lacks that the file announced ("" if none) */
    enum pm_td_method method;
    const char *method_name; /* "perf_metrics", "skylake", "zen4", "arm" or "atom" */
    int hybrid;          /* the cpu_model counts TopDown on P-cores only */
    unsigned width;      /* zen4, arm, atom: slots per cycle of the cpu_model's row */
    unsigned mispred_cycles; /* arm: the row's td_fe_mispred_cycles */
    int levels;          /* 1 or 2 */
    size_t nev;
    size_t ev[PM_MODEL_MAX_EVENTS]; /* /events rows in the method's order */
    struct pm_tdstat *reg;          /* [R] by row; NULL unless the breakdown exists */
    struct pm_tdstat run;           /* the whole run, from /thread totals */
    struct pm_td_sum run_sum;       /* its sums (joined with a summary's other ranks) */
};


/* One cell into a TopDown stat and its sums (report_topdown.c), and the
 * ratios once every cell is in. */
void pm_td_add_cell(const struct pm_tdreport *td, const struct pm_file *d, int visited,
                    uint32_t flags, const uint64_t *counts, const uint64_t *en,
                    const uint64_t *run, struct pm_tdstat *s, struct pm_td_sum *sum);
void pm_td_finish_stat(const struct pm_tdreport *td, const struct pm_td_sum *sum,
                       struct pm_tdstat *s);

/* Cells left out for any reason. */
size_t pm_td_left_out(const struct pm_tdstat *s);

/* The name of a left-out reason, as the flag is named ("SHORT", ...). */
const char *pm_td_out_name(enum pm_td_out k);

/* Whether the report shows TopDown node n for this file (the method's level-1
 * categories, the level-2 ones when measured). */
int pm_td_node_shown(const struct pm_tdreport *td, enum pm_td_node n);

/* Set up a report's TopDown part for file `d` (method, events, td->reg)
 * before any cell; the whole run's breakdown (td->run) is summed from the
 * /thread totals in pm_report_setup's pass over them. Returns 0, or -1 when
 * out of memory. */
int pm_report_topdown(struct pm_tdreport *td, const struct pm_file *d);

#endif /* PM_REPORT_TOPDOWN_H */
