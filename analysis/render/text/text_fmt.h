/*
 * text_fmt.h — the terminal report's shared pieces (text_fmt.c), used by
 * its sections (report_text.c, text_ranks.c, text_topdown.c): wrapping,
 * labels, cell formats and the region name column.
 */
#ifndef PM_TEXT_FMT_H
#define PM_TEXT_FMT_H

#include "model/report_model.h"

#include <stddef.h>
#include <stdio.h>

#define PM_TEXT_WIDTH 100

/* Region name columns: the region table's, and the narrower one of the
 * event tables (they add stddev and max/mean); --wide widens both to the
 * longest name shown (pm_text_widths, called once per page). */
extern size_t pm_text_name_w, pm_text_ev_name_w;
#define PM_NAME_W pm_text_name_w
#define PM_EV_NAME_W pm_text_ev_name_w
void pm_text_widths(const struct pm_report *rep);

/* Print s from column `indent` (the cursor is already there), wrapped at
 * PM_TEXT_WIDTH with continuation lines indented to the same column. */
void pm_text_wrap(FILE *out, const char *s, size_t indent);
/* "label     value", the value wrapped under itself. */
void pm_text_label(FILE *out, const char *label, const char *value);
/* A region's name in the name column, indented by its depth. */
void pm_text_region_name(FILE *out, const struct pm_file_region *g);

/* Whether an event counts nanoseconds (task-clock, cpu-clock): its cells
 * are then shown as durations. */
int pm_event_is_time(const struct pm_file_event *ev);
/* Cell formats: a count with a k/M/G suffix; a time (n/a without one, ~ an
 * estimate, ! incomplete); a count or a clock event's duration with the
 * same markers; a share in percent (n/a without one). */
void pm_fmt_count(char *buf, size_t len, double v);
void pm_fmt_time_m(char *buf, size_t len, int has, double ns, int est, int bad);
void pm_fmt_value(char *buf, size_t len, int has, double v, const struct pm_evstat *s,
                  int is_time);
void pm_fmt_pct(char *buf, size_t len, int has, double share);

#endif /* PM_TEXT_FMT_H */
