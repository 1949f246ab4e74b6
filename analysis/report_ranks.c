/*
 * report_ranks.c — the report across MPI ranks: every region and every MPI
 * function (summed over all the paths it was called from) compared rank by
 * rank, and each rank's share of time in MPI.
 *
 * A rank's value is the sum over its threads (the /threads rows with that
 * rank) of their cells, each cell counted by the same rules as everywhere
 * else (pm_acc_add). Across ranks: the total, and min/mean/max over the
 * ranks that entered, because a rank that never called MPI_Bcast is not
 * evidence of a fast MPI_Bcast; the imbalance max/mean says how far the
 * slowest rank is from the average one, and the rank holding the max says
 * where to look.
 */
#include "report_model.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX

/* One rank's running sum of one quantity. */
struct pm_rankacc {
    struct pm_evstat s;
    struct pm_acc a;
};

/* Cells (t, r) of a set of regions: one region, or every region of one MPI
 * function. */
struct pm_rows {
    const size_t *row;
    size_t n;
};

static int pm_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* The distinct rank values of /threads, ascending, and each thread's index
 * among them. The schema keeps rows in rank order, but nothing here relies
 * on it. */
static int pm_rank_index(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t n = 0;

    rep->ranks = malloc((d->T ? d->T : 1) * sizeof *rep->ranks);
    rep->thread_rank = malloc((d->T ? d->T : 1) * sizeof *rep->thread_rank);
    if (!rep->ranks || !rep->thread_rank)
        return -1;
    for (size_t t = 0; t < d->T; t++)
        rep->ranks[t] = d->threads[t].rank;
    qsort(rep->ranks, d->T, sizeof *rep->ranks, pm_cmp_i32);
    for (size_t t = 0; t < d->T; t++)
        if (n == 0 || rep->ranks[n - 1] != rep->ranks[t])
            rep->ranks[n++] = rep->ranks[t];
    rep->nranks = n;
    for (size_t t = 0; t < d->T; t++) {
        const int32_t *k = bsearch(&d->threads[t].rank, rep->ranks, n, sizeof *rep->ranks,
                                   pm_cmp_i32);
        rep->thread_rank[t] = (size_t)(k - rep->ranks);
    }
    /* a per-rank file of a larger job holds one rank, but its numbers are
     * still one rank's share of a job: say so rather than hide it */
    rep->multi_rank = n > 1 || d->ranks > 1;
    return 0;
}

/* The uint64 per-cell quantities, by PM_Q_ index. */
static uint64_t pm_cell_quantity(const struct pm_file *d, size_t q, size_t cell)
{
    switch (q) {
    case PM_Q_VISITS: return d->visits[cell];
    case PM_Q_WALL: return d->wall_ns[cell];
    case PM_Q_BYTES: return d->bytes[cell];
    default: return d->bytes_unknown[cell];
    }
}

/* entered[k] = some thread of rank k visited one of the rows. */
static size_t pm_entered(const struct pm_report *rep, struct pm_rows rows, unsigned char *entered)
{
    const struct pm_file *d = rep->d;
    size_t n = 0;

    memset(entered, 0, rep->nranks);
    for (size_t t = 0; t < d->T; t++)
        for (size_t i = 0; i < rows.n; i++)
            if (d->visits[pm_tr(d, t, rows.row[i])] > 0)
                entered[rep->thread_rank[t]] = 1;
    for (size_t k = 0; k < rep->nranks; k++)
        n += entered[k];
    return n;
}

/* min/mean/max over the ranks that entered and have a value; total and the
 * markers over every rank, so that the total equals the sum over threads. */
static void pm_x_reduce(const struct pm_report *rep, const struct pm_rankacc *acc,
                        const unsigned char *entered, struct pm_xstat *x)
{
    size_t vals = 0, cells_na = 0;
    double sum = 0;

    memset(x, 0, sizeof *x);
    for (size_t k = 0; k < rep->nranks; k++) {
        const struct pm_evstat *s = &acc[k].s;
        double v = s->total;

        x->total += v;
        x->estimate |= s->estimate;
        x->untrusted |= s->untrusted;
        vals += acc[k].a.nvals;
        cells_na += s->n_na;
        if (!entered[k])
            continue;
        if (!s->has_total) {
            x->n_na++;
            continue;
        }
        /* strict comparisons over ascending ranks: ties go to the lowest */
        if (x->nspread == 0 || v < x->min) {
            x->min = v;
            x->min_rank = rep->ranks[k];
        }
        if (x->nspread == 0 || v > x->max) {
            x->max = v;
            x->max_rank = rep->ranks[k];
        }
        sum += v;
        x->nspread++;
    }
    /* the same rule as a region's total over threads: none only when some
     * cell lacks an estimate and no cell has one */
    x->has_total = !(cells_na > 0 && vals == 0);
    if (x->nspread == 0)
        return;
    x->mean = sum / (double)x->nspread;
    if (x->mean > 0) {
        x->has_imbalance = 1;
        x->imbalance = x->max / x->mean;
    }
}

/* Quantity q (PM_Q_*) of the cells of `rows`, per rank, then across ranks. */
static void pm_x_quantity(const struct pm_report *rep, struct pm_rows rows, size_t q,
                          const unsigned char *entered, struct pm_rankacc *acc,
                          struct pm_xstat *x)
{
    const struct pm_file *d = rep->d;

    memset(acc, 0, rep->nranks * sizeof *acc);
    for (size_t t = 0; t < d->T; t++) {
        struct pm_rankacc *ra = &acc[rep->thread_rank[t]];

        for (size_t i = 0; i < rows.n; i++) {
            size_t r = rows.row[i], c = pm_tr(d, t, r);
            size_t e = q - PM_Q_EVENTS, g;

            if (q < PM_Q_EVENTS) {
                pm_acc_add(&ra->s, &ra->a, pm_cell_quantity(d, q, c), 0, 0, d->visits[c] > 0);
                continue;
            }
            g = (size_t)d->events[e].group;
            if (d->flags[c] & PM_FILE_FLAG_LOST_GENERATION)
                ra->s.untrusted = 1;
            pm_acc_add(&ra->s, &ra->a, d->counts[pm_tre(d, t, r, e)],
                       d->enabled_ns[pm_trg(d, t, r, g)], d->running_ns[pm_trg(d, t, r, g)],
                       d->visits[c] > 0);
        }
    }
    for (size_t k = 0; k < rep->nranks; k++)
        pm_acc_finish(&acc[k].s, &acc[k].a);
    pm_x_reduce(rep, acc, entered, x);
}

static void pm_x_set(const struct pm_report *rep, struct pm_rows rows, size_t nq,
                     unsigned char *entered, struct pm_rankacc *acc, struct pm_xregion *x)
{
    x->entered = pm_entered(rep, rows, entered);
    for (size_t q = 0; q < nq; q++)
        pm_x_quantity(rep, rows, q, entered, acc, &x->q[q]);
}

static int pm_is_mpi(const struct pm_file_region *g)
{
    return strcmp(g->kind, "mpi") == 0;
}

static int pm_cmp_mpif(const void *a, const void *b)
{
    const struct pm_xregion *x = a, *y = b;
    double tx = x->q[PM_Q_WALL].total, ty = y->q[PM_Q_WALL].total;

    if (tx != ty)
        return tx < ty ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* fn[r] = the MPI function of region row r (PM_NONE for other kinds), and
 * `rows` the rows of function f at [start[f], start[f + 1]). */
static size_t pm_mpi_functions(const struct pm_file *d, size_t *fn, size_t *rows, size_t *start)
{
    size_t nf = 0, used = 0;

    for (size_t r = 0; r < d->R; r++) {
        fn[r] = PM_NONE;
        if (!pm_is_mpi(&d->regions[r]))
            continue;
        for (size_t p = 0; p < r && fn[r] == PM_NONE; p++)
            if (fn[p] != PM_NONE && strcmp(d->regions[p].name, d->regions[r].name) == 0)
                fn[r] = fn[p];
        if (fn[r] == PM_NONE)
            fn[r] = nf++;
    }
    for (size_t f = 0; f < nf; f++) {
        start[f] = used;
        for (size_t r = 0; r < d->R; r++)
            if (fn[r] == f)
                rows[used++] = r;
    }
    start[nf] = used;
    return nf;
}

/* MPI time of a rank: its outermost MPI cells only, so that an MPI call made
 * inside another (not expected: the wrappers call PMPI_) is not counted
 * twice. Summed over the rank's threads: with MPI_THREAD_MULTIPLE, threads
 * waiting in MPI at once add up, and the share can exceed 1. The rank's
 * time is its longest thread, the closest the file has to the rank's
 * elapsed time (threads are timed from first sight, the main thread from
 * the start of measurement). `outer` is scratch of R bytes. */
static void pm_mpi_share(struct pm_report *rep, const size_t *fn, unsigned char *outer,
                         unsigned char *entered, struct pm_rankacc *acc)
{
    const struct pm_file *d = rep->d;

    /* parents come before children: one pass decides "no MPI ancestor" */
    for (size_t r = 0; r < d->R; r++) {
        int32_t p = d->regions[r].parent;
        int mpi_above = p >= 0 && (fn[p] != PM_NONE || !outer[p]);

        outer[r] = !mpi_above;
    }
    for (size_t k = 0; k < rep->nranks; k++) {
        memset(&rep->share[k], 0, sizeof rep->share[k]);
        rep->share[k].rank = rep->ranks[k];
    }
    for (size_t t = 0; t < d->T; t++) {
        struct pm_mpishare *s = &rep->share[rep->thread_rank[t]];

        if (d->thread_wall_ns[t] > s->total_ns)
            s->total_ns = d->thread_wall_ns[t];
        for (size_t r = 0; r < d->R; r++)
            if (fn[r] != PM_NONE && outer[r])
                s->mpi_ns = pm_add_sat(s->mpi_ns, d->wall_ns[pm_tr(d, t, r)]);
    }
    memset(acc, 0, rep->nranks * sizeof *acc);
    for (size_t k = 0; k < rep->nranks; k++) {
        struct pm_mpishare *s = &rep->share[k];

        s->has_share = s->total_ns > 0;
        if (s->has_share)
            s->share = (double)s->mpi_ns / (double)s->total_ns;
        /* every rank takes part: no MPI at all is a share of 0 */
        entered[k] = 1;
        acc[k].s.has_total = s->has_share;
        acc[k].s.total = s->share;
    }
    pm_x_reduce(rep, acc, entered, &rep->share_stat);
}

int pm_report_ranks(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t nq = PM_Q_EVENTS + d->E, nf;
    size_t *fn = NULL, *rows = NULL, *start = NULL;
    unsigned char *entered = NULL, *outer = NULL;
    struct pm_rankacc *acc = NULL;
    int rc = -1;

    if (pm_rank_index(rep) < 0)
        return -1;
    fn = malloc((d->R ? d->R : 1) * sizeof *fn);
    rows = malloc((d->R ? d->R : 1) * sizeof *rows);
    start = malloc((d->R + 1) * sizeof *start);
    entered = malloc(rep->nranks ? rep->nranks : 1);
    outer = malloc(d->R ? d->R : 1);
    acc = calloc(rep->nranks ? rep->nranks : 1, sizeof *acc);
    if (!fn || !rows || !start || !entered || !outer || !acc)
        goto done;
    nf = pm_mpi_functions(d, fn, rows, start);
    if (nq > SIZE_MAX / (d->R + nf + 1))
        goto done;
    rep->xreg = calloc(d->R ? d->R : 1, sizeof *rep->xreg);
    rep->mpif = calloc(nf ? nf : 1, sizeof *rep->mpif);
    rep->xq = calloc((d->R + nf) * nq + 1, sizeof *rep->xq);
    rep->share = calloc(rep->nranks ? rep->nranks : 1, sizeof *rep->share);
    if (!rep->xreg || !rep->mpif || !rep->xq || !rep->share)
        goto done;
    for (size_t r = 0; r < d->R; r++) {
        struct pm_rows one = {&r, 1};

        rep->xreg[r].name = d->regions[r].name;
        rep->xreg[r].q = rep->xq + r * nq;
        pm_x_set(rep, one, nq, entered, acc, &rep->xreg[r]);
    }
    for (size_t f = 0; f < nf; f++) {
        struct pm_rows all = {rows + start[f], start[f + 1] - start[f]};

        rep->mpif[f].name = d->regions[all.row[0]].name;
        rep->mpif[f].q = rep->xq + (d->R + f) * nq;
        pm_x_set(rep, all, PM_Q_EVENTS, entered, acc, &rep->mpif[f]);
    }
    rep->nmpif = nf;
    qsort(rep->mpif, nf, sizeof *rep->mpif, pm_cmp_mpif);
    pm_mpi_share(rep, fn, outer, entered, acc);
    rc = 0;
done:
    free(fn);
    free(rows);
    free(start);
    free(entered);
    free(outer);
    free(acc);
    return rc;
}
