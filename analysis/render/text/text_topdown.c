/*
 * text_topdown.c — the TopDown section of the terminal report: level 1 (and
 * 2) shares per region, what the ratios rest on, and on a hybrid CPU how much
 * of the time the P-cores counted.
 */
#include "render/text/text_topdown.h"
#include "render/text/text_fmt.h"
#include "render/common/render_common.h"

#include <stdio.h>

#define PM_TD_RUN_LABEL "(whole run: thread totals)"

/* One TopDown cell: the share of node n with ~ for an estimate; without a
 * ratio, SHORT when every cell was left out as SHORT, n/a when cells were
 * left out for other reasons too, - when there was nothing to count. */
static void pm_fmt_td(char *buf, size_t len, const struct pm_tdstat *s, enum pm_td_node n)
{
    size_t out = pm_td_left_out(s);

    if (s->has_ratios)
        snprintf(buf, len, "%.1f%%%s", s->br.ratio[n] * 100.0, s->estimate ? "~" : "");
    else if (s->used == 0 && out > 0 && out == s->left_out[PM_TD_OUT_SHORT])
        snprintf(buf, len, "SHORT");
    else
        snprintf(buf, len, "%s", out > 0 ? "n/a" : "-");
}

/* One row of the level-1 table (slot count, the level-1 categories, cells
 * left out) or of the level-2 table (the level-2 categories); g NULL is the
 * whole run. */
static void pm_text_td_row(FILE *out, const struct pm_report *rep, const struct pm_file_region *g,
                           const struct pm_tdstat *s, int level1)
{
    const int width = level1 ? 8 : 7, first = level1 ? 0 : PM_TD_N_HEAVY_OPS;
    const int last = level1 ? PM_TD_N_HEAVY_OPS : PM_TD_NNODES;
    char buf[32];

    if (g)
        pm_text_region_name(out, g);
    else
        pm_text_cell(out, PM_TD_RUN_LABEL, PM_NAME_W, PM_LEFT);
    if (level1) { /* the slots as a count like the event tables', ~ included */
        if (s->used)
            pm_fmt_value(buf, sizeof buf, 1, (double)s->slots.slots,
                         &(struct pm_evstat){.estimate = s->estimate}, 0);
        else
            snprintf(buf, sizeof buf, "-");
        fprintf(out, " %7s", buf);
    }
    for (int n = first; n < last; n++) {
        if (!pm_td_node_shown(&rep->td, (enum pm_td_node)n))
            continue;
        pm_fmt_td(buf, sizeof buf, s, (enum pm_td_node)n);
        fprintf(out, " %*s", width, buf);
    }
    if (level1 && pm_td_left_out(s))
        fprintf(out, " %8zu", pm_td_left_out(s));
    putc('\n', out);
}

static void pm_text_td_table(FILE *out, const struct pm_report *rep, int level1)
{
    const struct pm_file *d = rep->d;

    for (size_t i = 0; i < d->R; i++)
        pm_text_td_row(out, rep, &d->regions[rep->order[i]], &rep->td.reg[rep->order[i]], level1);
    pm_text_td_row(out, rep, NULL, &rep->td.run, level1);
}

/* What the TopDown ratios rest on: the cells left out, by reason. */
static void pm_text_td_notes(FILE *out, const struct pm_report *rep)
{
    const struct pm_tdreport *td = &rep->td;
    size_t by[PM_TD_NOUT] = {0}, total = 0;
    char buf[400];
    int n, estimate = td->run.estimate;

    for (size_t r = 0; r < rep->d->R; r++) {
        estimate |= td->reg[r].estimate;
        for (int k = 0; k < PM_TD_NOUT; k++)
            by[k] += td->reg[r].left_out[k];
    }
    for (int k = 0; k < PM_TD_NOUT; k++)
        total += by[k];
    pm_text_wrap(out, "ratio = slots of the category / all level-1 slots, both summed over the "
                      "region's cells (threads) before dividing: never a mean of percentages", 0);
    if (estimate)
        pm_text_wrap(out, "~ = some cell was multiplexed: its counts are scaled by "
                          "enabled/running before summing", 0);
    if (total) {
        n = snprintf(buf, sizeof buf, "left out = cells (thread x region) left out of the sums: "
                     "%zu in all:", total);
        for (int k = 0; k < PM_TD_NOUT && n > 0 && (size_t)n < sizeof buf; k++)
            if (by[k])
                n += snprintf(buf + n, sizeof buf - (size_t)n, " %s %zu,",
                              pm_td_out_name((enum pm_td_out)k), by[k]);
        if (n > 0 && (size_t)n < sizeof buf)
            buf[n - 1] = '.';
        pm_text_wrap(out, buf, 0);
        if (by[PM_TD_OUT_SHORT])
            pm_text_wrap(out, "SHORT = fewer than 1024 slots per counter read window: the 8-bit "
                              "metrics are too coarse for a ratio; a row shows SHORT when all "
                              "of the region's cells were SHORT", 0);
    }
    if (pm_td_left_out(&td->run) > 0) {
        snprintf(buf, sizeof buf, "%s: %zu thread%s left out (flagged)", PM_TD_RUN_LABEL,
                 pm_td_left_out(&td->run), pm_td_left_out(&td->run) == 1 ? "" : "s");
        pm_text_wrap(out, buf, 0);
    }
}

/* Hybrid CPUs: the breakdown describes P-core time only; say how much. */
static void pm_text_td_pcores(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    char buf[32];

    fputs("\nTopDown on a hybrid CPU: counted only while a thread ran on a P-core\n", out);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %12s %14s\n", "P-core time", "other cores");
    for (size_t i = 0; i <= d->R; i++) {
        const struct pm_tdstat *s = i < d->R ? &rep->td.reg[rep->order[i]] : &rep->td.run;

        if (i < d->R)
            pm_text_region_name(out, &d->regions[rep->order[i]]);
        else
            pm_text_cell(out, PM_TD_RUN_LABEL, PM_NAME_W, PM_LEFT);
        if (s->has_pcore) {
            snprintf(buf, sizeof buf, "%.1f%%", 100.0 * s->pcore_share);
            fprintf(out, " %12s", buf);
            snprintf(buf, sizeof buf, "%.1f%%", 100.0 * (1.0 - s->pcore_share));
            fprintf(out, " %14s\n", buf);
        } else {
            fprintf(out, " %12s %14s\n", "-", "-");
        }
    }
    pm_text_wrap(out, "P-core time = running / enabled time of the TopDown group, summed over "
                      "the cells the ratios use; the rest ran on other cores (E-cores count "
                      "none of these events) or, rarely, lost the counters to multiplexing. "
                      "The ratios describe the P-core time only: pin measured threads to "
                      "P-cores for a complete breakdown.", 0);
}

void pm_text_topdown(FILE *out, const struct pm_report *rep)
{
    static const char *const l2_head[] = {"retiring", "bad spec", "frontend", "backend"};
    const struct pm_tdreport *td = &rep->td;
    const struct pm_file *d = rep->d;
    char head[300];

    if (!td->on)
        return;
    snprintf(head, sizeof head, "TopDown (%s, level %s, %s): share of the pipeline slots per "
             "region", d->topdown_method, td->levels >= 2 ? "1-2" : "1",
             d->cpu_model[0] ? d->cpu_model : "model ?");
    putc('\n', out);
    pm_text_wrap(out, head, 0);
    if (td->problem[0]) {
        fputs("no breakdown: ", out);
        pm_text_wrap(out, td->problem, 14);
        return;
    }
    if (td->note[0])
        pm_text_wrap(out, td->note, 0);
    pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %7s %8s %8s %8s %8s", "slots", "retiring", "bad spec", "frontend", "backend");
    if (pm_td_node_shown(td, PM_TD_N_SMT_CONTENTION))
        fprintf(out, " %8s", "smt");
    fprintf(out, " %8s\n", "left out");
    pm_text_td_table(out, rep, 1);
    if (td->levels >= 2) {
        fputs("\nTopDown level 2: each level-1 category split in two (a measured part and the "
              "rest),\nshare of all slots\n", out);
        pm_spaces(out, PM_NAME_W);
        for (int k = 0; k < 4; k++)
            fprintf(out, "%16s", l2_head[k]);
        putc('\n', out);
        pm_text_cell(out, "region", PM_NAME_W, PM_LEFT);
        fprintf(out, " %7s %7s %7s %7s %7s %7s %7s %7s\n", "heavy", "light", "br-misp",
                "clears", "fe-lat", "fe-bw", "memory", "core");
        pm_text_td_table(out, rep, 0);
    }
    pm_text_td_notes(out, rep);
    if (td->hybrid)
        pm_text_td_pcores(out, rep);
}
