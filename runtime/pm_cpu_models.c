/* Per-CPU-model event groups: data, not code. Add a model by adding a row;
 * share a group between models by pointing at it. Every event of the spr,
 * icx, icl, skx and zen4 rows has a golden encoding in
 * tests/topdown/test_models.c, worked out from the Intel and AMD event lists.
 *
 * Event order is contract where a function consumes the counts:
 *   topdown, PERF_METRICS: slots, then metrics in PERF_METRICS byte order
 *     (pm_td_from_group_values); the kernel requires `slots` as group leader.
 *   topdown, Skylake: the fields of struct pm_td_skl_counts, in order.
 *   topdown, Zen 4: the fields of struct pm_td_zen4_counts, in order.
 *   other groups: the indices of their derived metrics. */
#include "pm_cpu_models.h"

#include "pm_cpu_id.h"

#include <stdio.h>
#include <string.h>

/* ---- TopDown ---------------------------------------------------------------
 * libpfm4 has no names for the kernel's topdown-* pseudo events (config
 * 0x8000 + 0x100 × byte, arch/x86/include/asm/perf_event.h INTEL_TD_METRIC_*),
 * so they are raw encodings. libpfm4 4.13's own TOPDOWN:*_SLOTS umasks encode
 * as event 0x00 (e.g. BACKEND_BOUND_SLOTS → 0x200) where Intel lists event
 * 0xa4: they are not used. */
#define PM_TD_L1_METRIC_EVENTS                                                       \
    {"TOPDOWN:SLOTS", "slots"}, {"perf_raw::r8000", "topdown-retiring"},            \
        {"perf_raw::r8100", "topdown-bad-spec"}, {"perf_raw::r8200", "topdown-fe-bound"}, \
        {"perf_raw::r8300", "topdown-be-bound"}

static const struct pm_model_group pm_grp_td_icl = {
    "topdown", "TopDown level 1 from PERF_METRICS (slots must lead the group)",
    {PM_TD_L1_METRIC_EVENTS},
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_td_spr = {
    "topdown", "TopDown levels 1 and 2 from PERF_METRICS (slots must lead the group)",
    {PM_TD_L1_METRIC_EVENTS, {"perf_raw::r8400", "topdown-heavy-ops"},
     {"perf_raw::r8500", "topdown-br-mispredict"}, {"perf_raw::r8600", "topdown-fetch-lat"},
     {"perf_raw::r8700", "topdown-mem-bound"}},
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_td_skl = {
    "topdown", "TopDown level 1 from generic events (4 slots per cycle)",
    {{"CPU_CLK_UNHALTED:THREAD_P", "cycles"},
     {"IDQ_UOPS_NOT_DELIVERED:CORE", "idq_uops_not_delivered.core"},
     {"UOPS_ISSUED:ANY", "uops_issued.any"},
     {"UOPS_RETIRED:RETIRE_SLOTS", "uops_retired.retire_slots"},
     {"INT_MISC:RECOVERY_CYCLES", "int_misc.recovery_cycles"}},
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_td_zen4 = {
    "topdown", "pipeline utilization, level 1 (6 dispatch slots per cycle)",
    {{"CYCLES_NOT_IN_HALT", "ls_not_halted_cyc"},
     {"DISPATCH_STALLS_1:FE_NO_OPS", "de_no_dispatch_per_slot.no_ops_from_frontend"},
     {"DISPATCH_STALLS_1:BE_STALLS", "de_no_dispatch_per_slot.backend_stalls"},
     {"DISPATCH_STALLS_1:SMT_CONTENTION", "de_no_dispatch_per_slot.smt_contention"},
     {"OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", "de_src_op_disp.all"},
     {"RETIRED_OPS", "ex_ret_ops"}},
    {{NULL, NULL, 0, 0, 0}},
};

/* ---- the other groups: one derived layout per group, shared by vendors ---- */

/* ipc: 0 cycles, 1 instructions */
#define PM_DERIVED_IPC                                             \
    {{"ipc", "instructions / cycles", 1, 0, 1.0},                  \
     {"cpi", "cycles / instructions", 0, 1, 1.0}}
/* branch: 0 instructions, 1 branches, 2 mispredicted branches */
#define PM_DERIVED_BRANCH                                                       \
    {{"branch_miss_ratio", "mispredicted / branches", 2, 1, 1.0},               \
     {"branch_mpki", "1000 × mispredicted / instructions", 2, 0, 1000.0},       \
     {"branches_per_kinst", "1000 × branches / instructions", 1, 0, 1000.0}}
/* cache: 0 instructions, 1 L1D misses, 2 L2 misses, 3 LLC misses */
#define PM_DERIVED_CACHE                                                        \
    {{"l1d_mpki", "1000 × L1D misses / instructions", 1, 0, 1000.0},            \
     {"l2_mpki", "1000 × L2 misses / instructions", 2, 0, 1000.0},              \
     {"llc_mpki", "1000 × LLC misses / instructions", 3, 0, 1000.0}}
/* mem: 0 cycles, 1 LLC misses, 2 lines from beyond the LLC (bandwidth estimate) */
#define PM_DERIVED_MEM                                                          \
    {{"llc_misses_per_kcycle", "1000 × LLC misses / cycles", 1, 0, 1000.0},     \
     {"mem_bytes_est", "64 × lines from beyond the LLC", 2, -1, 64.0},          \
     {"mem_bytes_per_cycle_est", "64 × lines from beyond the LLC / cycles", 2, 0, 64.0}}

static const struct pm_model_group pm_grp_ipc_intel = {
    "ipc", "cycles and instructions",
    {{"CPU_CLK_UNHALTED:THREAD_P", "cycles"}, {"INST_RETIRED:ANY_P", "instructions"}},
    PM_DERIVED_IPC,
};

static const struct pm_model_group pm_grp_branch_intel = {
    "branch", "retired branches and mispredictions",
    {{"INST_RETIRED:ANY_P", "instructions"},
     {"BR_INST_RETIRED:ALL_BRANCHES", "branches"},
     {"BR_MISP_RETIRED:ALL_BRANCHES", "branch-misses"}},
    PM_DERIVED_BRANCH,
};

/* Retired loads by the level that missed: one event, consistent umasks, so
 * L1D ⊇ L2 ⊇ LLC misses hold (demand loads only). */
static const struct pm_model_group pm_grp_cache_intel = {
    "cache", "retired loads missing L1D, L2 and the LLC",
    {{"INST_RETIRED:ANY_P", "instructions"},
     {"MEM_LOAD_RETIRED:L1_MISS", "mem_load_retired.l1_miss"},
     {"MEM_LOAD_RETIRED:L2_MISS", "mem_load_retired.l2_miss"},
     {"MEM_LOAD_RETIRED:L3_MISS", "mem_load_retired.l3_miss"}},
    PM_DERIVED_CACHE,
};

/* LONGEST_LAT_CACHE.MISS (architectural) counts every core request that
 * misses the LLC, loads, RFOs, code and prefetches: × 64 B, an estimate of
 * this thread's memory traffic (writebacks not included). */
static const struct pm_model_group pm_grp_mem_intel = {
    "mem", "LLC misses and a memory-traffic estimate",
    {{"CPU_CLK_UNHALTED:THREAD_P", "cycles"},
     {"MEM_LOAD_RETIRED:L3_MISS", "mem_load_retired.l3_miss"},
     {"LONGEST_LAT_CACHE:MISS", "longest_lat_cache.miss"}},
    PM_DERIVED_MEM,
};

static const struct pm_model_group pm_grp_ipc_zen4 = {
    "ipc", "cycles and instructions",
    {{"CYCLES_NOT_IN_HALT", "cycles"}, {"RETIRED_INSTRUCTIONS", "instructions"}},
    PM_DERIVED_IPC,
};

static const struct pm_model_group pm_grp_branch_zen4 = {
    "branch", "retired branches and mispredictions",
    {{"RETIRED_INSTRUCTIONS", "instructions"},
     {"RETIRED_BRANCH_INSTRUCTIONS", "ex_ret_brn"},
     {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "ex_ret_brn_misp"}},
    PM_DERIVED_BRANCH,
};

/* Zen 4 has no retired-load-by-level event: L1D misses are miss-address-
 * buffer allocations, L2 misses the core's demand data and instruction
 * misses, LLC misses the L1D fills that came from beyond the local L3
 * (another CCX's cache, DRAM/IO, near or far). Fills from CXL memory
 * (ALT_MEM_NEAR_FAR) are left out: with it the qualified name passes the
 * 127 characters an event name may have. */
#define PM_ZEN4_FILLS_BEYOND_L3                                                   \
    "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:" \
    "DRAM_IO_FAR"

static const struct pm_model_group pm_grp_cache_zen4 = {
    "cache", "L1D, L2 and L3 misses",
    {{"RETIRED_INSTRUCTIONS", "instructions"},
     {"MAB_ALLOCATION_BY_TYPE:ALL", "ls_mab_alloc.all_allocations"},
     {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS",
      "l2_cache_req_stat.ic_dc_miss_in_l2"},
     {PM_ZEN4_FILLS_BEYOND_L3, "ls_any_fills_from_sys (beyond local L3)"}},
    PM_DERIVED_CACHE,
};

static const struct pm_model_group pm_grp_mem_zen4 = {
    "mem", "L3 misses and a DRAM-traffic estimate",
    {{"CYCLES_NOT_IN_HALT", "cycles"},
     {PM_ZEN4_FILLS_BEYOND_L3, "ls_any_fills_from_sys (beyond local L3)"},
     {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR",
      "ls_any_fills_from_sys.dram_io_all"}},
    PM_DERIVED_MEM,
};

#define PM_GROUPS_INTEL(td) \
    {&(td), &pm_grp_ipc_intel, &pm_grp_branch_intel, &pm_grp_cache_intel, &pm_grp_mem_intel}

/* ---- the models ------------------------------------------------------------ */

const struct pm_cpu_model pm_cpu_models[] = {
    {"icl", "icl", "Intel Ice Lake client, Tiger Lake, Rocket Lake",
     PM_TD_METHOD_PERF_METRICS, 1, 0, "libpfm4 reports all three as icl",
     PM_GROUPS_INTEL(pm_grp_td_icl)},
    {"icx", "icx", "Intel Ice Lake server", PM_TD_METHOD_PERF_METRICS, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_icl)},
    {"tgl", "icl", "Intel Tiger Lake", PM_TD_METHOD_PERF_METRICS, 1, 0,
     "libpfm4 calls Tiger Lake icl: its events are encoded with the icl table",
     PM_GROUPS_INTEL(pm_grp_td_icl)},
    {"spr", "spr", "Intel Sapphire Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_spr)},
    {"emr", "spr", "Intel Emerald Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0,
     "alias: same core events as Sapphire Rapids; libpfm4 encodes it as spr",
     PM_GROUPS_INTEL(pm_grp_td_spr)},
    {"gnr", "gnr", "Intel Granite Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0,
     "libpfm4 4.13 has no gnr PMU: with it the groups fall back to sw (no_tables); "
     "the names are Sapphire Rapids', which Granite Rapids keeps",
     PM_GROUPS_INTEL(pm_grp_td_spr)},
    {"skl", "skl", "Intel Skylake client", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl)},
    {"skx", "skx", "Intel Skylake server", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl)},
    {"clx", "clx", "Intel Cascade Lake server", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl)},
    {"adl_glc", "adl_glc", "Intel Alder Lake P-core (Golden Cove)", PM_TD_METHOD_PERF_METRICS,
     2, 1,
     "hybrid: TopDown metrics exist on the P-cores (cpu_core) only; threads on E-cores "
     "(adl_grt, cpu_atom) count none of these events, so pin measured threads to P-cores. "
     "libpfm4 4.13 has no adl_glc PMU: with it the groups fall back to sw (no_tables)",
     PM_GROUPS_INTEL(pm_grp_td_spr)},
    {"amd64_fam19h_zen4", "amd64_fam19h_zen4", "AMD Zen 4", PM_TD_METHOD_ZEN4, 1, 0,
     "six dispatch slots per cycle; SMT contention is a fifth level-1 category",
     {&pm_grp_td_zen4, &pm_grp_ipc_zen4, &pm_grp_branch_zen4, &pm_grp_cache_zen4,
      &pm_grp_mem_zen4}},
    {NULL, NULL, NULL, PM_TD_METHOD_NONE, 0, 0, NULL, {NULL}},
};

/* ---- look-ups ----------------------------------------------------------------- */

const struct pm_cpu_model *pm_cpu_model_find(const char *pmu_name)
{
    if (!pmu_name)
        return NULL;
    for (const struct pm_cpu_model *m = pm_cpu_models; m->name; m++)
        if (strcmp(m->name, pmu_name) == 0)
            return m;
    return NULL;
}

const struct pm_cpu_model *pm_cpu_model_detect(void)
{
    /* From CPUID/MIDR (pm_cpu_id), not from libpfm4's own detection: the
     * model must be known where the installed libpfm4 has no table for it
     * (its rows use raw encodings then), and PERFMARK_TEST_CPU must reach
     * it. A hybrid CPU reports its P-core model. */
    const struct pm_cpu_match *match = pm_cpu_match_find(pm_cpu_id());
    return match ? pm_cpu_model_find(match->row) : NULL;
}

const struct pm_model_group *pm_cpu_model_group(const struct pm_cpu_model *m,
                                                enum pm_model_group_id id)
{
    return m && (unsigned)id < PM_NGROUPS ? m->groups[id] : NULL;
}

const struct pm_model_group *pm_cpu_model_group_named(const struct pm_cpu_model *m,
                                                      const char *name)
{
    for (int id = 0; m && id < PM_NGROUPS; id++)
        if (m->groups[id] && strcmp(m->groups[id]->name, name) == 0)
            return m->groups[id];
    return NULL;
}

int pm_model_group_nevents(const struct pm_model_group *g)
{
    int n = 0;
    while (n < PM_MODEL_MAX_EVENTS && g->events[n].pfm)
        n++;
    return n;
}

int pm_cpu_model_event_name(const struct pm_cpu_model *m, const char *pfm, char *out,
                            size_t outlen)
{
    int len = strstr(pfm, "::") ? snprintf(out, outlen, "%s", pfm)
                                : snprintf(out, outlen, "%s::%s", m->pfm_pmu, pfm);
    return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

int pm_derived_eval(const struct pm_derived_def *d, const uint64_t *counts, int ncounts,
                    double *out)
{
    if (d->num < 0 || d->num >= ncounts || d->den >= ncounts)
        return -1;
    double value = d->scale * (double)counts[d->num];
    if (d->den >= 0) {
        if (counts[d->den] == 0)
            return -1;
        value /= (double)counts[d->den];
    }
    *out = value;
    return 0;
}
