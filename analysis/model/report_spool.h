/*
 * report_spool.h — scratch storage for output or tables that must not grow memory:
 * the report waits in one until it is complete (cli), the --by thread table
 * keeps its values in one (model).
 */
#ifndef PM_REPORT_SPOOL_H
#define PM_REPORT_SPOOL_H

#include <stdio.h>

/* An empty temporary file opened "w+" and already unlinked (in $TMPDIR, else
 * /tmp), or NULL: where a report waits until it is known complete, so that
 * memory does not grow with the size of the report. pm_report_copy writes
 * its whole content to `out` in fixed-size pieces (0, or -1). */
FILE *pm_report_spool(void);
int pm_report_copy(FILE *spool, FILE *out);

#endif /* PM_REPORT_SPOOL_H */
