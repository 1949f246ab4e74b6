/*
 * report_measure.c — which visits were measured, and what measuring cost
 * (docs/hdf5-schema.md, "Which visits read counters" and "What measuring
 * costs"): the time of a cell whose visits were sampled, exclusive time made
 * of those times, perfmark's own reads per cell and over the run, and the
 * regions whose counts are not their own (timer only) or partial
 * (throttled).
 *
 * Nothing here changes a stored number: a sampled cell's time is an
 * estimate shown as one (~), perfmark's part is printed beside the raw
 * numbers, never subtracted, and counts stay what the file holds.
 */
#include "model/report_measure.h"

#include "model/report_ranks.h"
#include "model/report_regstat.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define PM_NONE SIZE_MAX

enum pm_vkind pm_cell_time(uint64_t wall, uint64_t visits, uint64_t timed, uint64_t *ns)
{
    double v;

    if (timed >= visits) {
        *ns = wall;
        return PM_V_EXACT;
    }
    if (timed == 0) {
        *ns = 0;
        return PM_V_NONE;
    }
    /* the timed visits are a random sample of all (one in ~32 at a random
     * stride, after the first warm-up visits, which are all timed) */
    v = (double)wall * (double)visits / (double)timed + 0.5;
    *ns = v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
    return PM_V_ESTIMATE;
}

void pm_thread_times(const struct pm_file *d, const struct pm_cells *c, size_t t,
                     struct pm_ctime *out)
{
    size_t i0 = pm_cell_tr(d, c, t, 0);

    for (size_t r = 0; r < d->R; r++) {
        struct pm_ctime *o = &out[r];

        o->kind = (unsigned char)pm_cell_time(c->wall_ns[i0 + r], c->visits[i0 + r],
                                              c->timed_visits[i0 + r], &o->ns);
        /* until r is reached below: the sum of its children and their marks */
        o->excl = 0;
        o->excl_kind = PM_V_EXACT;
        o->excl_bad = 0;
    }
    /* rows are parent-first: a reverse pass has every child in before its
     * parent. A child closed by perfmark at exit may outlast its parent:
     * clamped at 0 */
    for (size_t r = d->R; r-- > 0;) {
        struct pm_ctime *o = &out[r];
        int32_t p = d->regions[r].parent;
        int child_est = o->excl_kind == PM_V_ESTIMATE;

        if (o->kind == PM_V_NONE) {
            o->excl = 0;
            o->excl_kind = PM_V_NONE;
        } else {
            o->excl = o->ns > o->excl ? o->ns - o->excl : 0;
            o->excl_kind = o->kind == PM_V_ESTIMATE || child_est ? PM_V_ESTIMATE : PM_V_EXACT;
        }
        if (p < 0)
            continue;
        out[p].excl = pm_add_sat(out[p].excl, o->ns);
        if (o->kind == PM_V_ESTIMATE)
            out[p].excl_kind = PM_V_ESTIMATE;
        if (o->kind == PM_V_NONE)
            out[p].excl_bad = 1;
    }
}

void pm_cell_own(uint64_t reads, uint64_t visits, uint64_t timer_visits, double cost_ns,
                 double *cpu_ns, double *wall_ns)
{
    /* the kernel samples the counters in the middle of a reading: a counted
     * visit holds half of its enter and half of its exit reading in its CPU
     * time, and every reading nested inside it in full; its wall time
     * leaves its own two out */
    uint64_t counted = visits > timer_visits ? visits - timer_visits : 0;

    *cpu_ns = (double)pm_add_sat(reads, counted) * cost_ns;
    *wall_ns = (double)reads * cost_ns;
}

/* The event that counts CPU time, as the runtime picks it for OVERHEAD
 * (runtime/file/pm_h5out.c): task-clock, else cpu-clock. */
void pm_measure_setup(struct pm_measure *m, const struct pm_file *d)
{
    static const char *const names[] = {"task-clock", "cpu-clock"};

    m->measuring = d->has_visit_data || d->has_read_cost || d->throttle[0] != '\0';
    m->ev_cpu_time = PM_NONE;
    for (size_t k = 0; k < sizeof names / sizeof *names && m->ev_cpu_time == PM_NONE; k++)
        for (size_t e = 0; e < d->E && m->ev_cpu_time == PM_NONE; e++)
            if (strcmp(d->events[e].name, names[k]) == 0)
                m->ev_cpu_time = e;
}

void pm_measure_thread(struct pm_measure *m, const struct pm_totals *b, size_t t)
{
    size_t i = t - b->t0;
    double cost = b->read_cost_ns[i];

    m->run_reads = pm_add_sat(m->run_reads, b->reads[i]);
    m->run_thread_ns = pm_add_sat(m->run_thread_ns, b->wall_ns[i]);
    if (!(cost > 0) || !isfinite(cost))
        return;
    m->run_reads_sum = pm_fix_add(m->run_reads_sum, pm_fix_of((double)b->reads[i] * cost));
    if (!m->has_read_cost || cost < m->cost_min)
        m->cost_min = cost;
    if (!m->has_read_cost || cost > m->cost_max)
        m->cost_max = cost;
    m->has_read_cost = 1;
}

void pm_measure_run_done(struct pm_measure *m)
{
    m->run_reads_ns = pm_fix_value(m->run_reads_sum);
}

void pm_measure_join(struct pm_measure *a, const struct pm_measure *b)
{
    a->run_reads = pm_add_sat(a->run_reads, b->run_reads);
    a->run_thread_ns = pm_add_sat(a->run_thread_ns, b->run_thread_ns);
    a->run_reads_sum = pm_fix_add(a->run_reads_sum, b->run_reads_sum);
    if (b->has_read_cost) {
        if (!a->has_read_cost || b->cost_min < a->cost_min)
            a->cost_min = b->cost_min;
        if (!a->has_read_cost || b->cost_max > a->cost_max)
            a->cost_max = b->cost_max;
        a->has_read_cost = 1;
    }
}

/* A timer-only region's counts are the zeros of visits that never read the
 * counters: not a value of the region (its cost is in the enclosing one). */
static void pm_no_value(struct pm_evstat *s)
{
    uint64_t raw = s->raw;

    memset(s, 0, sizeof *s);
    s->raw = raw;
    s->max_index = s->min_index = PM_NONE;
}

void pm_measure_regions(struct pm_measure *m, const struct pm_file *d, struct pm_regstat *reg,
                        size_t timer_only_flag)
{
    size_t to = timer_only_flag;

    for (size_t r = 0; r < d->R; r++) {
        struct pm_regstat *s = &reg[r];

        m->time_est |= s->time_est > 0;
        m->time_na |= s->time_na > 0;
        s->timer_only = to != PM_NONE && s->nvisited > 0 && s->flag_cells[to] >= s->nvisited;
        if (s->timer_only)
            for (size_t e = 0; e < d->E; e++)
                pm_no_value(&s->ev[e]);
        if (m->ev_cpu_time != PM_NONE && !s->timer_only) {
            const struct pm_evstat *c = &s->ev[m->ev_cpu_time];

            if (c->has_total && c->total > 0) {
                s->has_own_share = 1;
                s->own_share = s->own_cpu_ns / c->total;
            }
        }
    }
}

void pm_measure_ranks(const struct pm_file *d, const struct pm_regstat *reg,
                      struct pm_xregion *xreg)
{
    if (!xreg)
        return;
    for (size_t r = 0; r < d->R; r++) {
        if (!reg[r].timer_only)
            continue;
        for (size_t e = 0; e < d->E; e++) {
            struct pm_xstat *x = &xreg[r].q[PM_Q_EVENTS + e];

            memset(x, 0, sizeof *x);
        }
    }
}
