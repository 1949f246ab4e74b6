/*
 * series.c — the binned series (series.h): one pass over the rows for the
 * time span, one to fill the bins. Rows come grouped by thread, threads in
 * rank order, so one rank's bins are summed at a time and folded into the
 * job's total, min and max when the next rank starts.
 */
#include "model/series.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_SERIES_BLOCK 65536

struct pm_sb {
    const struct pm_file *d;
    const uint32_t *thread_rank;
    const int32_t *ranks;
    struct pm_series_view *s;
    size_t stride;            /* E + 2G words per bin of the current rank */
    double *cur;              /* [nbins * stride] the current rank's raw sums */
    int32_t last_thread;      /* the row before: its thread and end, where a row */
    uint64_t last_time;       /* of the same thread starts */
    int32_t *cur_region;      /* [nbins] its first thread's region */
    int64_t *cur_region_row;  /* [nbins] which thread row set it */
    size_t cur_rank;          /* index into ranks, SIZE_MAX: none yet */
    int *cur_has;             /* [nbins] the rank has rows in the bin */
    size_t folded;            /* ranks folded */
};

/* A row is the interval ending at time_ns. Bin edges lie half an interval
 * away from the first reading, so that a reading a little late or early
 * (the reading thread's wake-up) stays in its own bin. */
static size_t pm_bin_of(const struct pm_series_view *s, uint64_t time_ns)
{
    uint64_t at = time_ns > s->t0_ns ? time_ns - s->t0_ns : 0;
    size_t b = (size_t)(at / s->bin_ns);
    return b < s->nbins ? b : s->nbins - 1;
}

/* The value of event e in bin b of the current rank, scaled. */
static double pm_bin_value(const struct pm_sb *x, size_t b, size_t e, int *est, int *bad)
{
    const struct pm_file *d = x->d;
    const double *w = x->cur + b * x->stride;
    size_t g = (size_t)d->events[e].group < d->G ? (size_t)d->events[e].group : 0;
    double raw = w[e];
    if (!d->G)
        return raw;
    double ena = w[d->E + g], run = w[d->E + d->G + g];
    if (run > 0 && run < ena * (1 - 1e-12)) {
        *est = 1;
        return raw * ena / run;
    }
    if (run <= 0 && ena > 0)
        *bad = 1;
    return raw;
}

static void pm_fold_rank(struct pm_sb *x)
{
    struct pm_series_view *s = x->s;
    size_t E = s->E;
    if (x->cur_rank == SIZE_MAX)
        return;
    int32_t rank = x->ranks ? x->ranks[x->cur_rank] : (int32_t)x->cur_rank;
    size_t shown = SIZE_MAX;
    if (s->nshown < PM_SERIES_RANKS) {
        shown = s->nshown++;
        s->shown_rank[shown] = rank;
    }
    for (size_t b = 0; b < s->nbins; b++) {
        for (size_t e = 0; e < E; e++) {
            int est = 0, bad = 0;
            double v = x->cur_has[b] ? pm_bin_value(x, b, e, &est, &bad) : 0;
            size_t i = b * E + e;
            s->total[i] += v;
            s->estimate[i] |= est;
            s->untrusted[i] |= bad;
            if (x->folded == 0 || v < s->min[i])
                s->min[i] = v, s->min_rank[i] = rank;
            if (x->folded == 0 || v > s->max[i])
                s->max[i] = v, s->max_rank[i] = rank;
            if (shown != SIZE_MAX)
                s->rank_value[(shown * s->nbins + b) * E + e] = v;
        }
        if (shown != SIZE_MAX)
            s->rank_region[shown * s->nbins + b] = x->cur_region[b];
    }
    x->folded++;
    memset(x->cur, 0, s->nbins * x->stride * 8);
    memset(x->cur_has, 0, s->nbins * sizeof *x->cur_has);
    for (size_t b = 0; b < s->nbins; b++) {
        x->cur_region[b] = -1;
        x->cur_region_row[b] = -1;
    }
}

static int pm_take_block(struct pm_sb *x, const struct pm_series_block *blk)
{
    const struct pm_file *d = x->d;
    struct pm_series_view *s = x->s;
    for (size_t i = 0; i < blk->n; i++) {
        int32_t t = blk->thread[i], region = blk->region[i];
        if (t < 0 || (size_t)t >= d->T || region < -1 || region >= (int64_t)d->R) {
            s->bad_rows++;
            continue;
        }
        size_t k = x->thread_rank[t];
        if (k != x->cur_rank) {
            pm_fold_rank(x);
            x->cur_rank = k;
        }
        s->rows++;
        if (blk->flags[i] & PM_FILE_FLAG_LOST_GENERATION)
            s->flagged_rows++;
        /* A row covers the time since the row before it of its thread: one
         * interval, usually, all of it in its bin. A longer one (a thread's
         * last row, from its last reading to its end; a reading missed) is
         * spread over the bins it spans, in proportion to the time in each,
         * so that the rates stay right. */
        uint64_t end = blk->time_ns[i];
        uint64_t start = x->last_thread == t && x->last_time < end ? x->last_time
                         : end > s->kept_ns                         ? end - s->kept_ns
                                                                    : 0;
        x->last_thread = t;
        x->last_time = end;
        /* bin k holds the interval ending at about t0 + (k + 1/2) x bin */
        size_t b = pm_bin_of(s, end), bs = b;
        if (end - start > s->bin_ns + s->bin_ns / 2)
            bs = pm_bin_of(s, start + s->bin_ns / 2);
        for (size_t k = bs; k <= b; k++) {
            double share = 1;
            if (bs < b) {
                uint64_t lo = s->t0_ns + k * s->bin_ns - s->bin_ns / 2, hi = lo + s->bin_ns;
                if (k == b)
                    hi = end;  /* the last bin takes the row's end, late or early */
                lo = lo > start ? lo : start;
                hi = hi < end ? hi : end;
                share = hi > lo ? (double)(hi - lo) / (double)(end - start) : 0;
            }
            if (share <= 0)
                continue;
            double *w = x->cur + k * x->stride;
            for (size_t e = 0; e < d->E; e++)
                w[e] += share * (double)blk->counts[i * d->E + e];
            for (size_t g = 0; g < d->G; g++) {
                w[d->E + g] += share * (double)blk->enabled_ns[i * d->G + g];
                w[d->E + d->G + g] += share * (double)blk->running_ns[i * d->G + g];
            }
            x->cur_has[k] = 1;
        }
        /* the region of the rank's first thread at the bin's end: its last
         * row there with a region (a thread's rows come in time order, and
         * the rank's threads in row order) */
        if (x->cur_region_row[b] < 0) {
            x->cur_region_row[b] = t;
            x->cur_region[b] = region;
        } else if (x->cur_region_row[b] == t && region >= 0) {
            x->cur_region[b] = region;
        }
    }
    return 0;
}

/* The span: the earliest interval's start and the latest end. */
static int pm_span(const struct pm_file *d, struct pm_series_block *blk, struct pm_series_view *s,
                   uint64_t *tmin, uint64_t *tmax, char *err, size_t errlen)
{
    *tmin = UINT64_MAX;
    *tmax = 0;
    s->kept_ns = 0;
    for (size_t t = 0; t < d->T; t++)
        if (d->series_interval[t] > s->kept_ns)
            s->kept_ns = d->series_interval[t];
    if (!s->kept_ns)
        s->kept_ns = d->series_asked_ns ? d->series_asked_ns : 1000000;
    for (size_t i0 = 0; i0 < d->I; i0 += blk->cap) {
        size_t n = d->I - i0 < blk->cap ? d->I - i0 : blk->cap;
        if (pm_file_series(d, 0, i0, n, blk, err, errlen) != 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (blk->time_ns[i] < *tmin)
                *tmin = blk->time_ns[i];
            if (blk->time_ns[i] > *tmax)
                *tmax = blk->time_ns[i];
        }
    }
    return 0;
}

static int pm_alloc_view(struct pm_series_view *s)
{
    size_t n = s->nbins * s->E + 1;
    s->total = calloc(n, sizeof *s->total);
    s->estimate = calloc(n, sizeof *s->estimate);
    s->untrusted = calloc(n, sizeof *s->untrusted);
    s->min = calloc(n, sizeof *s->min);
    s->max = calloc(n, sizeof *s->max);
    s->min_rank = calloc(n, sizeof *s->min_rank);
    s->max_rank = calloc(n, sizeof *s->max_rank);
    s->shown_rank = calloc(PM_SERIES_RANKS, sizeof *s->shown_rank);
    s->rank_value = calloc(PM_SERIES_RANKS * n, sizeof *s->rank_value);
    s->rank_region = calloc(PM_SERIES_RANKS * (s->nbins + 1), sizeof *s->rank_region);
    return s->total && s->estimate && s->untrusted && s->min && s->max && s->min_rank &&
                   s->max_rank && s->shown_rank && s->rank_value && s->rank_region
               ? 0
               : -1;
}

struct pm_series_view *pm_series_build(const struct pm_file *d, const uint32_t *thread_rank,
                                       const int32_t *ranks, size_t nranks, char *err,
                                       size_t errlen)
{
    err[0] = '\0';
    if (!d->I)
        return NULL;
    struct pm_series_view *s = calloc(1, sizeof *s);
    struct pm_series_block blk;
    if (!s || pm_series_block_alloc(d, PM_SERIES_BLOCK, &blk) != 0) {
        free(s);
        snprintf(err, errlen, "out of memory reading the series");
        return NULL;
    }
    s->asked_ns = d->series_asked_ns;
    s->E = d->E;
    s->nranks = nranks;
    uint64_t tmin, tmax;
    struct pm_sb x = {.d = d, .thread_rank = thread_rank, .ranks = ranks, .s = s,
                      .stride = d->E + 2 * d->G, .cur_rank = SIZE_MAX, .last_thread = -1};
    int rc = pm_span(d, &blk, s, &tmin, &tmax, err, errlen);
    if (rc == 0) {
        s->t0_ns = tmin > s->kept_ns / 2 ? tmin - s->kept_ns / 2 : 0;
        s->bin_ns = s->kept_ns;
        uint64_t span = tmax - s->t0_ns;
        if (span / s->bin_ns + 1 > PM_SERIES_MAX_BINS)  /* whole multiples of the interval */
            s->bin_ns *= (span / s->bin_ns) / PM_SERIES_MAX_BINS + 1;
        s->nbins = (size_t)(span / s->bin_ns) + 1;
        if (!s->nbins)
            s->nbins = 1;
        x.cur = calloc(s->nbins * x.stride + 1, 8);
        x.cur_region = malloc((s->nbins + 1) * sizeof *x.cur_region);
        x.cur_region_row = malloc((s->nbins + 1) * sizeof *x.cur_region_row);
        x.cur_has = calloc(s->nbins + 1, sizeof *x.cur_has);
        rc = x.cur && x.cur_region && x.cur_region_row && x.cur_has && pm_alloc_view(s) == 0
                 ? 0
                 : -1;
        for (size_t b = 0; rc == 0 && b < s->nbins; b++) {
            x.cur_region[b] = -1;
            x.cur_region_row[b] = -1;
        }
        if (rc != 0)
            snprintf(err, errlen, "out of memory binning the series");
    }
    for (size_t i0 = 0; rc == 0 && i0 < d->I; i0 += blk.cap) {
        size_t n = d->I - i0 < blk.cap ? d->I - i0 : blk.cap;
        rc = pm_file_series(d, 0, i0, n, &blk, err, errlen);
        if (rc == 0)
            rc = pm_take_block(&x, &blk);
    }
    if (rc == 0) {
        pm_fold_rank(&x);
        /* ranks without any row count 0 in every bin */
        if (x.folded < nranks)
            for (size_t i = 0; i < s->nbins * s->E; i++)
                if (s->min[i] > 0)
                    s->min[i] = 0, s->min_rank[i] = -1;
    }
    free(x.cur), free(x.cur_region), free(x.cur_region_row), free(x.cur_has);
    pm_series_block_free(&blk);
    if (rc != 0) {
        pm_series_free(s);
        return NULL;
    }
    return s;
}

void pm_series_free(struct pm_series_view *s)
{
    if (!s)
        return;
    free(s->total), free(s->estimate), free(s->untrusted), free(s->min), free(s->max);
    free(s->min_rank), free(s->max_rank), free(s->shown_rank), free(s->rank_value);
    free(s->rank_region), free(s);
}
