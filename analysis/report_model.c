/*
 * report_model.c — aggregate a loaded perfmark file: per-region, per-thread
 * and per-rank statistics, the flag table and the region tree order. The
 * counting rules (what is scaled, what is an estimate, what has no value)
 * live in one place, pm_cell_value(), so every format shows the same
 * numbers; tests/report/check_report.py recomputes them independently.
 */
#include "report_model.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX

const char pm_unseen_label[] =
    "work of threads perfmark never saw (or before/after their first marker)";

/* The count of one cell for one event (schema "Counting model"): the raw sum
 * scaled by Σenabled/Σrunning of the event's group. running = 0 < enabled
 * means the counters never ran: there is no estimate. running >= enabled
 * (always-on software events, or clock noise) needs no scaling. */
enum pm_vkind pm_cell_value(uint64_t raw, uint64_t en, uint64_t run, double *v)
{
    if (run == 0 && en > 0)
        return PM_V_NONE;
    if (run >= en) {
        *v = (double)raw;
        return PM_V_EXACT;
    }
    *v = (double)raw * ((double)en / (double)run);
    return PM_V_ESTIMATE;
}

void pm_acc_add(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en, uint64_t run,
                int visited)
{
    double v = 0;
    enum pm_vkind k = pm_cell_value(raw, en, run, &v);

    s->raw = pm_add_sat(s->raw, raw);
    a->en = pm_add_sat(a->en, en);
    a->run = pm_add_sat(a->run, run);
    /* a thread that never entered the region is no evidence either way: its
     * exact 0 must not turn a region without estimate into a total of 0 */
    if (!visited && raw == 0 && en == 0)
        return;
    if (k == PM_V_NONE) {
        s->n_na++;
        return;
    }
    if (k == PM_V_ESTIMATE)
        s->estimate = 1;
    s->total += v;
    a->nvals++;
    if (!visited)
        return;
    if (a->nspread == 0 || v < s->min)
        s->min = v;
    if (a->nspread == 0 || v > s->max)
        s->max = v;
    a->spread_sum += v;
    a->nspread++;
}

void pm_acc_finish(struct pm_evstat *s, const struct pm_acc *a)
{
    s->has_total = !(s->n_na > 0 && a->nvals == 0);
    s->has_spread = a->nspread > 0;
    if (s->has_spread)
        s->mean = a->spread_sum / (double)a->nspread;
    if (s->n_na > 0)
        s->untrusted = 1;
    if (a->en > 0) {
        s->has_share = 1;
        s->share = (double)a->run / (double)a->en;
    }
}

/* --------------------------------------------------------- aggregation */

static void pm_region_event(const struct pm_file *d, size_t r, size_t e, struct pm_evstat *s)
{
    size_t g = (size_t)d->events[e].group;
    struct pm_acc a = {0};

    memset(s, 0, sizeof *s);
    for (size_t t = 0; t < d->T; t++) {
        if (d->flags[pm_tr(d, t, r)] & PM_FILE_FLAG_LOST_GENERATION)
            s->untrusted = 1;
        pm_acc_add(s, &a, d->counts[pm_tre(d, t, r, e)], d->enabled_ns[pm_trg(d, t, r, g)],
                   d->running_ns[pm_trg(d, t, r, g)], d->visits[pm_tr(d, t, r)] > 0);
    }
    pm_acc_finish(s, &a);
}

static void pm_region_flags(struct pm_report *rep, size_t r, struct pm_regstat *s)
{
    const struct pm_file *d = rep->d;

    for (size_t t = 0; t < d->T; t++) {
        uint32_t f = d->flags[pm_tr(d, t, r)];

        for (size_t i = 0; i < rep->nflags; i++)
            if (f & rep->flags[i].bit)
                s->flag_cells[i]++;
    }
}

static void pm_region_stats(struct pm_report *rep, size_t r)
{
    const struct pm_file *d = rep->d;
    struct pm_regstat *s = &rep->reg[r];
    uint64_t wall_sum_visited = 0;

    s->ev = rep->regev + r * d->E;
    for (size_t t = 0; t < d->T; t++) {
        uint64_t v = d->visits[pm_tr(d, t, r)], w = d->wall_ns[pm_tr(d, t, r)];

        s->visits = pm_add_sat(s->visits, v);
        s->wall_total = pm_add_sat(s->wall_total, w);
        if (v == 0)
            continue;
        if (s->nvisited == 0 || w < s->wall_min)
            s->wall_min = w;
        if (s->nvisited == 0 || w > s->wall_max)
            s->wall_max = w;
        wall_sum_visited = pm_add_sat(wall_sum_visited, w);
        s->nvisited++;
    }
    if (s->nvisited)
        s->wall_mean = (double)wall_sum_visited / (double)s->nvisited;
    pm_region_flags(rep, r, s);
    for (size_t e = 0; e < d->E; e++)
        pm_region_event(d, r, e, &s->ev[e]);
}

static void pm_thread_stats(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    for (size_t t = 0; t < d->T; t++)
        for (size_t e = 0; e < d->E; e++) {
            size_t g = (size_t)d->events[e].group;
            struct pm_evstat *s = &rep->thr[t * d->E + e];
            struct pm_acc a = {0};

            pm_acc_add(s, &a, d->thread_counts[t * d->E + e], d->thread_enabled_ns[t * d->G + g],
                       d->thread_running_ns[t * d->G + g], 1);
            pm_acc_finish(s, &a);
        }
}

static void pm_rank_stats(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    for (size_t n = 0; n < d->N; n++) {
        for (size_t t = 0; t < d->T; t++)
            if (pm_rank_has_thread(d, n, t))
                rep->rank_threads[n]++;
        for (size_t e = 0; e < d->E; e++) {
            size_t g = (size_t)d->events[e].group;
            struct pm_rankstat *s = &rep->rank[n * d->E + e];
            struct pm_acc a = {0}, b = {0};

            pm_acc_add(&s->proc, &a, d->rank_counts[n * d->E + e], d->rank_enabled_ns[n * d->G + g],
                       d->rank_running_ns[n * d->G + g], 1);
            pm_acc_finish(&s->proc, &a);
            /* per-thread values are already scaled: sum them as they are */
            for (size_t t = 0; t < d->T; t++) {
                const struct pm_evstat *th = &rep->thr[t * d->E + e];

                if (!pm_rank_has_thread(d, n, t))
                    continue;
                if (!th->has_total) {
                    s->sum.n_na++;
                    continue;
                }
                s->sum.total += th->total;
                s->sum.estimate |= th->estimate;
                b.nvals++;
            }
            pm_acc_finish(&s->sum, &b);
        }
    }
}

/* Named flags (file or built-in) plus any bit that occurs without a name. */
static void pm_flag_table(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    uint32_t seen = 0;

    for (size_t i = 0; i < d->T * d->R; i++)
        seen |= d->flags[i];
    for (unsigned b = 0; b < 32; b++) {
        uint32_t bit = (uint32_t)1 << b;
        struct pm_flagdef *f = &rep->flags[rep->nflags];
        const char *name = NULL;

        for (size_t k = 0; k < d->nflagnames; k++)
            if (d->flagnames[k].bit == bit)
                name = d->flagnames[k].name;
        if (!name && !(seen & bit))
            continue;
        memset(f, 0, sizeof *f);
        f->bit = bit;
        snprintf(f->hex, sizeof f->hex, "0x%" PRIx32, bit);
        f->name = name ? name : f->hex;
        rep->nflags++;
    }
    for (size_t i = 0; i < d->T * d->R; i++) {
        if (d->visits[i] > 0 || d->flags[i] != 0)
            rep->cells++;
        if (d->flags[i] != 0)
            rep->flagged_cells++;
        for (size_t k = 0; k < rep->nflags; k++)
            if (d->flags[i] & rep->flags[k].bit)
                rep->flags[k].cells++;
    }
}

/* Preorder walk over first-child / next-sibling links: children follow
 * their parent, siblings keep file (first-seen) order. The loader
 * guarantees parent < child, so the walk terminates. */
static int pm_tree_order(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t R = d->R, roots = PM_NONE, n = 0, node;
    size_t *child = malloc((R ? R : 1) * sizeof *child);
    size_t *next = malloc((R ? R : 1) * sizeof *next);

    if (!child || !next) {
        free(child);
        free(next);
        return -1;
    }
    for (size_t r = 0; r < R; r++)
        child[r] = next[r] = PM_NONE;
    for (size_t r = R; r-- > 0;) {
        size_t *head = d->regions[r].parent < 0 ? &roots : &child[d->regions[r].parent];
        next[r] = *head;
        *head = r;
    }
    node = roots;
    while (node != PM_NONE) {
        rep->order[n] = node;
        rep->pos[node] = n++;
        if (child[node] != PM_NONE) {
            node = child[node];
            continue;
        }
        while (node != PM_NONE && next[node] == PM_NONE)
            node = d->regions[node].parent < 0 ? PM_NONE : (size_t)d->regions[node].parent;
        if (node != PM_NONE)
            node = next[node];
    }
    free(child);
    free(next);
    return 0;
}

/* JSON object keys must be unique: a repeated event name gets "#row". */
static int pm_event_keys(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    for (size_t e = 0; e < d->E; e++) {
        int dup = 0;

        for (size_t k = 0; k < e; k++)
            if (strcmp(d->events[k].name, d->events[e].name) == 0)
                dup = 1;
        if (!dup) {
            rep->evkey[e] = strdup(d->events[e].name);
        } else {
            size_t n = strlen(d->events[e].name) + 24;
            if ((rep->evkey[e] = malloc(n)))
                snprintf(rep->evkey[e], n, "%s#%zu", d->events[e].name, e);
        }
        if (!rep->evkey[e])
            return -1;
    }
    return 0;
}

void pm_report_free(struct pm_report *rep)
{
    if (rep->evkey)
        for (size_t e = 0; e < rep->d->E; e++)
            free(rep->evkey[e]);
    free(rep->evkey);
    free(rep->order);
    free(rep->pos);
    free(rep->reg);
    free(rep->regev);
    free(rep->thr);
    free(rep->rank);
    free(rep->rank_threads);
    free(rep->ranks);
    free(rep->thread_rank);
    free(rep->xreg);
    free(rep->mpif);
    free(rep->xq);
    free(rep->share);
    free(rep->td.reg);
}

static void *pm_calloc2(size_t a, size_t b, size_t size)
{
    if (a != 0 && b > SIZE_MAX / a)
        return NULL;
    return calloc(a * b != 0 ? a * b : 1, size);
}

int pm_report_build(struct pm_report *rep, const struct pm_file *d, const char *path)
{
    memset(rep, 0, sizeof *rep);
    rep->d = d;
    rep->path = path;
    rep->order = pm_calloc2(d->R, 1, sizeof *rep->order);
    rep->pos = pm_calloc2(d->R, 1, sizeof *rep->pos);
    rep->reg = pm_calloc2(d->R, 1, sizeof *rep->reg);
    rep->regev = pm_calloc2(d->R, d->E, sizeof *rep->regev);
    rep->thr = pm_calloc2(d->T, d->E, sizeof *rep->thr);
    rep->rank = pm_calloc2(d->N, d->E, sizeof *rep->rank);
    rep->rank_threads = pm_calloc2(d->N, 1, sizeof *rep->rank_threads);
    rep->evkey = pm_calloc2(d->E, 1, sizeof *rep->evkey);
    if (!rep->order || !rep->pos || !rep->reg || !rep->regev || !rep->thr || !rep->rank ||
        !rep->rank_threads || !rep->evkey || pm_tree_order(rep) < 0 || pm_event_keys(rep) < 0)
        return -1;
    pm_flag_table(rep);
    for (size_t r = 0; r < d->R; r++)
        pm_region_stats(rep, r);
    pm_thread_stats(rep);
    pm_rank_stats(rep);
    if (pm_report_topdown(rep) < 0)
        return -1;
    return pm_report_ranks(rep);
}

void pm_region_flag_list(const struct pm_report *rep, const struct pm_regstat *s,
                         const char *sep, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < rep->nflags && used < len; i++) {
        int n;

        if (s->flag_cells[i] == 0)
            continue;
        n = snprintf(buf + used, len - used, "%s%s:%zu", used ? sep : "", rep->flags[i].name,
                     s->flag_cells[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}
