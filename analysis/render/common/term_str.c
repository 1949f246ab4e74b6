/*
 * term_str.c — user data (names, paths) on a terminal, for diff's text and
 * the command's messages: controls and undecodable bytes become '?', long
 * names are cut.
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
