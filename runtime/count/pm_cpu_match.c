/* Known CPUs: which identities (x86 family/model/stepping from CPUID, Arm
 * MIDR implementer/part) are which CPU, and which row of the model table
 * (pm_cpu_models.c) measures it. Data, not code: the first match wins.
 * A CPU whose row does not exist yet is still named in messages.
 *
 * Sources: Intel's and AMD's family/model lists (the kernel's
 * arch/x86/include/asm/intel-family.h, tools/perf/pmu-events/arch/x86/
 * mapfile.csv), Arm's MIDR part numbers (arch/arm64/include/asm/cputype.h,
 * pmu-events/arch/arm64/mapfile.csv). */
#include "pm_cpu_id.h"

#include <stddef.h>

#define ANY_STEP 0, 0xf
#define INTEL(lo, hi, name, row) {PM_CPU_INTEL, 6, lo, hi, ANY_STEP, name, row}
#define AMD(fam, lo, hi, name, row) {PM_CPU_AMD, fam, lo, hi, ANY_STEP, name, row}
#define ARM(impl, part, name, row) {PM_CPU_ARM, impl, part, part, 0, 0, name, row}

const struct pm_cpu_match pm_cpu_matches[] = {
    INTEL(0x4e, 0x4e, "Intel Skylake client", "skl"),
    INTEL(0x5e, 0x5e, "Intel Skylake client", "skl"),
    INTEL(0x8e, 0x8e, "Intel Kaby/Coffee/Whiskey Lake", "skl"),
    INTEL(0x9e, 0x9e, "Intel Kaby/Coffee Lake", "skl"),
    INTEL(0xa5, 0xa6, "Intel Comet Lake", "skl"),
    /* one model number, three server generations told apart by stepping */
    {PM_CPU_INTEL, 6, 0x55, 0x55, 0, 4, "Intel Skylake server", "skx"},
    {PM_CPU_INTEL, 6, 0x55, 0x55, 5, 0xf, "Intel Cascade/Cooper Lake server", "clx"},
    INTEL(0x7d, 0x7e, "Intel Ice Lake client", "icl"),
    INTEL(0xa7, 0xa7, "Intel Rocket Lake", "icl"),
    INTEL(0x8c, 0x8d, "Intel Tiger Lake", "tgl"),
    INTEL(0x6a, 0x6a, "Intel Ice Lake server", "icx"),
    INTEL(0x6c, 0x6c, "Intel Ice Lake server (D)", "icx"),
    INTEL(0x8f, 0x8f, "Intel Sapphire Rapids", "spr"),
    INTEL(0xcf, 0xcf, "Intel Emerald Rapids", "emr"),
    INTEL(0xad, 0xae, "Intel Granite Rapids", "gnr"),
    INTEL(0x97, 0x97, "Intel Alder Lake", "adl_glc"),
    INTEL(0x9a, 0x9a, "Intel Alder Lake", "adl_glc"),
    INTEL(0xb7, 0xb7, "Intel Raptor Lake", "adl_glc"),
    INTEL(0xba, 0xba, "Intel Raptor Lake", "adl_glc"),
    INTEL(0xbf, 0xbf, "Intel Raptor Lake", "adl_glc"),
    INTEL(0xaa, 0xac, "Intel Meteor Lake", NULL),
    INTEL(0xaf, 0xaf, "Intel Sierra Forest", "srf"),
    AMD(0x17, 0x00, 0x2f, "AMD Zen/Zen+", NULL),
    AMD(0x17, 0x30, 0xff, "AMD Zen 2", "amd64_fam17h_zen2"),
    AMD(0x19, 0x00, 0x0f, "AMD Zen 3", "amd64_fam19h_zen3"),
    AMD(0x19, 0x10, 0x1f, "AMD Zen 4", "amd64_fam19h_zen4"),
    AMD(0x19, 0x20, 0x5f, "AMD Zen 3", "amd64_fam19h_zen3"),
    AMD(0x19, 0x60, 0xaf, "AMD Zen 4", "amd64_fam19h_zen4"),
    AMD(0x1a, 0x00, 0xff, "AMD Zen 5", "amd64_fam1ah_zen5"),
    ARM(0x41, 0xd0c, "Arm Neoverse N1", "arm_n1"),
    ARM(0x41, 0xd40, "Arm Neoverse V1", "arm_v1"),
    ARM(0x41, 0xd49, "Arm Neoverse N2", NULL),
    ARM(0x41, 0xd4f, "Arm Neoverse V2", "arm_v2"),
    ARM(0x46, 0x001, "Fujitsu A64FX", "arm_a64fx"),
    {PM_CPU_OTHER, 0, 0, 0, 0, 0, NULL, NULL},
};
