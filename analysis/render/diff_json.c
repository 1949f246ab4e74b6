/*
 * diff_json.c — `perfmark diff --format json`: one object, a region per
 * pair with every shown metric, then the regions found in one file only.
 */
#include "render/diff_render.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>

static void pm_json_side(FILE *out, const struct pm_diff_side *s, int measuring)
{
    fputs("{\"value\": ", out);
    pm_json_num(out, s->has, s->total);
    fprintf(out, ", \"estimate\": %s, \"untrusted\": %s, \"units\": %zu, \"mean\": ",
            s->estimate ? "true" : "false", s->untrusted ? "true" : "false", s->units);
    pm_json_num(out, s->units > 0, s->mean);
    fputs(", \"min\": ", out);
    pm_json_num(out, s->units > 0, s->min);
    fputs(", \"max\": ", out);
    pm_json_num(out, s->units > 0, s->max);
    if (measuring) /* appended: files since the throttle only */
        fprintf(out, ", \"timer_only\": %s, \"throttled\": %s", s->timer_only ? "true" : "false",
                s->partial ? "true" : "false");
    putc('}', out);
}

static void pm_json_file(FILE *out, const struct pm_diff_file *f)
{
    fputs("{\"file\": ", out);
    pm_json_str(out, f->path);
    fprintf(out, ", \"threads\": %zu, \"units\": %zu, \"summary\": %s}", f->d.T, f->nunits,
            f->d.summary ? "true" : "false");
}

/* The sampled profiles: per event both files sampled, per region found in
 * both, every function of either top list with its share in A and B. */
static void pm_diff_json_profiles(FILE *out, const struct pm_diff *df)
{
    const struct pm_diff_profile *dp = df->prof;
    if (!dp)
        return;
    fputs(", \"samples\": [", out);
    for (size_t e = 0; e < dp->nev; e++) {
        const struct pm_dprof_event *ev = &dp->ev[e];
        fputs(e ? ",\n  {\"event\": " : "\n  {\"event\": ", out);
        pm_json_str(out, ev->name);
        fputs(", \"regions\": [", out);
        for (size_t i = 0; i < ev->nreg; i++) {
            const struct pm_dprof_region *reg = &ev->reg[i];
            const char *path = pm_diff_pair_path(df, &df->pairs[reg->pair]);
            fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", out);
            if (path)
                pm_json_str(out, path);
            else
                fputs("null", out);
            fprintf(out, ", \"samples\": [%" PRIu64 ", %" PRIu64 "], \"estimate\": [",
                    reg->samples[0], reg->samples[1]);
            pm_json_num(out, 1, reg->estimate[0]);
            fputs(", ", out);
            pm_json_num(out, 1, reg->estimate[1]);
            fputs("], \"functions\": [", out);
            for (size_t k = 0; k < reg->nfn; k++) {
                const struct pm_dprof_fn *f = &reg->fn[k];
                fputs(k ? ", {\"function\": " : "{\"function\": ", out);
                pm_json_str(out, f->label);
                fputs(", \"object\": ", out);
                pm_json_str(out, f->object);
                fputs(", \"share\": [", out);
                pm_json_num(out, f->listed[0], f->share[0]);
                fputs(", ", out);
                pm_json_num(out, f->listed[1], f->share[1]);
                fprintf(out, "], \"samples\": [%" PRIu64 ", %" PRIu64 "], \"change\": ",
                        f->samples[0], f->samples[1]);
                pm_json_num(out, 1, f->change);
                putc('}', out);
            }
            fputs("]}", out);
        }
        fputs("]}", out);
    }
    fputs("]", out);
}

void pm_render_diff_json(FILE *out, const struct pm_diff *df)
{
    const char *sep = "";

    fputs("{\"a\": ", out);
    pm_json_file(out, &df->f[0]);
    fputs(", \"b\": ", out);
    pm_json_file(out, &df->f[1]);
    fprintf(out, ", \"unit\": \"%s\", \"metric\": ", df->by_rank ? "rank" : "thread");
    if (df->mshow == PM_DIFF_NONE)
        fputs("null", out);
    else
        pm_json_str(out, df->m[df->mshow].name);
    fputs(", \"threshold_pct\": ", out);
    pm_json_num(out, df->has_threshold, df->threshold);
    fputs(", \"regions\": [", out);
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];
        const char *path = pm_diff_pair_path(df, pr);
        const char *msep = "";

        if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE)
            continue;
        fprintf(out, "%s\n  {\"path\": ", sep);
        sep = ",";
        if (path)
            pm_json_str(out, path);
        else
            fputs("null", out);
        fputs(", \"kind\": ", out);
        pm_json_str(out, pm_diff_pair_kind(df, pr));
        fprintf(out, ", \"whole_run\": %s, \"metrics\": {", path ? "false" : "true");
        for (size_t m = 0; m < df->nm; m++) {
            const struct pm_diff_cell *c = &df->cells[p * df->nm + m];

            if (!pm_diff_shown(df, pr, m))
                continue;
            fprintf(out, "%s\n    ", msep);
            msep = ",";
            pm_json_str(out, df->m[m].name);
            fputs(": {\"a\": ", out);
            pm_json_side(out, &c->s[0], df->measuring);
            fputs(", \"b\": ", out);
            pm_json_side(out, &c->s[1], df->measuring);
            fputs(", \"change\": ", out);
            pm_json_num(out, c->has_change, c->change);
            fputs(", \"change_pct\": ", out);
            pm_json_num(out, c->rel_kind == 1, c->rel);
            fprintf(out, ", \"beyond_spread\": %s, \"regression\": %s}",
                    c->beyond < 0 ? "null" : c->beyond ? "true" : "false",
                    c->regressed ? "true" : "false");
        }
        fputs("}}", out);
    }
    fputs("]", out);
    for (int fi = 0; fi < 2; fi++) {
        fprintf(out, ", \"only_in_%s\": [", fi ? "b" : "a");
        sep = "";
        for (size_t p = 0; p < df->npairs; p++) {
            const struct pm_diff_pair *pr = &df->pairs[p];

            if (pr->row[fi] == PM_DIFF_NONE || pr->row[1 - fi] != PM_DIFF_NONE)
                continue;
            fputs(sep, out);
            sep = ", ";
            pm_json_str(out, pm_diff_pair_path(df, pr));
        }
        fputs("]", out);
    }
    pm_diff_json_profiles(out, df);
    fprintf(out, ", \"regressions\": %zu}\n", df->nregress);
}
