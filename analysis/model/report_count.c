/*
 * report_count.c — the counting rules of the report, in one place: the
 * value of a cell (pm_cell_value: scaled, an estimate, or none) and the
 * running statistics every table is made of (pm_acc: totals and the spread
 * over threads; pm_tacc: times; exact sums, exact_sum.h, joined in any
 * order). tests/report/check_report.py recomputes them independently.
 * Calls nothing else of the report: the model, the statistics across ranks
 * and TopDown all use it.
 */
#include "model/report_count.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define PM_NONE SIZE_MAX

/* The count of one cell for one event (schema "Counting model"): the raw sum
 * scaled by Σenabled/Σrunning of the event's group. running = 0 < enabled
 * means the counters never ran: there is no estimate. running >= enabled
 * (always-on software events, or clock noise) needs no scaling. */
enum pm_vkind pm_cell_value(uint64_t raw, uint64_t en, uint64_t run, double *v)
{
    if (run == 0 && en > 0)
        return PM_V_NONE;
    if (run >= en) {
        *v = (double)raw;
        return PM_V_EXACT;
    }
    *v = (double)raw * ((double)en / (double)run);
    return PM_V_ESTIMATE;
}

void pm_acc_add(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en, uint64_t run,
                int visited)
{
    pm_acc_add_at(s, a, raw, en, run, visited, PM_NONE);
}

/* Is (v, i) before (w, j) as the max: larger, or as large and a lower row? */
static int pm_max_before(double v, size_t i, double w, size_t j)
{
    return v > w || (v == w && i < j);
}

/* One cell of value v (kind k) into s; raw, en, run as the cell holds them. */
static void pm_acc_put(struct pm_evstat *s, struct pm_acc *a, enum pm_vkind k, double v,
                       uint64_t raw, uint64_t en, uint64_t run, int visited, size_t index)
{
    s->raw = pm_add_sat(s->raw, raw);
    a->en = pm_add_sat(a->en, en);
    a->run = pm_add_sat(a->run, run);
    /* a thread that never entered the region is no evidence either way: its
     * exact 0 must not turn a region without estimate into a total of 0 */
    if (!visited && raw == 0 && en == 0)
        return;
    if (k == PM_V_NONE) {
        s->n_na++;
        return;
    }
    if (k == PM_V_ESTIMATE)
        s->estimate = 1;
    /* integers (every exact count and time) go in without a round trip
     * through a double */
    pm_fix f = k == PM_V_EXACT ? pm_fix_of_count(raw) : pm_fix_of(v);
    a->total = pm_fix_add(a->total, f);
    a->nvals++;
    if (!visited)
        return;
    if (a->nspread == 0 || v < s->min || (v == s->min && index < a->min_index)) {
        s->min = v;
        a->min_index = index;
    }
    if (a->nspread == 0 || pm_max_before(v, index, s->max, a->max_index)) {
        s->max = v;
        a->max_index = index;
    }
    a->spread = pm_fix_add(a->spread, f);
    pm_fixsq_add(&a->sq, f);
    a->nspread++;
}

void pm_acc_add_at(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en,
                   uint64_t run, int visited, size_t index)
{
    double v = 0;
    enum pm_vkind k = pm_cell_value(raw, en, run, &v);

    pm_acc_put(s, a, k, v, raw, en, run, visited, index);
}

void pm_acc_add_time(struct pm_evstat *s, struct pm_acc *a, enum pm_vkind kind, uint64_t ns,
                     int visited, size_t index)
{
    /* no time (only a visiting cell can lack one) is like a count without an
     * estimate; times have no enabled/running share */
    pm_acc_put(s, a, kind, (double)ns, ns, 0, 0, visited, index);
}

void pm_acc_finish(struct pm_evstat *s, const struct pm_acc *a)
{
    s->has_total = !(s->n_na > 0 && a->nvals == 0);
    s->total = pm_fix_value(a->total);
    s->has_spread = a->nspread > 0;
    s->max_index = s->has_spread ? a->max_index : PM_NONE;
    s->min_index = s->has_spread ? a->min_index : PM_NONE;
    s->nspread = a->nspread;
    if (s->has_spread) {
        s->mean = pm_fix_mean(a->spread, a->nspread);
        s->sd = pm_fix_sd(a->spread, &a->sq, a->nspread);
        if (s->mean > 0) {
            s->has_imbalance = 1;
            s->imbalance = s->max / s->mean;
        }
    }
    if (s->n_na > 0)
        s->untrusted = 1;
    if (a->en > 0) {
        s->has_share = 1;
        s->share = (double)a->run / (double)a->en;
    }
}

void pm_acc_merge(struct pm_evstat *s, struct pm_acc *a, const struct pm_evstat *sb,
                  const struct pm_acc *ab)
{
    s->raw = pm_add_sat(s->raw, sb->raw);
    a->en = pm_add_sat(a->en, ab->en);
    a->run = pm_add_sat(a->run, ab->run);
    s->n_na += sb->n_na;
    s->estimate |= sb->estimate;
    s->untrusted |= sb->untrusted;
    a->total = pm_fix_add(a->total, ab->total);
    a->nvals += ab->nvals;
    if (ab->nspread == 0)
        return;
    if (a->nspread == 0 || sb->min < s->min ||
        (sb->min == s->min && ab->min_index < a->min_index)) {
        s->min = sb->min;
        a->min_index = ab->min_index;
    }
    if (a->nspread == 0 || pm_max_before(sb->max, ab->max_index, s->max, a->max_index)) {
        s->max = sb->max;
        a->max_index = ab->max_index;
    }
    a->spread = pm_fix_add(a->spread, ab->spread);
    pm_fixsq_merge(&a->sq, &ab->sq);
    a->nspread += ab->nspread;
}

/* --------------------------------------------------------- aggregation */

/* Ties of min and max go to the lower thread row, whatever the order. */
void pm_tacc_add(struct pm_tstat *s, struct pm_tacc *a, uint64_t u, size_t t)
{
    double v = (double)u;
    pm_fix f = pm_fix_of_count(u);

    if (s->n == 0 || v < s->min || (v == s->min && t < s->min_index)) {
        s->min = v;
        s->min_index = t;
    }
    if (s->n == 0 || pm_max_before(v, t, s->max, s->max_index)) {
        s->max = v;
        s->max_index = t;
    }
    s->n++;
    a->sum = pm_fix_add(a->sum, f);
    pm_fixsq_add(&a->sq, f);
}

void pm_tacc_merge(struct pm_tstat *s, struct pm_tacc *a, const struct pm_tstat *sb,
                   const struct pm_tacc *ab)
{
    if (sb->n == 0)
        return;
    if (s->n == 0 || sb->min < s->min || (sb->min == s->min && sb->min_index < s->min_index)) {
        s->min = sb->min;
        s->min_index = sb->min_index;
    }
    if (s->n == 0 || pm_max_before(sb->max, sb->max_index, s->max, s->max_index)) {
        s->max = sb->max;
        s->max_index = sb->max_index;
    }
    a->sum = pm_fix_add(a->sum, ab->sum);
    pm_fixsq_merge(&a->sq, &ab->sq);
    s->n += sb->n;
}

void pm_tacc_finish(struct pm_tstat *s, const struct pm_tacc *a)
{
    if (s->n == 0) {
        s->min_index = s->max_index = PM_NONE;
        return;
    }
    s->mean = pm_fix_mean(a->sum, s->n);
    s->sd = pm_fix_sd(a->sum, &a->sq, s->n);
    if (s->mean > 0) {
        s->has_imbalance = 1;
        s->imbalance = s->max / s->mean;
    }
}
