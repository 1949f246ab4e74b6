/*
 * profile_json.c — the sampled profile in the JSON report: per sampled
 * event, the whole run and every region with samples (or losses), each with
 * its samples, its own, the losses, the estimate and its relative error,
 * the spread across ranks, and its top functions and source lines
 * (profile.h). Layout in tests/report/README.md, "samples".
 */
#include "render/json/profile_json.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pm_pj_ranks(FILE *out, const struct pm_profile *p, double min, double mean,
                        double max, int32_t at)
{
    if (!p->has_ranks) {
        fputs(",\"ranks\":null", out);
        return;
    }
    fputs(",\"ranks\":{\"min\":", out);
    pm_json_num(out, 1, min);
    fputs(",\"mean\":", out);
    pm_json_num(out, 1, mean);
    fputs(",\"max\":", out);
    pm_json_num(out, 1, max);
    fprintf(out, ",\"max_rank\":%d,\"max_over_mean\":", (int)at);
    pm_json_num(out, 1, mean > 0 ? max / mean : 0);
    putc('}', out);
}

static void pm_pj_item_head(FILE *out, const struct pm_prof_item *it)
{
    fprintf(out, "\"samples\":%" PRIu64 ",\"share\":", it->samples);
    pm_json_num(out, 1, it->share);
    fputs(",\"estimate\":", out);
    pm_json_num(out, 1, it->estimate);
}

static void pm_pj_edges(FILE *out, const struct pm_profile *p, const char *key,
                        const struct pm_prof_edge *e, size_t n)
{
    fprintf(out, ",\"%s\":[", key);
    for (size_t k = 0; k < n; k++) {
        fputs(k ? ",{\"function\":" : "{\"function\":", out);
        pm_json_str(out, p->frame[e[k].frame]);
        fprintf(out, ",\"samples\":%" PRIu64 "}", e[k].samples);
    }
    putc(']', out);
}

/* The call paths as a graph (profile_calls.h); null without paths. */
static void pm_pj_calls(FILE *out, const struct pm_profile *p, const struct pm_prof_calls *g)
{
    fputs(",\"calls\":", out);
    if (!g) {
        fputs("null", out);
        return;
    }
    fputs("{\"functions\":[", out);
    for (size_t i = 0; i < g->nincl; i++) {
        fputs(i ? ",{\"function\":" : "{\"function\":", out);
        pm_json_str(out, p->frame[g->incl[i].frame]);
        fprintf(out, ",\"inclusive\":%" PRIu64 ",\"self\":%" PRIu64 "}", g->incl[i].inclusive,
                g->incl[i].self);
    }
    fprintf(out, "],\"passthrough\":%zu,\"hot\":[", g->passthrough);
    for (size_t i = 0; i < g->nhot; i++) {
        const struct pm_prof_hot *h = &g->hot[i];
        fputs(i ? ",{\"function\":" : "{\"function\":", out);
        pm_json_str(out, p->frame[h->frame]);
        fprintf(out, ",\"self\":%" PRIu64 ",\"inclusive\":%" PRIu64, h->self, h->inclusive);
        pm_pj_edges(out, p, "callers", h->callers, h->ncallers);
        pm_pj_edges(out, p, "callees", h->callees, h->ncallees);
        putc('}', out);
    }
    fputs("]}", out);
}

static void pm_pj_cell(FILE *out, const struct pm_profile *p, const struct pm_prof_cell *c)
{
    fprintf(out, "\"samples\":%" PRIu64 ",\"self\":%" PRIu64 ",\"lost\":%" PRIu64
                 ",\"throttled\":%" PRIu64 ",\"estimate\":",
            c->samples, c->self, c->lost, c->throttled);
    pm_json_num(out, 1, c->estimate);
    fputs(",\"estimate_rel_error\":", out);
    pm_json_num(out, 1, pm_prof_rel_error(c->samples));
    pm_pj_ranks(out, p, c->rank_min, c->rank_mean, c->rank_max, c->rank_max_at);
    fputs(",\"functions\":[", out);
    for (size_t i = 0; i < c->nfn; i++) {
        const struct pm_prof_item *it = &c->fn[i];
        const struct pm_prof_fn *f = &p->fn[it->id];
        fputs(i ? ",{\"function\":" : "{\"function\":", out);
        pm_json_str(out, f->label);
        fputs(",\"object\":", out);
        pm_json_str(out, f->object);
        fprintf(out, ",\"named\":%s,", f->named ? "true" : "false");
        pm_pj_item_head(out, it);
        pm_pj_ranks(out, p, it->rank_min, it->rank_mean, it->rank_max, it->rank_max_at);
        putc('}', out);
    }
    fputs("],\"lines\":[", out);
    for (size_t i = 0; i < c->nline; i++) {
        const struct pm_prof_item *it = &c->line[i];
        const struct pm_prof_line *l = &p->line[it->id];
        const char *colon = strrchr(l->label, ':');
        fputs(i ? ",{\"file\":" : "{\"file\":", out);
        if (colon && strcmp(l->label, "?") != 0) {
            char *file = strndup(l->label, (size_t)(colon - l->label));
            pm_json_str(out, file ? file : "");
            free(file);
            fprintf(out, ",\"line\":%ld", strtol(colon + 1, NULL, 10));
        } else {
            fputs("null,\"line\":null", out);
        }
        fputs(",\"function\":", out);
        pm_json_str(out, p->fn[l->fn].label);
        putc(',', out);
        pm_pj_item_head(out, it);
        putc('}', out);
    }
    /* callers outermost first, then the function (with --sample-callchain) */
    fputs("],\"call_paths\":[", out);
    for (size_t i = 0; i < c->npath; i++) {
        const struct pm_prof_item *it = &c->path[i];
        fputs(i ? ",{\"path\":" : "{\"path\":", out);
        pm_json_str(out, p->path[it->id]);
        putc(',', out);
        pm_pj_item_head(out, it);
        putc('}', out);
    }
    fprintf(out, "],\"with_callers\":%" PRIu64, c->with_path);
    pm_pj_calls(out, p, c->calls);
}

void pm_render_json_profile(FILE *out, const struct pm_report *rep)
{
    const struct pm_profile *p = rep->profile;
    if (!p)
        return;
    const struct pm_file *d = rep->d;
    fputs(",\n  \"samples\":{\"requested\":", out);
    pm_json_str(out, d->sample_requested);
    fprintf(out, ",\"counting\":%s,\"symbols\":%s,\"ranks_known\":%s,\"bad_rows\":%" PRIu64
                 ",\"callchain\":\"%s\",\"stack_bytes\":%" PRIu32 ",\"notes\":[",
            d->sample_counting ? "true" : "false", p->symbols ? "true" : "false",
            p->has_ranks ? "true" : "false", p->bad_rows,
            !p->chains ? "none" : strcmp(d->sample_callchain, "dwarf") == 0 ? "dwarf" : "fp",
            d->sample_stack_bytes);
    for (size_t i = 0; i < p->nnotes; i++) {
        if (i)
            putc(',', out);
        pm_json_str(out, p->notes[i]);
    }
    fputs("],\"events\":[", out);
    for (size_t e = 0; e < p->S; e++) {
        const struct pm_prof_event *ev = &p->ev[e];
        fputs(e ? ",\n    {\"name\":" : "\n    {\"name\":", out);
        pm_json_str(out, ev->name);
        fputs(",\"requested\":", out);
        pm_json_str(out, ev->requested);
        fprintf(out, ",\"period\":%" PRIu64 ",\"unit\":", ev->period);
        pm_json_str(out, ev->unit);
        fputs(",\"run\":{", out);
        pm_pj_cell(out, p, pm_prof_cell(p, PM_PROF_RUN, e));
        fputs("},\"regions\":[", out);
        int first = 1;
        for (size_t r = 0; r < p->R; r++) {
            const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
            if (!c->samples && !c->lost && !c->throttled)
                continue;
            fputs(first ? "\n      {\"path\":" : ",\n      {\"path\":", out);
            first = 0;
            pm_json_str(out, d->regions[r].path);
            fprintf(out, ",\"row\":%zu,", r);
            pm_pj_cell(out, p, c);
            putc('}', out);
        }
        fputs("]}", out);
    }
    fputs("]}", out);
}
