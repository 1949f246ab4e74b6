/*
 * report_model.h — the aggregated model of a perfmark file
 * (pm_report_build_stream): per region, per thread, across ranks, TopDown,
 * derived metrics, flags, and the view the options select. What every
 * renderer reads; it knows nothing of any renderer or of the command line.
 */
#ifndef PM_REPORT_MODEL_H
#define PM_REPORT_MODEL_H

#include "h5read.h"
#include "model/options.h"
#include "model/report_count.h"
#include "model/report_derived.h"
#include "model/report_measure.h"
#include "model/report_omp.h"
#include "model/report_ranks.h"
#include "model/report_regstat.h"
#include "model/flame.h"
#include "model/profile.h"
#include "model/node.h"
#include "model/series.h"
#include "model/report_topdown.h"
#include "pm_cpu_models.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a rank row's "difference" (process - threads sum) means. */
extern const char pm_unseen_label[];
/* What the difference between a process's own totals and its threads'
 * sum is, for this file: which threads it has rows for decides. */
const char *pm_unseen_label_of(const struct pm_file *d);

#define PM_FLAG_WHERE 3 /* cells named per flag in the flags summary */

/* A cell carrying a flag: region row and thread row. */
struct pm_flagwhere {
    size_t r, t;
};

/* The metric regions are sorted by and the breakdowns show. */
enum pm_metric_kind { PM_VM_TIME, PM_VM_EXCL, PM_VM_VISITS, PM_VM_EVENT };

/* The regions to show, in order: tree order, or by the metric for --top. */
struct pm_view {
    size_t *rows;   /* [nrows] region rows */
    size_t nrows;
    int filtered;   /* some option removed or reordered regions */
    enum pm_metric_kind metric;
    size_t metric_event; /* PM_VM_EVENT: /events row */
    enum pm_by by;
    struct pm_report_opts opts;
};

#define PM_TOP_THREADS 48 /* threads per region in the HTML per-thread bars */
#define PM_HEAT_COLS 1024 /* heat map columns at most */

/* A thread among the slowest of a region (HTML per-thread bars). */
struct pm_topthr {
    double wall;
    size_t t;
    uint32_t flags;
};

struct pm_report {
    const struct pm_file *d;
    const char *path;
    size_t *order; /* [R] region rows in tree (preorder) order */
    size_t *pos;   /* [R] position of a row in `order` */
    struct pm_regstat *reg; /* [R] by row */
    struct pm_evstat *regev; /* [R*E] storage behind reg[].ev */
    struct pm_rankstat *rank; /* [N*E] */
    size_t *rank_threads;    /* [N] threads compared with each rank row */
    char **evkey;            /* [E] unique JSON key per event */
    struct pm_flagdef flags[PM_MAX_FLAGS];
    size_t nflags;
    size_t cells;         /* cells with visits > 0 or flags != 0 */
    size_t flagged_cells; /* cells with flags != 0 */

    struct pm_xranks xr; /* across ranks (report_ranks.c) */

    struct pm_tdreport td; /* report_topdown.c */

    /* added with issue 6 */
    size_t ev_instructions, ev_cycles; /* /events rows, SIZE_MAX when absent */
    int thread_estimate, thread_na; /* some /thread total is an estimate / has no value */
    struct pm_flagwhere *where; /* [nflags * PM_FLAG_WHERE] first cells carrying each flag */
    size_t *nwhere;             /* [nflags] cells recorded in `where` */
    struct pm_view view;        /* what the options select (pm_report_select) */

    /* streaming (report_stream.c) */
    size_t block_rows;          /* thread rows aggregated per block */

    /* HTML charts, filled while the cells stream (rep->heat != NULL only
     * for --format html): the heat map's Σ wall_ns per (region, column),
     * columns = ranks (several ranks) or thread rows, the first heat_cols of
     * them; and per region the PM_TOP_THREADS visiting threads of most time */
    double *heat;               /* [R * heat_cols] */
    unsigned char *heat_in;     /* [R * heat_cols] the column entered the region */
    size_t heat_cols;
    int heat_by_rank;
    struct pm_topthr *top;      /* [R * PM_TOP_THREADS] */
    size_t *ntop;               /* [R] */

    /* derived metrics of the CPU-model tables (report_derived.c) */
    struct pm_dgroup dgroups[PM_NGROUPS];
    size_t ndgroups;

    /* perfmark's own reads over the whole run, from the /thread totals
     * (report_measure.c) */
    struct pm_measure ms;     /* which visits were measured, what it cost (report_measure.c) */
    /* the sampled profile (profile.h), made after the pass over the cells
     * for files with samples (pm_profile_build); NULL otherwise */
    struct pm_profile *profile;
    /* flame graphs of the samples, one per sampled event (flame.h), made
     * for the HTML page only; NULL otherwise */
    struct pm_flame *flame;
    size_t nflame;
    /* counts over time (series.h), made after the pass for files with a
     * series (pm_series_build); NULL otherwise */
    struct pm_series_view *series;
    /* node mode (node.h), for files with watched CPUs; NULL otherwise */
    struct pm_node_view *node;
};

/* The steps of a build around the cells (report_model.c): setup before
 * them, the flag definitions and derived metrics after. */
int pm_report_setup(struct pm_report *rep, const struct pm_file *d, const char *path);
void pm_flag_defs(struct pm_report *rep, uint32_t seen);
void pm_report_derived(struct pm_report *rep);

void pm_report_free(struct pm_report *rep);

/* Apply the options to `rep` (fills rep->view). Returns 0, -1 when out of
 * memory, or -2 with a message in err when an option names nothing in the
 * file (unknown --metric event, --region matching no region). The build
 * leaves the view at every region in tree order. */
int pm_report_select(struct pm_report *rep, const struct pm_report_opts *o, char *err,
                     size_t errlen);

/* The value of the view's metric for region row r (0 when it has none). */
double pm_view_metric(const struct pm_report *rep, size_t r);

/* How far to trust a cell's value of the view's metric: ~ scaled estimate
 * (or a time extrapolated from sampled visits), ! counts missing (no
 * estimate, or counters reopened inside a visit), * counts of the visits
 * before the throttle only (THROTTLED). */
enum { PM_MARK_ESTIMATE = 1, PM_MARK_UNTRUSTED = 2, PM_MARK_PARTIAL = 4 };
int pm_cell_mark(const struct pm_report *rep, size_t t, size_t r);

/* Rank and thread of the job's thread row t, as the statistics name it
 * (a max's thread, a flag's first cells): d->tids[t], or in a summary file
 * the row's entry in /summary/ref_*. {-1, -1} when unknown. */
struct pm_file_tid pm_report_tid(const struct pm_report *rep, size_t t);
/* The thread rows a finished report's statistics name (a region's min and
 * max thread, an event's max, a flag's first cells), ascending and
 * distinct, into rows[pm_report_refs_cap]: what a summary file must name. */
size_t pm_report_refs_cap(const struct pm_report *rep);
size_t pm_report_refs(const struct pm_report *rep, uint64_t *rows);

/* The rank of /rank row n: row n is rank n (a summary file: its n-th kept
 * rank, /summary/kept_rank). */
static inline int32_t pm_rank_of_row(const struct pm_file *d, size_t n)
{
    return d->summary && n < d->nkept ? d->kept_rank[n] : (int32_t)n;
}

/* Which threads a /rank row is compared with. The schema does not say how
 * rows map to ranks: one row (one file per process) is the whole process;
 * with several rows, row n is rank pm_rank_of_row. */
static inline int pm_rank_has_thread(const struct pm_file *d, size_t n, size_t t)
{
    return d->N == 1 || d->tids[t].rank == pm_rank_of_row(d, n);
}

/* Thread rows of the whole job: a summary file holds the kept ranks'. */
static inline size_t pm_job_threads(const struct pm_file *d)
{
    return d->summary ? (size_t)d->summary_threads : d->T;
}

/* /threads row t for a renderer walking the rows in order: `b` (zeroed, then
 * pm_report_threads_done) holds a block of rows, read again when t leaves
 * it, so the rows are read once per walk and never all kept. A row that
 * cannot be read (the file changed since it was checked) reads as zeros and
 * "", said once on stderr. */
const struct pm_file_thread *pm_report_thread(const struct pm_report *rep,
                                              struct pm_thread_rows *b, size_t t);
void pm_report_threads_done(struct pm_thread_rows *b);
/* The /thread totals' block holding row t, walked the same way (b zeroed,
 * then pm_report_totals_done); a block that cannot be read reads as zeros,
 * said once on stderr. NULL only when out of memory (said on stderr). */
const struct pm_totals *pm_report_totals(const struct pm_report *rep, struct pm_totals *b,
                                         size_t t);
void pm_report_totals_done(struct pm_totals *b);

/* The flags present in a region as "NAME:n" joined by `sep` ("" if none);
 * with `from_visit`, THROTTLED is followed by the visit its counts stop at,
 * " (from visit N)" or " (from visit N-M)" across threads. */
void pm_region_flag_list(const struct pm_report *rep, const struct pm_regstat *s,
                         const char *sep, int from_visit, char *buf, size_t len);

/* The flag of this kind in rep->flags (SIZE_MAX when the file has none). */
size_t pm_flag_of_kind(const struct pm_report *rep, enum pm_flag_kind kind);

#endif /* PM_REPORT_MODEL_H */
