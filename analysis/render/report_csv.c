/*
 * report_csv.c — the report as CSV: one row per (region, event), RFC 4180
 * quoting, guarded against spreadsheet formula injection.
 */
#include "render/report_csv.h"
#include "render/common/render_common.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A number cell after a comma. */
static void pm_csv_next(FILE *out, int has, double v)
{
    putc(',', out);
    pm_csv_num(out, has, v);
}

static const char pm_csv_header[] =
    "index,row,parent,depth,path,name,kind,visits,threads_visited,"
    "wall_total_ns,wall_min_ns,wall_mean_ns,wall_max_ns,flags,"
    "event,event_group,raw_total,total,min,mean,max,estimate,counted_share,untrusted,threads_na\n";

/* Files of several ranks get these columns appended to every row: the
 * region's quantities across ranks (visits, wall_ns, bytes, bytes_unknown,
 * then the row's event). Appended, not inserted, so that readers going by
 * column position or by name keep working; single-rank files do not get
 * them at all. */
static const char pm_csv_rank_header[] =
    ",ranks_entered,bytes_total,bytes_unknown_total"
    ",visits_rank_min,visits_rank_mean,visits_rank_max,visits_imbalance,visits_max_rank"
    ",wall_ns_rank_min,wall_ns_rank_mean,wall_ns_rank_max,wall_ns_imbalance,wall_ns_max_rank"
    ",bytes_rank_min,bytes_rank_mean,bytes_rank_max,bytes_imbalance,bytes_max_rank"
    ",bytes_unknown_rank_min,bytes_unknown_rank_mean,bytes_unknown_rank_max"
    ",bytes_unknown_imbalance,bytes_unknown_max_rank"
    ",event_rank_min,event_rank_mean,event_rank_max,event_imbalance,event_max_rank"
    ",event_ranks_na";

static void pm_csv_xstat(FILE *out, const struct pm_xstat *x)
{
    pm_csv_next(out, x->nspread > 0, x->min);
    pm_csv_next(out, x->nspread > 0, x->mean);
    pm_csv_next(out, x->nspread > 0, x->max);
    pm_csv_next(out, x->has_imbalance, x->imbalance);
    putc(',', out);
    if (x->nspread > 0)
        fprintf(out, "%d", (int)x->max_rank);
}

/* The across-ranks columns of region r and event e (none: e = E). */
static void pm_csv_rank_part(FILE *out, const struct pm_report *rep, size_t r, size_t e)
{
    const struct pm_xregion *x = &rep->xr.xreg[r];

    if (!rep->xr.multi_rank)
        return;
    fprintf(out, ",%zu", x->entered);
    pm_csv_next(out, 1, x->q[PM_Q_BYTES].total);
    pm_csv_next(out, 1, x->q[PM_Q_BYTES_UNKNOWN].total);
    for (size_t q = 0; q < PM_Q_EVENTS; q++)
        pm_csv_xstat(out, &x->q[q]);
    if (e < rep->d->E) {
        pm_csv_xstat(out, &x->q[PM_Q_EVENTS + e]);
        fprintf(out, ",%zu", x->q[PM_Q_EVENTS + e].n_na);
    } else {
        fputs(",,,,,,", out);
    }
}

/* Files with TopDown get these columns appended to every row (after the
 * across-ranks ones): the row's region over all its threads. The same
 * columns for every method and level, empty where the file has no such
 * category, so that one reader handles every TopDown file; files without
 * TopDown do not get them at all. */
static void pm_csv_td_header(FILE *out, const struct pm_report *rep)
{
    if (!rep->td.on)
        return;
    fputs(",td_method,td_levels,td_cells_used", out);
    for (int k = 0; k < PM_TD_NOUT; k++) {
        fputs(",td_left_out_", out);
        for (const char *c = pm_td_out_name((enum pm_td_out)k); *c; c++)
            putc(tolower((unsigned char)*c), out);
    }
    fputs(",td_estimate,td_slots", out);
    for (int n = 0; n < PM_TD_NNODES; n++)
        fprintf(out, ",td_%s_slots", pm_td_node_name((enum pm_td_node)n));
    for (int n = 0; n < PM_TD_NNODES; n++)
        fprintf(out, ",td_%s_ratio", pm_td_node_name((enum pm_td_node)n));
}

static void pm_csv_td_part(FILE *out, const struct pm_report *rep, size_t r)
{
    const struct pm_tdreport *td = &rep->td;
    const struct pm_tdstat *s = td->reg ? &td->reg[r] : NULL;

    if (!td->on)
        return;
    putc(',', out);
    pm_csv_str(out, rep->d->topdown_method);
    if (!s) { /* no breakdown (see the text or JSON report for why) */
        fprintf(out, ",%d", (int)rep->d->topdown_levels);
        for (int i = 0; i < 1 + PM_TD_NOUT + 2 + 2 * PM_TD_NNODES; i++)
            putc(',', out);
        return;
    }
    fprintf(out, ",%d,%zu", td->levels, s->used);
    for (int k = 0; k < PM_TD_NOUT; k++)
        fprintf(out, ",%zu", s->left_out[k]);
    fprintf(out, ",%s,%" PRIu64, s->estimate ? "true" : "false", s->slots.slots);
    for (int n = 0; n < PM_TD_NNODES; n++) {
        putc(',', out);
        if (pm_td_node_shown(td, (enum pm_td_node)n))
            fprintf(out, "%" PRIu64, pm_td_node_slots(&s->slots, (enum pm_td_node)n));
    }
    for (int n = 0; n < PM_TD_NNODES; n++)
        pm_csv_next(out, s->has_ratios && pm_td_node_shown(td, (enum pm_td_node)n),
                   s->br.ratio[n]);
}

static void pm_csv_region_part(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_file *d = rep->d;
    size_t r = rep->order[i];
    const struct pm_file_region *g = &d->regions[r];
    const struct pm_regstat *s = &rep->reg[r];
    char flags[1024];

    fprintf(out, "%zu,%zu,%lld,%d,", i, r, g->parent < 0 ? -1LL : (long long)rep->pos[g->parent],
            (int)g->depth);
    pm_csv_str(out, g->path);
    putc(',', out);
    pm_csv_str(out, g->name);
    putc(',', out);
    pm_csv_str(out, g->kind);
    fprintf(out, ",%" PRIu64 ",%zu,", s->visits, s->nvisited);
    if (s->has_wall)
        fprintf(out, "%" PRIu64, s->wall_total);
    if (s->nwall)
        fprintf(out, ",%" PRIu64 ",%.17g,%" PRIu64 ",", s->wall_min, s->wall_mean, s->wall_max);
    else
        fputs(",,,,", out);
    pm_region_flag_list(rep, s, ";", 0, flags, sizeof flags);
    pm_csv_str(out, flags);
}

static void pm_csv_event_part(FILE *out, const struct pm_report *rep, const struct pm_evstat *s,
                              size_t e)
{
    putc(',', out);
    pm_csv_str(out, rep->d->events[e].name);
    fprintf(out, ",%d,%" PRIu64, (int)rep->d->events[e].group, s->raw);
    pm_csv_next(out, s->has_total, s->total);
    pm_csv_next(out, s->has_spread, s->min);
    pm_csv_next(out, s->has_spread, s->mean);
    pm_csv_next(out, s->has_spread, s->max);
    fprintf(out, ",%s", s->estimate ? "true" : "false");
    pm_csv_next(out, s->has_share, s->share);
    fprintf(out, ",%s,%zu", s->untrusted ? "true" : "false", s->n_na);
}

/* Appended to every row of every file (issue 6), after all other columns:
 * exclusive time, the spread over threads beyond min/mean/max (thread =
 * /threads row), and the derived metrics. */
static const char pm_csv_more_header[] =
    ",excl_total_ns,excl_min_ns,excl_mean_ns,excl_max_ns,excl_sd_ns"
    ",wall_thread_sd_ns,wall_thread_imbalance,wall_max_thread"
    ",event_thread_sd,event_thread_imbalance,event_max_thread,ipc,omp_wait_ns,omp_wait_share";

static void pm_csv_more_part(FILE *out, const struct pm_report *rep, size_t r, size_t e)
{
    const struct pm_regstat *s = &rep->reg[r];
    const struct pm_tstat *x = &s->excl_thr, *w = &s->wall_thr;

    putc(',', out);
    if (s->has_wall)
        fprintf(out, "%" PRIu64, s->excl_total);
    pm_csv_next(out, x->n > 0, x->min);
    pm_csv_next(out, x->n > 0, x->mean);
    pm_csv_next(out, x->n > 0, x->max);
    pm_csv_next(out, x->n > 0, x->sd);
    pm_csv_next(out, w->n > 0, w->sd);
    pm_csv_next(out, w->has_imbalance, w->imbalance);
    putc(',', out);
    if (w->n > 0)
        fprintf(out, "%zu", w->max_index);
    if (e < rep->d->E) {
        const struct pm_evstat *v = &s->ev[e];

        pm_csv_next(out, v->has_spread, v->sd);
        pm_csv_next(out, v->has_imbalance, v->imbalance);
        putc(',', out);
        if (v->has_spread)
            fprintf(out, "%zu", v->max_index);
    } else {
        fputs(",,,", out);
    }
    pm_csv_next(out, s->has_ipc, s->ipc);
    pm_csv_next(out, rep->xr.has_omp_wait, (double)s->omp_wait_ns);
    pm_csv_next(out, s->has_omp_wait_share, s->omp_wait_share);
}

/* Appended to every row after all others, files since the throttle only
 * (report_measure.c): which visits were measured and perfmark's part in the
 * row's region; the last two are the whole run's (the same on every row:
 * CSV stays one table). Empty where there is no value. */
static const char pm_csv_measuring_header[] =
    ",wall_raw_ns,time_estimate,threads_time_na,excl_estimate,timed_visits,timer_visits"
    ",timer_only,throttled_threads,throttled_from_min,throttled_from_max,reads"
    ",perfmark_cpu_ns,perfmark_wall_ns,perfmark_cpu_share,run_perfmark_reads_ns"
    ",run_perfmark_reads_share";

static void pm_csv_measuring_part(FILE *out, const struct pm_report *rep, size_t r)
{
    const struct pm_regstat *s = &rep->reg[r];
    int has = rep->ms.has_read_cost;

    if (!rep->ms.measuring)
        return;
    fprintf(out, ",%" PRIu64 ",%s,%zu,%s,%" PRIu64 ",%" PRIu64 ",%s,%zu,", s->wall_raw,
            s->time_est ? "true" : "false", s->time_na, s->excl_est ? "true" : "false",
            s->timed_visits, s->timer_visits, s->timer_only ? "true" : "false", s->throttled);
    if (s->throttled)
        fprintf(out, "%" PRIu64 ",%" PRIu64, s->throttled_min, s->throttled_max);
    else
        putc(',', out);
    fprintf(out, ",%" PRIu64, s->reads);
    pm_csv_next(out, has, s->own_cpu_ns);
    pm_csv_next(out, has, s->own_wall_ns);
    pm_csv_next(out, has && s->has_own_share, s->own_share);
    pm_csv_next(out, has, rep->ms.run_reads_ns);
    pm_csv_next(out, has && rep->ms.run_thread_ns > 0,
               rep->ms.run_reads_ns / (double)(rep->ms.run_thread_ns ? rep->ms.run_thread_ns : 1));
}

/* The sampled profile as columns. CSV stays one table of (region, event)
 * rows: files with samples get, appended to every row, the row's region's
 * samples for each sampled event (named in the column, sampled_<event>_...):
 * samples (its own and its subtree's), its own, lost, throttled, the
 * estimate (samples x period) and its relative error, and its top function
 * and line with their shares. The full lists are in the JSON report. */
static const char *const pm_pc_cols[] = {
    "samples", "self", "lost", "throttled", "estimate", "rel_error",
    "top_function", "top_function_share", "top_line", "top_line_share",
};

static void pm_csv_profile_header(FILE *out, const struct pm_report *rep)
{
    const struct pm_profile *p = rep->profile;
    for (size_t e = 0; p && e < p->S; e++)
        for (size_t k = 0; k < sizeof pm_pc_cols / sizeof *pm_pc_cols; k++) {
            char name[256];
            snprintf(name, sizeof name, "sampled_%s_%s", p->ev[e].name, pm_pc_cols[k]);
            putc(',', out);
            pm_csv_str(out, name);
        }
}

static void pm_csv_profile_part(FILE *out, const struct pm_report *rep, size_t r)
{
    const struct pm_profile *p = rep->profile;
    for (size_t e = 0; p && e < p->S; e++) {
        const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, c->samples, c->self,
                c->lost, c->throttled);
        pm_csv_next(out, 1, c->estimate);
        pm_csv_next(out, c->samples > 0, pm_prof_rel_error(c->samples));
        putc(',', out);
        if (c->nfn)
            pm_csv_str(out, p->fn[c->fn[0].id].label);
        pm_csv_next(out, c->nfn > 0, c->nfn ? c->fn[0].share : 0);
        putc(',', out);
        if (c->nline)
            pm_csv_str(out, p->line[c->line[0].id].label);
        pm_csv_next(out, c->nline > 0, c->nline ? c->line[0].share : 0);
    }
}

void pm_render_csv(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    /* the header's own line end: the rank columns go before it */
    fwrite(pm_csv_header, 1, sizeof pm_csv_header - 2, out);
    if (rep->xr.multi_rank)
        fputs(pm_csv_rank_header, out);
    pm_csv_td_header(out, rep);
    fputs(pm_csv_more_header, out);
    if (rep->ms.measuring)
        fputs(pm_csv_measuring_header, out);
    pm_csv_profile_header(out, rep);
    putc('\n', out);
    /* the regions --region/--top chose (all, in tree order, by default) */
    for (size_t k = 0; k < rep->view.nrows; k++) {
        size_t r = rep->view.rows[k], i = rep->pos[r];

        if (d->E == 0) { /* still one row per region */
            pm_csv_region_part(out, rep, i);
            fputs(",,,,,,,,,,,", out);
            pm_csv_rank_part(out, rep, r, d->E);
            pm_csv_td_part(out, rep, r);
            pm_csv_more_part(out, rep, r, d->E);
            pm_csv_measuring_part(out, rep, r);
            pm_csv_profile_part(out, rep, r);
            putc('\n', out);
        }
        for (size_t e = 0; e < d->E; e++) {
            pm_csv_region_part(out, rep, i);
            pm_csv_event_part(out, rep, &rep->reg[r].ev[e], e);
            pm_csv_rank_part(out, rep, r, e);
            pm_csv_td_part(out, rep, r);
            pm_csv_more_part(out, rep, r, e);
            pm_csv_measuring_part(out, rep, r);
            pm_csv_profile_part(out, rep, r);
            putc('\n', out);
        }
    }
}
