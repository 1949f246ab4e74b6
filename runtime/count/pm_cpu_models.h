/* pm_cpu_models — per-CPU-model event groups and derived metrics, as data.
 *
 * One row per model (runtime/count/pm_cpu_models.c): the libpfm4 PMU whose event
 * names the groups use, the TopDown method, and five groups (topdown, ipc,
 * branch, cache, mem), each a list of libpfm4 event names with the derived
 * metrics defined over them by event index. Nothing here opens a counter:
 * pm_eventset_build expands a group from the row of the CPU perfmark sees
 * (pm_cpu_id.h), or falls back to sw by the rule in pm_events.c. */
#ifndef PM_CPU_MODELS_H
#define PM_CPU_MODELS_H

#include <stddef.h>
#include <stdint.h>

enum pm_td_method {
    PM_TD_METHOD_NONE = 0,
    PM_TD_METHOD_PERF_METRICS, /* slots + topdown-* pseudo events (Ice Lake and later) */
    PM_TD_METHOD_SKYLAKE,      /* generic events, pm_td_from_skylake */
    PM_TD_METHOD_ZEN4,         /* AMD pipeline utilization, pm_td_from_zen4 (Zen 4, Zen 5) */
    PM_TD_METHOD_ARM,          /* Arm slot accounting (STALL_SLOT_*), pm_td_from_arm */
    PM_TD_METHOD_ATOM,         /* Intel E-core TOPDOWN_*.ALL_P slot events, pm_td_from_atom */
    PM_TD_NMETHODS,
};

enum pm_model_group_id {
    PM_GROUP_TOPDOWN, PM_GROUP_IPC, PM_GROUP_BRANCH, PM_GROUP_CACHE, PM_GROUP_MEM,
    PM_NGROUPS,
};

#define PM_MODEL_MAX_EVENTS 12   /* Zen 4/5 topdown: 6 level-1 + 6 level-2 events */
#define PM_MODEL_MAX_DERIVED 4

struct pm_model_event {
    const char *pfm;    /* libpfm4 name, unqualified unless it names its own PMU (perf_raw::) */
    const char *label;  /* what people call it (perf/kernel name) */
};

/* A derived metric: scale × Σ events[num] / Σ events[den] over any
 * aggregation (ratios of sums, never means of ratios); den < 0: no
 * denominator, a scaled count (e.g. bytes = 64 × lines). */
struct pm_derived_def {
    const char *name;
    const char *formula;  /* the same in words, for docs and reports */
    int num, den;
    double scale;
};

struct pm_model_group {
    const char *name;
    const char *description;
    struct pm_model_event events[PM_MODEL_MAX_EVENTS];  /* pfm NULL terminates */
    struct pm_derived_def derived[PM_MODEL_MAX_DERIVED]; /* name NULL terminates */
};

struct pm_cpu_model {
    const char *name;        /* libpfm4 PMU name as detected ("icl"), or a model alias ("tgl") */
    const char *pfm_pmu;     /* libpfm4 PMU that encodes the event names ("perf_raw" where
                              * every event is a raw encoding) */
    const char *description;
    enum pm_td_method td_method;
    int td_levels;           /* 1, or 2 where PERF_METRICS has level-2 bytes */
    int hybrid;              /* measured on P-cores only (see note) */
    const char *note;        /* also why topdown is NULL where it is */
    const struct pm_model_group *groups[PM_NGROUPS]; /* topdown NULL: no method (td_method
                                                      * NONE, td_levels 0) */
    /* Slot arithmetic of the methods that derive slots from cycles (ZEN4,
     * ARM, ATOM); 0 for the others. */
    int td_slots_per_cycle;  /* dispatch width: 6 Zen 4, 8 Zen 5, 8 Neoverse V1/V2,
                              * 6 Crestmont (Sierra Forest) */
    int td_fe_mispred_cycles; /* ARM: cycles per BR_MIS_PRED moved from frontend bound to
                               * bad speculation (4 on Neoverse V1), 0 for none */
};

/* The table, terminated by an entry whose name is NULL. */
extern const struct pm_cpu_model pm_cpu_models[];

/* The row for a libpfm4 PMU name or model alias, or NULL. */
const struct pm_cpu_model *pm_cpu_model_find(const char *pmu_name);

/* The row for the CPU perfmark sees (pm_cpu_id: CPUID, the MIDR, or
 * PERFMARK_TEST_CPU), or NULL. Not from the kernel: a model is found on a
 * machine whose kernel exposes no PMU (VMs); pm_pmu_present() says that. */
const struct pm_cpu_model *pm_cpu_model_detect(void);

/* A group by id or by name ("topdown", "ipc", ...), or NULL. */
const struct pm_model_group *pm_cpu_model_group(const struct pm_cpu_model *m,
                                                enum pm_model_group_id id);
const struct pm_model_group *pm_cpu_model_group_named(const struct pm_cpu_model *m,
                                                      const char *name);

/* Number of events in a group (0 for NULL: a model without that group). */
int pm_model_group_nevents(const struct pm_model_group *g);

/* "pmu::EVENT" for an event of model m (names already qualified are kept).
 * 0, or -1 when it does not fit in out. */
int pm_cpu_model_event_name(const struct pm_cpu_model *m, const char *pfm, char *out,
                            size_t outlen);

/* Value of a derived metric from a group's (summed) counts: 0 and *out, or
 * -1 when the denominator is 0 or an index is out of range. */
int pm_derived_eval(const struct pm_derived_def *d, const uint64_t *counts, int ncounts,
                    double *out);

#endif
