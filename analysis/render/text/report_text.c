/*
 * report_text.c — the terminal report's own page: its header, the region,
 * time and event tables, threads, the notes, and the `--by` table. The
 * sections on ranks and TopDown are text_ranks.c and text_topdown.c; all of
 * them fit PM_TEXT_WIDTH columns through text_fmt.c, and user data is cut,
 * wrapped and cleaned of control characters.
 */
#include "render/text/report_text.h"
#include "render/common/render_common.h"
#include "render/text/text_fmt.h"
#include "render/text/text_ranks.h"
#include "render/text/text_topdown.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_TEXT_MESSAGES 20

/* ------------------------------------------------------- human units */

/* A region's inclusive time (total, or one of its per-thread statistics). */
static void pm_fmt_rtime(char *buf, size_t len, const struct pm_regstat *s, int has, double ns)
{
    pm_fmt_time_m(buf, len, has && s->has_wall, ns, s->time_est > 0, s->time_na > 0);
}

static void pm_fmt_share(char *buf, size_t len, const struct pm_evstat *s)
{
    if (!s->has_share)
        snprintf(buf, len, "-");
    else if (s->share >= 1.0)
        snprintf(buf, len, "100%%");
    else /* floor: 99.96% must not show as 100% */
        snprintf(buf, len, "%.1f%%", floor(s->share * 1000.0) / 10.0);
}

/* ------------------------------------------------------------ header */

static void pm_flag_summary(const struct pm_report *rep, char *buf, size_t len)
{
    size_t used;
    int n;

    if (rep->flagged_cells == 0) {
        snprintf(buf, len, "all numbers clean: no cell carries a data-quality flag");
        return;
    }
    n = snprintf(buf, len, "%zu of %zu cells (thread x region) carry a data-quality flag:",
                 rep->flagged_cells, rep->cells);
    used = n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < rep->nflags && used < len; i++) {
        if (rep->flags[i].cells == 0)
            continue;
        n = snprintf(buf + used, len - used, " %s %zu%s,", rep->flags[i].name, rep->flags[i].cells,
                     rep->flags[i].kind == PM_FK_TIMER_ONLY ? " (by design)" : "");
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < len && used > 0 && buf[used - 1] == ',')
        buf[used - 1] = '\0';
}

/* Where each flag is: the first cells in tree order, "+n more" after them. */
static void pm_flag_where(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[1024];

    for (size_t k = 0; k < rep->nflags; k++) {
        size_t used = 0;
        int n;

        if (rep->flags[k].cells == 0)
            continue;
        for (size_t i = 0; i < rep->nwhere[k] && used < sizeof buf; i++) {
            const struct pm_flagwhere *w = &rep->where[k * PM_FLAG_WHERE + i];

            struct pm_file_tid id = pm_report_tid(rep, w->t);

            n = snprintf(buf + used, sizeof buf - used, "%s%.60s (rank %d thread %d)",
                         i ? "; " : "", d->regions[w->r].path, (int)id.rank, (int)id.thread);
            used += n > 0 ? (size_t)n : 0;
        }
        if (used < sizeof buf && rep->flags[k].cells > rep->nwhere[k])
            snprintf(buf + used, sizeof buf - used, "; +%zu more",
                     rep->flags[k].cells - rep->nwhere[k]);
        fputs("  ", out);
        pm_text_cell(out, rep->flags[k].name, 16, PM_LEFT);
        putc(' ', out);
        pm_text_wrap(out, buf, 19);
    }
}

static void pm_text_messages(FILE *out, const struct pm_file *d)
{
    size_t shown = d->M < PM_TEXT_MESSAGES ? d->M : PM_TEXT_MESSAGES;

    if (d->M == 0)
        return;
    fprintf(out, "\nmessages (%zu)\n", d->M);
    for (size_t i = 0; i < shown; i++) {
        fputs("  ", out);
        pm_text_wrap(out, d->messages[i], 4);
    }
    if (d->M > shown)
        fprintf(out, "  ... %zu more\n", d->M - shown);
}

/* Files since the throttle: which visits read counters, and what
 * perfmark's own reads cost over the run (never subtracted anywhere). */
static void pm_text_measuring(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    unsigned long long warmup, k;
    char buf[400], a[32], b[32];
    int n = 0;

    if (d->throttle[0]) {
        if (strcmp(d->throttle, "off") == 0)
            snprintf(buf, sizeof buf, "off: every visit of every region read and timed");
        else if (sscanf(d->throttle, "warmup=%llu,k=%llu%n", &warmup, &k, &n) == 2 &&
                 d->throttle[n] == '\0')
            snprintf(buf, sizeof buf, "%s: after %llu visits, a region shorter than %llu counter "
                     "reads goes on with visits and time only (THROTTLED); MPI polls read no "
                     "counters (TIMER_ONLY)", d->throttle, warmup, k);
        else
            snprintf(buf, sizeof buf, "%s", d->throttle);
        pm_text_label(out, "throttle", buf);
    }
    if (d->threads_seen && d->threads_seen[0])
        pm_text_label(out, "threads", d->threads_seen);
    if (!d->has_read_cost)
        return;
    if (!rep->ms.has_read_cost) {
        snprintf(buf, sizeof buf, "perfmark's reads: %s", rep->ms.run_reads
                 ? "their cost was not measured" : "none (no counter was read)");
    } else {
        pm_unit_time(a, sizeof a, rep->ms.run_reads_ns);
        n = snprintf(buf, sizeof buf, "perfmark's reads: ~%s, ", a);
        if (rep->ms.run_thread_ns > 0)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "%.1f %%",
                          100.0 * rep->ms.run_reads_ns / (double)rep->ms.run_thread_ns);
        else
            n += snprintf(buf + n, sizeof buf - (size_t)n, "n/a");
        pm_unit_count(b, sizeof b, (double)rep->ms.run_reads, "");
        pm_unit_time(a, sizeof a, rep->ms.cost_min);
        n += snprintf(buf + n, sizeof buf - (size_t)n, " of the thread time (%s reads at ~%s",
                      b, a);
        pm_unit_time(b, sizeof b, rep->ms.cost_max);
        if (strcmp(a, b) != 0) /* processes measured different costs */
            n += snprintf(buf + n, sizeof buf - (size_t)n, " to ~%s", b);
        snprintf(buf + n, sizeof buf - (size_t)n, " each, measured at start); an estimate, "
                 "subtracted nowhere");
    }
    pm_text_label(out, "overhead", buf);
}

static void pm_text_header(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[1024], dur[32];
    size_t used = 0;

    fputs("perfmark report: ", out);
    pm_text_wrap(out, rep->path, 17);
    pm_text_label(out, "command", d->command);
    snprintf(buf, sizeof buf, "%s   pid %" PRId64 "   perfmark %s", d->host, d->pid,
             d->perfmark_version[0] ? d->perfmark_version : "?");
    pm_text_label(out, "host", buf);
    pm_unit_time(dur, sizeof dur, (double)d->duration_ns);
    snprintf(buf, sizeof buf, "%s   duration %s   clock %s",
             d->start_time[0] ? d->start_time : "?", dur, d->clock[0] ? d->clock : "?");
    pm_text_label(out, "started", buf);
    if (d->cpu[0])
        pm_text_label(out, "cpu", d->cpu);
    used = (size_t)snprintf(buf, sizeof buf, "requested %s; measured ",
                            d->events_requested[0] ? d->events_requested : "?");
    for (size_t e = 0; e < d->E && used < sizeof buf; e++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", e ? ", " : "",
                                 d->events[e].name);
    if (used < sizeof buf && d->sample_counting) {
        /* counting by sampling: the events are the sampled ones */
        used += (size_t)snprintf(buf + used, sizeof buf - used, "nothing read; sampled");
        for (size_t e = 0; e < d->S && used < sizeof buf; e++)
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s %s", e ? "," : "",
                                     d->sample_events[e].requested);
        if (used < sizeof buf)
            snprintf(buf + used, sizeof buf - used, " (--count sampled: counts are estimates)");
    } else if (used < sizeof buf) {
        snprintf(buf + used, sizeof buf - used, "%s (group %s, %zu kernel group%s)",
                 d->E ? "" : "nothing", d->event_group[0] ? d->event_group : "?", d->G,
                 d->G == 1 ? "" : "s");
    }
    pm_text_label(out, "events", buf);
    if (d->fallback[0])
        pm_text_label(out, "fallback", d->fallback);
    if (d->partial)
        pm_text_label(out, "PARTIAL", "written by an emergency dump: data up to that moment only");
    if (d->summary) {
        used = (size_t)snprintf(buf, sizeof buf, "summary file: regions and ranks over all %zu "
                                "ranks (%zu threads); rows of %zu kept rank%s (",
                                rep->xr.nranks, pm_job_threads(d), d->nkept,
                                d->nkept == 1 ? "" : "s");
        for (size_t i = 0; i < d->nkept && i < 16 && used < sizeof buf; i++)
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%d", i ? ", " : "",
                                     (int)d->kept_rank[i]);
        if (used < sizeof buf)
            snprintf(buf + used, sizeof buf - used, "%s): the thread and rank tables show only "
                     "theirs (PERFMARK_DETAIL=full keeps every rank's)",
                     d->nkept > 16 ? ", ..." : "");
        pm_text_label(out, "detail", buf);
    }
    pm_text_measuring(out, rep);
    pm_flag_summary(rep, buf, sizeof buf);
    pm_text_label(out, "flags", buf);
    pm_flag_where(out, rep);
    pm_text_messages(out, d);
}

/* ------------------------------------------------------------ tables */

/* What --region/--top chose, when they chose something. */
static void pm_text_selection(FILE *out, const struct pm_report *rep)
{
    const struct pm_view *v = &rep->view;
    char buf[300];

    if (!v->filtered)
        return;
    snprintf(buf, sizeof buf, "shown: %zu of %zu regions%s%.100s%s", v->nrows, rep->d->R,
             v->opts.region ? " under " : "", v->opts.region ? v->opts.region : "",
             v->opts.top ? ", the heaviest first" : "");
    pm_text_label(out, "selection", buf);
}

#define PM_FLAGS_COL (PM_NAME_W + 36) /* where the flags column starts in the region table */

static void pm_text_regions(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char a[32], b[32], c[32], flags[1024];

    fprintf(out, "\nRegions: %zu, tree by path; %zu thread%s; wall time is inclusive\n", d->R,
            pm_job_threads(d), pm_job_threads(d) == 1 ? "" : "s");
    pm_text_selection(out, rep);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %9s %11s %11s  flags (cells)\n", "visits", "wall total", "max/thread");
    if (d->R == 0)
        fputs("(no region was recorded)\n", out);
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_regstat *s = &rep->reg[r];

        pm_text_region_name(out, &d->regions[r]);
        pm_fmt_count(a, sizeof a, (double)s->visits);
        pm_fmt_rtime(b, sizeof b, s, 1, (double)s->wall_total);
        if (s->nwall)
            pm_fmt_rtime(c, sizeof c, s, 1, (double)s->wall_max);
        else
            snprintf(c, sizeof c, "-");
        fprintf(out, " %9s ", a);
        pm_text_cell(out, b, 11, PM_RIGHT);
        putc(' ', out);
        pm_text_cell(out, c, 11, PM_RIGHT);
        pm_region_flag_list(rep, s, " ", 1, flags, sizeof flags);
        if (flags[0]) {
            fputs("  ", out);
            pm_text_wrap(out, flags, PM_FLAGS_COL);
        } else {
            putc('\n', out);
        }
    }
}

static void pm_text_region_name_w(FILE *out, const struct pm_file_region *g, size_t w)
{
    size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;

    if (indent > w / 2)
        indent = w / 2;
    pm_spaces(out, indent);
    pm_text_cell(out, g->name[0] ? g->name : "\"\"", w - indent, PM_LEFT);
}

static void pm_text_event(FILE *out, const struct pm_report *rep, size_t e)
{
    const struct pm_file *d = rep->d;
    static const char *const head[] = {"total", "min/thread", "mean/thread", "max/thread",
                                       "sd/thread"};
    char buf[80];

    fputs("\nEvent ", out);
    pm_text_cell(out, d->events[e].name, 30, PM_LAST);
    fputs(" (", out);
    /* the libpfm4 name tells apart events perfmark names alike */
    if (d->events[e].pfm_name[0] && strcmp(d->events[e].pfm_name, d->events[e].name) != 0) {
        pm_text_cell(out, d->events[e].pfm_name, 45, PM_LAST);
        fputs(", ", out);
    }
    fprintf(out, "kernel group %d)\n", (int)d->events[e].group);
    pm_text_cell(out, "region", PM_EV_NAME_W, PM_LEFT);
    for (int k = 0; k < 5; k++)
        fprintf(out, " %11s", head[k]);
    fprintf(out, " %6s %6s\n", "max/mn", "counted");
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_evstat *s = &rep->reg[r].ev[e];
        const double v[5] = {s->total, s->min, s->mean, s->max, s->sd};
        const int has[5] = {s->has_total, s->has_spread, s->has_spread, s->has_spread,
                            s->has_spread};

        pm_text_region_name_w(out, &d->regions[r], PM_EV_NAME_W);
        if (rep->reg[r].timer_only) { /* no counter was read: no count is the region's */
            for (int k = 0; k < 7; k++) {
                putc(' ', out);
                pm_text_cell(out, k ? "\xE2\x80\x94" : "timer only", k < 5 ? 11 : 6, PM_RIGHT);
            }
            putc('\n', out);
            continue;
        }
        for (int k = 0; k < 5; k++) {
            pm_fmt_value(buf, sizeof buf, has[k], v[k], s, pm_event_is_time(&d->events[e]));
            if (has[k] && rep->reg[r].throttled) /* counts of the first visits only */
                strcat(buf, "*");
            putc(' ', out);
            pm_text_cell(out, buf, 11, PM_RIGHT);
        }
        if (s->has_imbalance)
            snprintf(buf, sizeof buf, "%.*f", pm_unit_prec(s->imbalance), s->imbalance);
        else
            snprintf(buf, sizeof buf, "-");
        putc(' ', out);
        pm_text_cell(out, buf, 6, PM_RIGHT);
        pm_fmt_share(buf, sizeof buf, s);
        fprintf(out, " %6s\n", buf);
    }
}

/* "r3.t1": rank and thread number of a thread row. */
static void pm_fmt_thread(char *buf, size_t len, const struct pm_report *rep, int has, size_t t)
{
    struct pm_file_tid id = pm_report_tid(rep, t);

    if (has)
        snprintf(buf, len, "r%d.t%d", (int)id.rank, (int)id.thread);
    else
        snprintf(buf, len, "-");
}

/* Inclusive and exclusive time, the spread of inclusive time over threads,
 * and IPC: the table a performance engineer reads first. */
static void pm_text_time(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[6][40];

    if (d->R == 0)
        return;
    fputs("\nTime per region: inclusive, exclusive (minus children), spread of inclusive over "
          "threads\n", out);
    pm_text_cell(out, "region", PM_EV_NAME_W, PM_LEFT);
    fprintf(out, " %11s %11s %11s %11s %6s %11s %7s\n", "inclusive", "exclusive", "mean/thread",
            "sd/thread", "max/mn", "max at", "IPC");
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_regstat *s = &rep->reg[r];
        const struct pm_tstat *w = &s->wall_thr;

        pm_text_region_name_w(out, &d->regions[r], PM_EV_NAME_W);
        pm_fmt_rtime(buf[0], sizeof buf[0], s, 1, (double)s->wall_total);
        pm_fmt_time_m(buf[1], sizeof buf[1], s->has_wall, (double)s->excl_total, s->excl_est,
                      s->time_na > 0 || s->excl_bad);
        if (w->n) {
            pm_fmt_rtime(buf[2], sizeof buf[2], s, 1, w->mean);
            pm_fmt_rtime(buf[3], sizeof buf[3], s, 1, w->sd);
        } else {
            snprintf(buf[2], sizeof buf[2], "-");
            snprintf(buf[3], sizeof buf[3], "-");
        }
        for (int k = 0; k < 4; k++) {
            putc(' ', out);
            pm_text_cell(out, buf[k], 11, PM_RIGHT);
        }
        if (w->has_imbalance)
            snprintf(buf[4], sizeof buf[4], "%.*f", pm_unit_prec(w->imbalance), w->imbalance);
        else
            snprintf(buf[4], sizeof buf[4], "-");
        putc(' ', out);
        pm_text_cell(out, buf[4], 6, PM_RIGHT);
        pm_fmt_thread(buf[5], sizeof buf[5], rep, w->n > 0, w->max_index);
        putc(' ', out);
        pm_text_cell(out, buf[5], 11, PM_RIGHT);
        if (s->has_ipc)
            snprintf(buf[0], sizeof buf[0], "%.2f%s%s", s->ipc, s->ipc_estimate ? "~" : "",
                     s->ipc_untrusted ? "!" : "");
        else
            snprintf(buf[0], sizeof buf[0], "-");
        putc(' ', out);
        pm_text_cell(out, buf[0], 7, PM_RIGHT);
        putc('\n', out);
    }
    if (rep->ev_instructions == SIZE_MAX || rep->ev_cycles == SIZE_MAX)
        fputs("IPC: - (instructions and cycles were not both measured)\n", out);
}

/* perfmark's own part in each region's numbers (report_measure.c): only for
 * files that record what a reading cost. */
static void pm_text_own(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[5][40];
    size_t shown = 0;

    if (!rep->ms.has_read_cost || d->R == 0)
        return;
    putc('\n', out);
    pm_text_wrap(out, "perfmark's reads per region: its own part in the region's numbers "
                      "(estimates; subtracted nowhere)", 0);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %9s %11s %7s %11s %7s\n", "reads in", "cpu est", "of cpu", "wall est",
            "of wall");
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_regstat *s = &rep->reg[r];

        if (!(s->own_cpu_ns > 0) && !(s->own_wall_ns > 0))
            continue;
        pm_text_region_name(out, &d->regions[r]);
        pm_fmt_count(buf[0], sizeof buf[0], (double)s->reads);
        pm_unit_time(buf[1], sizeof buf[1], s->own_cpu_ns);
        pm_fmt_pct(buf[2], sizeof buf[2], s->has_own_share, s->own_share);
        pm_unit_time(buf[3], sizeof buf[3], s->own_wall_ns);
        pm_fmt_pct(buf[4], sizeof buf[4], s->has_wall && s->wall_total > 0,
                   s->wall_total > 0 ? s->own_wall_ns / (double)s->wall_total : 0);
        for (int k = 0; k < 5; k++) {
            putc(' ', out);
            pm_text_cell(out, buf[k], k == 0 ? 9 : k % 2 ? 11 : 7, PM_RIGHT);
        }
        putc('\n', out);
        shown++;
    }
    if (!shown)
        fputs("(no region holds a counter reading)\n", out);
    pm_text_wrap(out, "reads in = readings of the counters made inside the region's counted "
                      "visits (its nested regions' enter and exit); cpu est = (reads in + counted "
                      "visits) x the read cost: a counted visit also holds half of its own two "
                      "readings in its CPU time (of cpu: of the region's task-clock, else "
                      "cpu-clock); wall est = reads in x the read cost (of wall: of its inclusive "
                      "time). OVERHEAD marks cells whose cpu est is over 10 % of their counts.", 0);
}

/* The OpenMP wait below each region that has one: share of its time, and
 * across ranks. */
static void pm_text_omp_wait(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[40];

    if (!rep->xr.has_omp_wait)
        return;
    fputs("\nOpenMP wait (omp barrier/taskwait/taskgroup/critical below the region) / region time\n", out);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %11s %7s %7s %7s %7s %8s\n", "wait", "share", "min/rk", "mean/rk", "max/rk",
            "max@rank");
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_regstat *s = &rep->reg[r];
        const struct pm_xstat *x = rep->xr.xomp ? &rep->xr.xomp[r] : NULL;

        if (s->omp_wait_ns == 0)
            continue;
        pm_text_region_name(out, &d->regions[r]);
        pm_unit_time(buf, sizeof buf, (double)s->omp_wait_ns);
        putc(' ', out);
        pm_text_cell(out, buf, 11, PM_RIGHT);
        pm_fmt_pct(buf, sizeof buf, s->has_omp_wait_share, s->omp_wait_share);
        fprintf(out, " %7s", buf);
        if (x && x->nspread) {
            const double v[3] = {x->min, x->mean, x->max};
            for (int k = 0; k < 3; k++) {
                pm_fmt_pct(buf, sizeof buf, 1, v[k]);
                fprintf(out, " %7s", buf);
            }
            fprintf(out, " %8d\n", (int)x->max_rank);
        } else {
            fprintf(out, " %7s %7s %7s %8s\n", "-", "-", "-", "-");
        }
    }
}

/* The CPU-model groups' derived metrics (report_derived.c), one table per
 * group: ~ marks a value from an estimate, ! one whose inputs miss counts. */
static void pm_text_derived(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[48];

    for (size_t i = 0; i < rep->ndgroups; i++) {
        const struct pm_dgroup *dg = &rep->dgroups[i];

        snprintf(buf, sizeof buf, "%s", dg->model->name);
        fprintf(out, "\nDerived metrics, group %s (%s tables): ratios of sums over threads\n",
                dg->group->name, buf);
        for (int k = 0; k < dg->nmetrics; k++)
            fprintf(out, "  %s = %s\n", dg->group->derived[k].name,
                    dg->group->derived[k].formula);
        pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
        for (int k = 0; k < dg->nmetrics; k++)
            fprintf(out, " %20.20s", dg->group->derived[k].name);
        putc('\n', out);
        for (size_t j = 0; j < rep->view.nrows; j++) {
            size_t r = rep->view.rows[j];

            pm_text_region_name(out, &d->regions[r]);
            for (int k = 0; k < dg->nmetrics; k++) {
                const struct pm_dval *v = &dg->val[r * (size_t)dg->nmetrics + (size_t)k];

                if (v->has)
                    snprintf(buf, sizeof buf, "%.4g%s%s", v->value, v->estimate ? "~" : "",
                             v->untrusted ? "!" : "");
                else
                    snprintf(buf, sizeof buf, "-");
                fprintf(out, " %20s", buf);
            }
            putc('\n', out);
        }
    }
}

/* Each thread's name and where it started (files since revision 8). */
static void pm_text_thread_names(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    struct pm_thread_rows rows = {0};

    fprintf(out, "\nThread names and start routines\n%5s %6s  %-16s %s\n", "rank", "thread",
            "name", "started in");
    for (size_t t = 0; t < d->T; t++) {
        const struct pm_file_thread *th = pm_report_thread(rep, &rows, t);
        const char *st = th->start && th->start[0] ? th->start : "-";
        size_t n = strlen(st);

        fprintf(out, "%5d %6d  ", (int)th->rank, (int)th->thread);
        pm_text_cell(out, th->name ? th->name : "", 16, PM_LEFT);
        putc(' ', out);
        pm_text_cell(out, st, n < 70 ? (int)n : 70, PM_LEFT);
        putc('\n', out);
    }
    pm_report_threads_done(&rows);
}

static void pm_text_threads(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char cpu[40], wall[32];

    /* Files since revision 8 say which threads have rows, and name them. */
    int named = d->threads_seen && d->threads_seen[0];
    int born = pm_unseen_label_of(d) != pm_unseen_label;
    if (d->summary)
        fprintf(out, "\nThreads: %zu of %zu, the kept ranks' (totals from %s until exit or "
                "write)\n", d->T, pm_job_threads(d), born ? "their start" : "first sight");
    else
        fprintf(out, "\nThreads: %zu (totals from %s until exit or write)\n", d->T,
                born ? "their start" : "first sight");
    fprintf(out, "%5s %6s %10s  %-16s %11s %6s %5s %11s%s\n", "rank", "thread", "tid", "host",
            "cpu", "exited", "open", "wall", d->has_placement ? "  bound to" : "");
    struct pm_thread_rows rows = {0};
    struct pm_totals tot = {0};

    for (size_t t = 0; t < d->T; t++) {
        const struct pm_file_thread *th = pm_report_thread(rep, &rows, t);
        const struct pm_totals *tb = pm_report_totals(rep, &tot, t);

        if (!tb)
            break;
        snprintf(cpu, sizeof cpu, "%d\xE2\x86\x92%d", (int)th->cpu_first, (int)th->cpu_last);
        pm_unit_time(wall, sizeof wall, (double)tb->wall_ns[t - tb->t0]);
        fprintf(out, "%5d %6d %10" PRId64 "  ", (int)th->rank, (int)th->thread, th->tid);
        pm_text_cell(out, th->host, 16, PM_LEFT);
        putc(' ', out);
        pm_text_cell(out, cpu, 11, PM_RIGHT);
        fprintf(out, " %6s %5d ", th->exited ? "yes" : "no", (int)th->open_at_end);
        pm_text_cell(out, wall, 11, PM_RIGHT);
        if (d->has_placement) {
            const char *b = th->binding ? th->binding : "";
            size_t n = strlen(b);
            fputs("  ", out);
            pm_text_cell(out, b, n < 14 ? (int)n : 14, PM_LEFT);
        }
        putc('\n', out);
    }
    pm_report_threads_done(&rows);
    pm_report_totals_done(&tot);
    if (named)
        pm_text_thread_names(out, rep);
}

#define PM_THR_EV_PER_TABLE 6

static void pm_text_thread_events(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    struct pm_totals tot = {0}; /* read again for each table: never all kept */
    char buf[64];

    for (size_t e0 = 0; e0 < d->E; e0 += PM_THR_EV_PER_TABLE) {
        size_t e1 = e0 + PM_THR_EV_PER_TABLE < d->E ? e0 + PM_THR_EV_PER_TABLE : d->E;

        fprintf(out, "\nThread totals per event%s\n", d->E > PM_THR_EV_PER_TABLE ? " (cont.)" : "");
        fprintf(out, "%5s %6s", "rank", "thread");
        for (size_t e = e0; e < e1; e++) {
            putc(' ', out);
            pm_text_cell(out, d->events[e].name, 13, PM_RIGHT);
        }
        putc('\n', out);
        for (size_t t = 0; t < d->T; t++) {
            const struct pm_totals *tb = pm_report_totals(rep, &tot, t);

            if (!tb)
                break;
            fprintf(out, "%5d %6d", (int)d->tids[t].rank, (int)d->tids[t].thread);
            for (size_t e = e0; e < e1; e++) {
                struct pm_evstat sv;
                const struct pm_evstat *s = &sv;

                pm_thread_evstat(d, tb, t, e, &sv);
                pm_fmt_value(buf, sizeof buf, s->has_total, s->total, s,
                             pm_event_is_time(&d->events[e]));
                putc(' ', out);
                pm_text_cell(out, buf, 13, PM_RIGHT);
            }
            putc('\n', out);
        }
    }
    pm_report_totals_done(&tot);
}

/* --------------------------------------------------------- footnotes */

static const char *pm_flag_meaning(const struct pm_flagdef *f)
{
    switch (f->kind) {
    case PM_FK_TIMER_ONLY:
        return "by design, not a problem: an MPI call that only polls reads no counter; its "
               "counts are in the enclosing region (shown as 'timer only'), its time is sampled "
               "(~)";
    case PM_FK_THROTTLED:
        return "short region throttled after its warm-up: visits and time exact, counts of the "
               "visits before 'from visit' only (marked *), the later ones are in the enclosing "
               "region";
    case PM_FK_OVERHEAD:
        return "perfmark's own readings are over 10 % of the counts (perfmark's reads per "
               "region): real numbers, but much of them is perfmark";
    case PM_FK_OTHER: break;
    }
    switch (f->bit) {
    case PM_FILE_FLAG_MULTIPLEXED:
        return "counts are a sample, scaled by enabled/running (marked ~)";
    case PM_FILE_FLAG_NOT_COUNTED: return "counters never ran in some visit: no estimate for it";
    case PM_FILE_FLAG_LOST_GENERATION:
        return "counter set reopened during a visit: its counts are missing (marked !)";
    case PM_FILE_FLAG_MIGRATED:
        return "thread changed CPU during a visit (per-thread counts are fine)";
    case PM_FILE_FLAG_UNBALANCED:
        return "unmatched begin/end, or closed by perfmark at exit (counted up to then)";
    case PM_FILE_FLAG_SHORT: return "too few slots (TopDown)";
    case PM_FILE_FLAG_PARTIAL: return "written by an emergency dump";
    case PM_FILE_FLAG_SAMPLES_LOST:
        if (strcmp(f->name, "SAMPLES_LOST") == 0)
            return "the kernel lost or throttled samples while the region was innermost: its "
                   "samples under-represent that time (see Samples)";
        break;
    }
    return "unknown to this reader";
}

static void pm_text_notes(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    int est = 0, na = 0, bad = 0, timer_only = 0, partial = 0;

    for (size_t i = 0; i < d->R * d->E; i++) {
        if (rep->reg[i / d->E].timer_only) /* shown as 'timer only' */
            continue;
        est |= rep->regev[i].estimate;
        na |= !rep->regev[i].has_total || !rep->regev[i].has_spread;
        bad |= rep->regev[i].untrusted;
    }
    for (size_t r = 0; r < d->R; r++) {
        timer_only |= rep->reg[r].timer_only && d->E > 0;
        partial |= rep->reg[r].throttled > 0 && d->E > 0;
    }
    est |= rep->thread_estimate; /* the /thread totals: summed at setup */
    na |= rep->thread_na;
    if (!est && !na && !bad && rep->flagged_cells == 0 && !rep->ms.time_est && !rep->ms.time_na)
        return;
    fputs("\nNotes\n", out);
    if (rep->flagged_cells)
        fputs("  flags (cells): NAME:n = the cells of n threads carry the flag\n", out);
    if (est) {
        fputs("  ~    ", out);
        pm_text_wrap(out, "estimate: the counters were multiplexed; each thread's count is "
                          "scaled by enabled/running time. 'counted' is the share of time "
                          "actually counted (sum running / sum enabled).", 7);
    }
    if (rep->ms.time_est) {
        fputs("  ~    ", out);
        pm_text_wrap(out, "on a time: an estimate from sampled visits. MPI polls are timed at "
                          "their first calls, then about one call in 32: time = wall_ns x visits "
                          "/ timed visits", 7);
    }
    if (rep->ms.time_na) {
        fputs("  !    ", out);
        pm_text_wrap(out, "on a time: some visiting threads had no timed visit; their time is "
                          "unknown and left out of the sums (n/a when no thread has one)", 7);
    }
    if (partial) {
        fputs("  *    ", out);
        pm_text_wrap(out, "counts of the visits before the throttle only (THROTTLED): the "
                          "later visits read no counter, their counts are in the enclosing "
                          "region", 7);
    }
    if (timer_only) {
        fputs("  timer only ", out);
        pm_text_wrap(out, "no counter was read in these visits by design (MPI polls, "
                          "TIMER_ONLY): their counts are in the enclosing region", 13);
    }
    if (na) {
        fputs("  n/a  ", out);
        pm_text_wrap(out, "no value: the counters never ran while enabled (NOT_COUNTED), or "
                          "no thread visited the region", 7);
    }
    if (bad) {
        fputs("  !    ", out);
        pm_text_wrap(out, "incomplete, do not trust: some visits lost their counter set "
                          "(LOST_GENERATION) or some threads have no estimate; the value "
                          "undercounts", 7);
    }
    for (size_t i = 0; i < rep->nflags; i++) {
        if (rep->flags[i].cells == 0)
            continue;
        fputs("  ", out);
        pm_text_cell(out, rep->flags[i].name, 16, PM_LEFT);
        putc(' ', out);
        pm_text_wrap(out, pm_flag_meaning(&rep->flags[i]), 19);
    }
}

void pm_render_text(FILE *out, const struct pm_report *rep)
{
    pm_text_widths(rep);
    pm_text_header(out, rep);
    pm_text_regions(out, rep);
    pm_text_time(out, rep);
    pm_text_own(out, rep);
    pm_text_omp_wait(out, rep);
    for (size_t e = 0; e < rep->d->E && rep->d->R > 0; e++)
        pm_text_event(out, rep, e);
    pm_text_topdown(out, rep);
    pm_text_derived(out, rep);
}

void pm_render_text_end(FILE *out, const struct pm_report *rep)
{
    pm_text_across_ranks(out, rep);
    pm_text_threads(out, rep);
    if (rep->d->E)
        pm_text_thread_events(out, rep);
    pm_text_process_totals(out, rep);
    pm_text_notes(out, rep);
}

/* ------------------------------------------------ --by rank / thread */

/* The metric of every (region, rank) or (region, thread): the breakdown the
 * region tables sum over. Ranks and threads without a value are left out;
 * a rank's value is the sum over its threads, like everywhere else. */
void pm_render_text_by(FILE *out, const struct pm_report *rep, struct pm_bycells *by)
{
    const struct pm_file *d = rep->d;
    const struct pm_view *v = &rep->view;
    int by_rank = v->by == PM_BY_RANK, is_time = v->metric == PM_VM_TIME ||
                                                 v->metric == PM_VM_EXCL;
    const char *mname = v->metric == PM_VM_TIME ? "inclusive time" :
                        v->metric == PM_VM_EXCL ? "exclusive time" :
                        v->metric == PM_VM_VISITS ? "visits" : rep->evkey[v->metric_event];
    char buf[64];

    if (v->metric == PM_VM_EVENT)
        is_time = pm_event_is_time(&d->events[v->metric_event]);
    pm_text_widths(rep);
    pm_text_header(out, rep);
    fprintf(out, "\n%s per %s and region (%s)\n", mname, by_rank ? "rank" : "thread",
            by_rank ? "a rank's value is the sum over its threads" : "one cell each");
    pm_text_selection(out, rep);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %6s %6s %13s %7s\n", "rank", by_rank ? "" : "thread", "value", "share");
    /* the values come from the model's --by table (by_table.c) */
    for (size_t i = 0; i < v->nrows; i++) {
        size_t r = v->rows[i];
        double total = by->total[i];

        for (size_t k = 0; k < by->nunits; k++) {
            double x;
            int m;

            if (!pm_by_get(by, rep, i, k, &x, &m))
                continue;
            pm_text_region_name(out, &d->regions[r]);
            if (by_rank)
                fprintf(out, " %6d %6s", (int)rep->xr.ranks[k], "");
            else
                fprintf(out, " %6d %6d", (int)d->tids[k].rank, (int)d->tids[k].thread);
            if (is_time)
                pm_unit_time(buf, sizeof buf, x);
            else
                pm_fmt_count(buf, sizeof buf, x);
            size_t used = strlen(buf);
            snprintf(buf + used, sizeof buf - used, "%s%s%s", m & PM_MARK_ESTIMATE ? "~" : "",
                     m & PM_MARK_UNTRUSTED ? "!" : "", m & PM_MARK_PARTIAL ? "*" : "");
            putc(' ', out);
            pm_text_cell(out, buf, 13, PM_RIGHT);
            pm_fmt_pct(buf, sizeof buf, total > 0, total > 0 ? x / total : 0);
            fprintf(out, " %7s\n", buf);
        }
    }
    pm_text_wrap(out, "share = of the region's total over every thread; ~ = an estimate "
                      "(multiplexed counts scaled), ! = counts missing (no estimate, or "
                      "counters reopened)", 0);
    if (d->has_visit_data)
        pm_text_wrap(out, "a time with ~ is extrapolated from sampled visits (MPI polls); * = "
                          "counts of the visits before the throttle only (THROTTLED); timer-only "
                          "cells (TIMER_ONLY) read no counter and are left out of counts", 0);
}
