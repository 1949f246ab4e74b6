/*
 * series_topdown.h — TopDown over time (`perf stat -I --topdown`): the
 * breakdown of an interval, or of a run of merged intervals, from the
 * series' bins of the TopDown events — the same arithmetic as a region's
 * (report_topdown.c), applied to the interval's counts instead.
 */
#ifndef PM_SERIES_TOPDOWN_H
#define PM_SERIES_TOPDOWN_H

#include "model/report_topdown.h"
#include "model/series.h"

#include <stddef.h>

/* Whether the file's series can be broken down: TopDown was measured and
 * the file has every event the method needs. */
int pm_series_td_on(const struct pm_tdreport *td, const struct pm_series_view *s);

/* The breakdown of bins [b0, b1) of `values` (the job's total or one
 * rank's, [nbins * E]): 1 with *br set, 0 where the bins have no slots
 * (nothing ran) or there is no breakdown. */
int pm_series_td_at(const struct pm_tdreport *td, const struct pm_series_view *s,
                    const double *values, size_t b0, size_t b1, struct pm_td_breakdown *br);

#endif
