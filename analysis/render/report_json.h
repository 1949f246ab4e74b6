/*
 * report_json.h — the report as JSON (report_json.c; layout in tests/report/README.md).
 */
#ifndef PM_REPORT_JSON_H
#define PM_REPORT_JSON_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_json(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_JSON_H */
