/*
 * by_table.h — the table of `perfmark report --by rank|thread` (by_table.c):
 * the view's metric of every (shown region, rank) or (shown region, thread),
 * collected by a second pass over the cells. The text renderer prints it.
 */
#ifndef PM_BY_TABLE_H
#define PM_BY_TABLE_H

#include "model/report_model.h"

#include <stddef.h>
#include <stdio.h>

/* The view's metric per (shown region, rank or thread), for --by
 * (by_table.c): ranks in memory, threads in a temporary file. */
struct pm_bycells {
    size_t nunits;          /* ranks or thread rows */
    double *total;          /* [view.nrows] the region's total over every thread */
    double *val;            /* by rank: [view.nrows * nranks] */
    unsigned char *st;      /* by rank: the same, has a value | mark << 2 */
    FILE *spool;            /* by thread: [view.nrows][T] records */
    unsigned char *win;     /* by thread: records read back */
    size_t win_row, win_k0, win_n;
};
/* Collect them with a second pass over the cells (after pm_report_select).
 * Returns 0, or -1 with a message in err. */
int pm_report_by_collect(struct pm_report *rep, struct pm_bycells *by, char *err, size_t errlen);
/* Unit k of shown region i: 0 when the table leaves it out, else 1 with its
 * value and PM_MARK_* bits. */
int pm_by_get(struct pm_bycells *by, const struct pm_report *rep, size_t i, size_t k, double *x,
              int *mark);
void pm_report_by_free(struct pm_bycells *by);

#endif /* PM_BY_TABLE_H */
