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
#include "report_model.h"

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
    q->total += v;
    q->nvals++;
}

/* A quantity's per-rank sums: rank k's at q[k * stride]. `has`, when not
 * NULL, says which ranks have a value (derived quantities: a share, where
 * the sums' cell counts say nothing). */
struct pm_rqs {
    const struct pm_rq *q;
    size_t stride;
    const unsigned char *has;
};

/* min/mean/max over the ranks that entered and have a value; total and the
 * markers over every rank, so that the total equals the sum over threads. */
static void pm_x_reduce(const struct pm_report *rep, struct pm_rqs a, const unsigned char *entered,
                        struct pm_xstat *x)
{
    size_t vals = 0, cells_na = 0;
    double sum = 0;

    memset(x, 0, sizeof *x);
    for (size_t k = 0; k < rep->nranks; k++) {
        const struct pm_rq *s = &a.q[k * a.stride];
        double v = s->total;

        x->total += v;
        x->estimate |= s->estimate;
        x->untrusted |= s->untrusted || s->n_na > 0;
        vals += s->nvals;
        cells_na += s->n_na;
        if (!entered[k])
            continue;
        if (a.has ? !a.has[k] : s->n_na > 0 && s->nvals == 0) { /* pm_acc_finish's has_total */
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
    /* two passes: stable where every rank has the same large value */
    for (size_t k = 0; k < rep->nranks; k++) {
        const struct pm_rq *s = &a.q[k * a.stride];

        if (entered[k] && (a.has ? a.has[k] : !(s->n_na > 0 && s->nvals == 0)))
            x->sd += (s->total - x->mean) * (s->total - x->mean);
    }
    x->sd = sqrt(x->sd / (double)x->nspread);
    if (x->mean > 0) {
        x->has_imbalance = 1;
        x->imbalance = x->max / x->mean;
    }
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

int pm_report_ranks_setup(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t np;

    if (pm_rank_index(rep) < 0)
        return -1;
    rep->mpi_fn = malloc((d->R ? d->R : 1) * sizeof *rep->mpi_fn);
    rep->mpi_outer = malloc(d->R ? d->R : 1);
    np = pm_omp_wait_pairs(d, NULL, NULL);
    rep->wait_above = malloc((np + 1) * sizeof *rep->wait_above);
    rep->wait_row = malloc((np + 1) * sizeof *rep->wait_row);
    if (!rep->mpi_fn || !rep->mpi_outer || !rep->wait_above || !rep->wait_row)
        return -1;
    rep->nwait = pm_omp_wait_pairs(d, rep->wait_above, rep->wait_row);
    for (size_t r = 0; r < d->R; r++) {
        rep->mpi_fn[r] = pm_is_mpi(&d->regions[r]) ? 0 : PM_NONE;
        if (pm_is_omp_wait(&d->regions[r]))
            rep->has_omp_wait = 1;
    }
    /* MPI time of a rank: its outermost MPI cells only, so that an MPI call
     * made inside another (not expected: the wrappers call PMPI_) is not
     * counted twice. Parents come before children: one pass decides "no MPI
     * ancestor". */
    for (size_t r = 0; r < d->R; r++) {
        int32_t p = d->regions[r].parent;
        int mpi_above = p >= 0 && (rep->mpi_fn[p] != PM_NONE || !rep->mpi_outer[p]);

        rep->mpi_outer[r] = !mpi_above;
    }
    return 0;
}

/* The MPI time of each rank (summed over its threads: with
 * MPI_THREAD_MULTIPLE, threads waiting in MPI at once add up, and the share
 * can exceed 1) over its time: its longest thread, the closest the file has
 * to the rank's elapsed time (threads are timed from first sight, the main
 * thread from the start of measurement). */
static void pm_mpi_share(struct pm_report *rep, const struct pm_rankcells *rc,
                         unsigned char *entered, unsigned char *has, struct pm_rq *tmp)
{
    const struct pm_file *d = rep->d;

    for (size_t k = 0; k < rep->nranks; k++) {
        memset(&rep->share[k], 0, sizeof rep->share[k]);
        rep->share[k].rank = rep->ranks[k];
        rep->share[k].mpi_ns = rc->mpi_ns[k];
    }
    for (size_t t = 0; t < d->T; t++) {
        struct pm_mpishare *s = &rep->share[rep->thread_rank[t]];

        if (d->thread_wall_ns[t] > s->total_ns)
            s->total_ns = d->thread_wall_ns[t];
    }
    for (size_t k = 0; k < rep->nranks; k++) {
        struct pm_mpishare *s = &rep->share[k];

        s->has_share = s->total_ns > 0;
        if (s->has_share)
            s->share = (double)s->mpi_ns / (double)s->total_ns;
        /* every rank takes part: no MPI at all is a share of 0 */
        entered[k] = 1;
        memset(&tmp[k], 0, sizeof tmp[k]);
        tmp[k].total = s->share;
        has[k] = (unsigned char)s->has_share;
    }
    pm_x_reduce(rep, (struct pm_rqs){tmp, 1, has}, entered, &rep->share_stat);
}

int pm_report_ranks_finish(struct pm_report *rep, const struct pm_rankcells *rc)
{
    const struct pm_file *d = rep->d;
    size_t nq = PM_Q_EVENTS + d->E, nf, stride = d->R * (nq + 1);
    size_t *rows = NULL, *start = NULL;
    unsigned char *entered = NULL, *has = NULL;
    struct pm_rq *tmp = NULL;
    int ret = -1;

    rows = malloc((d->R ? d->R : 1) * sizeof *rows);
    start = malloc((d->R + 1) * sizeof *start);
    entered = malloc(rep->nranks ? rep->nranks : 1);
    has = malloc(rep->nranks ? rep->nranks : 1);
    tmp = calloc((rep->nranks ? rep->nranks : 1) * PM_Q_EVENTS, sizeof *tmp);
    if (!rows || !start || !entered || !has || !tmp)
        goto done;
    nf = pm_mpi_functions(d, rep->mpi_fn, rows, start);
    if (nq > SIZE_MAX / (d->R + nf + 1))
        goto done;
    rep->xreg = calloc(d->R ? d->R : 1, sizeof *rep->xreg);
    rep->mpif = calloc(nf ? nf : 1, sizeof *rep->mpif);
    rep->xq = calloc((d->R + nf) * nq + 1, sizeof *rep->xq);
    rep->share = calloc(rep->nranks ? rep->nranks : 1, sizeof *rep->share);
    rep->xexcl = calloc(d->R ? d->R : 1, sizeof *rep->xexcl);
    rep->xomp = calloc(d->R ? d->R : 1, sizeof *rep->xomp);
    if (!rep->xreg || !rep->mpif || !rep->xq || !rep->share || !rep->xexcl || !rep->xomp)
        goto done;
    for (size_t r = 0; r < d->R; r++) {
        const struct pm_rq *q0 = rc->rq + r * (nq + 1);

        /* a rank entered a region when one of its threads has visits there */
        for (size_t k = 0; k < rep->nranks; k++)
            entered[k] = q0[k * stride + PM_Q_VISITS].total > 0;
        rep->xreg[r].name = d->regions[r].name;
        rep->xreg[r].q = rep->xq + r * nq;
        rep->xreg[r].entered = 0;
        for (size_t k = 0; k < rep->nranks; k++)
            rep->xreg[r].entered += entered[k];
        for (size_t q = 0; q < nq; q++)
            pm_x_reduce(rep, (struct pm_rqs){q0 + q, stride, NULL}, entered, &rep->xreg[r].q[q]);
        pm_x_reduce(rep, (struct pm_rqs){q0 + nq, stride, NULL}, entered, &rep->xexcl[r]);
        if (!rep->has_omp_wait)
            continue;
        /* the OpenMP wait share of each rank: its threads' wait below the
         * region over their time in it */
        for (size_t k = 0; k < rep->nranks; k++) {
            uint64_t tns = rc->omp[(k * d->R + r) * 2], wns = rc->omp[(k * d->R + r) * 2 + 1];

            memset(&tmp[k], 0, sizeof tmp[k]);
            tmp[k].total = tns > 0 ? (double)wns / (double)tns : 0;
            has[k] = tns > 0;
            /* a rank without time in the region has no share */
            entered[k] = entered[k] && tns > 0;
        }
        pm_x_reduce(rep, (struct pm_rqs){tmp, 1, has}, entered, &rep->xomp[r]);
    }
    /* an MPI function: per rank, its rows summed in row order. The values
     * are integers (calls, bytes, ns), exact in a double below 2^53, so the
     * order does not change them. */
    for (size_t f = 0; f < nf; f++) {
        struct pm_xregion *x = &rep->mpif[f];

        x->name = d->regions[rows[start[f]]].name;
        x->q = rep->xq + (d->R + f) * nq;
        memset(tmp, 0, rep->nranks * PM_Q_EVENTS * sizeof *tmp);
        memset(entered, 0, rep->nranks);
        for (size_t i = start[f]; i < start[f + 1]; i++)
            for (size_t k = 0; k < rep->nranks; k++) {
                const struct pm_rq *q0 = rc->rq + k * stride + rows[i] * (nq + 1);

                entered[k] |= q0[PM_Q_VISITS].total > 0;
                for (size_t q = 0; q < PM_Q_EVENTS; q++) {
                    struct pm_rq *t = &tmp[k * PM_Q_EVENTS + q];

                    t->total += q0[q].total;
                    t->nvals += q0[q].nvals;
                    t->n_na += q0[q].n_na;
                    t->estimate |= q0[q].estimate;
                    t->untrusted |= q0[q].untrusted;
                }
            }
        x->entered = 0;
        for (size_t k = 0; k < rep->nranks; k++)
            x->entered += entered[k];
        for (size_t q = 0; q < PM_Q_EVENTS; q++)
            pm_x_reduce(rep, (struct pm_rqs){tmp + q, PM_Q_EVENTS, NULL}, entered, &x->q[q]);
    }
    rep->nmpif = nf;
    qsort(rep->mpif, nf, sizeof *rep->mpif, pm_cmp_mpif);
    pm_mpi_share(rep, rc, entered, has, tmp);
    ret = 0;
done:
    free(rows);
    free(start);
    free(entered);
    free(has);
    free(tmp);
    return ret;
}
