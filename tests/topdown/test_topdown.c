/* TopDown arithmetic against vectors worked out by hand from the kernel's
 * conversion (icl_get_metrics_event_value: floor(slots × byte / 255)), the
 * perf tool's ratios (topdown-X / Σ level 1) and level-2 derivations, and
 * the Skylake / Zen 4 formulas. The hand computation is beside each vector. */
#include "../unit/check.h"
#include "pm_rdpmc.h"
#include "pm_topdown.h"

#include <math.h>
#include <string.h>

/* PERF_METRICS value from its eight bytes, byte 0 first (a constant
 * expression, so vectors can be static tables). */
#define metrics8(b0, b1, b2, b3, b4, b5, b6, b7)                                      \
    ((uint64_t)(b0) | (uint64_t)(b1) << 8 | (uint64_t)(b2) << 16 | (uint64_t)(b3) << 24 | \
     (uint64_t)(b4) << 32 | (uint64_t)(b5) << 40 | (uint64_t)(b6) << 48 | (uint64_t)(b7) << 56)
#define METRICS4(r, bs, fe, be) metrics8(r, bs, fe, be, 0, 0, 0, 0)

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

static void test_rounding(void)
{
    /* slots 1000: byte 0 → 0; byte 1 → floor(1000/255 = 3.92) = 3;
     * byte 254 → floor(254000/255 = 996.08) = 996; byte 255 → 1000. */
    CHECK(pm_td_metric_slots(1000, METRICS4(0, 0, 0, 0), 0) == 0, "byte 0");
    CHECK(pm_td_metric_slots(1000, METRICS4(1, 0, 0, 0), 0) == 3, "byte 1: %llu",
          (unsigned long long)pm_td_metric_slots(1000, METRICS4(1, 0, 0, 0), 0));
    CHECK(pm_td_metric_slots(1000, METRICS4(254, 0, 0, 0), 0) == 996, "byte 254");
    CHECK(pm_td_metric_slots(1000, METRICS4(255, 0, 0, 0), 0) == 1000, "byte 255");
    /* One step is slots/255: 255 slots at byte 1 is exactly 1, 254 floors to 0. */
    CHECK(pm_td_metric_slots(255, METRICS4(1, 0, 0, 0), 0) == 1, "255 × 1 / 255");
    CHECK(pm_td_metric_slots(254, METRICS4(1, 0, 0, 0), 0) == 0, "254 × 1 / 255");
    /* No overflow: 2^64 − 1 = 255 × 0x0101010101010101, so byte 1 gives
     * 0x0101010101010101 and byte 255 gives 2^64 − 1 (a 64-bit product
     * would have wrapped). */
    CHECK(pm_td_metric_slots(UINT64_MAX, METRICS4(1, 0, 0, 0), 0) == 0x0101010101010101ull,
          "2^64-1 × 1 / 255");
    CHECK(pm_td_metric_slots(UINT64_MAX, METRICS4(255, 0, 0, 0), 0) == UINT64_MAX,
          "2^64-1 × 255 / 255");
    /* Byte positions: 0x0102030405060708 has byte 0 = 8 ... byte 7 = 1;
     * with 255 slots each metric is its byte. */
    for (int i = 0; i < 8; i++)
        CHECK(pm_td_metric_slots(255, 0x0102030405060708ull, i) == (uint64_t)(8 - i),
              "byte %d", i);
    CHECK(pm_td_metric_slots(255, UINT64_MAX, 8) == 0, "index 8 is not a byte");
}

static void test_window_level1(void)
{
    /* slots 1020 = 4 × 255, bytes retiring 102, bad spec 25, fe 51, be 77
     * (sum 255): 1020 × b / 255 = 4b exactly → 408, 100, 204, 308. */
    struct pm_td_window w = {1020, METRICS4(102, 25, 51, 77)};
    struct pm_td_slots s;
    pm_td_from_window(&w, 1, &s);
    CHECK(s.slots == 1020 && s.m[PM_TD_RETIRING] == 408 && s.m[PM_TD_BAD_SPEC] == 100 &&
              s.m[PM_TD_FE_BOUND] == 204 && s.m[PM_TD_BE_BOUND] == 308,
          "window: %llu %llu %llu %llu", (unsigned long long)s.m[0],
          (unsigned long long)s.m[1], (unsigned long long)s.m[2], (unsigned long long)s.m[3]);
    /* Σ level 1 = 1020: ratios 0.4, 100/1020, 0.2, 308/1020. */
    struct pm_td_breakdown b;
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK, "breakdown refused");
    CHECK(near(b.ratio[PM_TD_N_RETIRING], 0.4) && near(b.ratio[PM_TD_N_FE_BOUND], 0.2) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 100.0 / 1020) &&
              near(b.ratio[PM_TD_N_BE_BOUND], 308.0 / 1020),
          "ratios %g %g %g %g", b.ratio[0], b.ratio[1], b.ratio[2], b.ratio[3]);
    /* Level 1 only: the level-2 nodes are 0, even with bytes 4..7 set. */
    w.metrics |= 0xffffffffull << 32;
    pm_td_from_window(&w, 1, &s);
    CHECK(s.m[PM_TD_HEAVY_OPS] == 0 && pm_td_node_slots(&s, PM_TD_N_LIGHT_OPS) == 0,
          "level 1 read level-2 bytes");
}

static void test_windows(void)
{
    /* One window of 1000 slots at byte 128: floor(128000/255) = 501
     * (255 × 501 = 127755, remainder 245). */
    struct pm_td_window one = {1000, METRICS4(128, 127, 0, 0)};
    struct pm_td_slots s1, s2, s10;
    pm_td_from_windows(&one, 1, 1, &s1);
    CHECK(s1.m[PM_TD_RETIRING] == 501, "one window: %llu",
          (unsigned long long)s1.m[PM_TD_RETIRING]);
    /* The same work read twice, 500 slots each at byte 128:
     * floor(64000/255) = 250 (remainder 250) per window → 500. */
    struct pm_td_window two[2] = {{500, METRICS4(128, 127, 0, 0)},
                                  {500, METRICS4(128, 127, 0, 0)}};
    pm_td_from_windows(two, 2, 1, &s2);
    CHECK(s2.slots == 1000 && s2.m[PM_TD_RETIRING] == 500, "two windows: %llu",
          (unsigned long long)s2.m[PM_TD_RETIRING]);
    /* Ten windows of 100 slots: floor(12800/255) = 50 (remainder 50) → 500.
     * Each window's floor costs < 1 slot: total loss ≤ n. */
    struct pm_td_window ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = (struct pm_td_window){100, METRICS4(128, 127, 0, 0)};
    pm_td_from_windows(ten, 10, 1, &s10);
    CHECK(s10.slots == 1000 && s10.m[PM_TD_RETIRING] == 500, "ten windows: %llu",
          (unsigned long long)s10.m[PM_TD_RETIRING]);
    /* Windows of different mix are exact where the bytes are: 300 slots all
     * retiring (byte 255 → 300) then 700 slots none (byte 0 → 0) → 300.
     * Read as one window the true 0.3 becomes byte 76 or 77:
     * floor(76000/255) = 298, floor(77000/255) = 301, both within the
     * one-step bound 1000/255 + 1 = 4.9 slots of 300. */
    struct pm_td_window mix[2] = {{300, METRICS4(255, 0, 0, 0)}, {700, METRICS4(0, 0, 255, 0)}};
    struct pm_td_slots sm, s76, s77;
    pm_td_from_windows(mix, 2, 1, &sm);
    CHECK(sm.m[PM_TD_RETIRING] == 300 && sm.m[PM_TD_FE_BOUND] == 700, "mixed windows");
    struct pm_td_window w76 = {1000, METRICS4(76, 0, 179, 0)}, w77 = {1000, METRICS4(77, 0, 178, 0)};
    pm_td_from_window(&w76, 1, &s76);
    pm_td_from_window(&w77, 1, &s77);
    CHECK(s76.m[PM_TD_RETIRING] == 298 && s77.m[PM_TD_RETIRING] == 301, "76: %llu 77: %llu",
          (unsigned long long)s76.m[PM_TD_RETIRING], (unsigned long long)s77.m[PM_TD_RETIRING]);
    CHECK(fabs(298.0 - 300.0) <= pm_td_error_bound(1000, 1, 0) &&
              fabs(301.0 - 300.0) <= pm_td_error_bound(1000, 1, 0),
          "one-window error exceeds its bound");
}

static void test_level2(void)
{
    /* SPR, slots 2550 = 10 × 255: every metric is 10 × its byte.
     *   level 1: retiring 100 → 1000, bad spec 30 → 300, fe 60 → 600, be 65 → 650
     *   level 2: heavy 20 → 200, br mispredict 25 → 250, fetch lat 40 → 400,
     *            mem bound 50 → 500
     *   derived: light 1000 − 200 = 800, machine clears 300 − 250 = 50,
     *            fetch bw 600 − 400 = 200, core bound 650 − 500 = 150
     *   Σ level 1 = 2550; e.g. light ops 800 / 2550. */
    struct pm_td_window w = {2550, metrics8(100, 30, 60, 65, 20, 25, 40, 50)};
    struct pm_td_slots s;
    pm_td_from_window(&w, 2, &s);
    static const struct { enum pm_td_node node; uint64_t want; } v[] = {
        {PM_TD_N_RETIRING, 1000}, {PM_TD_N_BAD_SPEC, 300}, {PM_TD_N_FE_BOUND, 600},
        {PM_TD_N_BE_BOUND, 650}, {PM_TD_N_SMT_CONTENTION, 0},
        {PM_TD_N_HEAVY_OPS, 200}, {PM_TD_N_LIGHT_OPS, 800},
        {PM_TD_N_BR_MISPREDICT, 250}, {PM_TD_N_MACHINE_CLEARS, 50},
        {PM_TD_N_FETCH_LAT, 400}, {PM_TD_N_FETCH_BW, 200},
        {PM_TD_N_MEM_BOUND, 500}, {PM_TD_N_CORE_BOUND, 150},
    };
    struct pm_td_breakdown b;
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && b.levels == 2, "level-2 breakdown");
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        CHECK(pm_td_node_slots(&s, v[i].node) == v[i].want, "%s: %llu, want %llu",
              pm_td_node_name(v[i].node), (unsigned long long)pm_td_node_slots(&s, v[i].node),
              (unsigned long long)v[i].want);
        CHECK(near(b.ratio[v[i].node], (double)v[i].want / 2550.0), "%s ratio %g",
              pm_td_node_name(v[i].node), b.ratio[v[i].node]);
    }
    /* Group read values in table order give the same structure. */
    uint64_t vals[9] = {2550, 1000, 300, 600, 650, 200, 250, 400, 500};
    struct pm_td_slots g;
    CHECK(pm_td_from_group_values(vals, 9, 2, &g) == 0 && memcmp(g.m, s.m, sizeof g.m) == 0 &&
              g.slots == 2550,
          "group values differ from the window");
    CHECK(pm_td_from_group_values(vals, 5, 2, &g) == -1, "5 values for level 2 accepted");

    /* Clamp: 255 slots, bad spec byte 2 but br mispredict byte 3 (each
     * byte is rounded on its own): machine clears = max(0, 2 − 3) = 0. */
    struct pm_td_window q = {255, metrics8(250, 2, 2, 1, 0, 3, 0, 0)};
    pm_td_from_window(&q, 2, &s);
    CHECK(s.m[PM_TD_BR_MISPREDICT] == 3 && pm_td_node_slots(&s, PM_TD_N_MACHINE_CLEARS) == 0,
          "machine clears must clamp at 0, got %llu",
          (unsigned long long)pm_td_node_slots(&s, PM_TD_N_MACHINE_CLEARS));
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && b.ratio[PM_TD_N_MACHINE_CLEARS] == 0.0,
          "clamped ratio %g", b.ratio[PM_TD_N_MACHINE_CLEARS]);
}

static void test_zero_slots(void)
{
    /* No slots at all, and slots whose metrics are all 0 (a window the
     * hardware had not yet attributed): no ratios, status says why. */
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    struct pm_td_window none = {0, 0}, unattributed = {100, 0};
    pm_td_from_window(&none, 2, &s);
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_NO_SLOTS, "zero slots gave ratios");
    for (int n = 0; n < PM_TD_NNODES; n++)
        CHECK(b.ratio[n] == 0.0, "ratio %d is %g, not 0", n, b.ratio[n]);
    pm_td_from_window(&unattributed, 1, &s);
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_NO_SLOTS, "Σ level 1 = 0 gave ratios");
    /* The kernel adds nothing for a window without slots. */
    struct pm_td_kcounts k;
    memset(&k, 0, sizeof k);
    pm_td_kernel_update(&k, 2, 0, UINT64_MAX, 0, 0);
    for (int i = 0; i < 9; i++)
        CHECK(k.count[i] == 0, "zero-slot window counted %d", i);
}

static void test_short(void)
{
    /* Derived level-2 bound 2 × (S/255 + n), against 1 % of S, n = 1:
     *   S = 928: 2 × (3.6392 + 1) = 9.2784 ≤ 9.28   (under 1 %)
     *   S = 927: 2 × (3.6353 + 1) = 9.2706 > 9.27   (over 1 %)
     *   S = 1024 (the threshold): 2 × (4.0157 + 1) = 10.031 = 0.98 % of S;
     *   level 1 there: 4.0157 + 1 = 5.016 = 0.49 %. */
    CHECK(pm_td_error_bound(928, 1, 1) <= 9.28, "928: %g", pm_td_error_bound(928, 1, 1));
    CHECK(pm_td_error_bound(927, 1, 1) > 9.27, "927: %g", pm_td_error_bound(927, 1, 1));
    CHECK(pm_td_error_bound(1024, 1, 1) < 0.01 * 1024, "1024 derived over 1 %%");
    CHECK(pm_td_error_bound(1024, 1, 0) < 0.005 * 1024, "1024 level 1 over 0.5 %%");
    /* Edges: 1023 slots in one window is SHORT, 1024 is not; per window,
     * so 2047 over 2 windows is SHORT and 2048 is not; 0 windows count as 1. */
    CHECK(pm_td_is_short(1023, 1) && !pm_td_is_short(1024, 1), "edge at 1024");
    CHECK(pm_td_is_short(2047, 2) && !pm_td_is_short(2048, 2), "edge at 2 × 1024");
    CHECK(pm_td_is_short(1023, 0) && !pm_td_is_short(1024, 0), "0 windows");
    CHECK(pm_td_is_short(0, 1), "no slots is SHORT");
    /* Every region not SHORT keeps the derived bound under 1 %: at the edge
     * of 1, 2, 10 and 1000 windows. */
    for (uint64_t n = 1; n <= 1000; n = n < 10 ? n + 1 : n * 10) {
        uint64_t s = PM_TD_SHORT_SLOTS_PER_WINDOW * n;
        CHECK(pm_td_error_bound(s, n, 1) < 0.01 * (double)s, "%llu windows: %g of %llu",
              (unsigned long long)n, pm_td_error_bound(s, n, 1), (unsigned long long)s);
    }
}

static void test_skylake(void)
{
    /* cycles 1000 → slots 4000; FE = 800; bad spec = 2500 − 2000 + 4 × 50
     * = 700; retiring = 2000; BE = 4000 − 800 − 700 − 2000 = 500.
     * Ratios over Σ = 4000: 0.2, 0.175, 0.5, 0.125. */
    struct pm_td_skl_counts c = {1000, 800, 2500, 2000, 50};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_skylake(&c, &s);
    CHECK(s.slots == 4000 && s.m[PM_TD_FE_BOUND] == 800 && s.m[PM_TD_BAD_SPEC] == 700 &&
              s.m[PM_TD_RETIRING] == 2000 && s.m[PM_TD_BE_BOUND] == 500 && s.levels == 1,
          "skylake: %llu %llu %llu %llu", (unsigned long long)s.m[0],
          (unsigned long long)s.m[1], (unsigned long long)s.m[2], (unsigned long long)s.m[3]);
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_FE_BOUND], 0.2) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 0.175) && near(b.ratio[PM_TD_N_RETIRING], 0.5) &&
              near(b.ratio[PM_TD_N_BE_BOUND], 0.125),
          "skylake ratios");
    /* Clamps (multiplexed or skewed counts): issued 100 < retired 150 →
     * bad spec max(0, 100 + 0 − 150) = 0; BE = max(0, 400 − 300 − 0 − 150) = 0. */
    struct pm_td_skl_counts neg = {100, 300, 100, 150, 0};
    pm_td_from_skylake(&neg, &s);
    CHECK(s.m[PM_TD_BAD_SPEC] == 0 && s.m[PM_TD_BE_BOUND] == 0 && s.m[PM_TD_RETIRING] == 150,
          "skylake clamps");
}

static void test_zen4(void)
{
    /* cycles 1000 → 6000 slots; FE 1200, BE 1800, SMT 600, dispatched 2400,
     * retired 2100 → bad spec 300, retiring 2100. Σ = 6000:
     * 0.2, 0.3, 0.1, 0.05, 0.35. */
    struct pm_td_zen4_counts c = {1000, 1200, 1800, 600, 2400, 2100, 6, .levels = 1};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_zen4(&c, &s);
    CHECK(s.slots == 6000 && pm_td_level1_total(&s) == 6000 && s.m[PM_TD_BAD_SPEC] == 300 &&
              s.m[PM_TD_SMT_CONTENTION] == 600,
          "zen4 slots");
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_FE_BOUND], 0.2) &&
              near(b.ratio[PM_TD_N_BE_BOUND], 0.3) &&
              near(b.ratio[PM_TD_N_SMT_CONTENTION], 0.1) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 0.05) && near(b.ratio[PM_TD_N_RETIRING], 0.35),
          "zen4 ratios");
    /* retired > dispatched (counts read a few ops apart): bad spec 0. */
    struct pm_td_zen4_counts neg = {10, 0, 0, 0, 50, 60, 6, .levels = 1};
    pm_td_from_zen4(&neg, &s);
    CHECK(s.m[PM_TD_BAD_SPEC] == 0 && s.m[PM_TD_RETIRING] == 60, "zen4 clamp");
}

static void test_zen4_level2(void)
{
    /* Level 1 as test_zen4 (6000 slots: FE 1200, BE 1800, SMT 600, bad spec
     * 300, retiring 2100), and the PipelineL2 events of amdzen4/pipeline.json:
     *   no_ops_from_frontend,cmask=6 = 150 cycles → fetch latency 6 × 150 = 900
     *     (fetch bandwidth 1200 − 900 = 300)
     *   ex_ret_brn_misp 30, resyncs 10 → mispredicts 300 × 30/40 = 225
     *     (machine clears 75)
     *   ex_no_retire.load_not_complete 400 / .not_complete 1000 → memory
     *     bound 1800 × 0.4 = 720 (core bound 1080)
     *   ex_ret_ucode_ops 420 → heavy (microcode) 420 (light 1680). */
    struct pm_td_zen4_counts c = {1000, 1200, 1800, 600, 2400, 2100, 6, 2,
                                  150,  30,   10,   400, 1000, 420};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_zen4(&c, &s);
    CHECK(s.levels == 2 && s.m[PM_TD_FETCH_LAT] == 900 && s.m[PM_TD_BR_MISPREDICT] == 225 &&
              s.m[PM_TD_MEM_BOUND] == 720 && s.m[PM_TD_HEAVY_OPS] == 420,
          "zen4 level 2 slots");
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_FETCH_LAT], 0.15) &&
              near(b.ratio[PM_TD_N_FETCH_BW], 0.05) &&
              near(b.ratio[PM_TD_N_BR_MISPREDICT], 0.0375) &&
              near(b.ratio[PM_TD_N_MACHINE_CLEARS], 0.0125) &&
              near(b.ratio[PM_TD_N_MEM_BOUND], 0.12) && near(b.ratio[PM_TD_N_CORE_BOUND], 0.18) &&
              near(b.ratio[PM_TD_N_HEAVY_OPS], 0.07) && near(b.ratio[PM_TD_N_LIGHT_OPS], 0.28) &&
              near(b.ratio[PM_TD_N_FE_BOUND], 0.2),
          "zen4 level 2 ratios");
    /* Skewed or multiplexed counts never give a child above its parent, and
     * a zero denominator gives 0 (perf's d_ratio): cmask cycles × 6 > FE,
     * load > not_complete, ucode > retired, no mispredicts nor resyncs. */
    struct pm_td_zen4_counts skew = {1000, 1200, 1800, 600, 2400, 2100, 6, 2,
                                     500,  0,    0,    1200, 1000, 5000};
    pm_td_from_zen4(&skew, &s);
    CHECK(s.m[PM_TD_FETCH_LAT] == 1200 && s.m[PM_TD_BR_MISPREDICT] == 0 &&
              s.m[PM_TD_MEM_BOUND] == 1800 && s.m[PM_TD_HEAVY_OPS] == 2100 &&
              pm_td_node_slots(&s, PM_TD_N_MACHINE_CLEARS) == 300,
          "zen4 level 2 clamps");
    /* Zen 5: the same counts at 8 slots per cycle and cmask 8. */
    struct pm_td_zen4_counts z5 = {1000, 1600, 2400, 800, 3200, 2800, 8, 2,
                                   100,  0,    5,    0,   0,    0};
    pm_td_from_zen4(&z5, &s);
    CHECK(s.m[PM_TD_FETCH_LAT] == 800 && s.m[PM_TD_BR_MISPREDICT] == 0 &&
              pm_td_node_slots(&s, PM_TD_N_MACHINE_CLEARS) == 400 && s.m[PM_TD_MEM_BOUND] == 0,
          "zen5 level 2");
}

static void test_zen5_width(void)
{
    /* Zen 5 dispatches 8 ops per cycle (amdzen5/pipeline.json
     * total_dispatch_slots = 8 × ls_not_halted_cyc). cycles 1000 → 8000
     * slots; FE 1600, BE 2400, SMT 800, dispatched 3200, retired 2800 → bad
     * spec 400, retiring 2800. Σ = 8000: 0.2, 0.3, 0.1, 0.05, 0.35. */
    struct pm_td_zen4_counts c = {1000, 1600, 2400, 800, 3200, 2800, 8, .levels = 1};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_zen4(&c, &s);
    CHECK(s.slots == 8000 && pm_td_level1_total(&s) == 8000 && s.m[PM_TD_BAD_SPEC] == 400 &&
              s.m[PM_TD_RETIRING] == 2800 && s.m[PM_TD_FE_BOUND] == 1600 &&
              s.m[PM_TD_BE_BOUND] == 2400 && s.m[PM_TD_SMT_CONTENTION] == 800,
          "zen5 slots %llu", (unsigned long long)s.slots);
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_FE_BOUND], 0.2) &&
              near(b.ratio[PM_TD_N_BE_BOUND], 0.3) &&
              near(b.ratio[PM_TD_N_SMT_CONTENTION], 0.1) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 0.05) && near(b.ratio[PM_TD_N_RETIRING], 0.35),
          "zen5 ratios");
    /* The same counts at Zen 4's width would claim 6000 slots; width 0 is Zen 4's 6. */
    struct pm_td_zen4_counts z4 = {1000, 1200, 1800, 600, 2400, 2100, 0, .levels = 1};
    pm_td_from_zen4(&z4, &s);
    CHECK(s.slots == 6000, "width 0 means Zen 4's 6: %llu", (unsigned long long)s.slots);
}

static void test_arm(void)
{
    /* Neoverse V1 (neoverse-v1/metrics.json, 8 slots, 4 cycles per
     * BR_MIS_PRED): cycles 1000, STALL_SLOT_FRONTEND 2000, _BACKEND 3000,
     * STALL_SLOT 5000, OP_SPEC 3600, OP_RETIRED 2700, BR_MIS_PRED 10.
     *   frontend = 2000/8000 − 4 × 10/1000 = 0.25 − 0.04 = 0.21 → 1680 slots
     *   bad spec = (1 − 2700/3600) × (1 − 5000/8000) + 0.04
     *            = 0.25 × 0.375 + 0.04 = 0.13375            → 1070 slots
     *   retiring = 0.75 × 0.375 = 0.28125                   → 2250 slots
     *   backend  = 3000/8000 = 0.375                        → 3000 slots
     * Σ = 8000. */
    struct pm_td_arm_counts v1 = {1000, 2000, 3000, 5000, 3600, 2700, 10, 8, 4};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_arm(&v1, &s);
    CHECK(s.slots == 8000 && s.levels == 1 && s.m[PM_TD_FE_BOUND] == 1680 &&
              s.m[PM_TD_BAD_SPEC] == 1070 && s.m[PM_TD_RETIRING] == 2250 &&
              s.m[PM_TD_BE_BOUND] == 3000 && s.m[PM_TD_SMT_CONTENTION] == 0,
          "arm v1: fe %llu bs %llu ret %llu be %llu", (unsigned long long)s.m[PM_TD_FE_BOUND],
          (unsigned long long)s.m[PM_TD_BAD_SPEC], (unsigned long long)s.m[PM_TD_RETIRING],
          (unsigned long long)s.m[PM_TD_BE_BOUND]);
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_FE_BOUND], 0.21) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 0.13375) &&
              near(b.ratio[PM_TD_N_RETIRING], 0.28125) && near(b.ratio[PM_TD_N_BE_BOUND], 0.375),
          "arm v1 ratios");
    /* Neoverse V2 (sbsa.json formulas, no correction): frontend 2000/8000 =
     * 0.25, bad spec 0.25 × 0.375 = 0.09375 → 750, retiring 2250, backend 3000. */
    struct pm_td_arm_counts v2 = {1000, 2000, 3000, 5000, 3600, 2700, 0, 8, 0};
    pm_td_from_arm(&v2, &s);
    CHECK(s.m[PM_TD_FE_BOUND] == 2000 && s.m[PM_TD_BAD_SPEC] == 750 &&
              s.m[PM_TD_RETIRING] == 2250 && s.m[PM_TD_BE_BOUND] == 3000 &&
              pm_td_level1_total(&s) == 8000,
          "arm v2");
    /* Clamps: the correction (4 × 8 × 100 = 3200) exceeds STALL_SLOT_FRONTEND
     * 2000 → frontend 0, 2000 moved; OP_RETIRED > OP_SPEC → retiring = all
     * used slots (8000 − 5000 = 3000), bad spec 0 + 2000; STALL_SLOT > slots
     * → used 0. */
    struct pm_td_arm_counts clamp = {1000, 2000, 3000, 5000, 100, 200, 100, 8, 4};
    pm_td_from_arm(&clamp, &s);
    CHECK(s.m[PM_TD_FE_BOUND] == 0 && s.m[PM_TD_BAD_SPEC] == 2000 &&
              s.m[PM_TD_RETIRING] == 3000 && pm_td_level1_total(&s) == 8000,
          "arm clamps");
    struct pm_td_arm_counts over = {10, 50, 50, 100, 0, 0, 0, 8, 0};
    pm_td_from_arm(&over, &s);
    CHECK(s.m[PM_TD_RETIRING] == 0 && s.m[PM_TD_BAD_SPEC] == 0, "arm STALL_SLOT > slots");
    /* Large counts: used × OP_RETIRED passes 2^64 (2^40 × 2^39); the 128-bit
     * product keeps it exact: 8 × 2^37 slots, none stalled, 3/4 retired. */
    struct pm_td_arm_counts big = {1ull << 37, 0, 0, 0, 1ull << 41, 3ull << 39, 0, 8, 0};
    pm_td_from_arm(&big, &s);
    CHECK(s.m[PM_TD_RETIRING] == 3ull << 38 && s.m[PM_TD_BAD_SPEC] == 1ull << 38,
          "arm big: %llu", (unsigned long long)s.m[PM_TD_RETIRING]);
}

static void test_atom(void)
{
    /* Sierra Forest (srf-metrics.json: tma_X = TOPDOWN_X.ALL_P / (6 ×
     * CPU_CLK_UNHALTED.CORE)): cycles 1000 → 6000 slots; retiring 2400, bad
     * spec 600, FE 1800, BE 1200 → 0.4, 0.1, 0.3, 0.2 of Σ = 6000. */
    struct pm_td_atom_counts c = {1000, 2400, 600, 1800, 1200, 6};
    struct pm_td_slots s;
    struct pm_td_breakdown b;
    pm_td_from_atom(&c, &s);
    CHECK(s.slots == 6000 && s.levels == 1 && pm_td_level1_total(&s) == 6000 &&
              s.m[PM_TD_RETIRING] == 2400 && s.m[PM_TD_BAD_SPEC] == 600 &&
              s.m[PM_TD_FE_BOUND] == 1800 && s.m[PM_TD_BE_BOUND] == 1200,
          "atom slots");
    CHECK(pm_td_breakdown(&s, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_RETIRING], 0.4) &&
              near(b.ratio[PM_TD_N_BAD_SPEC], 0.1) && near(b.ratio[PM_TD_N_FE_BOUND], 0.3) &&
              near(b.ratio[PM_TD_N_BE_BOUND], 0.2),
          "atom ratios");
}

static void test_aggregation(void)
{
    /* Ratios of sums, not means of ratios: region A 1020 slots all
     * retiring, region B 3060 slots all backend → retiring 1020/4080 = 0.25
     * (a mean of ratios would say 0.5). Levels drop to the lower. */
    struct pm_td_window a = {1020, METRICS4(255, 0, 0, 0)};
    struct pm_td_window bw = {3060, metrics8(0, 0, 0, 255, 0, 0, 0, 255)};
    struct pm_td_slots sa, sb;
    struct pm_td_breakdown b;
    pm_td_from_window(&a, 1, &sa);
    pm_td_from_window(&bw, 2, &sb);
    pm_td_add(&sa, &sb);
    CHECK(pm_td_breakdown(&sa, &b) == PM_TD_OK && near(b.ratio[PM_TD_N_RETIRING], 0.25) &&
              b.levels == 1 && b.ratio[PM_TD_N_MEM_BOUND] == 0.0,
          "aggregated retiring %g levels %d", b.ratio[PM_TD_N_RETIRING], b.levels);
}

static void test_kernel_context_switch(void)
{
    /* Saved registers across a context switch. Switch-out at 600 slots,
     * retiring byte 128: floor(76800/255) = 301 (255 × 301 = 76755) is
     * added and saved. Back in, registers restored, the read sees 1000
     * slots at byte 100: floor(100000/255) = 392 (255 × 392 = 99960), so
     * 392 − 301 = 91 is added: 392 in all, the value of the whole window.
     * Slots: 600, then 1000 − 600 = 400. */
    struct pm_td_kcounts k;
    memset(&k, 0, sizeof k);
    uint64_t m1 = METRICS4(128, 0, 127, 0), m2 = METRICS4(100, 0, 155, 0);
    pm_td_kernel_update(&k, 1, 600, m1, 0, 0);
    CHECK(k.count[0] == 600 && k.count[1] == 301, "switch-out: %llu %llu",
          (unsigned long long)k.count[0], (unsigned long long)k.count[1]);
    pm_td_kernel_update(&k, 1, 1000, m2, 600, m1);
    CHECK(k.count[0] == 1000 && k.count[1] == 392, "read: %llu %llu",
          (unsigned long long)k.count[0], (unsigned long long)k.count[1]);
    /* The byte fell to 0 by the read (floor 0 < 301 saved): the kernel
     * keeps 301 rather than go backwards. */
    struct pm_td_kcounts g;
    memset(&g, 0, sizeof g);
    pm_td_kernel_update(&g, 1, 600, m1, 0, 0);
    pm_td_kernel_update(&g, 1, 1000, METRICS4(0, 0, 255, 0), 600, m1);
    CHECK(g.count[1] == 301, "shrinking metric: %llu", (unsigned long long)g.count[1]);
}

/* ---- rdpmc vs read() ---------------------------------------------------- */

/* The "hardware": fixed counter 3 and PERF_METRICS since the last reset.
 * The fake rdpmc returns junk above bit 47 for SLOTS (the runtime must mask
 * to pmc_width) and fails the test for any other index. */
static struct pm_td_window pm_hw;
static int pm_bad_index;
static uint64_t fake_rdpmc(uint32_t counter)
{
    if (counter == PM_TD_RDPMC_SLOTS)
        return pm_hw.slots | 0xabcdull << 48;
    if (counter == PM_TD_RDPMC_METRICS)
        return pm_hw.metrics;
    pm_bad_index = 1;
    return 0;
}
static uint64_t fake_rdtsc(void) { return 0; }

static void test_rdpmc_equals_read(void)
{
    /* A thread's work in windows closed by resets; region enter at the end
     * of window 0, exit at the end of window 3 (a zero-slot window between
     * two of the boundaries, a huge one, a mixed one). The read() path:
     * the kernel converts and resets at each read. The rdpmc path: the
     * runtime reads the registers at the same instants, then folds the
     * window into its base and resets (PERF_EVENT_IOC_RESET). Hand value
     * of the region, retiring: window 1: 37 × 255 / 255 = 37; window 2:
     * floor(123456789 × 1 / 255) = 484144 (255 × 484144 = 123456720);
     * window 3: 0 → 484181. */
    static const struct pm_td_window work[5] = {
        {1000, METRICS4(128, 10, 60, 57)},
        {37, METRICS4(255, 0, 0, 0)},
        {123456789, METRICS4(1, 2, 3, 249)},
        {0, 0},
        {5000, METRICS4(64, 64, 64, 63)},
    };
    const int enter = 0, exit = 3;
    const struct pm_rdpmc_hooks hooks = {fake_rdpmc, fake_rdtsc};
    for (int levels = 1; levels <= 2; levels++) {
        struct pm_td_kcounts kernel, base, at_enter_read, at_exit_read, at_enter_pmc, at_exit_pmc;
        memset(&kernel, 0, sizeof kernel);
        memset(&base, 0, sizeof base);
        for (int w = 0; w < 5; w++) {
            pm_hw = work[w];  /* the registers at the end of window w */
            struct pm_td_window raw, rawcopy;
            pm_td_rdpmc_sample(&hooks, 48, &raw);
            rawcopy = raw;
            struct pm_td_kcounts now;
            pm_td_rdpmc_value(&base, &raw, levels, &now);
            pm_td_rdpmc_fold(&base, &rawcopy, levels);
            pm_td_kernel_update(&kernel, levels, pm_hw.slots, pm_hw.metrics, 0, 0);
            if (w == enter) {
                at_enter_read = kernel;
                at_enter_pmc = now;
            }
            if (w == exit) {
                at_exit_read = kernel;
                at_exit_pmc = now;
            }
            CHECK(memcmp(&now, &kernel, sizeof now) == 0,
                  "levels %d window %d: rdpmc value differs from read()", levels, w);
        }
        for (int ev = 0; ev <= 4 * levels; ev++) {
            uint64_t by_read = at_exit_read.count[ev] - at_enter_read.count[ev];
            uint64_t by_pmc = at_exit_pmc.count[ev] - at_enter_pmc.count[ev];
            CHECK(by_read == by_pmc, "levels %d event %d: read %llu, rdpmc %llu", levels, ev,
                  (unsigned long long)by_read, (unsigned long long)by_pmc);
        }
        uint64_t region_ret = at_exit_read.count[1] - at_enter_read.count[1];
        CHECK(region_ret == 484181, "region retiring %llu, want 484181",
              (unsigned long long)region_ret);
        CHECK(at_exit_read.count[0] - at_enter_read.count[0] == 37 + 123456789,
              "region slots");
    }
    CHECK(!pm_bad_index, "rdpmc read an index other than SLOTS and PERF_METRICS");
}

/* Equivalent windows of the rdpmc mode (docs/topdown.md): a visit entered
 * W_a slots into an open window, with k resets inside, counts
 * k + 1 + [W_a > 0](1 + ceil(2 W_a / 255)). */
static void test_rdpmc_windows(void)
{
    static const struct {
        uint64_t w, want;
    } v[] = {
        {0, 0},           /* entered at a reset: nothing extra */
        {1, 2},           /* 1 + ceil(2/255) = 1 + 1 */
        {127, 2},         /* 254/255 → 1 */
        {128, 3},         /* 256/255 → 2 */
        {255, 3},         /* 510/255 = 2 exactly */
        {500, 5},         /* 1000/255 = 3.92 → 4 */
        {1u << 22, 32898}, /* 8388608/255 = 32896.5 → 32897, + 1 */
        /* 2^64 − 1 = 255 × 0x0101010101010101: 2W/255 = 2 × that, exact */
        {UINT64_MAX, 0x0202020202020203ull},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        CHECK(pm_td_enter_windows(v[i].w) == v[i].want, "enter windows(%llu) = %llu, want %llu",
              (unsigned long long)v[i].w, (unsigned long long)pm_td_enter_windows(v[i].w),
              (unsigned long long)v[i].want);
    /* W_a = 0 (a reset at the enter): k + 1, the read() count of windows */
    CHECK(pm_td_visit_windows(0, 0) == 1 && pm_td_visit_windows(0, 4) == 5, "read() equivalence");
    /* 500 slots into the window, 2 resets inside: 2 + 1 + 5 = 8 */
    CHECK(pm_td_visit_windows(500, 2) == 8, "visit (500, 2): %llu",
          (unsigned long long)pm_td_visit_windows(500, 2));

    /* The bound on a worked trace. Window A: 500 slots before the enter
     * (retiring byte 128: floor(500 × 128 / 255) = 250), then the visit's
     * 1000 slots, all retiring; the exit samples the same window: 1500
     * slots at byte round(255 × 1250 / 1500) = 213 → floor(319500/255) =
     * 1252. Delta 1252 − 250 = 1002, true 1000: off by 2, within
     * S/255 + n_eq = 1000/255 + (0 + 1 + 5) = 9.92. */
    uint64_t enter = pm_td_metric_slots(500, METRICS4(128, 0, 0, 127), 0);
    uint64_t exit = pm_td_metric_slots(1500, METRICS4(213, 0, 0, 42), 0);
    CHECK(enter == 250 && exit == 1252, "trace: %llu %llu", (unsigned long long)enter,
          (unsigned long long)exit);
    double err = (double)(exit - enter) - 1000.0;
    CHECK(err <= pm_td_error_bound(1000, pm_td_visit_windows(500, 0), 0),
          "trace off by %.0f", err);
    /* SHORT: 1000 slots over 6 equivalent windows (< 6144); by read() the
     * same visit would be one window and not SHORT. */
    CHECK(pm_td_is_short(1000, pm_td_visit_windows(500, 0)) && !pm_td_is_short(1024, 1),
          "SHORT with equivalent windows");
}

int main(void)
{
    test_rounding();
    test_window_level1();
    test_windows();
    test_level2();
    test_zero_slots();
    test_short();
    test_skylake();
    test_zen4();
    test_zen4_level2();
    test_zen5_width();
    test_arm();
    test_atom();
    test_aggregation();
    test_kernel_context_switch();
    test_rdpmc_equals_read();
    test_rdpmc_windows();
    return TEST_DONE("test_topdown");
}
