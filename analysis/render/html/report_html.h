/*
 * report_html.h — the report as one self-contained HTML page (report_html.c):
 * the tables, with the charts of report_svg.c placed in it.
 */
#ifndef PM_REPORT_HTML_H
#define PM_REPORT_HTML_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_html(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_HTML_H */
