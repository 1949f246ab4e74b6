/*
 * series_json.c — counts over time in the JSON report: the bins' width and
 * start, per event the job's total per bin with its min and max over the
 * ranks (and their ranks), and for each of the first ranks its values and
 * its first thread's region per bin, and TopDown per bin where it was
 * measured (tests/report/README.md, "series").
 */
#include "render/json/series_json.h"
#include "render/common/render_common.h"
#include "model/series_topdown.h"

#include <inttypes.h>
#include <stdio.h>

static void pm_sj_nums(FILE *out, const double *v, size_t n, size_t stride)
{
    putc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i)
            putc(',', out);
        pm_json_num(out, 1, v[i * stride]);
    }
    putc(']', out);
}

static void pm_sj_ints(FILE *out, const int32_t *v, size_t n, size_t stride)
{
    putc('[', out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? "," : "", (int)v[i * stride]);
    putc(']', out);
}

/* The per-event arrays of one quantity: {"EVENT": [...], ...} */
static void pm_sj_events(FILE *out, const struct pm_report *rep, const double *v)
{
    const struct pm_series_view *s = rep->series;
    putc('{', out);
    for (size_t e = 0; e < s->E; e++) {
        fputs(e ? "," : "", out);
        pm_json_str(out, rep->evkey[e]);
        putc(':', out);
        pm_sj_nums(out, v + e, s->nbins, s->E);
    }
    putc('}', out);
}

/* {"NODE": [ratio per bin, null without slots], ...} of one row of values */
static void pm_sj_topdown_nodes(FILE *out, const struct pm_report *rep, const double *values)
{
    const struct pm_series_view *s = rep->series;
    putc('{', out);
    for (int n = 0, k = 0; n < PM_TD_NNODES; n++) {
        if (!pm_td_node_shown(&rep->td, (enum pm_td_node)n))
            continue;
        fprintf(out, "%s\"%s\":[", k++ ? "," : "", pm_td_node_name((enum pm_td_node)n));
        for (size_t b = 0; b < s->nbins; b++) {
            struct pm_td_breakdown br;
            fputs(b ? "," : "", out);
            if (pm_series_td_at(&rep->td, s, values, b, b + 1, &br))
                fprintf(out, "%.17g", br.ratio[n]);
            else
                fputs("null", out);
        }
        putc(']', out);
    }
    putc('}', out);
}

/* TopDown per bin, for the job and each rank shown; only where TopDown
 * was measured (other files keep their layout). */
static void pm_sj_topdown(FILE *out, const struct pm_report *rep)
{
    const struct pm_series_view *s = rep->series;
    if (!pm_series_td_on(&rep->td, s))
        return;
    fputs(",\n    \"topdown\":{\"total\":", out);
    pm_sj_topdown_nodes(out, rep, s->total);
    fputs(",\"ranks\":[", out);
    for (size_t k = 0; k < s->nshown; k++) {
        fprintf(out, "%s{\"rank\":%d,\"ratios\":", k ? "," : "", (int)s->shown_rank[k]);
        pm_sj_topdown_nodes(out, rep, s->rank_value + k * s->nbins * s->E);
        putc('}', out);
    }
    fputs("]}", out);
}

void pm_render_json_series(FILE *out, const struct pm_report *rep)
{
    const struct pm_series_view *s = rep->series;
    if (!s)
        return;
    const struct pm_file *d = rep->d;
    fprintf(out, ",\n  \"series\":{\"asked_ns\":%" PRIu64 ",\"kept_ns\":%" PRIu64
                 ",\"bin_ns\":%" PRIu64 ",\"t0_ns\":%" PRIu64 ",\"bins\":%zu,\"rows\":%" PRIu64
                 ",\"flagged_rows\":%" PRIu64 ",\"bad_rows\":%" PRIu64 ",\n    \"total\":",
            s->asked_ns, s->kept_ns, s->bin_ns, s->t0_ns, s->nbins, s->rows, s->flagged_rows,
            s->bad_rows);
    pm_sj_events(out, rep, s->total);
    fputs(",\n    \"estimate\":{", out);
    for (size_t e = 0; e < s->E; e++) {
        fputs(e ? "," : "", out);
        pm_json_str(out, rep->evkey[e]);
        fputs(":[", out);
        for (size_t b = 0; b < s->nbins; b++)
            fprintf(out, "%s%s", b ? "," : "", s->estimate[b * s->E + e] ? "true" : "false");
        putc(']', out);
    }
    fputs("},\n    \"min\":", out);
    pm_sj_events(out, rep, s->min);
    fputs(",\n    \"max\":", out);
    pm_sj_events(out, rep, s->max);
    fputs(",\n    \"max_rank\":{", out);
    for (size_t e = 0; e < s->E; e++) {
        fputs(e ? "," : "", out);
        pm_json_str(out, rep->evkey[e]);
        putc(':', out);
        pm_sj_ints(out, s->max_rank + e, s->nbins, s->E);
    }
    fputs("},\n    \"ranks\":[", out);
    for (size_t k = 0; k < s->nshown; k++) {
        fprintf(out, "%s\n      {\"rank\":%d,\"values\":", k ? "," : "", (int)s->shown_rank[k]);
        pm_sj_events(out, rep, s->rank_value + k * s->nbins * s->E);
        fputs(",\"region\":[", out);
        for (size_t b = 0; b < s->nbins; b++) {
            int32_t r = s->rank_region[k * s->nbins + b];
            fputs(b ? "," : "", out);
            if (r >= 0)
                pm_json_str(out, d->regions[r].path);
            else
                fputs("null", out);
        }
        fputs("]}", out);
    }
    putc(']', out);
    pm_sj_topdown(out, rep);
    putc('}', out);
}
