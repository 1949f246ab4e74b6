/*
 * text_ranks.c — the terminal report's sections about processes and ranks:
 * each process's inherited totals against the sum of its threads, and, for a
 * file of several ranks, the MPI functions, the MPI time share and the user
 * regions across ranks.
 */
#include "render/text/text_ranks.h"
#include "render/text/text_fmt.h"
#include "render/common/render_common.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PM_SHARE_RANKS 16 /* ranks listed one per line; more get a summary */
#define PM_FUNC_W 25      /* fits MPI_Reduce_scatter_block */

static void pm_text_rank_row(FILE *out, const struct pm_report *rep, size_t n)
{
    const struct pm_file *d = rep->d;
    char p[48], s[48], diff[48];

    if (d->N > 1)
        fprintf(out, "rank row %zu (%zu thread%s of rank %d)\n", n, rep->rank_threads[n],
                rep->rank_threads[n] == 1 ? "" : "s", (int)pm_rank_of_row(d, n));
    pm_text_cell(out, "event", PM_NAME_W, PM_LEFT);
    fprintf(out, " %13s %13s %13s\n", "process", "threads sum", "difference");
    for (size_t e = 0; e < d->E; e++) {
        const struct pm_rankstat *rs = &rep->rank[n * d->E + e];

        int is_time = pm_event_is_time(&d->events[e]);
        pm_fmt_value(p, sizeof p, rs->proc.has_total, rs->proc.total, &rs->proc, is_time);
        pm_fmt_value(s, sizeof s, rs->sum.has_total, rs->sum.total, &rs->sum, is_time);
        if (rs->proc.has_total && rs->sum.has_total) {
            if (is_time)
                pm_unit_time(diff, sizeof diff, rs->proc.total - rs->sum.total);
            else
                pm_fmt_count(diff, sizeof diff, rs->proc.total - rs->sum.total);
            if (rs->proc.estimate || rs->sum.estimate)
                strcat(diff, "~");
        } else {
            snprintf(diff, sizeof diff, "n/a");
        }
        pm_text_cell(out, d->events[e].name, PM_NAME_W, PM_LEFT);
        putc(' ', out);
        pm_text_cell(out, p, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_cell(out, s, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_cell(out, diff, 13, PM_RIGHT);
        putc('\n', out);
    }
}

void pm_text_process_totals(FILE *out, const struct pm_report *rep)
{
    if (rep->d->N == 0)
        return;
    fputs("\nProcess totals (inherited counter set) vs. the sum of per-thread totals\n", out);
    for (size_t n = 0; n < rep->d->N; n++)
        pm_text_rank_row(out, rep, n);
    fputs("difference = ", out);
    pm_text_wrap(out, pm_unseen_label_of(rep->d), 13);
}

/* max/mean with at most 4 significant characters; "-" when mean is 0. */
static void pm_fmt_ratio(char *buf, size_t len, const struct pm_xstat *x)
{
    if (x->has_imbalance)
        snprintf(buf, len, "%.*f", pm_unit_prec(x->imbalance), x->imbalance);
    else
        snprintf(buf, len, "-");
}

static void pm_fmt_rank(char *buf, size_t len, int has, int32_t rank)
{
    if (has)
        snprintf(buf, len, "%d", (int)rank);
    else
        snprintf(buf, len, "-");
}

/* "4 ranks", or "1 rank of the job's 4" for a file of part of a job. */
static void pm_rank_count(char *buf, size_t len, const struct pm_report *rep)
{
    int n = snprintf(buf, len, "%zu rank%s", rep->xr.nranks, rep->xr.nranks == 1 ? "" : "s");

    if (n > 0 && (size_t)n < len && rep->d->ranks > 0 && (size_t)rep->d->ranks != rep->xr.nranks)
        snprintf(buf + n, len - (size_t)n, " of the job's %d", (int)rep->d->ranks);
}

/* min, mean, max per rank (as times), imbalance and the rank of the max:
 * the right-hand columns shared by both across-ranks tables. */
static void pm_text_spread(FILE *out, const struct pm_xstat *x, size_t width)
{
    const double v[3] = {x->min, x->mean, x->max};
    char buf[32];

    for (int k = 0; k < 3; k++) {
        if (x->nspread)
            pm_fmt_time_m(buf, sizeof buf, 1, v[k], x->estimate, 0);
        else
            snprintf(buf, sizeof buf, "-");
        putc(' ', out);
        pm_text_cell(out, buf, width, PM_RIGHT);
    }
    pm_fmt_ratio(buf, sizeof buf, x);
    fprintf(out, " %5s", buf);
    pm_fmt_rank(buf, sizeof buf, x->nspread > 0, x->max_rank);
    fprintf(out, " %8s\n", buf);
}

static void pm_text_mpi_functions(FILE *out, const struct pm_report *rep)
{
    char head[200], n[32], a[32], b[32], c[32];

    pm_rank_count(n, sizeof n, rep);
    snprintf(head, sizeof head, "MPI functions across ranks: %s; every call path summed; a "
             "rank's value is the sum over its threads, min/mean/max over the ranks that "
             "called", n);
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    pm_text_cell(out, "function", PM_FUNC_W, PM_LEFT);
    fprintf(out, " %7s %7s %7s %8s %8s %8s %8s %5s %8s\n", "calls", "bytes", "unknown", "time",
            "min", "mean", "max", "imbal", "max@rank");
    for (size_t f = 0; f < rep->xr.nmpif; f++) {
        const struct pm_xregion *x = &rep->xr.mpif[f];

        pm_text_cell(out, x->name[0] ? x->name : "\"\"", PM_FUNC_W, PM_LEFT);
        pm_fmt_count(a, sizeof a, x->q[PM_Q_VISITS].total);
        pm_fmt_count(b, sizeof b, x->q[PM_Q_BYTES].total);
        pm_fmt_count(c, sizeof c, x->q[PM_Q_BYTES_UNKNOWN].total);
        fprintf(out, " %7s %7s %7s ", a, b, c);
        pm_fmt_time_m(a, sizeof a, x->q[PM_Q_WALL].has_total, x->q[PM_Q_WALL].total,
                      x->q[PM_Q_WALL].estimate, x->q[PM_Q_WALL].untrusted);
        pm_text_cell(out, a, 8, PM_RIGHT);
        pm_text_spread(out, &x->q[PM_Q_WALL], 8);
    }
    fputs("unknown = calls whose byte count could not be determined; time = inclusive wall "
          "time\n", out);
}

static void pm_text_share_line(FILE *out, const struct pm_mpishare *s)
{
    char a[32], b[32], c[32];

    pm_fmt_time_m(a, sizeof a, 1, (double)s->mpi_ns, s->estimate, 0);
    pm_unit_time(b, sizeof b, (double)s->total_ns);
    pm_fmt_pct(c, sizeof c, s->has_share, s->share);
    if (s->has_share && s->estimate)
        strcat(c, "~");
    fprintf(out, "%8d ", (int)s->rank);
    pm_text_cell(out, a, 11, PM_RIGHT);
    putc(' ', out);
    pm_text_cell(out, b, 11, PM_RIGHT);
    fprintf(out, " %7s\n", c);
}

/* The 3 highest shares (lowest rank first on ties) for a job too large to
 * list rank by rank. */
static void pm_text_share_top(FILE *out, const struct pm_report *rep)
{
    size_t top[3], ntop = 0;
    char buf[32];

    for (size_t k = 0; k < rep->xr.nranks; k++) {
        size_t i;

        if (!rep->xr.share[k].has_share)
            continue;
        for (i = ntop; i > 0 && rep->xr.share[top[i - 1]].share < rep->xr.share[k].share; i--)
            if (i < 3)
                top[i] = top[i - 1];
        if (i < 3) {
            top[i] = k;
            ntop += ntop < 3;
        }
    }
    fputs("highest:", out);
    for (size_t i = 0; i < ntop; i++) {
        pm_fmt_pct(buf, sizeof buf, 1, rep->xr.share[top[i]].share);
        fprintf(out, "%s rank %d %s", i ? "," : "", (int)rep->xr.share[top[i]].rank, buf);
    }
    putc('\n', out);
}

static void pm_text_mpi_share(FILE *out, const struct pm_report *rep)
{
    const struct pm_xstat *x = &rep->xr.share_stat;
    char a[32], b[32], c[32];

    fputs("\nMPI time share per rank: time in MPI calls (the outermost ones, summed over the "
          "rank's\n", out);
    fputs("threads) / the rank's time (its longest thread)\n", out);
    if (rep->xr.nranks <= PM_SHARE_RANKS) {
        fprintf(out, "%8s %11s %11s %7s\n", "rank", "MPI", "rank time", "share");
        for (size_t k = 0; k < rep->xr.nranks; k++)
            pm_text_share_line(out, &rep->xr.share[k]);
    }
    if (x->nspread == 0) {
        fputs("no rank has a time\n", out);
        return;
    }
    pm_fmt_pct(a, sizeof a, 1, x->min);
    pm_fmt_pct(b, sizeof b, 1, x->mean);
    pm_fmt_pct(c, sizeof c, 1, x->max);
    fprintf(out, "min %s (rank %d)   mean %s   max %s (rank %d)", a, (int)x->min_rank, b, c,
            (int)x->max_rank);
    if (x->nspread < rep->xr.nranks)
        fprintf(out, "   n/a: %zu rank%s without time", rep->xr.nranks - x->nspread,
                rep->xr.nranks - x->nspread == 1 ? "" : "s");
    putc('\n', out);
    if (rep->xr.nranks > PM_SHARE_RANKS)
        pm_text_share_top(out, rep);
}

static void pm_text_regions_ranks(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char head[200], n[32], a[32];
    size_t shown = 0;

    pm_rank_count(n, sizeof n, rep);
    snprintf(head, sizeof head, "Regions across ranks: %s; user regions; time = wall time "
             "summed over the rank's threads, min/mean/max over the ranks that entered", n);
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %5s %9s %9s %9s %9s %5s %8s\n", "ranks", "visits", "min/rank", "mean/rank",
            "max/rank", "imbal", "max@rank");
    for (size_t i = 0; i < d->R; i++) {
        size_t r = rep->order[i];
        const struct pm_xregion *x = &rep->xr.xreg[r];

        if (strcmp(d->regions[r].kind, "mpi") == 0)
            continue;
        pm_text_region_name(out, &d->regions[r]);
        pm_fmt_count(a, sizeof a, x->q[PM_Q_VISITS].total);
        fprintf(out, " %5zu %9s", x->entered, a);
        pm_text_spread(out, &x->q[PM_Q_WALL], 9);
        shown++;
    }
    if (shown == 0)
        fputs("(no user region was recorded)\n", out);
}

/* Shown only for files of several ranks: a single-rank report is unchanged. */
void pm_text_across_ranks(FILE *out, const struct pm_report *rep)
{
    if (!rep->xr.multi_rank)
        return;
    if (rep->xr.nmpif > 0) {
        pm_text_mpi_functions(out, rep);
        pm_text_mpi_share(out, rep);
    }
    pm_text_regions_ranks(out, rep);
}
