/* Golden encodings of every event of the spr, icx, icl, skx, zen2, zen3,
 * zen4, zen5, srf, arm_n1, arm_v1, arm_v2 and arm_a64fx rows of
 * runtime/count/pm_cpu_models.c, under LIBPFM_ENCODE_INACTIVE=1 (these PMUs are
 * not on this machine). Expected configs come from the vendors' event lists,
 * not from the encoder:
 *   Intel (SDM vol. 3B, IA32_PERFEVTSELx): config = event | umask << 8;
 *     event/umask from Intel's perfmon lists (perf's pmu-events JSON).
 *   Sierra Forest (no libpfm4 table) is written as perf_raw::r<config>,
 *     from the kernel's sierraforest JSON (E-core umasks: L1_MISS 0x40).
 *   Intel TopDown: slots is fixed counter 3's pseudo encoding event 0x00,
 *     umask 0x04 = 0x400; the kernel's metric pseudo events are 0x8000 +
 *     0x100 × PERF_METRICS byte (INTEL_TD_METRIC_RETIRING .. _MEM_BOUND).
 *   AMD (PPR for families 17h/19h/1Ah, PERF_CTLx): config = event[7:0] |
 *     umask << 8 | event[11:8] << 32; events/umasks from perf's amdzen2,
 *     amdzen3, amdzen4 and amdzen5 JSON. Zen 2/3/4 encode through libpfm4's
 *     names; Zen 5 (no libpfm4 table) is written as perf_raw::r<config>.
 *   Arm (Armv8 PMUv3): config = the event number, from the kernel's
 *     arm64/common-and-microarch.json (and fujitsu/a64fx/cache.json for
 *     0x309), written as perf_raw::r<config>. For raw rows the test checks
 *     that the hex in the name is the config worked out from the JSON.
 * Worked by hand (the arithmetic is in the row comments): 0x2c2, 0x19c,
 * 0x10d, 0x412e, 0x20d1, 0x1000001a0, 0x100001ea0, 0x1000060a0, 0x7aa, 0x5c44,
 * 0xb41, 0x5843, 0x4843, 0xf41, 0x40d1, 0x80d1, 0xffd3.
 * Each row carries its line; the test also fails when a table event has no
 * row, so a new table entry needs a hand-checked encoding. Rows without a
 * TopDown method (zen2, zen3, arm_n1, arm_a64fx) have no topdown group and
 * must say why in their note. */
#include "../unit/check.h"
#include "pm_cpu_models.h"
#include "pm_events.h"

#include <stdlib.h>
#include <string.h>

struct golden {
    int line;
    const char *model;
    const char *group;
    const char *event;
    unsigned long long config;
};

#define ROW(...) {__LINE__, __VA_ARGS__}
/* PERF_METRICS topdown groups: the same nine rows for spr, five for icl/icx. */
#define TD_L1(model)                                                       \
    ROW(model, "topdown", "TOPDOWN:SLOTS", 0x400),      /* 0x00 | 0x04 << 8 */ \
    ROW(model, "topdown", "perf_raw::r8000", 0x8000),   /* retiring, byte 0 */ \
    ROW(model, "topdown", "perf_raw::r8100", 0x8100),   /* bad spec, byte 1 */ \
    ROW(model, "topdown", "perf_raw::r8200", 0x8200),   /* fe bound, byte 2 */ \
    ROW(model, "topdown", "perf_raw::r8300", 0x8300)    /* be bound, byte 3 */
/* ipc/branch/cache/mem: the same events on every Intel row. */
#define INTEL_COMMON(model)                                                              \
    ROW(model, "ipc", "CPU_CLK_UNHALTED:THREAD_P", 0x3c),       /* 0x3c | 0x00 << 8 */   \
    ROW(model, "ipc", "INST_RETIRED:ANY_P", 0xc0),              /* 0xc0 | 0x00 << 8 */   \
    ROW(model, "branch", "INST_RETIRED:ANY_P", 0xc0),                                    \
    ROW(model, "branch", "BR_INST_RETIRED:ALL_BRANCHES", 0xc4), /* 0xc4 | 0x00 << 8 */   \
    ROW(model, "branch", "BR_MISP_RETIRED:ALL_BRANCHES", 0xc5), /* 0xc5 | 0x00 << 8 */   \
    ROW(model, "cache", "INST_RETIRED:ANY_P", 0xc0),                                     \
    ROW(model, "cache", "MEM_LOAD_RETIRED:L1_MISS", 0x8d1),     /* 0xd1 | 0x08 << 8 */   \
    ROW(model, "cache", "MEM_LOAD_RETIRED:L2_MISS", 0x10d1),    /* 0xd1 | 0x10 << 8 */   \
    ROW(model, "cache", "MEM_LOAD_RETIRED:L3_MISS", 0x20d1),    /* 0xd1 | 0x20 << 8 */   \
    ROW(model, "mem", "CPU_CLK_UNHALTED:THREAD_P", 0x3c),                                \
    ROW(model, "mem", "MEM_LOAD_RETIRED:L3_MISS", 0x20d1),                               \
    ROW(model, "mem", "LONGEST_LAT_CACHE:MISS", 0x412e)         /* 0x2e | 0x41 << 8 */

#define ZEN4 "amd64_fam19h_zen4"
#define ZEN4_FILLS_BEYOND_L3                                                           \
    "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:" \
    "DRAM_IO_FAR"

/* AMD ipc and branch: the same libpfm4 names and encodings on Zen 2, 3, 4. */
#define AMD_IPC_BRANCH(model)                                                       \
    ROW(model, "ipc", "CYCLES_NOT_IN_HALT", 0x76),                 /* PMCx076 */       \
    ROW(model, "ipc", "RETIRED_INSTRUCTIONS", 0xc0),               /* PMCx0C0 */       \
    ROW(model, "branch", "RETIRED_INSTRUCTIONS", 0xc0),                                \
    ROW(model, "branch", "RETIRED_BRANCH_INSTRUCTIONS", 0xc2),     /* PMCx0C2 */       \
    ROW(model, "branch", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0xc3) /* PMCx0C3 */
#define ZEN2 "amd64_fam17h_zen2"
#define ZEN3 "amd64_fam19h_zen3"
#define ZEN5 "amd64_fam1ah_zen5"
#define ZEN2_REFILLS_BEYOND \
    "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM"
#define ZEN3_FILLS_BEYOND_L3 \
    "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"
/* Neoverse ipc/branch/cache/mem: Armv8 event numbers (common-and-microarch.json),
 * each listed in the model's arm/neoverse-* JSON. */
#define ARM_COMMON(model)                                                           \
    ROW(model, "ipc", "perf_raw::r11", 0x11),         /* CPU_CYCLES */                 \
    ROW(model, "ipc", "perf_raw::r8", 0x08),          /* INST_RETIRED */               \
    ROW(model, "branch", "perf_raw::r8", 0x08),                                        \
    ROW(model, "branch", "perf_raw::r21", 0x21),      /* BR_RETIRED */                 \
    ROW(model, "branch", "perf_raw::r22", 0x22),      /* BR_MIS_PRED_RETIRED */        \
    ROW(model, "cache", "perf_raw::r8", 0x08),                                         \
    ROW(model, "cache", "perf_raw::r3", 0x03),        /* L1D_CACHE_REFILL */           \
    ROW(model, "cache", "perf_raw::r17", 0x17),       /* L2D_CACHE_REFILL */           \
    ROW(model, "cache", "perf_raw::r37", 0x37),       /* LL_CACHE_MISS_RD */           \
    ROW(model, "mem", "perf_raw::r11", 0x11),                                          \
    ROW(model, "mem", "perf_raw::r37", 0x37)
/* Arm slot accounting: the six events every ARM topdown group has. */
#define ARM_TD(model)                                                               \
    ROW(model, "topdown", "perf_raw::r11", 0x11),     /* CPU_CYCLES */                 \
    ROW(model, "topdown", "perf_raw::r3e", 0x3e),     /* STALL_SLOT_FRONTEND */        \
    ROW(model, "topdown", "perf_raw::r3d", 0x3d),     /* STALL_SLOT_BACKEND */         \
    ROW(model, "topdown", "perf_raw::r3f", 0x3f),     /* STALL_SLOT */                 \
    ROW(model, "topdown", "perf_raw::r3b", 0x3b),     /* OP_SPEC */                    \
    ROW(model, "topdown", "perf_raw::r3a", 0x3a)      /* OP_RETIRED */

static const struct golden table[] = {
    TD_L1("spr"),
    ROW("spr", "topdown", "perf_raw::r8400", 0x8400),   /* heavy ops, byte 4 */
    ROW("spr", "topdown", "perf_raw::r8500", 0x8500),   /* br mispredict, byte 5 */
    ROW("spr", "topdown", "perf_raw::r8600", 0x8600),   /* fetch latency, byte 6 */
    ROW("spr", "topdown", "perf_raw::r8700", 0x8700),   /* memory bound, byte 7 */
    INTEL_COMMON("spr"),
    TD_L1("icx"),
    INTEL_COMMON("icx"),
    TD_L1("icl"),
    INTEL_COMMON("icl"),
    /* Skylake server: SKX event list */
    ROW("skx", "topdown", "CPU_CLK_UNHALTED:THREAD_P", 0x3c),
    ROW("skx", "topdown", "IDQ_UOPS_NOT_DELIVERED:CORE", 0x19c), /* 0x9c | 0x01 << 8 */
    ROW("skx", "topdown", "UOPS_ISSUED:ANY", 0x10e),             /* 0x0e | 0x01 << 8 */
    ROW("skx", "topdown", "UOPS_RETIRED:RETIRE_SLOTS", 0x2c2),   /* 0xc2 | 0x02 << 8 */
    ROW("skx", "topdown", "INT_MISC:RECOVERY_CYCLES", 0x10d),    /* 0x0d | 0x01 << 8 */
    INTEL_COMMON("skx"),
    /* Zen 4: PMCx1A0 → 0xa0 | umask << 8 | 0x1 << 32 */
    ROW(ZEN4, "topdown", "CYCLES_NOT_IN_HALT", 0x76),                        /* PMCx076 */
    ROW(ZEN4, "topdown", "DISPATCH_STALLS_1:FE_NO_OPS", 0x1000001a0ull),     /* umask 0x01 */
    ROW(ZEN4, "topdown", "DISPATCH_STALLS_1:BE_STALLS", 0x100001ea0ull),     /* umask 0x1e */
    ROW(ZEN4, "topdown", "DISPATCH_STALLS_1:SMT_CONTENTION", 0x1000060a0ull), /* umask 0x60 */
    /* PMCx0AA, umask 0x01 | 0x02 | 0x04 = 0x07 → 0x7aa */
    ROW(ZEN4, "topdown", "OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", 0x7aa),
    ROW(ZEN4, "topdown", "RETIRED_OPS", 0xc1),                               /* PMCx0C1 */
    /* level 2 (amdzen4/pipeline.json PipelineL2): cmask 6 in bits 24-31 */
    ROW(ZEN4, "topdown", "DISPATCH_STALLS_1:FE_NO_OPS:c=6", 0x1060001a0ull),
    ROW(ZEN4, "topdown", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0xc3),   /* branch.json */
    ROW(ZEN4, "topdown", "RESYNCS", 0x96),               /* other.json resyncs_or_nc_redirects */
    ROW(ZEN4, "topdown", "CYCLES_NO_RETIRE:NOT_COMPLETE_MISSING_LOAD", 0xa2d6), /* core.json */
    ROW(ZEN4, "topdown", "CYCLES_NO_RETIRE:NOT_COMPLETE_LOAD_AND_ALU", 0x2d6),  /* core.json */
    ROW(ZEN4, "topdown", "RETIRED_UCODE_OPS", 0x1000000c2ull),  /* core.json ex_ret_ucode_ops */
    ROW(ZEN4, "ipc", "CYCLES_NOT_IN_HALT", 0x76),
    ROW(ZEN4, "ipc", "RETIRED_INSTRUCTIONS", 0xc0),                          /* PMCx0C0 */
    ROW(ZEN4, "branch", "RETIRED_INSTRUCTIONS", 0xc0),
    ROW(ZEN4, "branch", "RETIRED_BRANCH_INSTRUCTIONS", 0xc2),                /* PMCx0C2 */
    ROW(ZEN4, "branch", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0xc3),   /* PMCx0C3 */
    ROW(ZEN4, "cache", "RETIRED_INSTRUCTIONS", 0xc0),
    ROW(ZEN4, "cache", "MAB_ALLOCATION_BY_TYPE:ALL", 0x7f41),                /* 0x41 | 0x7f << 8 */
    /* PMCx064, LS_RD_BLK_C 0x08 | IC_FILL_MISS 0x01 = 0x09 */
    ROW(ZEN4, "cache", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS", 0x964),
    /* PMCx044, 0x04 | 0x08 | 0x10 | 0x40 = 0x5c */
    ROW(ZEN4, "cache", ZEN4_FILLS_BEYOND_L3, 0x5c44),
    ROW(ZEN4, "mem", "CYCLES_NOT_IN_HALT", 0x76),
    ROW(ZEN4, "mem", ZEN4_FILLS_BEYOND_L3, 0x5c44),
    /* PMCx044, DRAM_IO_NEAR 0x08 | DRAM_IO_FAR 0x40 = 0x48 */
    ROW(ZEN4, "mem", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR:DRAM_IO_FAR", 0x4844),
    /* Zen 2 (amdzen2 core.json, cache.json, memory.json) */
    AMD_IPC_BRANCH(ZEN2),
    ROW(ZEN2, "cache", "RETIRED_INSTRUCTIONS", 0xc0),
    /* PMCx041 ls_mab_alloc: loads 0x01 | stores 0x02 | dc_prefetcher 0x08 = 0x0b */
    ROW(ZEN2, "cache", "MAB_ALLOCATION_BY_PIPE:DATA_PIPE:ST_PIPE:HW_PF", 0xb41),
    /* PMCx064 l2_cache_req_stat.ic_dc_miss_in_l2, 0x08 | 0x01 = 0x09 */
    ROW(ZEN2, "cache", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS", 0x964),
    /* PMCx043, lcl_dram 0x08 | rmt_cache 0x10 | rmt_dram 0x40 = 0x58 */
    ROW(ZEN2, "cache", ZEN2_REFILLS_BEYOND, 0x5843),
    ROW(ZEN2, "mem", "CYCLES_NOT_IN_HALT", 0x76),
    ROW(ZEN2, "mem", ZEN2_REFILLS_BEYOND, 0x5843),
    /* PMCx043, lcl_dram 0x08 | rmt_dram 0x40 = 0x48 */
    ROW(ZEN2, "mem", "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_DRAM", 0x4843),
    /* Zen 3 (amdzen3 core.json, cache.json, memory.json) */
    AMD_IPC_BRANCH(ZEN3),
    ROW(ZEN3, "cache", "RETIRED_INSTRUCTIONS", 0xc0),
    ROW(ZEN3, "cache", "MAB_ALLOCATION_BY_TYPE:ALL", 0x7f41),  /* ls_mab_alloc.all_allocations */
    ROW(ZEN3, "cache", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C:IC_FILL_MISS", 0x964),
    /* PMCx044 ls_any_fills_from_sys: ext_cache_local 0x04 | mem_io_local 0x08 |
     * ext_cache_remote 0x10 | mem_io_remote 0x40 = 0x5c */
    ROW(ZEN3, "cache", ZEN3_FILLS_BEYOND_L3, 0x5c44),
    ROW(ZEN3, "mem", "CYCLES_NOT_IN_HALT", 0x76),
    ROW(ZEN3, "mem", ZEN3_FILLS_BEYOND_L3, 0x5c44),
    /* PMCx044, mem_io_local 0x08 | mem_io_remote 0x40 = 0x48 */
    ROW(ZEN3, "mem", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL:MEM_IO_RMT", 0x4844),
    /* Zen 5: raw, from the kernel's amdzen5 JSON */
    ROW(ZEN5, "topdown", "perf_raw::r76", 0x76),               /* load-store.json ls_not_halted_cyc */
    /* decode.json de_no_dispatch_per_slot, event 0x1a0: 0xa0 | umask << 8 | 0x1 << 32 */
    ROW(ZEN5, "topdown", "perf_raw::r1000001a0", 0x1000001a0ull), /* .no_ops_from_frontend 0x01 */
    ROW(ZEN5, "topdown", "perf_raw::r100001ea0", 0x100001ea0ull), /* .backend_stalls 0x1e */
    ROW(ZEN5, "topdown", "perf_raw::r1000060a0", 0x1000060a0ull), /* .smt_contention 0x60 */
    ROW(ZEN5, "topdown", "perf_raw::r7aa", 0x7aa),    /* decode.json de_src_op_disp.all 0xaa/0x07 */
    ROW(ZEN5, "topdown", "perf_raw::rc1", 0xc1),      /* execution.json ex_ret_ops */
    /* level 2 (amdzen5/pipeline.json PipelineL2) */
    ROW(ZEN5, "topdown", "perf_raw::r1080001a0", 0x1080001a0ull), /* .no_ops_from_frontend cmask 8 */
    ROW(ZEN5, "topdown", "perf_raw::rc3", 0xc3),      /* execution.json ex_ret_brn_misp */
    ROW(ZEN5, "topdown", "perf_raw::r19f", 0x19f),    /* branch-prediction.json bp_redirects.resync */
    ROW(ZEN5, "topdown", "perf_raw::ra2d6", 0xa2d6),  /* ex_no_retire.load_not_complete 0xd6/0xa2 */
    ROW(ZEN5, "topdown", "perf_raw::r2d6", 0x2d6),    /* ex_no_retire.not_complete 0xd6/0x02 */
    ROW(ZEN5, "topdown", "perf_raw::r1000000c2", 0x1000000c2ull), /* execution.json ex_ret_ucode_ops */
    ROW(ZEN5, "ipc", "perf_raw::r76", 0x76),
    ROW(ZEN5, "ipc", "perf_raw::rc0", 0xc0),          /* execution.json ex_ret_instr */
    ROW(ZEN5, "branch", "perf_raw::rc0", 0xc0),
    ROW(ZEN5, "branch", "perf_raw::rc2", 0xc2),       /* execution.json ex_ret_brn */
    ROW(ZEN5, "branch", "perf_raw::rc3", 0xc3),       /* execution.json ex_ret_brn_misp */
    ROW(ZEN5, "cache", "perf_raw::rc0", 0xc0),
    /* load-store.json ls_mab_alloc.all_allocations: 0x41 | 0x0f << 8 */
    ROW(ZEN5, "cache", "perf_raw::rf41", 0xf41),
    /* l2-cache.json l2_cache_req_stat.ic_dc_miss_in_l2: 0x64 | 0x09 << 8 */
    ROW(ZEN5, "cache", "perf_raw::r964", 0x964),
    /* load-store.json ls_any_fills_from_sys near_cache 0x04 | dram_io_near 0x08 |
     * far_cache 0x10 | dram_io_far 0x40 = 0x5c: 0x44 | 0x5c << 8 */
    ROW(ZEN5, "cache", "perf_raw::r5c44", 0x5c44),
    ROW(ZEN5, "mem", "perf_raw::r76", 0x76),
    ROW(ZEN5, "mem", "perf_raw::r5c44", 0x5c44),
    ROW(ZEN5, "mem", "perf_raw::r4844", 0x4844),      /* ls_any_fills_from_sys.dram_io_all 0x48 */
    /* Arm: common-and-microarch.json event numbers */
    ARM_COMMON("arm_n1"),
    ARM_COMMON("arm_v1"),
    ARM_TD("arm_v1"),
    ROW("arm_v1", "topdown", "perf_raw::r10", 0x10),  /* BR_MIS_PRED */
    ARM_COMMON("arm_v2"),
    ARM_TD("arm_v2"),
    /* A64FX: fujitsu/a64fx JSON (cycle, instruction, branch, cache) */
    ROW("arm_a64fx", "ipc", "perf_raw::r11", 0x11),
    ROW("arm_a64fx", "ipc", "perf_raw::r8", 0x08),
    ROW("arm_a64fx", "branch", "perf_raw::r8", 0x08),
    ROW("arm_a64fx", "branch", "perf_raw::r12", 0x12),   /* BR_PRED */
    ROW("arm_a64fx", "branch", "perf_raw::r10", 0x10),   /* BR_MIS_PRED */
    ROW("arm_a64fx", "cache", "perf_raw::r8", 0x08),
    ROW("arm_a64fx", "cache", "perf_raw::r3", 0x03),     /* L1D_CACHE_REFILL */
    ROW("arm_a64fx", "cache", "perf_raw::r17", 0x17),    /* L2D_CACHE_REFILL */
    ROW("arm_a64fx", "cache", "perf_raw::r309", 0x309),  /* L2_MISS_COUNT, a64fx/cache.json */
    ROW("arm_a64fx", "mem", "perf_raw::r11", 0x11),
    ROW("arm_a64fx", "mem", "perf_raw::r309", 0x309),
    ROW("arm_a64fx", "mem", "perf_raw::r17", 0x17),
    /* Sierra Forest (Crestmont): sierraforest/pipeline.json and cache.json,
     * config = event | umask << 8 */
    ROW("srf", "topdown", "perf_raw::r3c", 0x3c),     /* CPU_CLK_UNHALTED.CORE_P 0x3c/0x00 */
    ROW("srf", "topdown", "perf_raw::r72", 0x72),     /* TOPDOWN_RETIRING.ALL_P 0x72/0x00 */
    ROW("srf", "topdown", "perf_raw::r73", 0x73),     /* TOPDOWN_BAD_SPECULATION.ALL_P 0x73 */
    ROW("srf", "topdown", "perf_raw::r71", 0x71),     /* TOPDOWN_FE_BOUND.ALL_P 0x71 */
    ROW("srf", "topdown", "perf_raw::r74", 0x74),     /* TOPDOWN_BE_BOUND.ALL_P 0x74 */
    ROW("srf", "ipc", "perf_raw::r3c", 0x3c),
    ROW("srf", "ipc", "perf_raw::rc0", 0xc0),         /* INST_RETIRED.ANY_P 0xc0/0x00 */
    ROW("srf", "branch", "perf_raw::rc0", 0xc0),
    ROW("srf", "branch", "perf_raw::rc4", 0xc4),      /* BR_INST_RETIRED.ALL_BRANCHES 0xc4/0x00 */
    ROW("srf", "branch", "perf_raw::rc5", 0xc5),      /* BR_MISP_RETIRED.ALL_BRANCHES 0xc5/0x00 */
    ROW("srf", "cache", "perf_raw::rc0", 0xc0),
    /* MEM_LOAD_UOPS_RETIRED.L1_MISS 0xd1 | 0x40 << 8, .L2_MISS 0xd1 | 0x80 << 8 */
    ROW("srf", "cache", "perf_raw::r40d1", 0x40d1),
    ROW("srf", "cache", "perf_raw::r80d1", 0x80d1),
    /* MEM_LOAD_UOPS_L3_MISS_RETIRED.ALL 0xd3 | 0xff << 8 */
    ROW("srf", "cache", "perf_raw::rffd3", 0xffd3),
    ROW("srf", "mem", "perf_raw::r3c", 0x3c),
    ROW("srf", "mem", "perf_raw::rffd3", 0xffd3),
    ROW("srf", "mem", "perf_raw::r412e", 0x412e),     /* LONGEST_LAT_CACHE.MISS 0x2e | 0x41 << 8 */
};
#define NROWS (sizeof table / sizeof *table)

static const char *const golden_models[] = {"spr",  "icx",    "icl",    "skx",
                                            ZEN2,   ZEN3,     ZEN4,     ZEN5,
                                            "arm_n1", "arm_v1", "arm_v2", "arm_a64fx",
                                            "srf"};

/* Every row's event is in its model's group and encodes to the expected config. */
static void check_rows(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        const struct golden *g = &table[i];
        const struct pm_cpu_model *m = pm_cpu_model_find(g->model);
        const struct pm_model_group *grp = pm_cpu_model_group_named(m, g->group);
        CHECK(grp != NULL, "line %d: no group %s in model %s", g->line, g->group, g->model);
        if (!grp)
            continue;
        int in_group = 0;
        for (int e = 0; e < pm_model_group_nevents(grp); e++)
            in_group |= strcmp(grp->events[e].pfm, g->event) == 0;
        CHECK(in_group, "line %d: %s is not in %s/%s", g->line, g->event, g->model, g->group);
        char name[PM_EVENT_NAME_LEN], err[PM_NOTE_LEN] = "";
        CHECK(pm_cpu_model_event_name(m, g->event, name, sizeof name) == 0,
              "line %d: qualified name of %s does not fit", g->line, g->event);
        struct pm_event ev;
        int rc = pm_event_encode(name, 0, &ev, err, sizeof err);
        CHECK(rc == 0, "line %d '%s': refused: %s", g->line, name, err);
        if (rc == 0) {
            CHECK(ev.attr.type == PERF_TYPE_RAW, "line %d '%s': type %u", g->line, name,
                  ev.attr.type);
            CHECK(ev.attr.config == g->config, "line %d '%s': config %#llx, want %#llx",
                  g->line, name, (unsigned long long)ev.attr.config, g->config);
        }
    }
}

/* The reverse: every event of the five golden models has a row. */
static void check_coverage(void)
{
    for (size_t k = 0; k < sizeof golden_models / sizeof *golden_models; k++) {
        const struct pm_cpu_model *m = pm_cpu_model_find(golden_models[k]);
        CHECK(m != NULL, "model %s missing from the table", golden_models[k]);
        for (int id = 0; m && id < PM_NGROUPS; id++) {
            const struct pm_model_group *grp = pm_cpu_model_group(m, (enum pm_model_group_id)id);
            if (id == PM_GROUP_TOPDOWN && m->td_method == PM_TD_METHOD_NONE)
                continue; /* check_structure: no group, and a note says why */
            CHECK(grp != NULL, "model %s lacks group %d", m->name, id);
            for (int e = 0; grp && e < pm_model_group_nevents(grp); e++) {
                int found = 0;
                for (size_t i = 0; i < NROWS; i++)
                    found |= strcmp(table[i].model, m->name) == 0 &&
                             strcmp(table[i].group, grp->name) == 0 &&
                             strcmp(table[i].event, grp->events[e].pfm) == 0;
                CHECK(found, "%s/%s event %s has no golden row", m->name, grp->name,
                      grp->events[e].pfm);
            }
        }
    }
}

/* Structure the consumers rely on: group sizes per method, derived indices
 * in range, aliases pointing at encodable PMUs. */
static void check_structure(void)
{
    for (const struct pm_cpu_model *m = pm_cpu_models; m->name; m++) {
        const struct pm_model_group *td = pm_cpu_model_group(m, PM_GROUP_TOPDOWN);
        int n = pm_model_group_nevents(td);
        switch (m->td_method) {
        case PM_TD_METHOD_PERF_METRICS:
            CHECK(n == 1 + 4 * m->td_levels, "%s: topdown has %d events for %d levels", m->name,
                  n, m->td_levels);
            CHECK(strcmp(td->events[0].pfm, "TOPDOWN:SLOTS") == 0,
                  "%s: slots must lead the topdown group", m->name);
            break;
        case PM_TD_METHOD_SKYLAKE:
            CHECK(n == 5 && m->td_levels == 1, "%s: Skylake topdown has %d events", m->name, n);
            break;
        case PM_TD_METHOD_ZEN4:
            CHECK(n == 6 * m->td_levels && (m->td_levels == 1 || m->td_levels == 2),
                  "%s: Zen 4 topdown has %d events for %d levels", m->name, n, m->td_levels);
            CHECK(m->td_slots_per_cycle == 6 || m->td_slots_per_cycle == 8,
                  "%s: %d dispatch slots per cycle", m->name, m->td_slots_per_cycle);
            break;
        case PM_TD_METHOD_ARM:
            CHECK(n == (m->td_fe_mispred_cycles ? 7 : 6) && m->td_levels == 1,
                  "%s: Arm topdown has %d events", m->name, n);
            CHECK(m->td_slots_per_cycle > 0, "%s: no slots per cycle", m->name);
            break;
        case PM_TD_METHOD_ATOM:
            CHECK(n == 5 && m->td_levels == 1 && m->td_slots_per_cycle == 6,
                  "%s: E-core topdown has %d events, %d slots per cycle", m->name, n,
                  m->td_slots_per_cycle);
            break;
        case PM_TD_METHOD_NONE:
            CHECK(td == NULL && m->td_levels == 0 && m->note != NULL,
                  "%s: no TopDown method needs no topdown group and a note", m->name);
            break;
        default:
            CHECK(0, "%s: unknown TopDown method %d", m->name, (int)m->td_method);
        }
        /* Raw rows: every event names its own PMU, and the hex is its config. */
        for (int id = 0; strcmp(m->pfm_pmu, "perf_raw") == 0 && id < PM_NGROUPS; id++)
            for (int e = 0; m->groups[id] && e < pm_model_group_nevents(m->groups[id]); e++)
                CHECK(strncmp(m->groups[id]->events[e].pfm, "perf_raw::r", 11) == 0,
                      "%s: %s is not a raw encoding", m->name, m->groups[id]->events[e].pfm);
        for (int id = 0; id < PM_NGROUPS; id++) {
            const struct pm_model_group *grp = m->groups[id];
            if (!grp)
                continue;
            int ne = pm_model_group_nevents(grp);
            for (int d = 0; d < PM_MODEL_MAX_DERIVED && grp->derived[d].name; d++)
                CHECK(grp->derived[d].num >= 0 && grp->derived[d].num < ne &&
                          grp->derived[d].den < ne,
                      "%s/%s derived %s: index out of range", m->name, grp->name,
                      grp->derived[d].name);
        }
        CHECK(pm_cpu_model_find(m->name) == m, "%s: duplicate name shadows this row", m->name);
        CHECK(m->hybrid == 0 || m->note != NULL, "%s: hybrid row without a note", m->name);
    }
    /* The aliases reuse rows whose PMU libpfm4 4.13 encodes. */
    CHECK(strcmp(pm_cpu_model_find("tgl")->pfm_pmu, "icl") == 0, "tgl must encode as icl");
    CHECK(strcmp(pm_cpu_model_find("emr")->pfm_pmu, "spr") == 0, "emr must encode as spr");
    CHECK(pm_cpu_model_find("adl_glc")->hybrid, "adl_glc must be marked hybrid");
    /* Dispatch width per model: Zen 4 six (amdzen4/pipeline.json), Zen 5
     * eight (amdzen5/pipeline.json total_dispatch_slots = 8 × ls_not_halted_cyc),
     * Neoverse V1 eight (neoverse-v1/metrics.json CPU_CYCLES * 8). */
    CHECK(pm_cpu_model_find(ZEN4)->td_slots_per_cycle == 6, "zen4 has 6 slots per cycle");
    CHECK(pm_cpu_model_find(ZEN5)->td_slots_per_cycle == 8, "zen5 has 8 slots per cycle");
    CHECK(pm_cpu_model_find("arm_v1")->td_slots_per_cycle == 8 &&
              pm_cpu_model_find("arm_v1")->td_fe_mispred_cycles == 4,
          "arm_v1: 8 slots, 4 cycles per misprediction");
    CHECK(pm_cpu_model_find("arm_v2")->td_fe_mispred_cycles == 0, "arm_v2: no correction");
    CHECK(pm_cpu_model_find("nope") == NULL && pm_cpu_model_find(NULL) == NULL,
          "unknown names must give NULL");
}

/* Detection (CPUID/MIDR): the row found encodes its ipc events, unless the
 * installed libpfm4 has no table for the row's PMU (then the runtime falls
 * back to sw with no_tables, e2e_fallback_rule). */
static void check_detect(void)
{
    const struct pm_cpu_model *m = pm_cpu_model_detect();
    if (!m) {
        printf("test_models: no table row for this CPU (fine)\n");
        return;
    }
    printf("test_models: this CPU is %s (%s)\n", m->name, m->description);
    char name[PM_EVENT_NAME_LEN], err[PM_NOTE_LEN];
    struct pm_event ev;
    const struct pm_model_group *ipc = pm_cpu_model_group(m, PM_GROUP_IPC);
    if (!pm_pfm_pmu_encodes(m->pfm_pmu)) {
        printf("test_models: the installed libpfm4 has no %s table (fine: no_tables)\n",
               m->pfm_pmu);
        return;
    }
    CHECK(pm_cpu_model_event_name(m, ipc->events[0].pfm, name, sizeof name) == 0 &&
              pm_event_encode(name, 0, &ev, err, sizeof err) == 0,
          "detected model %s: %s does not encode: %s", m->name, name, err);
}

int main(void)
{
    /* Before libpfm4 initialises: encode PMUs that are not present. */
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    CHECK(pm_events_init() == 0, "libpfm4 did not initialise");
    check_rows();
    check_coverage();
    check_structure();
    check_detect();

    /* Derived metrics: ratios of sums. IPC of {cycles 400, instructions 1000}
     * = 1000 / 400 = 2.5; mem bytes of 10 lines = 64 × 10 = 640 (no
     * denominator); a zero denominator gives -1, never inf/NaN. */
    const struct pm_cpu_model *spr = pm_cpu_model_find("spr");
    const struct pm_model_group *ipc = pm_cpu_model_group(spr, PM_GROUP_IPC);
    const struct pm_model_group *mem = pm_cpu_model_group(spr, PM_GROUP_MEM);
    uint64_t ipc_counts[2] = {400, 1000}, mem_counts[3] = {1000, 3, 10}, zero[2] = {0, 5};
    double v = 0;
    CHECK(pm_derived_eval(&ipc->derived[0], ipc_counts, 2, &v) == 0 && v == 2.5,
          "IPC %g, want 2.5", v);
    CHECK(pm_derived_eval(&mem->derived[1], mem_counts, 3, &v) == 0 && v == 640.0,
          "mem bytes %g, want 640", v);
    CHECK(pm_derived_eval(&ipc->derived[0], zero, 2, &v) == -1, "IPC over 0 cycles must fail");
    CHECK(pm_derived_eval(&mem->derived[1], mem_counts, 2, &v) == -1,
          "an index beyond the counts must fail");
    return TEST_DONE("test_models");
}
