/*
 * diff_model.c — the model of `perfmark diff` (diff_model.h): regions of two
 * files paired by call path and kind; per pair and metric, each file's value,
 * the change, whether it is beyond the spread inside the runs, and whether
 * it regresses.
 *
 * Values follow the report's counting rules (pm_acc_add in report_count.c):
 * a region's value is the sum over all threads of their cells, events scaled
 * per cell, estimates and untrusted totals marked. The spread rule:
 *
 *   unit   = a rank when either file holds more than one rank, else a thread;
 *   mean   = the metric's mean over the units that entered the region and
 *            have a value (a unit's value is the sum over its threads);
 *   spread = the larger of (max - min) over those units in A and in B;
 *   the change is beyond the spread when |mean(B) - mean(A)| > spread.
 *
 * With fewer than two such units in both files there is no spread to
 * compare with ("-"). The rule is deliberately simple: a change smaller than
 * the difference between the fastest and the slowest rank of one run is
 * within what that run already shows as noise or imbalance.
 */
#include "model/diff_model.h"
#include "model/report_measure.h"
#include "model/report_model.h"
#include "model/report_stream.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One unit's running sums of one (region, metric): two for ipc. */
struct pm_diff_uacc {
    struct pm_evstat s[2];
    struct pm_acc a[2];
    int entered;
};

static int pm_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

static size_t pm_distinct_ranks(const struct pm_file *d, int32_t *tmp)
{
    size_t n = 0;

    for (size_t t = 0; t < d->T; t++)
        tmp[t] = d->tids[t].rank;
    qsort(tmp, d->T, sizeof *tmp, pm_cmp_i32);
    for (size_t t = 0; t < d->T; t++)
        if (n == 0 || tmp[n - 1] != tmp[t])
            tmp[n++] = tmp[t];
    return n;
}

/* Each thread's unit: its index among the distinct ranks, or itself. */
int pm_diff_units(struct pm_diff *df)
{
    int32_t *rk[2];
    size_t nr[2];
    int rc = 0;

    for (int i = 0; i < 2; i++) {
        rk[i] = malloc((df->f[i].d.T ? df->f[i].d.T : 1) * sizeof **rk);
        df->f[i].unit = malloc((df->f[i].d.T ? df->f[i].d.T : 1) * sizeof *df->f[i].unit);
        if (!rk[i] || !df->f[i].unit)
            rc = -1;
    }
    for (int i = 0; i < 2 && rc == 0; i++)
        nr[i] = pm_distinct_ranks(&df->f[i].d, rk[i]);
    if (rc == 0) {
        /* a summary file's statistics are across ranks */
        df->by_rank = nr[0] > 1 || nr[1] > 1 || df->f[0].d.summary || df->f[1].d.summary;
        for (int i = 0; i < 2; i++) {
            const struct pm_file *d = &df->f[i].d;

            df->f[i].nunits = df->by_rank ? nr[i] : d->T;
            for (size_t t = 0; t < d->T; t++) {
                const int32_t *k = bsearch(&d->tids[t].rank, rk[i], nr[i], sizeof *rk[i],
                                           pm_cmp_i32);
                df->f[i].unit[t] = df->by_rank ? (size_t)(k - rk[i]) : t;
            }
        }
    }
    free(rk[0]);
    free(rk[1]);
    return rc;
}

static size_t pm_find_event(const struct pm_file *d, const char *name)
{
    for (size_t e = 0; e < d->E; e++)
        if (strcmp(d->events[e].name, name) == 0)
            return e;
    return PM_DIFF_NONE;
}

/* time, visits, every event (by name) in both files, ipc when possible. */
int pm_diff_metrics(struct pm_diff *df)
{
    const struct pm_file *a = &df->f[0].d, *b = &df->f[1].d;
    size_t ia[2], ib[2];

    df->m = calloc(a->E + 3, sizeof *df->m);
    if (!df->m)
        return -1;
    df->m[df->nm++] = (struct pm_diff_metric){.kind = PM_DM_TIME, .name = "time"};
    df->m[df->nm++] = (struct pm_diff_metric){.kind = PM_DM_VISITS, .name = "visits"};
    for (size_t e = 0; e < a->E; e++) {
        size_t eb = pm_find_event(b, a->events[e].name);

        if (eb == PM_DIFF_NONE || pm_find_event(a, a->events[e].name) != e)
            continue; /* only in A, or a repeated name: the first one is used */
        df->m[df->nm] = (struct pm_diff_metric){.kind = PM_DM_EVENT, .name = a->events[e].name};
        df->m[df->nm].ev[0][0] = e;
        df->m[df->nm].ev[1][0] = eb;
        df->nm++;
    }
    ia[0] = pm_find_event(a, "instructions");
    ia[1] = pm_find_event(a, "cycles");
    ib[0] = pm_find_event(b, "instructions");
    ib[1] = pm_find_event(b, "cycles");
    if (ia[0] != PM_DIFF_NONE && ia[1] != PM_DIFF_NONE && ib[0] != PM_DIFF_NONE &&
        ib[1] != PM_DIFF_NONE) {
        struct pm_diff_metric *m = &df->m[df->nm++];

        *m = (struct pm_diff_metric){.kind = PM_DM_IPC, .name = "ipc"};
        memcpy(m->ev[0], ia, sizeof ia);
        memcpy(m->ev[1], ib, sizeof ib);
    }
    for (int i = 0; i < 2; i++)
        df->measuring |= df->f[i].d.has_visit_data || df->f[i].d.throttle[0] != '\0';
    return 0;
}

/* One cell's (or /thread row's) input for quantity k of metric m; `c` and
 * `tb` hold thread row t. */
static void pm_cell_input(const struct pm_file *d, const struct pm_cells *c,
                          const struct pm_totals *tb, const struct pm_diff_metric *m, int fi,
                          size_t k, size_t t, size_t r, uint64_t *raw, uint64_t *en,
                          uint64_t *run)
{
    size_t i = r == PM_DIFF_WHOLE ? 0 : pm_cell_tr(d, c, t, r), j = t - tb->t0;

    *en = *run = 0;
    if (m->kind == PM_DM_TIME) {
        *raw = r == PM_DIFF_WHOLE ? tb->wall_ns[j] : c->wall_ns[i];
    } else if (m->kind == PM_DM_VISITS) {
        *raw = c->visits[i];
    } else {
        size_t e = m->ev[fi][k], g = (size_t)d->events[e].group;

        if (r == PM_DIFF_WHOLE) {
            *raw = tb->counts[j * d->E + e];
            *en = tb->enabled_ns[j * d->G + g];
            *run = tb->running_ns[j * d->G + g];
        } else {
            *raw = c->counts[i * d->E + e];
            *en = c->enabled_ns[i * d->G + g];
            *run = c->running_ns[i * d->G + g];
        }
    }
}

/* A side while its units are folded in, in ascending unit order. */
struct pm_sacc {
    struct pm_diff_side s;
    size_t vals[2], na[2];
    double total[2], sum;
    int lost;
    size_t timer_cells, counted_cells; /* counts: visiting cells TIMER_ONLY / not */
};

/* Cell (t, r) of block `c` into its unit's accumulator. */
static void pm_side_cell(const struct pm_file *d, const struct pm_cells *c,
                         const struct pm_totals *tb, const struct pm_diff_metric *m, int fi,
                         size_t t, size_t r, struct pm_diff_uacc *u, struct pm_sacc *x)
{
    size_t nq = m->kind == PM_DM_IPC ? 2 : 1;
    int visited = r == PM_DIFF_WHOLE || c->visits[pm_cell_tr(d, c, t, r)] > 0;
    uint32_t flags = r == PM_DIFF_WHOLE ? tb->flags[t - tb->t0] : c->flags[pm_cell_tr(d, c, t, r)];

    if (m->kind >= PM_DM_EVENT && (flags & PM_FILE_FLAG_LOST_GENERATION))
        x->lost = 1;
    u->entered |= visited;
    if (m->kind == PM_DM_TIME && r != PM_DIFF_WHOLE) {
        /* a sampled cell's time is its estimate, as in the report */
        size_t i = pm_cell_tr(d, c, t, r);
        uint64_t ns;
        enum pm_vkind kind = pm_cell_time(c->wall_ns[i], c->visits[i], c->timed_visits[i], &ns);

        pm_acc_add_time(&u->s[0], &u->a[0], kind, ns, visited, PM_DIFF_NONE);
        return;
    }
    if (m->kind >= PM_DM_EVENT && r != PM_DIFF_WHOLE && visited) {
        /* a timer-only cell read no counter: its zeros are no count of the
         * region; a throttled one's counts end at the throttle */
        if (d->flag_timer_only && (flags & d->flag_timer_only)) {
            x->timer_cells++;
            return;
        }
        x->counted_cells++;
        if (d->flag_throttled && (flags & d->flag_throttled))
            x->s.partial = 1;
    }
    for (size_t k = 0; k < nq; k++) {
        uint64_t raw, en, run;

        pm_cell_input(d, c, tb, m, fi, k, t, r, &raw, &en, &run);
        pm_acc_add(&u->s[k], &u->a[k], raw, en, run, visited);
    }
}

/* A unit whose every cell is in, into the side. */
static void pm_side_unit(struct pm_sacc *x, struct pm_diff_uacc *u, size_t nq)
{
    struct pm_diff_side *out = &x->s;
    int has = 1;
    double v;

    for (size_t k = 0; k < nq; k++) {
        pm_acc_finish(&u->s[k], &u->a[k]);
        x->total[k] += u->s[k].total;
        x->vals[k] += u->a[k].nvals;
        x->na[k] += u->s[k].n_na;
        out->estimate |= u->s[k].estimate;
        out->untrusted |= u->s[k].untrusted;
        has &= u->s[k].has_total;
    }
    if (nq == 2 && !(u->s[1].total > 0))
        has = 0;
    if (!u->entered || !has)
        return;
    v = nq == 2 ? u->s[0].total / u->s[1].total : u->s[0].total;
    if (out->units == 0 || v < out->min)
        out->min = v;
    if (out->units == 0 || v > out->max)
        out->max = v;
    x->sum += v;
    out->units++;
}

static void pm_side_finish(struct pm_sacc *x, size_t nq, struct pm_diff_side *out)
{
    *out = x->s;
    out->untrusted |= x->lost;
    out->has = 1;
    for (size_t k = 0; k < nq; k++)
        if (x->na[k] > 0 && x->vals[k] == 0)
            out->has = 0;
    if (nq == 2 && !(x->total[1] > 0))
        out->has = 0;
    if (x->timer_cells > 0 && x->counted_cells == 0) {
        out->timer_only = 1; /* no unit has a count of the region */
        out->has = 0;
        out->units = 0;
    }
    out->total = nq == 2 && out->has ? x->total[0] / x->total[1] : x->total[0];
    if (out->units)
        out->mean = x->sum / (double)out->units;
}

/* One side from cells in memory (a file whose threads are not in unit
 * order): every thread's cell of row r, then the units in order. */
static void pm_side(struct pm_diff *df, int fi, size_t r, const struct pm_diff_metric *m,
                    struct pm_diff_side *out)
{
    const struct pm_diff_file *f = &df->f[fi];
    const struct pm_file *d = &f->d;
    size_t nq = m->kind == PM_DM_IPC ? 2 : 1;
    struct pm_sacc x;
    struct pm_cells c;
    struct pm_totals tb;
    char err[8];

    memset(out, 0, sizeof *out);
    if (r == PM_DIFF_WHOLE && m->kind == PM_DM_VISITS)
        return; /* the whole run has no visit count */
    memset(&x, 0, sizeof x);
    memset(&c, 0, sizeof c);
    memset(&tb, 0, sizeof tb);
    if (pm_file_rows(d, 0, d->T, &c, err, sizeof err) < 0 || /* pointers: no read */
        pm_file_totals(d, 0, d->T, &tb, err, sizeof err) < 0)
        return;
    memset(df->uacc, 0, f->nunits * sizeof *df->uacc);
    for (size_t t = 0; t < d->T; t++)
        pm_side_cell(d, &c, &tb, m, fi, t, r, &df->uacc[f->unit[t]], &x);
    for (size_t n = 0; n < f->nunits; n++)
        pm_side_unit(&x, &df->uacc[n], nq);
    pm_side_finish(&x, nq, out);
}

/* Every side of file fi in one pass over its cells, a block of thread rows
 * at a time: threads come in unit order (ranks ascending, or threads
 * themselves), so a unit is folded in as soon as its last thread is, and
 * memory is bounded by a block plus one unit per (region, metric), not by
 * the file. */
int pm_diff_stream(struct pm_diff *df, int fi, char *err, size_t errlen)
{
    struct pm_diff_file *f = &df->f[fi];
    const struct pm_file *d = &f->d;
    size_t R1 = d->R + 1, nm = df->nm, B = pm_block_rows(d);
    struct pm_sacc *x = calloc(R1 * nm, sizeof *x);
    struct pm_diff_uacc *u = calloc(R1 * nm, sizeof *u);
    struct pm_cells c;
    struct pm_totals tb;
    int rc = -1;

    memset(&c, 0, sizeof c);
    memset(&tb, 0, sizeof tb);
    f->side = calloc(R1 * nm, sizeof *f->side);
    if (!x || !u || !f->side || pm_cells_alloc(d, B ? B : 1, &c) < 0 ||
        pm_totals_alloc(d, B ? B : 1, &tb) < 0)
        goto done;
    for (size_t t0 = 0; t0 < d->T; t0 += B) {
        size_t nt = t0 + B < d->T ? B : d->T - t0;

        if (pm_file_rows(d, t0, nt, &c, err, errlen) < 0 ||
            pm_file_totals(d, t0, nt, &tb, err, errlen) < 0) {
            rc = -2;
            goto done;
        }
        for (size_t t = t0; t < t0 + nt; t++) {
            for (size_t r = 0; r < R1; r++)
                for (size_t m = 0; m < nm; m++)
                    if (!(r == d->R && df->m[m].kind == PM_DM_VISITS))
                        pm_side_cell(d, &c, &tb, &df->m[m], fi, t, r == d->R ? PM_DIFF_WHOLE : r,
                                     &u[r * nm + m], &x[r * nm + m]);
            if (t + 1 < d->T && f->unit[t + 1] == f->unit[t])
                continue;
            for (size_t i = 0; i < R1 * nm; i++)
                pm_side_unit(&x[i], &u[i], df->m[i % nm].kind == PM_DM_IPC ? 2 : 1);
            memset(u, 0, R1 * nm * sizeof *u);
        }
    }
    for (size_t r = 0; r < R1; r++)
        for (size_t m = 0; m < nm; m++)
            if (!(r == d->R && df->m[m].kind == PM_DM_VISITS)) /* else stays all zero */
                pm_side_finish(&x[r * nm + m], df->m[m].kind == PM_DM_IPC ? 2 : 1,
                               &f->side[r * nm + m]);
    rc = 0;
done:
    pm_cells_free(&c);
    pm_totals_free(&tb);
    free(x);
    free(u);
    return rc;
}

/* The whole run has no visit count: that row is left out. */
int pm_diff_shown(const struct pm_diff *df, const struct pm_diff_pair *p, size_t m)
{
    if (df->mshow != PM_DIFF_NONE && m != df->mshow)
        return 0;
    return !(p->row[0] == PM_DIFF_WHOLE && df->m[m].kind == PM_DM_VISITS);
}

static int pm_lower_is_better(const struct pm_diff_metric *m)
{
    return m->kind != PM_DM_IPC;
}

static void pm_compare(struct pm_diff *df, struct pm_diff_cell *c, const struct pm_diff_metric *m)
{
    const struct pm_diff_side *a = &c->s[0], *b = &c->s[1];

    c->beyond = -1;
    if (!a->has || !b->has)
        return;
    c->has_change = 1;
    c->change = b->total - a->total;
    if (a->total != 0) {
        c->rel_kind = 1;
        c->rel = 100.0 * c->change / fabs(a->total);
    } else if (b->total == 0) {
        c->rel_kind = 1;
        c->rel = 0;
    } else {
        c->rel_kind = 2;
    }
    if ((a->units >= 2 || b->units >= 2) && a->units >= 1 && b->units >= 1) {
        double sa = a->units >= 2 ? a->max - a->min : 0;
        double sb = b->units >= 2 ? b->max - b->min : 0;

        c->beyond = fabs(b->mean - a->mean) > (sa > sb ? sa : sb);
    }
    if (!df->has_threshold)
        return;
    if (pm_lower_is_better(m))
        c->regressed = c->rel_kind == 2 ? c->change > 0 : c->rel > df->threshold;
    else
        c->regressed = c->rel_kind == 1 && c->rel < -df->threshold;
}

/* Regions matched by (path, kind). */
struct pm_key {
    const char *path, *kind;
    size_t row;
};

static int pm_cmp_key(const void *x, const void *y)
{
    const struct pm_key *a = x, *b = y;
    int c = strcmp(a->path, b->path);

    if (c == 0)
        c = strcmp(a->kind, b->kind);
    if (c == 0)
        c = (a->row > b->row) - (a->row < b->row);
    return c;
}

static int pm_region_wanted(const struct pm_diff *df, int fi, size_t r)
{
    const struct pm_file_region *g = &df->f[fi].d.regions[r];

    return !df->region || strcmp(g->name, df->region) == 0 || strcmp(g->path, df->region) == 0;
}

static int pm_match(struct pm_diff *df)
{
    const struct pm_file *d[2] = {&df->f[0].d, &df->f[1].d};
    struct pm_key *k[2];
    size_t *match[2], i = 0, j = 0;
    int rc = -1;

    for (int f = 0; f < 2; f++) {
        k[f] = malloc((d[f]->R ? d[f]->R : 1) * sizeof **k);
        match[f] = malloc((d[f]->R ? d[f]->R : 1) * sizeof **match);
    }
    df->pairs = malloc((d[0]->R + d[1]->R + 1) * sizeof *df->pairs);
    if (!k[0] || !k[1] || !match[0] || !match[1] || !df->pairs)
        goto out;
    for (int f = 0; f < 2; f++) {
        for (size_t r = 0; r < d[f]->R; r++) {
            k[f][r] = (struct pm_key){d[f]->regions[r].path, d[f]->regions[r].kind, r};
            match[f][r] = PM_DIFF_NONE;
        }
        qsort(k[f], d[f]->R, sizeof **k, pm_cmp_key);
    }
    while (i < d[0]->R && j < d[1]->R) {
        struct pm_key x = k[0][i], y = k[1][j];
        int c;

        x.row = y.row = 0;
        c = pm_cmp_key(&x, &y);
        if (c == 0) {
            match[0][k[0][i].row] = k[1][j].row;
            match[1][k[1][j].row] = k[0][i].row;
        }
        i += c <= 0;
        j += c >= 0;
    }
    if (!df->region)
        df->pairs[df->npairs++] = (struct pm_diff_pair){{PM_DIFF_WHOLE, PM_DIFF_WHOLE}};
    for (size_t r = 0; r < d[0]->R; r++)
        if (pm_region_wanted(df, 0, r) ||
            (match[0][r] != PM_DIFF_NONE && pm_region_wanted(df, 1, match[0][r])))
            df->pairs[df->npairs++] = (struct pm_diff_pair){{r, match[0][r]}};
    for (size_t r = 0; r < d[1]->R; r++)
        if (match[1][r] == PM_DIFF_NONE && pm_region_wanted(df, 1, r))
            df->pairs[df->npairs++] = (struct pm_diff_pair){{PM_DIFF_NONE, r}};
    rc = 0;
out:
    for (int f = 0; f < 2; f++) {
        free(k[f]);
        free(match[f]);
    }
    return rc;
}

/* Match the regions and compare them (units and metrics already set). */
int pm_diff_build(struct pm_diff *df)
{
    size_t maxu;

    if (pm_match(df) < 0)
        return -1;
    maxu = df->f[0].nunits > df->f[1].nunits ? df->f[0].nunits : df->f[1].nunits;
    df->uacc = calloc(maxu ? maxu : 1, sizeof *df->uacc);
    df->cells = calloc(df->npairs * df->nm + 1, sizeof *df->cells);
    if (!df->uacc || !df->cells)
        return -1;
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];

        if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE)
            continue;
        for (size_t m = 0; m < df->nm; m++) {
            struct pm_diff_cell *c = &df->cells[p * df->nm + m];

            for (int fi = 0; fi < 2; fi++) {
                const struct pm_diff_file *f = &df->f[fi];
                size_t r = pr->row[fi] == PM_DIFF_WHOLE ? f->d.R : pr->row[fi];

                if (f->side)
                    c->s[fi] = f->side[r * df->nm + m];
                else
                    pm_side(df, fi, pr->row[fi], &df->m[m], &c->s[fi]);
            }
            pm_compare(df, c, &df->m[m]);
            if (m == df->mshow && c->regressed)
                df->nregress++;
        }
    }
    return 0;
}

void pm_diff_free(struct pm_diff *df)
{
    for (int i = 0; i < 2; i++) {
        if (df->f[i].loaded)
            pm_file_free(&df->f[i].d);
        free(df->f[i].unit);
        free(df->f[i].side);
    }
    free(df->m);
    free(df->pairs);
    free(df->cells);
    free(df->uacc);
}

/* open: the cells stay in the file (pm_diff_stream), unless the threads
 * are out of unit order (pm_diff_units_in_order) */
int pm_diff_open(struct pm_diff_file *f, char *err, size_t errlen)
{
    if (pm_file_open(f->path, &f->d, 0, err, errlen) < 0)
        return -1;
    f->loaded = 1;
    return 0;
}

/* One side from a statistic across ranks (report_ranks.h): the same rules
 * (a rank's value the sum over its threads, the spread over the ranks that
 * entered and have a value). */
static void pm_side_xstat(struct pm_diff_side *out, const struct pm_xstat *q)
{
    out->has = q->has_total;
    out->total = q->total;
    out->units = q->nspread;
    out->min = q->min;
    out->mean = q->mean;
    out->max = q->max;
    out->estimate = q->estimate;
    out->untrusted = q->untrusted;
}

int pm_diff_summary_sides(struct pm_diff *df, int fi, char *err, size_t errlen)
{
    struct pm_diff_file *f = &df->f[fi];
    const struct pm_file *d = &f->d;
    size_t nm = df->nm;
    struct pm_report rep;
    if (pm_report_build_stream(&rep, d, f->path, 0, err, errlen) != 0)
        return -2;
    f->side = calloc((d->R + 1) * nm, sizeof *f->side); /* the whole run: no value */
    f->nunits = d->ranks > 0 ? (size_t)d->ranks : f->nunits;
    if (!f->side) {
        pm_report_free(&rep);
        return -1;
    }
    for (size_t r = 0; r < d->R; r++) {
        const struct pm_xstat *q = rep.xr.xreg[r].q;
        const struct pm_regstat *s = &rep.reg[r];
        for (size_t m = 0; m < nm; m++) {
            const struct pm_diff_metric *mt = &df->m[m];
            struct pm_diff_side *out = &f->side[r * nm + m];
            if (mt->kind == PM_DM_TIME) {
                pm_side_xstat(out, &q[PM_Q_WALL]);
            } else if (mt->kind == PM_DM_VISITS) {
                pm_side_xstat(out, &q[PM_Q_VISITS]);
            } else if (s->timer_only) {
                out->timer_only = 1; /* no rank has a count of the region */
            } else if (mt->kind == PM_DM_EVENT) {
                pm_side_xstat(out, &q[PM_Q_EVENTS + mt->ev[fi][0]]);
                out->partial = s->throttled > 0;
            } else { /* IPC: the totals' ratio; each rank's own is not in a summary */
                const struct pm_xstat *qi = &q[PM_Q_EVENTS + mt->ev[fi][0]];
                const struct pm_xstat *qc = &q[PM_Q_EVENTS + mt->ev[fi][1]];
                out->has = qi->has_total && qc->has_total && qc->total > 0;
                out->total = out->has ? qi->total / qc->total : qi->total;
                out->estimate = qi->estimate | qc->estimate;
                out->untrusted = qi->untrusted | qc->untrusted;
                out->partial = s->throttled > 0;
            }
        }
    }
    pm_report_free(&rep);
    return 0;
}

int pm_diff_units_in_order(const struct pm_diff_file *f)
{
    size_t t = 1;

    while (t < f->d.T && f->unit[t] >= f->unit[t - 1])
        t++;
    return t >= f->d.T;
}

int pm_diff_load_cells(struct pm_diff_file *f, char *err, size_t errlen)
{
    pm_file_free(&f->d);
    if (pm_file_load(f->path, &f->d, err, errlen) < 0) {
        f->loaded = 0;
        return -1;
    }
    return 0;
}

int pm_diff_select_metric(struct pm_diff *df, const char *name)
{
    for (size_t m = 0; m < df->nm; m++)
        if (strcmp(df->m[m].name, name) == 0)
            df->mshow = m;
    return df->mshow == PM_DIFF_NONE ? -1 : 0;
}

const char *pm_diff_pair_path(const struct pm_diff *df, const struct pm_diff_pair *p)
{
    if (p->row[0] == PM_DIFF_WHOLE)
        return NULL;
    return p->row[0] != PM_DIFF_NONE ? df->f[0].d.regions[p->row[0]].path
                                : df->f[1].d.regions[p->row[1]].path;
}

const char *pm_diff_pair_kind(const struct pm_diff *df, const struct pm_diff_pair *p)
{
    if (p->row[0] == PM_DIFF_WHOLE)
        return "";
    return p->row[0] != PM_DIFF_NONE ? df->f[0].d.regions[p->row[0]].kind
                                : df->f[1].d.regions[p->row[1]].kind;
}
