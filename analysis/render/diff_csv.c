/*
 * diff_csv.c — `perfmark diff --format csv`: one row per (pair, metric), a
 * row per region found in one file only; with samples in both files, a row
 * per (region, sampled event) for its estimate ("sampled:EVENT") and per
 * (region, function of either top list) for its share of the region's
 * samples ("share:EVENT:FUNCTION").
 */
#include "render/diff_render.h"
#include "render/common/render_common.h"

#include <stdio.h>

static void pm_csv_side(FILE *out, const struct pm_diff_side *s, int measuring)
{
    putc(',', out);
    pm_csv_num(out, s->has, s->total);
    fprintf(out, ",%d,%d,%zu,", s->estimate, s->untrusted, s->units);
    pm_csv_num(out, s->units > 0, s->mean);
    putc(',', out);
    pm_csv_num(out, s->units > 0, s->min);
    putc(',', out);
    pm_csv_num(out, s->units > 0, s->max);
    if (measuring) /* appended: files since the throttle only */
        fprintf(out, ",%d,%d", s->timer_only, s->partial);
}

/* One row of a sampled quantity: the region's columns, the metric, the two
 * values as a and b (estimates), the change; the other columns empty. */
static void pm_csv_sampled_row(FILE *out, const struct pm_diff *df, const char *path,
                               const char *kind, const char *metric, int has_a, double a,
                               int has_b, double b)
{
    const char *side_rest = df->measuring ? ",1,0,,,,,,," : ",1,0,,,,,";
    pm_csv_str(out, path ? path : "");
    putc(',', out);
    pm_csv_str(out, kind);
    fprintf(out, ",%s,", path ? "both" : "whole_run");
    pm_csv_str(out, metric);
    putc(',', out);
    pm_csv_num(out, has_a, a);
    fputs(side_rest, out);
    pm_csv_num(out, has_b, b);
    fputs(side_rest, out);
    pm_csv_num(out, has_a && has_b, b - a);
    putc(',', out);
    pm_csv_num(out, has_a && has_b && a != 0, 100.0 * (b - a) / a);
    fputs(",,0\n", out);
}

static void pm_csv_profiles(FILE *out, const struct pm_diff *df)
{
    const struct pm_diff_profile *dp = df->prof;
    for (size_t e = 0; dp && e < dp->nev; e++) {
        const struct pm_dprof_event *ev = &dp->ev[e];
        for (size_t i = 0; i < ev->nreg; i++) {
            const struct pm_dprof_region *reg = &ev->reg[i];
            const struct pm_diff_pair *pr = &df->pairs[reg->pair];
            const char *path = pm_diff_pair_path(df, pr), *kind = pm_diff_pair_kind(df, pr);
            char metric[1200];
            snprintf(metric, sizeof metric, "sampled:%s", ev->name);
            pm_csv_sampled_row(out, df, path, kind, metric, 1, reg->estimate[0], 1,
                               reg->estimate[1]);
            for (size_t k = 0; k < reg->nfn; k++) {
                const struct pm_dprof_fn *f = &reg->fn[k];
                snprintf(metric, sizeof metric, "share:%s:%s [%s]", ev->name, f->label,
                         f->object);
                pm_csv_sampled_row(out, df, path, kind, metric, f->listed[0], f->share[0],
                                   f->listed[1], f->share[1]);
            }
        }
    }
}

void pm_render_diff_csv(FILE *out, const struct pm_diff *df)
{
    fputs("path,kind,status,metric,a,a_estimate,a_untrusted,a_units,a_mean,a_min,a_max,", out);
    if (df->measuring)
        fputs("a_timer_only,a_throttled,", out);
    fputs("b,b_estimate,b_untrusted,b_units,b_mean,b_min,b_max,", out);
    if (df->measuring)
        fputs("b_timer_only,b_throttled,", out);
    fputs("change,change_pct,beyond_spread,regression\n", out);
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];
        const char *path = pm_diff_pair_path(df, pr);
        const char *status = pr->row[0] == PM_DIFF_NONE ? "only_b"
                             : pr->row[1] == PM_DIFF_NONE ? "only_a" : path ? "both" : "whole_run";

        if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE) {
            pm_csv_str(out, path);
            putc(',', out);
            pm_csv_str(out, pm_diff_pair_kind(df, pr));
            /* the empty metric, sides (with or without their last two) and change */
            fprintf(out, ",%s,,,,,,,,,,,,,,,,,,,%s\n", status, df->measuring ? ",,,," : "");
            continue;
        }
        for (size_t m = 0; m < df->nm; m++) {
            const struct pm_diff_cell *c = &df->cells[p * df->nm + m];

            if (!pm_diff_shown(df, pr, m))
                continue;
            pm_csv_str(out, path ? path : "");
            putc(',', out);
            pm_csv_str(out, pm_diff_pair_kind(df, pr));
            fprintf(out, ",%s,", status);
            pm_csv_str(out, df->m[m].name);
            pm_csv_side(out, &c->s[0], df->measuring);
            pm_csv_side(out, &c->s[1], df->measuring);
            putc(',', out);
            pm_csv_num(out, c->has_change, c->change);
            putc(',', out);
            pm_csv_num(out, c->rel_kind == 1, c->rel);
            fprintf(out, ",%s,%d\n", c->beyond < 0 ? "" : c->beyond ? "1" : "0", c->regressed);
        }
    }
    pm_csv_profiles(out, df);
}
