/*
 * report_html.h — what the two halves of the HTML report share: the page and
 * its tables (report_html.c) and the inline SVG charts (report_svg.c).
 */
#ifndef PM_REPORT_HTML_H
#define PM_REPORT_HTML_H

#include "model/report_model.h"

#include <stddef.h>
#include <stdio.h>

/* User data is cut after this many characters (the rest becomes '…'). */
#define PM_HTML_MAX_CHARS 2000

/* Write s as HTML text or attribute content: & < > " ' as character
 * references, invalid UTF-8, control characters, line separators,
 * bidirectional overrides and noncharacters as U+FFFD, at most `maxchars`
 * characters (then '…'). "" is written as "" (two quotes) when
 * `empty_quoted`, so an unnamed region still has a visible name. */
void pm_html_esc(FILE *out, const char *s, size_t maxchars, int empty_quoted);

/* Human units: "12.3 ms", "4.56 G", "45.6%". */
void pm_html_time(char *buf, size_t len, double ns);
void pm_html_count(char *buf, size_t len, double v);
void pm_html_pct(char *buf, size_t len, double fraction);

/* Whether per-rank views compare ranks (several distinct ranks in the file)
 * or, with one rank, its threads. */
int pm_html_by_rank(const struct pm_report *rep);

/* The charts (report_svg.c); each writes a whole <section> or nothing. */
void pm_svg_topdown(FILE *out, const struct pm_report *rep);
void pm_svg_heatmap(FILE *out, const struct pm_report *rep);
void pm_svg_mpi(FILE *out, const struct pm_report *rep);
void pm_svg_thread_bars(FILE *out, const struct pm_report *rep);

#endif /* PM_REPORT_HTML_H */
