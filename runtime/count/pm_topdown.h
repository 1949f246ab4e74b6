/* pm_topdown — TopDown arithmetic: pure functions, no I/O, no state.
 *
 * What perfmark stores per (thread, region) cell is slot counts, never
 * percentages: a ratio is recomputed from summed slot counts over whatever
 * aggregation the report makes (threads, ranks, visits), so that averaging
 * ratios of unequal regions never happens.
 *
 * Every method produces the same slot-count structure (struct pm_td_slots):
 *   - PERF_METRICS (Intel Ice Lake and later): the kernel exposes `slots`
 *     (fixed counter 3) and pseudo events topdown-* whose counts are already
 *     slot counts, floor(slots × byte / 255) per read window (see
 *     pm_td_metric_slots). Sapphire Rapids adds four level-2 bytes.
 *   - Skylake (generic events, Intel TMA / perf formulas): pm_td_from_skylake.
 *   - AMD Zen 4/Zen 5 pipeline utilization (6 or 8 dispatch slots per
 *     cycle): pm_td_from_zen4.
 *   - Arm slot accounting (STALL_SLOT_*, OP_SPEC/OP_RETIRED; Neoverse V1,
 *     V2): pm_td_from_arm.
 *   - Intel E-cores (Crestmont, Sierra Forest): TOPDOWN_*.ALL_P slot
 *     events, pm_td_from_atom.
 * See docs/topdown.md for the method per CPU model and the SHORT threshold. */
#ifndef PM_TOPDOWN_H
#define PM_TOPDOWN_H

#include <stddef.h>
#include <stdint.h>

struct pm_rdpmc_hooks;

/* Slot-count categories. The first eight are in PERF_METRICS byte order
 * (byte i of the MSR belongs to metric i; the kernel's topdown-* pseudo
 * events are config 0x8000 + i × 0x100). SMT contention is the fifth
 * level-1 category of AMD's pipeline utilization; it is 0 on Intel. */
enum pm_td_metric {
    PM_TD_RETIRING = 0,       /* topdown-retiring       0x8000 */
    PM_TD_BAD_SPEC = 1,       /* topdown-bad-spec       0x8100 */
    PM_TD_FE_BOUND = 2,       /* topdown-fe-bound       0x8200 */
    PM_TD_BE_BOUND = 3,       /* topdown-be-bound       0x8300 */
    PM_TD_HEAVY_OPS = 4,      /* topdown-heavy-ops      0x8400 (level 2) */
    PM_TD_BR_MISPREDICT = 5,  /* topdown-br-mispredict  0x8500 (level 2) */
    PM_TD_FETCH_LAT = 6,      /* topdown-fetch-lat      0x8600 (level 2) */
    PM_TD_MEM_BOUND = 7,      /* topdown-mem-bound      0x8700 (level 2) */
    PM_TD_SMT_CONTENTION = 8, /* AMD: slots given to the other thread */
    PM_TD_NCOUNTS = 9,
};
#define PM_TD_NBYTES 8        /* metrics held in PERF_METRICS */

/* One cell's TopDown slot counts. Cells add field by field (pm_td_add). */
struct pm_td_slots {
    uint64_t slots;                /* total slots (the kernel's `slots`, 4 or 6 × cycles) */
    uint64_t m[PM_TD_NCOUNTS];     /* slot counts per category */
    int levels;                    /* 1, or 2 when the level-2 children were measured */
};

/* Nodes of the breakdown: level 1, then level 2 as (measured child,
 * derived sibling = parent − child, clamped at 0) pairs. */
enum pm_td_node {
    PM_TD_N_RETIRING, PM_TD_N_BAD_SPEC, PM_TD_N_FE_BOUND, PM_TD_N_BE_BOUND,
    PM_TD_N_SMT_CONTENTION,
    PM_TD_N_HEAVY_OPS, PM_TD_N_LIGHT_OPS,           /* children of retiring */
    PM_TD_N_BR_MISPREDICT, PM_TD_N_MACHINE_CLEARS,  /* children of bad speculation */
    PM_TD_N_FETCH_LAT, PM_TD_N_FETCH_BW,            /* children of frontend bound */
    PM_TD_N_MEM_BOUND, PM_TD_N_CORE_BOUND,          /* children of backend bound */
    PM_TD_NNODES,
};

/* Status of a breakdown: ratios need a nonzero denominator. */
enum pm_td_status {
    PM_TD_OK = 0,
    PM_TD_NO_SLOTS = 1,   /* Σ level-1 slots is 0: no ratios (never NaN) */
};

struct pm_td_breakdown {
    double ratio[PM_TD_NNODES];  /* fraction of Σ level-1 slots; 0 where not measured */
    int levels;
};

/* ---- the kernel's read-side conversion (Ice Lake and later) ------------ */

/* Slots of metric `idx` (0..7) in one read window: floor(slots × byte / 255)
 * for byte idx of the PERF_METRICS value, exactly as the kernel's
 * icl_get_metrics_event_value (mul_u64_u32_div: no overflow for any slots). */
uint64_t pm_td_metric_slots(uint64_t slots, uint64_t perf_metrics, int idx);

/* One read window: the raw fixed counter 3 and PERF_METRICS since the last
 * reset. The kernel resets both on every read() of the group. */
struct pm_td_window {
    uint64_t slots;
    uint64_t metrics;
};

/* Slot counts of one window (levels 1: bytes 0..3, 2: bytes 0..7). */
void pm_td_from_window(const struct pm_td_window *w, int levels, struct pm_td_slots *out);

/* A region over n read windows: the per-window conversions summed, which
 * is what the region's delta of the kernel counts amounts to. */
void pm_td_from_windows(const struct pm_td_window *w, size_t n, int levels,
                        struct pm_td_slots *out);

/* The kernel's per-event counts of one TopDown group: [0] slots, [1 + i]
 * metric i. This mirrors __icl_update_topdown_event: at each update the
 * count grows by value(slots, metrics) − value(last_slots, last_metrics)
 * when that is positive (last_* are the registers saved at a context
 * switch, 0 otherwise); a window with zero slots adds nothing. */
struct pm_td_kcounts {
    uint64_t count[1 + PM_TD_NBYTES];
};
void pm_td_kernel_update(struct pm_td_kcounts *k, int levels, uint64_t slots,
                         uint64_t metrics, uint64_t last_slots, uint64_t last_metrics);

/* Slot counts from a delta of the group's read values, in the order of the
 * topdown group of struct pm_cpu_model (slots, then metrics 0..3, then 4..7
 * when levels is 2). n must be 1 + 4 × levels; -1 otherwise. */
int pm_td_from_group_values(const uint64_t *v, size_t n, int levels, struct pm_td_slots *out);

/* ---- the rdpmc path ------------------------------------------------------ */

/* RDPMC indices (topdown.txt, x86_pmu_event_idx): fixed counter 3 is SLOTS;
 * bit 29 selects the PERF_METRICS register. */
#define PM_TD_RDPMC_SLOTS ((1u << 30) | 3u)
#define PM_TD_RDPMC_METRICS (1u << 29)

/* Raw registers through rdpmc; slots masked to the counter width (the mmap
 * page's pmc_width, 48 on these cores). */
void pm_td_rdpmc_sample(const struct pm_rdpmc_hooks *hooks, unsigned width,
                        struct pm_td_window *raw);

/* The group's values as read() would return them at this instant: the
 * counts of the closed windows (`offset`; in the runtime, what the last
 * read() returned) plus the conversion of the raw registers of the open
 * window. A sample resets nothing; pm_td_rdpmc_fold closes a window the way
 * the kernel's read() does. */
void pm_td_rdpmc_value(const struct pm_td_kcounts *offset, const struct pm_td_window *raw,
                       int levels, struct pm_td_kcounts *out);

/* Close the open window: add its conversion to `acc`, as the kernel does to
 * event->count on a read. The caller then resets the registers. */
void pm_td_rdpmc_fold(struct pm_td_kcounts *acc, const struct pm_td_window *raw, int levels);

/* The runtime's rdpmc mode (pm_counterset.c, docs/topdown.md "Long regions
 * and precision"): a reading is base + conversion of the open window, where
 * base is what the last read() of the group returned; a read() (which makes
 * the kernel convert and reset) happens when the open window exceeds this
 * many slots. 2^22 slots is 0.2 to 0.3 ms of one core at 4 to 6 slots per
 * cycle and 3 to 4 GHz: the reset's syscall (about 1 µs with the kernel's
 * conversion) costs at most ~0.5 % of a thread that crosses boundaries
 * continuously, and a visit is never SHORT for where it entered its window
 * once it is longer than 1024 × (2 + ceil(2 × 2^22 / 255)) ≈ 3.4·10^7 slots
 * (about 2 ms). */
#define PM_TD_RDPMC_RESET_SLOTS (1ull << 22)

/* Error accounting of the rdpmc mode, in "equivalent windows" so that the
 * read() rules (pm_td_error_bound, pm_td_is_short) hold unchanged. A visit
 * of S slots entered when the open window already held W_a slots and
 * spanning k resets strictly inside it (reads by perfmark, or by anyone
 * else) is off by at most, per metric,
 *     S/255 + 2·W_a/255 + (k + 1) + [W_a > 0]
 * (derivation in docs/topdown.md), which is S/255 + n_eq with
 *     n_eq = k + 1 + pm_td_enter_windows(W_a).
 * With a reset at every boundary (W_a = 0) n_eq is the read() count of
 * windows. pm_td_enter_windows(W) = 0 for W = 0, else 1 + ceil(2W/255). */
uint64_t pm_td_enter_windows(uint64_t open_slots);
uint64_t pm_td_visit_windows(uint64_t open_slots_at_enter, uint64_t resets_inside);

/* ---- other methods ------------------------------------------------------- */

/* Skylake/Cascade Lake (no PERF_METRICS), per thread (the SMT-off formulas of
 * perf's skx-metrics.json: per-thread counters, no *_ANY events):
 *   slots    = 4 × CPU_CLK_UNHALTED.THREAD
 *   frontend = IDQ_UOPS_NOT_DELIVERED.CORE
 *   bad spec = UOPS_ISSUED.ANY − UOPS_RETIRED.RETIRE_SLOTS + 4 × INT_MISC.RECOVERY_CYCLES
 *   retiring = UOPS_RETIRED.RETIRE_SLOTS
 *   backend  = slots − frontend − bad spec − retiring
 * Counts are in the order of the skl/skx/clx topdown group. Negative
 * differences (multiplexing, skid) are clamped at 0. */
struct pm_td_skl_counts {
    uint64_t cycles;            /* CPU_CLK_UNHALTED.THREAD_P */
    uint64_t idq_not_delivered; /* IDQ_UOPS_NOT_DELIVERED.CORE */
    uint64_t uops_issued;       /* UOPS_ISSUED.ANY */
    uint64_t retire_slots;      /* UOPS_RETIRED.RETIRE_SLOTS */
    uint64_t recovery_cycles;   /* INT_MISC.RECOVERY_CYCLES */
};
void pm_td_from_skylake(const struct pm_td_skl_counts *c, struct pm_td_slots *out);

/* AMD Zen 4 pipeline utilization (perf's amdzen4/pipeline.json; Zen 5's
 * amdzen5/pipeline.json is the same with 8 slots per cycle):
 *   slots    = width × ls_not_halted_cyc   (width 6 on Zen 4, 8 on Zen 5)
 *   frontend = de_no_dispatch_per_slot.no_ops_from_frontend
 *   backend  = de_no_dispatch_per_slot.backend_stalls
 *   smt      = de_no_dispatch_per_slot.smt_contention
 *   bad spec = de_src_op_disp.all − ex_ret_ops   (clamped at 0)
 *   retiring = ex_ret_ops
 * Level 2 (levels 2; the same JSON's PipelineL2 metrics), each measured
 * child a slot count within its parent (the sibling is parent − child):
 *   fetch latency = width × no_ops_from_frontend counted with cmask=width
 *                   (cycles in which no slot got an op)     ≤ frontend
 *   mispredicts   = bad spec × ex_ret_brn_misp / (ex_ret_brn_misp + resyncs)
 *   memory bound  = backend × ex_no_retire.load_not_complete
 *                           / ex_no_retire.not_complete      ≤ backend
 *   heavy (microcode) = ex_ret_ucode_ops                     ≤ retiring
 * Ratios of two counts are floor(a × b / c), 0 where c is 0 (perf's
 * d_ratio). The table lists the six level-1 events, then the six level-2
 * ones, in the order of the fields below. */
#define PM_TD_ZEN4_L1_EVENTS 6
struct pm_td_zen4_counts {
    uint64_t cycles;          /* ls_not_halted_cyc */
    uint64_t fe_no_ops;       /* de_no_dispatch_per_slot.no_ops_from_frontend */
    uint64_t be_stalls;       /* de_no_dispatch_per_slot.backend_stalls */
    uint64_t smt_contention;  /* de_no_dispatch_per_slot.smt_contention */
    uint64_t ops_dispatched;  /* de_src_op_disp.all */
    uint64_t ops_retired;     /* ex_ret_ops */
    unsigned width;           /* dispatch slots per cycle (the model row's
                               * td_slots_per_cycle); 0 means Zen 4's 6 */
    int levels;               /* 2: the level-2 counts below are measured */
    uint64_t fe_no_ops_all;   /* no_ops_from_frontend with cmask = width */
    uint64_t brn_misp;        /* ex_ret_brn_misp */
    uint64_t resyncs;         /* resyncs_or_nc_redirects (Zen 4), bp_redirects.resync (Zen 5) */
    uint64_t no_retire_load;  /* ex_no_retire.load_not_complete */
    uint64_t no_retire_any;   /* ex_no_retire.not_complete */
    uint64_t ucode_ops;       /* ex_ret_ucode_ops */
};
void pm_td_from_zen4(const struct pm_td_zen4_counts *c, struct pm_td_slots *out);

/* Arm slot accounting, level 1 (the kernel's arm64 sbsa.json metrics and
 * the per-core overrides in arm/neoverse-v1/metrics.json), W slots per cycle:
 *   slots    = W × CPU_CYCLES
 *   used     = slots − STALL_SLOT                         (clamped at 0)
 *   retiring = used × OP_RETIRED / OP_SPEC                (OP_RETIRED ≤ OP_SPEC)
 *   bad spec = used − retiring + moved
 *   frontend = STALL_SLOT_FRONTEND − moved
 *   backend  = STALL_SLOT_BACKEND
 * where moved = min(STALL_SLOT_FRONTEND, M × W × BR_MIS_PRED): Neoverse V1's
 * metrics take M = 4 cycles per misprediction from frontend bound and give
 * them to bad speculation (100 × (STALL_SLOT_FRONTEND/(8 × CPU_CYCLES) −
 * 4 × BR_MIS_PRED/CPU_CYCLES)); the generic (V2) formulas have M = 0. The
 * clamp keeps frontend ≥ 0 and the four categories' sum unchanged.
 * OP_SPEC 0 (nothing executed): retiring = used. Counts are in the order of
 * the ARM topdown group (br_mis_pred is the seventh event, only where M ≠ 0). */
struct pm_td_arm_counts {
    uint64_t cycles;              /* CPU_CYCLES          0x11 */
    uint64_t stall_slot_frontend; /* STALL_SLOT_FRONTEND 0x3e */
    uint64_t stall_slot_backend;  /* STALL_SLOT_BACKEND  0x3d */
    uint64_t stall_slot;          /* STALL_SLOT          0x3f */
    uint64_t op_spec;             /* OP_SPEC             0x3b */
    uint64_t op_retired;          /* OP_RETIRED          0x3a */
    uint64_t br_mis_pred;         /* BR_MIS_PRED         0x10 (0 where not measured) */
    unsigned width;               /* W: slots per cycle (model row) */
    unsigned mispred_cycles;      /* M: model row's td_fe_mispred_cycles */
};
void pm_td_from_arm(const struct pm_td_arm_counts *c, struct pm_td_slots *out);

/* Intel E-core TopDown level 1 (perf's sierraforest/srf-metrics.json:
 * tma_X = TOPDOWN_X.ALL_P / (6 × CPU_CLK_UNHALTED.CORE)): the four events
 * count slots already; slots = width × cycles. Counts in the order of the
 * ATOM topdown group. */
struct pm_td_atom_counts {
    uint64_t cycles;     /* CPU_CLK_UNHALTED.CORE_P          0x3c */
    uint64_t retiring;   /* TOPDOWN_RETIRING.ALL_P           0x72 */
    uint64_t bad_spec;   /* TOPDOWN_BAD_SPECULATION.ALL_P    0x73 */
    uint64_t fe_bound;   /* TOPDOWN_FE_BOUND.ALL_P           0x71 */
    uint64_t be_bound;   /* TOPDOWN_BE_BOUND.ALL_P           0x74 */
    unsigned width;      /* issue slots per cycle (model row: 6 on Crestmont) */
};
void pm_td_from_atom(const struct pm_td_atom_counts *c, struct pm_td_slots *out);

/* ---- breakdown ------------------------------------------------------------ */

/* a += b (aggregation over visits, threads, ranks); levels is the lower. */
void pm_td_add(struct pm_td_slots *a, const struct pm_td_slots *b);

/* Σ level-1 slots: the denominator of every ratio, as perf divides
 * topdown-X by (fe-bound + bad-spec + retiring + be-bound). */
uint64_t pm_td_level1_total(const struct pm_td_slots *s);

/* Slot count of any node; the derived level-2 nodes are parent − child,
 * clamped at 0 (8-bit quantisation can make a child exceed its parent). */
uint64_t pm_td_node_slots(const struct pm_td_slots *s, enum pm_td_node node);

/* Ratios of every node. PM_TD_NO_SLOTS (all ratios 0) when Σ level 1 is 0. */
enum pm_td_status pm_td_breakdown(const struct pm_td_slots *s, struct pm_td_breakdown *out);

/* A printable name for a node ("retiring", "light_ops", ...). */
const char *pm_td_node_name(enum pm_td_node node);

/* ---- SHORT ---------------------------------------------------------------- */

/* A cell is SHORT when it averages fewer than this many slots per read
 * window. Worst-case error of one derived level-2 node (parent − child,
 * two quantised metrics) over a region of S slots and n windows:
 *   2 × (S/255 + n)   (one 8-bit step of the window's slots plus the
 *                      kernel's floor, for each of the two metrics)
 * which stays under 1 % of S only when S/n ≥ 928 (at 927 it is 1.0001 %).
 * 1024 slots (170 to 256 cycles at 6 to 4 slots per cycle) is the round
 * value above it: there the bound is 0.98 % for level 2, 0.49 % for level 1.
 * The bound is for the read() path, where every read resets the registers
 * and so closes a window; the rdpmc mode counts equivalent windows
 * (pm_td_visit_windows) so that the same bound and rule hold. */
#define PM_TD_SHORT_SLOTS_PER_WINDOW 1024u

/* Worst-case absolute error, in slots, of one node over S slots and n
 * windows: k × (S/255 + n), k = 1 for level-1 nodes and measured children
 * (one quantised metric), 2 for derived level-2 nodes (two). */
double pm_td_error_bound(uint64_t slots, uint64_t windows, int derived);

/* 1 when a cell of `slots` over `windows` read windows (at least its visit
 * count; 0 counts as 1) is SHORT. */
int pm_td_is_short(uint64_t slots, uint64_t windows);

#endif
