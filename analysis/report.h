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

#endif /* PM_REPORT_H */
