/* report_many.h — `perfmark report A B ...`: each file's report in turn, as
 * one output of the format (report_many.c says how each format joins). */
#ifndef PM_REPORT_MANY_H
#define PM_REPORT_MANY_H

#include "model/options.h"

#include <stdio.h>

/* Reports the n files to `out` when `write` (rank 0 under mpirun; the other
 * ranks only share the reading); failed files are said on stderr. Returns
 * how many failed. */
int pm_report_many(const char *const *files, int n, const char *format,
                   const struct pm_report_opts *opts, FILE *out, int write);

#endif
