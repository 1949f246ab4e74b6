/*
 * text_fmt.c — what every table of the terminal report shares: lines wrapped
 * at PM_TEXT_WIDTH columns, labels, the cells' number formats, and the
 * region name column (its width and the tree's indent).
 */
#include "render/text/text_fmt.h"
#include "render/common/render_common.h"

#include <stdint.h>
#include <string.h>

size_t pm_text_name_w = 36, pm_text_ev_name_w = 25;

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
void pm_text_wrap(FILE *out, const char *s, size_t indent)
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

void pm_text_label(FILE *out, const char *label, const char *value)
{
    fprintf(out, "%-10s", label);
    pm_text_wrap(out, value, 10);
}

void pm_fmt_count(char *buf, size_t len, double v) { pm_unit_count(buf, len, v, ""); }

/* Software clock events (task-clock, cpu-clock) count nanoseconds. */
int pm_event_is_time(const struct pm_file_event *ev)
{
    return ev->type == 1 /* PERF_TYPE_SOFTWARE */ &&
           (ev->config == 0 /* CPU_CLOCK */ || ev->config == 1 /* TASK_CLOCK */);
}

/* A time: "n/a" without one, else the value with the markers ~ (an
 * estimate: sampled visits) and ! (some visiting threads have no time). */
void pm_fmt_time_m(char *buf, size_t len, int has, double ns, int est, int bad)
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

/* A count cell: "n/a" without an estimate, else the value with the
 * markers ~ (estimate) and ! (incomplete); clock events as durations. */
void pm_fmt_value(char *buf, size_t len, int has, double v, const struct pm_evstat *s,
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

void pm_fmt_pct(char *buf, size_t len, int has, double share)
{
    if (has)
        snprintf(buf, len, "%.1f%%", share * 100.0);
    else
        snprintf(buf, len, "n/a");
}

/* Without --wide the tables fit 100 columns and long names are cut in the
 * middle; with it the name columns take the longest name the view shows. */
void pm_text_widths(const struct pm_report *rep)
{
    size_t longest = 0;

    pm_text_name_w = 36;
    pm_text_ev_name_w = 25;
    if (!rep->view.opts.wide)
        return;
    for (size_t i = 0; i < rep->view.nrows; i++) {
        const struct pm_file_region *g = &rep->d->regions[rep->view.rows[i]];
        size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;
        size_t cols = g->name[0] ? pm_term_cols(g->name, strlen(g->name)) : 2;

        if (indent + cols > longest)
            longest = indent + cols;
    }
    if (longest > pm_text_name_w)
        pm_text_name_w = longest;
    if (longest > pm_text_ev_name_w)
        pm_text_ev_name_w = longest;
}

void pm_text_region_name(FILE *out, const struct pm_file_region *g)
{
    size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;

    pm_spaces(out, indent);
    pm_text_cell(out, g->name[0] ? g->name : "\"\"", PM_NAME_W - indent, PM_LEFT);
}
