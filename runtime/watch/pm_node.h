/* pm_node — node mode (PERFMARK_NODE): one process per node watches every
 * CPU of the job's cpuset, whoever runs there (IRIX's system mode, libcpc's
 * cpc_bind_cpu), and tells apart the time spent in the job's own processes,
 * in anything else (OS noise, daemons, foreign jobs) and idle.
 *
 * How: on each CPU a software dummy event with context_switch set (pid -1,
 * cpu N) makes the kernel write a PERF_RECORD_SWITCH_CPU_WIDE at every
 * context switch, stamped with CLOCK_MONOTONIC and the task's pid; the time
 * between two switches belongs to the process that ran (pid 0: idle). No
 * tracefs, no sampling: exact, as far as the records are not lost (counted).
 * Needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0; where refused,
 * one message, and the rest of the measurement goes on.
 *
 * The job's processes on the node: this one, and under MPI the ranks of
 * the node (their pids, gathered at MPI_Init: pm_node_set_own). A pid
 * learned later counts as the job's from then on. */
#ifndef PM_NODE_H
#define PM_NODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PM_NODE_MAX_CPUS 1024
#define PM_NODE_TOP 4  /* other processes named per CPU, most time first */

struct pm_node_cpu {
    int cpu;
    uint64_t own_ns, foreign_ns, idle_ns;  /* since the start */
    uint64_t span_ns;                      /* watched for */
    uint64_t lost;                         /* switch records the kernel could not store */
    /* the job's MPI phase: from MPI_Init (pm_node_set_own) to the stop at
     * MPI_Finalize; all 0 without MPI */
    uint64_t mpi_span_ns, mpi_own_ns, mpi_foreign_ns, mpi_idle_ns;
};

struct pm_node_row {  /* one CPU in one interval (with --interval) */
    uint64_t time_ns;                      /* CLOCK_REALTIME at its end */
    int32_t cpu;
    uint64_t own_ns, foreign_ns, idle_ns;
};

struct pm_node_foreign {
    int cpu;
    int64_t pid;
    char comm[64];
    uint64_t ns;                           /* on the watched CPUs */
};

struct pm_node_data {
    int ncpus;
    struct pm_node_cpu *cpu;
    struct pm_node_row *rows;
    size_t nrows;
    struct pm_node_foreign *top;  /* per CPU its PM_NODE_TOP of most time, CPU order */
    int ntop;
    int done;   /* stopped and settled: the data is final */
};

/* Start watching `cpus` (the job's cpuset on this node), reading every
 * `interval_ns` (0: every 100 ms, totals only). 0, or -1 with a sentence in
 * why (refused: what to change). */
int pm_node_start(const int *cpus, int ncpus, uint64_t interval_ns, char *why, size_t whylen);
/* The job's processes on this node (this process is always one); the
 * first call (at MPI_Init) starts the MPI phase's totals. */
void pm_node_set_own(const int *pids, int n);
/* Stop (join the thread) and settle; the data for the writer, or NULL
 * when node mode is not running in this process. */
void pm_node_stop(void);
/* Only ask it to stop (the emergency dump: no join); no data then. */
void pm_node_stop_async(void);
const struct pm_node_data *pm_node_get(void);
void pm_node_after_fork(void);

/* The job's cpuset on this node: the cgroup's cpuset.cpus.effective if there
 * is one, else every online CPU. Returns how many (at most max). */
int pm_node_cpuset(int *cpus, int max);

#endif
