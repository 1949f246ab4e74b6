/* pm_output — everything the runtime hands to the writer at the end
 * (pm_h5out.h): the event set, the threads' states and the run's facts.
 * No HDF5 here: the runtime proper never includes hdf5.h. */
#ifndef PM_OUTPUT_H
#define PM_OUTPUT_H

#include "pm_modules.h"
#include "pm_sample_spec.h"
#include "pm_node.h"
#include "pm_series.h"
#include "pm_thread.h"

#include <stdint.h>

#define PM_HOST_LEN 64   /* /threads host: fixed size (parallel-writable) */

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
    const char *openmp;          /* which OpenMP runtime, and whether constructs were visible */
    const char *pinning;         /* PERFMARK_PIN: the mode and what was done (pm_pin_describe) */
    const char *threads_seen;    /* which threads have rows, from when (root attribute `threads`) */
    double read_cost_ns;         /* one counter reading of a thread's groups, measured at start */
    const char *throttle;        /* PERFMARK_THROTTLE as applied: "warmup=N,k=K" or "off" */
    uint64_t job_gather_max;     /* job files up to this size are built on rank 0 (pm_writer.h) */
    const struct pm_sample_spec *sample;  /* what each thread sampled (n = 0: nothing) */
    const struct pm_modules *modules;     /* the loaded objects, for sampled IPs (or NULL) */
    const struct pm_series *series;       /* counts over time (PERFMARK_INTERVAL), or NULL */
    const struct pm_node_data *node;      /* the node's CPUs (PERFMARK_NODE), or NULL */
    int job_detail;              /* PERFMARK_DETAIL: enum pm_detail */
    const char *summary_output;  /* PERFMARK_SUMMARY_OUTPUT: a summary there as well, or NULL */
    uint64_t summary_above;      /* auto: a summary when the rows pass this (bytes) */
    uint64_t summary_keep;       /* a summary's budget of kept rows (bytes) */
    const struct pm_h5summary *summary; /* rank 0 of a summary job: /summary; NULL: empty */
};

/* PERFMARK_DETAIL: the job's file holds every rank's rows, or a summary
 * (docs/guide.md, "Summary files"); auto: a summary above summary_above. */
enum pm_detail { PM_DETAIL_AUTO, PM_DETAIL_FULL, PM_DETAIL_SUMMARY };
#define PM_SUMMARY_ABOVE ((uint64_t)256 << 20)
#define PM_SUMMARY_KEEP ((uint64_t)64 << 20)

/* A table of a summary's finished statistics: rows x cols doubles, the
 * columns named comma-separated. */
struct pm_h5table {
    const double *v;
    const uint64_t *u; /* instead of v: a table of integers */
    size_t rows, cols;
    const char *columns;
};
#define PM_H5SUMMARY_TABLES 9

/* What a summary file's /summary holds (job/pm_job_summary.h makes it). */
struct pm_h5summary {
    const char *layout;
    uint64_t threads;                /* thread rows of the whole job */
    const void *state;
    size_t state_len;
    const int32_t *kept_rank;
    const uint64_t *kept_row;
    size_t nkept;
    const uint64_t *ref_row;
    const int32_t *ref_rank, *ref_thread;
    size_t nrefs;
    /* region_stat, region_more, mpi_stat, run_stat, rank_share, topdown, topdown_slots,
     * region_count, run_count */
    struct pm_h5table tab[PM_H5SUMMARY_TABLES];
};

/* A cell is OVERHEAD when perfmark's own reads are more than this share of
 * its time-like counts (docs/design.md, "What measuring costs"). */
#define PM_OVERHEAD_SHARE 0.10

#endif
