/*
 * profile_text.c — the sampled profile in the terminal report (one section
 * of report_text.c's output, from the model's pm_profile): per sampled
 * event, the whole run and each region of the view with samples, its top
 * functions and source lines, share, estimated count and the spread across
 * ranks. Every estimate carries "~" and its ± (2/√n).
 */
#include "render/text/profile_text.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PM_PT_TOP 5     /* functions and lines shown per region */
#define PM_PT_NAME 34   /* columns of a function name */
#define PM_PT_LINES 3   /* source lines shown per region */
#define PM_PT_PATHS 3   /* call paths shown per region */

/* "~1.23 s" for a time event, "~4.56 M" for counts. */
static void pm_pt_estimate(char *buf, size_t len, const struct pm_prof_event *ev, double v)
{
    char num[40];
    if (strcmp(ev->unit, "ns") == 0)
        pm_unit_time(num, sizeof num, v);
    else
        pm_unit_count(num, sizeof num, v, " ");
    snprintf(buf, len, "~%s", num);
}

static void pm_pt_pct(char *buf, size_t len, double fraction)
{
    snprintf(buf, len, "%.1f%%", 100.0 * fraction);
}

/* "label f 12, g 3", or "label-" without any. */
static void pm_pt_edges(FILE *out, const struct pm_profile *p, const char *label,
                        const struct pm_prof_edge *e, size_t n)
{
    fputs(label, out);
    for (size_t k = 0; k < n; k++) {
        fputs(k ? ", " : "", out);
        pm_text_name(out, p->frame[e[k].frame], 60);
        fprintf(out, " %" PRIu64, e[k].samples);
    }
    fputs(n ? "" : "-", out);
}

/* The call paths as a graph: inclusive and self per function, then who
 * calls the functions with the most samples of their own, and whom they
 * call. */
static void pm_pt_calls(FILE *out, const struct pm_profile *p, const struct pm_prof_cell *c)
{
    const struct pm_prof_calls *g = c->calls;
    if (!g || !c->with_path)
        return;
    char pin[16], pself[16];
    fputs("    ", out);
    pm_text_cell(out, "function (over its call paths)", PM_PT_NAME, PM_LEFT);
    fprintf(out, " %9s %6s %8s %6s\n", "inclusive", "share", "self", "share");
    for (size_t i = 0; i < g->nincl && i < PM_PT_TOP; i++) {
        const struct pm_prof_incl *it = &g->incl[i];
        pm_pt_pct(pin, sizeof pin, (double)it->inclusive / (double)c->with_path);
        pm_pt_pct(pself, sizeof pself, (double)it->self / (double)c->with_path);
        fputs("    ", out);
        pm_text_cell(out, p->frame[it->frame], PM_PT_NAME, PM_LEFT);
        fprintf(out, " %9" PRIu64 " %6s %8" PRIu64 " %6s\n", it->inclusive, pin, it->self, pself);
    }
    if (g->passthrough)
        fprintf(out, "    (%zu frame(s) every path passes through, with no samples of their "
                "own, not listed)\n", g->passthrough);
    for (size_t i = 0; i < g->nhot; i++) {
        const struct pm_prof_hot *h = &g->hot[i];
        fputs("    ", out);
        pm_text_name(out, p->frame[h->frame], 60);
        pm_pt_edges(out, p, "  called from ", h->callers, h->ncallers);
        pm_pt_edges(out, p, "; calls ", h->callees, h->ncallees);
        fputc('\n', out);
    }
}

/* The base name of a source file ("" stays ""). */
static const char *pm_pt_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static void pm_pt_ranks(FILE *out, const struct pm_profile *p, double min, double mean,
                        double max, int32_t at)
{
    char a[32], b[32], c[32];
    if (!p->has_ranks || p->nranks < 2)
        return;
    pm_unit_count(a, sizeof a, min, "");
    pm_unit_count(b, sizeof b, mean, "");
    pm_unit_count(c, sizeof c, max, "");
    fprintf(out, "  %6s %6s %6s %5.2f r%d", a, b, c, mean > 0 ? max / mean : 0.0, (int)at);
}

static void pm_pt_cell(FILE *out, const struct pm_report *rep, const struct pm_profile *p,
                       size_t e, size_t r, const char *name)
{
    const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
    const struct pm_prof_event *ev = &p->ev[e];
    char est[48], pct[16];
    if (!c->samples && !c->lost && !c->throttled)
        return;
    pm_pt_estimate(est, sizeof est, ev, c->estimate);
    fputc('\n', out);
    pm_text_cell(out, name, PM_PT_NAME + 8, PM_LEFT);
    fprintf(out, " %8" PRIu64 " samples (%" PRIu64 " its own)  %s ±%.0f%%", c->samples, c->self,
            est, 100.0 * pm_prof_rel_error(c->samples));
    if (c->lost || c->throttled)
        fprintf(out, "  SAMPLES_LOST: %" PRIu64 " lost, throttled %" PRIu64 "x", c->lost,
                c->throttled);
    fputc('\n', out);
    if (!c->nfn)
        return;
    fputs("    ", out);
    pm_text_cell(out, "function", PM_PT_NAME, PM_LEFT);
    fprintf(out, " %-12s %8s %6s %11s", "object", "samples", "share", "estimate");
    if (p->has_ranks && p->nranks >= 2)
        fprintf(out, "  %6s %6s %6s %5s %s", "r.min", "r.mean", "r.max", "max/m", "at");
    fputc('\n', out);
    for (size_t i = 0; i < c->nfn && i < PM_PT_TOP; i++) {
        const struct pm_prof_item *it = &c->fn[i];
        const struct pm_prof_fn *f = &p->fn[it->id];
        fputs("    ", out);
        pm_text_cell(out, f->label, PM_PT_NAME, PM_LEFT);
        fputc(' ', out);
        pm_text_cell(out, f->object, 12, PM_LEFT);
        pm_pt_pct(pct, sizeof pct, it->share);
        pm_pt_estimate(est, sizeof est, ev, it->estimate);
        fprintf(out, " %8" PRIu64 " %6s %11s", it->samples, pct, est);
        pm_pt_ranks(out, p, it->rank_min, it->rank_mean, it->rank_max, it->rank_max_at);
        fputc('\n', out);
    }
    if (c->nfn > PM_PT_TOP)
        fprintf(out, "    (%zu more functions in the JSON report)\n", c->nfn - PM_PT_TOP);
    for (size_t i = 0; i < c->nline && i < PM_PT_LINES; i++) {
        const struct pm_prof_item *it = &c->line[i];
        const struct pm_prof_line *l = &p->line[it->id];
        char where[256];
        if (strcmp(l->label, "?") != 0)
            snprintf(where, sizeof where, "%s", pm_pt_base(l->label));
        else
            snprintf(where, sizeof where, "%s (no line)", p->fn[l->fn].label);
        pm_pt_pct(pct, sizeof pct, it->share);
        pm_pt_estimate(est, sizeof est, ev, it->estimate);
        fputs(i ? "    " : "    line ", out);
        if (i)
            fputs("     ", out);
        pm_text_cell(out, where, PM_PT_NAME - 5, PM_LEFT);
        fprintf(out, " %-12s %8" PRIu64 " %6s %11s\n", "", it->samples, pct, est);
    }
    /* call paths (sampled with --sample-callchain): share, then the path in
     * full on the rest of the line, outermost caller first */
    for (size_t i = 0; i < c->npath && i < PM_PT_PATHS; i++) {
        const struct pm_prof_item *it = &c->path[i];
        pm_pt_pct(pct, sizeof pct, it->share);
        fprintf(out, "%s%8" PRIu64 " %6s  ", i ? "               " : "    call path  ",
                it->samples, pct);
        pm_text_name(out, p->path[it->id], 400);
        fputc('\n', out);
    }
    pm_pt_calls(out, p, c);
    if (p->chains && c->samples > c->with_path)
        fprintf(out, "    %" PRIu64 " sample(s) (%.1f%%) without callers: none could be found\n",
                c->samples - c->with_path,
                100.0 * (double)(c->samples - c->with_path) / (double)c->samples);
    (void)rep;
}

/* How the callers were found, in one sentence. */
static void pm_pt_chain_mode(FILE *out, const struct pm_file *d, const struct pm_profile *p)
{
    if (!p->chains)
        return;
    if (strcmp(d->sample_callchain, "dwarf") == 0)
        fprintf(out, "call paths: DWARF unwinding of up to %" PRIu32 " bytes of each sample's "
                "user stack (the objects' call-frame information)\n", d->sample_stack_bytes);
    else
        fputs("call paths: frame pointers, walked by the kernel (code built without them "
              "gives short or wrong paths: --sample-callchain dwarf unwinds instead)\n", out);
}

/* Counting by sampling: each region's counts are the estimates of its
 * samples, one table per event, before the functions. */
static void pm_pt_counts(FILE *out, const struct pm_report *rep, const struct pm_profile *p)
{
    const struct pm_file *d = rep->d;
    fputs("\nCounts by sampling (perfmark run --count sampled): markers read no counters; a "
          "region's count is its\nsamples (its own and those of the regions inside it) x the "
          "period: an estimate (~), ± its 95 % error 2/√n\n", out);
    for (size_t e = 0; e < p->S; e++) {
        const struct pm_prof_event *ev = &p->ev[e];
        char head[160], est[48];
        snprintf(head, sizeof head, "%s (%s)", ev->name, ev->requested);
        fputc('\n', out);
        pm_text_cell(out, head, PM_PT_NAME + 8, PM_LEFT);
        fprintf(out, " %9s %12s %7s\n", "samples", "estimate", "±");
        for (size_t i = 0; i <= rep->view.nrows; i++) {
            size_t r = i < rep->view.nrows ? rep->view.rows[i] : PM_PROF_RUN;
            const struct pm_prof_cell *c = pm_prof_cell(p, r, e);
            const char *name = r == PM_PROF_RUN ? "(whole run)" : d->regions[r].path;
            pm_text_cell(out, name[0] ? name : "\"\"", PM_PT_NAME + 8, PM_LEFT);
            pm_pt_estimate(est, sizeof est, ev, c->estimate);
            char err[16] = "-";
            if (c->samples)
                snprintf(err, sizeof err, "%.0f%%", 100.0 * pm_prof_rel_error(c->samples));
            fprintf(out, " %9" PRIu64 " %12s %7s%s\n", c->samples, c->samples ? est : "-", err,
                    c->lost || c->throttled ? "  SAMPLES_LOST" : "");
        }
    }
}

void pm_render_text_profile(FILE *out, const struct pm_report *rep)
{
    const struct pm_profile *p = rep->profile;
    if (!p)
        return;
    const struct pm_file *d = rep->d;
    if (d->sample_counting)
        pm_pt_counts(out, rep, p);
    for (size_t e = 0; e < p->S; e++) {
        const struct pm_prof_event *ev = &p->ev[e];
        char per[48];
        if (strcmp(ev->unit, "ns") == 0)
            pm_unit_time(per, sizeof per, (double)ev->period);
        else
            pm_unit_count(per, sizeof per, (double)ev->period, " ");
        fprintf(out, "\nSamples of %s (%s): one every %s %s; estimates (~) are samples x "
                "period, ± the 95 %% error 2/√n\n",
                ev->name, ev->requested, per, strcmp(ev->unit, "ns") == 0 ? "of CPU time" : "events");
        fputs("a region holds its own samples and those of the regions inside it", out);
        if (p->has_ranks && p->nranks >= 2)
            fputs("; r.min/r.mean/r.max: a rank's samples (the sum over its threads), at: the "
                  "rank of the max", out);
        fputs("\n", out);
        pm_pt_chain_mode(out, d, p);
        pm_pt_cell(out, rep, p, e, PM_PROF_RUN, "(whole run)");
        const struct pm_prof_cell *root = pm_prof_cell(p, PM_PROF_RUN, e);
        if (root->self)
            fprintf(out, "  (%" PRIu64 " of them outside every region)\n", root->self);
        for (size_t i = 0; i < rep->view.nrows; i++) {
            size_t r = rep->view.rows[i];
            pm_pt_cell(out, rep, p, e, r, d->regions[r].path[0] ? d->regions[r].path : "\"\"");
        }
    }
    if (p->bad_rows)
        fprintf(out, "\n%" PRIu64 " sample rows name a thread, region, event or object the file "
                "does not have: left out\n", p->bad_rows);
    if (!p->has_ranks && p->nranks >= 2)
        fputs("\nThe samples are not stored in rank order: their spread across ranks is not "
              "shown\n", out);
    for (size_t i = 0; i < p->nnotes; i++) {
        fputs(i ? "" : "\n", out);
        fputs("symbols: ", out);
        pm_text_name(out, p->notes[i], 400);
        fputc('\n', out);
    }
}
