/*
 * report_html.c — the report as one self-contained HTML file: inline CSS and
 * SVG, nothing loaded from anywhere (a Content-Security-Policy of
 * default-src 'none' makes the browser refuse it even if something slipped
 * in), and no script but the flame graphs' one (flame_svg.c), which the
 * policy allows by its SHA-256 alone. This file writes the page, the flag summary and the tables;
 * report_svg.c the charts. Every number comes from the model
 * (report_model.c) that the other formats print, so all formats agree.
 *
 * Table cells that hold a number carry it unrounded in data-v (what the
 * tests compare with their own recomputation); the cell text is the same
 * number in human units.
 */
#include "render/html/report_html.h"
#include "render/html/report_svg.h"
#include "render/html/flame_svg.h"
#include "render/html/profile_svg.h"
#include "render/html/series_svg.h"
#include "render/html/node_svg.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PM_HTML_THREADS 512 /* rows of the threads table */
#define PM_HTML_WHERE 8     /* regions named per flag in the summary */

/* Software clock events (task-clock, cpu-clock) count nanoseconds. */
static int pm_html_event_is_time(const struct pm_file_event *ev)
{
    return ev->type == 1 /* PERF_TYPE_SOFTWARE */ && (ev->config == 0 || ev->config == 1);
}

/* ---------------------------------------------------------------- page */

static const char pm_html_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1b1b1b;background:#fff}"
    "h1{font-size:1.5em;margin:0 0 .4em}h2{font-size:1.2em;margin:1.6em 0 .4em;"
    "border-bottom:1px solid #ccc}"
    "dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:0}"
    "dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}"
    ".box{padding:.6em 1em;border-radius:6px;margin:1em 0}"
    ".clean{background:#e8f5e9;border:1px solid #66bb6a}"
    ".dirty{background:#fff4e5;border:2px solid #f57c00}"
    "svg.flame g.fg{cursor:pointer}svg.flame text{font-size:11px;pointer-events:none}"
    "svg.flame g.fg-hit rect{fill:#d81b60}.fg-bar{margin:.3em 0}"
    ".partial{background:#ffebee;border:2px solid #c62828;font-weight:600}"
    "table{border-collapse:collapse;margin:.4em 0}"
    "th,td{border:1px solid #ddd;padding:2px 6px;vertical-align:top}"
    "th{background:#f3f3f3;text-align:left}td.n{text-align:right;white-space:nowrap}"
    "td.name{min-width:12em;max-width:32em;overflow-wrap:anywhere}"
    ".wrap{overflow-x:auto}"
    ".est{background:#fff8c4;font-style:italic}.na{color:#888}.bad{color:#b71c1c;font-weight:600}"
    "small{display:block;color:#666;font-size:.8em}"
    "tr.flagged td.name{border-left:4px solid #f57c00}"
    ".flag{display:inline-block;background:#ffe0b2;border-radius:3px;padding:0 4px;"
    "margin:1px;font-size:.85em;white-space:nowrap}"
    "svg{display:block;margin:.4em 0;font:12px system-ui,sans-serif}"
    "svg .ttl{font-weight:600;font-size:13px}"
    "nav a{margin-right:1em}.note{color:#555;max-width:60em}"
    "pre.msg{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0}";

static void pm_html_dd(FILE *out, const char *label, const char *value)
{
    fprintf(out, "<dt>%s</dt><dd>", label);
    pm_html_esc(out, value, PM_HTML_MAX_CHARS, 0);
    fputs("</dd>\n", out);
}

/* Files since the throttle: which visits read counters, and perfmark's
 * reads over the whole run (report_measure.c). */
static void pm_html_measuring(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char a[48], b[48];

    if (d->throttle[0]) {
        fputs("<dt>throttle</dt><dd>", out);
        pm_html_esc(out, d->throttle, 100, 0);
        fputs(strcmp(d->throttle, "off") == 0 ? " (every visit of every region read and timed)"
                                              : " (short regions THROTTLED after their warm-up; "
                                                "MPI polls TIMER_ONLY)", out);
        fputs("</dd>\n", out);
    }
    if (!d->has_read_cost)
        return;
    fputs("<dt>perfmark&#39;s reads</dt><dd>", out);
    if (!rep->ms.has_read_cost) {
        fprintf(out, "%s</dd>\n", rep->ms.run_reads ? "their cost was not measured"
                                                 : "none (no counter was read)");
        return;
    }
    pm_html_time(a, sizeof a, rep->ms.run_reads_ns);
    fprintf(out, "~<span data-k=\"reads_ns\" data-v=\"%.17g\">%s</span>, ", rep->ms.run_reads_ns, a);
    if (rep->ms.run_thread_ns > 0) {
        double share = rep->ms.run_reads_ns / (double)rep->ms.run_thread_ns;
        fprintf(out, "<span data-k=\"reads_share\" data-v=\"%.17g\">%.1f %%</span>", share,
                100.0 * share);
    } else {
        fputs("<span data-k=\"reads_share\" data-v=\"\">n/a</span>", out);
    }
    pm_html_count(b, sizeof b, (double)rep->ms.run_reads);
    pm_html_time(a, sizeof a, rep->ms.cost_min);
    fprintf(out, " of the thread time (<span data-k=\"reads\" data-v=\"%" PRIu64 "\">%s</span> "
            "reads at ~%s", rep->ms.run_reads, b, a);
    pm_html_time(b, sizeof b, rep->ms.cost_max);
    if (strcmp(a, b) != 0) /* processes measured different costs */
        fprintf(out, " to ~%s", b);
    fputs(" each, measured at start); an estimate, subtracted nowhere</dd>\n", out);
}

static void pm_html_head(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[64];

    /* The flame graphs' one script, allowed by its hash (flame_svg.c). */
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'", out);
    if (rep->flame)
        fprintf(out, "; script-src %s", pm_flame_script_hash());
    fputs("\">\n<title>perfmark report: ", out);
    pm_html_esc(out, rep->path, 200, 0);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", pm_html_css);
    fputs("<header>\n<h1>perfmark report</h1>\n<dl class=\"meta\">\n", out);
    pm_html_dd(out, "file", rep->path);
    pm_html_dd(out, "command", d->command);
    fputs("<dt>host</dt><dd>", out);
    pm_html_esc(out, d->host, 200, 0);
    fprintf(out, " &#183; pid %" PRId64 " &#183; perfmark ", d->pid);
    pm_html_esc(out, d->perfmark_version[0] ? d->perfmark_version : "?", 100, 0);
    fputs("</dd>\n<dt>started</dt><dd>", out);
    pm_html_esc(out, d->start_time[0] ? d->start_time : "?", 100, 0);
    pm_html_time(buf, sizeof buf, (double)d->duration_ns);
    fprintf(out, " &#183; duration <span data-k=\"duration_ns\" data-v=\"%" PRIu64 "\">%s</span>"
            " &#183; clock ", d->duration_ns, buf);
    pm_html_esc(out, d->clock[0] ? d->clock : "?", 100, 0);
    fputs("</dd>\n", out);
    if (d->cpu[0])
        pm_html_dd(out, "cpu", d->cpu);
    fputs("<dt>events</dt><dd>requested ", out);
    pm_html_esc(out, d->events_requested[0] ? d->events_requested : "?", PM_HTML_MAX_CHARS, 0);
    fputs("; measured ", out);
    for (size_t e = 0; e < d->E; e++) {
        fputs(e ? ", " : "", out);
        pm_html_esc(out, d->events[e].name, 200, 1);
    }
    fprintf(out, "%s (group ", d->E ? "" : "nothing");
    pm_html_esc(out, d->event_group[0] ? d->event_group : "?", 100, 0);
    fprintf(out, ", %zu kernel group%s)</dd>\n", d->G, d->G == 1 ? "" : "s");
    if (d->fallback[0])
        pm_html_dd(out, "fallback", d->fallback);
    fprintf(out, "<dt>shape</dt><dd>%zu region%s, %zu thread%s, %zu rank%s</dd>\n", d->R,
            d->R == 1 ? "" : "s", pm_job_threads(d), pm_job_threads(d) == 1 ? "" : "s",
            rep->xr.nranks, rep->xr.nranks == 1 ? "" : "s");
    if (d->summary) {
        fprintf(out, "<dt>detail</dt><dd>summary file: regions and ranks over all %zu ranks; "
                "rows of %zu kept rank%s (", rep->xr.nranks, d->nkept, d->nkept == 1 ? "" : "s");
        for (size_t i = 0; i < d->nkept && i < 16; i++)
            fprintf(out, "%s%d", i ? ", " : "", (int)d->kept_rank[i]);
        fprintf(out, "%s): the per-thread and per-rank charts show only theirs</dd>\n",
                d->nkept > 16 ? ", ..." : "");
    }
    pm_html_measuring(out, rep);
    fputs("</dl>\n</header>\n", out);
    if (d->partial)
        fputs("<div class=\"box partial\">PARTIAL: this file was written by an emergency dump "
              "(a signal or MPI_Abort): data up to that moment only.</div>\n", out);
}

/* ------------------------------------------------------ flag summary */

static const char *pm_html_flag_meaning(const struct pm_flagdef *f)
{
    switch (f->kind) {
    case PM_FK_TIMER_ONLY:
        return "by design, not a problem: an MPI call that only polls reads no counter; its "
               "counts are in the enclosing region (shown as timer only), its time is sampled "
               "(~ estimate)";
    case PM_FK_THROTTLED:
        return "a short region throttled after its warm-up: visits and time exact, counts of "
               "the visits before the throttle only (marked *), the later ones are in the "
               "enclosing region";
    case PM_FK_OVERHEAD:
        return "perfmark's own readings are over 10 % of the counts (see perfmark est): real "
               "numbers, but much of them is perfmark";
    case PM_FK_OTHER: break;
    }
    switch (f->bit) {
    case PM_FILE_FLAG_MULTIPLEXED:
        return "the counters ran part of the time: counts are scaled by enabled/running and "
               "shown as estimates (~, yellow) with the share of time counted";
    case PM_FILE_FLAG_NOT_COUNTED:
        return "the counters never ran in some visit: no estimate (n/a)";
    case PM_FILE_FLAG_LOST_GENERATION:
        return "the counter set was reopened during a visit: its counts are missing, totals "
               "undercount (!)";
    case PM_FILE_FLAG_MIGRATED:
        return "the thread changed CPU during a visit (per-thread counts are still right)";
    case PM_FILE_FLAG_UNBALANCED:
        return "unmatched begin/end, or closed by perfmark at exit (counted up to then)";
    case PM_FILE_FLAG_SHORT:
        return "too few TopDown slots per read window: left out of the TopDown ratios";
    case PM_FILE_FLAG_PARTIAL: return "written by an emergency dump: data up to that moment";
    case PM_FILE_FLAG_SAMPLES_LOST:
        if (strcmp(f->name, "SAMPLES_LOST") == 0)
            return "the kernel lost or throttled samples while the region was innermost: its "
                   "sampled shares and estimates are low there";
        break;
    }
    return "a flag this reader does not know";
}

/* The regions whose cells carry flag i, in tree order, first few named. */
static void pm_html_flag_where(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_file *d = rep->d;
    size_t shown = 0, more = 0;

    for (size_t k = 0; k < d->R; k++) {
        size_t r = rep->order[k];
        size_t n = rep->reg[r].flag_cells[i];

        if (n == 0)
            continue;
        if (shown == PM_HTML_WHERE) {
            more++;
            continue;
        }
        fprintf(out, "%s<span data-row=\"%zu\" data-n=\"%zu\">", shown ? "; " : "", r, n);
        pm_html_esc(out, d->regions[r].path, 120, 1);
        fprintf(out, " (%zu thread%s)</span>", n, n == 1 ? "" : "s");
        shown++;
    }
    if (more)
        fprintf(out, "; and %zu more region%s", more, more == 1 ? "" : "s");
}

static void pm_html_flags(FILE *out, const struct pm_report *rep)
{
    fputs("<section id=\"flags\">\n<h2>Data quality</h2>\n", out);
    if (rep->flagged_cells == 0) {
        fprintf(out, "<div class=\"box clean\" data-flagged=\"0\" data-cells=\"%zu\">All "
                "numbers clean: no cell (thread &#215; region) carries a data-quality flag."
                "</div>\n</section>\n", rep->cells);
        return;
    }
    fprintf(out, "<div class=\"box dirty\" data-flagged=\"%zu\" data-cells=\"%zu\"><strong>"
            "%zu of %zu cells (thread &#215; region) carry a data-quality flag.</strong> "
            "Values they touch are marked in every table and chart below.\n",
            rep->flagged_cells, rep->cells, rep->flagged_cells, rep->cells);
    fputs("<table id=\"flag-table\">\n<tr><th>flag</th><th>cells</th><th>where (regions, "
          "threads whose cell carries it)</th><th>meaning</th></tr>\n", out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (rep->flags[i].cells == 0)
            continue;
        fputs("<tr><td><span class=\"flag\">", out);
        pm_html_esc(out, rep->flags[i].name, 100, 1);
        fprintf(out, "</span></td><td class=\"n\" data-k=\"flag_cells\" data-v=\"%zu\">%zu</td>"
                "<td>", rep->flags[i].cells, rep->flags[i].cells);
        pm_html_flag_where(out, rep, i);
        fprintf(out, "</td><td>%s</td></tr>\n", pm_html_flag_meaning(&rep->flags[i]));
    }
    fputs("</table>\n</div>\n</section>\n", out);
}

/* -------------------------------------------------------- region table */

static void pm_html_num_u(FILE *out, const char *key, uint64_t v, const char *text)
{
    fprintf(out, "<td class=\"n\" data-k=\"%s\" data-v=\"%" PRIu64 "\">%s</td>", key, v, text);
}

/* A time cell of region s: ~ and yellow when extrapolated from sampled
 * visits, ! when some visiting threads have no time. */
static void pm_html_wall(FILE *out, const char *key, const struct pm_regstat *s, int has,
                         double v)
{
    char buf[48];
    int est = s->time_est > 0, bad = s->time_na > 0;

    if (!has || !s->has_wall) {
        fprintf(out, "<td class=\"n na\" data-k=\"%s\" data-v=\"\">%s</td>", key,
                s->has_wall ? "-" : "n/a");
        return;
    }
    pm_html_time(buf, sizeof buf, v);
    fprintf(out, "<td class=\"n%s%s\" data-k=\"%s\" data-v=\"%.17g\"", est ? " est" : "",
            bad ? " bad" : "", key, v);
    if (est || bad)
        fprintf(out, " title=\"%s%s\"", est ? "estimate: some visits were not timed (MPI polls "
                "after their warm-up); time = wall x visits / timed visits. " : "",
                bad ? "some visiting threads have no timed visit: their time is left out." : "");
    fprintf(out, ">%s%s%s</td>", est ? "~" : "", buf, bad ? "!" : "");
}

/* One event of one region: its total with the markers, the spread and the
 * share counted in the tooltip, the share also under the value when the
 * counters did not run all the time. */
static void pm_html_event_cell(FILE *out, const struct pm_evstat *s, size_t e, int is_time,
                               int partial)
{
    char val[48], a[48], b[48], c[48], share[32] = "";

    if (s->has_share)
        pm_html_pct(share, sizeof share, s->share);
    if (!s->has_total) {
        fprintf(out, "<td class=\"n na bad\" data-k=\"ev%zu\" data-v=\"\" title=\"no value: "
                "the counters never ran while enabled (NOT_COUNTED)\">n/a!</td>", e);
        return;
    }
    if (is_time)
        pm_html_time(val, sizeof val, s->total);
    else
        pm_html_count(val, sizeof val, s->total);
    fprintf(out, "<td class=\"n%s%s\" data-k=\"ev%zu\" data-v=\"%.17g\" data-est=\"%d\" "
            "data-untrusted=\"%d\"", s->estimate ? " est" : "", s->untrusted ? " bad" : "", e,
            s->total, s->estimate, s->untrusted);
    if (partial)
        fputs(" data-partial=\"1\"", out);
    if (s->has_share)
        fprintf(out, " data-share=\"%.17g\"", s->share);
    fputs(" title=\"", out);
    if (s->estimate)
        fputs("estimate: multiplexed counts scaled by enabled/running. ", out);
    if (s->untrusted)
        fputs("incomplete: some counts are missing (LOST_GENERATION or cells without a value); "
              "the total undercounts. ", out);
    if (s->has_spread) {
        if (is_time) {
            pm_html_time(a, sizeof a, s->min);
            pm_html_time(b, sizeof b, s->mean);
            pm_html_time(c, sizeof c, s->max);
        } else {
            pm_html_count(a, sizeof a, s->min);
            pm_html_count(b, sizeof b, s->mean);
            pm_html_count(c, sizeof c, s->max);
        }
        fprintf(out, "per thread: min %s, mean %s, max %s. ", a, b, c);
    }
    if (s->has_share)
        fprintf(out, "counted %s of the enabled time.", share);
    if (partial)
        fputs(" THROTTLED: counts of the visits before the throttle only; the later ones are "
              "in the enclosing region.", out);
    fprintf(out, "\">%s%s%s%s", s->estimate ? "~" : "", val, s->untrusted ? "!" : "",
            partial ? "*" : "");
    if (s->has_share && s->share < 0.9995)
        fprintf(out, "<small>%s counted</small>", share);
    fputs("</td>", out);
}

/* perfmark's estimated part in the region's CPU time (report_measure.c). */
static void pm_html_own(FILE *out, const struct pm_regstat *s)
{
    char buf[48], pct[32] = "";

    pm_html_time(buf, sizeof buf, s->own_cpu_ns);
    if (s->has_own_share)
        pm_html_pct(pct, sizeof pct, s->own_share);
    fprintf(out, "<td class=\"n\" data-k=\"own_cpu\" data-v=\"%.17g\" title=\"estimate of "
            "perfmark's own readings in the region's CPU time: (readings inside + counted visits) "
            "x read cost; in its wall time: %.0f ns\">%s", s->own_cpu_ns, s->own_wall_ns, buf);
    if (pct[0])
        fprintf(out, "<small>%s of cpu</small>", pct);
    fputs("</td>", out);
}

static void pm_html_region_flags(FILE *out, const struct pm_report *rep,
                                 const struct pm_regstat *s)
{
    fputs("<td>", out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (s->flag_cells[i] == 0)
            continue;
        fputs("<span class=\"flag\" data-flag=\"", out);
        pm_html_esc(out, rep->flags[i].name, 100, 1);
        fprintf(out, "\" data-v=\"%zu\" title=\"the cells of %zu thread%s carry it\">",
                s->flag_cells[i], s->flag_cells[i], s->flag_cells[i] == 1 ? "" : "s");
        pm_html_esc(out, rep->flags[i].name, 100, 1);
        fprintf(out, ":%zu</span>", s->flag_cells[i]);
        if (rep->flags[i].kind == PM_FK_THROTTLED && s->throttled)
            fprintf(out, s->throttled_min == s->throttled_max ? " from visit %llu" :
                    " from visit %llu-%llu", (unsigned long long)s->throttled_min,
                    (unsigned long long)s->throttled_max);
    }
    fputs("</td>", out);
}

static void pm_html_regions(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[48];

    fprintf(out, "<section id=\"regions\">\n<h2>Regions</h2>\n<p class=\"note\">%zu regions as "
            "a tree by call path; time is wall time, inclusive, summed over the threads; "
            "per-thread min/mean/max over the threads that visited. Event totals are summed "
            "over threads; hover for the per-thread spread. ~ and yellow = estimate "
            "(multiplexed), with the share of time counted; ! = incomplete; n/a = no value."
            "</p>\n", d->R);
    if (rep->ms.measuring)
        fputs("<p class=\"note\">A time marked ~ is an estimate: some visits were not timed "
              "(MPI polls after their warm-up: about one call in 32), time = wall x visits / "
              "timed visits. Timer only: no counter was read in these visits by design, their "
              "counts are in the enclosing region. Counts marked * are those of the visits "
              "before the throttle only (THROTTLED). perfmark est = perfmark&#39;s own readings "
              "in the region&#39;s CPU time, an estimate subtracted nowhere.</p>\n", out);
    fputs("<div class=\"wrap\"><table id=\"region-table\">\n<tr><th>region</th>"
          "<th>kind</th><th>visits</th><th>threads</th><th>time</th><th>min/thread</th>"
          "<th>mean/thread</th><th>max/thread</th>", out);
    for (size_t e = 0; e < d->E; e++) {
        fprintf(out, "<th data-e=\"%zu\">", e);
        pm_html_esc(out, d->events[e].name, 60, 1);
        fputs("</th>", out);
    }
    if (rep->ms.has_read_cost)
        fputs("<th>perfmark est</th>", out);
    fputs("<th>flags (threads)</th></tr>\n", out);
    /* the regions --region/--top chose (all, in tree order, without them) */
    for (size_t i = 0; i < rep->view.nrows; i++) {
        size_t r = rep->view.rows[i];
        const struct pm_regstat *s = &rep->reg[r];
        const struct pm_file_region *g = &d->regions[r];
        int flagged = 0;

        for (size_t k = 0; k < rep->nflags; k++)
            flagged |= s->flag_cells[k] > 0;
        fprintf(out, "<tr data-row=\"%zu\" data-index=\"%zu\"%s><td class=\"name\" "
                "style=\"padding-left:%dem\" title=\"", r, rep->pos[r],
                flagged ? " class=\"flagged\"" : "",
                1 + (g->depth < 12 ? g->depth : 12));
        pm_html_esc(out, g->path, PM_HTML_MAX_CHARS, 1);
        fputs("\">", out);
        pm_html_esc(out, g->name, PM_HTML_MAX_CHARS, 1);
        fputs("</td><td>", out);
        pm_html_esc(out, g->kind, 40, 0);
        fputs("</td>", out);
        pm_html_count(buf, sizeof buf, (double)s->visits);
        pm_html_num_u(out, "visits", s->visits, buf);
        snprintf(buf, sizeof buf, "%zu", s->nvisited);
        pm_html_num_u(out, "threads", s->nvisited, buf);
        if (s->time_est || !s->has_wall || s->time_na) {
            pm_html_wall(out, "wall_total", s, 1, (double)s->wall_total);
        } else {
            pm_html_time(buf, sizeof buf, (double)s->wall_total);
            pm_html_num_u(out, "wall_total", s->wall_total, buf);
        }
        pm_html_wall(out, "wall_min", s, s->nwall > 0, (double)s->wall_min);
        pm_html_wall(out, "wall_mean", s, s->nwall > 0, s->wall_mean);
        pm_html_wall(out, "wall_max", s, s->nwall > 0, (double)s->wall_max);
        for (size_t e = 0; e < d->E; e++) {
            if (s->timer_only)
                fprintf(out, "<td class=\"n na\" data-k=\"ev%zu\" data-v=\"\" data-timer-only="
                        "\"1\" title=\"no counter was read in these visits by design (MPI "
                        "polls, TIMER_ONLY): their counts are in the enclosing region\">timer "
                        "only</td>", e);
            else
                pm_html_event_cell(out, &s->ev[e], e, pm_html_event_is_time(&d->events[e]),
                                   s->throttled > 0);
        }
        if (rep->ms.has_read_cost)
            pm_html_own(out, s);
        pm_html_region_flags(out, rep, s);
        fputs("</tr>\n", out);
    }
    if (d->R == 0)
        fputs("<tr><td colspan=\"8\">no region was recorded</td></tr>\n", out);
    fputs("</table></div>\n", out);
    if (rep->view.filtered)
        fprintf(out, "<p class=\"note\">%zu of %zu regions, as chosen by --region/--top; the "
                "charts below show every region.</p>\n", rep->view.nrows, d->R);
    fputs("</section>\n", out);
}

/* ------------------------------------------------------- threads table */

static void pm_html_threads(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t shown = d->T < PM_HTML_THREADS ? d->T : PM_HTML_THREADS;
    char buf[48];

    fprintf(out, "<section id=\"threads\">\n<h2>Threads</h2>\n<p class=\"note\">%zu threads; "
            "totals from first sight until exit or write.%s</p>\n<div class=\"wrap\">"
            "<table id=\"thread-table\">\n<tr><th>rank</th><th>thread</th><th>tid</th>"
            "<th>host</th><th>cpu first&#8594;last</th><th>exited</th><th>time</th>", d->T,
            d->T > shown ? " The first rows only." : "");
    for (size_t e = 0; e < d->E; e++) {
        fputs("<th>", out);
        pm_html_esc(out, d->events[e].name, 60, 1);
        fputs("</th>", out);
    }
    fputs("</tr>\n", out);
    struct pm_thread_rows rows = {0};
    struct pm_totals tot = {0};

    for (size_t t = 0; t < shown; t++) {
        const struct pm_file_thread *th = pm_report_thread(rep, &rows, t);
        const struct pm_totals *tb = pm_report_totals(rep, &tot, t);

        if (!tb)
            break;

        fprintf(out, "<tr data-t=\"%zu\"><td class=\"n\">%d</td><td class=\"n\">%d</td>"
                "<td class=\"n\">%" PRId64 "</td><td>", t, (int)th->rank, (int)th->thread,
                th->tid);
        pm_html_esc(out, th->host, 200, 0);
        pm_html_time(buf, sizeof buf, (double)tb->wall_ns[t - tb->t0]);
        fprintf(out, "</td><td class=\"n\">%d&#8594;%d</td><td>%s</td>", (int)th->cpu_first,
                (int)th->cpu_last, th->exited ? "yes" : "no");
        pm_html_num_u(out, "wall", tb->wall_ns[t - tb->t0], buf);
        for (size_t e = 0; e < d->E; e++) {
            struct pm_evstat s;

            pm_thread_evstat(d, tb, t, e, &s);
            pm_html_event_cell(out, &s, e, pm_html_event_is_time(&d->events[e]), 0);
        }
        fputs("</tr>\n", out);
    }
    pm_report_threads_done(&rows);
    pm_report_totals_done(&tot);
    fputs("</table></div>\n</section>\n", out);
}

/* ------------------------------------------------------------ messages */

static void pm_html_messages(FILE *out, const struct pm_file *d)
{
    if (d->M == 0)
        return;
    fprintf(out, "<section id=\"messages\">\n<h2>Messages</h2>\n<details%s><summary>%zu "
            "message%s from the run</summary>\n", d->M <= 5 ? " open" : "", d->M,
            d->M == 1 ? "" : "s");
    for (size_t i = 0; i < d->M; i++) {
        fputs("<pre class=\"msg\">", out);
        pm_html_esc(out, d->messages[i], PM_HTML_MAX_CHARS, 0);
        fputs("</pre>\n", out);
    }
    fputs("</details>\n</section>\n", out);
}

static void pm_html_nav(FILE *out, const struct pm_report *rep)
{
    fputs("<nav><a href=\"#flags\">data quality</a><a href=\"#regions\">regions</a>", out);
    if (rep->td.on)
        fputs("<a href=\"#topdown\">TopDown</a>", out);
    if (rep->d->R > 0)
        fputs("<a href=\"#heatmap\">time heat map</a>", out);
    if (rep->xr.nmpif > 0)
        fputs("<a href=\"#mpi\">MPI</a>", out);
    if (rep->d->R > 0)
        fputs("<a href=\"#thread-bars\">threads per region</a>", out);
    if (rep->profile)
        fputs("<a href=\"#samples\">samples</a>", out);
    if (rep->flame)
        fputs("<a href=\"#flames\">flame graphs</a>", out);
    if (rep->series)
        fputs("<a href=\"#series\">over time</a>", out);
    if (rep->node)
        fputs("<a href=\"#node\">node CPUs</a>", out);
    fputs("<a href=\"#threads\">threads</a>", out);
    if (rep->d->M > 0)
        fputs("<a href=\"#messages\">messages</a>", out);
    fputs("</nav>\n", out);
}

void pm_render_html(FILE *out, const struct pm_report *rep)
{
    pm_html_head(out, rep);
    pm_html_flags(out, rep);
    pm_html_nav(out, rep);
    pm_html_regions(out, rep);
    pm_svg_topdown(out, rep);
    pm_svg_heatmap(out, rep);
    pm_svg_mpi(out, rep);
    pm_svg_thread_bars(out, rep);
    pm_svg_profile(out, rep);
    pm_svg_flames(out, rep);
    pm_svg_series(out, rep);
    pm_svg_node(out, rep);
    pm_html_threads(out, rep);
    pm_html_messages(out, rep->d);
    fputs("</body>\n</html>\n", out);
}
