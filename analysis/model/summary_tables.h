/*
 * summary_tables.h — a finished report's statistics as plain tables of
 * numbers with named columns: what a summary file holds beside its packed
 * state, for readers without perfmark's engine (the Python package, h5py by
 * hand). Layout and meaning: docs/hdf5-schema.md, the /summary group.
 *
 * Values are doubles, but sums of integers that pass 2^53 (nanoseconds,
 * visits, reads over many threads; TopDown slots) go in uint64 tables. The
 * conventions are those of the Python package's frames: NaN is no value,
 * -1 no thread, rank, region row or visit (and no raw count: `raw` of a
 * quantity that is not an event), 0 a count without anything behind it,
 * 1/0 yes/no.
 */
#ifndef PM_SUMMARY_TABLES_H
#define PM_SUMMARY_TABLES_H

#include "model/report_model.h"

#include <stddef.h>
#include <stdint.h>

enum pm_stab {
    PM_STAB_REGION, /* [R x (5 + E) rows]: region row r, quantity q at r * (5 + E) + q */
    PM_STAB_MORE,   /* [R rows]: measuring, OpenMP wait and flags of region row r */
    PM_STAB_MPI,    /* [MPI functions x 4 rows]: the report's order, calls/wall/bytes/unknown */
    PM_STAB_RUN,    /* [1 row]: the whole run */
    PM_STAB_SHARE,  /* [ranks rows]: each rank's MPI share, ascending ranks */
    PM_STAB_TOPDOWN, /* [R + 1 rows, none without TopDown]: region rows, then the run */
    PM_STAB_TD_SLOTS, /* the same rows' slot counts, as integers (u, not v) */
    PM_STAB_COUNT,  /* [R rows]: region row r's sums of nanoseconds, visits, reads (u) */
    PM_STAB_RUN_COUNT, /* [1 row]: the whole run's (u) */
    PM_STAB_N
};

struct pm_stable {
    double *v;           /* rows x cols, row-major (malloc'ed) */
    uint64_t *u;         /* instead of v: integers that pass 2^53 (slot counts) */
    size_t rows, cols;
    const char *columns; /* the column names, comma-separated (static) */
};

/* The tables of a finished report (pm_rstate_finish), into t[PM_STAB_N].
 * 0, or -1 when out of memory (every table freed). */
int pm_summary_tables(const struct pm_report *rep, struct pm_stable t[PM_STAB_N]);
void pm_summary_tables_free(struct pm_stable t[PM_STAB_N]);

#endif
