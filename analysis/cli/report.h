/*
 * report.h — the offline report of a perfmark HDF5 file.
 *
 * Formats (layouts documented in tests/report/README.md):
 *   text  terminal tables fitting 100 columns, human units
 *   csv   one row per (region, event)
 *   json  one object, stable keys
 * Files of several MPI ranks add the regions and MPI functions across ranks
 * and each rank's MPI share (text sections, appended JSON keys, appended CSV
 * columns); any other file's report is unchanged by them. Files with TopDown
 * likewise add the TopDown breakdown per region and for the whole run.
 */
#ifndef PM_REPORT_H
#define PM_REPORT_H

#include <stdio.h>
#include <stddef.h>

/* Render the report of the perfmark file `path` in `format` ("text", "csv" or "json") to `out`.
 * Returns 0 on success; -1 with a one-line human message in err (e.g. "x.h5: not a perfmark file (no schema_version attribute)") otherwise.
 * Never crashes on a truncated/foreign/corrupt file, or one with schema_version > 1 ("written by a newer perfmark (schema 2); this reader knows 1"). */
int pm_report_file(const char *path, const char *format, FILE *out, char *err, size_t errlen);

/* Report options (perfmark report --by/--region/--top/--metric). */
enum pm_by { PM_BY_REGION, PM_BY_RANK, PM_BY_THREAD };

struct pm_report_opts {
    enum pm_by by;      /* text: which breakdown (region = the full report) */
    const char *region; /* NULL: all; else a region name or path: its subtree(s) */
    size_t top;         /* 0: all; else the N regions with the largest metric */
    const char *metric; /* NULL: "time" (inclusive); "excl", "visits", or an event key */
};

/* pm_report_file with options; o == NULL is the same as pm_report_file. An
 * option that names nothing in the file is an error (-1, message in err). */
int pm_report_file_opts(const char *path, const char *format, const struct pm_report_opts *o,
                        FILE *out, char *err, size_t errlen);

/* Nonzero: read the file in the calling process, without the crash-isolating
 * child. For the fuzzer and the corpus replay (tests/fuzz), which must see
 * crashes in perfmark's own code rather than have them turned into messages. */
extern int pm_report_in_process;

/* An empty temporary file opened "w+" and already unlinked (in $TMPDIR, else
 * /tmp), or NULL: where a report waits until it is known complete, so that
 * memory does not grow with the size of the report. pm_report_copy writes
 * its whole content to `out` in fixed-size pieces (0, or -1). */
FILE *pm_report_spool(void);
int pm_report_copy(FILE *spool, FILE *out);

/* perfmark report under mpirun (report_stream.c). pm_report_mpi_init starts
 * MPI only when a launcher's variables are set (OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK, PMI_SIZE) and returns 1 then; a plain `perfmark report` never
 * initialises MPI. The cells are then shared among the ranks and rank 0 alone
 * renders; the others produce no output. pm_report_mpi_end gives every rank
 * rank 0's exit status and finalises MPI. */
int pm_report_mpi_init(void);
int pm_report_mpi_rank(void);
int pm_report_mpi_size(void);
int pm_report_mpi_all(int ok); /* 1 when ok on every rank (ok itself without MPI) */
int pm_report_mpi_end(int rc);

#endif /* PM_REPORT_H */
