/*
 * series_svg.c — counts over time on the HTML page: per event a timeline
 * of the rate (count per second of each interval), one line per rank for
 * up to PM_SV_LINES ranks, else the band between the ranks' min and max
 * with the mean; under the lines, the region the first rank's first thread
 * was in, shaded, with a legend. Estimates (multiplexed bins) are marked.
 */
#include "render/html/series_svg.h"
#include "render/common/render_common.h"
#include "model/series_topdown.h"

#include <stdio.h>
#include <string.h>

#define PM_SV_W 860
#define PM_SV_H 180
#define PM_SV_LEFT 70
#define PM_SV_TOP 24
#define PM_SV_LINES 8
#define PM_SV_EVENTS 6
#define PM_SV_SHADES 8

static const char *const pm_sv_colors[PM_SV_LINES] = {"#1e88e5", "#e53935", "#43a047", "#fb8c00",
                                                       "#8e24aa", "#00897b", "#6d4c41", "#546e7a"};
static const char *const pm_sv_shades[PM_SV_SHADES] = {"#e3f2fd", "#fff3e0", "#e8f5e9", "#fce4ec",
                                                        "#ede7f6", "#e0f7fa", "#f9fbe7", "#efebe9"};

static double pm_sv_x(const struct pm_series_view *s, double b)
{
    return PM_SV_LEFT + b / (double)(s->nbins ? s->nbins : 1) * (PM_SV_W - PM_SV_LEFT - 10);
}

static double pm_sv_y(double v, double max)
{
    return PM_SV_TOP + PM_SV_H - (max > 0 ? v / max : 0) * PM_SV_H;
}

/* The regions shaded: up to PM_SV_SHADES distinct ones of the first rank,
 * in order of first appearance; the rest unshaded. */
static size_t pm_sv_shade_of(const int32_t *seen, size_t nseen, int32_t r)
{
    for (size_t i = 0; i < nseen; i++)
        if (seen[i] == r)
            return i;
    return SIZE_MAX;
}

static void pm_sv_chart(FILE *out, const struct pm_report *rep, size_t e, const int32_t *seen,
                        size_t nseen)
{
    const struct pm_series_view *s = rep->series;
    const struct pm_file *d = rep->d;
    double secs = (double)s->bin_ns / 1e9, max = 0;
    int lines = s->nshown <= PM_SV_LINES && rep->xr.nranks <= PM_SV_LINES;
    for (size_t b = 0; b < s->nbins; b++) {
        double v = lines ? 0 : s->max[b * s->E + e];
        for (size_t k = 0; lines && k < s->nshown; k++)
            if (s->rank_value[(k * s->nbins + b) * s->E + e] > v)
                v = s->rank_value[(k * s->nbins + b) * s->E + e];
        if (v / secs > max)
            max = v / secs;
    }
    int h = PM_SV_TOP + PM_SV_H + 40;
    fprintf(out, "<svg id=\"series-%zu\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
            "%d %d\" role=\"img\" aria-label=\"An event over time\">\n<title>An event over time"
            "</title>\n<text class=\"ttl\" x=\"8\" y=\"16\">", e, PM_SV_W, h, PM_SV_W, h);
    pm_html_esc(out, d->events[e].name, 100, 1);
    fprintf(out, " per second, %s</text>\n", lines ? "one line per rank"
                                                  : "the ranks' min–max band and their mean");
    /* the regions under the lines */
    const int32_t *region = s->nshown ? s->rank_region : NULL;
    for (size_t b = 0; region && b < s->nbins; b++) {
        size_t k = pm_sv_shade_of(seen, nseen, region[b]);
        if (k == SIZE_MAX)
            continue;
        fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
                "<title>", pm_sv_x(s, (double)b), PM_SV_TOP, pm_sv_x(s, (double)b + 1) -
                pm_sv_x(s, (double)b), PM_SV_H, pm_sv_shades[k]);
        pm_html_esc(out, d->regions[region[b]].path, 300, 1);
        fputs("</title></rect>\n", out);
    }
    /* axes */
    char top[48];
    if (pm_file_event_is_time(&d->events[e]))
        pm_html_time(top, sizeof top, max);
    else
        pm_html_count(top, sizeof top, max);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n<text x=\"%d\" "
            "y=\"%d\" text-anchor=\"end\" font-size=\"11\">%s/s</text>\n<text x=\"%d\" y=\"%d\" "
            "text-anchor=\"end\" font-size=\"11\">0</text>\n<text x=\"%d\" y=\"%d\" "
            "text-anchor=\"end\" font-size=\"11\">%.3g s</text>\n",
            PM_SV_LEFT, PM_SV_TOP + PM_SV_H, PM_SV_W - 10, PM_SV_TOP + PM_SV_H, PM_SV_LEFT - 4,
            PM_SV_TOP + 10, top, PM_SV_LEFT - 4, PM_SV_TOP + PM_SV_H, PM_SV_W - 10,
            PM_SV_TOP + PM_SV_H + 14, pm_series_bin_s(s, s->nbins));
    if (lines) {
        for (size_t k = 0; k < s->nshown; k++) {
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                    pm_sv_colors[k % PM_SV_LINES]);
            for (size_t b = 0; b < s->nbins; b++)
                fprintf(out, "%.1f,%.1f ", pm_sv_x(s, (double)b + 0.5),
                        pm_sv_y(s->rank_value[(k * s->nbins + b) * s->E + e] / secs, max));
            fprintf(out, "\"><title>rank %d</title></polyline>\n", (int)s->shown_rank[k]);
        }
    } else {
        fputs("<polygon fill=\"#90caf9\" fill-opacity=\"0.6\" points=\"", out);
        for (size_t b = 0; b < s->nbins; b++)
            fprintf(out, "%.1f,%.1f ", pm_sv_x(s, (double)b + 0.5),
                    pm_sv_y(s->max[b * s->E + e] / secs, max));
        for (size_t b = s->nbins; b-- > 0;)
            fprintf(out, "%.1f,%.1f ", pm_sv_x(s, (double)b + 0.5),
                    pm_sv_y(s->min[b * s->E + e] / secs, max));
        fputs("\"><title>min to max over the ranks</title></polygon>\n<polyline fill=\"none\" "
              "stroke=\"#0d47a1\" stroke-width=\"1.5\" points=\"", out);
        for (size_t b = 0; b < s->nbins; b++)
            fprintf(out, "%.1f,%.1f ", pm_sv_x(s, (double)b + 0.5),
                    pm_sv_y(s->total[b * s->E + e] / (double)rep->xr.nranks / secs, max));
        fputs("\"><title>mean over the ranks</title></polyline>\n", out);
    }
    /* multiplexed bins: a mark under the axis */
    for (size_t b = 0; b < s->nbins; b++)
        if (s->estimate[b * s->E + e])
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">~"
                    "<title>an estimate (multiplexed)</title></text>\n",
                    pm_sv_x(s, (double)b + 0.5), PM_SV_TOP + PM_SV_H + 26);
    fputs("</svg>\n", out);
}

/* TopDown over time, the job's: level 1 stacked to 100% per bin (bins
 * without slots left blank). */
static void pm_sv_topdown(FILE *out, const struct pm_report *rep)
{
    static const char *const color[PM_TD_N_SMT_CONTENTION + 1] = {"#43a047", "#e53935",
                                                                  "#fb8c00", "#1e88e5",
                                                                  "#8e24aa"};
    const struct pm_series_view *s = rep->series;
    int h = PM_SV_TOP + PM_SV_H + 40;
    fprintf(out, "<svg id=\"series-topdown\" class=\"chart\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"TopDown over time\">\n<title>"
            "TopDown over time</title>\n<text class=\"ttl\" x=\"8\" y=\"16\">TopDown level 1 "
            "of the job, per interval:", PM_SV_W, h, PM_SV_W, h);
    for (int n = 0; n <= PM_TD_N_SMT_CONTENTION; n++)
        if (pm_td_node_shown(&rep->td, (enum pm_td_node)n))
            fprintf(out, " <tspan fill=\"%s\">■ %s</tspan>", color[n],
                    pm_td_node_name((enum pm_td_node)n));
    fputs("</text>\n", out);
    for (size_t b = 0; b < s->nbins; b++) {
        struct pm_td_breakdown br;
        if (!pm_series_td_at(&rep->td, s, s->total, b, b + 1, &br))
            continue;
        double y = PM_SV_TOP, x = pm_sv_x(s, (double)b), w = pm_sv_x(s, (double)b + 1) - x;
        for (int n = 0; n <= PM_TD_N_SMT_CONTENTION; n++) {
            if (!pm_td_node_shown(&rep->td, (enum pm_td_node)n))
                continue;
            double hh = br.ratio[n] * PM_SV_H;
            char pct[32];
            pm_html_pct(pct, sizeof pct, br.ratio[n]);
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
                    "<title>%.3f s: %s %s</title></rect>\n", x, y, w, hh, color[n],
                    pm_series_bin_s(s, b + 1), pm_td_node_name((enum pm_td_node)n), pct);
            y += hh;
        }
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">100%%</text>\n"
            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%.3g s</text>\n"
            "</svg>\n", PM_SV_LEFT - 4, PM_SV_TOP + 10, PM_SV_W - 10, PM_SV_TOP + PM_SV_H + 14,
            pm_series_bin_s(s, s->nbins));
}

void pm_svg_series(FILE *out, const struct pm_report *rep)
{
    const struct pm_series_view *s = rep->series;
    if (!s)
        return;
    const struct pm_file *d = rep->d;
    char bin[32];
    pm_html_time(bin, sizeof bin, (double)s->bin_ns);
    fprintf(out, "<section id=\"series\">\n<h2>Over time</h2>\n<p class=\"note\">Each event's "
            "count per second in intervals of %s (perfmark run --interval), summed over each "
            "rank's threads; shaded: the region the first rank's first thread was in. Lines "
            "that part show imbalance between ranks.</p>\n", bin);
    int32_t seen[PM_SV_SHADES];
    size_t nseen = 0;
    for (size_t b = 0; s->nshown && b < s->nbins && nseen < PM_SV_SHADES; b++) {
        int32_t r = s->rank_region[b];
        if (r >= 0 && pm_sv_shade_of(seen, nseen, r) == SIZE_MAX)
            seen[nseen++] = r;
    }
    if (nseen) {
        fputs("<p class=\"note\">", out);
        for (size_t k = 0; k < nseen; k++) {
            fprintf(out, "<span style=\"background:%s;padding:0 .4em\">", pm_sv_shades[k]);
            pm_html_esc(out, d->regions[seen[k]].path, 200, 1);
            fputs("</span> ", out);
        }
        fputs("</p>\n", out);
    }
    for (size_t e = 0; e < s->E && e < PM_SV_EVENTS; e++)
        pm_sv_chart(out, rep, e, seen, nseen);
    if (pm_series_td_on(&rep->td, s))
        pm_sv_topdown(out, rep);
    fputs("</section>\n", out);
}
