/*
 * report_state.h — the report's state over whole ranks, made where the
 * ranks are and joined in any tree (report_stream.c): what a summary file is
 * made of (docs/design.md, "Summary files").
 *
 * Each process runs the report's own pass over a file of whole ranks (in a
 * job: one rank's rows, numbered as in the job's file) and keeps every
 * accumulator instead of finishing. States are joined pairwise, a state of
 * lower ranks with one of the next higher ranks; every sum is exact
 * (exact_sum.h) and every min and max breaks ties by thread row or rank, so
 * any tree of joins gives the bits of one pass over all the rows. The
 * finished state is the report of the regions and across ranks, the numbers
 * a full file's report prints.
 */
#ifndef PM_REPORT_STATE_H
#define PM_REPORT_STATE_H

#include "h5read.h"

#include <stddef.h>
#include <stdint.h>

struct pm_report;
struct pm_rstate;

/* The state of file d (whole ranks, thread row 0 at t_base in the job):
 * rep set up on d and the pass over every cell, not finished. NULL with a
 * message in err. */
struct pm_rstate *pm_rstate_local(struct pm_report *rep, const struct pm_file *d,
                                  const char *path, size_t t_base, char *err, size_t errlen);
/* The state as bytes, to travel between copies of the same build (free *buf). */
int pm_rstate_pack(const struct pm_rstate *s, void **buf, size_t *len);
/* Join a packed state of ranks all above s's into s. 0, or -1 (not a state
 * of the same regions and events, or out of memory). */
int pm_rstate_join(struct pm_rstate *s, const void *buf, size_t len);
/* Finish: s's report (the one given to pm_rstate_local) holds the numbers. */
int pm_rstate_finish(struct pm_rstate *s);
/* Which build's layout a packed state has ("" never): a summary file says
 * it, and a reader of another layout says so instead of misreading. */
void pm_rstate_layout_id(char *buf, size_t len);
/* The state only (not its report). */
void pm_rstate_free(struct pm_rstate *s);

#endif /* PM_REPORT_STATE_H */
