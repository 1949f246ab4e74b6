/*
 * by_table.c — the model's table behind `perfmark report --by rank|thread`: the
 * view's metric of every (shown region, rank) or (shown region, thread).
 *
 * The table is region-major while the file is thread-major, and the
 * regions to show are known only once the report is built. So a second pass
 * over the cells, a block of thread rows at a time like the first
 * (report_stream.c), collects the values: per rank into memory (one number
 * per shown region and rank: what the table prints), per thread into a
 * temporary file, each block's values written at their place in the
 * region-major order and read back region by region while the table is
 * printed. Memory stays bounded by a block and the ranks, not by the
 * threads of the file.
 */
#include "model/by_table.h"
#include "model/report_spool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_BY_REC 9 /* bytes per thread record: the value, then pm_by_* bits */
#define PM_BY_WINDOW 4096 /* thread records read back at once */

enum { PM_BY_SHOWN = 1, PM_BY_HAS = 2 }; /* record bits; the mark is << 2 */

/* How far to trust a time (report_measure.c). */
static int pm_time_mark(int kind, int bad)
{
    return (kind == PM_V_ESTIMATE ? PM_MARK_ESTIMATE : 0) |
           (kind == PM_V_NONE || bad ? PM_MARK_UNTRUSTED : 0);
}

/* The view's metric of cell (t, r) of block `c`, and how far to trust it
 * (pm_cell_metric and pm_cell_mark on a block). `tm` = the thread's times. */
static double pm_by_metric(const struct pm_report *rep, const struct pm_cells *c, size_t t,
                           size_t r, const struct pm_ctime *tm, int *has, int *mark)
{
    const struct pm_file *d = rep->d;
    size_t i = pm_cell_tr(d, c, t, r), e, g;
    double v = 0;

    *has = 1;
    *mark = c->flags[i] & PM_FILE_FLAG_LOST_GENERATION ? PM_MARK_UNTRUSTED : 0;
    switch (rep->view.metric) {
    case PM_VM_TIME: /* a sampled cell's time is an estimate */
        *mark = pm_time_mark(tm[r].kind, 0);
        *has = tm[r].kind != PM_V_NONE;
        return (double)tm[r].ns;
    case PM_VM_EXCL:
        *mark = pm_time_mark(tm[r].excl_kind, tm[r].excl_bad);
        *has = tm[r].excl_kind != PM_V_NONE;
        return (double)tm[r].excl;
    case PM_VM_VISITS: *mark = 0; return (double)c->visits[i]; /* visits are exact */
    default: break;
    }
    /* a timer-only cell read no counter: its zeros are no value of the region */
    if (d->flag_timer_only && (c->flags[i] & d->flag_timer_only)) {
        *has = 0;
        *mark = 0;
        return 0;
    }
    if (d->flag_throttled && (c->flags[i] & d->flag_throttled))
        *mark |= PM_MARK_PARTIAL;
    e = rep->view.metric_event;
    g = (size_t)d->events[e].group;
    switch (pm_cell_value(c->counts[i * d->E + e], c->enabled_ns[i * d->G + g],
                          c->running_ns[i * d->G + g], &v)) {
    case PM_V_ESTIMATE: *mark |= PM_MARK_ESTIMATE; break;
    case PM_V_NONE: *mark |= PM_MARK_UNTRUSTED; *has = 0; return 0;
    default: break;
    }
    return v;
}

static int pm_by_put(FILE *spool, const unsigned char *buf, size_t n, size_t off)
{
    int fd = fileno(spool);

    while (n > 0) {
        ssize_t w = pwrite(fd, buf, n, (off_t)off);

        if (w <= 0)
            return -1;
        buf += w, n -= (size_t)w, off += (size_t)w;
    }
    return 0;
}

int pm_report_by_collect(struct pm_report *rep, struct pm_bycells *by, char *err, size_t errlen)
{
    const struct pm_file *d = rep->d;
    const struct pm_view *v = &rep->view;
    int by_rank = v->by == PM_BY_RANK;
    size_t B = rep->block_rows ? rep->block_rows : 1, R1 = d->R ? d->R : 1;
    size_t nu = by_rank ? rep->xr.nranks : d->T, n1 = v->nrows ? v->nrows : 1;
    struct pm_ctime *tm = malloc(B * R1 * sizeof *tm);
    unsigned char *rec = NULL;
    struct pm_cells cells;
    int rc = -1;

    memset(by, 0, sizeof *by);
    memset(&cells, 0, sizeof cells);
    by->nunits = nu;
    by->total = calloc(n1, sizeof *by->total);
    if (by_rank) {
        by->val = calloc(n1 * (nu ? nu : 1), sizeof *by->val);
        by->st = calloc(n1 * (nu ? nu : 1), 1);
    } else {
        by->spool = pm_report_spool();
        rec = malloc(B * PM_BY_REC);
        by->win = malloc(PM_BY_WINDOW * PM_BY_REC);
    }
    if (!tm || !by->total || (by_rank ? !by->val || !by->st
                                                  : !by->spool || !rec || !by->win) ||
        pm_cells_alloc(d, B, &cells) < 0) {
        snprintf(err, errlen, "%s: out of memory (or no temporary file)", rep->path);
        goto done;
    }
    for (size_t t0 = 0; t0 < d->T; t0 += B) {
        size_t nt = t0 + B < d->T ? B : d->T - t0;

        if (pm_file_rows(d, t0, nt, &cells, err, errlen) < 0)
            goto done;
        /* each thread's times, as report_stream.c takes them */
        for (size_t t = t0; (v->metric == PM_VM_TIME || v->metric == PM_VM_EXCL) && t < t0 + nt;
             t++)
            pm_thread_times(d, &cells, t, &tm[(t - t0) * R1]);
        for (size_t i = 0; i < v->nrows; i++) {
            size_t r = v->rows[i];

            for (size_t t = t0; t < t0 + nt; t++) {
                int h, m;
                double x = pm_by_metric(rep, &cells, t, r, &tm[(t - t0) * R1], &h, &m);
                int skip = cells.visits[pm_cell_tr(d, &cells, t, r)] == 0 && x == 0;

                if (!skip && h)
                    by->total[i] += x;
                if (by_rank) {
                    size_t k = rep->xr.thread_rank[t];

                    if (skip)
                        continue;
                    by->val[i * nu + k] += h ? x : 0;
                    by->st[i * nu + k] |= (unsigned char)((h ? PM_BY_HAS : 0) | m << 2);
                } else {
                    unsigned char *p = rec + (t - t0) * PM_BY_REC;

                    memcpy(p, &x, sizeof x);
                    p[8] = (unsigned char)((h && !skip ? PM_BY_SHOWN : 0) | m << 2);
                }
            }
            if (!by_rank &&
                pm_by_put(by->spool, rec, nt * PM_BY_REC, (i * d->T + t0) * PM_BY_REC) < 0) {
                snprintf(err, errlen, "%s: cannot write a temporary file", rep->path);
                goto done;
            }
        }
    }
    /* a summary file holds the kept ranks' cells: a share is of the job's total */
    for (size_t i = 0; d->summary && i < v->nrows; i++)
        by->total[i] = pm_view_metric(rep, v->rows[i]);
    by->win_row = SIZE_MAX;
    rc = 0;
done:
    pm_cells_free(&cells);
    free(tm);
    free(rec);
    return rc;
}

int pm_by_get(struct pm_bycells *by, const struct pm_report *rep, size_t i, size_t k, double *x,
              int *mark)
{
    unsigned char st;

    if (by->val) {
        st = by->st[i * by->nunits + k];
        *x = by->val[i * by->nunits + k];
        *mark = st >> 2;
        return (st & PM_BY_HAS) != 0; /* a rank is shown when some cell has a value */
    }
    if (by->win_row != i || k < by->win_k0 || k >= by->win_k0 + by->win_n) {
        size_t n = by->nunits - k < PM_BY_WINDOW ? by->nunits - k : PM_BY_WINDOW;
        size_t got = 0, off = (i * rep->d->T + k) * PM_BY_REC;

        while (got < n * PM_BY_REC) {
            ssize_t r = pread(fileno(by->spool), by->win + got, n * PM_BY_REC - got,
                              (off_t)(off + got));
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        by->win_row = i;
        by->win_k0 = k;
        by->win_n = got / PM_BY_REC;
        if (by->win_n == 0)
            return 0; /* cannot read back: the row is left out */
    }
    const unsigned char *p = by->win + (k - by->win_k0) * PM_BY_REC;

    memcpy(x, p, sizeof *x);
    *mark = p[8] >> 2;
    return (p[8] & PM_BY_SHOWN) != 0;
}

void pm_report_by_free(struct pm_bycells *by)
{
    free(by->total);
    free(by->val);
    free(by->st);
    free(by->win);
    if (by->spool)
        fclose(by->spool);
    memset(by, 0, sizeof *by);
}
