/*
 * report_text.c — the terminal report: tables fitting PM_TEXT_WIDTH columns,
 * human units, and user data cut, wrapped and cleaned of control characters.
 */
#include "render/report_text.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_TEXT_WIDTH 100
#define PM_TEXT_MESSAGES 20

/* Bytes of the next line of at most `width` columns, broken at the last
 * space when there is one. */
static size_t pm_wrap_len(const char *s, size_t n, size_t width)
{
    size_t i = 0, c = 0, brk = 0;
    uint32_t cp;

    while (i < n && c < width) {
        if (s[i] == ' ')
            brk = i;
        i += pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        c++;
    }
    if (i >= n || s[i] == ' ')
        return i;
    return brk > 0 ? brk : i;
}

/* Print s from column `indent` (the cursor is already there), wrapped at
 * PM_TEXT_WIDTH with continuation lines indented to the same column. */
static void pm_text_wrap(FILE *out, const char *s, size_t indent)
{
    size_t width = indent + 10 < PM_TEXT_WIDTH ? PM_TEXT_WIDTH - indent : 10;
    size_t n = strlen(s);
    int first = 1;

    while (first || n > 0) {
        size_t take = pm_wrap_len(s, n, width), shown = take;

        while (shown > 0 && s[shown - 1] == ' ')
            shown--;
        if (!first)
            pm_spaces(out, indent);
        pm_term_put(out, s, shown, width);
        putc('\n', out);
        s += take;
        n -= take;
        while (n > 0 && *s == ' ')
            s++, n--;
        first = 0;
    }
}

static void pm_text_label(FILE *out, const char *label, const char *value)
{
    fprintf(out, "%-10s", label);
    pm_text_wrap(out, value, 10);
}

/* ------------------------------------------------------- human units */

static void pm_fmt_count(char *buf, size_t len, double v) { pm_unit_count(buf, len, v, ""); }

/* Software clock events (task-clock, cpu-clock) count nanoseconds. */
static int pm_event_is_time(const struct pm_file_event *ev)
{
    return ev->type == 1 /* PERF_TYPE_SOFTWARE */ &&
           (ev->config == 0 /* CPU_CLOCK */ || ev->config == 1 /* TASK_CLOCK */);
}

/* A time: "n/a" without one, else the value with the markers ~ (an
 * estimate: sampled visits) and ! (some visiting threads have no time). */
static void pm_fmt_time_m(char *buf, size_t len, int has, double ns, int est, int bad)
{
    size_t n;

    if (!has) {
        snprintf(buf, len, "n/a");
        return;
    }
    pm_unit_time(buf, len, ns);
    n = strlen(buf);
    snprintf(buf + n, len - n, "%s%s", est ? "~" : "", bad ? "!" : "");
}

/* A region's inclusive time (total, or one of its per-thread statistics). */
static void pm_fmt_rtime(char *buf, size_t len, const struct pm_regstat *s, int has, double ns)
{
    pm_fmt_time_m(buf, len, has && s->has_wall, ns, s->time_est > 0, s->time_na > 0);
}

/* A count cell: "n/a" without an estimate, else the value with the
 * markers ~ (estimate) and ! (incomplete); clock events as durations. */
static void pm_fmt_value(char *buf, size_t len, int has, double v, const struct pm_evstat *s,
                         int is_time)
{
    char num[32];

    if (!has) {
        snprintf(buf, len, "n/a");
        return;
    }
    if (is_time)
        pm_unit_time(num, sizeof num, v);
    else
        pm_fmt_count(num, sizeof num, v);
    snprintf(buf, len, "%s%s%s", num, s->estimate ? "~" : "", s->untrusted ? "!" : "");
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

            n = snprintf(buf + used, sizeof buf - used, "%s%.60s (rank %d thread %d)",
                         i ? "; " : "", d->regions[w->r].path, (int)d->tids[w->t].rank,
                         (int)d->tids[w->t].thread);
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
    pm_text_measuring(out, rep);
    pm_flag_summary(rep, buf, sizeof buf);
    pm_text_label(out, "flags", buf);
    pm_flag_where(out, rep);
    pm_text_messages(out, d);
}

/* ------------------------------------------------------------ tables */

static void pm_fmt_pct(char *buf, size_t len, int has, double share);

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

/* Region name columns: the region table's, and the narrower one of the
 * event tables (they add stddev and max/mean); --wide widens both to the
 * longest name shown (pm_text_widths). */
static size_t pm_name_w = 36, pm_ev_name_w = 25;
#define PM_NAME_W pm_name_w
#define PM_EV_NAME_W pm_ev_name_w
#define PM_FLAGS_COL (pm_name_w + 36) /* where the flags column starts in the region table */

/* Without --wide the tables fit 100 columns and long names are cut in the
 * middle; with it the name columns take the longest name the view shows. */
static void pm_text_widths(const struct pm_report *rep)
{
    size_t longest = 0;

    pm_name_w = 36;
    pm_ev_name_w = 25;
    if (!rep->view.opts.wide)
        return;
    for (size_t i = 0; i < rep->view.nrows; i++) {
        const struct pm_file_region *g = &rep->d->regions[rep->view.rows[i]];
        size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;
        size_t cols = g->name[0] ? pm_term_cols(g->name, strlen(g->name)) : 2;

        if (indent + cols > longest)
            longest = indent + cols;
    }
    if (longest > pm_name_w)
        pm_name_w = longest;
    if (longest > pm_ev_name_w)
        pm_ev_name_w = longest;
}

static void pm_text_region_name(FILE *out, const struct pm_file_region *g)
{
    size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;

    pm_spaces(out, indent);
    pm_text_cell(out, g->name[0] ? g->name : "\"\"", PM_NAME_W - indent, PM_LEFT);
}

/* The region's flags as "NAME:n" (the CSV's list), THROTTLED with the
 * visit its counts stop at. */
static void pm_text_flag_list(const struct pm_report *rep, const struct pm_regstat *s, char *buf,
                              size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < rep->nflags && used < len; i++) {
        int n;

        if (s->flag_cells[i] == 0)
            continue;
        n = snprintf(buf + used, len - used, "%s%s:%zu", used ? " " : "", rep->flags[i].name,
                     s->flag_cells[i]);
        used += n > 0 ? (size_t)n : 0;
        if (rep->flags[i].kind != PM_FK_THROTTLED || !s->throttled || used >= len)
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

static void pm_text_regions(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char a[32], b[32], c[32], flags[1024];

    fprintf(out, "\nRegions: %zu, tree by path; %zu thread%s; wall time is inclusive\n", d->R,
            d->T, d->T == 1 ? "" : "s");
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
        pm_text_flag_list(rep, s, flags, sizeof flags);
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
static void pm_fmt_thread(char *buf, size_t len, const struct pm_file *d, int has, size_t t)
{
    if (has)
        snprintf(buf, len, "r%d.t%d", (int)d->tids[t].rank, (int)d->tids[t].thread);
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
        pm_fmt_thread(buf[5], sizeof buf[5], d, w->n > 0, w->max_index);
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
    fputs("\nOpenMP wait (omp barrier/taskwait/taskgroup below the region) / region time\n", out);
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

static void pm_text_threads(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char cpu[40], wall[32];

    fprintf(out, "\nThreads: %zu (totals from first sight until exit or write)\n", d->T);
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

static void pm_text_rank_row(FILE *out, const struct pm_report *rep, size_t n)
{
    const struct pm_file *d = rep->d;
    char p[48], s[48], diff[48];

    if (d->N > 1)
        fprintf(out, "rank row %zu (%zu thread%s of rank %zu)\n", n, rep->rank_threads[n],
                rep->rank_threads[n] == 1 ? "" : "s", n);
    pm_text_cell(out, "event", PM_NAME_W, PM_LEFT);
    fprintf(out, " %13s %13s %13s\n", "process", "threads sum", "difference");
    for (size_t e = 0; e < d->E; e++) {
        const struct pm_rankstat *rs = &rep->rank[n * d->E + e];

        int is_time = pm_event_is_time(&d->events[e]);
        pm_fmt_value(p, sizeof p, rs->proc.has_total, rs->proc.total, &rs->proc, is_time);
        pm_fmt_value(s, sizeof s, rs->sum.has_total, rs->sum.total, &rs->sum, is_time);
        if (rs->proc.has_total && rs->sum.has_total) {
            if (is_time)
                pm_unit_time(diff, sizeof diff, rs->proc.total - rs->sum.total);
            else
                pm_fmt_count(diff, sizeof diff, rs->proc.total - rs->sum.total);
            if (rs->proc.estimate || rs->sum.estimate)
                strcat(diff, "~");
        } else {
            snprintf(diff, sizeof diff, "n/a");
        }
        pm_text_cell(out, d->events[e].name, PM_NAME_W, PM_LEFT);
        putc(' ', out);
        pm_text_cell(out, p, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_cell(out, s, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_cell(out, diff, 13, PM_RIGHT);
        putc('\n', out);
    }
}

static void pm_text_rank(FILE *out, const struct pm_report *rep)
{
    if (rep->d->N == 0)
        return;
    fputs("\nProcess totals (inherited counter set) vs. the sum of per-thread totals\n", out);
    for (size_t n = 0; n < rep->d->N; n++)
        pm_text_rank_row(out, rep, n);
    fputs("difference = ", out);
    pm_text_wrap(out, pm_unseen_label, 13);
}

/* ------------------------------------------------------ across ranks */

#define PM_SHARE_RANKS 16 /* ranks listed one per line; more get a summary */
#define PM_FUNC_W 25      /* fits MPI_Reduce_scatter_block */

/* max/mean with at most 4 significant characters; "-" when mean is 0. */
static void pm_fmt_ratio(char *buf, size_t len, const struct pm_xstat *x)
{
    if (x->has_imbalance)
        snprintf(buf, len, "%.*f", pm_unit_prec(x->imbalance), x->imbalance);
    else
        snprintf(buf, len, "-");
}

static void pm_fmt_rank(char *buf, size_t len, int has, int32_t rank)
{
    if (has)
        snprintf(buf, len, "%d", (int)rank);
    else
        snprintf(buf, len, "-");
}

static void pm_fmt_pct(char *buf, size_t len, int has, double share)
{
    if (has)
        snprintf(buf, len, "%.1f%%", share * 100.0);
    else
        snprintf(buf, len, "n/a");
}

/* "4 ranks", or "1 rank of the job's 4" for a file of part of a job. */
static void pm_rank_count(char *buf, size_t len, const struct pm_report *rep)
{
    int n = snprintf(buf, len, "%zu rank%s", rep->xr.nranks, rep->xr.nranks == 1 ? "" : "s");

    if (n > 0 && (size_t)n < len && rep->d->ranks > 0 && (size_t)rep->d->ranks != rep->xr.nranks)
        snprintf(buf + n, len - (size_t)n, " of the job's %d", (int)rep->d->ranks);
}

/* min, mean, max per rank (as times), imbalance and the rank of the max:
 * the right-hand columns shared by both across-ranks tables. */
static void pm_text_spread(FILE *out, const struct pm_xstat *x, size_t width)
{
    const double v[3] = {x->min, x->mean, x->max};
    char buf[32];

    for (int k = 0; k < 3; k++) {
        if (x->nspread)
            pm_fmt_time_m(buf, sizeof buf, 1, v[k], x->estimate, 0);
        else
            snprintf(buf, sizeof buf, "-");
        putc(' ', out);
        pm_text_cell(out, buf, width, PM_RIGHT);
    }
    pm_fmt_ratio(buf, sizeof buf, x);
    fprintf(out, " %5s", buf);
    pm_fmt_rank(buf, sizeof buf, x->nspread > 0, x->max_rank);
    fprintf(out, " %8s\n", buf);
}

static void pm_text_mpi_functions(FILE *out, const struct pm_report *rep)
{
    char head[200], n[32], a[32], b[32], c[32];

    pm_rank_count(n, sizeof n, rep);
    snprintf(head, sizeof head, "MPI functions across ranks: %s; every call path summed; a "
             "rank's value is the sum over its threads, min/mean/max over the ranks that "
             "called", n);
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    pm_text_cell(out, "function", PM_FUNC_W, PM_LEFT);
    fprintf(out, " %7s %7s %7s %8s %8s %8s %8s %5s %8s\n", "calls", "bytes", "unknown", "time",
            "min", "mean", "max", "imbal", "max@rank");
    for (size_t f = 0; f < rep->xr.nmpif; f++) {
        const struct pm_xregion *x = &rep->xr.mpif[f];

        pm_text_cell(out, x->name[0] ? x->name : "\"\"", PM_FUNC_W, PM_LEFT);
        pm_fmt_count(a, sizeof a, x->q[PM_Q_VISITS].total);
        pm_fmt_count(b, sizeof b, x->q[PM_Q_BYTES].total);
        pm_fmt_count(c, sizeof c, x->q[PM_Q_BYTES_UNKNOWN].total);
        fprintf(out, " %7s %7s %7s ", a, b, c);
        pm_fmt_time_m(a, sizeof a, x->q[PM_Q_WALL].has_total, x->q[PM_Q_WALL].total,
                      x->q[PM_Q_WALL].estimate, x->q[PM_Q_WALL].untrusted);
        pm_text_cell(out, a, 8, PM_RIGHT);
        pm_text_spread(out, &x->q[PM_Q_WALL], 8);
    }
    fputs("unknown = calls whose byte count could not be determined; time = inclusive wall "
          "time\n", out);
}

static void pm_text_share_line(FILE *out, const struct pm_mpishare *s)
{
    char a[32], b[32], c[32];

    pm_fmt_time_m(a, sizeof a, 1, (double)s->mpi_ns, s->estimate, 0);
    pm_unit_time(b, sizeof b, (double)s->total_ns);
    pm_fmt_pct(c, sizeof c, s->has_share, s->share);
    if (s->has_share && s->estimate)
        strcat(c, "~");
    fprintf(out, "%8d ", (int)s->rank);
    pm_text_cell(out, a, 11, PM_RIGHT);
    putc(' ', out);
    pm_text_cell(out, b, 11, PM_RIGHT);
    fprintf(out, " %7s\n", c);
}

/* The 3 highest shares (lowest rank first on ties) for a job too large to
 * list rank by rank. */
static void pm_text_share_top(FILE *out, const struct pm_report *rep)
{
    size_t top[3], ntop = 0;
    char buf[32];

    for (size_t k = 0; k < rep->xr.nranks; k++) {
        size_t i;

        if (!rep->xr.share[k].has_share)
            continue;
        for (i = ntop; i > 0 && rep->xr.share[top[i - 1]].share < rep->xr.share[k].share; i--)
            if (i < 3)
                top[i] = top[i - 1];
        if (i < 3) {
            top[i] = k;
            ntop += ntop < 3;
        }
    }
    fputs("highest:", out);
    for (size_t i = 0; i < ntop; i++) {
        pm_fmt_pct(buf, sizeof buf, 1, rep->xr.share[top[i]].share);
        fprintf(out, "%s rank %d %s", i ? "," : "", (int)rep->xr.share[top[i]].rank, buf);
    }
    putc('\n', out);
}

static void pm_text_mpi_share(FILE *out, const struct pm_report *rep)
{
    const struct pm_xstat *x = &rep->xr.share_stat;
    char a[32], b[32], c[32];

    fputs("\nMPI time share per rank: time in MPI calls (the outermost ones, summed over the "
          "rank's\n", out);
    fputs("threads) / the rank's time (its longest thread)\n", out);
    if (rep->xr.nranks <= PM_SHARE_RANKS) {
        fprintf(out, "%8s %11s %11s %7s\n", "rank", "MPI", "rank time", "share");
        for (size_t k = 0; k < rep->xr.nranks; k++)
            pm_text_share_line(out, &rep->xr.share[k]);
    }
    if (x->nspread == 0) {
        fputs("no rank has a time\n", out);
        return;
    }
    pm_fmt_pct(a, sizeof a, 1, x->min);
    pm_fmt_pct(b, sizeof b, 1, x->mean);
    pm_fmt_pct(c, sizeof c, 1, x->max);
    fprintf(out, "min %s (rank %d)   mean %s   max %s (rank %d)", a, (int)x->min_rank, b, c,
            (int)x->max_rank);
    if (x->nspread < rep->xr.nranks)
        fprintf(out, "   n/a: %zu rank%s without time", rep->xr.nranks - x->nspread,
                rep->xr.nranks - x->nspread == 1 ? "" : "s");
    putc('\n', out);
    if (rep->xr.nranks > PM_SHARE_RANKS)
        pm_text_share_top(out, rep);
}

static void pm_text_regions_ranks(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char head[200], n[32], a[32];
    size_t shown = 0;

    pm_rank_count(n, sizeof n, rep);
    snprintf(head, sizeof head, "Regions across ranks: %s; user regions; time = wall time "
             "summed over the rank's threads, min/mean/max over the ranks that entered", n);
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %5s %9s %9s %9s %9s %5s %8s\n", "ranks", "visits", "min/rank", "mean/rank",
            "max/rank", "imbal", "max@rank");
    for (size_t i = 0; i < d->R; i++) {
        size_t r = rep->order[i];
        const struct pm_xregion *x = &rep->xr.xreg[r];

        if (strcmp(d->regions[r].kind, "mpi") == 0)
            continue;
        pm_text_region_name(out, &d->regions[r]);
        pm_fmt_count(a, sizeof a, x->q[PM_Q_VISITS].total);
        fprintf(out, " %5zu %9s", x->entered, a);
        pm_text_spread(out, &x->q[PM_Q_WALL], 9);
        shown++;
    }
    if (shown == 0)
        fputs("(no user region was recorded)\n", out);
}

/* Shown only for files of several ranks: a single-rank report is unchanged. */
static void pm_text_ranks(FILE *out, const struct pm_report *rep)
{
    if (!rep->xr.multi_rank)
        return;
    if (rep->xr.nmpif > 0) {
        pm_text_mpi_functions(out, rep);
        pm_text_mpi_share(out, rep);
    }
    pm_text_regions_ranks(out, rep);
}

/* ----------------------------------------------------------- TopDown */

#define PM_TD_RUN_LABEL "(whole run: thread totals)"

/* One TopDown cell: the share of node n with ~ for an estimate; without a
 * ratio, SHORT when every cell was left out as SHORT, n/a when cells were
 * left out for other reasons too, - when there was nothing to count. */
static void pm_fmt_td(char *buf, size_t len, const struct pm_tdstat *s, enum pm_td_node n)
{
    size_t out = pm_td_left_out(s);

    if (s->has_ratios)
        snprintf(buf, len, "%.1f%%%s", s->br.ratio[n] * 100.0, s->estimate ? "~" : "");
    else if (s->used == 0 && out > 0 && out == s->left_out[PM_TD_OUT_SHORT])
        snprintf(buf, len, "SHORT");
    else
        snprintf(buf, len, "%s", out > 0 ? "n/a" : "-");
}

/* One row of the level-1 table (slot count, the level-1 categories, cells
 * left out) or of the level-2 table (the level-2 categories); g NULL is the
 * whole run. */
static void pm_text_td_row(FILE *out, const struct pm_report *rep, const struct pm_file_region *g,
                           const struct pm_tdstat *s, int level1)
{
    const int width = level1 ? 8 : 7, first = level1 ? 0 : PM_TD_N_HEAVY_OPS;
    const int last = level1 ? PM_TD_N_HEAVY_OPS : PM_TD_NNODES;
    char buf[32];

    if (g)
        pm_text_region_name(out, g);
    else
        pm_text_cell(out, PM_TD_RUN_LABEL, PM_NAME_W, PM_LEFT);
    if (level1) { /* the slots as a count like the event tables', ~ included */
        if (s->used)
            pm_fmt_value(buf, sizeof buf, 1, (double)s->slots.slots,
                         &(struct pm_evstat){.estimate = s->estimate}, 0);
        else
            snprintf(buf, sizeof buf, "-");
        fprintf(out, " %7s", buf);
    }
    for (int n = first; n < last; n++) {
        if (!pm_td_node_shown(&rep->td, (enum pm_td_node)n))
            continue;
        pm_fmt_td(buf, sizeof buf, s, (enum pm_td_node)n);
        fprintf(out, " %*s", width, buf);
    }
    if (level1 && pm_td_left_out(s))
        fprintf(out, " %8zu", pm_td_left_out(s));
    putc('\n', out);
}

static void pm_text_td_table(FILE *out, const struct pm_report *rep, int level1)
{
    const struct pm_file *d = rep->d;

    for (size_t i = 0; i < d->R; i++)
        pm_text_td_row(out, rep, &d->regions[rep->order[i]], &rep->td.reg[rep->order[i]], level1);
    pm_text_td_row(out, rep, NULL, &rep->td.run, level1);
}

/* What the TopDown ratios rest on: the cells left out, by reason. */
static void pm_text_td_notes(FILE *out, const struct pm_report *rep)
{
    const struct pm_tdreport *td = &rep->td;
    size_t by[PM_TD_NOUT] = {0}, total = 0;
    char buf[400];
    int n, estimate = td->run.estimate;

    for (size_t r = 0; r < rep->d->R; r++) {
        estimate |= td->reg[r].estimate;
        for (int k = 0; k < PM_TD_NOUT; k++)
            by[k] += td->reg[r].left_out[k];
    }
    for (int k = 0; k < PM_TD_NOUT; k++)
        total += by[k];
    pm_text_wrap(out, "ratio = slots of the category / all level-1 slots, both summed over the "
                      "region's cells (threads) before dividing: never a mean of percentages", 0);
    if (estimate)
        pm_text_wrap(out, "~ = some cell was multiplexed: its counts are scaled by "
                          "enabled/running before summing", 0);
    if (total) {
        n = snprintf(buf, sizeof buf, "left out = cells (thread x region) left out of the sums: "
                     "%zu in all:", total);
        for (int k = 0; k < PM_TD_NOUT && n > 0 && (size_t)n < sizeof buf; k++)
            if (by[k])
                n += snprintf(buf + n, sizeof buf - (size_t)n, " %s %zu,",
                              pm_td_out_name((enum pm_td_out)k), by[k]);
        if (n > 0 && (size_t)n < sizeof buf)
            buf[n - 1] = '.';
        pm_text_wrap(out, buf, 0);
        if (by[PM_TD_OUT_SHORT])
            pm_text_wrap(out, "SHORT = fewer than 1024 slots per counter read window: the 8-bit "
                              "metrics are too coarse for a ratio; a row shows SHORT when all "
                              "of the region's cells were SHORT", 0);
    }
    if (pm_td_left_out(&td->run) > 0) {
        snprintf(buf, sizeof buf, "%s: %zu thread%s left out (flagged)", PM_TD_RUN_LABEL,
                 pm_td_left_out(&td->run), pm_td_left_out(&td->run) == 1 ? "" : "s");
        pm_text_wrap(out, buf, 0);
    }
}

/* Hybrid CPUs: the breakdown describes P-core time only; say how much. */
static void pm_text_td_pcores(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[32];

    fputs("\nTopDown on a hybrid CPU: counted only while a thread ran on a P-core\n", out);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %12s %14s\n", "P-core time", "other cores");
    for (size_t i = 0; i <= d->R; i++) {
        const struct pm_tdstat *s = i < d->R ? &rep->td.reg[rep->order[i]] : &rep->td.run;

        if (i < d->R)
            pm_text_region_name(out, &d->regions[rep->order[i]]);
        else
            pm_text_cell(out, PM_TD_RUN_LABEL, PM_NAME_W, PM_LEFT);
        if (s->has_pcore) {
            snprintf(buf, sizeof buf, "%.1f%%", 100.0 * s->pcore_share);
            fprintf(out, " %12s", buf);
            snprintf(buf, sizeof buf, "%.1f%%", 100.0 * (1.0 - s->pcore_share));
            fprintf(out, " %14s\n", buf);
        } else {
            fprintf(out, " %12s %14s\n", "-", "-");
        }
    }
    pm_text_wrap(out, "P-core time = running / enabled time of the TopDown group, summed over "
                      "the cells the ratios use; the rest ran on other cores (E-cores count "
                      "none of these events) or, rarely, lost the counters to multiplexing. "
                      "The ratios describe the P-core time only: pin measured threads to "
                      "P-cores for a complete breakdown.", 0);
}

static void pm_text_topdown(FILE *out, const struct pm_report *rep)
{
    static const char *const l2_head[] = {"retiring", "bad spec", "frontend", "backend"};
    const struct pm_tdreport *td = &rep->td;
    const struct pm_file *d = rep->d;
    char head[300];

    if (!td->on)
        return;
    snprintf(head, sizeof head, "TopDown (%s, level %s, %s): share of the pipeline slots per "
             "region", d->topdown_method, td->levels >= 2 ? "1-2" : "1",
             d->cpu_model[0] ? d->cpu_model : "model ?");
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    if (td->problem[0]) {
        fputs("no breakdown: ", out);
        pm_text_wrap(out, td->problem, 14);
        return;
    }
    if (td->note[0])
        pm_text_wrap(out, td->note, 0);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %7s %8s %8s %8s %8s", "slots", "retiring", "bad spec", "frontend", "backend");
    if (pm_td_node_shown(td, PM_TD_N_SMT_CONTENTION))
        fprintf(out, " %8s", "smt");
    fprintf(out, " %8s\n", "left out");
    pm_text_td_table(out, rep, 1);
    if (td->levels >= 2) {
        fputs("\nTopDown level 2: each level-1 category split in two (a measured part and the "
              "rest),\nshare of all slots\n", out);
        pm_spaces(out, PM_NAME_W);
        for (int k = 0; k < 4; k++)
            fprintf(out, "%16s", l2_head[k]);
        putc('\n', out);
        pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
        fprintf(out, " %7s %7s %7s %7s %7s %7s %7s %7s\n", "heavy", "light", "br-misp",
                "clears", "fe-lat", "fe-bw", "memory", "core");
        pm_text_td_table(out, rep, 0);
    }
    pm_text_td_notes(out, rep);
    if (td->hybrid)
        pm_text_td_pcores(out, rep);
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
    pm_text_ranks(out, rep);
    pm_text_threads(out, rep);
    if (rep->d->E)
        pm_text_thread_events(out, rep);
    pm_text_rank(out, rep);
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
