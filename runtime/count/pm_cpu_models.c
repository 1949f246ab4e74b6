/* Per-CPU-model event groups: data, not code. Add a model by adding a row;
 * share a group between models by pointing at it. Every event of the spr,
 * icx, icl, skx, zen2, zen3, zen4, zen5, srf and Arm rows has a golden encoding
 * in tests/topdown/test_models.c, worked out from the Intel, AMD and Arm
 * event lists.
 *
 * Where libpfm4 4.13 has no table for a CPU (Zen 5, Sierra Forest, every Arm
 * core: the x86 build of libpfm4 has no Arm PMUs) the events are raw encodings,
 * perf_raw::r<config>, with the config worked out from the Linux kernel's
 * tools/perf/pmu-events/arch JSON named in the comment next to each event.
 *
 * Event order is contract where a function consumes the counts:
 *   topdown, PERF_METRICS: slots, then metrics in PERF_METRICS byte order
 *     (pm_td_from_group_values); the kernel requires `slots` as group leader.
 *   topdown, Skylake: the fields of struct pm_td_skl_counts, in order.
 *   topdown, Zen 4 and Zen 5: the count fields of struct pm_td_zen4_counts, in
 *     order (six for level 1, then six for level 2).
 *   topdown, Arm: the fields of struct pm_td_arm_counts, in order (six, or
 *     seven with BR_MIS_PRED where the row's td_fe_mispred_cycles is not 0).
 *   topdown, Intel E-core (srf): the fields of struct pm_td_atom_counts.
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

/* Level 2 needs six more events than the six counters hold: the kernel
 * puts them in a second group and multiplexes the two (every TopDown number
 * is then an estimate, marked so), so the runtime opens them only with
 * PERFMARK_TOPDOWN_LEVELS=2 (pm_events.c). Names from libpfm4's zen4 table; the
 * kernel's amdzen4 JSON: core.json (ex_no_retire 0xd6, ex_ret_ucode_ops
 * 0x1c2), branch.json (ex_ret_brn_misp 0xc3), other.json
 * (resyncs_or_nc_redirects 0x96), pipeline.json (the cmask=6 event). */
static const struct pm_model_group pm_grp_td_zen4 = {
    "topdown", "pipeline utilization, levels 1 and 2 (6 dispatch slots per cycle)",
    {{"CYCLES_NOT_IN_HALT", "ls_not_halted_cyc"},
     {"DISPATCH_STALLS_1:FE_NO_OPS", "de_no_dispatch_per_slot.no_ops_from_frontend"},
     {"DISPATCH_STALLS_1:BE_STALLS", "de_no_dispatch_per_slot.backend_stalls"},
     {"DISPATCH_STALLS_1:SMT_CONTENTION", "de_no_dispatch_per_slot.smt_contention"},
     {"OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", "de_src_op_disp.all"},
     {"RETIRED_OPS", "ex_ret_ops"},
     {"DISPATCH_STALLS_1:FE_NO_OPS:c=6", "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=6"},
     {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "ex_ret_brn_misp"},
     {"RESYNCS", "resyncs_or_nc_redirects"},
     {"CYCLES_NO_RETIRE:NOT_COMPLETE_MISSING_LOAD", "ex_no_retire.load_not_complete"},
     {"CYCLES_NO_RETIRE:NOT_COMPLETE_LOAD_AND_ALU", "ex_no_retire.not_complete"},
     {"RETIRED_UCODE_OPS", "ex_ret_ucode_ops"}},
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

/* ---- AMD Zen 2 and Zen 3 (libpfm4 amd64_fam17h_zen2, amd64_fam19h_zen3) ----
 * No TopDown: the de_no_dispatch_per_slot events of the pipeline-utilization
 * method first appear in Zen 4. Event/umask numbers from the kernel's
 * amdzen2 and amdzen3 JSON (core.json, cache.json, memory.json); ipc and
 * branch are the Zen 4 groups (same libpfm4 names and encodings). */
/* Zen 2: L1D misses are MAB allocations by loads, stores and the DC
 * prefetcher (ls_mab_alloc, PMCx041 umasks 0x01 | 0x02 | 0x08; libpfm4's
 * MAB_ALLOCATION_BY_PIPE DATA_PIPE, ST_PIPE, HW_PF), as Zen 4's
 * MAB_ALLOCATION_BY_TYPE:ALL. Zen 2 has no any-fill event: "LLC misses" are
 * demand refills of the L1D (ls_refills_from_sys, PMCx043) from DRAM/IO or
 * from a cache on another die (lcl_dram 0x08 | rmt_cache 0x10 | rmt_dram
 * 0x40; lcl_cache 0x02 mixes the local L3 with other CCXs on this die and is
 * left out). Demand loads only, unlike Zen 3/4's any-fill. */
#define PM_ZEN2_REFILLS_BEYOND_L3 \
    "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM"

static const struct pm_model_group pm_grp_cache_zen2 = {
    "cache", "L1D misses, L2 misses, L1D refills from beyond the die's caches",
    {{"RETIRED_INSTRUCTIONS", "instructions"},
     {"MAB_ALLOCATION_BY_PIPE:DATA_PIPE:ST_PIPE:HW_PF",
      "ls_mab_alloc.{loads,stores,dc_prefetcher}"},
     {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS",
      "l2_cache_req_stat.ic_dc_miss_in_l2"},
     {PM_ZEN2_REFILLS_BEYOND_L3, "ls_refills_from_sys (DRAM/IO, other die's cache)"}},
    PM_DERIVED_CACHE,
};

static const struct pm_model_group pm_grp_mem_zen2 = {
    "mem", "L3 misses and a DRAM-traffic estimate (demand refills)",
    {{"CYCLES_NOT_IN_HALT", "cycles"},
     {PM_ZEN2_REFILLS_BEYOND_L3, "ls_refills_from_sys (DRAM/IO, other die's cache)"},
     {"DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM",
      "ls_refills_from_sys.ls_mabresp_{lcl,rmt}_dram"}},
    PM_DERIVED_MEM,
};

/* Zen 3: libpfm4's names for the same events as Zen 4, with Zen 3's umask
 * names (EXT_CACHE_LCL = another CCX in this node, MEM_IO_LCL = DRAM/IO in
 * this node, EXT_CACHE_RMT, MEM_IO_RMT = the same in another node). */
#define PM_ZEN3_FILLS_BEYOND_L3 \
    "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"

static const struct pm_model_group pm_grp_cache_zen3 = {
    "cache", "L1D, L2 and L3 misses",
    {{"RETIRED_INSTRUCTIONS", "instructions"},
     {"MAB_ALLOCATION_BY_TYPE:ALL", "ls_mab_alloc.all_allocations"},
     {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS",
      "l2_cache_req_stat.ic_dc_miss_in_l2"},
     {PM_ZEN3_FILLS_BEYOND_L3, "ls_any_fills_from_sys (beyond local L3)"}},
    PM_DERIVED_CACHE,
};

static const struct pm_model_group pm_grp_mem_zen3 = {
    "mem", "L3 misses and a DRAM-traffic estimate",
    {{"CYCLES_NOT_IN_HALT", "cycles"},
     {PM_ZEN3_FILLS_BEYOND_L3, "ls_any_fills_from_sys (beyond local L3)"},
     {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT",
      "ls_any_fills_from_sys.mem_io_{local,remote}"}},
    PM_DERIVED_MEM,
};

/* ---- AMD Zen 5 (family 0x1a): raw encodings ---------------------------------
 * libpfm4 4.13 has no Zen 5 PMU. config = event[7:0] | umask << 8 |
 * event[11:8] << 32 (PERF_CTL layout, as perf's amd "event" format); events
 * and umasks from the kernel's tools/perf/pmu-events/arch/x86/amdzen5/:
 * load-store.json, execution.json, decode.json, l2-cache.json. */
#define PM_ZEN5_CYCLES {"perf_raw::r76", "ls_not_halted_cyc"}          /* load-store.json 0x76 */
#define PM_ZEN5_INSTR {"perf_raw::rc0", "ex_ret_instr"}                /* execution.json 0xc0 */
/* ls_any_fills_from_sys near_cache 0x04 | dram_io_near 0x08 | far_cache 0x10
 * | dram_io_far 0x40 = 0x5c (load-store.json, event 0x44): as Zen 4's
 * "beyond local L3", extension memory (alternate_memories 0x80) left out. */
#define PM_ZEN5_FILLS_BEYOND_L3 {"perf_raw::r5c44", "ls_any_fills_from_sys (beyond local L3)"}

/* de_no_dispatch_per_slot (decode.json, event 0x1a0): 0xa0 | umask << 8 | 1 << 32;
 * level 2 as Zen 4's (pipeline.json PipelineL2), cmask 8 in bits 24-31. */
static const struct pm_model_group pm_grp_td_zen5 = {
    "topdown", "pipeline utilization, levels 1 and 2 (8 dispatch slots per cycle)",
    {PM_ZEN5_CYCLES,
     {"perf_raw::r1000001a0", "de_no_dispatch_per_slot.no_ops_from_frontend"}, /* umask 0x01 */
     {"perf_raw::r100001ea0", "de_no_dispatch_per_slot.backend_stalls"},       /* umask 0x1e */
     {"perf_raw::r1000060a0", "de_no_dispatch_per_slot.smt_contention"},       /* umask 0x60 */
     {"perf_raw::r7aa", "de_src_op_disp.all"},    /* decode.json 0xaa umask 0x07 */
     {"perf_raw::rc1", "ex_ret_ops"},             /* execution.json 0xc1 */
     {"perf_raw::r1080001a0", "de_no_dispatch_per_slot.no_ops_from_frontend,cmask=8"},
     {"perf_raw::rc3", "ex_ret_brn_misp"},        /* execution.json 0xc3 */
     {"perf_raw::r19f", "bp_redirects.resync"},   /* branch-prediction.json 0x9f umask 0x01 */
     {"perf_raw::ra2d6", "ex_no_retire.load_not_complete"}, /* execution.json 0xd6 umask 0xa2 */
     {"perf_raw::r2d6", "ex_no_retire.not_complete"},       /* execution.json 0xd6 umask 0x02 */
     {"perf_raw::r1000000c2", "ex_ret_ucode_ops"}},          /* execution.json 0x1c2 */
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_ipc_zen5 = {
    "ipc", "cycles and instructions", {PM_ZEN5_CYCLES, PM_ZEN5_INSTR}, PM_DERIVED_IPC,
};

static const struct pm_model_group pm_grp_branch_zen5 = {
    "branch", "retired branches and mispredictions",
    {PM_ZEN5_INSTR,
     {"perf_raw::rc2", "ex_ret_brn"},        /* execution.json 0xc2 */
     {"perf_raw::rc3", "ex_ret_brn_misp"}},  /* execution.json 0xc3 */
    PM_DERIVED_BRANCH,
};

static const struct pm_model_group pm_grp_cache_zen5 = {
    "cache", "L1D, L2 and L3 misses",
    {PM_ZEN5_INSTR,
     /* ls_mab_alloc.all_allocations: load-store.json 0x41 umask 0x0f (Zen 4: 0x7f) */
     {"perf_raw::rf41", "ls_mab_alloc.all_allocations"},
     /* l2_cache_req_stat.ic_dc_miss_in_l2: l2-cache.json 0x64 umask 0x09 */
     {"perf_raw::r964", "l2_cache_req_stat.ic_dc_miss_in_l2"},
     PM_ZEN5_FILLS_BEYOND_L3},
    PM_DERIVED_CACHE,
};

static const struct pm_model_group pm_grp_mem_zen5 = {
    "mem", "L3 misses and a DRAM-traffic estimate",
    {PM_ZEN5_CYCLES, PM_ZEN5_FILLS_BEYOND_L3,
     /* ls_any_fills_from_sys.dram_io_all: load-store.json 0x44 umask 0x48 */
     {"perf_raw::r4844", "ls_any_fills_from_sys.dram_io_all"}},
    PM_DERIVED_MEM,
};

/* ---- Arm: raw Armv8 PMU event numbers ------------------------------------------
 * The x86 build of libpfm4 has no Arm tables; on arm64 the kernel's PMU
 * takes the architectural event number as the raw config. Numbers from the
 * kernel's tools/perf/pmu-events/arch/arm64/common-and-microarch.json; each
 * model uses only events its own JSON lists (arm/neoverse-n1/,
 * arm/neoverse-v1/, arm/neoverse-n2-v2/, fujitsu/a64fx/). */
#define PM_ARM_CYCLES {"perf_raw::r11", "CPU_CYCLES"}            /* 0x11 */
#define PM_ARM_INST {"perf_raw::r8", "INST_RETIRED"}             /* 0x08 */
#define PM_ARM_L1D_REFILL {"perf_raw::r3", "L1D_CACHE_REFILL"}   /* 0x03 */
#define PM_ARM_L2D_REFILL {"perf_raw::r17", "L2D_CACHE_REFILL"}  /* 0x17 */
#define PM_ARM_LL_MISS_RD {"perf_raw::r37", "LL_CACHE_MISS_RD"}  /* 0x37 */

/* Level 1 by slot accounting (pm_td_from_arm): STALL_SLOT_* need PMUv3p4's
 * slot events (Neoverse V1, V2; not N1 or A64FX). */
#define PM_ARM_TD_EVENTS                                                            \
    PM_ARM_CYCLES, {"perf_raw::r3e", "STALL_SLOT_FRONTEND"},         /* 0x3e */      \
        {"perf_raw::r3d", "STALL_SLOT_BACKEND"},                     /* 0x3d */      \
        {"perf_raw::r3f", "STALL_SLOT"},                             /* 0x3f */      \
        {"perf_raw::r3b", "OP_SPEC"},                                /* 0x3b */      \
        {"perf_raw::r3a", "OP_RETIRED"}                              /* 0x3a */

/* Neoverse V1 (arm/neoverse-v1/metrics.json): frontend_bound =
 * STALL_SLOT_FRONTEND/(8 × CPU_CYCLES) − 4 × BR_MIS_PRED/CPU_CYCLES, the same
 * 4 × BR_MIS_PRED/CPU_CYCLES added to bad_speculation. */
static const struct pm_model_group pm_grp_td_arm_v1 = {
    "topdown", "slot accounting, level 1 (8 slots per cycle, mispredict correction)",
    {PM_ARM_TD_EVENTS, {"perf_raw::r10", "BR_MIS_PRED"}},           /* 0x10 */
    {{NULL, NULL, 0, 0, 0}},
};

/* Neoverse V2 (arm/neoverse-n2-v2/metrics.json): the sbsa.json formulas
 * (the "#slots - 5" branch corrects N2's 5-slot core only; V2 has 8 slots). */
static const struct pm_model_group pm_grp_td_arm_v2 = {
    "topdown", "slot accounting, level 1 (8 slots per cycle)",
    {PM_ARM_TD_EVENTS},
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_ipc_arm = {
    "ipc", "cycles and instructions", {PM_ARM_CYCLES, PM_ARM_INST}, PM_DERIVED_IPC,
};

static const struct pm_model_group pm_grp_branch_arm = {
    "branch", "retired branches and mispredictions",
    {PM_ARM_INST, {"perf_raw::r21", "BR_RETIRED"},                   /* 0x21 */
     {"perf_raw::r22", "BR_MIS_PRED_RETIRED"}},                      /* 0x22 */
    PM_DERIVED_BRANCH,
};

/* LL_CACHE_MISS_RD is the last level the core sees (system-level cache or
 * L3 via CHI, where the interconnect implements it): read misses only. */
static const struct pm_model_group pm_grp_cache_arm = {
    "cache", "L1D and L2 refills, last-level read misses",
    {PM_ARM_INST, PM_ARM_L1D_REFILL, PM_ARM_L2D_REFILL, PM_ARM_LL_MISS_RD},
    PM_DERIVED_CACHE,
};

/* Arm has no event for lines from beyond the last level: the estimate is
 * 64 × LL_CACHE_MISS_RD (reads only; writebacks not included). */
static const struct pm_model_group pm_grp_mem_arm = {
    "mem", "last-level read misses and a memory-traffic estimate",
    {PM_ARM_CYCLES, PM_ARM_LL_MISS_RD},
    {{"llc_misses_per_kcycle", "1000 × LLC read misses / cycles", 1, 0, 1000.0},
     {"mem_bytes_est", "64 × LLC read misses", 1, -1, 64.0},
     {"mem_bytes_per_cycle_est", "64 × LLC read misses / cycles", 1, 0, 64.0}},
};

/* A64FX (the kernel's fujitsu/a64fx JSON): no BR_RETIRED/BR_MIS_PRED_RETIRED, no
 * LL_CACHE_MISS_RD, no STALL_SLOT events. Branches are BR_PRED (predictable
 * branches speculatively executed) and BR_MIS_PRED; the L2 is the last
 * level, its misses L2_MISS_COUNT (0x309, a64fx/cache.json); lines are 256 B. */
static const struct pm_model_group pm_grp_branch_a64fx = {
    "branch", "speculatively executed branches and mispredictions",
    {PM_ARM_INST, {"perf_raw::r12", "BR_PRED"},                      /* 0x12 */
     {"perf_raw::r10", "BR_MIS_PRED"}},                              /* 0x10 */
    PM_DERIVED_BRANCH,
};

static const struct pm_model_group pm_grp_cache_a64fx = {
    "cache", "L1D and L2 refills, L2 (last-level) misses",
    {PM_ARM_INST, PM_ARM_L1D_REFILL, PM_ARM_L2D_REFILL,
     {"perf_raw::r309", "L2_MISS_COUNT"}},                           /* 0x309 */
    PM_DERIVED_CACHE,
};

static const struct pm_model_group pm_grp_mem_a64fx = {
    "mem", "L2 (last-level) misses and a memory-traffic estimate (256-byte lines)",
    {PM_ARM_CYCLES, {"perf_raw::r309", "L2_MISS_COUNT"}, PM_ARM_L2D_REFILL},
    {{"llc_misses_per_kcycle", "1000 × L2 misses / cycles", 1, 0, 1000.0},
     {"mem_bytes_est", "256 × L2 refills", 2, -1, 256.0},
     {"mem_bytes_per_cycle_est", "256 × L2 refills / cycles", 2, 0, 256.0}},
};

/* ---- Intel Sierra Forest (Crestmont E-cores): raw encodings -------------------
 * libpfm4 4.13 has no srf PMU. config = event | umask << 8; events from the
 * kernel's tools/perf/pmu-events/arch/x86/sierraforest/ pipeline.json and
 * cache.json. The E-core umasks differ from the P-cores' (L1_MISS 0x40, not
 * 0x08), hence no reuse of the Intel groups. */
#define PM_SRF_CYCLES {"perf_raw::r3c", "cpu_clk_unhalted.core_p"}   /* pipeline.json 0x3c */
#define PM_SRF_INST {"perf_raw::rc0", "inst_retired.any_p"}          /* pipeline.json 0xc0 */

/* TopDown level 1 (srf-metrics.json: tma_X = TOPDOWN_X.ALL_P /
 * (6 × CPU_CLK_UNHALTED.CORE)); order = struct pm_td_atom_counts. */
static const struct pm_model_group pm_grp_td_srf = {
    "topdown", "TopDown level 1 from TOPDOWN_*.ALL_P slot events (6 slots per cycle)",
    {PM_SRF_CYCLES,
     {"perf_raw::r72", "topdown_retiring.all_p"},          /* pipeline.json 0x72 */
     {"perf_raw::r73", "topdown_bad_speculation.all_p"},   /* pipeline.json 0x73 */
     {"perf_raw::r71", "topdown_fe_bound.all_p"},          /* pipeline.json 0x71 */
     {"perf_raw::r74", "topdown_be_bound.all_p"}},         /* pipeline.json 0x74 */
    {{NULL, NULL, 0, 0, 0}},
};

static const struct pm_model_group pm_grp_ipc_srf = {
    "ipc", "cycles and instructions", {PM_SRF_CYCLES, PM_SRF_INST}, PM_DERIVED_IPC,
};

static const struct pm_model_group pm_grp_branch_srf = {
    "branch", "retired branches and mispredictions",
    {PM_SRF_INST, {"perf_raw::rc4", "br_inst_retired.all_branches"},   /* 0xc4 */
     {"perf_raw::rc5", "br_misp_retired.all_branches"}},               /* 0xc5 */
    PM_DERIVED_BRANCH,
};

/* Retired loads by the level that missed (cache.json): L1_MISS 0xd1/0x40,
 * L2_MISS 0xd1/0x80, MEM_LOAD_UOPS_L3_MISS_RETIRED.ALL 0xd3/0xff. */
static const struct pm_model_group pm_grp_cache_srf = {
    "cache", "retired loads missing L1D, L2 and the L3",
    {PM_SRF_INST, {"perf_raw::r40d1", "mem_load_uops_retired.l1_miss"},
     {"perf_raw::r80d1", "mem_load_uops_retired.l2_miss"},
     {"perf_raw::rffd3", "mem_load_uops_l3_miss_retired.all"}},
    PM_DERIVED_CACHE,
};

/* LONGEST_LAT_CACHE.MISS (cache.json 0x2e/0x41): demand loads, RFOs, code
 * and L1 prefetches that miss the LLC, per core. */
static const struct pm_model_group pm_grp_mem_srf = {
    "mem", "LLC misses and a memory-traffic estimate",
    {PM_SRF_CYCLES, {"perf_raw::rffd3", "mem_load_uops_l3_miss_retired.all"},
     {"perf_raw::r412e", "longest_lat_cache.miss"}},
    PM_DERIVED_MEM,
};

#define PM_GROUPS_INTEL(td) \
    {&(td), &pm_grp_ipc_intel, &pm_grp_branch_intel, &pm_grp_cache_intel, &pm_grp_mem_intel}

/* ---- the models ------------------------------------------------------------ */

const struct pm_cpu_model pm_cpu_models[] = {
    {"icl", "icl", "Intel Ice Lake client, Tiger Lake, Rocket Lake",
     PM_TD_METHOD_PERF_METRICS, 1, 0, "libpfm4 reports all three as icl",
     PM_GROUPS_INTEL(pm_grp_td_icl), 0, 0},
    {"icx", "icx", "Intel Ice Lake server", PM_TD_METHOD_PERF_METRICS, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_icl), 0, 0},
    {"tgl", "icl", "Intel Tiger Lake", PM_TD_METHOD_PERF_METRICS, 1, 0,
     "libpfm4 calls Tiger Lake icl: its events are encoded with the icl table",
     PM_GROUPS_INTEL(pm_grp_td_icl), 0, 0},
    {"spr", "spr", "Intel Sapphire Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_spr), 0, 0},
    {"emr", "spr", "Intel Emerald Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0,
     "alias: same core events as Sapphire Rapids; libpfm4 encodes it as spr",
     PM_GROUPS_INTEL(pm_grp_td_spr), 0, 0},
    {"gnr", "gnr", "Intel Granite Rapids", PM_TD_METHOD_PERF_METRICS, 2, 0,
     "libpfm4 4.13 has no gnr PMU: with it the groups fall back to sw (no_tables); "
     "the names are Sapphire Rapids', which Granite Rapids keeps",
     PM_GROUPS_INTEL(pm_grp_td_spr), 0, 0},
    {"skl", "skl", "Intel Skylake client", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl), 0, 0},
    {"skx", "skx", "Intel Skylake server", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl), 0, 0},
    {"clx", "clx", "Intel Cascade Lake server", PM_TD_METHOD_SKYLAKE, 1, 0, NULL,
     PM_GROUPS_INTEL(pm_grp_td_skl), 0, 0},
    {"adl_glc", "adl_glc", "Intel Alder Lake P-core (Golden Cove)", PM_TD_METHOD_PERF_METRICS,
     2, 1,
     "hybrid: TopDown metrics exist on the P-cores (cpu_core) only; threads on E-cores "
     "(adl_grt, cpu_atom) count none of these events, so pin measured threads to P-cores. "
     "libpfm4 4.13 has no adl_glc PMU: with it the groups fall back to sw (no_tables)",
     PM_GROUPS_INTEL(pm_grp_td_spr), 0, 0},
    {"amd64_fam17h_zen2", "amd64_fam17h_zen2", "AMD Zen 2 (EPYC Rome)", PM_TD_METHOD_NONE, 0,
     0,
     "no TopDown: Zen 2 has no pipeline-utilization (de_no_dispatch_per_slot) events; "
     "LLC misses and memory lines count demand L1D refills (no any-fill event)",
     {NULL, &pm_grp_ipc_zen4, &pm_grp_branch_zen4, &pm_grp_cache_zen2, &pm_grp_mem_zen2}, 0,
     0},
    {"amd64_fam19h_zen3", "amd64_fam19h_zen3", "AMD Zen 3 (EPYC Milan)", PM_TD_METHOD_NONE, 0,
     0, "no TopDown: Zen 3 has no pipeline-utilization (de_no_dispatch_per_slot) events",
     {NULL, &pm_grp_ipc_zen4, &pm_grp_branch_zen4, &pm_grp_cache_zen3, &pm_grp_mem_zen3}, 0,
     0},
    {"amd64_fam19h_zen4", "amd64_fam19h_zen4", "AMD Zen 4", PM_TD_METHOD_ZEN4, 2, 0,
     "six dispatch slots per cycle; SMT contention is a fifth level-1 category; level 2 "
     "with PERFMARK_TOPDOWN_LEVELS=2 (12 events on 6 counters: multiplexed, estimates)",
     {&pm_grp_td_zen4, &pm_grp_ipc_zen4, &pm_grp_branch_zen4, &pm_grp_cache_zen4,
      &pm_grp_mem_zen4},
     6, 0},
    {"amd64_fam1ah_zen5", "perf_raw", "AMD Zen 5 (EPYC Turin)", PM_TD_METHOD_ZEN4, 2, 0,
     "libpfm4 4.13 has no Zen 5 PMU: raw encodings from the kernel's amdzen5 JSON; eight "
     "dispatch slots per cycle (amdzen5/pipeline.json); level 2 with "
     "PERFMARK_TOPDOWN_LEVELS=2 (12 events on 6 counters: multiplexed, estimates)",
     {&pm_grp_td_zen5, &pm_grp_ipc_zen5, &pm_grp_branch_zen5, &pm_grp_cache_zen5,
      &pm_grp_mem_zen5},
     8, 0},
    {"arm_n1", "perf_raw", "Arm Neoverse N1", PM_TD_METHOD_NONE, 0, 0,
     "raw Armv8 PMU event numbers (kernel pmu-events arm64 JSON); no TopDown: N1 has no "
     "STALL_SLOT events and the kernel's neoverse-n1 metrics define none",
     {NULL, &pm_grp_ipc_arm, &pm_grp_branch_arm, &pm_grp_cache_arm, &pm_grp_mem_arm}, 0, 0},
    {"arm_v1", "perf_raw", "Arm Neoverse V1", PM_TD_METHOD_ARM, 1, 0,
     "raw Armv8 PMU event numbers (kernel pmu-events arm64 JSON); TopDown level 1 by slot "
     "accounting, 8 slots per cycle, 4 cycles per BR_MIS_PRED moved from frontend to bad "
     "speculation (neoverse-v1/metrics.json)",
     {&pm_grp_td_arm_v1, &pm_grp_ipc_arm, &pm_grp_branch_arm, &pm_grp_cache_arm,
      &pm_grp_mem_arm},
     8, 4},
    {"arm_v2", "perf_raw", "Arm Neoverse V2 (Graviton4, Grace)", PM_TD_METHOD_ARM, 1, 0,
     "raw Armv8 PMU event numbers (kernel pmu-events arm64 JSON); TopDown level 1 by slot "
     "accounting (sbsa.json formulas via neoverse-n2-v2/metrics.json), 8 slots per cycle",
     {&pm_grp_td_arm_v2, &pm_grp_ipc_arm, &pm_grp_branch_arm, &pm_grp_cache_arm,
      &pm_grp_mem_arm},
     8, 0},
    {"arm_a64fx", "perf_raw", "Fujitsu A64FX", PM_TD_METHOD_NONE, 0, 0,
     "raw PMU event numbers (kernel fujitsu/a64fx JSON); no TopDown: A64FX has no "
     "STALL_SLOT or OP_SPEC/OP_RETIRED events; branches are speculative (BR_PRED, "
     "BR_MIS_PRED: no retired-branch events); the L2 is the last level, lines are 256 B",
     {NULL, &pm_grp_ipc_arm, &pm_grp_branch_a64fx, &pm_grp_cache_a64fx, &pm_grp_mem_a64fx},
     0, 0},
    {"srf", "perf_raw", "Intel Sierra Forest (Crestmont E-cores)", PM_TD_METHOD_ATOM, 1, 0,
     "libpfm4 4.13 has no srf PMU: raw encodings from the kernel's sierraforest JSON; "
     "TopDown level 1 from TOPDOWN_*.ALL_P, 6 slots per cycle (srf-metrics.json)",
     {&pm_grp_td_srf, &pm_grp_ipc_srf, &pm_grp_branch_srf, &pm_grp_cache_srf, &pm_grp_mem_srf},
     6, 0},
    {NULL, NULL, NULL, PM_TD_METHOD_NONE, 0, 0, NULL, {NULL}, 0, 0},
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
    while (g && n < PM_MODEL_MAX_EVENTS && g->events[n].pfm)
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
