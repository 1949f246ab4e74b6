/*
 * html_escape.c — user data made safe as HTML text or attribute content, for
 * the HTML page (report_html.c) and its charts (report_svg.c).
 */
#include "render/common/render_common.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Characters that must not reach the page from user data: C0/C1 controls
 * and DEL (parse errors, invisible), line separators, bidirectional
 * overrides and isolates (they reorder the text around them), and
 * noncharacters. */
static int pm_html_bad_cp(uint32_t cp)
{
    return cp == PM_BAD || cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 ||
           cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

void pm_html_esc(FILE *out, const char *s, size_t maxchars, int empty_quoted)
{
    size_t n = strlen(s), i = 0, chars = 0;

    if (n == 0 && empty_quoted) {
        fputs("&quot;&quot;", out);
        return;
    }
    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (chars == maxchars) {
            fputs("\xE2\x80\xA6", out);
            return;
        }
        switch (cp) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default:
            if (pm_html_bad_cp(cp))
                fputs("\xEF\xBF\xBD", out);
            else
                fwrite(s + i, 1, len, out);
        }
        i += len;
        chars++;
    }
}
