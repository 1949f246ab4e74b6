/* pm_job_summary — a summary file's share that the report's own engine makes in
 * the job (PERFMARK_DETAIL=summary; docs/design.md, "Summary files").
 *
 * The engine is the report's (analysis/model/report_state.h), linked into
 * the HDF5 writer library of the job's MPI ABI (pm_writer.h: `summary`);
 * it talks only through the job's pm_comm. Collective over all ranks: each
 * rank runs the report's pass over its own rows (`path`: a file of this
 * rank's rows with the job's tables, its thread row 0 at `t_base` in the
 * job), the states go up a binomial tree to rank 0, which picks the ranks
 * whose full rows the file keeps and names the thread rows the statistics
 * point at. */
#ifndef PM_JOB_SUMMARY_H
#define PM_JOB_SUMMARY_H

#include "pm_comm.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A thread row of the job the statistics name (a thread's max, a flag's
 * first cells), with its rank and thread number. */
struct pm_summary_ref {
    uint64_t row;
    int32_t rank, thread;
};

/* A table of the finished statistics (rank 0): rows x cols doubles, the
 * columns named comma-separated (analysis/model/summary_tables.h; the
 * file's /summary/region_stat, region_more, mpi_stat, run_stat,
 * rank_share, topdown, topdown_slots, region_count, run_count in this
 * order). */
#define PM_SUMMARY_TABLES 9
struct pm_summary_table {
    double *v;
    uint64_t *u; /* instead of v: the tables of integers */
    size_t rows, cols;
    const char *columns;
};

struct pm_summary {
    int32_t *kept;  /* every rank: the ranks whose rows the file keeps, ascending */
    size_t nkept;
    void *state;    /* rank 0: the joined state, as report_state.h packs it */
    size_t state_len;
    char layout[64]; /* rank 0: which build's layout the state has */
    struct pm_summary_ref *refs; /* rank 0: the rows the statistics name, ascending */
    size_t nrefs;
    struct pm_summary_table tab[PM_SUMMARY_TABLES]; /* rank 0 */
};

/* 0 on every rank, or -1 on every rank (the message in err on at least
 * one): the job's file is then written in full. `rows_bytes`: this rank's
 * full rows; `keep_bytes`: the budget of rows the summary keeps. */
typedef int (*pm_summary_fn)(const struct pm_comm *c, const char *path, uint64_t t_base,
                             uint64_t rows_bytes, uint64_t keep_bytes, struct pm_summary *out,
                             char *err, size_t errlen);

static inline void pm_summary_free(struct pm_summary *s)
{
    free(s->kept);
    free(s->state);
    free(s->refs);
    for (int i = 0; i < PM_SUMMARY_TABLES; i++)
        free(s->tab[i].v), free(s->tab[i].u);
    memset(s, 0, sizeof *s);
}

#endif
