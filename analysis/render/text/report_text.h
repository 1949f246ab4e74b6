/*
 * report_text.h — the report as terminal text (report_text.c): the full
 * report, or the one table of `--by rank|thread`.
 */
#ifndef PM_REPORT_TEXT_H
#define PM_REPORT_TEXT_H

#include "model/by_table.h"
#include "model/report_model.h"

#include <stdio.h>

/* The full report is the page cli/report.c puts together: pm_render_text
 * (header, regions, times, events, TopDown, derived metrics), the sections
 * of the profile, the series and the node (profile_text.h, series_text.h,
 * node_text.h), then pm_render_text_end (ranks, threads, notes). */
void pm_render_text(FILE *out, const struct pm_report *rep);
void pm_render_text_end(FILE *out, const struct pm_report *rep);
/* Text of `perfmark report --by rank|thread`: the header and one breakdown table. */
void pm_render_text_by(FILE *out, const struct pm_report *rep, struct pm_bycells *by);

#endif /* PM_REPORT_TEXT_H */
