#define _GNU_SOURCE
/*
 * profile_svg.c — the sampled profile on the HTML page: per sampled event,
 * the whole run and the regions with the most samples, each a bar chart of
 * its top functions (bar = share of the region's samples; the estimate,
 * marked ~, and the spread across ranks in the tooltip and beside the bar)
 * and a table of its top source lines. Estimates are never shown bare.
 */
#include "render/html/profile_svg.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_PS_REGIONS 8    /* regions charted per event, most samples first */
#define PM_PS_LABEL_W 300
#define PM_PS_BAR_W 420
#define PM_PS_ROW_H 18
#define PM_PS_LABEL_CHARS 42

static void pm_ps_estimate(char *buf, size_t len, const struct pm_prof_event *ev, double v)
{
    char num[40];
    if (strcmp(ev->unit, "ns") == 0)
        pm_html_time(num, sizeof num, v);
    else
        pm_html_count(num, sizeof num, v);
    snprintf(buf, len, "~%s", num);
}

static void pm_ps_chart(FILE *out, const struct pm_profile *p, const struct pm_prof_cell *c,
                        const struct pm_prof_event *ev, const char *title, size_t id)
{
    int h = 34 + (int)c->nfn * PM_PS_ROW_H + 8, w = PM_PS_LABEL_W + PM_PS_BAR_W + 330, y = 28;
    char est[48], pct[32];
    pm_ps_estimate(est, sizeof est, ev, c->estimate);
    fprintf(out, "<svg id=\"samples-%zu\" class=\"chart\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"Functions of a region by "
            "samples\">\n<title>Functions of a region by samples</title>\n<text class=\"ttl\" "
            "x=\"8\" y=\"16\">", id, w, h, w, h);
    pm_html_esc(out, title, 120, 1);
    fprintf(out, ": %" PRIu64 " samples, %s (±%.0f%%)", c->samples, est,
            100.0 * pm_prof_rel_error(c->samples));
    if (c->lost || c->throttled)
        fprintf(out, " — SAMPLES_LOST: %" PRIu64 " lost, throttled %" PRIu64 "×", c->lost,
                c->throttled);
    fputs("</text>\n", out);
    for (size_t i = 0; i < c->nfn; i++, y += PM_PS_ROW_H) {
        const struct pm_prof_item *it = &c->fn[i];
        const struct pm_prof_fn *f = &p->fn[it->id];
        double bw = it->share * PM_PS_BAR_W;
        pm_html_pct(pct, sizeof pct, it->share);
        pm_ps_estimate(est, sizeof est, ev, it->estimate);
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"><title>", PM_PS_LABEL_W - 8,
                y + 12);
        pm_html_esc(out, f->label, PM_HTML_MAX_CHARS, 1);
        fputs(" in ", out);
        pm_html_esc(out, f->object, 200, 1);
        fputs("</title>", out);
        pm_html_esc(out, f->label, PM_PS_LABEL_CHARS, 1);
        fprintf(out, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"13\" "
                "fill=\"%s\"><title>", PM_PS_LABEL_W, y + 2, bw, f->named ? "#26a69a" : "#90a4ae");
        pm_html_esc(out, f->label, PM_HTML_MAX_CHARS, 1);
        fprintf(out, ": %" PRIu64 " samples, %s of the region, %s", it->samples, pct, est);
        if (p->has_ranks && p->nranks > 1)
            fprintf(out, "; per rank min %.0f, mean %.1f, max %.0f (rank %d)", it->rank_min,
                    it->rank_mean, it->rank_max, (int)it->rank_max_at);
        fprintf(out, "</title></rect>\n<text x=\"%.2f\" y=\"%d\">%s · %" PRIu64 " · %s",
                PM_PS_LABEL_W + bw + 4, y + 12, pct, it->samples, est);
        if (p->has_ranks && p->nranks > 1 && it->rank_mean > 0)
            fprintf(out, " · max/mean %.2f", it->rank_max / it->rank_mean);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
}

static void pm_ps_lines(FILE *out, const struct pm_profile *p, const struct pm_prof_cell *c,
                        const struct pm_prof_event *ev)
{
    char est[48], pct[32];
    if (!c->nline)
        return;
    fputs("<table class=\"lines\"><tr><th>source line</th><th>function</th><th>samples</th>"
          "<th>share</th><th>estimate</th></tr>\n", out);
    for (size_t i = 0; i < c->nline; i++) {
        const struct pm_prof_item *it = &c->line[i];
        const struct pm_prof_line *l = &p->line[it->id];
        pm_html_pct(pct, sizeof pct, it->share);
        pm_ps_estimate(est, sizeof est, ev, it->estimate);
        fputs("<tr><td class=\"name\">", out);
        pm_html_esc(out, strcmp(l->label, "?") ? l->label : "(no line information)", 400, 1);
        fputs("</td><td class=\"name\">", out);
        pm_html_esc(out, p->fn[l->fn].label, 400, 1);
        fprintf(out, "</td><td>%" PRIu64 "</td><td>%s</td><td class=\"est\">%s</td></tr>\n",
                it->samples, pct, est);
    }
    fputs("</table>\n", out);
}

static int pm_ps_cmp_samples(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    if (x != y)
        return x < y ? 1 : -1;
    return ((const uint64_t *)a)[1] < ((const uint64_t *)b)[1] ? -1 : 1;
}

void pm_svg_profile(FILE *out, const struct pm_report *rep)
{
    const struct pm_profile *p = rep->profile;
    if (!p)
        return;
    const struct pm_file *d = rep->d;
    fputs("<section id=\"samples\">\n<h2>Samples</h2>\n<p class=\"note\">Where the time (or "
          "the event) went inside each region: its samples by function and source line. A "
          "region holds its own samples and those of the regions inside it. Every count here "
          "is an estimate (~): samples × the sampling period, with its 95% error "
          "±2/√n.</p>\n", out);
    if (d->sample_counting)
        fputs("<p class=\"note\">Counting by sampling (<code>perfmark run --count sampled</code>): "
              "the markers read no counters; every count of this run is an estimate from these "
              "samples.</p>\n", out);
    uint64_t (*order)[2] = malloc((p->R + 1) * sizeof *order);
    size_t chart = 0;
    for (size_t e = 0; order && e < p->S; e++) {
        const struct pm_prof_event *ev = &p->ev[e];
        fputs("<h3>", out);
        pm_html_esc(out, ev->requested, 200, 1);
        fputs("</h3>\n", out);
        const struct pm_prof_cell *run = pm_prof_cell(p, PM_PROF_RUN, e);
        pm_ps_chart(out, p, run, ev, "the whole run", chart++);
        pm_ps_lines(out, p, run, ev);
        size_t n = 0;
        for (size_t r = 0; r < p->R; r++) {
            uint64_t s = pm_prof_cell(p, r, e)->samples;
            if (s) {
                order[n][0] = s;
                order[n][1] = r;
                n++;
            }
        }
        qsort_r(order, n, sizeof *order, pm_ps_cmp_samples, NULL);
        for (size_t k = 0; k < n && k < PM_PS_REGIONS; k++) {
            size_t r = (size_t)order[k][1];
            const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
            pm_ps_chart(out, p, c, ev, d->regions[r].path[0] ? d->regions[r].path : "\"\"",
                        chart++);
            pm_ps_lines(out, p, c, ev);
        }
        if (n > PM_PS_REGIONS)
            fprintf(out, "<p class=\"note\">%zu more regions have samples: the JSON report "
                    "lists them all.</p>\n", n - PM_PS_REGIONS);
    }
    free(order);
    for (size_t i = 0; i < p->nnotes; i++) {
        fputs("<p class=\"note\">", out);
        pm_html_esc(out, p->notes[i], 1000, 1);
        fputs("</p>\n", out);
    }
    fputs("</section>\n", out);
}
