/*
 * report_model.c — aggregate a loaded perfmark file: per-region, per-thread
 * and per-rank statistics, the flag table and the region tree order. The
 * counting rules (what is scaled, what is an estimate, what has no value)
 * live in one place, report_count.c, so every format shows the same
 * numbers; tests/report/check_report.py recomputes them independently.
 */
#include "model/report_model.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX

const char pm_unseen_label[] =
    "work of threads perfmark never saw (or before/after their first marker)";
/* Files whose every thread was counted from its start (`threads` attribute,
 * revision 8): only these are left outside the threads' own counts. */
static const char pm_unseen_born_label[] =
    "the part before perfmark started, perfmark's own work (its start-up and its threads), "
    "and threads left out by name";

/* Revision 12: threads the kernel counts at their exit that were still
 * running at the write have their own counters' totals from their first
 * region, or /proc's (software events only); a thread whose record was
 * lost has none. */
static const char pm_unseen_first_region_label[] =
    "the part before perfmark started, perfmark's own work (its start-up and its threads), "
    "threads left out by name, what threads still running at the end did before their first "
    "region or construct (all of it for events /proc does not count), and threads whose counts "
    "the kernel lost";

const char *pm_unseen_label_of(const struct pm_file *d)
{
    if (!d->threads_seen || strncmp(d->threads_seen, "every thread from its start", 27) != 0)
        return pm_unseen_label;
    const char *how = strstr(d->threads_seen, "; totals: ");
    int at_exit, first_region, proc, lost;
    if (how && sscanf(how, "; totals: %d by the kernel at their exit, %d still running by their "
                      "own counters from their first region, %d still running never in a region "
                      "from /proc, %d lost", &at_exit, &first_region, &proc, &lost) == 4 &&
        (first_region > 0 || proc > 0 || lost > 0))
        return pm_unseen_first_region_label;
    return pm_unseen_born_label;
}

/* The first /events row named NAME or NAME:modifiers ("instructions:u"). */
static size_t pm_find_event(const struct pm_file *d, const char *name)
{
    size_t n = strlen(name);

    for (size_t e = 0; e < d->E; e++)
        if (strncmp(d->events[e].name, name, n) == 0 &&
            (d->events[e].name[n] == '\0' || d->events[e].name[n] == ':'))
            return e;
    return PM_NONE;
}

/* IPC = Σinstructions / Σcycles (a ratio of sums, never a mean of ratios)
 * and the OpenMP wait share below each region (omp_wait_ns summed while the
 * cells stream, report_stream.c). */
void pm_report_derived(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    for (size_t r = 0; r < d->R; r++) {
        struct pm_regstat *s = &rep->reg[r];

        if (rep->ev_instructions == PM_NONE || rep->ev_cycles == PM_NONE)
            break;
        const struct pm_evstat *i = &s->ev[rep->ev_instructions], *c = &s->ev[rep->ev_cycles];
        if (i->has_total && c->has_total && c->total > 0) {
            s->has_ipc = 1;
            s->ipc = i->total / c->total;
            s->ipc_estimate = i->estimate || c->estimate;
            s->ipc_untrusted = i->untrusted || c->untrusted;
        }
    }
    for (size_t r = 0; r < d->R; r++) {
        struct pm_regstat *s = &rep->reg[r];

        if (rep->xr.has_omp_wait && s->wall_total > 0) {
            s->has_omp_wait_share = 1;
            s->omp_wait_share = (double)s->omp_wait_ns / (double)s->wall_total;
        }
    }
    /* out of memory: the report goes on without them */
    if (pm_report_derived_metrics(rep->dgroups, &rep->ndgroups, d, rep->regev) != 0)
        pm_report_derived_free(rep->dgroups, &rep->ndgroups);
}

void pm_thread_evstat(const struct pm_file *d, const struct pm_totals *b, size_t t, size_t e,
                      struct pm_evstat *s)
{
    size_t g = (size_t)d->events[e].group, i = t - b->t0;
    struct pm_acc a = {0};

    memset(s, 0, sizeof *s);
    pm_acc_add(s, &a, b->counts[i * d->E + e], b->enabled_ns[i * d->G + g],
               b->running_ns[i * d->G + g], 1);
    pm_acc_finish(s, &a);
}

#define PM_THREAD_BLOCK 1024 /* /threads rows per read while rendering */

const struct pm_file_thread *pm_report_thread(const struct pm_report *rep,
                                              struct pm_thread_rows *b, size_t t)
{
    static struct pm_file_thread zero = {.host = "", .binding = ""};
    const struct pm_file *d = rep->d;
    char err[512];

    if (b->rows && t >= b->t0 && t - b->t0 < b->nt)
        return &b->rows[t - b->t0];
    if (!b->rows && !b->own && pm_thread_rows_alloc(d, PM_THREAD_BLOCK, b) < 0)
        return &zero;
    size_t nt = d->stream ? (d->T - t < b->cap ? d->T - t : b->cap) : d->T - t;
    if (pm_file_thread_rows(d, t, nt, b, err, sizeof err) < 0) {
        static int said;
        if (!said)
            fprintf(stderr, "perfmark: %s\n", err);
        said = 1;
    }
    return b->rows ? &b->rows[t - b->t0] : &zero;
}

void pm_report_threads_done(struct pm_thread_rows *b)
{
    pm_thread_rows_free(b);
}

const struct pm_totals *pm_report_totals(const struct pm_report *rep, struct pm_totals *b,
                                         size_t t)
{
    const struct pm_file *d = rep->d;
    char err[512];

    if (b->wall_ns && t >= b->t0 && t - b->t0 < b->nt)
        return b;
    if (!b->wall_ns && !b->buf[0] && pm_totals_alloc(d, PM_THREAD_BLOCK, b) < 0 &&
        pm_totals_alloc(d, 1, b) < 0) {
        fprintf(stderr, "perfmark: out of memory reading the /thread totals\n");
        return NULL;
    }
    size_t nt = d->stream ? (d->T - t < b->cap ? d->T - t : b->cap) : d->T - t;
    if (pm_file_totals(d, t, nt, b, err, sizeof err) < 0) {
        static int said;
        if (!said)
            fprintf(stderr, "perfmark: %s\n", err);
        said = 1;
    }
    return b;
}

void pm_report_totals_done(struct pm_totals *b)
{
    pm_totals_free(b);
}

/* The inherited set of each /rank row; the sums of its threads come in
 * pm_thread_pass. */
static void pm_rank_stats(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    for (size_t n = 0; n < d->N; n++) {
        for (size_t e = 0; e < d->E; e++) {
            size_t g = (size_t)d->events[e].group;
            struct pm_rankstat *s = &rep->rank[n * d->E + e];
            struct pm_acc a = {0};

            pm_acc_add(&s->proc, &a, d->rank_counts[n * d->E + e], d->rank_enabled_ns[n * d->G + g],
                       d->rank_running_ns[n * d->G + g], 1);
            pm_acc_finish(&s->proc, &a);
        }
    }
}

/* One pass over the /thread totals, a block of rows at a time, for what the
 * renderers need of them as sums: each /rank row's Σ of its threads, the
 * TopDown whole run, each rank's longest thread (MPI share) and whether any
 * thread total is an estimate or has no value (text notes). Threads come in
 * row order, so every sum adds in the order a loop over all rows would. */
/* The /rank row of `rank` (PM_NONE: none). */
static size_t pm_rank_row(const struct pm_file *d, int32_t rank)
{
    if (!d->summary)
        return rank >= 0 && (size_t)rank < d->N ? (size_t)rank : PM_NONE;
    for (size_t n = 0; n < d->nkept && n < d->N; n++)
        if (d->kept_rank[n] == rank)
            return n;
    return PM_NONE;
}

static int pm_thread_pass(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    struct pm_totals b = {0};
    struct pm_td_sum *tds = &rep->td.run_sum;
    struct pm_acc *accs = calloc(d->N * d->E != 0 ? d->N * d->E : 1, sizeof *accs);
    int td = rep->td.on && rep->td.reg != NULL;

    if (!accs)
        return -1;
    for (size_t t = 0; t < d->T; t++) {
        const struct pm_totals *tb = pm_report_totals(rep, &b, t);
        if (!tb)
            break;
        size_t i = t - tb->t0;
        /* pm_rank_has_thread: one row is the whole process, else row n is
         * rank pm_rank_of_row(n) */
        size_t n = d->N == 1 ? 0 : pm_rank_row(d, d->tids[t].rank);
        struct pm_mpishare *sh = &rep->xr.share[rep->xr.thread_rank[t]];

        if (n != PM_NONE)
            rep->rank_threads[n]++;
        for (size_t e = 0; e < d->E; e++) {
            struct pm_evstat th;

            pm_thread_evstat(d, tb, t, e, &th);
            rep->thread_estimate |= th.estimate;
            rep->thread_na |= !th.has_total;
            if (n == PM_NONE)
                continue;
            /* per-thread values are already scaled: sum them as they are */
            struct pm_rankstat *s = &rep->rank[n * d->E + e];
            if (!th.has_total) {
                s->sum.n_na++;
                continue;
            }
            struct pm_acc *a = &accs[n * d->E + e];
            a->total = pm_fix_add(a->total, pm_fix_of(th.total));
            a->nvals++;
            s->sum.estimate |= th.estimate;
        }
        if (tb->wall_ns[i] > sh->total_ns)
            sh->total_ns = tb->wall_ns[i];
        pm_measure_thread(&rep->ms, tb, t);
        if (td)
            pm_td_add_cell(&rep->td, d, 1, tb->flags[i], &tb->counts[i * d->E],
                           &tb->enabled_ns[i * d->G], &tb->running_ns[i * d->G], &rep->td.run,
                           tds);
    }
    pm_report_totals_done(&b);
    for (size_t k = 0; k < d->N * d->E; k++) {
        pm_acc_finish(&rep->rank[k].sum, &accs[k]);
    }
    if (td)
        pm_td_finish_stat(&rep->td, tds, &rep->td.run);
    pm_measure_run_done(&rep->ms);
    free(accs);
    return 0;
}

/* Named flags (file or built-in) plus any bit that occurs without a name
 * (`seen`: the union of every cell's flags). */
void pm_flag_defs(struct pm_report *rep, uint32_t seen)
{
    const struct pm_file *d = rep->d;

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
        f->kind = bit == d->flag_timer_only ? PM_FK_TIMER_ONLY
                  : bit == d->flag_throttled ? PM_FK_THROTTLED
                  : bit == d->flag_overhead ? PM_FK_OVERHEAD : PM_FK_OTHER;
        rep->nflags++;
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
    pm_report_derived_free(rep->dgroups, &rep->ndgroups);
    pm_profile_free(rep->profile);
    for (size_t e = 0; rep->flame && e < rep->nflame; e++)
        pm_flame_free(&rep->flame[e]);
    free(rep->flame);
    pm_series_free(rep->series);
    pm_node_free(rep->node);
    if (rep->evkey)
        for (size_t e = 0; e < rep->d->E; e++)
            free(rep->evkey[e]);
    free(rep->evkey);
    free(rep->order);
    free(rep->pos);
    free(rep->reg);
    free(rep->regev);
    free(rep->rank);
    free(rep->rank_threads);
    free(rep->td.reg);
    pm_report_ranks_free(&rep->xr);
    free(rep->where);
    free(rep->nwhere);
    free(rep->view.rows);
    free(rep->heat);
    free(rep->heat_in);
    free(rep->top);
    free(rep->ntop);
}

static void *pm_calloc2(size_t a, size_t b, size_t size)
{
    if (a != 0 && b > SIZE_MAX / a)
        return NULL;
    return calloc(a * b != 0 ? a * b : 1, size);
}

/* Everything that needs no cell: allocations, the tree order, event keys,
 * per-rank statistics and one pass over the /thread totals (pm_thread_pass),
 * TopDown and across-ranks setup. */
static int pm_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

struct pm_file_tid pm_report_tid(const struct pm_report *rep, size_t t)
{
    const struct pm_file *d = rep->d;
    struct pm_file_tid none = {-1, -1};
    uint64_t key = t;

    if (!d->summary)
        return t < d->T ? d->tids[t] : none;
    const uint64_t *at = bsearch(&key, d->ref_row, d->nrefs, sizeof key, pm_cmp_u64);
    return at ? (struct pm_file_tid){d->ref_rank[at - d->ref_row], d->ref_thread[at - d->ref_row]}
              : none;
}

static void pm_ref_add(uint64_t *rows, size_t *n, size_t cap, size_t t)
{
    if (t != PM_NONE && *n < cap)
        rows[(*n)++] = (uint64_t)t;
}


size_t pm_report_refs_cap(const struct pm_report *rep)
{
    return rep->d->R * (4 + 2 * rep->d->E) + PM_MAX_FLAGS * PM_FLAG_WHERE + 1;
}

size_t pm_report_refs(const struct pm_report *rep, uint64_t *rows)
{
    size_t n = 0, cap = pm_report_refs_cap(rep), k = 0;

    for (size_t r = 0; r < rep->d->R; r++) {
        const struct pm_regstat *s = &rep->reg[r];

        if (s->wall_thr.n) {
            pm_ref_add(rows, &n, cap, s->wall_thr.min_index);
            pm_ref_add(rows, &n, cap, s->wall_thr.max_index);
        }
        if (s->excl_thr.n) {
            pm_ref_add(rows, &n, cap, s->excl_thr.min_index);
            pm_ref_add(rows, &n, cap, s->excl_thr.max_index);
        }
        for (size_t e = 0; e < rep->d->E; e++)
            if (s->ev[e].has_spread) {
                pm_ref_add(rows, &n, cap, s->ev[e].min_index);
                pm_ref_add(rows, &n, cap, s->ev[e].max_index);
            }
    }
    for (size_t i = 0; i < rep->nflags; i++)
        for (size_t j = 0; j < rep->nwhere[i]; j++)
            pm_ref_add(rows, &n, cap, rep->where[i * PM_FLAG_WHERE + j].t);
    qsort(rows, n, sizeof *rows, pm_cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (k == 0 || rows[k - 1] != rows[i])
            rows[k++] = rows[i];
    return k;
}

int pm_report_setup(struct pm_report *rep, const struct pm_file *d, const char *path)
{
    memset(rep, 0, sizeof *rep);
    rep->d = d;
    rep->path = path;
    rep->order = pm_calloc2(d->R, 1, sizeof *rep->order);
    rep->pos = pm_calloc2(d->R, 1, sizeof *rep->pos);
    rep->reg = pm_calloc2(d->R, 1, sizeof *rep->reg);
    rep->regev = pm_calloc2(d->R, d->E, sizeof *rep->regev);
    rep->rank = pm_calloc2(d->N, d->E, sizeof *rep->rank);
    rep->rank_threads = pm_calloc2(d->N, 1, sizeof *rep->rank_threads);
    rep->evkey = pm_calloc2(d->E, 1, sizeof *rep->evkey);
    rep->where = pm_calloc2(PM_MAX_FLAGS, PM_FLAG_WHERE, sizeof *rep->where);
    rep->nwhere = pm_calloc2(PM_MAX_FLAGS, 1, sizeof *rep->nwhere);
    rep->view.rows = pm_calloc2(d->R, 1, sizeof *rep->view.rows);
    rep->ev_instructions = rep->ev_cycles = PM_NONE;
    if (!rep->order || !rep->pos || !rep->reg || !rep->regev || !rep->rank ||
        !rep->rank_threads || !rep->evkey || !rep->where ||
        !rep->nwhere || !rep->view.rows || pm_tree_order(rep) < 0 || pm_event_keys(rep) < 0)
        return -1;
    memcpy(rep->view.rows, rep->order, d->R * sizeof *rep->view.rows);
    rep->view.nrows = d->R;
    for (size_t r = 0; r < d->R; r++)
        rep->reg[r].ev = rep->regev + r * d->E;
    rep->ev_instructions = pm_find_event(d, "instructions");
    rep->ev_cycles = pm_find_event(d, "cycles");
    pm_measure_setup(&rep->ms, rep->d);
    pm_rank_stats(rep);
    if (pm_report_topdown(&rep->td, rep->d) < 0 || pm_report_ranks_setup(&rep->xr, rep->d) < 0 || pm_thread_pass(rep) < 0)
        return -1;
    return 0;
}

void pm_region_flag_list(const struct pm_report *rep, const struct pm_regstat *s,
                         const char *sep, int from_visit, char *buf, size_t len)
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
        if (!from_visit || rep->flags[i].kind != PM_FK_THROTTLED || !s->throttled || used >= len)
            continue;
        if (s->throttled_min == s->throttled_max)
            n = snprintf(buf + used, len - used, " (from visit %llu)",
                         (unsigned long long)s->throttled_min);
        else
            n = snprintf(buf + used, len - used, " (from visit %llu-%llu)",
                         (unsigned long long)s->throttled_min,
                         (unsigned long long)s->throttled_max);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* ------------------------------------------------------------ options */

double pm_view_metric(const struct pm_report *rep, size_t r)
{
    const struct pm_regstat *s = &rep->reg[r];

    switch (rep->view.metric) {
    case PM_VM_TIME: return (double)s->wall_total;
    case PM_VM_EXCL: return (double)s->excl_total;
    case PM_VM_VISITS: return (double)s->visits;
    default: break;
    }
    return s->ev[rep->view.metric_event].has_total ? s->ev[rep->view.metric_event].total : 0;
}

static const struct pm_report *pm_sort_rep; /* qsort has no context argument */

/* Most first; ties in tree order, so the output does not depend on qsort. */
static int pm_cmp_metric(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double mx = pm_view_metric(pm_sort_rep, x), my = pm_view_metric(pm_sort_rep, y);

    if (mx != my)
        return mx < my ? 1 : -1;
    return pm_sort_rep->pos[x] < pm_sort_rep->pos[y] ? -1 : 1;
}

int pm_report_select(struct pm_report *rep, const struct pm_report_opts *o, char *err,
                     size_t errlen)
{
    const struct pm_file *d = rep->d;
    struct pm_view *v = &rep->view;
    size_t n = 0;

    v->opts = *o;
    v->by = o->by;
    v->metric = PM_VM_TIME;
    if (o->metric && strcmp(o->metric, "time") != 0) {
        if (strcmp(o->metric, "excl") == 0) {
            v->metric = PM_VM_EXCL;
        } else if (strcmp(o->metric, "visits") == 0) {
            v->metric = PM_VM_VISITS;
        } else {
            v->metric = PM_VM_EVENT;
            v->metric_event = PM_NONE;
            for (size_t e = 0; e < d->E && v->metric_event == PM_NONE; e++)
                if (strcmp(rep->evkey[e], o->metric) == 0)
                    v->metric_event = e;
            if (v->metric_event == PM_NONE) {
                snprintf(err, errlen, "no metric '%.64s' in this file (time, excl, visits, or an "
                         "event it measured)", o->metric);
                return -2;
            }
        }
    }
    if (o->region) {
        /* every matching region with its subtree; a match inside another
         * match's subtree is already in */
        size_t i = 0;

        while (i < d->R) {
            size_t r = rep->order[i];
            const struct pm_file_region *g = &d->regions[r];

            if (strcmp(g->name, o->region) != 0 && strcmp(g->path, o->region) != 0) {
                i++;
                continue;
            }
            v->rows[n++] = r;
            for (i++; i < d->R && d->regions[rep->order[i]].depth > g->depth; i++)
                v->rows[n++] = rep->order[i];
        }
        if (n == 0) {
            snprintf(err, errlen, "no region named '%.64s' (give a name or a path)", o->region);
            return -2;
        }
        v->nrows = n;
        v->filtered = 1;
    }
    if (o->top > 0) {
        pm_sort_rep = rep;
        qsort(v->rows, v->nrows, sizeof *v->rows, pm_cmp_metric);
        if (o->top < v->nrows)
            v->nrows = o->top;
        v->filtered = 1;
    }
    return 0;
}

size_t pm_flag_of_kind(const struct pm_report *rep, enum pm_flag_kind kind)
{
    for (size_t i = 0; i < rep->nflags; i++)
        if (rep->flags[i].kind == kind)
            return i;
    return PM_NONE;
}
