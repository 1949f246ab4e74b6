/* pm_h5out — write the measurement as one HDF5 file (docs/hdf5-schema.md).
 * Regions of all threads are merged by call path; each thread is one row. */
#ifndef PM_H5OUT_H
#define PM_H5OUT_H

#include "pm_thread.h"

#include <stddef.h>
#include <stdint.h>

#define PM_SCHEMA_VERSION 1

struct pm_output {
    const struct pm_eventset *set;
    struct pm_thread **threads;
    int32_t nthreads;
    const uint64_t *totals;      /* inherited process set reading (stride words), or NULL */
    int rank, ranks;             /* MPI rank of this process and job size (0 and 1 outside MPI) */
    double ns_per_tick;
    const char *command, *host, *start_time, *clock;
    long pid;
    uint64_t duration_ns;
    int bind_cpu;
    int partial;
};

/* Create `path` (which must not exist) and write everything. 0, or -1 with
 * a reason in err (the partly written file is removed). */
int pm_h5out_write(const char *path, const struct pm_output *o, char *err, size_t errlen);

#endif
