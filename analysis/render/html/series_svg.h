/*
 * series_svg.h — counts over time on the HTML page (series_svg.c): one
 * timeline chart per event, lines per rank (or the ranks' band), the
 * regions shaded under them. Knows only the model and render/common.
 */
#ifndef PM_SERIES_SVG_H
#define PM_SERIES_SVG_H

#include "model/report_model.h"

#include <stdio.h>

/* A whole <section id="series"> or nothing (no series in the file). */
void pm_svg_series(FILE *out, const struct pm_report *rep);

#endif
