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

#include "model/options.h"

#include <stdio.h>
#include <stddef.h>

/* Render the report of the perfmark file `path` in `format` ("text", "csv" or "json") to `out`.
 * Returns 0 on success; -1 with a one-line human message in err (e.g. "x.h5: not a perfmark file (no schema_version attribute)") otherwise.
 * Never crashes on a truncated/foreign/corrupt file, or one with schema_version > 1 ("written by a newer perfmark (schema 2); this reader knows 1"). */
int pm_report_file(const char *path, const char *format, FILE *out, char *err, size_t errlen);

/* pm_report_file with options; o == NULL is the same as pm_report_file. An
 * option that names nothing in the file is an error (-1, message in err). */
int pm_report_file_opts(const char *path, const char *format, const struct pm_report_opts *o,
                        FILE *out, char *err, size_t errlen);

/* Nonzero: read the file in the calling process, without the crash-isolating
 * child. For the fuzzer and the corpus replay (tests/fuzz), which must see
 * crashes in perfmark's own code rather than have them turned into messages. */
extern int pm_report_in_process;

#endif /* PM_REPORT_H */
