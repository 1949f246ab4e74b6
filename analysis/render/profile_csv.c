/*
 * profile_csv.c — the sampled profile in the CSV report. CSV stays one table
 * of (region, event) rows: files with samples get, appended to every row,
 * the row's region's samples for each sampled event (named in the column,
 * sampled_<event>_...): samples (its own and its subtree's), its own,
 * lost, throttled, the estimate (samples x period) and its relative error,
 * and its top function and line with their shares. The full lists are in
 * the JSON report.
 */
#include "render/profile_csv.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static const char *const pm_pc_cols[] = {
    "samples", "self", "lost", "throttled", "estimate", "rel_error",
    "top_function", "top_function_share", "top_line", "top_line_share",
};

void pm_csv_profile_header(FILE *out, const struct pm_report *rep)
{
    const struct pm_profile *p = rep->profile;
    for (size_t e = 0; p && e < p->S; e++)
        for (size_t k = 0; k < sizeof pm_pc_cols / sizeof *pm_pc_cols; k++) {
            char name[256];
            snprintf(name, sizeof name, "sampled_%s_%s", p->ev[e].name, pm_pc_cols[k]);
            putc(',', out);
            pm_csv_str(out, name);
        }
}

static void pm_pc_num(FILE *out, int has, double v)
{
    putc(',', out);
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
}

void pm_csv_profile_part(FILE *out, const struct pm_report *rep, size_t r)
{
    const struct pm_profile *p = rep->profile;
    for (size_t e = 0; p && e < p->S; e++) {
        const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, c->samples, c->self,
                c->lost, c->throttled);
        pm_pc_num(out, 1, c->estimate);
        pm_pc_num(out, c->samples > 0, pm_prof_rel_error(c->samples));
        putc(',', out);
        if (c->nfn)
            pm_csv_str(out, p->fn[c->fn[0].id].label);
        pm_pc_num(out, c->nfn > 0, c->nfn ? c->fn[0].share : 0);
        putc(',', out);
        if (c->nline)
            pm_csv_str(out, p->line[c->line[0].id].label);
        pm_pc_num(out, c->nline > 0, c->nline ? c->line[0].share : 0);
    }
}
