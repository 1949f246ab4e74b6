/*
 * series_text.c — counts over time as text (the model's pm_series_view):
 * like `perf stat -I`, one line per interval with each event's count in it
 * (scaled where multiplexed: ~), for the job (the sum over ranks, with the
 * max/mean over ranks of the first event when there are several) and for
 * each of the first PM_ST_RANKS ranks, with the region its first thread was
 * in, and where TopDown was measured its level-1 breakdown per line. At most
 * PM_ST_ROWS lines per table: longer runs show merged intervals.
 */
#include "render/text/series_text.h"
#include "render/common/render_common.h"
#include "model/series_topdown.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PM_ST_ROWS 40
#define PM_ST_RANKS 4
#define PM_ST_COL 12
#define PM_ST_EVENTS 6

static void pm_st_value(char *buf, size_t len, const struct pm_file_event *ev, double v, int est)
{
    char num[40];
    if (pm_file_event_is_time(ev))
        pm_unit_time(num, sizeof num, v);
    else
        pm_unit_count(num, sizeof num, v, "");
    snprintf(buf, len, "%s%s", est ? "~" : "", num);
}

/* One table: `value(b, e)` over bins merged `step` at a time. */
static void pm_st_table(FILE *out, const struct pm_report *rep, const struct pm_series_view *s,
                        const double *values, const int32_t *region, int job)
{
    const struct pm_file *d = rep->d;
    size_t E = s->E < PM_ST_EVENTS ? s->E : PM_ST_EVENTS;
    size_t step = (s->nbins + PM_ST_ROWS - 1) / PM_ST_ROWS;
    if (!step)
        step = 1;
    fprintf(out, "%10s", "time s");
    for (size_t e = 0; e < E; e++) {
        putc(' ', out);
        pm_text_cell(out, d->events[e].name, PM_ST_COL, PM_RIGHT);
    }
    if (job && rep->xr.nranks > 1 && s->E)
        fprintf(out, " %8s", "max/mean");
    int td = pm_series_td_on(&rep->td, s);
    for (int n = 0; td && n <= PM_TD_N_SMT_CONTENTION; n++)
        if (pm_td_node_shown(&rep->td, (enum pm_td_node)n))
            fprintf(out, " %9.9s", pm_td_node_name((enum pm_td_node)n));
    if (region)
        fputs("  region", out);
    putc('\n', out);
    for (size_t b0 = 0; b0 < s->nbins; b0 += step) {
        size_t b1 = b0 + step < s->nbins ? b0 + step : s->nbins;
        fprintf(out, "%10.3f", pm_series_bin_s(s, b1));
        for (size_t e = 0; e < E; e++) {
            double v = 0;
            int est = 0;
            for (size_t b = b0; b < b1; b++) {
                v += values[b * s->E + e];
                est |= job && s->estimate[b * s->E + e];
            }
            char buf[48];
            pm_st_value(buf, sizeof buf, &d->events[e], v, est);
            putc(' ', out);
            pm_text_cell(out, buf, PM_ST_COL, PM_RIGHT);
        }
        if (job && rep->xr.nranks > 1 && s->E) {
            double max = 0, sum = 0;
            for (size_t b = b0; b < b1; b++) {
                max += s->max[b * s->E];
                sum += s->total[b * s->E];
            }
            double mean = sum / (double)rep->xr.nranks;
            if (mean > 0)
                fprintf(out, " %8.2f", max / mean);
            else
                fprintf(out, " %8s", "-");
        }
        struct pm_td_breakdown br;
        int has = td && pm_series_td_at(&rep->td, s, values, b0, b1, &br);
        for (int n = 0; td && n <= PM_TD_N_SMT_CONTENTION; n++)
            if (pm_td_node_shown(&rep->td, (enum pm_td_node)n)) {
                if (has)
                    fprintf(out, " %8.1f%%", 100 * br.ratio[n]);
                else
                    fprintf(out, " %9s", "-");
            }
        if (region) {
            int32_t r = region[b1 - 1];
            fputs("  ", out);
            pm_text_name(out, r >= 0 ? d->regions[r].path : "-", 40);
        }
        putc('\n', out);
    }
    if (step > 1)
        fprintf(out, "(%zu intervals of %.3g s per line)\n", step, (double)s->bin_ns / 1e9);
}

void pm_render_text_series(FILE *out, const struct pm_report *rep)
{
    const struct pm_series_view *s = rep->series;
    if (!s)
        return;
    char asked[32], bin[32];
    pm_unit_time(asked, sizeof asked, (double)s->asked_ns);
    pm_unit_time(bin, sizeof bin, (double)s->bin_ns);
    fprintf(out, "\nCounts over time (--interval %s; rows of %s", asked, bin);
    if (s->kept_ns != s->asked_ns)
        fputs(", the intervals merged where memory ran short", out);
    fputs("): each line is the interval ending at `time`", out);
    if (rep->xr.nranks > 1)
        fputs("; the job = the sum over ranks, max/mean = of the first event over the ranks", out);
    fputs("\n", out);
    if (s->E > PM_ST_EVENTS)
        fprintf(out, "(the first %d events; all in the JSON report)\n", PM_ST_EVENTS);
    if (pm_series_td_on(&rep->td, s))
        fputs("TopDown level 1 of each line's interval: the share of its slots (level 2 in the "
              "JSON report)\n", out);
    if (rep->xr.nranks > 1) {
        fputs("\nthe job\n", out);
        pm_st_table(out, rep, s, s->total, s->nshown ? s->rank_region : NULL, 1);
    }
    for (size_t k = 0; k < s->nshown && k < PM_ST_RANKS; k++) {
        if (rep->xr.nranks > 1)
            fprintf(out, "\nrank %d (region: of its first thread)\n", (int)s->shown_rank[k]);
        pm_st_table(out, rep, s, s->rank_value + k * s->nbins * s->E,
                    s->rank_region + k * s->nbins, rep->xr.nranks <= 1);
    }
    if (s->nshown > PM_ST_RANKS)
        fprintf(out, "(%zu more ranks in the JSON report)\n", s->nshown - PM_ST_RANKS);
    if (s->flagged_rows)
        fprintf(out, "%" PRIu64 " intervals of a thread had no counts (LOST_GENERATION)\n",
                s->flagged_rows);
    if (s->bad_rows)
        fprintf(out, "%" PRIu64 " rows named a thread or region the file does not have: left "
                "out\n", s->bad_rows);
}
