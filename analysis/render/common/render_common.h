/*
 * render_common.h — what every renderer may use besides the model: reading
 * user data as UTF-8, human units, and writing user data safely in each
 * format (JSON string, CSV cell, HTML text). No renderer calls another; what
 * two of them need the same way lives here.
 */
#ifndef PM_RENDER_COMMON_H
#define PM_RENDER_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------ UTF-8 (report_utf8.c) */

#define PM_BAD 0xFFFFFFFFu /* an undecodable byte */

/* Decode one character. An ill-formed sequence yields PM_BAD and consumes
 * its maximal valid prefix (at least one byte): the Unicode "maximal
 * subpart" practice, the same as Python's errors="replace". */
size_t pm_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* -------------------------------------------- human units (report_units.c) */

/* 3 significant digits; counts with a k/M/G/... suffix after `sep`,
 * durations in ns/µs/ms/s. */
int pm_unit_prec(double a);
void pm_unit_count(char *buf, size_t len, double v, const char *sep);
void pm_unit_time(char *buf, size_t len, double ns);

/* The HTML page's spellings: "12.3 ms", "4.56 G", "45.6%" (a share just
 * below 1 never reads as 100%). */
void pm_html_time(char *buf, size_t len, double ns);
void pm_html_count(char *buf, size_t len, double v);
void pm_html_pct(char *buf, size_t len, double fraction);

/* ------------------------------------------------- user data, per format */

/* A JSON string: UTF-8 kept, invalid bytes as U+FFFD, controls escaped
 * (json_str.c). */
void pm_json_str(FILE *out, const char *s);
/* A JSON number with round-trip precision, or null when !has or not finite. */
void pm_json_num(FILE *out, int has, double v);

/* A CSV cell: RFC 4180 quoting where needed, a leading ' before formula
 * characters, invalid bytes as U+FFFD (csv_str.c). */
void pm_csv_str(FILE *out, const char *s);
/* A CSV number with round-trip precision, or an empty cell when !has or not
 * finite. */
void pm_csv_num(FILE *out, int has, double v);

/* User data is cut after this many characters in HTML (the rest becomes '…'). */
#define PM_HTML_MAX_CHARS 2000

/* Write s as HTML text or attribute content: & < > " ' as character
 * references, invalid UTF-8, control characters, line separators,
 * bidirectional overrides and noncharacters as U+FFFD, at most `maxchars`
 * characters (then '…'). "" is written as "" (two quotes) when
 * `empty_quoted`, so an unnamed region still has a visible name
 * (html_escape.c). */
void pm_html_esc(FILE *out, const char *s, size_t maxchars, int empty_quoted);

/* User data on a terminal: controls and undecodable bytes become '?', and
 * at most `max` characters are shown (the rest as "...") (term_str.c). */
void pm_text_name(FILE *out, const char *s, size_t max);

/* Table cells on a terminal (term_str.c): n spaces; the columns of
 * s[0..n) once cleaned; at most `cols` columns of it, controls as '?'; and
 * one cell of exactly `width` columns (PM_LAST: no padding after), text
 * too long cut in the middle with '…' (start and end kept: a name ends in
 * what tells two apart). */
enum pm_align { PM_LEFT, PM_RIGHT, PM_LAST };
void pm_spaces(FILE *out, size_t n);
size_t pm_term_cols(const char *s, size_t n);
void pm_term_put(FILE *out, const char *s, size_t n, size_t cols);
void pm_text_cell(FILE *out, const char *s, size_t width, enum pm_align align);

#endif /* PM_RENDER_COMMON_H */
