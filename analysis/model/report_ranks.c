/*
 * report_ranks.c — the report across MPI ranks: every region and every MPI
 * function (summed over all the paths it was called from) compared rank by
 * rank, and each rank's share of time in MPI.
 *
 * A rank's value is the sum over its threads (the /threads rows with that
 * rank) of their cells, each cell counted by the same rules as everywhere
 * else (pm_rq_add, the total part of pm_acc_add); report_stream.c sums the
 * cells per rank while it streams them, this file turns the sums into
 * statistics across ranks. Across ranks: the total, and min/mean/max over the
 * ranks that entered, because a rank that never called MPI_Bcast is not
 * evidence of a fast MPI_Bcast; the imbalance max/mean says how far the
 * slowest rank is from the average one, and the rank holding the max says
 * where to look.
 */
#include "model/report_ranks.h"

#include "model/report_omp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX

static int pm_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* The distinct rank values of /threads, ascending, and each thread's index
 * among them. The schema keeps rows in rank order, but nothing here relies
 * on it. */
static int pm_rank_index(struct pm_xranks *x, const struct pm_file *d)
{
    size_t n = 0;

    x->ranks = malloc((d->T ? d->T : 1) * sizeof *x->ranks);
    x->thread_rank = malloc((d->T ? d->T : 1) * sizeof *x->thread_rank);
    if (!x->ranks || !x->thread_rank || d->T > UINT32_MAX)
        return -1;
    for (size_t t = 0; t < d->T; t++)
        x->ranks[t] = d->tids[t].rank;
    qsort(x->ranks, d->T, sizeof *x->ranks, pm_cmp_i32);
    for (size_t t = 0; t < d->T; t++)
        if (n == 0 || x->ranks[n - 1] != x->ranks[t])
            x->ranks[n++] = x->ranks[t];
    x->nranks = n;
    for (size_t t = 0; t < d->T; t++) {
        const int32_t *k = bsearch(&d->tids[t].rank, x->ranks, n, sizeof *x->ranks,
                                   pm_cmp_i32);
        x->thread_rank[t] = (uint32_t)(k - x->ranks);
    }
    /* a per-rank file of a larger job holds one rank, but its numbers are
     * still one rank's share of a job: say so rather than hide it */
    x->multi_rank = n > 1 || d->ranks > 1;
    return 0;
}

void pm_rq_add(struct pm_rq *q, uint64_t raw, uint64_t en, uint64_t run, int visited)
{
    double v = 0;
    enum pm_vkind k = pm_cell_value(raw, en, run, &v);

    /* the same rules as pm_acc_add, which this mirrors for the total */
    if (!visited && raw == 0 && en == 0)
        return;
    if (k == PM_V_NONE) {
        q->n_na++;
        return;
    }
    if (k == PM_V_ESTIMATE)
        q->estimate = 1;
    q->sum = pm_fix_add(q->sum, k == PM_V_EXACT ? pm_fix_of_count(raw) : pm_fix_of(v));
    q->nvals++;
}

void pm_rq_add_time(struct pm_rq *q, enum pm_vkind kind, uint64_t ns, int visited)
{
    if (!visited && ns == 0)
        return;
    if (kind == PM_V_NONE) {
        q->n_na++;
        return;
    }
    if (kind == PM_V_ESTIMATE)
        q->estimate = 1;
    q->sum = pm_fix_add(q->sum, pm_fix_of_count(ns));
    q->nvals++;
}

/* One rank's sums into a statistic across ranks (ranks come in ascending
 * order): the total and the markers over every rank, so that the total
 * equals the sum over threads; min/mean/max/sd over the ranks that entered
 * and have a value. `has` < 0: the rank has a value unless some cell lacks
 * an estimate and none has one (pm_acc_finish's has_total); else a derived
 * quantity (a share) says itself. */
static void pm_x_put(struct pm_xstat *x, struct pm_xacc *a, int32_t rank, const struct pm_rq *s,
                     double v, int entered, int has)
{

    a->total = pm_fix_add(a->total, s->sum);
    x->estimate |= s->estimate;
    x->untrusted |= s->untrusted || s->n_na > 0;
    a->vals += s->nvals;
    a->cells_na += s->n_na;
    if (!entered)
        return;
    if (has < 0 ? s->n_na > 0 && s->nvals == 0 : !has) {
        x->n_na++;
        return;
    }
    /* strict comparisons over ascending ranks: ties go to the lowest */
    if (x->nspread == 0 || v < x->min) {
        x->min = v;
        x->min_rank = rank;
    }
    if (x->nspread == 0 || v > x->max) {
        x->max = v;
        x->max_rank = rank;
    }
    /* exact sums: one pass (a rank's sums are gone once it is folded in),
     * and exactly 0 where every rank has the same large value */
    a->sum = pm_fix_add(a->sum, s->sum);
    pm_fixsq_add(&a->sq, s->sum);
    x->nspread++;
    uint32_t *h = &x->hist[pm_xhist_bin(v)];
    *h += *h < UINT32_MAX;
}

size_t pm_xhist_bin(double v)
{
    int e = 0;

    if (!(v >= 1)) /* below 1, and NaN */
        return 0;
    frexp(v, &e); /* v in [2^(e-1), 2^e) */
    return e < PM_XHIST - 1 ? (size_t)e : PM_XHIST - 1;
}

/* The same, the rank's value being its sum (a share passes its own value to
 * pm_x_put: its min and max are then a rank's share as printed, the sums
 * behind the mean and spread its fixed-point value). */
static void pm_x_add(struct pm_xstat *x, struct pm_xacc *a, int32_t rank, const struct pm_rq *s,
                     int entered, int has)
{
    pm_x_put(x, a, rank, s, pm_fix_value(s->sum), entered, has);
}

/* Ranks folded elsewhere (y, b: all above x's) into x, a: what folding
 * them here one by one would have made, ties going to the lower rank. */
static void pm_x_merge(struct pm_xstat *x, struct pm_xacc *a, const struct pm_xstat *y,
                       const struct pm_xacc *b)
{
    a->total = pm_fix_add(a->total, b->total);
    x->estimate |= y->estimate;
    x->untrusted |= y->untrusted;
    a->vals += b->vals;
    a->cells_na += b->cells_na;
    x->n_na += y->n_na;
    if (!a->frac)
        a->frac = b->frac;
    if (y->nspread == 0)
        return;
    if (x->nspread == 0 || y->min < x->min) {
        x->min = y->min;
        x->min_rank = y->min_rank;
    }
    if (x->nspread == 0 || y->max > x->max) {
        x->max = y->max;
        x->max_rank = y->max_rank;
    }
    a->sum = pm_fix_add(a->sum, b->sum);
    pm_fixsq_merge(&a->sq, &b->sq);
    x->nspread += y->nspread;
    for (size_t k = 0; k < PM_XHIST; k++)
        x->hist[k] = x->hist[k] > UINT32_MAX - y->hist[k] ? UINT32_MAX : x->hist[k] + y->hist[k];
}

static void pm_x_finish(struct pm_xstat *x, const struct pm_xacc *a)
{
    /* the same rule as a region's total over threads: none only when some
     * cell lacks an estimate and no cell has one */
    x->has_total = !(a->cells_na > 0 && a->vals == 0);
    int frac = a->frac ? a->frac : PM_FIX_FRAC;
    x->total = pm_fix_value_frac(a->total, frac);
    if (x->nspread == 0)
        return;
    x->mean = pm_fix_mean_frac(a->sum, x->nspread, frac);
    x->sd = pm_fix_sd_frac(a->sum, &a->sq, x->nspread, frac);
    if (x->mean > 0) {
        x->has_imbalance = 1;
        x->imbalance = x->max / x->mean;
    }
}

static int pm_is_mpi(const struct pm_file_region *g)
{
    return strcmp(g->kind, "mpi") == 0;
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

/* Statistics across ranks (xreg, mpif, xexcl, xomp) and their running
 * state, sized once: pm_report_rank_done fills them rank by rank. */
static int pm_xstats_alloc(struct pm_xranks *x, const struct pm_file *d, size_t nf)
{
    size_t nq = PM_Q_EVENTS + d->E;

    if (nq > SIZE_MAX / 4 / (d->R + nf + 1))
        return -1;
    x->xreg = calloc(d->R ? d->R : 1, sizeof *x->xreg);
    x->mpif = calloc(nf ? nf : 1, sizeof *x->mpif);
    x->xq = calloc((d->R + nf) * nq + 1, sizeof *x->xq);
    x->share = calloc(x->nranks ? x->nranks : 1, sizeof *x->share);
    x->xexcl = calloc(d->R ? d->R : 1, sizeof *x->xexcl);
    x->xomp = calloc(d->R ? d->R : 1, sizeof *x->xomp);
    /* [R * nq] regions, [R] exclusive, [R] OpenMP wait, [nf * PM_Q_EVENTS] MPI */
    x->xacc = calloc((d->R * (nq + 2) + nf * PM_Q_EVENTS) + 1, sizeof *x->xacc);
    x->xtmp = calloc(PM_Q_EVENTS, sizeof *x->xtmp);
    if (!x->xreg || !x->mpif || !x->xq || !x->share || !x->xexcl || !x->xomp ||
        !x->xacc || !x->xtmp)
        return -1;
    for (size_t r = 0; r < d->R; r++) {
        x->xreg[r].name = d->regions[r].name;
        x->xreg[r].q = x->xq + r * nq;
    }
    for (size_t f = 0; f < nf; f++) {
        x->mpif[f].name = d->regions[x->mpi_rows[x->mpi_start[f]]].name;
        x->mpif[f].q = x->xq + (d->R + f) * nq;
    }
    for (size_t k = 0; k < x->nranks; k++)
        x->share[k].rank = x->ranks[k];
    x->nmpif = nf;
    return 0;
}

int pm_report_ranks_setup(struct pm_xranks *x, const struct pm_file *d)
{
    size_t np;

    if (pm_rank_index(x, d) < 0)
        return -1;
    x->mpi_fn = malloc((d->R ? d->R : 1) * sizeof *x->mpi_fn);
    x->mpi_outer = malloc(d->R ? d->R : 1);
    x->mpi_rows = malloc((d->R ? d->R : 1) * sizeof *x->mpi_rows);
    x->mpi_start = malloc((d->R + 1) * sizeof *x->mpi_start);
    np = pm_omp_wait_pairs(d, NULL, NULL);
    x->wait_above = malloc((np + 1) * sizeof *x->wait_above);
    x->wait_row = malloc((np + 1) * sizeof *x->wait_row);
    if (!x->mpi_fn || !x->mpi_outer || !x->mpi_rows || !x->mpi_start ||
        !x->wait_above || !x->wait_row)
        return -1;
    x->nwait = pm_omp_wait_pairs(d, x->wait_above, x->wait_row);
    for (size_t r = 0; r < d->R; r++)
        if (pm_is_omp_wait(&d->regions[r]))
            x->has_omp_wait = 1;
    if (pm_xstats_alloc(x, d, pm_mpi_functions(d, x->mpi_fn, x->mpi_rows, x->mpi_start)) < 0)
        return -1;
    /* MPI time of a rank: its outermost MPI cells only, so that an MPI call
     * made inside another (not expected: the wrappers call PMPI_) is not
     * counted twice. Parents come before children: one pass decides "no MPI
     * ancestor". */
    for (size_t r = 0; r < d->R; r++) {
        int32_t p = d->regions[r].parent;
        int mpi_above = p >= 0 && (x->mpi_fn[p] != PM_NONE || !x->mpi_outer[p]);

        x->mpi_outer[r] = !mpi_above;
    }
    return 0;
}

void pm_report_rank_done(struct pm_xranks *x, const struct pm_file *d, size_t k,
                         const struct pm_rq *rq, const uint64_t *omp, uint64_t mpi_ns,
                         int mpi_est)
{
    size_t nq = PM_Q_EVENTS + d->E;
    struct pm_xacc *acc = x->xacc, *accx = acc + d->R * nq, *acco = accx + d->R;
    struct pm_xacc *accm = acco + d->R;
    int32_t rank = x->ranks[k];

    for (size_t r = 0; r < d->R; r++) {
        const struct pm_rq *q0 = rq + r * (nq + 1);
        /* a rank entered a region when one of its threads has visits there */
        int entered = q0[PM_Q_VISITS].sum > 0;

        x->xreg[r].entered += (size_t)entered;
        for (size_t q = 0; q < nq; q++)
            pm_x_add(&x->xreg[r].q[q], &acc[r * nq + q], rank, &q0[q], entered, -1);
        pm_x_add(&x->xexcl[r], &accx[r], rank, &q0[nq], entered, -1);
        if (x->has_omp_wait) {
            /* the OpenMP wait share of the rank: its threads' wait below the
             * region over their time in it; none without time in the region */
            uint64_t tns = omp[r * 2], wns = omp[r * 2 + 1];
            struct pm_rq sh = {0};
            double v = tns > 0 ? (double)wns / (double)tns : 0;

            sh.sum = pm_fix_of_frac(v, PM_FIX_FRAC_SHARE);
            acco[r].frac = PM_FIX_FRAC_SHARE;
            pm_x_put(&x->xomp[r], &acco[r], rank, &sh, v, entered && tns > 0, tns > 0);
        }
    }
    /* an MPI function: the rank's rows summed (exactly, in any order) */
    for (size_t f = 0; f < x->nmpif; f++) {
        struct pm_rq *t = x->xtmp;
        int entered = 0;

        memset(t, 0, PM_Q_EVENTS * sizeof *t);
        for (size_t i = x->mpi_start[f]; i < x->mpi_start[f + 1]; i++) {
            const struct pm_rq *q0 = rq + x->mpi_rows[i] * (nq + 1);

            entered |= q0[PM_Q_VISITS].sum > 0;
            for (size_t q = 0; q < PM_Q_EVENTS; q++) {
                t[q].sum = pm_fix_add(t[q].sum, q0[q].sum);
                t[q].nvals += q0[q].nvals;
                t[q].n_na += q0[q].n_na;
                t[q].estimate |= q0[q].estimate;
                t[q].untrusted |= q0[q].untrusted;
            }
        }
        x->mpif[f].entered += (size_t)entered;
        for (size_t q = 0; q < PM_Q_EVENTS; q++)
            pm_x_add(&x->mpif[f].q[q], &accm[f * PM_Q_EVENTS + q], rank, &t[q], entered, -1);
    }
    x->share[k].mpi_ns = mpi_ns;
    x->share[k].estimate = mpi_est;
}

/* The MPI time of each rank (summed over its threads: with
 * MPI_THREAD_MULTIPLE, threads waiting in MPI at once add up, and the share
 * can exceed 1) over its time: its longest thread, the closest the file has
 * to the rank's elapsed time (threads are timed from first sight, the main
 * thread from the start of measurement). */
static void pm_mpi_share(struct pm_xranks *x)
{
    struct pm_xacc a = {0};

    /* total_ns came with the pass over the /thread totals (pm_report_setup) */
    memset(&x->share_stat, 0, sizeof x->share_stat);
    for (size_t k = 0; k < x->nranks; k++) {
        struct pm_mpishare *s = &x->share[k];
        struct pm_rq v = {0};

        s->has_share = s->total_ns > 0;
        if (s->has_share)
            s->share = (double)s->mpi_ns / (double)s->total_ns;
        /* every rank takes part: no MPI at all is a share of 0 */
        v.sum = pm_fix_of_frac(s->share, PM_FIX_FRAC_SHARE);
        a.frac = PM_FIX_FRAC_SHARE;
        pm_x_put(&x->share_stat, &a, s->rank, &v, s->share, 1, s->has_share);
    }
    pm_x_finish(&x->share_stat, &a);
}

size_t pm_xranks_nxq(const struct pm_xranks *x, const struct pm_file *d)
{
    return (d->R + x->nmpif) * (PM_Q_EVENTS + d->E) + 1;
}

size_t pm_xranks_nxacc(const struct pm_xranks *x, const struct pm_file *d)
{
    return d->R * (PM_Q_EVENTS + d->E + 2) + x->nmpif * PM_Q_EVENTS + 1;
}

int pm_report_ranks_join(struct pm_xranks *x, const struct pm_file *d, const struct pm_xrun *b)
{
    size_t nq = PM_Q_EVENTS + d->E;
    struct pm_xacc *acc = x->xacc, *accx = acc + d->R * nq, *acco = accx + d->R;
    struct pm_xacc *accm = acco + d->R;
    const struct pm_xacc *bacc = b->xacc, *bx = bacc + d->R * nq, *bo = bx + d->R;
    const struct pm_xacc *bm = bo + d->R;
    size_t n = x->nranks + b->nranks;
    struct pm_mpishare *share = realloc(x->share, (n ? n : 1) * sizeof *share);
    int32_t *ranks;

    if (!share)
        return -1;
    x->share = share;
    if (!(ranks = realloc(x->ranks, (n ? n : 1) * sizeof *ranks)))
        return -1;
    x->ranks = ranks;
    for (size_t r = 0; r < d->R; r++) {
        x->xreg[r].entered += b->entered[r];
        for (size_t q = 0; q < nq; q++)
            pm_x_merge(&x->xreg[r].q[q], &acc[r * nq + q], &b->xq[r * nq + q],
                       &bacc[r * nq + q]);
        pm_x_merge(&x->xexcl[r], &accx[r], &b->xexcl[r], &bx[r]);
        pm_x_merge(&x->xomp[r], &acco[r], &b->xomp[r], &bo[r]);
    }
    for (size_t f = 0; f < x->nmpif; f++) {
        x->mpif[f].entered += b->entered[d->R + f];
        for (size_t q = 0; q < PM_Q_EVENTS; q++)
            pm_x_merge(&x->mpif[f].q[q], &accm[f * PM_Q_EVENTS + q],
                       &b->xq[(d->R + f) * nq + q], &bm[f * PM_Q_EVENTS + q]);
    }
    memcpy(x->share + x->nranks, b->share, b->nranks * sizeof *share);
    memcpy(x->ranks + x->nranks, b->ranks, b->nranks * sizeof *ranks);
    x->nranks = n;
    x->multi_rank |= n > 1;
    return 0;
}

void pm_xranks_run(const struct pm_xranks *x, const struct pm_file *d, uint64_t *entered,
                   struct pm_xrun *out)
{
    for (size_t r = 0; r < d->R; r++)
        entered[r] = x->xreg[r].entered;
    for (size_t f = 0; f < x->nmpif; f++)
        entered[d->R + f] = x->mpif[f].entered;
    out->xq = x->xq;
    out->xexcl = x->xexcl;
    out->xomp = x->xomp;
    out->xacc = x->xacc;
    out->entered = entered;
    out->share = x->share;
    out->ranks = x->ranks;
    out->nranks = x->nranks;
}

static int pm_cmp_mpif(const void *a, const void *b)
{
    const struct pm_xregion *x = a, *y = b;
    double tx = x->q[PM_Q_WALL].total, ty = y->q[PM_Q_WALL].total;

    if (tx != ty)
        return tx < ty ? 1 : -1;
    return strcmp(x->name, y->name);
}

void pm_report_ranks_finish(struct pm_xranks *x, const struct pm_file *d)
{
    size_t nq = PM_Q_EVENTS + d->E;
    const struct pm_xacc *acc = x->xacc, *accx = acc + d->R * nq, *acco = accx + d->R;
    const struct pm_xacc *accm = acco + d->R;

    for (size_t r = 0; r < d->R; r++) {
        for (size_t q = 0; q < nq; q++)
            pm_x_finish(&x->xreg[r].q[q], &acc[r * nq + q]);
        pm_x_finish(&x->xexcl[r], &accx[r]);
        pm_x_finish(&x->xomp[r], &acco[r]);
    }
    for (size_t f = 0; f < x->nmpif; f++)
        for (size_t q = 0; q < PM_Q_EVENTS; q++)
            pm_x_finish(&x->mpif[f].q[q], &accm[f * PM_Q_EVENTS + q]);
    qsort(x->mpif, x->nmpif, sizeof *x->mpif, pm_cmp_mpif);
    pm_mpi_share(x);
}

void pm_report_ranks_free(struct pm_xranks *x)
{
    free(x->ranks);
    free(x->thread_rank);
    free(x->xreg);
    free(x->mpif);
    free(x->xq);
    free(x->share);
    free(x->xexcl);
    free(x->xomp);
    free(x->mpi_fn);
    free(x->mpi_outer);
    free(x->wait_above);
    free(x->wait_row);
    free(x->mpi_rows);
    free(x->mpi_start);
    free(x->xacc);
    free(x->xtmp);
}
