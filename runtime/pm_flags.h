/* Data-quality flags per (thread, region) cell: the names are contract,
 * the bit values are documented in docs/hdf5-schema.md. */
#ifndef PM_FLAGS_H
#define PM_FLAGS_H

enum pm_flag {
    PM_FLAG_MULTIPLEXED = 0x01,     /* 0 < Δrunning < Δenabled: scaled estimate */
    PM_FLAG_NOT_COUNTED = 0x02,     /* Δrunning = 0 < Δenabled: no estimate */
    PM_FLAG_LOST_GENERATION = 0x04, /* counters reopened inside the visit */
    PM_FLAG_MIGRATED = 0x08,        /* thread changed CPU inside the visit */
    PM_FLAG_UNBALANCED = 0x10,      /* marker misuse, or open at thread/process end */
    PM_FLAG_SHORT = 0x20,           /* too short for a trustworthy ratio (TopDown) */
    PM_FLAG_PARTIAL = 0x40,         /* written by an emergency dump */
};

struct pm_flag_name {
    const char *name;
    unsigned bit;
};

static const struct pm_flag_name pm_flag_names[] = {
    {"MULTIPLEXED", PM_FLAG_MULTIPLEXED}, {"NOT_COUNTED", PM_FLAG_NOT_COUNTED},
    {"LOST_GENERATION", PM_FLAG_LOST_GENERATION}, {"MIGRATED", PM_FLAG_MIGRATED},
    {"UNBALANCED", PM_FLAG_UNBALANCED}, {"SHORT", PM_FLAG_SHORT},
    {"PARTIAL", PM_FLAG_PARTIAL},
};

#endif
