/*
 * summary_tables.c — a finished report as tables of named columns
 * (summary_tables.h). Each column holds what the report prints of it, under
 * the Python package's name for it, so that a reader maps columns by name.
 */
#include "model/summary_tables.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A region's quantity, an MPI function's quantity: over threads, then
 * across ranks (docs/hdf5-schema.md, "/summary/region_stat"). */
static const char pm_stat_cols[] =
    "row,quantity,total,raw,estimate,untrusted,threads_na,counted_share,threads,min,mean,max,"
    "sd,imbalance,min_thread,max_thread,ranks_entered,rank_total,rank_min,rank_mean,rank_max,"
    "rank_sd,rank_imbalance,min_rank,max_rank,ranks_na,rank_estimate,rank_untrusted,ranks";
enum {
    C_ROW, C_QUANTITY, C_TOTAL, C_RAW, C_ESTIMATE, C_UNTRUSTED, C_THREADS_NA, C_SHARE, C_THREADS,
    C_MIN, C_MEAN, C_MAX, C_SD, C_IMBALANCE, C_MIN_THREAD, C_MAX_THREAD, C_RANKS_ENTERED,
    C_RANK_TOTAL, C_RANK_MIN, C_RANK_MEAN, C_RANK_MAX, C_RANK_SD, C_RANK_IMBALANCE, C_MIN_RANK,
    C_MAX_RANK, C_RANKS_NA, C_RANK_ESTIMATE, C_RANK_UNTRUSTED, C_RANKS, C_N
};

/* Which visits were measured, the OpenMP wait, the threads carrying each
 * flag bit (flag_0 .. flag_31); the sums of nanoseconds and visits, which
 * pass 2^53, are in the integers' table below. */
static const char pm_more_cols[] =
    "row,time_estimate,threads_time_na,exclusive_estimate,exclusive_untrusted,timer_only,"
    "throttled_threads,throttled_from_min,throttled_from_max,perfmark_cpu_ns,perfmark_wall_ns,"
    "perfmark_cpu_share,omp_wait_share,omp_rank_min,omp_rank_mean,omp_rank_max,omp_rank_sd,"
    "omp_max_rank,"
    "flag_0,flag_1,flag_2,flag_3,flag_4,flag_5,flag_6,flag_7,flag_8,flag_9,flag_10,flag_11,"
    "flag_12,flag_13,flag_14,flag_15,flag_16,flag_17,flag_18,flag_19,flag_20,flag_21,flag_22,"
    "flag_23,flag_24,flag_25,flag_26,flag_27,flag_28,flag_29,flag_30,flag_31";
enum { M_FLAGS = 18, M_N = M_FLAGS + PM_MAX_FLAGS };
static const char pm_count_cols[] = "row,wall_ns_raw,timed_visits,timer_visits,reads,omp_wait_ns";
enum { K_N = 6 };

static const char pm_run_cols[] =
    "ranks,share_min,share_mean,share_max,share_min_rank,share_max_rank,reads_ns,reads_share,"
    "cost_ns_min,cost_ns_max,omp_wait";
enum { U_N = 11 };
static const char pm_run_count_cols[] = "cells,flagged_cells,reads,thread_ns";
enum { UK_N = 4 };

static const char pm_share_cols[] = "rank,mpi_ns,total_ns,share,estimate";
enum { S_N = 5 };

/* TopDown of each region and of the whole run (the row -1): the report's
 * `topdown` objects. The columns name the breakdown's nodes. */
static char pm_td_cols[1024], pm_td_slot_cols[512];
enum { T_ROW, T_CELLS_USED, T_ESTIMATE, T_PCORE_SHARE, T_RATIO, T_OUT = T_RATIO + PM_TD_NNODES,
       T_N = T_OUT + PM_TD_NOUT, TS_N = 1 + PM_TD_NNODES };

static void pm_td_names(void)
{
    size_t n = 0, m = 0;

    n += (size_t)snprintf(pm_td_cols, sizeof pm_td_cols, "row,cells_used,estimate,pcore_share");
    m += (size_t)snprintf(pm_td_slot_cols, sizeof pm_td_slot_cols, "slots");
    for (int k = 0; k < PM_TD_NNODES; k++) {
        n += (size_t)snprintf(pm_td_cols + n, sizeof pm_td_cols - n, ",%s",
                              pm_td_node_name((enum pm_td_node)k));
        m += (size_t)snprintf(pm_td_slot_cols + m, sizeof pm_td_slot_cols - m, ",slots_%s",
                              pm_td_node_name((enum pm_td_node)k));
    }
    for (int k = 0; k < PM_TD_NOUT; k++)
        n += (size_t)snprintf(pm_td_cols + n, sizeof pm_td_cols - n, ",left_out_%s",
                              pm_td_out_name((enum pm_td_out)k));
}

static double pm_or_nan(int has, double v) { return has ? v : NAN; }
static double pm_at(int has, size_t t) { return has ? (double)t : -1.0; }

/* Over threads: an event's statistics (none at all in a timer-only region:
 * its zeros are no count of its own). */
static void pm_put_event(double *c, const struct pm_evstat *s, int timer_only)
{
    c[C_RAW] = (double)s->raw;
    if (timer_only)
        return;
    c[C_TOTAL] = pm_or_nan(s->has_total, s->total);
    c[C_ESTIMATE] = s->estimate;
    c[C_UNTRUSTED] = s->untrusted || s->n_na > 0;
    c[C_THREADS_NA] = (double)s->n_na;
    c[C_SHARE] = pm_or_nan(s->has_share, s->share);
    c[C_THREADS] = (double)s->nspread;
    c[C_MIN] = pm_or_nan(s->has_spread, s->min);
    c[C_MEAN] = pm_or_nan(s->has_spread, s->mean);
    c[C_MAX] = pm_or_nan(s->has_spread, s->max);
    c[C_SD] = pm_or_nan(s->has_spread, s->sd);
    c[C_IMBALANCE] = pm_or_nan(s->has_imbalance, s->imbalance);
    c[C_MIN_THREAD] = pm_at(s->has_spread, s->min_index);
    c[C_MAX_THREAD] = pm_at(s->has_spread, s->max_index);
}

/* Over threads: a time (inclusive or exclusive). */
static void pm_put_time(double *c, int has_total, uint64_t total, const struct pm_tstat *t)
{
    c[C_TOTAL] = pm_or_nan(has_total, (double)total);
    c[C_THREADS] = (double)t->n;
    c[C_MIN] = pm_or_nan(t->n > 0, t->min);
    c[C_MEAN] = pm_or_nan(t->n > 0, t->mean);
    c[C_MAX] = pm_or_nan(t->n > 0, t->max);
    c[C_SD] = pm_or_nan(t->n > 0, t->sd);
    c[C_IMBALANCE] = pm_or_nan(t->has_imbalance, t->imbalance);
    c[C_MIN_THREAD] = pm_at(t->n > 0, t->min_index);
    c[C_MAX_THREAD] = pm_at(t->n > 0, t->max_index);
}

/* Across ranks (none at all where `off`, but the ranks that entered). */
static void pm_put_across(double *c, const struct pm_xstat *x, size_t entered, int off)
{
    c[C_RANKS_ENTERED] = (double)entered;
    if (off || !x)
        return;
    int some = x->nspread > 0;

    c[C_RANK_TOTAL] = pm_or_nan(x->has_total, x->total);
    c[C_RANK_MIN] = pm_or_nan(some, x->min);
    c[C_RANK_MEAN] = pm_or_nan(some, x->mean);
    c[C_RANK_MAX] = pm_or_nan(some, x->max);
    c[C_RANK_SD] = pm_or_nan(some, x->sd);
    c[C_RANK_IMBALANCE] = pm_or_nan(x->has_imbalance, x->imbalance);
    c[C_MIN_RANK] = some ? x->min_rank : -1;
    c[C_MAX_RANK] = some ? x->max_rank : -1;
    c[C_RANKS_NA] = (double)x->n_na;
    c[C_RANK_ESTIMATE] = x->estimate;
    c[C_RANK_UNTRUSTED] = x->untrusted;
    c[C_RANKS] = (double)x->nspread;
}

/* Every column "none": NaN, -1 for rows, threads and ranks, 0 for counts
 * and yes/no. */
static void pm_blank_stat(double *c)
{
    static const unsigned char zero[C_N] = {
        [C_ESTIMATE] = 1, [C_UNTRUSTED] = 1, [C_THREADS_NA] = 1, [C_THREADS] = 1,
        [C_RANKS_ENTERED] = 1, [C_RANKS_NA] = 1, [C_RANK_ESTIMATE] = 1, [C_RANK_UNTRUSTED] = 1,
        [C_RANKS] = 1};

    for (size_t k = 0; k < C_N; k++)
        c[k] = zero[k] ? 0.0 : NAN;
    c[C_RAW] = c[C_MIN_THREAD] = c[C_MAX_THREAD] = c[C_MIN_RANK] = c[C_MAX_RANK] = -1.0;
}

static void pm_region_rows(const struct pm_report *rep, double *v)
{
    const struct pm_file *d = rep->d;
    size_t nq = 5 + d->E;

    for (size_t r = 0; r < d->R; r++) {
        const struct pm_regstat *s = &rep->reg[r];
        const struct pm_xregion *x = rep->xr.xreg ? &rep->xr.xreg[r] : NULL;
        size_t entered = x ? x->entered : 0;

        for (size_t q = 0; q < nq; q++) {
            double *c = v + (r * nq + q) * C_N;

            pm_blank_stat(c);
            c[C_ROW] = (double)r;
            c[C_QUANTITY] = (double)q;
        }
        double *c = v + r * nq * C_N;
        /* visits, wall_ns, exclusive_ns, bytes, bytes_unknown, events */
        c[C_TOTAL] = (double)s->visits;
        c[C_THREADS] = (double)s->nvisited;
        pm_put_across(c, x ? &x->q[PM_Q_VISITS] : NULL, entered, 0);
        c += C_N;
        pm_put_time(c, s->has_wall, s->wall_total, &s->wall_thr);
        c[C_MEAN] = pm_or_nan(s->nwall > 0, s->wall_mean);
        c[C_ESTIMATE] = s->time_est > 0;
        c[C_UNTRUSTED] = s->time_na > 0;
        c[C_THREADS_NA] = (double)s->time_na;
        pm_put_across(c, x ? &x->q[PM_Q_WALL] : NULL, entered, 0);
        c += C_N;
        pm_put_time(c, s->has_wall, s->excl_total, &s->excl_thr);
        pm_put_across(c, rep->xr.xexcl ? &rep->xr.xexcl[r] : NULL, entered, 0);
        c += C_N;
        for (size_t q = PM_Q_BYTES; q <= PM_Q_BYTES_UNKNOWN; q++, c += C_N) {
            pm_put_across(c, x ? &x->q[q] : NULL, entered, 0);
            c[C_TOTAL] = x ? x->q[q].total : NAN; /* integers: the sum over threads */
        }
        for (size_t e = 0; e < d->E; e++, c += C_N) {
            pm_put_event(c, &s->ev[e], s->timer_only);
            pm_put_across(c, x ? &x->q[PM_Q_EVENTS + e] : NULL, entered, s->timer_only);
        }
    }
}

static void pm_more_rows(const struct pm_report *rep, double *v, uint64_t *u)
{
    const struct pm_file *d = rep->d;
    int cost = rep->ms.has_read_cost, omp = rep->xr.has_omp_wait;

    for (size_t r = 0; r < d->R; r++) {
        const struct pm_regstat *s = &rep->reg[r];
        const struct pm_xstat *o = rep->xr.xomp ? &rep->xr.xomp[r] : NULL;
        int some = omp && o && o->nspread > 0;
        double *c = v + r * M_N;
        double m[M_FLAGS] = {
            (double)r, s->time_est > 0, (double)s->time_na, s->excl_est,
            s->time_na || s->excl_bad, s->timer_only, (double)s->throttled,
            pm_at(s->throttled > 0, s->throttled_min), pm_at(s->throttled > 0, s->throttled_max),
            pm_or_nan(cost, s->own_cpu_ns), pm_or_nan(cost, s->own_wall_ns),
            pm_or_nan(cost && s->has_own_share, s->own_share),
            pm_or_nan(omp && s->has_omp_wait_share, s->omp_wait_share),
            pm_or_nan(some, some ? o->min : 0), pm_or_nan(some, some ? o->mean : 0),
            pm_or_nan(some, some ? o->max : 0), pm_or_nan(some, some ? o->sd : 0),
            some ? o->max_rank : -1.0};

        uint64_t k[K_N] = {r, s->wall_raw, s->timed_visits, s->timer_visits, s->reads,
                           s->omp_wait_ns};

        memcpy(c, m, sizeof m);
        memcpy(u + r * K_N, k, sizeof k);
        for (size_t b = 0; b < PM_MAX_FLAGS; b++)
            c[M_FLAGS + b] = 0;
        for (size_t i = 0; i < rep->nflags; i++)
            for (size_t b = 0; b < PM_MAX_FLAGS; b++)
                if (rep->flags[i].bit == (uint32_t)1 << b)
                    c[M_FLAGS + b] = (double)s->flag_cells[i];
    }
}

/* An MPI function's first region row: its place among the regions. */
static size_t pm_mpif_row(const struct pm_report *rep, size_t f)
{
    const struct pm_file *d = rep->d;

    for (size_t r = 0; r < d->R; r++)
        if (strcmp(d->regions[r].kind, "mpi") == 0 &&
            strcmp(d->regions[r].name, rep->xr.mpif[f].name) == 0)
            return r;
    return SIZE_MAX;
}

static void pm_mpi_rows(const struct pm_report *rep, double *v)
{
    for (size_t f = 0; f < rep->xr.nmpif; f++) {
        const struct pm_xregion *x = &rep->xr.mpif[f];
        size_t row = pm_mpif_row(rep, f);

        for (size_t q = 0; q < PM_Q_EVENTS; q++) {
            double *c = v + (f * PM_Q_EVENTS + q) * C_N;

            pm_blank_stat(c);
            c[C_ROW] = row == SIZE_MAX ? -1.0 : (double)row;
            c[C_QUANTITY] = (double)q;
            pm_put_across(c, &x->q[q], x->entered, 0);
        }
    }
}

static void pm_run_row(const struct pm_report *rep, double *c, uint64_t *k)
{
    const struct pm_xstat *x = &rep->xr.share_stat;
    const struct pm_measure *ms = &rep->ms;
    int some = x->nspread > 0, has = ms->has_read_cost;
    double u[U_N] = {
        (double)rep->xr.nranks, pm_or_nan(some, x->min), pm_or_nan(some, x->mean),
        pm_or_nan(some, x->max), some ? x->min_rank : -1.0, some ? x->max_rank : -1.0,
        pm_or_nan(has, ms->run_reads_ns),
        pm_or_nan(has && ms->run_thread_ns > 0,
                  ms->run_reads_ns / (double)(ms->run_thread_ns ? ms->run_thread_ns : 1)),
        pm_or_nan(has, ms->cost_min), pm_or_nan(has, ms->cost_max), rep->xr.has_omp_wait};
    uint64_t n[UK_N] = {rep->cells, rep->flagged_cells, ms->run_reads, ms->run_thread_ns};

    memcpy(c, u, sizeof u);
    memcpy(k, n, sizeof n);
}

static void pm_share_rows(const struct pm_report *rep, double *v)
{
    for (size_t k = 0; k < rep->xr.nranks; k++) {
        const struct pm_mpishare *s = &rep->xr.share[k];
        double *c = v + k * S_N;

        c[0] = s->rank;
        c[1] = (double)s->mpi_ns;
        c[2] = (double)s->total_ns;
        c[3] = pm_or_nan(s->has_share, s->share);
        c[4] = s->estimate;
    }
}

static void pm_td_rows(const struct pm_report *rep, double *v, uint64_t *u)
{
    const struct pm_tdreport *td = &rep->td;
    size_t R = rep->d->R;

    for (size_t i = 0; i <= R; i++) {
        const struct pm_tdstat *s = i < R ? &td->reg[i] : &td->run;
        double *c = v + i * T_N;
        uint64_t *k = u + i * TS_N;

        c[T_ROW] = i < R ? (double)i : -1.0;
        c[T_CELLS_USED] = (double)s->used;
        c[T_ESTIMATE] = s->estimate;
        c[T_PCORE_SHARE] = pm_or_nan(td->hybrid && s->has_pcore, s->pcore_share);
        k[0] = s->slots.slots;
        for (int n = 0; n < PM_TD_NNODES; n++) {
            int shown = pm_td_node_shown(td, (enum pm_td_node)n);

            c[T_RATIO + n] = pm_or_nan(shown && s->has_ratios, s->br.ratio[n]);
            k[1 + n] = shown ? pm_td_node_slots(&s->slots, (enum pm_td_node)n) : 0;
        }
        for (int n = 0; n < PM_TD_NOUT; n++)
            c[T_OUT + n] = (double)s->left_out[n];
    }
}

void pm_summary_tables_free(struct pm_stable t[PM_STAB_N])
{
    for (size_t i = 0; i < PM_STAB_N; i++) {
        free(t[i].v);
        free(t[i].u);
        t[i].v = NULL;
        t[i].u = NULL;
        t[i].rows = 0;
    }
}

int pm_summary_tables(const struct pm_report *rep, struct pm_stable t[PM_STAB_N])
{
    const struct pm_file *d = rep->d;
    size_t td_rows = rep->td.on && rep->td.reg ? d->R + 1 : 0;

    pm_td_names();
    const struct pm_stable shape[PM_STAB_N] = {
        [PM_STAB_REGION] = {NULL, NULL, d->R * (5 + d->E), C_N, pm_stat_cols},
        [PM_STAB_MORE] = {NULL, NULL, d->R, M_N, pm_more_cols},
        [PM_STAB_MPI] = {NULL, NULL, rep->xr.nmpif * PM_Q_EVENTS, C_N, pm_stat_cols},
        [PM_STAB_RUN] = {NULL, NULL, 1, U_N, pm_run_cols},
        [PM_STAB_SHARE] = {NULL, NULL, rep->xr.share ? rep->xr.nranks : 0, S_N, pm_share_cols},
        [PM_STAB_TOPDOWN] = {NULL, NULL, td_rows, T_N, pm_td_cols},
        [PM_STAB_TD_SLOTS] = {NULL, NULL, td_rows, TS_N, pm_td_slot_cols},
        [PM_STAB_COUNT] = {NULL, NULL, d->R, K_N, pm_count_cols},
        [PM_STAB_RUN_COUNT] = {NULL, NULL, 1, UK_N, pm_run_count_cols},
    };
    for (size_t i = 0; i < PM_STAB_N; i++) {
        t[i] = shape[i];
        t[i].v = NULL;
        t[i].u = NULL;
    }
    for (size_t i = 0; i < PM_STAB_N; i++) {
        size_t n = t[i].rows * t[i].cols;

        if (t[i].rows && t[i].cols > SIZE_MAX / sizeof(double) / t[i].rows)
            n = SIZE_MAX / sizeof(double);
        if (i == PM_STAB_TD_SLOTS || i == PM_STAB_COUNT || i == PM_STAB_RUN_COUNT)
            t[i].u = calloc(n ? n : 1, sizeof(uint64_t));
        else
            t[i].v = calloc(n ? n : 1, sizeof(double));
        if (!t[i].v && !t[i].u) {
            pm_summary_tables_free(t);
            return -1;
        }
    }
    pm_region_rows(rep, t[PM_STAB_REGION].v);
    pm_more_rows(rep, t[PM_STAB_MORE].v, t[PM_STAB_COUNT].u);
    pm_mpi_rows(rep, t[PM_STAB_MPI].v);
    pm_run_row(rep, t[PM_STAB_RUN].v, t[PM_STAB_RUN_COUNT].u);
    pm_share_rows(rep, t[PM_STAB_SHARE].v);
    if (td_rows)
        pm_td_rows(rep, t[PM_STAB_TOPDOWN].v, t[PM_STAB_TD_SLOTS].u);
    return 0;
}
