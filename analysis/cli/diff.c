/*
 * diff.c — `perfmark diff A.h5 B.h5`: per region (matched by call path and
 * kind) and metric, the change from run A to run B, whether that change is
 * larger than the spread across ranks or threads inside the runs, and a
 * regression check with an exit status for CI pipelines.
 *
 * Values follow the report's counting rules (pm_acc_add in report_model.c):
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
#include "cli/diff.h"
#include "read_guard.h"
#include "cli/report.h"
#include "model/report_model.h"
#include "model/spool.h"
#include "render/common/render_common.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX
#define PM_WHOLE (SIZE_MAX - 1) /* the whole run: /thread totals */

const char pm_diff_usage[] =
    "usage: perfmark diff A.h5 B.h5 [--metric M] [--threshold PCT] [--region NAME]\n"
    "                     [--format text|csv|json] [-o OUT] [--read-timeout S]\n"
    "\n"
    "The change from run A to run B per region (matched by call path) and metric:\n"
    "time (wall, summed over threads), visits, each event measured in both files,\n"
    "and ipc when both have instructions and cycles. Columns: A, B, the change,\n"
    "the change in percent of A, and whether it is beyond the spread: the mean\n"
    "per unit changed by more than max - min over units in A or B (units are\n"
    "ranks when a file holds several ranks, else threads; '-' when neither file\n"
    "has two units in the region). The first row is the whole run (/thread\n"
    "totals). Regions in only one file are listed as such. '~' marks an\n"
    "estimate (multiplexed counters, scaled, or a time extrapolated from\n"
    "sampled visits: MPI polls), '!' an untrusted value (counts lost:\n"
    "NOT_COUNTED or LOST_GENERATION cells), '*' counts of the visits before the\n"
    "throttle only (THROTTLED); 'timer only': no counter is read there by\n"
    "design (MPI polls, TIMER_ONLY), so no count is compared.\n"
    "\n"
    "options:\n"
    "  --metric M       show only metric M (time, visits, ipc or an event name,\n"
    "                   e.g. task-clock, page-faults); the metric --threshold\n"
    "                   checks (default time)\n"
    "  --threshold PCT  exit 1 when the metric regresses by more than PCT percent\n"
    "                   in any region or in the whole run: an increase for time,\n"
    "                   visits and events, a decrease for ipc. A region whose A\n"
    "                   value is 0 and B value is not regresses at any threshold\n"
    "  --region NAME    only regions with this name or call path (checked and\n"
    "                   shown; the whole run is then left out)\n"
    "  --format F       text (default), csv or json\n"
    "  -o OUT           write to OUT instead of stdout\n"
    "  --read-timeout S stop reading a file that made no progress for S seconds\n"
    "                   (as perfmark report: default 10 s + 1 s per 100 MB of the\n"
    "                   file, 0 never, env PERFMARK_READ_TIMEOUT); each file is\n"
    "                   read first in a crash-isolating child, so a damaged one\n"
    "                   is one message naming it\n"
    "\n"
    "Exit status: 0 no regression beyond the threshold (or no --threshold),\n"
    "1 a regression (each one named on stderr), 2 usage or file error (a damaged\n"
    "file included).\n";

enum pm_mkind { PM_DM_TIME, PM_DM_VISITS, PM_DM_EVENT, PM_DM_IPC };

struct pm_metric {
    enum pm_mkind kind;
    const char *name;
    size_t ev[2][2]; /* [file][k]: event rows (IPC: instructions, cycles) */
};

/* One file's value of one metric over one region. */
struct pm_side {
    int has;
    double total;
    size_t units; /* units that entered and have a value */
    double mean, min, max;
    int estimate, untrusted;
    int timer_only; /* counts: every visiting cell TIMER_ONLY (no value) */
    int partial;    /* counts: some cell THROTTLED (the first visits only) */
};

struct pm_cell {
    struct pm_side s[2];
    int has_change;
    double change;
    int rel_kind; /* 0 = none, 1 = rel valid, 2 = from 0 to a value ("new") */
    double rel;   /* percent of A */
    int beyond;   /* -1 = no spread known, 0, 1 */
    int regressed;
};

struct pm_dfile {
    const char *path;
    struct pm_file d;
    int loaded;
    size_t *unit; /* [T] */
    size_t nunits;
    struct pm_side *side; /* [(R + 1) * nm] streamed: every region's sides, then the
                             whole run's; NULL: cells in memory, pm_side */
};

struct pm_pair {
    size_t row[2]; /* PM_NONE = not in that file; PM_WHOLE = the whole run */
};

struct pm_uacc {
    struct pm_evstat s[2];
    struct pm_acc a[2];
    int entered;
};

struct pm_diff {
    struct pm_dfile f[2];
    int by_rank;
    struct pm_metric *m;
    size_t nm;
    size_t mshow; /* index of --metric, or PM_NONE = all */
    struct pm_pair *pairs;
    size_t npairs;
    struct pm_cell *cells; /* [npairs * nm] */
    struct pm_uacc *uacc;
    int measuring; /* either file says which visits read counters: the output shows it */
    const char *region;
    int has_threshold;
    double threshold;
    size_t nregress;
};

/* ------------------------------------------------------------ model */

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
static int pm_units(struct pm_diff *df)
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
        df->by_rank = nr[0] > 1 || nr[1] > 1;
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
    return PM_NONE;
}

/* time, visits, every event (by name) in both files, ipc when possible. */
static int pm_metrics(struct pm_diff *df)
{
    const struct pm_file *a = &df->f[0].d, *b = &df->f[1].d;
    size_t ia[2], ib[2];

    df->m = calloc(a->E + 3, sizeof *df->m);
    if (!df->m)
        return -1;
    df->m[df->nm++] = (struct pm_metric){.kind = PM_DM_TIME, .name = "time"};
    df->m[df->nm++] = (struct pm_metric){.kind = PM_DM_VISITS, .name = "visits"};
    for (size_t e = 0; e < a->E; e++) {
        size_t eb = pm_find_event(b, a->events[e].name);

        if (eb == PM_NONE || pm_find_event(a, a->events[e].name) != e)
            continue; /* only in A, or a repeated name: the first one is used */
        df->m[df->nm] = (struct pm_metric){.kind = PM_DM_EVENT, .name = a->events[e].name};
        df->m[df->nm].ev[0][0] = e;
        df->m[df->nm].ev[1][0] = eb;
        df->nm++;
    }
    ia[0] = pm_find_event(a, "instructions");
    ia[1] = pm_find_event(a, "cycles");
    ib[0] = pm_find_event(b, "instructions");
    ib[1] = pm_find_event(b, "cycles");
    if (ia[0] != PM_NONE && ia[1] != PM_NONE && ib[0] != PM_NONE && ib[1] != PM_NONE) {
        struct pm_metric *m = &df->m[df->nm++];

        *m = (struct pm_metric){.kind = PM_DM_IPC, .name = "ipc"};
        memcpy(m->ev[0], ia, sizeof ia);
        memcpy(m->ev[1], ib, sizeof ib);
    }
    return 0;
}

/* One cell's (or /thread row's) input for quantity k of metric m; `c` and
 * `tb` hold thread row t. */
static void pm_cell_input(const struct pm_file *d, const struct pm_cells *c,
                          const struct pm_totals *tb, const struct pm_metric *m, int fi, size_t k,
                          size_t t, size_t r, uint64_t *raw, uint64_t *en, uint64_t *run)
{
    size_t i = r == PM_WHOLE ? 0 : pm_cell_tr(d, c, t, r), j = t - tb->t0;

    *en = *run = 0;
    if (m->kind == PM_DM_TIME) {
        *raw = r == PM_WHOLE ? tb->wall_ns[j] : c->wall_ns[i];
    } else if (m->kind == PM_DM_VISITS) {
        *raw = c->visits[i];
    } else {
        size_t e = m->ev[fi][k], g = (size_t)d->events[e].group;

        if (r == PM_WHOLE) {
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
    struct pm_side s;
    size_t vals[2], na[2];
    double total[2], sum;
    int lost;
    size_t timer_cells, counted_cells; /* counts: visiting cells TIMER_ONLY / not */
};

/* Cell (t, r) of block `c` into its unit's accumulator. */
static void pm_side_cell(const struct pm_file *d, const struct pm_cells *c,
                         const struct pm_totals *tb, const struct pm_metric *m, int fi, size_t t,
                         size_t r, struct pm_uacc *u, struct pm_sacc *x)
{
    size_t nq = m->kind == PM_DM_IPC ? 2 : 1;
    int visited = r == PM_WHOLE || c->visits[pm_cell_tr(d, c, t, r)] > 0;
    uint32_t flags = r == PM_WHOLE ? tb->flags[t - tb->t0] : c->flags[pm_cell_tr(d, c, t, r)];

    if (m->kind >= PM_DM_EVENT && (flags & PM_FILE_FLAG_LOST_GENERATION))
        x->lost = 1;
    u->entered |= visited;
    if (m->kind == PM_DM_TIME && r != PM_WHOLE) {
        /* a sampled cell's time is its estimate, as in the report */
        size_t i = pm_cell_tr(d, c, t, r);
        uint64_t ns;
        enum pm_vkind kind = pm_cell_time(c->wall_ns[i], c->visits[i], c->timed_visits[i], &ns);

        pm_acc_add_time(&u->s[0], &u->a[0], kind, ns, visited, PM_NONE);
        return;
    }
    if (m->kind >= PM_DM_EVENT && r != PM_WHOLE && visited) {
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
static void pm_side_unit(struct pm_sacc *x, struct pm_uacc *u, size_t nq)
{
    struct pm_side *out = &x->s;
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

static void pm_side_finish(struct pm_sacc *x, size_t nq, struct pm_side *out)
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
static void pm_side(struct pm_diff *df, int fi, size_t r, const struct pm_metric *m,
                    struct pm_side *out)
{
    const struct pm_dfile *f = &df->f[fi];
    const struct pm_file *d = &f->d;
    size_t nq = m->kind == PM_DM_IPC ? 2 : 1;
    struct pm_sacc x;
    struct pm_cells c;
    struct pm_totals tb;
    char err[8];

    memset(out, 0, sizeof *out);
    if (r == PM_WHOLE && m->kind == PM_DM_VISITS)
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
static int pm_side_stream(struct pm_diff *df, int fi)
{
    struct pm_dfile *f = &df->f[fi];
    const struct pm_file *d = &f->d;
    size_t R1 = d->R + 1, nm = df->nm, B = pm_block_rows(d);
    struct pm_sacc *x = calloc(R1 * nm, sizeof *x);
    struct pm_uacc *u = calloc(R1 * nm, sizeof *u);
    struct pm_cells c;
    struct pm_totals tb;
    char err[1024] = "";
    int rc = -1;

    memset(&c, 0, sizeof c);
    memset(&tb, 0, sizeof tb);
    f->side = calloc(R1 * nm, sizeof *f->side);
    if (!x || !u || !f->side || pm_cells_alloc(d, B ? B : 1, &c) < 0 ||
        pm_totals_alloc(d, B ? B : 1, &tb) < 0)
        goto done;
    for (size_t t0 = 0; t0 < d->T; t0 += B) {
        size_t nt = t0 + B < d->T ? B : d->T - t0;

        if (pm_file_rows(d, t0, nt, &c, err, sizeof err) < 0 ||
            pm_file_totals(d, t0, nt, &tb, err, sizeof err) < 0) {
            fprintf(stderr, "perfmark diff: %s\n", err);
            rc = -2;
            goto done;
        }
        for (size_t t = t0; t < t0 + nt; t++) {
            for (size_t r = 0; r < R1; r++)
                for (size_t m = 0; m < nm; m++)
                    if (!(r == d->R && df->m[m].kind == PM_DM_VISITS))
                        pm_side_cell(d, &c, &tb, &df->m[m], fi, t, r == d->R ? PM_WHOLE : r,
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
static int pm_shown(const struct pm_diff *df, const struct pm_pair *p, size_t m)
{
    if (df->mshow != PM_NONE && m != df->mshow)
        return 0;
    return !(p->row[0] == PM_WHOLE && df->m[m].kind == PM_DM_VISITS);
}

static int pm_lower_is_better(const struct pm_metric *m)
{
    return m->kind != PM_DM_IPC;
}

static void pm_compare(struct pm_diff *df, struct pm_cell *c, const struct pm_metric *m)
{
    const struct pm_side *a = &c->s[0], *b = &c->s[1];

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
            match[f][r] = PM_NONE;
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
        df->pairs[df->npairs++] = (struct pm_pair){{PM_WHOLE, PM_WHOLE}};
    for (size_t r = 0; r < d[0]->R; r++)
        if (pm_region_wanted(df, 0, r) ||
            (match[0][r] != PM_NONE && pm_region_wanted(df, 1, match[0][r])))
            df->pairs[df->npairs++] = (struct pm_pair){{r, match[0][r]}};
    for (size_t r = 0; r < d[1]->R; r++)
        if (match[1][r] == PM_NONE && pm_region_wanted(df, 1, r))
            df->pairs[df->npairs++] = (struct pm_pair){{PM_NONE, r}};
    rc = 0;
out:
    for (int f = 0; f < 2; f++) {
        free(k[f]);
        free(match[f]);
    }
    return rc;
}

/* Match the regions and compare them (units and metrics already set). */
static int pm_diff_build(struct pm_diff *df)
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
        const struct pm_pair *pr = &df->pairs[p];

        if (pr->row[0] == PM_NONE || pr->row[1] == PM_NONE)
            continue;
        for (size_t m = 0; m < df->nm; m++) {
            struct pm_cell *c = &df->cells[p * df->nm + m];

            for (int fi = 0; fi < 2; fi++) {
                const struct pm_dfile *f = &df->f[fi];
                size_t r = pr->row[fi] == PM_WHOLE ? f->d.R : pr->row[fi];

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

static void pm_diff_free(struct pm_diff *df)
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

/* ------------------------------------------------------------ names */

static const char *pm_pair_path(const struct pm_diff *df, const struct pm_pair *p)
{
    if (p->row[0] == PM_WHOLE)
        return NULL;
    return p->row[0] != PM_NONE ? df->f[0].d.regions[p->row[0]].path
                                : df->f[1].d.regions[p->row[1]].path;
}

static const char *pm_pair_kind(const struct pm_diff *df, const struct pm_pair *p)
{
    if (p->row[0] == PM_WHOLE)
        return "";
    return p->row[0] != PM_NONE ? df->f[0].d.regions[p->row[0]].kind
                                : df->f[1].d.regions[p->row[1]].kind;
}

/* User data on a terminal: controls and undecodable bytes become '?', and
 * at most `max` characters are shown (the rest as "..."). */
static void pm_text_name(FILE *out, const char *s, size_t max)
{
    size_t i = 0, n = strlen(s), shown = 0;

    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (shown == max) {
            fputs("...", out);
            return;
        }
        if (cp == PM_BAD || cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            putc('?', out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
        shown++;
    }
}

/* ------------------------------------------------------------ text */

/* Integers with thousands separators; other values with 4 digits. */
static void pm_fmt_num(char *buf, size_t len, double v, int sign)
{
    char digits[64], *p = buf;
    size_t n, lead;
    double a = fabs(v);

    if (!(a < 1e18) || a != floor(a)) {
        snprintf(buf, len, sign ? "%+.4g" : "%.4g", v);
        return;
    }
    snprintf(digits, sizeof digits, "%.0f", a);
    n = strlen(digits);
    lead = n % 3 ? n % 3 : 3;
    if (len < 2 * n + 2) {
        snprintf(buf, len, "%.4g", v);
        return;
    }
    if (v < 0)
        *p++ = '-';
    else if (sign && v > 0)
        *p++ = '+';
    for (size_t i = 0; i < n; i++) {
        if (i >= lead && (i - lead) % 3 == 0)
            *p++ = ',';
        *p++ = digits[i];
    }
    *p = '\0';
}

static void pm_fmt_time(char *buf, size_t len, double ns, int sign)
{
    double a = fabs(ns);
    const char *f = sign ? "%+.1f %s" : "%.1f %s";

    if (a < 1e3)
        snprintf(buf, len, sign ? "%+.0f ns" : "%.0f ns", ns);
    else if (a < 1e6)
        snprintf(buf, len, f, ns / 1e3, "us");
    else if (a < 1e9)
        snprintf(buf, len, f, ns / 1e6, "ms");
    else
        snprintf(buf, len, sign ? "%+.3f %s" : "%.3f %s", ns / 1e9, "s");
}

static void pm_fmt_metric(char *buf, size_t len, const struct pm_metric *m, double v, int sign)
{
    if (m->kind == PM_DM_TIME)
        pm_fmt_time(buf, len, v, sign);
    else if (m->kind == PM_DM_IPC)
        snprintf(buf, len, sign ? "%+.3f" : "%.3f", v);
    else
        pm_fmt_num(buf, len, v, sign);
}

static void pm_fmt_side(char *buf, size_t len, const struct pm_metric *m, const struct pm_side *s)
{
    char v[48];

    if (s->timer_only) {
        snprintf(buf, len, "timer only");
        return;
    }
    if (!s->has) {
        snprintf(buf, len, "n/a%s", s->untrusted ? "!" : "");
        return;
    }
    pm_fmt_metric(v, sizeof v, m, s->total, 0);
    snprintf(buf, len, "%s%s%s%s", s->estimate ? "~" : "", v, s->untrusted ? "!" : "",
             s->partial ? "*" : "");
}

static void pm_text_cell(FILE *out, const struct pm_metric *m, const struct pm_cell *c)
{
    char a[64], b[64], ch[64] = "-", rel[32] = "-";
    const char *beyond = c->beyond < 0 ? "-" : c->beyond ? "yes" : "no";

    pm_fmt_side(a, sizeof a, m, &c->s[0]);
    pm_fmt_side(b, sizeof b, m, &c->s[1]);
    if (c->has_change)
        pm_fmt_metric(ch, sizeof ch, m, c->change, 1);
    if (c->rel_kind == 1)
        snprintf(rel, sizeof rel, "%+.1f%%", c->rel);
    else if (c->rel_kind == 2)
        snprintf(rel, sizeof rel, "new");
    fprintf(out, "  ");
    pm_text_name(out, m->name, 22);
    fprintf(out, "%*s %14s %14s %15s %9s  %s%s\n",
            (int)(strlen(m->name) < 22 ? 22 - strlen(m->name) : 0), "", a, b, ch, rel, beyond,
            c->regressed ? "  REGRESSION" : "");
}

static void pm_text_file(FILE *out, const char *label, const struct pm_dfile *f)
{
    size_t used = 0;

    fprintf(out, "%s: ", label);
    pm_text_name(out, f->path, 70);
    fprintf(out, " (%zu thread%s", f->d.T, f->d.T == 1 ? "" : "s");
    if (f->d.ranks > 1)
        fprintf(out, ", %d ranks", (int)f->d.ranks);
    fprintf(out, ")\n   events: %s", f->d.E ? "" : "none");
    /* the list stays on one line of at most 100 columns */
    for (size_t e = 0; e < f->d.E; e++) {
        size_t n = strlen(f->d.events[e].name) + 1;

        if (used + n > 80) {
            fprintf(out, " ... (%zu in all)", f->d.E);
            break;
        }
        if (e)
            putc(',', out);
        pm_text_name(out, f->d.events[e].name, 80);
        used += n;
    }
    putc('\n', out);
}

static void pm_render_diff_text(FILE *out, const struct pm_diff *df)
{
    int only_hdr[2] = {0, 0};

    fprintf(out, "perfmark diff\n");
    pm_text_file(out, "A", &df->f[0]);
    pm_text_file(out, "B", &df->f[1]);
    fprintf(out, "change = B - A; %% of A; beyond spread = the mean per %s changed by more\n"
            "than max - min over %ss in A or B. ~ estimate, ! untrusted (counts lost).\n",
            df->by_rank ? "rank" : "thread", df->by_rank ? "rank" : "thread");
    if (df->measuring)
        fputs("A time with ~ is extrapolated from sampled visits (MPI polls); * = counts of\n"
              "the visits before the throttle only (THROTTLED); timer only = no counter read\n"
              "(TIMER_ONLY): no count to compare.\n", out);
    if (df->has_threshold)
        fprintf(out, "threshold: %s regresses by more than %g%%\n", df->m[df->mshow].name,
                df->threshold);
    fprintf(out, "\n  %-22s %14s %14s %15s %9s  %s\n", "metric", "A", "B", "change", "%",
            "beyond spread");
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_pair *pr = &df->pairs[p];
        const char *path = pm_pair_path(df, pr);

        if (pr->row[0] == PM_NONE || pr->row[1] == PM_NONE)
            continue;
        if (!path) {
            fprintf(out, "(whole run)\n");
        } else {
            pm_text_name(out, path, 80);
            if (strcmp(pm_pair_kind(df, pr), "user") != 0 && *pm_pair_kind(df, pr)) {
                fprintf(out, " [");
                pm_text_name(out, pm_pair_kind(df, pr), 10);
                fprintf(out, "]");
            }
            putc('\n', out);
        }
        for (size_t m = 0; m < df->nm; m++)
            if (pm_shown(df, pr, m))
                pm_text_cell(out, &df->m[m], &df->cells[p * df->nm + m]);
    }
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_pair *pr = &df->pairs[p];
        int fi = pr->row[0] == PM_NONE ? 1 : 0;

        if (pr->row[0] != PM_NONE && pr->row[1] != PM_NONE)
            continue;
        if (!only_hdr[fi]) {
            fprintf(out, "\nregions only in %s:\n", fi ? "B" : "A");
            only_hdr[fi] = 1;
        }
        fprintf(out, "  ");
        pm_text_name(out, pm_pair_path(df, pr), 90);
        putc('\n', out);
    }
    if (df->has_threshold)
        fprintf(out, "\n%zu regression%s beyond %g%% in %s\n", df->nregress,
                df->nregress == 1 ? "" : "s", df->threshold, df->m[df->mshow].name);
}

/* ------------------------------------------------------------ json, csv */

static void pm_json_num(FILE *out, int has, double v)
{
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

static void pm_json_side(FILE *out, const struct pm_side *s, int measuring)
{
    fputs("{\"value\": ", out);
    pm_json_num(out, s->has, s->total);
    fprintf(out, ", \"estimate\": %s, \"untrusted\": %s, \"units\": %zu, \"mean\": ",
            s->estimate ? "true" : "false", s->untrusted ? "true" : "false", s->units);
    pm_json_num(out, s->units > 0, s->mean);
    fputs(", \"min\": ", out);
    pm_json_num(out, s->units > 0, s->min);
    fputs(", \"max\": ", out);
    pm_json_num(out, s->units > 0, s->max);
    if (measuring) /* appended: files since the throttle only */
        fprintf(out, ", \"timer_only\": %s, \"throttled\": %s", s->timer_only ? "true" : "false",
                s->partial ? "true" : "false");
    putc('}', out);
}

static void pm_json_file(FILE *out, const struct pm_dfile *f)
{
    fputs("{\"file\": ", out);
    pm_json_str(out, f->path);
    fprintf(out, ", \"threads\": %zu, \"units\": %zu}", f->d.T, f->nunits);
}

static void pm_render_diff_json(FILE *out, const struct pm_diff *df)
{
    const char *sep = "";

    fputs("{\"a\": ", out);
    pm_json_file(out, &df->f[0]);
    fputs(", \"b\": ", out);
    pm_json_file(out, &df->f[1]);
    fprintf(out, ", \"unit\": \"%s\", \"metric\": ", df->by_rank ? "rank" : "thread");
    if (df->mshow == PM_NONE)
        fputs("null", out);
    else
        pm_json_str(out, df->m[df->mshow].name);
    fputs(", \"threshold_pct\": ", out);
    pm_json_num(out, df->has_threshold, df->threshold);
    fputs(", \"regions\": [", out);
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_pair *pr = &df->pairs[p];
        const char *path = pm_pair_path(df, pr);
        const char *msep = "";

        if (pr->row[0] == PM_NONE || pr->row[1] == PM_NONE)
            continue;
        fprintf(out, "%s\n  {\"path\": ", sep);
        sep = ",";
        if (path)
            pm_json_str(out, path);
        else
            fputs("null", out);
        fputs(", \"kind\": ", out);
        pm_json_str(out, pm_pair_kind(df, pr));
        fprintf(out, ", \"whole_run\": %s, \"metrics\": {", path ? "false" : "true");
        for (size_t m = 0; m < df->nm; m++) {
            const struct pm_cell *c = &df->cells[p * df->nm + m];

            if (!pm_shown(df, pr, m))
                continue;
            fprintf(out, "%s\n    ", msep);
            msep = ",";
            pm_json_str(out, df->m[m].name);
            fputs(": {\"a\": ", out);
            pm_json_side(out, &c->s[0], df->measuring);
            fputs(", \"b\": ", out);
            pm_json_side(out, &c->s[1], df->measuring);
            fputs(", \"change\": ", out);
            pm_json_num(out, c->has_change, c->change);
            fputs(", \"change_pct\": ", out);
            pm_json_num(out, c->rel_kind == 1, c->rel);
            fprintf(out, ", \"beyond_spread\": %s, \"regression\": %s}",
                    c->beyond < 0 ? "null" : c->beyond ? "true" : "false",
                    c->regressed ? "true" : "false");
        }
        fputs("}}", out);
    }
    fputs("]", out);
    for (int fi = 0; fi < 2; fi++) {
        fprintf(out, ", \"only_in_%s\": [", fi ? "b" : "a");
        sep = "";
        for (size_t p = 0; p < df->npairs; p++) {
            const struct pm_pair *pr = &df->pairs[p];

            if (pr->row[fi] == PM_NONE || pr->row[1 - fi] != PM_NONE)
                continue;
            fputs(sep, out);
            sep = ", ";
            pm_json_str(out, pm_pair_path(df, pr));
        }
        fputs("]", out);
    }
    fprintf(out, ", \"regressions\": %zu}\n", df->nregress);
}

static void pm_csv_num(FILE *out, int has, double v)
{
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
}

static void pm_csv_side(FILE *out, const struct pm_side *s, int measuring)
{
    putc(',', out);
    pm_csv_num(out, s->has, s->total);
    fprintf(out, ",%d,%d,%zu,", s->estimate, s->untrusted, s->units);
    pm_csv_num(out, s->units > 0, s->mean);
    putc(',', out);
    pm_csv_num(out, s->units > 0, s->min);
    putc(',', out);
    pm_csv_num(out, s->units > 0, s->max);
    if (measuring) /* appended: files since the throttle only */
        fprintf(out, ",%d,%d", s->timer_only, s->partial);
}

static void pm_render_diff_csv(FILE *out, const struct pm_diff *df)
{
    fputs("path,kind,status,metric,a,a_estimate,a_untrusted,a_units,a_mean,a_min,a_max,", out);
    if (df->measuring)
        fputs("a_timer_only,a_throttled,", out);
    fputs("b,b_estimate,b_untrusted,b_units,b_mean,b_min,b_max,", out);
    if (df->measuring)
        fputs("b_timer_only,b_throttled,", out);
    fputs("change,change_pct,beyond_spread,regression\n", out);
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_pair *pr = &df->pairs[p];
        const char *path = pm_pair_path(df, pr);
        const char *status = pr->row[0] == PM_NONE ? "only_b"
                             : pr->row[1] == PM_NONE ? "only_a" : path ? "both" : "whole_run";

        if (pr->row[0] == PM_NONE || pr->row[1] == PM_NONE) {
            pm_csv_str(out, path);
            putc(',', out);
            pm_csv_str(out, pm_pair_kind(df, pr));
            /* the empty metric, sides (with or without their last two) and change */
            fprintf(out, ",%s,,,,,,,,,,,,,,,,,,,%s\n", status, df->measuring ? ",,,," : "");
            continue;
        }
        for (size_t m = 0; m < df->nm; m++) {
            const struct pm_cell *c = &df->cells[p * df->nm + m];

            if (!pm_shown(df, pr, m))
                continue;
            pm_csv_str(out, path ? path : "");
            putc(',', out);
            pm_csv_str(out, pm_pair_kind(df, pr));
            fprintf(out, ",%s,", status);
            pm_csv_str(out, df->m[m].name);
            pm_csv_side(out, &c->s[0], df->measuring);
            pm_csv_side(out, &c->s[1], df->measuring);
            putc(',', out);
            pm_csv_num(out, c->has_change, c->change);
            putc(',', out);
            pm_csv_num(out, c->rel_kind == 1, c->rel);
            fprintf(out, ",%s,%d\n", c->beyond < 0 ? "" : c->beyond ? "1" : "0", c->regressed);
        }
    }
}

/* ------------------------------------------------------------ command */

static int pm_usage_error(const char *fmt, const char *arg)
{
    fputs("perfmark diff: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (perfmark diff --help)\n", stderr);
    return 2;
}

/* HDF5 can crash or loop on a corrupt file (report.c, read_guard.c):
 * reading each file once in the report's guarded child turns that into one
 * message naming the file before the diff reads it. */
static int pm_diff_check(const char *path)
{
    char err[1024] = "";
    FILE *sink = fopen("/dev/null", "w");
    int rc;

    if (!sink) {
        fprintf(stderr, "perfmark diff: cannot open /dev/null: %s\n", strerror(errno));
        return -1;
    }
    rc = pm_report_file(path, "csv", sink, err, sizeof err);
    fclose(sink);
    if (rc == 0)
        return 0;
    fprintf(stderr, "perfmark diff: %s\n", err[0] ? err : path);
    return -1;
}

/* open: the cells stay in the file (pm_side_stream), unless the threads
 * are out of unit order (pm_diff_units_in_order) */
static int pm_diff_load(struct pm_dfile *f)
{
    char err[1024] = "";

    if (pm_file_open(f->path, &f->d, 0, err, sizeof err) == 0) {
        f->loaded = 1;
        return 0;
    }
    fprintf(stderr, "perfmark diff: %s\n", err[0] ? err : f->path);
    return -1;
}

static int pm_diff_in_child; /* the diff runs in pm_diff_fork's child */

static void pm_diff_say(const char *file, const char *msg)
{
    fputs("perfmark diff: ", stderr);
    for (const char *c = file; *c; c++) /* one line, whatever the name holds */
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
    fprintf(stderr, ": %s\n", msg);
}

/* The diff itself reads both files through HDF5 again, and on a file that
 * passed the check HDF5 can still corrupt its own memory and crash or loop
 * later (seen under ASan with fuzz_mutants). So it runs in a child too,
 * watched like the report's (read_guard.h), its messages held in a
 * temporary file until it is known to have ended well. Returns -1 in the
 * child (go on with the diff), else the exit status for the parent. */
static int pm_diff_fork(const struct pm_diff *df)
{
    struct pm_progress *prog;
    struct pm_watch w;
    FILE *errs = pm_report_spool();
    int status = 0, why;
    double b0 = pm_read_budget(df->f[0].path, 0), b1 = pm_read_budget(df->f[1].path, 0);
    pid_t pid;

    prog = mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (prog == MAP_FAILED || !errs) {
        if (errs)
            fclose(errs);
        if (prog != MAP_FAILED)
            munmap(prog, sizeof *prog);
        return -1; /* unguarded, as before */
    }
    memset(prog, 0, sizeof *prog);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_DFL);
        dup2(fileno(errs), STDERR_FILENO);
        pm_read_progress_attach(prog);
        pm_diff_in_child = 1;
        return -1;
    }
    if (pid < 0) {
        fclose(errs);
        munmap(prog, sizeof *prog);
        return -1;
    }
    pm_watch_start(&w, prog, b0 > b1 ? b0 : b1, pm_read_total(), 0);
    why = pm_read_guard_wait(pid, &w, &status);
    if (why > 0 || (why == 0 && WIFSIGNALED(status))) {
        char file[sizeof prog->file], msg[512];

        pm_watch_file(&w, file, sizeof file);
        if (why > 0)
            pm_watch_message(&w, why, msg, sizeof msg);
        else
            snprintf(msg, sizeof msg, "damaged HDF5 file: the HDF5 library crashed reading it "
                     "(%s)", strsignal(WTERMSIG(status)));
        pm_diff_say(file[0] ? file : df->f[1].path, msg);
        status = 2;
    } else if (why < 0) {
        fprintf(stderr, "perfmark diff: cannot wait for the diff process: %s\n", strerror(errno));
        status = 2;
    } else {
        fflush(errs);
        pm_report_copy(errs, stderr);
        status = WEXITSTATUS(status);
    }
    fclose(errs);
    munmap(prog, sizeof *prog);
    return status;
}

static void pm_print_regressions(const struct pm_diff *df)
{
    if (!df->has_threshold || df->mshow == PM_NONE)
        return;
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_pair *pr = &df->pairs[p];
        const struct pm_cell *c;
        const char *path = pm_pair_path(df, pr);

        if (pr->row[0] == PM_NONE || pr->row[1] == PM_NONE)
            continue;
        c = &df->cells[p * df->nm + df->mshow];
        if (!c->regressed)
            continue;
        fprintf(stderr, "perfmark diff: regression: %s ", df->m[df->mshow].name);
        if (c->rel_kind == 1)
            fprintf(stderr, "%+.1f%%", c->rel);
        else
            fprintf(stderr, "from 0");
        fprintf(stderr, " (threshold %g%%) in ", df->threshold);
        if (path) {
            putc('\'', stderr);
            pm_text_name(stderr, path, 80);
            putc('\'', stderr);
        } else {
            fputs("the whole run", stderr);
        }
        putc('\n', stderr);
    }
}

int pm_diff_main(int argc, char **argv)
{
    struct pm_diff df;
    const char *files[2] = {NULL, NULL}, *metric = NULL, *format = "text", *out_path = NULL;
    char *text = NULL;
    size_t nfiles = 0, len = 0;
    FILE *mem;
    int rc = 2;

    memset(&df, 0, sizeof df);
    df.mshow = PM_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--metric") || !strcmp(a, "--threshold") || !strcmp(a, "--region") ||
            !strcmp(a, "--format") || !strcmp(a, "-f") || !strcmp(a, "-o") ||
            !strcmp(a, "--read-timeout")) {
            if (!v)
                return pm_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--read-timeout")) {
                double s;

                if (pm_read_timeout_parse(v, &s) < 0)
                    return pm_usage_error("--read-timeout takes seconds >= 0, not '%s'", v);
                pm_read_timeout_set(s);
            } else if (!strcmp(a, "--metric")) {
                metric = v;
            } else if (!strcmp(a, "--region")) {
                df.region = v;
            } else if (!strcmp(a, "-o")) {
                out_path = v;
            } else if (!strcmp(a, "--threshold")) {
                char *end;

                errno = 0;
                df.threshold = strtod(v, &end);
                if (errno || end == v || (*end && strcmp(end, "%")) || !isfinite(df.threshold) ||
                    df.threshold < 0)
                    return pm_usage_error("--threshold takes a percentage >= 0, not '%s'", v);
                df.has_threshold = 1;
            } else {
                format = v;
            }
        } else if (a[0] == '-' && a[1]) {
            return pm_usage_error("unknown option '%s'", a);
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            return pm_usage_error("two files only ('%s' is a third)", a);
        }
    }
    if (nfiles < 2)
        return pm_usage_error("%s", "give two files: perfmark diff A.h5 B.h5");
    if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json"))
        return pm_usage_error("unknown format '%s' (text, csv or json)", format);
    if (df.has_threshold && !metric)
        metric = "time";
    for (int i = 0; i < 2; i++) {
        df.f[i].path = files[i];
        if (pm_diff_check(files[i]) < 0)
            goto out;
    }
    if ((rc = pm_diff_fork(&df)) >= 0)
        goto out; /* the child's verdict */
    rc = 2;
    for (int i = 0; i < 2; i++)
        if (pm_diff_load(&df.f[i]) < 0)
            goto out;
    if (pm_units(&df) < 0)
        goto oom;
    int in_order[2];
    for (int i = 0; i < 2; i++) {
        struct pm_dfile *f = &df.f[i];
        size_t t = 1;

        while (t < f->d.T && f->unit[t] >= f->unit[t - 1])
            t++;
        in_order[i] = t >= f->d.T;
        if (!in_order[i]) { /* threads out of rank order: the cells into memory */
            char err[1024] = "";

            pm_file_free(&f->d);
            if (pm_file_load(f->path, &f->d, err, sizeof err) < 0) {
                f->loaded = 0;
                fprintf(stderr, "perfmark diff: %s\n", err);
                goto out;
            }
        }
    }
    /* after any reload: the metrics point at the files' event names */
    if (pm_metrics(&df) < 0)
        goto oom;
    for (int i = 0; i < 2; i++)
        df.measuring |= df.f[i].d.has_visit_data || df.f[i].d.throttle[0] != '\0';
    for (int i = 0; i < 2; i++) {
        int s;

        if (in_order[i] && (s = pm_side_stream(&df, i)) < 0) {
            if (s == -2)
                goto out;
            goto oom;
        }
    }
    if (metric) {
        for (size_t m = 0; m < df.nm; m++)
            if (strcmp(df.m[m].name, metric) == 0)
                df.mshow = m;
        if (df.mshow == PM_NONE) {
            fprintf(stderr, "perfmark diff: no metric '%s' in both files (", metric);
            for (size_t m = 0; m < df.nm; m++)
                fprintf(stderr, "%s%s", m ? ", " : "", df.m[m].name);
            fprintf(stderr, ")\n");
            goto out;
        }
    }
    if (pm_diff_build(&df) < 0)
        goto oom;
    if (df.region && df.npairs == 0) {
        fputs("perfmark diff: no region named '", stderr);
        pm_text_name(stderr, df.region, 80);
        fputs("' in either file\n", stderr);
        goto out;
    }
    mem = open_memstream(&text, &len);
    if (!mem)
        goto oom;
    if (!strcmp(format, "json"))
        pm_render_diff_json(mem, &df);
    else if (!strcmp(format, "csv"))
        pm_render_diff_csv(mem, &df);
    else
        pm_render_diff_text(mem, &df);
    if (fclose(mem) != 0)
        goto oom;
    {
        FILE *out = out_path ? fopen(out_path, "w") : stdout;
        int ok = out && fwrite(text, 1, len, out) == len;

        ok = (out && out != stdout ? fclose(out) == 0 : fflush(stdout) == 0) && ok;
        if (!ok) {
            fprintf(stderr, "perfmark diff: cannot write %s: %s\n",
                    out_path ? out_path : "standard output", strerror(errno));
            goto out;
        }
    }
    pm_print_regressions(&df);
    rc = df.nregress > 0 ? 1 : 0;
    goto out;
oom:
    fprintf(stderr, "perfmark diff: out of memory\n");
out:
    free(text);
    pm_diff_free(&df);
    if (pm_diff_in_child) {
        fflush(stdout);
        fflush(stderr);
        _exit(rc); /* the parent's atexit handlers and streams are its own */
    }
    return rc;
}
