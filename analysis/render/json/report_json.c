/*
 * report_json.c — the report as one JSON object with stable keys (layout in
 * tests/report/README.md; bump json_format when it changes).
 */
#include "render/json/report_json.h"
#include "render/json/json_fmt.h"
#include "render/json/json_ranks.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void pm_json_evstat(FILE *out, const struct pm_evstat *s, int spread)
{
    fprintf(out, "{\"raw\":%" PRIu64 ",\"total\":", s->raw);
    pm_json_num(out, s->has_total, s->total);
    if (spread) {
        fputs(",\"min\":", out);
        pm_json_num(out, s->has_spread, s->min);
        fputs(",\"mean\":", out);
        pm_json_num(out, s->has_spread, s->mean);
        fputs(",\"max\":", out);
        pm_json_num(out, s->has_spread, s->max);
    }
    fprintf(out, ",\"estimate\":%s,\"counted_share\":", s->estimate ? "true" : "false");
    pm_json_num(out, s->has_share, s->share);
    if (spread)
        fprintf(out, ",\"untrusted\":%s,\"threads_na\":%zu", s->untrusted ? "true" : "false",
                s->n_na);
    putc('}', out);
}

static void pm_json_flags(FILE *out, const struct pm_report *rep, const size_t *cells)
{
    int first = 1;

    putc('{', out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (!cells[i])
            continue;
        if (!first)
            putc(',', out);
        pm_json_key(out, rep->flags[i].name);
        fprintf(out, "%zu", cells[i]);
        first = 0;
    }
    putc('}', out);
}

/* ------------------------------------------------------------ TopDown */

/* TopDown over a set of cells: slot counts, ratios of the summed slots, and
 * what was left out; null when the file's TopDown cannot be evaluated. */
static void pm_json_tdstat(FILE *out, const struct pm_tdreport *td, const struct pm_tdstat *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputs("{\"method\":", out);
    pm_json_str(out, td->method_name);
    fprintf(out, ",\"levels\":%d,\"cells_used\":%zu,\"slots\":{\"slots\":%" PRIu64, td->levels,
            s->used, s->slots.slots);
    for (int n = 0; n < PM_TD_NNODES; n++)
        if (pm_td_node_shown(td, (enum pm_td_node)n))
            fprintf(out, ",\"%s\":%" PRIu64, pm_td_node_name((enum pm_td_node)n),
                    pm_td_node_slots(&s->slots, (enum pm_td_node)n));
    fputs("},\"ratios\":", out);
    if (s->has_ratios) {
        const char *sep = "{";

        for (int n = 0; n < PM_TD_NNODES; n++)
            if (pm_td_node_shown(td, (enum pm_td_node)n)) {
                fprintf(out, "%s\"%s\":", sep, pm_td_node_name((enum pm_td_node)n));
                pm_json_num(out, 1, s->br.ratio[n]);
                sep = ",";
            }
        putc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\"cells_left_out\":{", out);
    for (int k = 0; k < PM_TD_NOUT; k++)
        fprintf(out, "%s\"%s\":%zu", k ? "," : "", pm_td_out_name((enum pm_td_out)k),
                s->left_out[k]);
    fprintf(out, "},\"estimate\":%s", s->estimate ? "true" : "false");
    if (td->hybrid) { /* appended for hybrid CPUs only */
        fputs(",\"pcore_share\":", out);
        pm_json_num(out, s->has_pcore, s->pcore_share);
    }
    putc('}', out);
}

/* A thread row (index into "threads"), or null. */
static void pm_json_index(FILE *out, int has, size_t t)
{
    if (has)
        fprintf(out, "%zu", t);
    else
        fputs("null", out);
}

/* {"total","min","mean","max","sd","imbalance","min_thread","max_thread"} over threads. */
static void pm_json_tstat(FILE *out, int has_total, double total, const struct pm_tstat *t)
{
    fputs("{\"total\":", out);
    pm_json_num(out, has_total, total);
    fputs(",\"min\":", out);
    pm_json_num(out, t->n > 0, t->min);
    fputs(",\"mean\":", out);
    pm_json_num(out, t->n > 0, t->mean);
    fputs(",\"max\":", out);
    pm_json_num(out, t->n > 0, t->max);
    fputs(",\"sd\":", out);
    pm_json_num(out, t->n > 0, t->sd);
    fputs(",\"imbalance\":", out);
    pm_json_num(out, t->has_imbalance, t->imbalance);
    fputs(",\"min_thread\":", out);
    pm_json_index(out, t->n > 0, t->min_index);
    fputs(",\"max_thread\":", out);
    pm_json_index(out, t->n > 0, t->max_index);
    putc('}', out);
}

/* Appended to every region object (issue 6): exclusive time, the spread
 * over threads beyond min/mean/max, and the derived metrics. */
static void pm_json_more(FILE *out, const struct pm_report *rep, const struct pm_regstat *s)
{
    const struct pm_file *d = rep->d;

    fputs(",\"by_thread\":{\"wall_ns\":", out);
    pm_json_tstat(out, s->has_wall, (double)s->wall_total, &s->wall_thr);
    fputs(",\"exclusive_ns\":", out);
    pm_json_tstat(out, s->has_wall, (double)s->excl_total, &s->excl_thr);
    fputs(",\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        const struct pm_evstat *v = &s->ev[e];

        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        fputs("{\"sd\":", out);
        pm_json_num(out, v->has_spread, v->sd);
        fputs(",\"imbalance\":", out);
        pm_json_num(out, v->has_imbalance, v->imbalance);
        fputs(",\"max_thread\":", out);
        pm_json_index(out, v->has_spread, v->max_index);
        putc('}', out);
    }
    fputs("}},\"ipc\":", out);
    pm_json_num(out, s->has_ipc, s->ipc);
    fputs(",\"omp_wait_ns\":", out);
    pm_json_num(out, rep->xr.has_omp_wait, (double)s->omp_wait_ns);
    fputs(",\"omp_wait_share\":", out);
    pm_json_num(out, s->has_omp_wait_share, s->omp_wait_share);
}

/* Which visits were measured and what measuring cost, per region
 * (report_measure.c): the raw time beside the report's, perfmark's part. */
static void pm_json_measuring(FILE *out, const struct pm_report *rep, const struct pm_regstat *s)
{
    fprintf(out, ",\"measuring\":{\"wall_ns_raw\":%" PRIu64 ",\"time_estimate\":%s,"
            "\"threads_time_na\":%zu,\"exclusive_estimate\":%s,\"exclusive_untrusted\":%s,"
            "\"timed_visits\":%" PRIu64 ",\"timer_visits\":%" PRIu64 ",\"timer_only\":%s,"
            "\"throttled\":", s->wall_raw, s->time_est ? "true" : "false", s->time_na,
            s->excl_est ? "true" : "false", s->time_na || s->excl_bad ? "true" : "false",
            s->timed_visits, s->timer_visits, s->timer_only ? "true" : "false");
    if (s->throttled)
        fprintf(out, "{\"threads\":%zu,\"from_min\":%" PRIu64 ",\"from_max\":%" PRIu64 "}",
                s->throttled, s->throttled_min, s->throttled_max);
    else
        fputs("null", out);
    fprintf(out, ",\"reads\":%" PRIu64 ",\"perfmark_cpu_ns\":", s->reads);
    pm_json_num(out, rep->ms.has_read_cost, s->own_cpu_ns);
    fputs(",\"perfmark_wall_ns\":", out);
    pm_json_num(out, rep->ms.has_read_cost, s->own_wall_ns);
    fputs(",\"perfmark_cpu_share\":", out);
    pm_json_num(out, rep->ms.has_read_cost && s->has_own_share, s->own_share);
    putc('}', out);
}

static void pm_json_region(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_file *d = rep->d;
    size_t r = rep->order[i];
    const struct pm_file_region *g = &d->regions[r];
    const struct pm_regstat *s = &rep->reg[r];

    fprintf(out, "    {\"index\":%zu,\"row\":%zu,\"path\":", i, r);
    pm_json_str(out, g->path);
    fputs(",\"name\":", out);
    pm_json_str(out, g->name);
    fprintf(out, ",\"parent\":%lld,\"depth\":%d,\"kind\":",
            g->parent < 0 ? -1LL : (long long)rep->pos[g->parent], (int)g->depth);
    pm_json_str(out, g->kind);
    fprintf(out, ",\"visits\":%" PRIu64 ",\"threads_visited\":%zu", s->visits, s->nvisited);
    fputs(",\"wall_ns\":{\"total\":", out);
    if (s->has_wall)
        fprintf(out, "%" PRIu64, s->wall_total);
    else
        fputs("null", out);
    if (s->nwall)
        fprintf(out, ",\"min\":%" PRIu64 ",\"mean\":%.17g,\"max\":%" PRIu64 "}", s->wall_min,
                s->wall_mean, s->wall_max);
    else
        fputs(",\"min\":null,\"mean\":null,\"max\":null}", out);
    fputs(",\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_evstat(out, &s->ev[e], 1);
    }
    fputs("},\"flags\":", out);
    pm_json_flags(out, rep, s->flag_cells);
    if (rep->td.on) { /* appended: files without TopDown keep their exact layout */
        fputs(",\"topdown\":", out);
        pm_json_tdstat(out, &rep->td, rep->td.reg ? &rep->td.reg[r] : NULL);
    }
    pm_json_more(out, rep, s);
    if (rep->ndgroups) { /* appended: only files with CPU-model groups */
        fputs(",\"derived\":{", out);
        for (size_t i = 0, n = 0; i < rep->ndgroups; i++) {
            const struct pm_dgroup *dg = &rep->dgroups[i];

            for (int k = 0; k < dg->nmetrics; k++, n++) {
                const struct pm_dval *v = &dg->val[r * (size_t)dg->nmetrics + (size_t)k];

                if (n)
                    putc(',', out);
                pm_json_key(out, dg->group->derived[k].name);
                fputs("{\"value\":", out);
                pm_json_num(out, v->has, v->value);
                fprintf(out, ",\"estimate\":%s,\"untrusted\":%s}", v->estimate ? "true" : "false",
                        v->untrusted ? "true" : "false");
            }
        }
        putc('}', out);
    }
    if (rep->ms.measuring) /* appended: files since the throttle only */
        pm_json_measuring(out, rep, s);
    fputs("}", out);
}

static void pm_json_thread(FILE *out, const struct pm_report *rep, struct pm_thread_rows *rows,
                           const struct pm_totals *tb, size_t t)
{
    const struct pm_file *d = rep->d;
    const struct pm_file_thread *th = pm_report_thread(rep, rows, t);

    fprintf(out, "    {\"index\":%zu,\"rank\":%d,\"thread\":%d,\"pid\":%" PRId64 ",\"tid\":%" PRId64
                 ",\"host\":",
            pm_file_job_row(d, t), (int)th->rank, (int)th->thread, th->pid, th->tid);
    pm_json_str(out, th->host);
    fprintf(out, ",\"cpu_first\":%d,\"cpu_last\":%d,\"exited\":%s,\"open_at_end\":%d"
                 ",\"totals_from\":\"%s\"",
            (int)th->cpu_first, (int)th->cpu_last, th->exited ? "true" : "false",
            (int)th->open_at_end, pm_totals_from_name(th->totals_from));
    fprintf(out, ",\"wall_ns\":%" PRIu64 ",\"events\":{", tb->wall_ns[t - tb->t0]);
    for (size_t e = 0; e < d->E; e++) {
        struct pm_evstat s;

        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_thread_evstat(d, tb, t, e, &s);
        pm_json_evstat(out, &s, 0);
    }
    putc('}', out);
    if (d->has_placement) { /* appended: files with placement only */
        fprintf(out, ",\"placement\":{\"core_first\":%d,\"core_last\":%d,\"package_first\":%d,"
                     "\"package_last\":%d,\"numa_first\":%d,\"numa_last\":%d,\"binding\":",
                (int)th->core_first, (int)th->core_last, (int)th->package_first,
                (int)th->package_last, (int)th->numa_first, (int)th->numa_last);
        pm_json_str(out, th->binding ? th->binding : "");
        putc('}', out);
    }
    if (rep->ms.measuring) /* appended: files since the throttle only */
        fprintf(out, ",\"reads\":%" PRIu64 ",\"read_cost_ns\":%.17g", tb->reads[t - tb->t0],
                isfinite(tb->read_cost_ns[t - tb->t0]) ? tb->read_cost_ns[t - tb->t0] : 0.0);
    if (d->threads_seen && d->threads_seen[0]) { /* appended: files since revision 8 */
        fputs(",\"name\":", out);
        pm_json_str(out, th->name ? th->name : "");
        fputs(",\"start\":", out);
        pm_json_str(out, th->start ? th->start : "");
    }
    putc('}', out);
}

static void pm_json_rank_event(FILE *out, const struct pm_rankstat *rs)
{
    int diff = rs->proc.has_total && rs->sum.has_total;

    fprintf(out, "{\"process_raw\":%" PRIu64 ",\"process\":", rs->proc.raw);
    pm_json_num(out, rs->proc.has_total, rs->proc.total);
    fprintf(out, ",\"process_estimate\":%s,\"counted_share\":",
            rs->proc.estimate ? "true" : "false");
    pm_json_num(out, rs->proc.has_share, rs->proc.share);
    fputs(",\"threads_sum\":", out);
    pm_json_num(out, rs->sum.has_total, rs->sum.total);
    fprintf(out, ",\"threads_estimate\":%s,\"threads_na\":%zu,\"difference\":",
            rs->sum.estimate ? "true" : "false", rs->sum.n_na);
    pm_json_num(out, diff, rs->proc.total - rs->sum.total);
    putc('}', out);
}

static void pm_json_rank(FILE *out, const struct pm_report *rep, size_t n)
{
    const struct pm_file *d = rep->d;
    int first = 1;

    /* a summary file's rows are the kept ranks': rank and threads as the job's */
    fprintf(out, "    {\"row\":%zu,\"threads\":[", d->summary ? (size_t)pm_rank_of_row(d, n) : n);
    for (size_t t = 0; t < d->T; t++)
        if (pm_rank_has_thread(d, n, t)) {
            fprintf(out, "%s%zu", first ? "" : ",", pm_file_job_row(d, t));
            first = 0;
        }
    fputs("],\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_rank_event(out, &rep->rank[n * d->E + e]);
    }
    fputs("}}", out);
}

static void pm_json_head(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    const struct {
        const char *key;
        const char *val;
    } strs[] = {
        {"perfmark_version", d->perfmark_version}, {"command", d->command},
        {"host", d->host}, {"start_time", d->start_time}, {"clock", d->clock},
        {"events_requested", d->events_requested}, {"event_group", d->event_group},
        {"fallback", d->fallback}, {"fallback_cause", d->fallback_cause}, {"cpu", d->cpu},
    };

    fprintf(out, "{\n  \"schema_version\":%d,\n  \"json_format\":1,\n  \"file\":",
            (int)d->schema_version);
    pm_json_str(out, rep->path);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        fprintf(out, ",\n  ");
        pm_json_key(out, strs[i].key);
        pm_json_str(out, strs[i].val);
    }
    fprintf(out, ",\n  \"pid\":%" PRId64 ",\n  \"duration_ns\":%" PRIu64
                 ",\n  \"kernel_groups\":%d,\n  \"bind_cpu\":%d,\n  \"partial\":%s",
            d->pid, d->duration_ns, (int)d->kernel_groups, (int)d->bind_cpu,
            d->partial ? "true" : "false");
    fputs(",\n  \"events_measured\":[", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_str(out, d->events[e].name);
    }
    fputs("],\n  \"events\":[", out);
    for (size_t e = 0; e < d->E; e++) {
        fputs(e ? ",\n    {\"name\":" : "\n    {\"name\":", out);
        pm_json_str(out, d->events[e].name);
        fputs(",\"key\":", out);
        pm_json_str(out, rep->evkey[e]);
        fputs(",\"pfm_name\":", out);
        pm_json_str(out, d->events[e].pfm_name);
        fprintf(out, ",\"group\":%d}", (int)d->events[e].group);
    }
    fputs("],\n", out);
}

static void pm_json_summary(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    fprintf(out, "  \"threads_count\":%zu,\n  \"cells\":%zu,\n  \"flagged_cells\":%zu,\n",
            pm_job_threads(d), rep->cells, rep->flagged_cells);
    if (d->summary) {
        /* what a summary file holds rows of: the lists below are theirs */
        fprintf(out, "  \"summary\":{\"ranks\":%zu,\"threads\":%zu,\"threads_kept\":%zu,"
                "\"ranks_kept\":[", rep->xr.nranks, pm_job_threads(d), d->T);
        for (size_t i = 0; i < d->nkept; i++)
            fprintf(out, "%s%d", i ? "," : "", (int)d->kept_rank[i]);
        fputs("]},\n", out);
    }
    fputs("  \"flags_summary\":{", out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (i)
            putc(',', out);
        pm_json_key(out, rep->flags[i].name);
        fprintf(out, "%zu", rep->flags[i].cells);
    }
    fputs("},\n  \"messages\":[", out);
    for (size_t i = 0; i < d->M; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        pm_json_str(out, d->messages[i]);
    }
    fputs("],\n", out);
}

/* A string, or null when it is empty. */
static void pm_json_opt_str(FILE *out, const char *s)
{
    if (s[0])
        pm_json_str(out, s);
    else
        fputs("null", out);
}

/* Appended key, only for files with TopDown. */
static void pm_json_topdown(FILE *out, const struct pm_report *rep)
{
    const struct pm_tdreport *td = &rep->td;

    if (!td->on)
        return;
    fputs(",\n  \"topdown\":{\"method\":", out);
    pm_json_str(out, rep->d->topdown_method);
    fprintf(out, ",\"levels\":%d,\"file_levels\":%d,\"model\":", td->levels,
            (int)rep->d->topdown_levels);
    pm_json_str(out, rep->d->cpu_model);
    fputs(",\"events\":[", out);
    for (size_t k = 0; k < td->nev; k++) {
        if (k)
            putc(',', out);
        pm_json_str(out, rep->evkey[td->ev[k]]);
    }
    fputs("],\"problem\":", out);
    pm_json_opt_str(out, td->problem);
    fputs(",\"note\":", out);
    pm_json_opt_str(out, td->note);
    fputs(",\n    \"whole_run\":", out);
    pm_json_tdstat(out, td, td->reg ? &td->run : NULL);
    putc('}', out);
}

/* Appended (issue 6): where each flag occurs, and what the options chose. */
static void pm_json_where(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    const struct pm_view *v = &rep->view;
    static const char *const by[] = {"region", "rank", "thread"};
    static const char *const metric[] = {"time", "excl", "visits"};

    fputs(",\n  \"flags_where\":{", out);
    for (size_t k = 0; k < rep->nflags; k++) {
        if (k)
            putc(',', out);
        pm_json_key(out, rep->flags[k].name);
        putc('[', out);
        for (size_t i = 0; i < rep->nwhere[k]; i++) {
            const struct pm_flagwhere *w = &rep->where[k * PM_FLAG_WHERE + i];

            fprintf(out, "%s{\"region\":%zu,\"path\":", i ? "," : "", rep->pos[w->r]);
            pm_json_str(out, d->regions[w->r].path);
            fprintf(out, ",\"thread\":%zu,\"rank\":%d}", w->t, (int)pm_report_tid(rep, w->t).rank);
        }
        putc(']', out);
    }
    fprintf(out, "},\n  \"selection\":{\"by\":\"%s\",\"region\":", by[v->by]);
    if (v->opts.region)
        pm_json_str(out, v->opts.region);
    else
        fputs("null", out);
    fprintf(out, ",\"top\":%zu,\"metric\":", v->opts.top);
    pm_json_str(out, v->metric == PM_VM_EVENT ? rep->evkey[v->metric_event] : metric[v->metric]);
    fputs(",\"regions\":[", out);
    for (size_t i = 0; i < v->nrows; i++)
        fprintf(out, "%s%zu", i ? "," : "", rep->pos[v->rows[i]]);
    fputs("]}", out);
}

/* Appended, files since the throttle only: which visits read counters, and
 * perfmark's reads over the whole run (Σ /thread/reads x read_cost_ns, and
 * its share of Σ /thread/wall_ns). */
static void pm_json_run_reads(FILE *out, const struct pm_report *rep)
{
    int has = rep->ms.has_read_cost;

    if (!rep->ms.measuring)
        return;
    fputs(",\n  \"throttle\":", out);
    pm_json_str(out, rep->d->throttle);
    fprintf(out, ",\n  \"perfmark_reads\":{\"reads\":%" PRIu64 ",\"ns\":", rep->ms.run_reads);
    pm_json_num(out, has, rep->ms.run_reads_ns);
    fprintf(out, ",\"thread_ns\":%" PRIu64 ",\"share\":", rep->ms.run_thread_ns);
    pm_json_num(out, has && rep->ms.run_thread_ns > 0,
                rep->ms.run_reads_ns / (double)(rep->ms.run_thread_ns ? rep->ms.run_thread_ns : 1));
    fputs(",\"cost_ns_min\":", out);
    pm_json_num(out, has, rep->ms.cost_min);
    fputs(",\"cost_ns_max\":", out);
    pm_json_num(out, has, rep->ms.cost_max);
    putc('}', out);
}

void pm_render_json(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    pm_json_head(out, rep);
    pm_json_summary(out, rep);
    pm_json_list(out, "regions", rep, d->R, pm_json_region);
    fputs(",\n", out);
    /* the rows in order, a block of them read at a time */
    struct pm_thread_rows rows = {0};
    struct pm_totals tot = {0};
    fputs("  \"threads\":[", out);
    for (size_t t = 0; t < d->T; t++) {
        const struct pm_totals *tb = pm_report_totals(rep, &tot, t);

        if (!tb)
            break;
        fputs(t ? ",\n" : "\n", out);
        pm_json_thread(out, rep, &rows, tb, t);
    }
    putc(']', out);
    pm_report_threads_done(&rows);
    pm_report_totals_done(&tot);
    fputs(",\n", out);
    pm_json_list(out, "rank_totals", rep, d->N, pm_json_rank);
    fputs(",\n  \"rank_difference_means\":", out);
    pm_json_str(out, pm_unseen_label_of(d));
    pm_json_ranks(out, rep);
    pm_json_topdown(out, rep);
    pm_json_where(out, rep);
    pm_json_run_reads(out, rep);
}

void pm_render_json_end(FILE *out) { fputs("\n}\n", out); }
