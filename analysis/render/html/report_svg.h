/*
 * report_svg.h — the HTML report's charts as inline SVG (report_svg.c). The
 * page (report_html.c) places them; they know nothing of the page, only the
 * model and render/common, so the dependency runs one way: html → svg.
 */
#ifndef PM_REPORT_SVG_H
#define PM_REPORT_SVG_H

#include "model/report_model.h"

#include <stdio.h>

/* Each writes a whole <section> or nothing. */
void pm_svg_topdown(FILE *out, const struct pm_report *rep);
void pm_svg_heatmap(FILE *out, const struct pm_report *rep);
void pm_svg_mpi(FILE *out, const struct pm_report *rep);
void pm_svg_thread_bars(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_SVG_H */
