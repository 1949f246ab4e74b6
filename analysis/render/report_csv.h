/*
 * report_csv.h — the report as CSV (report_csv.c; layout in tests/report/README.md).
 */
#ifndef PM_REPORT_CSV_H
#define PM_REPORT_CSV_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_csv(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_CSV_H */
