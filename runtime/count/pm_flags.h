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
    PM_FLAG_PARTIAL = 0x40,         /* written by an emergency dump, or a visit open at the end */
    PM_FLAG_TIMER_ONLY = 0x80,      /* by design no counter reading (MPI polls): counts in the parent */
    PM_FLAG_THROTTLED = 0x100,      /* readings stopped after the warm-up: later counts in the parent */
    PM_FLAG_OVERHEAD = 0x200,       /* more than 10 % of the counts are perfmark's own reads */
    PM_FLAG_SAMPLES_LOST = 0x400,   /* the kernel lost or throttled samples while innermost */
};

struct pm_flag_name {
    const char *name;
    unsigned bit;
};

static const struct pm_flag_name pm_flag_names[] = {
    {"MULTIPLEXED", PM_FLAG_MULTIPLEXED}, {"NOT_COUNTED", PM_FLAG_NOT_COUNTED},
    {"LOST_GENERATION", PM_FLAG_LOST_GENERATION}, {"MIGRATED", PM_FLAG_MIGRATED},
    {"UNBALANCED", PM_FLAG_UNBALANCED}, {"SHORT", PM_FLAG_SHORT},
    {"PARTIAL", PM_FLAG_PARTIAL}, {"TIMER_ONLY", PM_FLAG_TIMER_ONLY},
    {"THROTTLED", PM_FLAG_THROTTLED}, {"OVERHEAD", PM_FLAG_OVERHEAD},
    {"SAMPLES_LOST", PM_FLAG_SAMPLES_LOST},
};

#endif
