/*
 * report_utf8.c — decode the UTF-8 of user data (names, paths, messages) one
 * character at a time, for the renderers: each escapes or replaces what its
 * format cannot carry.
 */
#include "render/common/render_common.h"

size_t pm_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned lead = s[0], lo = 0x80, hi = 0xBF;
    size_t len, i;
    uint32_t c;

    *cp = PM_BAD;
    if (lead < 0x80) {
        *cp = lead;
        return 1;
    }
    if (lead >= 0xC2 && lead <= 0xDF)
        len = 2, c = lead & 0x1F;
    else if (lead >= 0xE0 && lead <= 0xEF)
        len = 3, c = lead & 0x0F;
    else if (lead >= 0xF0 && lead <= 0xF4)
        len = 4, c = lead & 0x07;
    else
        return 1;
    /* the second byte's range excludes overlongs, surrogates and > U+10FFFF */
    if (lead == 0xE0)
        lo = 0xA0;
    else if (lead == 0xED)
        hi = 0x9F;
    else if (lead == 0xF0)
        lo = 0x90;
    else if (lead == 0xF4)
        hi = 0x8F;
    for (i = 1; i < len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi)
            return i;
        c = (c << 6) | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = c;
    return len;
}
