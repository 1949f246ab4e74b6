/*
 * node.h — node mode (/node, docs/hdf5-schema.md) as the report shows it:
 * per node (the rank that watched it, and its host), each watched CPU's
 * time in the job's processes, in everything else (OS noise, daemons,
 * other jobs) and idle, with shares of the time watched, the node's sums,
 * and the other processes that took the most time there.
 */
#ifndef PM_NODE_MODEL_H
#define PM_NODE_MODEL_H

#include "h5read.h"

#include <stddef.h>
#include <stdint.h>

struct pm_node_share {
    uint64_t span_ns, own_ns, foreign_ns, idle_ns, lost;
    double own, foreign, idle;  /* of span_ns (0 when nothing was watched) */
};

/* One other process on the node: its time over all watched CPUs. */
struct pm_node_proc {
    int64_t pid;
    const char *comm;  /* into the file's rows */
    uint64_t ns;
};

/* With --interval: the node's CPUs together over an interval (or, past
 * PM_NODE_POINTS, `group` merged intervals), ending at time_ns. */
#define PM_NODE_POINTS 4000
struct pm_node_point {
    uint64_t time_ns, own_ns, foreign_ns, idle_ns;
};

struct pm_node_one {
    int32_t rank;
    char *host;
    size_t ncpus;
    const struct pm_file_node_cpu **cpu;  /* its run of the view's cpus[], by CPU */
    struct pm_node_share *share;          /* [ncpus] */
    struct pm_node_share *mpi;            /* [ncpus]: MPI_Init to Finalize (span 0: no MPI) */
    const struct pm_file_node_proc ***cpu_proc; /* [ncpus]: runs of the view's procs[],
                                                   that CPU's others, most first */
    size_t *ncpu_procs;                         /* [ncpus] */
    struct pm_node_share all, mpi_all;          /* the node's CPUs together */
    size_t nprocs;
    struct pm_node_proc *proc;  /* summed over the CPUs, most time first */
    struct pm_node_point *point; /* [npoints] in time order; NULL without --interval */
    size_t npoints, group, in_group;
    uint64_t last_time;
};

struct pm_node_view {
    size_t n;
    struct pm_node_one *node;  /* by rank, ascending */
    /* the file's rows sorted once: CPUs by (rank, cpu); other processes by
     * (rank, cpu, most time first, pid) — so each node and CPU is a run */
    const struct pm_file_node_cpu **cpus;   /* [NP] */
    const struct pm_file_node_proc **procs; /* [NQ] */
};

/* The node view of d (opened: pm_file_open, for the interval rows), NULL
 * without node mode (err "") or on failure (err). */
struct pm_node_view *pm_node_build(const struct pm_file *d, char *err, size_t errlen);
void pm_node_free(struct pm_node_view *v);

#endif
