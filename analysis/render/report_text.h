/*
 * report_text.h — the report as terminal text (report_text.c): the full
 * report, or the one table of `--by rank|thread`.
 */
#ifndef PM_REPORT_TEXT_H
#define PM_REPORT_TEXT_H

#include "model/by_table.h"
#include "model/report_model.h"

#include <stdio.h>

void pm_render_text(FILE *out, const struct pm_report *rep);
/* Text of `perfmark report --by rank|thread`: the header and one breakdown table. */
void pm_render_text_by(FILE *out, const struct pm_report *rep, struct pm_bycells *by);

#endif /* PM_REPORT_TEXT_H */
