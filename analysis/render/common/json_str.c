/*
 * json_str.c — a JSON string made of user data: UTF-8 kept, invalid bytes as
 * U+FFFD, controls escaped. The report's JSON and diff's JSON write every
 * name through it, so both escape the same way; and a number, the same way
 * in every JSON the report writes.
 */
#include "render/common/render_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void pm_json_str(FILE *out, const char *s)
{
    size_t i = 0, n = strlen(s);

    putc('"', out);
    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD)
            fputs("\\ufffd", out);
        else if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char)cp);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\r')
            fputs("\\r", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp < 0x20 || cp == 0x7F || cp == 0x2028 || cp == 0x2029)
            fprintf(out, "\\u%04" PRIx32, cp);
        else
            fwrite(s + i, 1, len, out);
        i += len;
    }
    putc('"', out);
}

/* Doubles with round-trip precision; no value (or not finite) is null. */
void pm_json_num(FILE *out, int has, double v)
{
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}
