/* pm_cpu_id — which CPU this is, and which row of the model table
 * (pm_cpu_models.c) describes it.
 *
 * x86: vendor, family, model and stepping from CPUID. Arm: the MIDR
 * (implementer, part) from sysfs, else /proc/cpuinfo. Which identities map
 * to which row is a table (pm_cpu_match.c).
 *
 * PERFMARK_TEST_CPU makes perfmark see another CPU, so that every model's
 * path (detection, its table, the fallback, the messages) runs in the tests
 * on any machine:
 *   intel:FAMILY:MODEL[:STEPPING]   amd:FAMILY:MODEL   arm:MIDR
 *   arm:IMPLEMENTER:PART            (numbers in C syntax: 0x8f or 143)
 * It is for tests and `perfmark list/check`; a run under it says so. */
#ifndef PM_CPU_ID_H
#define PM_CPU_ID_H

#include <stddef.h>
#include <stdint.h>

enum pm_cpu_vendor { PM_CPU_OTHER = 0, PM_CPU_INTEL, PM_CPU_AMD, PM_CPU_ARM };

struct pm_cpu_id {
    enum pm_cpu_vendor vendor;
    unsigned family, model, stepping; /* x86 (display values); Arm: implementer, part, 0 */
    int from_override;                /* seen through PERFMARK_TEST_CPU */
    char text[96];                    /* "AMD family 0x19 model 0x11 stepping 1" */
};

/* This process's CPU (or the override), found once. */
const struct pm_cpu_id *pm_cpu_id(void);

/* The sentence to say when PERFMARK_TEST_CPU was set but unreadable, or "". */
const char *pm_cpu_id_override_error(void);

/* Parse a PERFMARK_TEST_CPU value: 0, or -1 with a sentence in err. */
int pm_cpu_id_parse(const char *spec, struct pm_cpu_id *out, char *err, size_t errlen);

/* x86 display family, model and stepping from CPUID leaf 1 EAX. */
void pm_cpu_id_from_signature(uint32_t eax, struct pm_cpu_id *out);

/* Arm implementer and part from a MIDR_EL1 value. */
void pm_cpu_id_from_midr(uint64_t midr, struct pm_cpu_id *out);

/* The identity in words, into id->text. */
void pm_cpu_id_describe(struct pm_cpu_id *id);

/* A known CPU: its name ("AMD Zen 5") and the name of its model-table row,
 * which may have no row yet (then the CPU is named, not measured). */
struct pm_cpu_match {
    enum pm_cpu_vendor vendor;
    unsigned family;               /* Arm: implementer */
    unsigned model_lo, model_hi;   /* Arm: part */
    unsigned stepping_lo, stepping_hi;
    const char *cpu_name;
    const char *row;
};
extern const struct pm_cpu_match pm_cpu_matches[];

/* The first entry matching id, or NULL. */
const struct pm_cpu_match *pm_cpu_match_find(const struct pm_cpu_id *id);

#endif
