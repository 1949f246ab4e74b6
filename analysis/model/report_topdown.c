/*
 * report_topdown.c — TopDown per region and for the whole run (docs/topdown.md).
 *
 * The file stores raw counts per (thread, region) cell, never percentages.
 * A region's breakdown sums the TopDown events over its cells first (each
 * cell scaled by the per-cell rule, pm_cell_value), then converts the sums
 * with the method's pure function (runtime/count/pm_topdown.c) and divides by the
 * summed level-1 slots: a ratio of sums, so a short region of one thread
 * never weighs as much as a long one of another. Cells whose counts are
 * missing or too coarse (NOT_COUNTED, LOST_GENERATION, SHORT) are left out of
 * the sums and counted, so that the report can say what the ratios rest on.
 */
#include "model/report_topdown.h"

#include "model/report_count.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's PERF_METRICS encodings (arch/x86/include/asm/perf_event.h):
 * `slots` is fixed counter 3, raw config 0x400; metric k (PERF_METRICS byte
 * k, enum pm_td_metric order) is the pseudo event 0x8000 + 0x100 × k. They
 * are matched by encoding rather than by name because libpfm4 has no names
 * for them (the table writes perf_raw::r8000, whose fstr loses the config). */
#define PM_TD_RAW_TYPE 4u /* PERF_TYPE_RAW */
#define PM_TD_RAW_SLOTS 0x400u
#define PM_TD_RAW_METRIC(k) (0x8000u + 0x100u * (unsigned)(k))

static const struct {
    const char *name; /* the topdown_method attribute */
    enum pm_td_method method;
} pm_td_methods[] = {
    {"perf_metrics", PM_TD_METHOD_PERF_METRICS},
    {"skylake", PM_TD_METHOD_SKYLAKE},
    {"zen4", PM_TD_METHOD_ZEN4},
    {"arm", PM_TD_METHOD_ARM},
    {"atom", PM_TD_METHOD_ATOM},
};

const char *pm_td_out_name(enum pm_td_out k)
{
    static const char *const names[PM_TD_NOUT] = {"NOT_COUNTED", "LOST_GENERATION", "SHORT"};

    return (unsigned)k < PM_TD_NOUT ? names[k] : "?";
}

size_t pm_td_left_out(const struct pm_tdstat *s)
{
    size_t n = 0;

    for (int k = 0; k < PM_TD_NOUT; k++)
        n += s->left_out[k];
    return n;
}

int pm_td_node_shown(const struct pm_tdreport *td, enum pm_td_node n)
{
    if (n == PM_TD_N_SMT_CONTENTION) /* AMD's fifth category; Intel has none */
        return td->method == PM_TD_METHOD_ZEN4;
    return n < PM_TD_N_SMT_CONTENTION || td->levels >= 2;
}

/* ------------------------------------------------------ event matching */

static int pm_td_find_raw(const struct pm_file *d, uint64_t config, size_t *row)
{
    for (size_t e = 0; e < d->E; e++)
        if (d->events[e].type == PM_TD_RAW_TYPE && d->events[e].config == config) {
            *row = e;
            return 0;
        }
    return -1;
}

/* A libpfm4 modifier that leaves what is counted alone: a privilege-level or
 * virtualisation filter (the runtime itself adds :u under a strict
 * perf_event_paranoid), or any modifier at its default 0. Others (c=1 cmask,
 * e=1 edge, i=1 invert, ...) make another event of the same name. */
static int pm_td_neutral_modifier(const char *m, size_t len)
{
    static const char *const filters[] = {"u", "k", "h", "mg", "mh"};
    const char *eq = memchr(m, '=', len);

    if (!eq)
        return 0;
    if (eq + 2 == m + len && eq[1] == '0')
        return 1;
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
        if (strlen(filters[i]) == (size_t)(eq - m) && strncmp(m, filters[i], (size_t)(eq - m)) == 0)
            return 1;
    return 0;
}

/* Does /events row `ev` count the table event whose qualified name (as
 * pm_cpu_model_event_name gives it) is `q`? The runtime names a topdown
 * group's events exactly so. An event requested under another spelling
 * still matches when libpfm4's fully qualified pfm_name is `q` followed only
 * by neutral modifiers (libpfm4 writes every "name=value" after the unit
 * masks); a longer unit-mask list or a counting modifier is another event. */
int pm_event_matches(const char *q, const struct pm_file_event *ev)
{
    size_t n = strlen(q);
    const char *p;

    if (strcmp(ev->name, q) == 0)
        return 1;
    if (strncmp(ev->pfm_name, q, n) != 0)
        return 0;
    p = ev->pfm_name + n;
    while (*p == ':') {
        const char *next = strchr(p + 1, ':');
        size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);

        if (!pm_td_neutral_modifier(p + 1, len))
            return 0;
        p += 1 + len;
    }
    return *p == '\0';
}

/* The /events rows of the topdown group of the file's cpu_model, in the
 * table's order (the order pm_td_from_skylake / pm_td_from_zen4 /
 * pm_td_from_arm / pm_td_from_atom take). The
 * first matching row wins when an event was measured twice. */
static int pm_td_find_model(struct pm_tdreport *td, const struct pm_file *d)
{
    const struct pm_cpu_model *m = pm_cpu_model_find(d->cpu_model);
    const struct pm_model_group *g = pm_cpu_model_group(m, PM_GROUP_TOPDOWN);

    if (!g || m->td_method != td->method ||
        (td->method == PM_TD_METHOD_ARM && (m->td_slots_per_cycle <= 0 ||
                                            pm_model_group_nevents(g) !=
                                                (m->td_fe_mispred_cycles ? 7 : 6))) ||
        (td->method == PM_TD_METHOD_ATOM &&
         (m->td_slots_per_cycle <= 0 || pm_model_group_nevents(g) != 5))) {
        snprintf(td->problem, sizeof td->problem,
                 "this reader has no %s TopDown table for cpu_model '%.40s'",
                 d->topdown_method, d->cpu_model);
        return -1;
    }
    /* Zen 4/5: six level-1 events, then six level-2 ones; a file written
     * for level 1 (or before level 2 existed) reads the first six only */
    int need = td->method == PM_TD_METHOD_ZEN4 ? PM_TD_ZEN4_L1_EVENTS : pm_model_group_nevents(g);
    int want = td->levels >= 2 ? pm_model_group_nevents(g) : need;
    for (int i = 0; i < want; i++) {
        char q[256];
        size_t e = 0;

        int named = pm_cpu_model_event_name(m, g->events[i].pfm, q, sizeof q) == 0;

        while (named && e < d->E && !pm_event_matches(q, &d->events[e]))
            e++;
        if (named && e < d->E) {
            td->ev[td->nev++] = e;
        } else if (i < need) {
            snprintf(td->problem, sizeof td->problem, "event %.150s is not in /events", q);
            return -1;
        } else { /* a level-2 event missing (not opened): level 1 stands */
            snprintf(td->note, sizeof td->note, "level 2 not shown: %.60s is not in /events",
                     g->events[i].label);
            td->levels = 1;
            td->nev = (size_t)need;
            break;
        }
    }
    return 0;
}

/* slots and the metrics by raw config. A missing level-2 metric (a kernel
 * that lacks it) leaves level 1 standing: the report drops to level 1 and
 * says why; a missing level-1 event leaves nothing. */
static int pm_td_find_perf_metrics(struct pm_tdreport *td, const struct pm_file *d)
{
    static const char *const names[1 + PM_TD_NBYTES] = {
        "slots", "topdown-retiring", "topdown-bad-spec", "topdown-fe-bound", "topdown-be-bound",
        "topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound"};

    for (size_t i = 0; i < 1 + 4 * (size_t)td->levels; i++) {
        uint64_t config = i == 0 ? PM_TD_RAW_SLOTS : PM_TD_RAW_METRIC(i - 1);

        if (pm_td_find_raw(d, config, &td->ev[i]) == 0)
            continue;
        if (i < 5) {
            snprintf(td->problem, sizeof td->problem, "no event of raw config 0x%llx (%s) in "
                     "/events", (unsigned long long)config, names[i]);
            return -1;
        }
        snprintf(td->note, sizeof td->note, "level 2 not shown: no event of raw config 0x%llx "
                 "(%s) in /events", (unsigned long long)config, names[i]);
        td->levels = 1;
    }
    td->nev = 1 + 4 * (size_t)td->levels;
    return 0;
}

/* Which method, how many levels, which events: 0, or -1 with td->problem. */
static int pm_td_setup(struct pm_tdreport *td, const struct pm_file *d)
{
    size_t i = 0;

    while (i < sizeof pm_td_methods / sizeof *pm_td_methods &&
           strcmp(pm_td_methods[i].name, d->topdown_method) != 0)
        i++;
    if (i == sizeof pm_td_methods / sizeof *pm_td_methods) {
        snprintf(td->problem, sizeof td->problem, "TopDown method '%.60s' is unknown to this reader",
                 d->topdown_method);
        return -1;
    }
    td->method = pm_td_methods[i].method;
    td->method_name = pm_td_methods[i].name;
    const struct pm_cpu_model *model = pm_cpu_model_find(d->cpu_model);
    td->hybrid = model && model->hybrid;
    /* Slots per cycle come from the model's row (6 on Zen 4, 8 on Zen 5,
     * 8 on Neoverse V1/V2, 6 on Crestmont):
     * pm_td_find_model refuses a file whose cpu_model has no row. */
    td->width = model ? (unsigned)model->td_slots_per_cycle : 0;
    td->mispred_cycles = model ? (unsigned)model->td_fe_mispred_cycles : 0;
    /* level 2: the four extra PERF_METRICS bytes, or Zen 4/5's six events */
    td->levels = (td->method == PM_TD_METHOD_PERF_METRICS || td->method == PM_TD_METHOD_ZEN4) &&
                         d->topdown_levels >= 2
                     ? 2
                     : 1;
    if (td->method == PM_TD_METHOD_PERF_METRICS)
        return pm_td_find_perf_metrics(td, d);
    return pm_td_find_model(td, d);
}

/* ------------------------------------------------------------- sums */

/* One cell: counts [E], enabled and running [G]. Left out (and counted) when
 * flagged NOT_COUNTED, LOST_GENERATION or SHORT, or when an event has no
 * estimate (its counters never ran: NOT_COUNTED by definition); else added.
 * A cell without visit, count or enabled time is no evidence and skipped. */
void pm_td_add_cell(const struct pm_tdreport *td, const struct pm_file *d, int visited,
                    uint32_t flags, const uint64_t *counts, const uint64_t *en,
                    const uint64_t *run, struct pm_tdstat *s, struct pm_td_sum *sum)
{
    static const uint32_t out_flag[PM_TD_NOUT] = {
        PM_FILE_FLAG_NOT_COUNTED, PM_FILE_FLAG_LOST_GENERATION, PM_FILE_FLAG_SHORT};
    double v[PM_MODEL_MAX_EVENTS];
    enum pm_vkind kind[PM_MODEL_MAX_EVENTS];
    int present = visited;

    for (size_t k = 0; k < td->nev; k++) {
        size_t g = (size_t)d->events[td->ev[k]].group;

        present |= counts[td->ev[k]] > 0 || en[g] > 0;
    }
    if (!present)
        return;
    for (int o = 0; o < PM_TD_NOUT; o++)
        if (flags & out_flag[o]) {
            s->left_out[o]++;
            return;
        }
    for (size_t k = 0; k < td->nev; k++) {
        size_t g = (size_t)d->events[td->ev[k]].group;

        kind[k] = pm_cell_value(counts[td->ev[k]], en[g], run[g], &v[k]);
        if (kind[k] == PM_V_NONE) {
            s->left_out[PM_TD_OUT_NOT_COUNTED]++;
            return;
        }
    }
    for (size_t k = 0; k < td->nev; k++) {
        if (kind[k] == PM_V_ESTIMATE) {
            sum->scaled[k] = pm_fix_add(sum->scaled[k], pm_fix_of(v[k]));
            s->estimate = 1;
        } else {
            sum->exact[k] = pm_add_sat(sum->exact[k], counts[td->ev[k]]);
        }
    }
    /* On a hybrid CPU the group runs only while the thread is on a P-core:
     * running/enabled is the share of time the breakdown describes. */
    size_t g0 = (size_t)d->events[td->ev[0]].group;
    sum->enabled = pm_add_sat(sum->enabled, en[g0]);
    sum->running = pm_add_sat(sum->running, run[g0]);
    s->used++;
}

/* The summed events through the method's function, then the ratios. */
void pm_td_finish_stat(const struct pm_tdreport *td, const struct pm_td_sum *sum,
                       struct pm_tdstat *s)
{
    uint64_t v[PM_MODEL_MAX_EVENTS];

    for (size_t k = 0; k < td->nev; k++) {
        double r = floor(pm_fix_value(sum->scaled[k]) + 0.5);

        v[k] = pm_add_sat(sum->exact[k], r >= ldexp(1.0, 64) ? UINT64_MAX : (uint64_t)r);
    }
    if (td->method == PM_TD_METHOD_SKYLAKE) {
        struct pm_td_skl_counts c = {v[0], v[1], v[2], v[3], v[4]};

        pm_td_from_skylake(&c, &s->slots);
    } else if (td->method == PM_TD_METHOD_ZEN4) {
        struct pm_td_zen4_counts c = {.cycles = v[0], .fe_no_ops = v[1], .be_stalls = v[2],
                                      .smt_contention = v[3], .ops_dispatched = v[4],
                                      .ops_retired = v[5], .width = td->width, .levels = 1};

        if (td->levels >= 2 && td->nev >= 2 * PM_TD_ZEN4_L1_EVENTS) {
            c.levels = 2;
            c.fe_no_ops_all = v[6];
            c.brn_misp = v[7];
            c.resyncs = v[8];
            c.no_retire_load = v[9];
            c.no_retire_any = v[10];
            c.ucode_ops = v[11];
        }

        pm_td_from_zen4(&c, &s->slots);
    } else if (td->method == PM_TD_METHOD_ARM) {
        struct pm_td_arm_counts c = {v[0], v[1], v[2], v[3], v[4], v[5],
                                     td->nev > 6 ? v[6] : 0, td->width, td->mispred_cycles};

        pm_td_from_arm(&c, &s->slots);
    } else if (td->method == PM_TD_METHOD_ATOM) {
        struct pm_td_atom_counts c = {v[0], v[1], v[2], v[3], v[4], td->width};

        pm_td_from_atom(&c, &s->slots);
    } else {
        pm_td_from_group_values(v, td->nev, td->levels, &s->slots);
    }
    s->has_ratios = s->used > 0 && pm_td_breakdown(&s->slots, &s->br) == PM_TD_OK;
    s->has_pcore = td->hybrid && sum->enabled > 0;
    s->pcore_share = s->has_pcore ? (double)sum->running / (double)sum->enabled : 0.0;
}

int pm_report_topdown(struct pm_tdreport *td, const struct pm_file *d)
{
    td->on = d->topdown_method[0] != '\0';
    if (!td->on)
        return 0;
    if (pm_td_setup(td, d) < 0) {
        td->nev = 0; /* no partial event list */
        return 0;
    }
    td->reg = calloc(d->R ? d->R : 1, sizeof *td->reg);
    if (!td->reg)
        return -1;
    /* regions: their cells are summed block by block (report_stream.c) */
    /* the whole run: every thread from first sight to exit, outside regions
     * too, summed in the pass over the /thread totals (pm_report_setup) */
    return 0;
}
