/*
 * diff_text.c — `perfmark diff` as terminal text: per pair of regions one
 * line per metric (A, B, change, %, beyond spread), then the regions found
 * in one file only; and the regressions as messages.
 */
#include "render/diff_render.h"
#include "render/common/render_common.h"

#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Integers with thousands separators; other values with 4 digits. */
static void pm_fmt_num(char *buf, size_t len, double v, int sign)
{
    char digits[64], *p = buf;
    size_t n, lead;
    double a = fabs(v);

    if (!(a < 1e18) || a != floor(a)) {
        snprintf(buf, len, sign ? "%+.4g" : "%.4g", v);
        return;
    }
    snprintf(digits, sizeof digits, "%.0f", a);
    n = strlen(digits);
    lead = n % 3 ? n % 3 : 3;
    if (len < 2 * n + 2) {
        snprintf(buf, len, "%.4g", v);
        return;
    }
    if (v < 0)
        *p++ = '-';
    else if (sign && v > 0)
        *p++ = '+';
    for (size_t i = 0; i < n; i++) {
        if (i >= lead && (i - lead) % 3 == 0)
            *p++ = ',';
        *p++ = digits[i];
    }
    *p = '\0';
}

static void pm_fmt_time(char *buf, size_t len, double ns, int sign)
{
    double a = fabs(ns);
    const char *f = sign ? "%+.1f %s" : "%.1f %s";

    if (a < 1e3)
        snprintf(buf, len, sign ? "%+.0f ns" : "%.0f ns", ns);
    else if (a < 1e6)
        snprintf(buf, len, f, ns / 1e3, "us");
    else if (a < 1e9)
        snprintf(buf, len, f, ns / 1e6, "ms");
    else
        snprintf(buf, len, sign ? "%+.3f %s" : "%.3f %s", ns / 1e9, "s");
}

static void pm_fmt_metric(char *buf, size_t len, const struct pm_diff_metric *m, double v, int sign)
{
    if (m->kind == PM_DM_TIME)
        pm_fmt_time(buf, len, v, sign);
    else if (m->kind == PM_DM_IPC)
        snprintf(buf, len, sign ? "%+.3f" : "%.3f", v);
    else
        pm_fmt_num(buf, len, v, sign);
}

static void pm_fmt_side(char *buf, size_t len, const struct pm_diff_metric *m,
                        const struct pm_diff_side *s)
{
    char v[48];

    if (s->timer_only) {
        snprintf(buf, len, "timer only");
        return;
    }
    if (!s->has) {
        snprintf(buf, len, "n/a%s", s->untrusted ? "!" : "");
        return;
    }
    pm_fmt_metric(v, sizeof v, m, s->total, 0);
    snprintf(buf, len, "%s%s%s%s", s->estimate ? "~" : "", v, s->untrusted ? "!" : "",
             s->partial ? "*" : "");
}

static void pm_diff_text_cell(FILE *out, const struct pm_diff_metric *m, const struct pm_diff_cell *c)
{
    char a[64], b[64], ch[64] = "-", rel[32] = "-";
    const char *beyond = c->beyond < 0 ? "-" : c->beyond ? "yes" : "no";

    pm_fmt_side(a, sizeof a, m, &c->s[0]);
    pm_fmt_side(b, sizeof b, m, &c->s[1]);
    if (c->has_change)
        pm_fmt_metric(ch, sizeof ch, m, c->change, 1);
    if (c->rel_kind == 1)
        snprintf(rel, sizeof rel, "%+.1f%%", c->rel);
    else if (c->rel_kind == 2)
        snprintf(rel, sizeof rel, "new");
    fprintf(out, "  ");
    pm_text_name(out, m->name, 22);
    fprintf(out, "%*s %14s %14s %15s %9s  %s%s\n",
            (int)(strlen(m->name) < 22 ? 22 - strlen(m->name) : 0), "", a, b, ch, rel, beyond,
            c->regressed ? "  REGRESSION" : "");
}

static void pm_text_file(FILE *out, const char *label, const struct pm_diff_file *f)
{
    size_t used = 0;

    fprintf(out, "%s: ", label);
    pm_text_name(out, f->path, 70);
    fprintf(out, " (%zu thread%s", f->d.T, f->d.T == 1 ? "" : "s");
    if (f->d.ranks > 1)
        fprintf(out, ", %d ranks", (int)f->d.ranks);
    fprintf(out, ")\n   events: %s", f->d.E ? "" : "none");
    /* the list stays on one line of at most 100 columns */
    for (size_t e = 0; e < f->d.E; e++) {
        size_t n = strlen(f->d.events[e].name) + 1;

        if (used + n > 80) {
            fprintf(out, " ... (%zu in all)", f->d.E);
            break;
        }
        if (e)
            putc(',', out);
        pm_text_name(out, f->d.events[e].name, 80);
        used += n;
    }
    putc('\n', out);
    if (f->d.summary)
        fprintf(out, "   a summary file: its regions compared across all %d ranks from its "
                "statistics; its whole run's totals\n   and samples are not in it (n/a)\n",
                (int)f->d.ranks);
}

/* The sampled profiles: per event, each region's functions whose share of
 * its samples moved by at least PM_DIFF_SHARE_SHOWN (2 points), most first. */
#define PM_DIFF_SHARE_SHOWN 0.02
#define PM_DIFF_SHARE_ROWS 5

static void pm_diff_text_profiles(FILE *out, const struct pm_diff *df)
{
    const struct pm_diff_profile *dp = df->prof;
    if (!dp)
        return;
    for (size_t e = 0; e < dp->nev; e++) {
        const struct pm_dprof_event *ev = &dp->ev[e];
        int header = 0;
        for (size_t i = 0; i < ev->nreg; i++) {
            const struct pm_dprof_region *reg = &ev->reg[i];
            const char *path = pm_diff_pair_path(df, &df->pairs[reg->pair]);
            size_t shown = 0;
            for (size_t k = 0; k < reg->nfn && shown < PM_DIFF_SHARE_ROWS; k++) {
                const struct pm_dprof_fn *f = &reg->fn[k];
                if (fabs(f->change) < PM_DIFF_SHARE_SHOWN)
                    continue;
                if (!header) {
                    fprintf(out, "\nsampled %s: functions whose share of the region's samples "
                            "moved by %.0f points or more (shares are estimates; '<' = below "
                            "the file's top list)\n", ev->name, 100 * PM_DIFF_SHARE_SHOWN);
                    fprintf(out, "  %-40s %8s %8s %9s\n", "function", "A", "B", "change");
                    header = 1;
                }
                if (!shown) {
                    if (path)
                        pm_text_name(out, path, 80);
                    else
                        fputs("(whole run)", out);
                    fprintf(out, "  (%" PRIu64 " → %" PRIu64 " samples)\n", reg->samples[0],
                            reg->samples[1]);
                }
                shown++;
                fputs("  ", out);
                pm_text_cell(out, f->label, 40, PM_LEFT);
                for (int s = 0; s < 2; s++) {
                    if (f->listed[s])
                        fprintf(out, " %7.1f%%", 100.0 * f->share[s]);
                    else
                        fprintf(out, " %8s", "<");
                }
                fprintf(out, " %+8.1f pts\n", 100.0 * f->change);
            }
        }
        if (!header)
            fprintf(out, "\nsampled %s: no function's share of a region moved by %.0f points or "
                    "more\n", ev->name, 100 * PM_DIFF_SHARE_SHOWN);
    }
}

void pm_render_diff_text(FILE *out, const struct pm_diff *df)
{
    int only_hdr[2] = {0, 0};

    fprintf(out, "perfmark diff\n");
    pm_text_file(out, "A", &df->f[0]);
    pm_text_file(out, "B", &df->f[1]);
    fprintf(out, "change = B - A; %% of A; beyond spread = the mean per %s changed by more\n"
            "than max - min over %ss in A or B. ~ estimate, ! untrusted (counts lost).\n",
            df->by_rank ? "rank" : "thread", df->by_rank ? "rank" : "thread");
    if (df->measuring)
        fputs("A time with ~ is extrapolated from sampled visits (MPI polls); * = counts of\n"
              "the visits before the throttle only (THROTTLED); timer only = no counter read\n"
              "(TIMER_ONLY): no count to compare.\n", out);
    if (df->has_threshold)
        fprintf(out, "threshold: %s regresses by more than %g%%\n", df->m[df->mshow].name,
                df->threshold);
    fprintf(out, "\n  %-22s %14s %14s %15s %9s  %s\n", "metric", "A", "B", "change", "%",
            "beyond spread");
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];
        const char *path = pm_diff_pair_path(df, pr);

        if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE)
            continue;
        if (!path) {
            fprintf(out, "(whole run)\n");
        } else {
            pm_text_name(out, path, 80);
            if (strcmp(pm_diff_pair_kind(df, pr), "user") != 0 && *pm_diff_pair_kind(df, pr)) {
                fprintf(out, " [");
                pm_text_name(out, pm_diff_pair_kind(df, pr), 10);
                fprintf(out, "]");
            }
            putc('\n', out);
        }
        for (size_t m = 0; m < df->nm; m++)
            if (pm_diff_shown(df, pr, m))
                pm_diff_text_cell(out, &df->m[m], &df->cells[p * df->nm + m]);
    }
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];
        int fi = pr->row[0] == PM_DIFF_NONE ? 1 : 0;

        if (pr->row[0] != PM_DIFF_NONE && pr->row[1] != PM_DIFF_NONE)
            continue;
        if (!only_hdr[fi]) {
            fprintf(out, "\nregions only in %s:\n", fi ? "B" : "A");
            only_hdr[fi] = 1;
        }
        fprintf(out, "  ");
        pm_text_name(out, pm_diff_pair_path(df, pr), 90);
        putc('\n', out);
    }
    pm_diff_text_profiles(out, df);
    if (df->has_threshold)
        fprintf(out, "\n%zu regression%s beyond %g%% in %s\n", df->nregress,
                df->nregress == 1 ? "" : "s", df->threshold, df->m[df->mshow].name);
}

/* Each regression on one line of `out` (the command gives stderr). */
void pm_render_diff_regressions(FILE *out, const struct pm_diff *df)
{
    if (!df->has_threshold || df->mshow == PM_DIFF_NONE)
        return;
    for (size_t p = 0; p < df->npairs; p++) {
        const struct pm_diff_pair *pr = &df->pairs[p];
        const struct pm_diff_cell *c;
        const char *path = pm_diff_pair_path(df, pr);

        if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE)
            continue;
        c = &df->cells[p * df->nm + df->mshow];
        if (!c->regressed)
            continue;
        fprintf(out, "perfmark diff: regression: %s ", df->m[df->mshow].name);
        if (c->rel_kind == 1)
            fprintf(out, "%+.1f%%", c->rel);
        else
            fprintf(out, "from 0");
        fprintf(out, " (threshold %g%%) in ", df->threshold);
        if (path) {
            putc('\'', out);
            pm_text_name(out, path, 80);
            putc('\'', out);
        } else {
            fputs("the whole run", out);
        }
        putc('\n', out);
    }
}
