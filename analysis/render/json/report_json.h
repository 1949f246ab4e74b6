/*
 * report_json.h — the report as JSON (report_json.c; layout in tests/report/README.md).
 */
#ifndef PM_REPORT_JSON_H
#define PM_REPORT_JSON_H

#include "model/report_model.h"

#include <stdio.h>

/* The report's object is the page cli/report.c puts together:
 * pm_render_json opens it and writes every member but the profile's, the
 * series' and the node's (profile_json.h, series_json.h, node_json.h, each
 * a ",\n  \"name\":..." member or nothing), and pm_render_json_end closes it. */
void pm_render_json(FILE *out, const struct pm_report *rep);
void pm_render_json_end(FILE *out);

#endif /* PM_REPORT_JSON_H */
