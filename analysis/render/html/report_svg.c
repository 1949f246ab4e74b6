/*
 * report_svg.c — the charts of the HTML report as inline SVG: TopDown
 * stacked bars per region, a rank x region heat map of time, MPI time per
 * function and per rank, per-thread bars of the heaviest regions. Each mark
 * carries its value in data-v and a <title> tooltip; names are user data and
 * go through pm_html_esc like everywhere else on the page.
 */
#include "render/html/report_svg.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_SVG_LABEL_W 270   /* the name column */
#define PM_SVG_LABEL_CHARS 38
#define PM_SVG_BAR_W 600
#define PM_SVG_ROW_H 18
#define PM_SVG_MAX_ROWS 60   /* regions in a chart */
#define PM_SVG_MAX_COLS 1024 /* heat map columns */
#define PM_SVG_MAX_FUNCS 20
#define PM_SVG_MAX_RANKS 256 /* MPI share bars */
#define PM_SVG_MAX_THREADS 48
#define PM_SVG_HEAVY 4 /* regions with per-thread bars */

/* the charts draw from what the cells' pass kept (report_stream.c) */
_Static_assert(PM_SVG_MAX_THREADS <= PM_TOP_THREADS, "per-thread bars need the threads kept");
_Static_assert(PM_SVG_MAX_COLS <= PM_HEAT_COLS, "heat map columns need the sums kept");

/* Whether per-rank views compare ranks (several distinct ranks in the file)
 * or, with one rank, its threads. */
static int pm_html_by_rank(const struct pm_report *rep)
{
    return rep->xr.nranks > 1;
}

static void pm_svg_open(FILE *out, const char *id, int w, int h, const char *label)
{
    fprintf(out, "<svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "role=\"img\" aria-label=\"%s\">\n<title>%s</title>\n", id, w, h, w, h, label, label);
}

/* A text label of user data, cut to fit, the whole of it in a tooltip. */
static void pm_svg_name(FILE *out, int x, int y, const char *anchor, const char *name)
{
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\"><title>", x, y, anchor);
    pm_html_esc(out, name, PM_HTML_MAX_CHARS, 1);
    fputs("</title>", out);
    pm_html_esc(out, name, PM_SVG_LABEL_CHARS, 1);
    fputs("</text>\n", out);
}

/* Up to `max` of the n indices idx[] with the highest key, kept in their
 * order: the rows a chart has room for. Returns how many remain. */
static size_t pm_svg_keep_highest(size_t *idx, size_t n, const double *key, size_t max)
{
    size_t kept = 0;
    double *sorted;
    double cut;
    size_t at_cut = 0, above = 0;

    if (n <= max)
        return n;
    sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return max; /* out of memory: the first ones */
    for (size_t i = 0; i < n; i++)
        sorted[i] = key[idx[i]];
    /* the max-th largest by partial selection: n is small (regions, threads) */
    for (size_t i = 0; i < max; i++)
        for (size_t j = i + 1; j < n; j++)
            if (sorted[j] > sorted[i]) {
                double t = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = t;
            }
    cut = sorted[max - 1];
    for (size_t i = 0; i < max; i++)
        above += sorted[i] > cut;
    free(sorted);
    for (size_t i = 0; i < n; i++) {
        double k = key[idx[i]];

        if (k > cut || (k == cut && at_cut++ < max - above))
            idx[kept++] = idx[i];
    }
    return kept;
}

/* --------------------------------------------------------------- TopDown */

static const struct {
    enum pm_td_node node;
    const char *label;
    const char *color;
} pm_svg_td1[] = {
    {PM_TD_N_RETIRING, "retiring", "#43a047"},
    {PM_TD_N_BAD_SPEC, "bad speculation", "#e53935"},
    {PM_TD_N_FE_BOUND, "frontend bound", "#fbc02d"},
    {PM_TD_N_BE_BOUND, "backend bound", "#1e88e5"},
    {PM_TD_N_SMT_CONTENTION, "SMT contention", "#8e24aa"},
}, pm_svg_td2[] = {
    {PM_TD_N_HEAVY_OPS, "heavy ops", "#2e7d32"},
    {PM_TD_N_LIGHT_OPS, "light ops", "#81c784"},
    {PM_TD_N_BR_MISPREDICT, "branch mispredicts", "#c62828"},
    {PM_TD_N_MACHINE_CLEARS, "machine clears", "#ef9a9a"},
    {PM_TD_N_FETCH_LAT, "fetch latency", "#f9a825"},
    {PM_TD_N_FETCH_BW, "fetch bandwidth", "#fff176"},
    {PM_TD_N_MEM_BOUND, "memory bound", "#1565c0"},
    {PM_TD_N_CORE_BOUND, "core bound", "#90caf9"},
};

#define PM_SVG_TD1 (sizeof pm_svg_td1 / sizeof *pm_svg_td1)
#define PM_SVG_TD2 (sizeof pm_svg_td2 / sizeof *pm_svg_td2)

/* Why a region has no ratios, as the text report says it. */
static const char *pm_svg_td_why(const struct pm_tdstat *s)
{
    size_t out = pm_td_left_out(s);

    if (s->used == 0 && out > 0 && out == s->left_out[PM_TD_OUT_SHORT])
        return "SHORT: every cell had too few slots per read window";
    if (out > 0)
        return "n/a: every cell was left out (NOT_COUNTED, LOST_GENERATION or SHORT)";
    return "-: nothing counted";
}

/* One stacked bar: the nodes of `seg` that the file shows. */
static void pm_svg_td_bar(FILE *out, const struct pm_report *rep, const struct pm_tdstat *s,
                          int y, int h, int level2, const char *name)
{
    size_t n = level2 ? PM_SVG_TD2 : PM_SVG_TD1;
    double x = PM_SVG_LABEL_W;
    char pct[32];

    for (size_t i = 0; i < n; i++) {
        enum pm_td_node node = level2 ? pm_svg_td2[i].node : pm_svg_td1[i].node;
        const char *label = level2 ? pm_svg_td2[i].label : pm_svg_td1[i].label;
        const char *color = level2 ? pm_svg_td2[i].color : pm_svg_td1[i].color;
        double w = s->br.ratio[node] * PM_SVG_BAR_W;

        if (!pm_td_node_shown(&rep->td, node) || w <= 0)
            continue;
        snprintf(pct, sizeof pct, "%.1f%%", s->br.ratio[node] * 100.0);
        fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
                "data-node=\"%s\" data-v=\"%.17g\"><title>", x, y, w, h, color,
                pm_td_node_name(node), s->br.ratio[node]);
        pm_html_esc(out, name, 200, 1);
        fprintf(out, ": %s %s%s of the pipeline slots</title></rect>\n", label, pct,
                s->estimate ? " (estimate)" : "");
        if (w >= 38 && !level2)
            fprintf(out, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" fill=\"#fff\" "
                    "pointer-events=\"none\">%s</text>\n", x + w / 2, y + h - 4, pct);
        x += w;
    }
}

static void pm_svg_td_row(FILE *out, const struct pm_report *rep, const struct pm_tdstat *s,
                          const char *name, int y)
{
    pm_svg_name(out, PM_SVG_LABEL_W - 8, y + 13, "end", name);
    if (!s->has_ratios) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#888\">%s</text>\n", PM_SVG_LABEL_W + 4,
                y + 13, pm_svg_td_why(s));
        return;
    }
    pm_svg_td_bar(out, rep, s, y, 16, 0, name);
    if (rep->td.levels >= 2)
        pm_svg_td_bar(out, rep, s, y + 18, 9, 1, name);
    if (s->estimate || pm_td_left_out(s)) {
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#b26a00\">%s",
                PM_SVG_LABEL_W + PM_SVG_BAR_W + 6, y + 13, s->estimate ? "~ estimate" : "");
        if (pm_td_left_out(s))
            fprintf(out, "%s%zu cell%s left out", s->estimate ? ", " : "", pm_td_left_out(s),
                    pm_td_left_out(s) == 1 ? "" : "s");
        fputs("</text>\n", out);
    }
}

static void pm_svg_td_legend(FILE *out, const struct pm_report *rep, int y)
{
    int x = PM_SVG_LABEL_W;

    for (size_t i = 0; i < PM_SVG_TD1; i++) {
        if (!pm_td_node_shown(&rep->td, pm_svg_td1[i].node))
            continue;
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\">%s</text>\n", x, y, pm_svg_td1[i].color, x + 16, y + 10,
                pm_svg_td1[i].label);
        x += 30 + 7 * (int)strlen(pm_svg_td1[i].label);
    }
    if (rep->td.levels < 2)
        return;
    x = PM_SVG_LABEL_W;
    for (size_t i = 0; i < PM_SVG_TD2; i++) {
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n", x, y + 18,
                pm_svg_td2[i].color, x + 13, y + 27, pm_svg_td2[i].label);
        x += 20 + 6 * (int)strlen(pm_svg_td2[i].label);
    }
}

/* The numbers behind the bars, for reading them exactly. */
static void pm_svg_td_table(FILE *out, const struct pm_report *rep, const size_t *rows, size_t n)
{
    const struct pm_file *d = rep->d;

    fputs("<details><summary>TopDown numbers</summary><div class=\"wrap\">"
          "<table id=\"topdown-table\">\n<tr><th>region</th><th>slots</th>", out);
    for (int k = 0; k < PM_TD_NNODES; k++)
        if (pm_td_node_shown(&rep->td, (enum pm_td_node)k))
            fprintf(out, "<th>%s</th>", pm_td_node_name((enum pm_td_node)k));
    fputs("<th>cells used</th><th>left out</th></tr>\n", out);
    for (size_t i = 0; i <= n; i++) {
        const struct pm_tdstat *s = i < n ? &rep->td.reg[rows[i]] : &rep->td.run;

        if (i < n) {
            fprintf(out, "<tr data-row=\"%zu\"><td class=\"name\">", rows[i]);
            pm_html_esc(out, d->regions[rows[i]].path, PM_HTML_MAX_CHARS, 1);
        } else {
            fputs("<tr data-row=\"run\"><td class=\"name\">(whole run: thread totals)", out);
        }
        fprintf(out, "</td><td class=\"n%s\" data-k=\"slots\" data-v=\"%" PRIu64 "\">%s%" PRIu64
                "</td>", s->estimate ? " est" : "", s->slots.slots, s->estimate ? "~" : "",
                s->slots.slots);
        for (int k = 0; k < PM_TD_NNODES; k++) {
            if (!pm_td_node_shown(&rep->td, (enum pm_td_node)k))
                continue;
            if (s->has_ratios)
                fprintf(out, "<td class=\"n\" data-k=\"%s\" data-v=\"%.17g\">%.1f%%</td>",
                        pm_td_node_name((enum pm_td_node)k), s->br.ratio[k], s->br.ratio[k] * 100);
            else
                fprintf(out, "<td class=\"n na\" data-k=\"%s\" data-v=\"\">-</td>",
                        pm_td_node_name((enum pm_td_node)k));
        }
        fprintf(out, "<td class=\"n\" data-k=\"used\" data-v=\"%zu\">%zu</td><td class=\"n\" "
                "data-k=\"left_out\" data-v=\"%zu\">%zu</td></tr>\n", s->used, s->used,
                pm_td_left_out(s), pm_td_left_out(s));
    }
    fputs("</table></div></details>\n", out);
}

void pm_svg_topdown(FILE *out, const struct pm_report *rep)
{
    const struct pm_tdreport *td = &rep->td;
    const struct pm_file *d = rep->d;
    size_t *rows, n = 0;
    int rowh, h, y;

    if (!td->on)
        return;
    fputs("<section id=\"topdown\">\n<h2>TopDown</h2>\n<p class=\"note\">", out);
    fprintf(out, "Method %s, level %s, CPU model ", td->method_name ? td->method_name : "?",
            td->levels >= 2 ? "1-2" : "1");
    pm_html_esc(out, d->cpu_model[0] ? d->cpu_model : "?", 100, 0);
    fputs(". Share of the pipeline slots per region: each ratio is the category's slots over "
          "all level-1 slots, both summed over the region's cells (threads) first, never a "
          "mean of percentages. Cells flagged NOT_COUNTED, LOST_GENERATION or SHORT are left "
          "out and counted.</p>\n", out);
    if (td->problem[0]) {
        fputs("<div class=\"box dirty\">No breakdown: ", out);
        pm_html_esc(out, td->problem, PM_HTML_MAX_CHARS, 0);
        fputs("</div>\n</section>\n", out);
        return;
    }
    if (td->note[0]) {
        fputs("<p class=\"note\">", out);
        pm_html_esc(out, td->note, PM_HTML_MAX_CHARS, 0);
        fputs("</p>\n", out);
    }
    rows = malloc((d->R ? d->R : 1) * sizeof *rows);
    if (!rows) {
        fputs("</section>\n", out);
        return;
    }
    for (size_t i = 0; i < d->R && n < PM_SVG_MAX_ROWS; i++)
        rows[n++] = rep->order[i];
    rowh = td->levels >= 2 ? 32 : 22;
    h = 30 + (int)(n + 1) * rowh + (td->levels >= 2 ? 80 : 60);
    pm_svg_open(out, "topdown-chart", PM_SVG_LABEL_W + PM_SVG_BAR_W + 160, h,
                "TopDown: share of pipeline slots per region");
    fprintf(out, "<text class=\"ttl\" x=\"%d\" y=\"16\">TopDown: share of the pipeline slots "
            "per region%s</text>\n", PM_SVG_LABEL_W, td->levels >= 2 ?
            " (thin bar: level 2)" : "");
    y = 26;
    pm_svg_td_row(out, rep, &td->run, "(whole run: thread totals)", y);
    y += rowh;
    for (size_t i = 0; i < n; i++, y += rowh)
        pm_svg_td_row(out, rep, &td->reg[rows[i]], d->regions[rows[i]].path, y);
    /* the axis: 0 to 100 % of the slots */
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n",
            PM_SVG_LABEL_W, y + 2, PM_SVG_LABEL_W + PM_SVG_BAR_W, y + 2);
    for (int p = 0; p <= 100; p += 25)
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d%%"
                "</text>\n", PM_SVG_LABEL_W + PM_SVG_BAR_W * p / 100, y + 14, p);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">share of "
            "pipeline slots</text>\n", PM_SVG_LABEL_W + PM_SVG_BAR_W / 2, y + 26);
    pm_svg_td_legend(out, rep, y + 32);
    fputs("</svg>\n", out);
    if (d->R > n)
        fprintf(out, "<p class=\"note\">The first %zu of %zu regions in tree order.</p>\n", n,
                d->R);
    pm_svg_td_table(out, rep, rows, n);
    free(rows);
    fputs("</section>\n", out);
}

/* -------------------------------------------------------------- heat map */

/* Light to dark blue by the fraction f of the row's maximum. */
static void pm_svg_heat_color(char *buf, size_t len, double f)
{
    static const int lo[3] = {239, 243, 255}, hi[3] = {8, 48, 107};
    int c[3];

    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    for (int k = 0; k < 3; k++)
        c[k] = (int)(lo[k] + (hi[k] - lo[k]) * f + 0.5);
    snprintf(buf, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void pm_svg_col_label(const struct pm_report *rep, size_t c, char *buf, size_t len)
{
    if (pm_html_by_rank(rep))
        snprintf(buf, len, "rank %d", (int)rep->xr.ranks[c]);
    else
        snprintf(buf, len, "thread %d", (int)rep->d->tids[c].thread);
}

static void pm_svg_heat_row(FILE *out, const struct pm_report *rep, size_t r, int y, int cw,
                            double *v, unsigned char *in, size_t ncols)
{
    const struct pm_file *d = rep->d;
    const char *name = d->regions[r].path;
    double max = 0, sum = 0;
    size_t entered = 0;
    char color[16], a[48], col[48];

    /* Σ wall_ns per column, summed while the cells streamed (rep->heat) */
    memcpy(v, &rep->heat[r * rep->heat_cols], ncols * sizeof *v);
    memcpy(in, &rep->heat_in[r * rep->heat_cols], ncols);
    for (size_t c = 0; c < ncols; c++)
        if (in[c]) {
            entered++;
            sum += v[c];
            if (v[c] > max)
                max = v[c];
        }
    pm_svg_name(out, PM_SVG_LABEL_W - 8, y + 12, "end", name);
    for (size_t c = 0; c < ncols; c++) {
        pm_svg_col_label(rep, c, col, sizeof col);
        if (!in[c]) {
            fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"15\" fill=\"#fafafa\" "
                    "stroke=\"#ddd\" data-r=\"%zu\" data-c=\"%zu\" data-v=\"%.17g\"><title>",
                    PM_SVG_LABEL_W + (int)c * cw, y, cw, r, c, v[c]);
            pm_html_esc(out, name, 200, 1);
            fprintf(out, ", %s: not entered</title></rect>\n", col);
            continue;
        }
        pm_svg_heat_color(color, sizeof color, max > 0 ? v[c] / max : 0);
        pm_html_time(a, sizeof a, v[c]);
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"15\" fill=\"%s\" "
                "data-r=\"%zu\" data-c=\"%zu\" data-v=\"%.17g\"><title>", PM_SVG_LABEL_W +
                (int)c * cw, y, cw, color, r, c, v[c]);
        pm_html_esc(out, name, 200, 1);
        fprintf(out, ", %s: %s", col, a);
        if (max > 0)
            fprintf(out, " (%.0f%% of the slowest)", 100.0 * v[c] / max);
        fputs("</title></rect>\n", out);
    }
    if (entered > 0 && sum > 0)
        fprintf(out, "<text x=\"%d\" y=\"%d\" data-k=\"imbalance\" data-v=\"%.17g\">%.2f&#215;"
                "</text>\n", PM_SVG_LABEL_W + (int)ncols * cw + 8, y + 12,
                max / (sum / (double)entered), max / (sum / (double)entered));
}

void pm_svg_heatmap(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    int by_rank = pm_html_by_rank(rep);
    size_t ncols = by_rank ? rep->xr.nranks : d->T, n = 0;
    size_t *rows;
    double *key, *v;
    unsigned char *in;
    int cw, w, h, y;
    char buf[48];

    if (d->R == 0 || d->T == 0 || !rep->heat)
        return;
    if (ncols > PM_SVG_MAX_COLS)
        ncols = PM_SVG_MAX_COLS;
    if (ncols > rep->heat_cols)
        ncols = rep->heat_cols;
    rows = malloc(d->R * sizeof *rows);
    key = malloc(d->R * sizeof *key);
    v = malloc(ncols * sizeof *v);
    in = malloc(ncols);
    if (!rows || !key || !v || !in)
        goto done;
    for (size_t i = 0; i < d->R; i++) {
        rows[n++] = rep->order[i];
        key[rep->order[i]] = (double)rep->reg[rep->order[i]].wall_total;
    }
    n = pm_svg_keep_highest(rows, n, key, PM_SVG_MAX_ROWS);
    cw = (int)(PM_SVG_BAR_W / ncols);
    cw = cw > 40 ? 40 : cw < 1 ? 1 : cw;
    w = PM_SVG_LABEL_W + (int)ncols * cw + 70;
    if (w < PM_SVG_LABEL_W + 560) /* room for the title and the legend */
        w = PM_SVG_LABEL_W + 560;
    h = 40 + (int)n * 17 + 70;
    fprintf(out, "<section id=\"heatmap\">\n<h2>Time per %s and region</h2>\n<p class=\"note\">"
            "Wall time of each region per %s%s. Each row is colored relative to its own "
            "slowest %s (darkest), so imbalance shows as uneven color; the number at the right "
            "is max/mean over the %ss that entered. Hover for the time.</p>\n",
            by_rank ? "rank" : "thread", by_rank ? "rank" : "thread",
            by_rank ? " (summed over the rank's threads)" : "", by_rank ? "rank" : "thread",
            by_rank ? "rank" : "thread");
    pm_svg_open(out, "heatmap-chart", w, h, by_rank ? "Heat map of time, rank by region" :
                "Heat map of time, thread by region");
    fprintf(out, "<text class=\"ttl\" x=\"%d\" y=\"16\">Time per %s (columns) and region "
            "(rows)</text>\n", PM_SVG_LABEL_W, by_rank ? "rank" : "thread");
    fprintf(out, "<text x=\"%d\" y=\"32\" font-size=\"11\">max/mean</text>\n",
            PM_SVG_LABEL_W + (int)ncols * cw + 8);
    y = 38;
    for (size_t i = 0; i < n; i++, y += 17)
        pm_svg_heat_row(out, rep, rows[i], y, cw, v, in, ncols);
    /* column labels where there is room, else every k-th */
    for (size_t c = 0; c < ncols; c += (size_t)(cw >= 24 ? 1 : (24 + cw - 1) / cw)) {
        snprintf(buf, sizeof buf, "%d", by_rank ? (int)rep->xr.ranks[c] : (int)d->tids[c].thread);
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%s</text>\n",
                PM_SVG_LABEL_W + (int)c * cw + cw / 2, y + 12, buf);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">%s</text>\n",
            PM_SVG_LABEL_W + (int)ncols * cw / 2, y + 26, by_rank ? "rank" : "thread (its number "
            "within its rank)");
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">region</text>\n",
            PM_SVG_LABEL_W - 8, 32);
    /* legend: the color scale */
    for (int k = 0; k <= 10; k++) {
        pm_svg_heat_color(buf, sizeof buf, k / 10.0);
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"10\" fill=\"%s\"/>\n",
                PM_SVG_LABEL_W + k * 16, y + 36, buf);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">0 &#8230; the row's slowest %s"
            "</text>\n<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"10\" fill=\"#fafafa\" "
            "stroke=\"#ddd\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">not entered</text>\n",
            PM_SVG_LABEL_W + 11 * 16 + 6, y + 45, by_rank ? "rank" : "thread",
            PM_SVG_LABEL_W + 11 * 16 + 180, y + 36, PM_SVG_LABEL_W + 11 * 16 + 200, y + 45);
    fputs("</svg>\n", out);
    if (n < d->R)
        fprintf(out, "<p class=\"note\">The %zu regions of most time, of %zu.</p>\n", n, d->R);
    if ((by_rank ? rep->xr.nranks : d->T) > ncols)
        fprintf(out, "<p class=\"note\">The first %zu columns only.</p>\n", ncols);
    fputs("</section>\n", out);
done:
    free(rows);
    free(key);
    free(v);
    free(in);
}

/* ------------------------------------------------------------------- MPI */

static void pm_svg_mpi_functions(FILE *out, const struct pm_report *rep)
{
    size_t n = rep->xr.nmpif < PM_SVG_MAX_FUNCS ? rep->xr.nmpif : PM_SVG_MAX_FUNCS;
    double max = 0;
    int y = 28;
    char a[48], b[48], c[48], m[48], calls[48];

    for (size_t f = 0; f < n; f++)
        if (rep->xr.mpif[f].q[PM_Q_WALL].total > max)
            max = rep->xr.mpif[f].q[PM_Q_WALL].total;
    pm_svg_open(out, "mpi-functions-chart", PM_SVG_LABEL_W + PM_SVG_BAR_W + 120,
                40 + (int)n * 20 + 40, "MPI time per function");
    fprintf(out, "<text class=\"ttl\" x=\"%d\" y=\"16\">MPI time per function (summed over "
            "ranks and call paths)</text>\n", PM_SVG_LABEL_W);
    for (size_t f = 0; f < n; f++, y += 20) {
        const struct pm_xregion *x = &rep->xr.mpif[f];
        const struct pm_xstat *q = &x->q[PM_Q_WALL];
        double w = max > 0 ? q->total / max * PM_SVG_BAR_W : 0;

        pm_svg_name(out, PM_SVG_LABEL_W - 8, y + 12, "end", x->name);
        pm_html_time(a, sizeof a, q->total);
        pm_html_count(calls, sizeof calls, x->q[PM_Q_VISITS].total);
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"15\" fill=\"#7e57c2\" "
                "data-f=\"%zu\" data-v=\"%.17g\"><title>", PM_SVG_LABEL_W, y, w, f, q->total);
        pm_html_esc(out, x->name, 200, 1);
        fprintf(out, ": %s in %s calls", a, calls);
        if (q->nspread) {
            pm_html_time(b, sizeof b, q->min);
            pm_html_time(c, sizeof c, q->mean);
            pm_html_time(m, sizeof m, q->max);
            fprintf(out, "; per rank min %s, mean %s, max %s (rank %d)", b, c, m,
                    (int)q->max_rank);
        }
        fprintf(out, "</title></rect>\n<text x=\"%.2f\" y=\"%d\">%s</text>\n",
                PM_SVG_LABEL_W + w + 4, y + 12, a);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">time in the "
            "function (all ranks)</text>\n</svg>\n", PM_SVG_LABEL_W + PM_SVG_BAR_W / 2, y + 14);
    if (rep->xr.nmpif > n)
        fprintf(out, "<p class=\"note\">The %zu functions of most time, of %zu.</p>\n", n,
                rep->xr.nmpif);
}

static void pm_svg_mpi_share(FILE *out, const struct pm_report *rep)
{
    size_t n = rep->xr.nranks < PM_SVG_MAX_RANKS ? rep->xr.nranks : PM_SVG_MAX_RANKS;
    double top = 1.0;
    int y = 28;
    char a[48], b[48], p[32];

    for (size_t k = 0; k < n; k++)
        if (rep->xr.share[k].has_share && rep->xr.share[k].share > top)
            top = rep->xr.share[k].share;
    pm_svg_open(out, "mpi-ranks-chart", PM_SVG_LABEL_W + PM_SVG_BAR_W + 200,
                40 + (int)n * 16 + 40, "MPI time share per rank");
    fprintf(out, "<text class=\"ttl\" x=\"%d\" y=\"16\">MPI time share per rank (time in MPI / "
            "the rank's time)</text>\n", PM_SVG_LABEL_W);
    for (size_t k = 0; k < n; k++, y += 16) {
        const struct pm_mpishare *s = &rep->xr.share[k];
        double w = s->has_share ? s->share / top * PM_SVG_BAR_W : 0;

        pm_html_time(a, sizeof a, (double)s->mpi_ns);
        pm_html_time(b, sizeof b, (double)s->total_ns);
        if (s->has_share)
            pm_html_pct(p, sizeof p, s->share);
        else
            snprintf(p, sizeof p, "n/a");
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d</text>\n"
                "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"12\" fill=\"#26a69a\" "
                "data-rank=\"%d\" data-v=\"%" PRIu64 "\"><title>rank %d: %s in MPI of %s (%s)"
                "</title></rect>\n<text x=\"%.2f\" y=\"%d\">%s (%s)</text>\n",
                PM_SVG_LABEL_W - 8, y + 10, (int)s->rank, PM_SVG_LABEL_W, y, w, (int)s->rank,
                s->mpi_ns, (int)s->rank, a, b, p, PM_SVG_LABEL_W + w + 4, y + 10, p, a);
    }
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n",
            PM_SVG_LABEL_W, y + 2, PM_SVG_LABEL_W + PM_SVG_BAR_W, y + 2);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\">0%%</text><text x=\"%d\" y=\"%d\" "
            "text-anchor=\"end\" font-size=\"10\">%.0f%%</text>\n<text x=\"%d\" y=\"%d\" "
            "text-anchor=\"middle\" font-size=\"11\">share of the rank's time in MPI</text>\n"
            "</svg>\n", PM_SVG_LABEL_W, y + 14, PM_SVG_LABEL_W + PM_SVG_BAR_W, y + 14, top * 100,
            PM_SVG_LABEL_W + PM_SVG_BAR_W / 2, y + 28);
    if (rep->xr.nranks > n)
        fprintf(out, "<p class=\"note\">The first %zu ranks of %zu.</p>\n", n, rep->xr.nranks);
}

static void pm_svg_x_cells(FILE *out, const struct pm_xstat *q)
{
    const double v[3] = {q->min, q->mean, q->max};
    static const char *const key[3] = {"min", "mean", "max"};
    char buf[48];

    for (int k = 0; k < 3; k++) {
        if (!q->nspread) {
            fprintf(out, "<td class=\"n na\" data-k=\"%s\" data-v=\"\">-</td>", key[k]);
            continue;
        }
        pm_html_time(buf, sizeof buf, v[k]);
        /* a time extrapolated from sampled visits (MPI polls) */
        fprintf(out, "<td class=\"n%s\" data-k=\"%s\" data-v=\"%.17g\">%s%s</td>",
                q->estimate ? " est" : "", key[k], v[k], q->estimate ? "~" : "", buf);
    }
    if (q->has_imbalance)
        fprintf(out, "<td class=\"n\" data-k=\"imbalance\" data-v=\"%.17g\">%.2f</td>",
                q->imbalance, q->imbalance);
    else
        fputs("<td class=\"n na\" data-k=\"imbalance\" data-v=\"\">-</td>", out);
    if (q->nspread)
        fprintf(out, "<td class=\"n\" data-k=\"max_rank\" data-v=\"%d\">%d</td>",
                (int)q->max_rank, (int)q->max_rank);
    else
        fputs("<td class=\"n na\" data-k=\"max_rank\" data-v=\"\">-</td>", out);
}

static void pm_svg_mpi_table(FILE *out, const struct pm_report *rep)
{
    char buf[48];

    fputs("<details><summary>MPI numbers</summary><div class=\"wrap\"><table id=\"mpi-table\">\n"
          "<tr><th>function</th><th>ranks</th><th>calls</th><th>bytes</th><th>bytes unknown"
          "</th><th>time</th><th>min/rank</th><th>mean/rank</th><th>max/rank</th><th>max/mean"
          "</th><th>max@rank</th></tr>\n", out);
    for (size_t f = 0; f < rep->xr.nmpif; f++) {
        const struct pm_xregion *x = &rep->xr.mpif[f];

        fprintf(out, "<tr data-f=\"%zu\"><td class=\"name\">", f);
        pm_html_esc(out, x->name, PM_HTML_MAX_CHARS, 1);
        fprintf(out, "</td><td class=\"n\" data-k=\"ranks\" data-v=\"%zu\">%zu</td>", x->entered,
                x->entered);
        pm_html_count(buf, sizeof buf, x->q[PM_Q_VISITS].total);
        fprintf(out, "<td class=\"n\" data-k=\"calls\" data-v=\"%.17g\">%s</td>",
                x->q[PM_Q_VISITS].total, buf);
        pm_html_count(buf, sizeof buf, x->q[PM_Q_BYTES].total);
        fprintf(out, "<td class=\"n\" data-k=\"bytes\" data-v=\"%.17g\">%s</td>",
                x->q[PM_Q_BYTES].total, buf);
        pm_html_count(buf, sizeof buf, x->q[PM_Q_BYTES_UNKNOWN].total);
        fprintf(out, "<td class=\"n\" data-k=\"bytes_unknown\" data-v=\"%.17g\">%s</td>",
                x->q[PM_Q_BYTES_UNKNOWN].total, buf);
        pm_html_time(buf, sizeof buf, x->q[PM_Q_WALL].total);
        if (!x->q[PM_Q_WALL].has_total) /* no call of it was timed */
            fputs("<td class=\"n na\" data-k=\"wall\" data-v=\"\">n/a</td>", out);
        else
            fprintf(out, "<td class=\"n%s\" data-k=\"wall\" data-v=\"%.17g\">%s%s</td>",
                    x->q[PM_Q_WALL].estimate ? " est" : "", x->q[PM_Q_WALL].total,
                    x->q[PM_Q_WALL].estimate ? "~" : "", buf);
        pm_svg_x_cells(out, &x->q[PM_Q_WALL]);
        fputs("</tr>\n", out);
    }
    fputs("</table></div></details>\n", out);
}

void pm_svg_mpi(FILE *out, const struct pm_report *rep)
{
    if (rep->xr.nmpif == 0)
        return;
    fputs("<section id=\"mpi\">\n<h2>MPI</h2>\n<p class=\"note\">Each MPI function summed over "
          "every call path and rank (a rank's value is the sum over its threads); the share "
          "per rank is the time in the outermost MPI calls, summed over the rank's threads, "
          "over the rank's longest thread (it can exceed 100% when threads wait in MPI at "
          "once).</p>\n", out);
    pm_svg_mpi_functions(out, rep);
    pm_svg_mpi_share(out, rep);
    pm_svg_mpi_table(out, rep);
    fputs("</section>\n", out);
}

/* ----------------------------------------------------- per-thread bars */

static void pm_svg_thread_chart(FILE *out, const struct pm_report *rep, size_t r, size_t chart)
{
    const struct pm_file *d = rep->d;
    /* the region's slowest visiting threads in row order (rep->top, kept
     * while the cells streamed); the max and mean over every visiting
     * thread are the region's spread over threads */
    const struct pm_topthr *top = &rep->top[r * PM_TOP_THREADS];
    const struct pm_tstat *ws = &rep->reg[r].wall_thr;
    size_t n = rep->ntop[r] < PM_SVG_MAX_THREADS ? rep->ntop[r] : PM_SVG_MAX_THREADS;
    size_t visited = ws->n;
    double max = ws->n ? ws->max : 0, mean = ws->n ? ws->mean : 0;
    int y = 28;
    char id[48], a[48], label[64];

    snprintf(id, sizeof id, "thread-bars-%zu", chart);
    pm_svg_open(out, id, PM_SVG_LABEL_W + PM_SVG_BAR_W + 260, 40 + (int)n * 16 + 40,
                "Time per thread in a region");
    fputs("<text class=\"ttl\" x=\"8\" y=\"16\">", out);
    pm_html_esc(out, d->regions[r].path, 120, 1);
    fprintf(out, ": time per thread%s</text>\n", n < visited ? " (the slowest threads)" : "");
    for (size_t i = 0; i < n; i++, y += 16) {
        size_t t = top[i].t;
        uint32_t f = top[i].flags;
        double key = top[i].wall, w = max > 0 ? key / max * PM_SVG_BAR_W : 0;

        if (pm_html_by_rank(rep))
            snprintf(label, sizeof label, "rank %d, thread %d", (int)d->tids[t].rank,
                     (int)d->tids[t].thread);
        else
            snprintf(label, sizeof label, "thread %d", (int)d->tids[t].thread);
        pm_html_time(a, sizeof a, key);
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n<rect x=\"%d\" "
                "y=\"%d\" width=\"%.2f\" height=\"12\" fill=\"%s\"%s data-t=\"%zu\" "
                "data-v=\"%.17g\"><title>%s: %s", PM_SVG_LABEL_W - 8, y + 10, label,
                PM_SVG_LABEL_W, y, w, f ? "#ffb74d" : "#5c6bc0",
                f ? " stroke=\"#c62828\" stroke-width=\"1.5\"" : "", t, key, label, a);
        if (f) {
            fputs("; flagged:", out);
            for (size_t k = 0; k < rep->nflags; k++)
                if (f & rep->flags[k].bit) {
                    fputc(' ', out);
                    pm_html_esc(out, rep->flags[k].name, 100, 1);
                }
        }
        fprintf(out, "</title></rect>\n<text x=\"%.2f\" y=\"%d\">%s</text>\n",
                PM_SVG_LABEL_W + w + 4, y + 10, a);
    }
    if (visited > 0 && max > 0) { /* the mean over the visiting threads, for imbalance */
        double x = PM_SVG_LABEL_W + mean / max * PM_SVG_BAR_W;

        pm_html_time(a, sizeof a, mean);
        fprintf(out, "<line x1=\"%.2f\" y1=\"24\" x2=\"%.2f\" y2=\"%d\" stroke=\"#c62828\" "
                "stroke-dasharray=\"4 3\"><title>mean over the %zu threads: %s</title></line>\n",
                x, x, y + 2, visited, a);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">wall time in "
            "the region (dashed: mean per thread)</text>\n<rect x=\"%d\" y=\"%d\" width=\"12\" "
            "height=\"10\" fill=\"#5c6bc0\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">clean cell"
            "</text><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"#ffb74d\" "
            "stroke=\"#c62828\"/><text x=\"%d\" y=\"%d\" font-size=\"11\">flagged cell</text>\n"
            "</svg>\n", PM_SVG_LABEL_W + PM_SVG_BAR_W / 2, y + 14, PM_SVG_LABEL_W, y + 22,
            PM_SVG_LABEL_W + 16, y + 31, PM_SVG_LABEL_W + 100, y + 22, PM_SVG_LABEL_W + 116, y + 31);
}

void pm_svg_thread_bars(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t heavy[PM_SVG_HEAVY], nheavy = 0;

    if (d->R == 0 || d->T == 0)
        return;
    /* the regions of most total time, heaviest first (lowest row on ties) */
    for (size_t r = 0; r < d->R; r++) {
        size_t i;

        if (rep->reg[r].nvisited == 0)
            continue;
        for (i = nheavy; i > 0 && rep->reg[heavy[i - 1]].wall_total < rep->reg[r].wall_total; i--)
            if (i < PM_SVG_HEAVY)
                heavy[i] = heavy[i - 1];
        if (i < PM_SVG_HEAVY) {
            heavy[i] = r;
            nheavy += nheavy < PM_SVG_HEAVY;
        }
    }
    if (nheavy == 0 || !rep->top)
        return;
    {
        fputs("<section id=\"thread-bars\">\n<h2>Threads in the heaviest regions</h2>\n"
              "<p class=\"note\">Wall time of each thread that visited, for the regions of "
              "most total time; orange = the cell carries a data-quality flag (hover for "
              "which).</p>\n", out);
        for (size_t i = 0; i < nheavy; i++)
            pm_svg_thread_chart(out, rep, heavy[i], i);
        fputs("</section>\n", out);
    }
}
