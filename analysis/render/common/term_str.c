/*
 * term_str.c — user data (names, paths) on a terminal, for the text
 * renderers and the command's messages: controls and undecodable bytes
 * become '?', long names are cut (in the middle for table cells).
 */
#include "render/common/render_common.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* User data on a terminal: controls and undecodable bytes become '?', and
 * at most `max` characters are shown (the rest as "..."). */
void pm_text_name(FILE *out, const char *s, size_t max)
{
    size_t i = 0, n = strlen(s), shown = 0;

    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (shown == max) {
            fputs("...", out);
            return;
        }
        if (cp == PM_BAD || cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            putc('?', out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
        shown++;
    }
}

/* Characters a terminal must not receive from user data: C0/C1 controls,
 * DEL, line separators and bidirectional overrides. */
static int pm_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void pm_spaces(FILE *out, size_t n)
{
    while (n-- > 0)
        putc(' ', out);
}

/* Columns of s[0..n) once cleaned: one per character (wide East Asian
 * characters are counted as one; good enough for names and units). */
size_t pm_term_cols(const char *s, size_t n)
{
    size_t i = 0, cols = 0;
    uint32_t cp;

    while (i < n) {
        i += pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        cols++;
    }
    return cols;
}

/* Write at most `cols` columns of s[0..n) with controls and bad bytes as '?'. */
void pm_term_put(FILE *out, const char *s, size_t n, size_t cols)
{
    size_t i = 0, c = 0;

    while (i < n && c < cols) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD || pm_is_control(cp))
            putc('?', out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
        c++;
    }
}

/* The byte where the last `cols` columns of s[0..n) begin. */
static size_t pm_term_tail(const char *s, size_t n, size_t cols)
{
    size_t total = pm_term_cols(s, n), i = 0, c = 0;
    uint32_t cp;

    while (i < n && c + cols < total) {
        i += pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        c++;
    }
    return i;
}

/* One table cell of exactly `width` columns (PM_LAST: no trailing padding).
 * Text too long keeps its start and its end with '…' between: a construct's
 * name ends in what tells two apart (file:line, the team size). */
void pm_text_cell(FILE *out, const char *s, size_t width, enum pm_align align)
{
    size_t n = strlen(s), cols = pm_term_cols(s, n);

    if (cols > width) {
        size_t keep = width ? width - 1 : 0, tail = keep / 2, head = keep - tail;
        size_t from = pm_term_tail(s, n, tail);

        pm_term_put(out, s, n, head);
        if (width)
            fputs("\xE2\x80\xA6", out);
        pm_term_put(out, s + from, n - from, tail);
        return;
    }
    if (align == PM_RIGHT)
        pm_spaces(out, width - cols);
    pm_term_put(out, s, n, cols);
    if (align == PM_LEFT)
        pm_spaces(out, width - cols);
}

