/* pm_h5out_series — the file's /series (docs/hdf5-schema.md): each
 * thread's and process's counts per interval (pm_series.h), placed like the
 * other sparse rows (pm_slab) so that a job's ranks concatenate. */
#ifndef PM_H5OUT_SERIES_H
#define PM_H5OUT_SERIES_H

#include "pm_h5out.h"

/* This process's interval rows: of its threads, and of its inherited set. */
void pm_series_counts(const struct pm_output *o, size_t *rows, size_t *process_rows);
/* Rows phase: /series/thread_interval_ns [T] and the interval rows. */
int pm_h5out_series_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                         const struct pm_slab *slab);
/* Tables phase: /series@asked_ns. */
int pm_h5out_series_tables(struct pm_h5model *m, const struct pm_output *o);

#endif
