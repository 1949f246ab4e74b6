/*
 * series_json.h — counts over time as the JSON report's "series" key
 * (series_json.c); report_json.c appends it for files with a series.
 */
#ifndef PM_SERIES_JSON_H
#define PM_SERIES_JSON_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_json_series(FILE *out, const struct pm_report *rep);

#endif
