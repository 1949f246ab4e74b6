/*
 * series_text.h — counts over time in the terminal report (series_text.c):
 * a `perf stat -I`-like table for the job and for each of the first ranks.
 */
#ifndef PM_SERIES_TEXT_H
#define PM_SERIES_TEXT_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_text_series(FILE *out, const struct pm_report *rep);

#endif
