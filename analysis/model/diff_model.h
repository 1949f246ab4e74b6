/*
 * diff_model.h — the model of `perfmark diff A.h5 B.h5` (diff_model.c): the
 * two files' regions paired by call path and kind, and for each pair and
 * metric both files' values under the report's counting rules, the change,
 * whether it is beyond the spread across units, and whether it regresses
 * past the threshold. The renderers (render/diff_*.c) print it; the command
 * (cli/diff.c) fills it in this order: pm_diff_open both files, pm_diff_units,
 * pm_diff_load_cells for a file whose threads are out of unit order,
 * pm_diff_metrics, pm_diff_stream the others, pm_diff_select_metric,
 * pm_diff_build; then pm_diff_free.
 */
#ifndef PM_DIFF_MODEL_H
#define PM_DIFF_MODEL_H

#include "h5read.h"
#include "model/report_count.h"

#include <stddef.h>
#include <stdint.h>

#define PM_DIFF_NONE SIZE_MAX
#define PM_DIFF_WHOLE (SIZE_MAX - 1) /* the whole run: /thread totals */

/* What is compared: time, visits, one event, or instructions / cycles. */
enum pm_mkind { PM_DM_TIME, PM_DM_VISITS, PM_DM_EVENT, PM_DM_IPC };

struct pm_diff_metric {
    enum pm_mkind kind;
    const char *name;
    size_t ev[2][2]; /* [file][k]: event rows (IPC: instructions, cycles) */
};

/* One file's value of one metric over one region. */
struct pm_diff_side {
    int has;
    double total;
    size_t units; /* units that entered and have a value */
    double mean, min, max;
    int estimate, untrusted;
    int timer_only; /* counts: every visiting cell TIMER_ONLY (no value) */
    int partial;    /* counts: some cell THROTTLED (the first visits only) */
};

/* One (pair, metric): both sides and how B differs from A. */
struct pm_diff_cell {
    struct pm_diff_side s[2];
    int has_change;
    double change;
    int rel_kind; /* 0 = none, 1 = rel valid, 2 = from 0 to a value ("new") */
    double rel;   /* percent of A */
    int beyond;   /* -1 = no spread known, 0, 1 */
    int regressed;
};

/* One of the two files and its units. */
struct pm_diff_file {
    const char *path;
    struct pm_file d;
    int loaded;
    size_t *unit; /* [T] */
    size_t nunits;
    struct pm_diff_side *side; /* [(R + 1) * nm] streamed: every region's sides, then
                                  the whole run's; NULL: cells in memory, pm_side */
};

/* A region of A, B or both (matched by call path and kind), or the whole run. */
struct pm_diff_pair {
    size_t row[2]; /* PM_DIFF_NONE = not in that file; PM_DIFF_WHOLE = the whole run */
};

/* The whole comparison. The command sets f[].path, region and the threshold;
 * the rest is the model's. */
struct pm_diff_profile; /* diff_profile.h */

struct pm_diff {
    struct pm_diff_file f[2];
    int by_rank;
    struct pm_diff_metric *m;
    size_t nm;
    size_t mshow; /* index of --metric, or PM_DIFF_NONE = all */
    struct pm_diff_pair *pairs;
    size_t npairs;
    struct pm_diff_cell *cells; /* [npairs * nm] */
    struct pm_diff_uacc *uacc; /* one per unit (diff_model.c) */
    int measuring; /* either file says which visits read counters: the output shows it */
    const char *region;
    int has_threshold;
    double threshold;
    size_t nregress;
    /* the sampled profiles compared, or NULL: built on this model
     * (pm_diff_profiles) and freed by whoever built them, before
     * pm_diff_free (diff_profile.h) */
    struct pm_diff_profile *prof;
};

/* Open file f->path (its cells stay in the file). Returns 0, or -1 with a
 * message in err (possibly empty). */
int pm_diff_open(struct pm_diff_file *f, char *err, size_t errlen);
/* Each thread's unit: ranks when either file holds several, else threads.
 * Returns 0, or -1 when out of memory. */
int pm_diff_units(struct pm_diff *df);
/* Whether f's threads come in unit order (then its cells can be streamed). */
int pm_diff_units_in_order(const struct pm_diff_file *f);
/* Reopen f with every cell in memory (threads out of unit order). Returns 0,
 * or -1 with a message in err; f is then closed. */
int pm_diff_load_cells(struct pm_diff_file *f, char *err, size_t errlen);
/* The metrics both files have (time, visits, every event by name, ipc when
 * possible), and whether the output shows how visits were measured. Returns
 * 0, or -1 when out of memory. */
int pm_diff_metrics(struct pm_diff *df);
/* Every value of file fi in one pass over its cells, a block of thread rows
 * at a time. Returns 0; -1 when out of memory; -2 with a message in err
 * when the file cannot be read. */
int pm_diff_stream(struct pm_diff *df, int fi, char *err, size_t errlen);
/* The sides of a summary file (PERFMARK_DETAIL=summary), whose cells are
 * the kept ranks' only: each region's from the report's statistics across
 * every rank in its state (units are ranks); IPC without its spread over
 * ranks (units 0), the whole run without a value (a summary keeps no
 * totals across every thread). Instead of pm_diff_stream. Returns 0; -1
 * when out of memory; -2 with a message in err. */
int pm_diff_summary_sides(struct pm_diff *df, int fi, char *err, size_t errlen);
/* --metric: the metric shown and checked. Returns 0, or -1 when both files
 * do not have it. */
int pm_diff_select_metric(struct pm_diff *df, const char *name);
/* Pair the regions and compare them. Returns 0, or -1 when out of memory. */
int pm_diff_build(struct pm_diff *df);
void pm_diff_free(struct pm_diff *df);

/* Whether metric m is shown for pair p (the whole run has no visit count). */
int pm_diff_shown(const struct pm_diff *df, const struct pm_diff_pair *p, size_t m);
/* The pair's call path (NULL for the whole run) and kind ("" for it). */
const char *pm_diff_pair_path(const struct pm_diff *df, const struct pm_diff_pair *p);
const char *pm_diff_pair_kind(const struct pm_diff *df, const struct pm_diff_pair *p);

#endif /* PM_DIFF_MODEL_H */
