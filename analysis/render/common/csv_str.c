/*
 * csv_str.c — a CSV cell made of user data, for the report's CSV and diff's:
 * quoted only where needed, guarded against spreadsheet formula injection;
 * and a number, the same way in both.
 */
#include "render/common/render_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* RFC 4180 quoting; invalid UTF-8 becomes U+FFFD. A field starting with a
 * formula character gets a leading ' so spreadsheets show it as text. */
void pm_csv_str(FILE *out, const char *s)
{
    size_t i = 0, n = strlen(s);
    int guard = n > 0 && strchr("=+-@\t\r", s[0]) != NULL;
    int quote = strpbrk(s, ",\"\r\n") != NULL;

    if (quote)
        putc('"', out);
    if (guard)
        putc('\'', out);
    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD)
            fputs("\xEF\xBF\xBD", out);
        else if (cp == '"')
            fputs("\"\"", out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
    }
    if (quote)
        putc('"', out);
}

/* Doubles with round-trip precision; no value (or not finite) is an empty
 * cell. */
void pm_csv_num(FILE *out, int has, double v)
{
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
}
