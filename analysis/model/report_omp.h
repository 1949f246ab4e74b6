/*
 * report_omp.h — which regions are OpenMP waits and which region each counts
 * towards (report_omp.c).
 */
#ifndef PM_REPORT_OMP_H
#define PM_REPORT_OMP_H

#include "h5read.h"

#include <stddef.h>

/* An OpenMP wait region: kind "omp", named "omp barrier", "omp taskwait",
 * "omp taskgroup" or "omp critical" (the wait to enter one; libgomp only)
 * (wrappers/ompt/ompt_tool.c, wrappers/gomp/pm_gomp.c). */
int pm_is_omp_wait(const struct pm_file_region *g);

/* Pairs (above[k], wait[k]): omp wait row wait[k] counts towards region
 * above[k] (a strict ancestor, up to the nearest wait ancestor). Both arrays
 * need room for R*R entries. Returns the number of pairs. */
size_t pm_omp_wait_pairs(const struct pm_file *d, size_t *above, size_t *wait);

#endif /* PM_REPORT_OMP_H */
