/*
 * report_html.h — what the two halves of the HTML report share: the page and
 * its tables (report_html.c) and the inline SVG charts (report_svg.c).
 */
#ifndef PM_REPORT_HTML_H
#define PM_REPORT_HTML_H

#include "model/report_model.h"
#include "render/common/render_common.h"

#include <stdio.h>

/* The whole page (report_html.c). */
void pm_render_html(FILE *out, const struct pm_report *rep);

/* The charts (report_svg.c); each writes a whole <section> or nothing. */
void pm_svg_topdown(FILE *out, const struct pm_report *rep);
void pm_svg_heatmap(FILE *out, const struct pm_report *rep);
void pm_svg_mpi(FILE *out, const struct pm_report *rep);
void pm_svg_thread_bars(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_HTML_H */
