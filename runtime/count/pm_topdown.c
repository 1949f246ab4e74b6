/* TopDown arithmetic (see pm_topdown.h): every function here is pure so that
 * it can be proven against hand-worked vectors on a machine without a PMU. */
#include "pm_topdown.h"

#include "pm_rdpmc.h"

#include <string.h>

static int pm_td_nbytes(int levels) { return levels >= 2 ? PM_TD_NBYTES : 4; }

uint64_t pm_td_metric_slots(uint64_t slots, uint64_t perf_metrics, int idx)
{
    if (idx < 0 || idx >= PM_TD_NBYTES)
        return 0;
    uint64_t byte = (perf_metrics >> (8 * idx)) & 0xff;
    /* floor(slots × byte / 255) without a 128-bit product: with
     * slots = 255q + r, slots × byte = 255 q byte + r byte, and r byte < 255². */
    uint64_t q = slots / 255, r = slots % 255;
    return q * byte + (r * byte) / 255;
}

void pm_td_from_window(const struct pm_td_window *w, int levels, struct pm_td_slots *out)
{
    memset(out, 0, sizeof *out);
    out->levels = levels >= 2 ? 2 : 1;
    out->slots = w->slots;
    for (int i = 0; i < pm_td_nbytes(levels); i++)
        out->m[i] = pm_td_metric_slots(w->slots, w->metrics, i);
}

void pm_td_from_windows(const struct pm_td_window *w, size_t n, int levels,
                        struct pm_td_slots *out)
{
    memset(out, 0, sizeof *out);
    out->levels = levels >= 2 ? 2 : 1;
    for (size_t k = 0; k < n; k++) {
        struct pm_td_slots one;
        pm_td_from_window(&w[k], levels, &one);
        pm_td_add(out, &one);
    }
}

/* icl_get_topdown_value: the slots event counts slots, a metric event its
 * share of them. */
static uint64_t pm_td_event_value(int ev, uint64_t slots, uint64_t metrics)
{
    return ev == 0 ? slots : pm_td_metric_slots(slots, metrics, ev - 1);
}

void pm_td_kernel_update(struct pm_td_kcounts *k, int levels, uint64_t slots,
                         uint64_t metrics, uint64_t last_slots, uint64_t last_metrics)
{
    if (slots == 0)  /* intel_update_topdown_event returns early */
        return;
    for (int ev = 0; ev <= pm_td_nbytes(levels); ev++) {
        uint64_t delta = pm_td_event_value(ev, slots, metrics);
        uint64_t last = last_slots ? pm_td_event_value(ev, last_slots, last_metrics) : 0;
        /* A metric can shrink between updates (its byte dropped from 1 to
         * 0): the kernel skips the update rather than go backwards. */
        if (delta > last)
            k->count[ev] += delta - last;
    }
}

int pm_td_from_group_values(const uint64_t *v, size_t n, int levels, struct pm_td_slots *out)
{
    int nb = pm_td_nbytes(levels);
    memset(out, 0, sizeof *out);
    if (n != (size_t)(1 + nb))
        return -1;
    out->levels = levels >= 2 ? 2 : 1;
    out->slots = v[0];
    for (int i = 0; i < nb; i++)
        out->m[i] = v[1 + i];
    return 0;
}

void pm_td_rdpmc_sample(const struct pm_rdpmc_hooks *hooks, unsigned width,
                        struct pm_td_window *raw)
{
    uint64_t mask = width >= 64 || width == 0 ? ~0ull : (1ull << width) - 1;
    raw->slots = hooks->rdpmc(PM_TD_RDPMC_SLOTS) & mask;
    raw->metrics = hooks->rdpmc(PM_TD_RDPMC_METRICS);
}

void pm_td_rdpmc_value(const struct pm_td_kcounts *offset, const struct pm_td_window *raw,
                       int levels, struct pm_td_kcounts *out)
{
    *out = *offset;
    pm_td_rdpmc_fold(out, raw, levels);
}

void pm_td_rdpmc_fold(struct pm_td_kcounts *acc, const struct pm_td_window *raw, int levels)
{
    for (int ev = 0; ev <= pm_td_nbytes(levels); ev++)
        acc->count[ev] += pm_td_event_value(ev, raw->slots, raw->metrics);
}

uint64_t pm_td_enter_windows(uint64_t open_slots)
{
    if (open_slots == 0)
        return 0;
    /* ceil(2W/255) without overflow: W = 255q + r, 2W/255 = 2q + 2r/255 */
    uint64_t q = open_slots / 255, r = open_slots % 255;
    return 1 + 2 * q + (2 * r + 254) / 255;
}

uint64_t pm_td_visit_windows(uint64_t open_slots_at_enter, uint64_t resets_inside)
{
    return resets_inside + 1 + pm_td_enter_windows(open_slots_at_enter);
}

static uint64_t pm_td_sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void pm_td_from_skylake(const struct pm_td_skl_counts *c, struct pm_td_slots *out)
{
    memset(out, 0, sizeof *out);
    out->levels = 1;
    out->slots = 4 * c->cycles;
    out->m[PM_TD_FE_BOUND] = c->idq_not_delivered;
    out->m[PM_TD_BAD_SPEC] =
        pm_td_sat_sub(c->uops_issued + 4 * c->recovery_cycles, c->retire_slots);
    out->m[PM_TD_RETIRING] = c->retire_slots;
    out->m[PM_TD_BE_BOUND] =
        pm_td_sat_sub(out->slots, out->m[PM_TD_FE_BOUND] + out->m[PM_TD_BAD_SPEC] +
                                      out->m[PM_TD_RETIRING]);
}

/* floor(a × b / c) for b ≤ c, c > 0, exact for any 64-bit a (128-bit product). */
static uint64_t pm_td_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
    __extension__ typedef unsigned __int128 pm_u128;
    return (uint64_t)(((pm_u128)a * b) / c);
}

/* a × b / c as perf's d_ratio sees it: 0 where c is 0; b > c (skid,
 * multiplexing) counts as c, so that a child never exceeds its parent. */
static uint64_t pm_td_share_of(uint64_t a, uint64_t b, uint64_t c)
{
    return c == 0 ? 0 : pm_td_mul_div(a, b < c ? b : c, c);
}

static uint64_t pm_td_min(uint64_t a, uint64_t b) { return a < b ? a : b; }

void pm_td_from_zen4(const struct pm_td_zen4_counts *c, struct pm_td_slots *out)
{
    uint64_t width = c->width ? c->width : 6;

    memset(out, 0, sizeof *out);
    out->levels = 1;
    out->slots = width * c->cycles;
    out->m[PM_TD_FE_BOUND] = c->fe_no_ops;
    out->m[PM_TD_BE_BOUND] = c->be_stalls;
    out->m[PM_TD_SMT_CONTENTION] = c->smt_contention;
    out->m[PM_TD_BAD_SPEC] = pm_td_sat_sub(c->ops_dispatched, c->ops_retired);
    out->m[PM_TD_RETIRING] = c->ops_retired;
    if (c->levels < 2)
        return;
    out->levels = 2;
    out->m[PM_TD_FETCH_LAT] = pm_td_min(width * c->fe_no_ops_all, c->fe_no_ops);
    out->m[PM_TD_BR_MISPREDICT] =
        pm_td_share_of(out->m[PM_TD_BAD_SPEC], c->brn_misp, c->brn_misp + c->resyncs);
    out->m[PM_TD_MEM_BOUND] = pm_td_share_of(c->be_stalls, c->no_retire_load, c->no_retire_any);
    out->m[PM_TD_HEAVY_OPS] = pm_td_min(c->ucode_ops, c->ops_retired);
}

void pm_td_from_arm(const struct pm_td_arm_counts *c, struct pm_td_slots *out)
{
    memset(out, 0, sizeof *out);
    out->levels = 1;
    out->slots = (uint64_t)c->width * c->cycles;
    uint64_t used = pm_td_sat_sub(out->slots, c->stall_slot);
    uint64_t retiring = c->op_spec == 0 || c->op_retired >= c->op_spec
                            ? used
                            : pm_td_mul_div(used, c->op_retired, c->op_spec);
    uint64_t moved = (uint64_t)c->mispred_cycles * c->width * c->br_mis_pred;
    if (moved > c->stall_slot_frontend)
        moved = c->stall_slot_frontend;
    out->m[PM_TD_RETIRING] = retiring;
    out->m[PM_TD_BAD_SPEC] = used - retiring + moved;
    out->m[PM_TD_FE_BOUND] = c->stall_slot_frontend - moved;
    out->m[PM_TD_BE_BOUND] = c->stall_slot_backend;
}

void pm_td_from_atom(const struct pm_td_atom_counts *c, struct pm_td_slots *out)
{
    memset(out, 0, sizeof *out);
    out->levels = 1;
    out->slots = (uint64_t)c->width * c->cycles;
    out->m[PM_TD_RETIRING] = c->retiring;
    out->m[PM_TD_BAD_SPEC] = c->bad_spec;
    out->m[PM_TD_FE_BOUND] = c->fe_bound;
    out->m[PM_TD_BE_BOUND] = c->be_bound;
}

void pm_td_add(struct pm_td_slots *a, const struct pm_td_slots *b)
{
    a->slots += b->slots;
    for (int i = 0; i < PM_TD_NCOUNTS; i++)
        a->m[i] += b->m[i];
    if (b->levels < a->levels)
        a->levels = b->levels;
}

uint64_t pm_td_level1_total(const struct pm_td_slots *s)
{
    return s->m[PM_TD_RETIRING] + s->m[PM_TD_BAD_SPEC] + s->m[PM_TD_FE_BOUND] +
           s->m[PM_TD_BE_BOUND] + s->m[PM_TD_SMT_CONTENTION];
}

/* Each level-2 pair: node of the measured child, its metric, its parent. */
static const struct {
    enum pm_td_node child, sibling;
    enum pm_td_metric child_metric, parent;
} pm_td_pairs[] = {
    {PM_TD_N_HEAVY_OPS, PM_TD_N_LIGHT_OPS, PM_TD_HEAVY_OPS, PM_TD_RETIRING},
    {PM_TD_N_BR_MISPREDICT, PM_TD_N_MACHINE_CLEARS, PM_TD_BR_MISPREDICT, PM_TD_BAD_SPEC},
    {PM_TD_N_FETCH_LAT, PM_TD_N_FETCH_BW, PM_TD_FETCH_LAT, PM_TD_FE_BOUND},
    {PM_TD_N_MEM_BOUND, PM_TD_N_CORE_BOUND, PM_TD_MEM_BOUND, PM_TD_BE_BOUND},
};

uint64_t pm_td_node_slots(const struct pm_td_slots *s, enum pm_td_node node)
{
    static const enum pm_td_metric level1[] = {PM_TD_RETIRING, PM_TD_BAD_SPEC, PM_TD_FE_BOUND,
                                               PM_TD_BE_BOUND, PM_TD_SMT_CONTENTION};
    if (node <= PM_TD_N_SMT_CONTENTION)
        return s->m[level1[node]];
    if (s->levels < 2)
        return 0;
    for (size_t i = 0; i < sizeof pm_td_pairs / sizeof *pm_td_pairs; i++) {
        if (node == pm_td_pairs[i].child)
            return s->m[pm_td_pairs[i].child_metric];
        if (node == pm_td_pairs[i].sibling)
            return pm_td_sat_sub(s->m[pm_td_pairs[i].parent], s->m[pm_td_pairs[i].child_metric]);
    }
    return 0;
}

enum pm_td_status pm_td_breakdown(const struct pm_td_slots *s, struct pm_td_breakdown *out)
{
    memset(out, 0, sizeof *out);
    out->levels = s->levels;
    uint64_t total = pm_td_level1_total(s);
    if (total == 0)
        return PM_TD_NO_SLOTS;
    for (int n = 0; n < PM_TD_NNODES; n++)
        out->ratio[n] = (double)pm_td_node_slots(s, (enum pm_td_node)n) / (double)total;
    return PM_TD_OK;
}

const char *pm_td_node_name(enum pm_td_node node)
{
    static const char *const names[PM_TD_NNODES] = {
        "retiring", "bad_speculation", "frontend_bound", "backend_bound", "smt_contention",
        "heavy_operations", "light_operations", "branch_mispredicts", "machine_clears",
        "fetch_latency", "fetch_bandwidth", "memory_bound", "core_bound",
    };
    return (unsigned)node < PM_TD_NNODES ? names[node] : "?";
}

double pm_td_error_bound(uint64_t slots, uint64_t windows, int derived)
{
    double k = derived ? 2.0 : 1.0;
    return k * ((double)slots / 255.0 + (double)(windows ? windows : 1));
}

int pm_td_is_short(uint64_t slots, uint64_t windows)
{
    if (windows == 0)
        windows = 1;
    /* slots / windows < N, without the division's rounding */
    return slots < (uint64_t)PM_TD_SHORT_SLOTS_PER_WINDOW * windows;
}
