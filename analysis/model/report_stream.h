/*
 * report_stream.h — the report's pass over the cells (report_stream.c), a
 * block of thread rows at a time, shared among the ranks of `mpirun perfmark
 * report`.
 */
#ifndef PM_REPORT_STREAM_H
#define PM_REPORT_STREAM_H

#include "h5read.h"

#include <stddef.h>

struct pm_report;

/* Build the report of a file opened with pm_file_open, reading its cells a
 * block of thread rows at a time (report_stream.c); under mpirun the blocks
 * are shared among the ranks and joined on rank 0 (not with html != 0: the
 * HTML charts' state, rep->heat and rep->top, is filled by one process
 * reading every block in order). Returns 0 when `rep` is
 * built (rank 0, or no MPI), 1 on another MPI rank (nothing to render), -1
 * with a message in err. */
int pm_report_build_stream(struct pm_report *rep, const struct pm_file *d, const char *path,
                           int html, char *err, size_t errlen);
/* Thread rows per block of that pass: about 4 MiB of cells, whole chunks,
 * the same for every run on the same file (PERFMARK_REPORT_BLOCK=N: N). */
size_t pm_block_rows(const struct pm_file *d);

#endif /* PM_REPORT_STREAM_H */
