/*
 * profile_csv.h — the sampled profile as columns of the CSV report
 * (profile_csv.c): appended to every row, for files with samples only.
 */
#ifndef PM_PROFILE_CSV_H
#define PM_PROFILE_CSV_H

#include "model/report_model.h"

#include <stdio.h>

void pm_csv_profile_header(FILE *out, const struct pm_report *rep);
/* The columns of region row r. */
void pm_csv_profile_part(FILE *out, const struct pm_report *rep, size_t r);

#endif
